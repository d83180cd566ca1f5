// The files of a `rotree get` (cli/download.js): each one's verified bytes
// written under a private temporary name and renamed onto its name, or the
// file already there kept (a sync), or an interrupted one's partial file
// taken up again (get-resume.js). The "Files", "A sync" and "Interruption"
// rules of download.js's header; where a file goes and what it may replace
// is get-place.js's, what it may take get-quota.js's. A file under
// RESUME_MIN is fetched whole before its temporary file is opened; a larger
// one streams into its temporary file as its
// verified chunks arrive, lent (client-js/README.md), each buffer given back
// once written. In directories this run made in a large download, the
// placing is done on the file-writing thread (get-writer.js).
import fs from 'node:fs/promises'
import fsSync, { constants } from 'node:fs'
import path from 'node:path'
import { TruncatedError, AbortedError } from 'rotree-client/errors'
import { RESUME_MIN } from './get-resume.js'
import { verifiedPrefix, sameContent } from './chunk-check.js'
import { abortable, userError, msOf, key, lstatOrNull, collision, fsTime, tempName, O_TEMP, openFd, writeAllSync } from './get-util.js'
import { FileWriter } from './get-writer.js'

/**
 * One file to get: `e` (its verified entry) to `name` in `dir` (a DirNode,
 * get-dirs.js); `where` names it for the quota's messages, `rel` is its path
 * below the resume base (get-resume.js).
 * @typedef {{ dir: import('./get-dirs.js').DirNode, name: string, where: string, rel: string }} FileJob
 */

export class FileSink {
  /**
   * @param {object} o
   * @param {import('rotree-client').Tree} o.tree
   * @param {import('./get-quota.js').Quota} o.quota
   * @param {import('./get-place.js').Placer} o.placer
   * @param {import('./get-resume.js').ResumeState|null} o.resume
   * @param {AbortSignal|null} o.signal
   * @param {boolean} o.checksum a file of the right size and mtime is kept only if its chunks hash right
   * @param {number} o.writerFrom entries counted from which directories made are written on a thread of their own
   * @param {() => void} o.progress told after each step of progress
   * @param {(where: string) => string} o.shown the user's name for a file (never a temporary name)
   */
  constructor ({ tree, quota, placer, resume, signal, checksum, writerFrom, progress, shown }) {
    Object.assign(this, { tree, quota, placer, resume, signal, checksum, writerFrom, progress, shown })
    this.files = 0; this.bytes = 0; this.unchanged = 0; this.resumedBytes = 0
    this.keptBytes = 0 // of files left as they were: progress, not verified bytes
    this.writer = null // get-writer.js, once the download is large enough to pay for a thread
  }

  /**
   * The file-writing thread for a directory made now: none for a small
   * download, where a thread costs more than it saves (writerFrom).
   */
  writerFor () {
    if (this.quota.entries < this.writerFrom) return null
    this.writer ??= new FileWriter()
    return this.writer
  }

  close () { return this.writer?.close() }

  checkAbort () {
    if (this.signal?.aborted) throw new AbortedError('interrupted')
  }

  /** Get `e` as `f` says, unless the file there already is it. */
  async get (e, f) {
    this.checkAbort()
    if (await this.keep(e, f)) return
    this.quota.checkStart(e, f.where)
    if (e.size < RESUME_MIN && !this.resume?.get(f.rel)) return this.small(e, f)
    return this.large(e, f)
  }

