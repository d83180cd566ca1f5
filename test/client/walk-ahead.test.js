// The look-ahead walk (client-js/src/tree/walk-ahead.js) on synthetic trees:
// whatever order expansions finish in, the visitor sees exactly a plain
// recursive walk's sequence (pre-order enter, each entry, post-order leave);
// nodes are expanded ahead, nearest first, never more than `breadth` at once
// and never past the byte and entry budgets; a pruned child is never
// expanded; a node too big to hold is streamed with its children still
// expanded ahead; failures reach the walk where it meets them.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { walkAhead, treeDirs, ENTRY_COST } from 'rotree-client/tree'

/** A random tree: each node { id, entries: [{ name, kid? }] }, `n` nodes in all. */
function randomTree (n, seed) {
  let x = seed
  const rnd = k => { x = (x * 1103515245 + 12345) & 0x7fffffff; return x % k }
  const root = { id: 0, entries: [], depth: 0 }
  const nodes = [root]
  for (let id = 1; id < n; id++) {
    const parent = nodes[rnd(nodes.length)]
    const kid = { id, entries: [], depth: parent.depth + 1 }
    parent.entries.push({ name: `d${id}`, kid })
    for (let j = rnd(3); j > 0; j--) parent.entries.push({ name: `f${id}.${j}` })
    nodes.push(kid)
  }
  for (const v of nodes) v.entries.sort(() => rnd(3) - 1)
  return { root, nodes }
}

/** What a plain recursive walk sees. */
function reference (v, out = []) {
  out.push(`enter ${v.id}`)
  for (const e of v.entries) {
    out.push(`entry ${v.id} ${e.name}`)
    if (e.kid) reference(e.kid, out)
  }
  out.push(`leave ${v.id}`)
  return out
}

const sleep = ms => new Promise(resolve => setTimeout(resolve, ms))

/** A source over such a tree: expansions take `delay(node)` ms; counts what runs at once. */
function source (o = {}) {
  const stats = { expanded: [], now: 0, peak: 0 }
  return {
    stats,
    count: o.count,
    stream: o.stream,
    async expand (v) {
      stats.expanded.push(v.id)
      stats.peak = Math.max(stats.peak, ++stats.now)
      try {
        await sleep(o.delay ? o.delay(v) : 0)
        if (o.fail?.(v)) throw Object.assign(new Error(`node ${v.id} failed`), { code: 'TEST' })
        return { entries: v.entries }
      } finally { stats.now-- }
    },
    child: (v, e) => e.kid && !o.prune?.(e.kid) ? e.kid : null
  }
}

function recorder (out, o = {}) {
  return {
    enter (v) { out.push(`enter ${v.id}`); return o.slow ? sleep(1) : undefined },
    entry (v, e, kid) { out.push(`entry ${v.id} ${e.name}`); assert.equal(kid, e.kid ?? null) },
    leave (v) { out.push(`leave ${v.id}`) }
  }
}

test('the visitor sees a plain depth-first walk, whatever order expansions finish in', async () => {
  for (const seed of [1, 2, 3, 4, 5]) {
    const { root } = randomTree(120, seed)
    const src = source({ delay: v => (v.id * 7919 + seed) % 13 })
    const out = []
    await walkAhead(root, src, recorder(out, { slow: seed % 2 === 0 }), { breadth: 8 })
    assert.deepEqual(out, reference(root), `seed ${seed}`)
    assert.ok(src.stats.peak <= 8 + 1, `${src.stats.peak} expansions at once, breadth 8 (+ the walk's own)`)
    assert.equal(new Set(src.stats.expanded).size, src.stats.expanded.length, 'each node expanded once')
  }
})

test('nodes are expanded ahead, nearest first: thirty slow siblings take about one expansion, not thirty', async () => {
  const root = { id: 0, entries: [] }
  for (let i = 1; i <= 30; i++) root.entries.push({ name: `d${i}`, kid: { id: i, entries: [{ name: 'f' }] } })
  const src = source({ delay: v => v.id === 0 ? 0 : 40 })
  const t0 = performance.now()
  await walkAhead(root, src, {}, { breadth: 64 })
  const ms = performance.now() - t0
  assert.ok(ms < 400, `${ms} ms for 30 expansions of 40 ms`)
  assert.deepEqual(src.stats.expanded, [0, ...Array.from({ length: 30 }, (_, i) => i + 1)], 'started in the order the walk reaches them')
})

