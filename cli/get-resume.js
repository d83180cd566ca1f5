// What lets an interrupted `rotree get` continue where it stopped. Partial
// files live beside their final names under the random temporary names
// download.js opens O_EXCL|O_NOFOLLOW, and such a name alone proves nothing
// (a tree may hold one, another process may plant one). So a partial file
// is taken up again only when this state file says this tool made it:
//
//   <state-dir>/get/<sha-256 of DEST's absolute path>.json
//   { version: 1, dest, files: { <path below DEST>: { tmp, dev, ino, verified } } }
//
// `tmp` is the temporary file's name in the directory of its final name,
// `dev`/`ino` identify the file this tool created, `verified` how many of
// its leading bytes were verified bytes when it was last recorded. On a
// rerun the file must still be a regular file with that identity and one
// link, found by that name in the directory the walk has just checked; its
// prefix is then hashed again chunk by chunk against the tree's verified
// chunk handles (chunk-check.js) and only what matches is kept. The state
// lives outside DEST so that no name in a tree can collide with it.
//
// Only large files are recorded (a small file costs less to fetch again than
// to record), and only an interrupted run (SIGINT, SIGTERM) keeps them: a
// download that fails leaves nothing behind, as before.
import fs from 'node:fs/promises'
import { constants } from 'node:fs'
import path from 'node:path'
import { createHash, randomBytes } from 'node:crypto'

export const RESUME_MIN = 1 << 20 // files at least this large are recorded
export const TMP_RE = /^\.rotree-[0-9a-f]{24}\.tmp$/
const MAX_STATE = 4 << 20
const SAVE_EVERY = 16 << 20 // bytes written to a recorded file between saves of its progress

export class ResumeState {
  /**
   * @param {string} dir where state files live (<state-dir>/get)
   * @param {string} destAbs DEST, absolute: names the state file
   * @param {string} baseAbs the directory the recorded paths are below (DEST, or a single file's directory)
   */
  constructor (dir, destAbs, baseAbs = destAbs) {
    this.file = path.join(dir, createHash('sha256').update(destAbs).digest('hex').slice(0, 32) + '.json')
    this.dest = destAbs
    this.base = baseAbs
    this.files = new Map()
    this.dirty = false
    this.saving = null
  }

  /** Load what an earlier run recorded; a state file that does not parse is ignored (its partial files are then not used). */
  async load () {
    let j
    try {
      const fh = await fs.open(this.file, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0))
      try {
        if ((await fh.stat()).size > MAX_STATE) return this
        j = JSON.parse(await fh.readFile('utf8'))
      } finally { await fh.close() }
    } catch { return this }
    if (j?.version !== 1 || j.dest !== this.dest || typeof j.files !== 'object' || j.files === null) return this
    for (const [rel, r] of Object.entries(j.files)) {
      if (typeof r?.tmp === 'string' && TMP_RE.test(r.tmp) && /^\d+$/.test(r.dev) && /^\d+$/.test(r.ino) && Number.isSafeInteger(r.verified) && r.verified >= 0) {
        this.files.set(rel, { tmp: r.tmp, dev: r.dev, ino: r.ino, verified: r.verified })
      }
    }
    return this
  }

  get (rel) { return this.files.get(rel) }

  /** Record a temporary file this run created (st: its bigint fstat). */
  add (rel, tmp, st) {
    const r = { tmp, dev: String(st.dev), ino: String(st.ino), verified: 0, savedAt: 0 }
    this.files.set(rel, r)
    this.save()
    return r
  }

  /** Bytes verified and written so far; saved now and then, so even a killed run leaves a hint. */
  progress (r, verified) {
    r.verified = verified
    if (verified - r.savedAt >= SAVE_EVERY) { r.savedAt = verified; this.save() }
  }

  drop (rel) { if (this.files.delete(rel)) this.save() }

  /**
   * Open a recorded partial file for `rel` in `dirAbs` for writing, or null:
   * only the very file this tool created (same device and inode, one link,
   * never through a symlink).
   * @returns {Promise<{ fh: import('node:fs/promises').FileHandle, tmp: string, size: number, rec: object } | null>}
   */
  async reopen (rel, dirAbs) {
    const r = this.files.get(rel)
    if (!r) return null
    const tmp = path.join(dirAbs, r.tmp)
    const same = st => st.isFile() && String(st.dev) === r.dev && String(st.ino) === r.ino && st.nlink === 1n
    let fh = null
    try {
      if (!same(await fs.lstat(tmp, { bigint: true }))) throw new Error('not ours')
      fh = await fs.open(tmp, constants.O_RDWR | (constants.O_NOFOLLOW ?? 0))
      const st = await fh.stat({ bigint: true })
      if (!same(st)) throw new Error('not ours')
      return { fh, tmp, size: Number(st.size), rec: r }
    } catch {
      await fh?.close()
      this.drop(rel) // gone or replaced: never touched, forgotten
      return null
    }
  }

  /**
   * Remove the recorded files this run did not take up (their entries left
   * the tree), each only when every directory from the base down to it is a real
   * directory and it is still the file this tool made.
   */
  async discardRest () {
    for (const [rel, r] of [...this.files]) {
      const dirAbs = await realDirBelow(this.base, path.dirname(rel))
      if (dirAbs !== null) {
        const tmp = path.join(dirAbs, r.tmp)
        const st = await fs.lstat(tmp, { bigint: true }).catch(() => null)
        if (st?.isFile() && String(st.dev) === r.dev && String(st.ino) === r.ino) await fs.unlink(tmp).catch(() => {})
      }
      this.files.delete(rel)
    }
    this.save()
    await this.flush()
  }

  /** Write the state (coalesced): a temporary file and a rename; no state file when nothing is recorded. */
  save () {
    this.dirty = true
    this.saving ??= (async () => {
      try {
        while (this.dirty) {
          this.dirty = false
          await this._write()
        }
      } finally { this.saving = null }
    })()
    this.saving.catch(() => {})
  }

  async flush () { while (this.saving) await this.saving.catch(() => {}) }

  async _write () {
    if (this.files.size === 0) { await fs.unlink(this.file).catch(() => {}); return }
    const files = {}
    for (const [rel, { tmp, dev, ino, verified }] of this.files) files[rel] = { tmp, dev, ino, verified }
    await fs.mkdir(path.dirname(this.file), { recursive: true, mode: 0o700 })
    const tmp = `${this.file}.${randomBytes(8).toString('hex')}.tmp`
    const fh = await fs.open(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0), 0o600)
    try {
      try { await fh.writeFile(JSON.stringify({ version: 1, dest: this.dest, files })) } finally { await fh.close() }
      await fs.rename(tmp, this.file)
    } catch (err) {
      await fs.unlink(tmp).catch(() => {})
      throw err
    }
  }
}

/** base/rel when each component from base down is a real directory (lstat), else null. */
async function realDirBelow (base, rel) {
  let p = base
  for (const c of ['', ...rel.split('/').filter(c => c && c !== '.')]) {
    p = c ? path.join(p, c) : p
    if (c === '..') return null
    const st = await fs.lstat(p).catch(() => null)
    if (!st?.isDirectory()) return null
  }
  return p
}