  /**
   * A file of RESUME_MIN or more (or one an earlier run left partial):
   * streamed into its temporary file, recorded for a resume, placed once
   * every byte is in.
   */
  async large (e, f) {
    const { dir, rel } = f
    const mode = modeOf(e)
    let tmp = null; let fh = null; let rec = null
    let written = 0 // verified bytes in the temporary file
    let left = 0 // of this file's reservation: what it has not written yet
    try {
      const old = await this.resume?.reopen(rel, dir.abs)
      if (old) {
        ({ tmp, fh, rec } = old)
        written = await verifiedPrefix(this.tree, e, fh, Math.min(old.size, rec.verified))
        await fh.truncate(written)
        this.resumedBytes += written
        this.bytes += written
      }
      const q = this.quota
      left = await q.reserve(e, { dirAbs: dir.abs, where: f.where, need: Math.max(0, q.disk(e.size) - q.disk(written)) })
      if (!old) {
        ({ tmp, fh } = await this.openTemp(f, mode))
        if (this.resume && e.size >= RESUME_MIN) rec = this.resume.add(rel, path.basename(tmp), await fh.stat({ bigint: true }))
      }
      // lent: each piece's buffer takes a later chunk once the write returned (client-js/README.md)
      for await (const b of abortable(this.tree.readEntry(e, written, e.size, { lend: true }), this.signal)) {
        for (let o = 0; o < b.length;) o += (await fh.write(b, o, b.length - o, written + o)).bytesWritten
        this.tree.release(b)
        written += b.length
        left -= q.wrote(left, b.length)
        this.bytes += b.length
        if (rec) this.resume.progress(rec, written)
        this.progress()
      }
      if (written !== e.size) throw new TruncatedError(`${f.where}: ${written} bytes read of ${e.size}`)
      await this.finish(fh, tmp, e, f)
      fh = null; tmp = null
      if (rec) this.resume.drop(rel)
      this.files++
    } catch (err) {
      throw userError(err, tmp, this.shown(f.where))
    } finally {
      this.quota.unreserve(left)
      await fh?.close().catch(() => {})
      if (tmp) await this.leaveTemp(tmp, rec, written, rel)
    }
  }

  /** An unfinished temporary file: kept for the next run when interrupted with a record, else removed. */
  async leaveTemp (tmp, rec, written, rel) {
    if (rec && this.signal?.aborted) {
      rec.verified = written // kept for the next run, which hashes it again
      this.resume.save()
      return
    }
    await fs.unlink(tmp).catch(() => {})
    if (rec) this.resume.drop(rel)
  }

  /**
   * A file under RESUME_MIN: its verified bytes are fetched whole (a
   * version-2 file's SHA-256 checked too), and only then is its temporary
   * file opened, written, closed and renamed, so a file waiting on the
   * network holds no file descriptor and a refused file leaves no trace.
   */
  async small (e, f) {
    let left = 0
    const bufs = []
    try {
      left = await this.quota.reserve(e, { dirAbs: f.dir.abs, where: f.where, need: this.quota.disk(e.size) })
      let n = 0
      // an inline file is in hand: nothing to wait for, nothing to abort; a
      // chunked one is lent (client-js/README.md), given back once written
      for await (const b of e.inline ? this.tree.readEntry(e) : abortable(this.tree.readEntry(e, 0, e.size, { lend: true }), this.signal)) { bufs.push(b); n += b.length }
      if (n !== e.size) throw new TruncatedError(`${f.where}: ${n} bytes read of ${e.size}`)
      this.checkAbort()
      if (f.dir.writer) await this.writeThere(bufs, n, e, f)
      else await this.writeHere(bufs, e, f)
      left -= this.quota.wrote(left, n)
      this.bytes += n
      this.files++
      this.progress()
    } catch (err) {
      throw userError(err, null, this.shown(f.where))
    } finally {
      this.quota.unreserve(left)
      for (const b of bufs) this.tree.release(b) // not lent (inline): ignored
    }
  }