test('the byte and entry budgets bound what is expanded and not yet left', async () => {
  // forty nodes of 20 entries below one root: a slow visitor lets everything that can go ahead do so
  const root = { id: 0, entries: [] }
  for (let i = 1; i <= 40; i++) root.entries.push({ name: `d${i}`, kid: { id: i, entries: Array.from({ length: 20 }, (_, j) => ({ name: `f${j}` })) } })
  for (const [budget, o] of [['bytes', { aheadBytes: 10 * 20 * ENTRY_COST }], ['entries', { aheadEntries: 10 * 20 }]]) {
    let held = 0; let peak = 0
    const src = source({ count: v => v.entries.length }) // charged by its count when it starts
    const expand = src.expand
    src.expand = async v => { const r = await expand(v); if (v.id > 0) peak = Math.max(peak, ++held); return r }
    const out = []
    await walkAhead(root, src, { ...recorder(out), entry: () => sleep(0), leave: v => { if (v.id > 0) held-- } }, { breadth: 64, ...o })
    assert.ok(peak <= 10, `${budget}: ${peak} listings held at once, a budget of 10 with the root's`)
    assert.ok(peak >= 5, `${budget}: listings were expanded ahead (${peak} held at once)`)
  }
})

test('a pruned child is never expanded; maxDepth stops the look-ahead, not the walk', async () => {
  const { root, nodes } = randomTree(80, 9)
  const pruned = new Set(nodes.filter(v => v.id % 5 === 4).map(v => v.id))
  const src = source({ prune: v => pruned.has(v.id) })
  await walkAhead(root, src, {}, { breadth: 4 })
  assert.deepEqual(src.stats.expanded.filter(id => pruned.has(id)), [])

  const deep = { id: 0, entries: [] }
  let v = deep
  for (let i = 1; i < 10; i++) { const kid = { id: i, entries: [] }; v.entries.push({ name: `d${i}`, kid }); v = kid }
  const log = []
  const d = source({ delay: () => 5 })
  const expand = d.expand
  d.expand = x => { log.push(`x ${x.id}`); return expand(x) }
  await walkAhead(deep, d, { enter: x => { log.push(`e ${x.id}`) } }, { maxDepth: 2 })
  assert.equal(log.filter(l => l.startsWith('e')).length, 10, 'every node is walked')
  assert.ok(log.indexOf('x 2') < log.indexOf('e 1'), 'node 2 was expanded ahead')
  for (let k = 3; k < 10; k++) assert.ok(log.indexOf(`x ${k}`) > log.indexOf(`e ${k - 1}`), `node ${k}, deeper than 2, was not: ${log}`)
})

test('a node too big to hold is streamed, its children still expanded ahead; a failure is met where the walk gets there', async () => {
  const big = { id: 0, entries: [] }
  for (let i = 1; i <= 40; i++) big.entries.push({ name: `d${i}`, kid: { id: i, entries: [{ name: 'x' }] } }, { name: `f${i}` })
  let streams = 0
  const src = source({
    count: v => v.entries.length,
    stream: async function * (v) { streams++; for (const e of v.entries) { await sleep(0); yield e } },
    delay: v => v.id === 0 ? 0 : 30
  })
  const out = []
  const t0 = performance.now()
  await walkAhead(big, src, recorder(out), { bigNode: 10, window: 16 })
  assert.deepEqual(out, reference(big))
  assert.equal(streams, 1)
  assert.ok(!src.stats.expanded.includes(0), 'the big node was never expanded whole')
  assert.ok(performance.now() - t0 < 600, 'its children were expanded ahead, not one after another')

  const { root, nodes } = randomTree(60, 11)
  const bad = nodes[37]
  const f = source({ fail: v => v === bad })
  const seen = []
  await assert.rejects(walkAhead(root, f, recorder(seen), { breadth: 16 }), { code: 'TEST' })
  const want = reference(root)
  assert.deepEqual(seen, want.slice(0, want.indexOf(`enter ${bad.id}`)), 'everything before the failed node, nothing after')

  const stop = source({})
  await assert.rejects(walkAhead(root, stop, { entry: (v, e) => { if (e.name === 'd20') throw new Error('stop') } }), /stop/)
})

test('treeDirs: a subdirectory is entered with its count, to be checked against its pages', async () => {
  const pages = new Map([['top', [{ name: 'a', type: 'dir', size: 2, dir: { hash: 'A' } }, { name: 'f', type: 'file', size: 3, inline: new Uint8Array(3) }]], ['A', [{ name: 'x', type: 'file', size: 0 }, { name: 'y', type: 'symlink', target: 'x' }]]])
  const asked = []
  const tree = { async * entriesOf (d) { asked.push(d); yield * pages.get(d.dir.hash) } }
  const s = treeDirs(tree, (parent, e) => ({ entry: e, count: e.entries, path: parent.path + '/' + e.name }))
  const out = []
  await walkAhead({ entry: { dir: { hash: 'top' } }, count: 2, path: '' }, s, { entry: (n, e) => { out.push(n.path + '/' + e.name) } })
  assert.deepEqual(out, ['/a', '/a/x', '/a/y', '/f'])
  assert.equal(asked[1].entries, 2)
  assert.equal((await s.expand({ entry: { dir: { hash: 'top' } } })).cost, 2 * ENTRY_COST + 3)
})
