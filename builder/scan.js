// Phase 1 of a build: walk SRC with lstat and decide what is publishable.
// Bad input (DESIGN.md "Bad input") is found here, before any blob is
// written: special files, names that are not valid UTF-8, symlinks that leave
// the tree, unreadable entries. Each is skipped with a warning or fails the
// build, as the user chose; either way the message names the path.
import fs from 'node:fs/promises'
import path from 'node:path'
import { BuildInputError } from 'rotree-client/errors'
import { checkName } from 'rotree-client/src/format/entry.js'
import { MAX_SYMLINK, MAX_DEPTH, MAX_PATH } from 'rotree-client/src/format/limits.js'

const strictUtf8 = new TextDecoder('utf-8', { fatal: true })

/**
 * @typedef {{ name: string, abs: string, rel: string, type: 'file'|'dir'|'symlink',
 *   st: import('node:fs').Stats, children?: Node[], target?: string }} Node
 * @param {string} src
 * @param {{ onBad: 'fail'|'skip', warn: (msg: string) => void }} o
 * @returns {Promise<{ root: Node, files: number, bytes: number, dirs: number, symlinks: number, skipped: string[] }>}
 */
export async function scan (src, { onBad = 'fail', warn = () => {} } = {}) {
  const totals = { files: 0, bytes: 0, dirs: 0, symlinks: 0, skipped: [] }
  const bad = (rel, why) => {
    const msg = `${rel}: ${why}`
    if (onBad !== 'skip') throw new BuildInputError(msg, { details: { path: rel } })
    totals.skipped.push(msg)
    warn(`skipping ${msg}`)
    return null
  }

  async function visit (abs, rel, name, depth) {
    // FORMAT.md §2: readers refuse paths past these bounds, so never publish one
    if (depth > MAX_DEPTH) return bad(rel, `deeper than ${MAX_DEPTH} path components`)
    if (Buffer.byteLength(rel) > MAX_PATH) return bad(rel.slice(0, 80) + '…', `path longer than ${MAX_PATH} bytes`)
    let st
    try { st = await fs.lstat(abs) } catch (err) { return bad(rel, `cannot stat (${err.code})`) }
    if (st.isDirectory()) {
      let raw
      try { raw = await fs.readdir(abs, { encoding: 'buffer' }) } catch (err) { return bad(rel, `cannot read directory (${err.code})`) }
      const kids = await Promise.all(raw.map(async nb => {
        let n
        try { n = strictUtf8.decode(nb) } catch { return bad(path.posix.join(rel, nb.toString('latin1')), 'name is not valid UTF-8') }
        if (!checkName(n)) return bad(path.posix.join(rel, n), 'name cannot be published')
        return visit(path.join(abs, n), rel === '/' ? '/' + n : rel + '/' + n, n, depth + 1)
      }))
      totals.dirs++
      return { name, abs, rel, type: 'dir', st, children: kids.filter(Boolean) }
    }
    if (st.isFile()) {
      totals.files++; totals.bytes += st.size
      return { name, abs, rel, type: 'file', st }
    }
    if (st.isSymbolicLink()) {
      const tb = await fs.readlink(abs, { encoding: 'buffer' })
      let target
      try { target = strictUtf8.decode(tb) } catch { return bad(rel, 'symlink target is not valid UTF-8') }
      if (tb.length > MAX_SYMLINK) return bad(rel, 'symlink target too long')
      if (target.startsWith('/')) return bad(rel, `symlink to absolute path ${target} leaves the tree`)
      // FORMAT.md §4.6: a target resolves lexically from the link's directory and must stay inside
      // normalise relative to the root: posix.normalize clamps '..' at '/' for absolute paths and would hide an escape
      const resolved = path.posix.normalize(path.posix.join(path.posix.dirname(rel.slice(1)), target))
      if (resolved === '..' || resolved.startsWith('../')) return bad(rel, `symlink to ${target} leaves the tree`)
      totals.symlinks++
      return { name, abs, rel, type: 'symlink', st, target }
    }
    const kind = st.isFIFO() ? 'a fifo' : st.isSocket() ? 'a socket' : st.isCharacterDevice() || st.isBlockDevice() ? 'a device' : 'a special file'
    return bad(rel, `is ${kind}`)
  }

  const st = await fs.stat(src).catch(err => { throw new BuildInputError(`${src}: ${err.code}`, { cause: err }) })
  if (!st.isDirectory()) throw new BuildInputError(`${src} is not a directory`)
  const root = await visit(path.resolve(src), '/', '', 0)
  return { root, ...totals }
}