  /**
   * The whole of a small file, written under a temporary name and renamed
   * onto its name. Creating the file is the one call that can be slow (on
   * ext4, for minutes after many files were deleted nearby): it runs on the
   * thread pool; the rest is synchronous, as for thousands of small files
   * the promise API's round trips cost more than the calls themselves
   * (docs/BENCHMARKS.md P10), and each blocks the event loop only for the
   * few system calls of one small file.
   */
  async writeHere (bufs, e, f) {
    const { dir } = f
    const mode = modeOf(e)
    let tmp = null; let fd = null
    try {
      for (let i = 0; fd === null; i++) {
        const t = path.join(dir.abs, tempName())
        try { fd = await openFd(t, O_TEMP, mode) } catch (err) { if (err.code !== 'EEXIST' || i > 3) throw userError(err, t, this.shown(f.where)) }
        if (fd !== null) tmp = t
      }
      writeAllSync(fd, bufs)
      fsSync.fchmodSync(fd, mode) // exact mode whatever the umask
      fsSync.futimesSync(fd, fsTime(e), fsTime(e))
      const ino = dir.placed ? key(fsSync.fstatSync(fd, { bigint: true })) : undefined
      fsSync.closeSync(fd); fd = null
      this.placer.placeSync(tmp, { dir, dest: path.join(dir.abs, f.name), ino, where: f.where })
      tmp = null
    } catch (err) {
      throw userError(err, tmp, this.shown(f.where))
    } finally {
      if (fd !== null) try { fsSync.closeSync(fd) } catch {}
      if (tmp) try { fsSync.unlinkSync(tmp) } catch {}
    }
  }

  /** A small file written and placed on its directory's file-writing thread. */
  async writeThere (bufs, n, e, f) {
    let r
    try {
      r = await f.dir.writer.small({ dir: f.dir.abs, name: f.name, mode: modeOf(e), time: fsTime(e) }, bufs, n)
    } catch (err) {
      const tmp = err.tmp ?? null
      delete err.tmp
      throw userError(err, tmp, this.shown(f.where))
    }
    if (r.collision) throw collision(f.where)
  }

  /** A new temporary file in `f`'s directory: a random name, O_EXCL|O_NOFOLLOW. */
  async openTemp (f, mode) {
    for (let i = 0; ; i++) {
      const name = path.join(f.dir.abs, tempName())
      try { return { tmp: name, fh: await fs.open(name, O_TEMP, mode) } } catch (err) {
        if (err.code !== 'EEXIST' || i > 3) throw userError(err, name, this.shown(f.where))
      }
    }
  }

  /** Mode and mtime on the complete temporary file, closed, then renamed onto its name. */
  async finish (fh, tmp, e, f) {
    const { dir } = f
    let ino
    try {
      await fh.chmod(modeOf(e)) // exact mode whatever the umask
      await fh.utimes(fsTime(e), fsTime(e))
      if (dir.placed) ino = key(await fh.stat({ bigint: true }))
    } finally { await fh.close() }
    const dest = path.join(dir.abs, f.name)
    if (!dir.writer) return this.placer.placeSync(tmp, { dir, dest, ino, where: f.where })
    if ((await dir.writer.place(tmp, dest)).collision) throw collision(f.where)
  }

  /**
   * The regular file at `f` already is `e`: same size and mtime (and with
   * `checksum`, chunks that hash to e's handles). Then it is kept, with its
   * mode set right, and claimed like a file this run placed.
   */
  async keep (e, f) {
    const { dir } = f
    if (dir.fresh) return false // a directory this run made holds only what it wrote
    const local = path.join(dir.abs, f.name)
    const st = await lstatOrNull(local)
    if (!st?.isFile() || st.size !== BigInt(e.size) || msOf(st) !== BigInt(e.mtime)) return false
    let fh
    try { fh = await fs.open(local, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0)) } catch { return false }
    try {
      const now = await fh.stat({ bigint: true })
      if (key(now) !== key(st) || !now.isFile()) return false
      if (this.checksum && !(await sameContent(this.tree, e, fh, Number(now.size)))) return false
      this.placer.claim(dir, key(st), f.where)
      if ((Number(now.mode) & 0o7777) !== modeOf(e)) await fh.chmod(modeOf(e))
    } finally { await fh.close() }
    this.unchanged++
    this.keptBytes += e.size
    this.progress()
    return true
  }
}

const modeOf = e => e.exec ? 0o755 : 0o644
