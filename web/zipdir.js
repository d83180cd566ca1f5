// A folder of a verified tree as a ZIP archive (zip.js), for the web app's
// "Download folder". Every byte in the archive comes from the verifying
// reader: file bytes from readRange()/readFile(), names and symlink targets
// from verified listings. One view pinned to one root reads it all
// (tree.snapshot(), docs/TRUST.md rule 6), so the archive is one version of
// the folder.
//
// The publisher is trusted to have signed the tree, not to be kind to the
// reader's disk (as `rotree get`, cli/download.js):
// - a name that a ZIP cannot hold safely (a '\', a control character:
//   entryName) is left out, and said so;
// - a symlink is kept only when its target cannot leave the folder: relative,
//   all of its '..' leading and no more of them than the link's depth below
//   the folder; an absolute target (from the tree's root, FORMAT.md §4.6)
//   that names a path inside the folder is rewritten relative; any other is
//   left out, and said so;
// - the folder is listed first, up to MAX_ENTRIES entries, before a byte is
//   written: a tree whose listings repeat one page thousands of times is
//   refused, not written for ever.
//
// Imports nothing but zip.js (Node runs it in tests, with the Node reader).
import { ZipWriter, entryName } from './zip.js'

/** The most entries (files, folders, symlinks) one archive holds. */
export const MAX_ENTRIES = 200_000
// files up to this size are read whole, a few ahead of the writer; larger ones stream
const SMALL = 256 << 10
const AHEAD = 16

function usage (message) { return Object.assign(new Error(message), { code: 'ROTREE_USAGE' }) }

const join = (dir, name) => (dir === '/' ? '' : dir) + '/' + name

/**
 * The target to keep for a symlink at `depth` folders below the archive's
 * folder, or null. `topPath` is the folder's path in the tree.
 */
export function keptTarget (target, depth, topPath) {
  let t = target
  if (t.startsWith('/')) {
    // from the tree's root: kept when it names a path inside the folder
    const top = topPath === '/' ? '' : topPath
    const parts = t.split('/').filter(c => c !== '' && c !== '.')
    if (parts.includes('..')) return null
    const abs = '/' + parts.join('/')
    if (abs !== top && !abs.startsWith(top + '/')) return null
    const inside = abs.slice(top.length).split('/').filter(Boolean)
    t = [...Array(depth).fill('..'), ...inside].join('/') || '.'
  }
  const parts = t.split('/').filter(c => c !== '' && c !== '.')
  let ups = 0
  while (ups < parts.length && parts[ups] === '..') ups++
  if (ups > depth || parts.slice(ups).includes('..')) return null
  return t
}

/**
 * What the archive of the folder at `path` holds: its entries in order
 * (folders before what they hold), and what is left out and why.
 * @param {object} view a Tree or a snapshot of one
 * @param {string} path the folder, in the tree
 * @param {{ top: string, maxEntries?: number }} o top: the archive's own folder name
 * @returns {Promise<{ entries: object[], skipped: { path: string, why: string }[], files: number, bytes: number }>}
 */
export async function planFolder (view, path, { top, maxEntries = MAX_ENTRIES }) {
  const st = await view.stat(path)
  if (st.type !== 'dir') throw usage(`${path} is not a folder`)
  const entries = [{ kind: 'dir', name: entryName([top], true), path, mtime: st.mtimeMs }]
  const skipped = []
  let files = 0
  let bytes = 0
  const walk = async (dir, below) => {
    for await (const s of view.list(dir)) {
      if (entries.length + skipped.length >= maxEntries) throw usage(`more than ${maxEntries} entries: too many for one archive (rotree get copies a folder of any size)`)
      const p = join(dir, s.name)
      const parts = [...below, s.name]
      let name
      try { name = entryName([top, ...parts], s.type === 'dir') } catch {
        skipped.push({ path: p, why: 'its name cannot be a ZIP entry\'s' })
        continue
      }
      if (s.type === 'dir') {
        entries.push({ kind: 'dir', name, path: p, mtime: s.mtimeMs })
        await walk(p, parts)
      } else if (s.type === 'file') {
        entries.push({ kind: 'file', name, path: p, mtime: s.mtimeMs, size: s.size, exec: s.exec })
        files++
        bytes += s.size
      } else {
        const target = keptTarget(s.target, below.length, path)
        if (target === null) skipped.push({ path: p, why: `its target ${s.target} leads out of the folder` })
        else entries.push({ kind: 'symlink', name, path: p, mtime: s.mtimeMs, target })
      }
    }
  }
  await walk(path, [])
  return { entries, skipped, files, bytes }
}

/**
 * Write the archive `plan` describes, reading every file through `view`.
 * @param {object} view the view planFolder read
 * @param {{ entries: object[] }} plan
 * @param {(bytes: Uint8Array) => (Promise<void>|void)} write
 * @param {{ onProgress?: (p: { files: number, bytes: number }) => void, zip64?: boolean }} [o]
 * @returns {Promise<number>} the archive's size
 */
export async function writeFolder (view, plan, write, { onProgress = () => {}, zip64 = false } = {}) {
  const zip = new ZipWriter(write, { zip64 })
  const { entries } = plan
  // small files are read whole a few ahead, so a folder of many is not one round trip each
  const ahead = new Map()
  let next = 0
  const fill = i => {
    next = Math.max(next, i + 1)
    while (next < entries.length && ahead.size < AHEAD && next - i <= 4 * AHEAD) {
      const e = entries[next]
      if (e.kind === 'file' && e.size <= SMALL) {
        const p = view.readFile(e.path)
        p.catch(() => {}) // awaited in its turn; a failure there fails the archive
        ahead.set(next, p)
      }
      next++
    }
  }
  let files = 0
  let bytes = 0
  const onBytes = n => { bytes += n; onProgress({ files, bytes }) }
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i]
    fill(i)
    if (e.kind === 'dir') await zip.directory(e.name.replace(/\/$/, ''), { mtime: e.mtime })
    else if (e.kind === 'symlink') await zip.symlink(e.name, e.target, { mtime: e.mtime })
    else {
      const whole = ahead.get(i)
      ahead.delete(i)
      const chunks = whole ? [await whole] : view.readRange(e.path)
      await zip.file(e.name, chunks, { size: e.size, mtime: e.mtime, exec: e.exec, onBytes })
      files++
      onProgress({ files, bytes })
    }
  }
  return zip.finish()
}
