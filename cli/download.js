// `rotree get`: a verified copy of a file or a whole directory. Files are
// written under a temporary name and renamed when complete, so an
// interrupted or refused download never leaves a partial file that looks
// complete; symlinks stay symlinks; exec bit and mtimes are kept.
import fs from 'node:fs/promises'
import { createWriteStream } from 'node:fs'
import path from 'node:path'
import { pipeline } from 'node:stream/promises'
import { limiter } from 'rotree-client/src/cache.js'

/**
 * @param {import('rotree-client').Tree} tree
 * @param {string} src path in the tree
 * @param {string} dest local path
 * @param {{ jobs?: number, onProgress?: (done: number, total: number) => void }} [o]
 * @returns {Promise<{ files: number, dirs: number, symlinks: number, bytes: number }>}
 */
export async function getPath (tree, src, dest, { jobs = 8, onProgress = () => {} } = {}) {
  const top = await tree.stat(src)
  const counts = { files: 0, dirs: 0, symlinks: 0, bytes: 0 }
  // a first walk lists everything (directory pages land in the cache) so progress has a total
  const plan = top.type === 'dir' ? await walk(tree, src, dest) : [{ src, dest, s: top }]
  const total = plan.reduce((n, p) => n + (p.s.type === 'file' ? p.s.size : 0), 0)
  const progress = n => { counts.bytes += n; onProgress(counts.bytes, total) }
  const limit = limiter(jobs)
  const dirs = []
  for (const p of plan) {
    if (p.s.type !== 'dir') continue
    await fs.mkdir(p.dest, { recursive: true })
    dirs.push(p); counts.dirs++
  }
  await Promise.all(plan.map(p => {
    if (p.s.type === 'file') return limit(() => getFile(tree, p.src, p.dest, p.s, progress)).then(() => counts.files++)
    if (p.s.type === 'symlink') return getSymlink(p.dest, p.s).then(() => counts.symlinks++)
    return null
  }))
  // directory mtimes last, deepest first: writing into a directory changes its mtime
  for (const p of dirs.reverse()) await fs.utimes(p.dest, fsTime(p.s), fsTime(p.s))
  return counts
}

async function walk (tree, src, dest) {
  const out = [{ src, dest, s: await tree.stat(src) }]
  for (let i = 0; i < out.length; i++) {
    const { src: dir, dest: ddir, s } = out[i]
    if (s.type !== 'dir') continue
    for await (const e of tree.list(dir)) {
      out.push({ src: path.posix.join(dir, e.name), dest: path.join(ddir, e.name), s: e })
    }
  }
  return out
}

// Files up to this size are read whole (verified) and written in one call;
// streaming each small file cost more in stream plumbing than in I/O.
const WHOLE_MAX = 1 << 20

async function getFile (tree, src, dest, s, progress) {
  const tmp = path.join(path.dirname(dest), `.${path.basename(dest)}.rotree-partial`)
  const mode = s.exec ? 0o755 : 0o644
  try {
    if (s.size <= WHOLE_MAX) {
      const bytes = await tree.readFile(src)
      const fh = await fs.open(tmp, 'w', mode)
      try {
        await fh.writeFile(bytes)
        await fh.chmod(mode) // exact mode whatever the umask
        await fh.utimes(fsTime(s), fsTime(s))
      } finally { await fh.close() }
      progress(bytes.length)
    } else {
      const counter = async function * (source) { for await (const b of source) { progress(b.length); yield b } }
      await pipeline(tree.createReadStream(src), counter, createWriteStream(tmp, { mode }))
      await fs.chmod(tmp, mode)
      await fs.utimes(tmp, fsTime(s), fsTime(s))
    }
    await fs.rename(tmp, dest)
  } catch (err) {
    await fs.rm(tmp, { force: true })
    throw err
  }
}

async function getSymlink (dest, s) {
  await fs.rm(dest, { force: true })
  await fs.symlink(s.target, dest)
  await fs.lutimes(dest, fsTime(s), fsTime(s)).catch(() => {}) // not every file system keeps symlink times
}

// Seconds for utimes, aimed at the middle of the millisecond: ms / 1000 can land
// a nanosecond below it after float rounding, and a rebuild from the copy
// (which floors to ms) would then see a different mtime and a different root.
function fsTime (s) { return (s.mtimeMs + 0.5) / 1000 }
