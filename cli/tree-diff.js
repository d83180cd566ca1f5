// What changed between two roots of one tree (`rotree diff`): paths added,
// removed and changed, found by walking both directory trees together and
// never entering a directory whose handle is the same in both (its whole
// subtree is then identical: a handle names the bytes of every page below).
// A file counts as changed when its content (inline bytes, chunk handles or
// chunk-index handle, and size), its exec bit or its kind changes; a new
// mtime alone is not a change, as in git. Every page comes through the
// trees' verified reads.
import { Buffer } from 'node:buffer'

/**
 * @param {import('rotree-client').Tree} a the older view @param {import('rotree-client').Tree} b
 * @param {(d: { op: '+'|'-'|'M', path: string, type: string }) => void} emit
 */
export async function diffTrees (a, b, emit) {
  const ra = await a.resolve('/'); const rb = await b.resolve('/')
  await diffDirs(a, ra, b, rb, '/', emit)
}

async function diffDirs (a, da, b, db, dir, emit) {
  if (da.dir.hash === db.dir.hash && da.dir.size === db.dir.size) return
  const ia = a.entriesOf(da)[Symbol.asyncIterator](); const ib = b.entriesOf(db)[Symbol.asyncIterator]()
  let ea = await next(ia); let eb = await next(ib)
  const at = e => (dir === '/' ? '/' : dir + '/') + e.name
  while (ea || eb) {
    const c = !ea ? 1 : !eb ? -1 : Buffer.compare(Buffer.from(ea.name), Buffer.from(eb.name))
    if (c < 0) { emit({ op: '-', path: at(ea), type: ea.type }); ea = await next(ia); continue }
    if (c > 0) { emit({ op: '+', path: at(eb), type: eb.type }); eb = await next(ib); continue }
    if (ea.type !== eb.type) {
      emit({ op: '-', path: at(ea), type: ea.type }); emit({ op: '+', path: at(eb), type: eb.type })
    } else if (ea.type === 'dir') {
      await diffDirs(a, ea, b, eb, at(ea), emit)
    } else if (contentKey(ea) !== contentKey(eb)) {
      emit({ op: 'M', path: at(ea), type: ea.type })
    }
    ea = await next(ia); eb = await next(ib)
  }
}

const next = async it => { const r = await it.next(); return r.done ? null : r.value }

/** What a file's or a symlink's content is, as text: equal keys, equal content and mode. */
function contentKey (e) {
  if (e.type === 'symlink') return 'l ' + e.target
  const body = e.inline ? 'i ' + Buffer.from(e.inline).toString('base64')
    : e.chunks ? 'c ' + e.chunks.map(c => c.hash).join(',')
      : e.index ? 'x ' + e.index.hash : ''
  return `${e.exec ? 'x' : '-'} ${e.size} ${body}`
}
