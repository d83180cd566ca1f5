// What changed between two roots of one tree (`rotree diff`): paths added,
// removed and changed, found by walking both directory trees together and
// never entering a directory whose handle is the same in both (its whole
// subtree is then identical: a handle names the bytes of every page below).
// A file counts as changed when its content (inline bytes, chunk handles or
// chunk-index handle, and size), its exec bit or its kind changes; a new
// mtime alone is not a change, as in git. A directory only one side has is
// listed, then everything below it, each path once (as `diff -r` and
// `git diff --stat` show a new or removed folder's files). Every page comes
// through the trees' verified reads.
//
// The walk is the look-ahead walk of client-js (walkAhead): a node is a pair
// of directories with one path, its listing the changes between them in
// name order, and its children the pairs of same-named subdirectories whose
// handles differ (a pair with equal handles is pruned: never listed), and
// the directories one side has alone (a pair with one side missing, whose
// listing is all added or all removed). At a
// distance each directory is a round trip, and the walk enters the pairs
// that differ one after another; the engine lists the pairs the walk will
// enter next ahead of it, both sides at once, within its bounds on the
// listings it holds, and streams a pair too big to hold.
import { Buffer } from 'node:buffer'
import { walkAhead, ENTRY_COST } from 'rotree-client/tree'

const WALK = { breadth: 64 } // pairs listed ahead at once: two listings each (rotree get has 128 out, get-dirs.js)

/**
 * @param {import('rotree-client').Tree} a the older view @param {import('rotree-client').Tree} b
 * @param {(d: { op: '+'|'-'|'M', path: string, type: string }) => void} emit
 */
export async function diffTrees (a, b, emit) {
  const [ra, rb] = await Promise.all([a.resolve('/'), b.resolve('/')])
  if (same(ra, rb)) return
  // the roots' entries carry no count (no parent page): their top pages give it
  const [sa, sb] = await Promise.all([a.stat('/'), b.stat('/')])
  const root = { a: ra, b: rb, path: '', count: sa.entries + sb.entries }
  await walkAhead(root, pairs(a, b), { entry: (pair, c) => { if (c.op !== undefined) emit({ op: c.op, path: c.path, type: c.type }) } }, WALK)
}

/**
 * Pairs of directories as walkAhead nodes: { a, b, path, count } (`a`, `b`:
 * entries as entriesOf() takes them; null for the side that has no such directory).
 */
function pairs (a, b) {
  const entriesOf = (tree, e) => (e ? tree.entriesOf(e) : NONE)[Symbol.asyncIterator]()
  return {
    count: p => p.count,
    async expand (p) {
      const [la, lb] = await Promise.all([listOf(a, p.a), listOf(b, p.b)])
      const entries = []
      for await (const c of changes(la.values(), lb.values(), p.path)) entries.push(c)
      return { entries, cost: entries.length * ENTRY_COST }
    },
    stream: p => changes(entriesOf(a, p.a), entriesOf(b, p.b), p.path),
    child: (p, c) => c.pair ?? null
  }
}

const NONE = { async * [Symbol.asyncIterator] () {} }

async function listOf (tree, e) {
  const out = []
  if (e) for await (const x of tree.entriesOf(e)) out.push(x)
  return out
}

/**
 * Two directories' entries (iterators, in name order) merged: each change
 * ({ op, path, type }) and each pair of subdirectories to enter ({ pair }),
 * in name order.
 */
async function * changes (ia, ib, dir) {
  const at = e => dir + '/' + e.name
  const next = async it => { const r = await it.next(); return r.done ? null : r.value }
  // a directory one side has alone: listed, and entered as a pair with the other side missing
  const removed = e => ({ op: '-', path: at(e), type: e.type, pair: e.type === 'dir' ? { a: asDir(e), b: null, path: at(e), count: e.size } : null })
  const added = e => ({ op: '+', path: at(e), type: e.type, pair: e.type === 'dir' ? { a: null, b: asDir(e), path: at(e), count: e.size } : null })
  let ea = await next(ia); let eb = await next(ib)
  try {
    while (ea || eb) {
      const c = !ea ? 1 : !eb ? -1 : Buffer.compare(Buffer.from(ea.name), Buffer.from(eb.name))
      if (c < 0) { yield removed(ea); ea = await next(ia); continue }
      if (c > 0) { yield added(eb); eb = await next(ib); continue }
      if (ea.type !== eb.type) {
        yield removed(ea)
        yield added(eb)
      } else if (ea.type === 'dir') {
        if (!same(ea, eb)) yield { pair: { a: asDir(ea), b: asDir(eb), path: at(ea), count: ea.size + eb.size } }
      } else if (contentKey(ea) !== contentKey(eb)) {
        yield { op: 'M', path: at(ea), type: ea.type }
      }
      ea = await next(ia); eb = await next(ib)
    }
  } finally {
    await Promise.all([ia.return?.(), ib.return?.()])
  }
}

/** A directory entry from a page, in the shape entriesOf() takes (its count checked against its pages). */
const asDir = e => ({ ...e, entries: e.size })

const same = (x, y) => x.dir.hash === y.dir.hash && x.dir.size === y.dir.size

/** What a file's or a symlink's content is, as text: equal keys, equal content and mode. */
function contentKey (e) {
  if (e.type === 'symlink') return 'l ' + e.target
  const body = e.inline ? 'i ' + Buffer.from(e.inline).toString('base64')
    : e.chunks ? 'c ' + e.chunks.map(c => c.hash).join(',')
      : e.index ? 'x ' + e.index.hash : ''
  return `${e.exec ? 'x' : '-'} ${e.size} ${body}`
}
