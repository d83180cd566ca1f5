// What changed between two roots of one tree (`rotree diff`): paths added,
// removed and changed, found by walking both directory trees together and
// never entering a directory whose handle is the same in both (its whole
// subtree is then identical: a handle names the bytes of every page below).
// A file counts as changed when its content (inline bytes, chunk handles or
// chunk-index handle, and size), its exec bit or its kind changes; a new
// mtime alone is not a change, as in git. Every page comes through the
// trees' verified reads.
import { Buffer } from 'node:buffer'
import { entryCost } from './get-lister.js'

/**
 * @param {import('rotree-client').Tree} a the older view @param {import('rotree-client').Tree} b
 * @param {(d: { op: '+'|'-'|'M', path: string, type: string }) => void} emit
 */
export async function diffTrees (a, b, emit) {
  const ra = await a.resolve('/'); const rb = await b.resolve('/')
  await diffDirs(a, ra, b, rb, '/', emit, { primed: new Set(), waiting: [], out: 0, held: 0 })
}

// At a distance each directory is a round trip, and the walk enters the
// directories that differ one after another. So each directory's entries are
// read up to AHEAD ahead of the walk (held: at most HELD bytes of them,
// estimated, over all levels; past that the walk reads one at a time), and
// each pair of subdirectories seen there that differ, which the walk will
// enter, is primed: the top pages of both are asked for at once, and once
// they are in, the pairs of their subdirectories that differ are primed in
// turn. The walk then finds the pages in the trees' caches (or joins the
// fetch still out). At most PRIMED pairs are primed and not yet entered by
// the walk, so priming stays near it, and OUT are being read at once (two
// listings each: rotree get has 128 listings out, get-lister.js); the rest
// wait their turn, in the order they were found.
const AHEAD = 256
const PRIMED = 512
const OUT = 64
const HELD = 8 << 20

async function diffDirs (a, da, b, db, dir, emit, ahead) {
  if (same(da, db)) return
  ahead.primed.delete(pairKey(da, db))
  const sa = new Side(a, da, ahead); const sb = new Side(b, db, ahead)
  sa.other = sb; sb.other = sa; sa.isA = true
  try {
    const at = e => (dir === '/' ? '/' : dir + '/') + e.name
    let ea = await sa.next(); let eb = await sb.next()
    while (ea || eb) {
      const c = !ea ? 1 : !eb ? -1 : Buffer.compare(Buffer.from(ea.name), Buffer.from(eb.name))
      if (c < 0) { emit({ op: '-', path: at(ea), type: ea.type }); ea = await sa.next(); continue }
      if (c > 0) { emit({ op: '+', path: at(eb), type: eb.type }); eb = await sb.next(); continue }
      if (ea.type !== eb.type) {
        emit({ op: '-', path: at(ea), type: ea.type }); emit({ op: '+', path: at(eb), type: eb.type })
      } else if (ea.type === 'dir') {
        await diffDirs(a, ea, b, eb, at(ea), emit, ahead)
      } else if (contentKey(ea) !== contentKey(eb)) {
        emit({ op: 'M', path: at(ea), type: ea.type })
      }
      ea = await sa.next(); eb = await sb.next()
    }
  } finally {
    sa.close(); sb.close()
  }
}

/** One directory's entries, in order, read ahead of the walk (see AHEAD). */
class Side {
  constructor (tree, dirEntry, ahead) {
    this.tree = tree
    this.it = tree.entriesOf(dirEntry)[Symbol.asyncIterator]()
    this.ahead = ahead
    this.buf = [] // read, not yet handed to the walk
    this.dirs = new Map() // name → subdirectory entry in buf, not yet paired with the other side's
    this.done = false
    this.other = null
    this.isA = false // the older view's side
  }

  async next () {
    if (this.buf.length === 0) await this.read()
    while (!this.done && this.buf.length < AHEAD && this.ahead.held < HELD) await this.read()
    const e = this.buf.shift()
    if (e === undefined) return null
    this.ahead.held -= entryCost(e)
    if (e.type === 'dir') this.dirs.delete(e.name)
    return e
  }

  async read () {
    if (this.done) return
    const r = await this.it.next()
    if (r.done) { this.done = true; return }
    const e = r.value
    this.buf.push(e)
    this.ahead.held += entryCost(e)
    if (e.type !== 'dir') return
    const twin = this.other.dirs.get(e.name)
    if (twin === undefined) { this.dirs.set(e.name, e); return }
    this.other.dirs.delete(e.name)
    if (!same(twin, e)) this.isA ? prime(this.tree, e, this.other.tree, twin, this.ahead) : prime(this.other.tree, twin, this.tree, e, this.ahead)
  }

  close () {
    for (const e of this.buf) this.ahead.held -= entryCost(e)
    this.buf.length = 0
    this.it.return().catch(() => {})
  }
}

/**
 * Prime the pair (ea in a, eb in b) that the walk will enter: both top pages
 * asked for now, then the differing pairs among their first AHEAD entries.
 * A failure is the walk's to meet when it gets there.
 */
function prime (a, ea, b, eb, ahead) {
  const k = pairKey(ea, eb)
  if (ahead.primed.size >= PRIMED || ahead.primed.has(k)) return
  ahead.primed.add(k)
  // pairs the walk entered while they waited are stale: dropped here too, so the queue stays near PRIMED
  if (ahead.waiting.length >= 2 * PRIMED) ahead.waiting = ahead.waiting.filter(w => ahead.primed.has(w.k))
  ahead.waiting.push({ a, ea, b, eb, k })
  pump(ahead)
}

function pump (ahead) {
  while (ahead.out < OUT && ahead.waiting.length) {
    const { a, ea, b, eb, k } = ahead.waiting.shift()
    if (!ahead.primed.has(k)) continue // the walk got there first
    ahead.out++
    Promise.all([firstDirs(a, ea), firstDirs(b, eb)]).then(([la, lb]) => {
      if (!ahead.primed.has(k)) return // entered (or the walk is over)
      const dirs = new Map()
      for (const e of la) dirs.set(e.name, e)
      for (const e of lb) {
        const twin = dirs.get(e.name)
        if (twin !== undefined && !same(twin, e)) prime(a, twin, b, e, ahead)
      }
    }, () => {}).finally(() => { ahead.out--; pump(ahead) })
  }
}

/** The subdirectories among the first AHEAD entries of directory `e` (its top page, or the pages that hold them). */
async function firstDirs (tree, e) {
  const out = []
  let n = 0
  for await (const x of tree.entriesOf(e)) {
    if (x.type === 'dir') out.push(x)
    if (++n >= AHEAD) break
  }
  return out
}

const same = (x, y) => x.dir.hash === y.dir.hash && x.dir.size === y.dir.size
const pairKey = (x, y) => x.dir.hash + ' ' + y.dir.hash

/** What a file's or a symlink's content is, as text: equal keys, equal content and mode. */
function contentKey (e) {
  if (e.type === 'symlink') return 'l ' + e.target
  const body = e.inline ? 'i ' + Buffer.from(e.inline).toString('base64')
    : e.chunks ? 'c ' + e.chunks.map(c => c.hash).join(',')
      : e.index ? 'x ' + e.index.hash : ''
  return `${e.exec ? 'x' : '-'} ${e.size} ${body}`
}
