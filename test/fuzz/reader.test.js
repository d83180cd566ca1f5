// The whole reader under random lies (docs/TRUST.md rules 3 and 7): a real Tree over a
// transport that serves a real published folder but corrupts what it sends
// at random (flip, truncate, extend, swap, replace with random bytes). For
// every lie, a read returns exactly the true bytes (the lie missed what the
// read needed) or fails with a typed mirror-fault error: inside
// ROTREE_ALL_MIRRORS_FAILED (there is one mirror), or, for a verdict on the
// signed documents that the only mirror gave (too few valid signatures,
// another family), that verdict with the mirror's answer in `errors`
// (docs/TRUST.md rule 4); never other bytes. Run on
// a version-1 tree the builder wrote and on a version-2 tree (compressed
// blobs, a trust chain the lies reach too).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import fc from 'fast-check'
import { Tree, MIRROR_FAULT_CODES, TooLargeError, MirrorHttpError } from 'rotree-client'
import { tmpdir, makeKey, writeTree, buildTree, prng } from '../helpers/fixtures.js'
import { Publisher, role } from '../client/v2-publisher.js'

const RUNS = Number(process.env.FUZZ_RUNS || 300)

/** Every file a reader asks for in `out`, by its request path. */
async function published (out) {
  const served = new Map([['fsinfo.json', await fs.readFile(path.join(out, 'fsinfo.json'))]])
  for (const n of await fs.readdir(path.join(out, 'h'))) served.set('h/' + n, await fs.readFile(path.join(out, 'h', n)))
  for (const n of await fs.readdir(path.join(out, 'trust')).catch(() => [])) served.set('trust/' + n, await fs.readFile(path.join(out, 'trust', n)))
  return served
}

test('random lies never yield wrong bytes', { timeout: 600_000 }, async t => {
  const dir = await tmpdir(); t.after(() => fs.rm(dir, { recursive: true, force: true }))
  const files = { 'small.txt': Buffer.from('small file\n'), 'one.bin': prng(100_000, 'one'), 'multi.bin': prng(2_500_000, 'multi'), 'sub/deep/x.txt': prng(5000, 'x') }
  await writeTree(path.join(dir, 'src'), { ...files, 'ln': { symlink: 'sub/deep/x.txt' } })
  const key = makeKey()
  const { out } = await buildTree(path.join(dir, 'src'), { key })
  await lies(await published(out), `http://mirror.invalid/#${key.publicKey}`, files)
})

test('random lies never yield wrong bytes: a version-2 tree', { timeout: 600_000 }, async t => {
  const p = await Publisher.create({ name: 'fuzz' }); t.after(() => p.close())
  const text = Buffer.from(Array.from({ length: 30_000 }, (_, i) => `line ${i} of a compressible file\n`).join(''))
  const files = {
    'small.txt': Buffer.from('small file\n'),
    'text.txt': text, // compressed chunks
    'one.bin': prng(100_000, 'one'), // a raw chunk
    'indexed.bin': { data: prng(300_000, 'indexed'), chunkSize: 8192 }, // 37 raw chunks under a chunk index
    'sub/deep/x.txt': prng(5000, 'x'),
    ln: { symlink: 'sub/deep/x.txt' }
  }
  const k = p.k
  await p.rotate({ root: role([k.A, k.B, k.D], 2), release: role([k.R2]), timestamp: role([k.T2]) })
  await p.publish(files)
  const want = { ...files, 'indexed.bin': files['indexed.bin'].data }
  delete want.ln
  await lies(await published(p.out), p.address('http://mirror.invalid/'), want)
})

async function lies (served, address, files) {
  const names = [...served.keys()].filter(n => n !== 'fsinfo.json')

  const lieArb = fc.record({
    target: fc.nat(names.length - 1),
    kind: fc.constantFrom('flip', 'truncate', 'extend', 'swap', 'random', 'empty'),
    pos: fc.nat(), x: fc.integer({ min: 1, max: 255 }), other: fc.nat(names.length - 1),
    extra: fc.uint8Array({ minLength: 1, maxLength: 64 })
  })
  const pathArb = fc.constantFrom(...Object.keys(files), 'ln')

  await fc.assert(fc.asyncProperty(lieArb, pathArb, async (lie, p) => {
    const victim = names[lie.target]
    const transport = {
      stats: { requests: 0, bytes: 0 },
      close () {},
      async get (url, o) {
        this.stats.requests++
        const name = url.slice('http://mirror.invalid/'.length)
        let b = served.get(name)
        if (b === undefined) throw new MirrorHttpError(`404 for ${name}`)
        if (name === victim) {
          const m = Buffer.from(b)
          switch (lie.kind) {
            case 'flip': m[lie.pos % m.length] ^= lie.x; b = m; break
            case 'truncate': b = m.subarray(0, lie.pos % m.length); break
            case 'extend': b = Buffer.concat([m, lie.extra]); break
            case 'swap': b = served.get(names[lie.other]); break
            case 'random': b = Buffer.from(lie.extra); break
            case 'empty': b = Buffer.alloc(0)
          }
        }
        if (b.length > o.cap) throw new TooLargeError(`${b.length} bytes, cap ${o.cap}`) // as the real transports do
        return new Uint8Array(b)
      }
    }
    const tree = new Tree(address, { stateDir: null, transport })
    try {
      await tree.refresh()
      const got = Buffer.from(await tree.readFile('/' + p))
      const want = p === 'ln' ? files['sub/deep/x.txt'] : files[p]
      assert.ok(got.equals(want), `read ${p} returned wrong bytes under ${JSON.stringify({ ...lie, extra: lie.extra.length })}`)
    } catch (err) {
      if (err.code === 'ERR_ASSERTION') throw err
      // the only mirror failed: ROTREE_ALL_MIRRORS_FAILED with its own fault
      // code, or its verdict on signed data as itself (docs/TRUST.md rule 4)
      assert.ok(err.code === 'ROTREE_ALL_MIRRORS_FAILED' || (MIRROR_FAULT_CODES.has(err.code) && err.errors?.[0]?.code === err.code), `unexpected ${err.code}: ${err.message}`)
      assert.ok(err.errors.length === 1 && MIRROR_FAULT_CODES.has(err.errors[0].code), `unexpected ${JSON.stringify(err.errors)}`)
    }
  }), { numRuns: RUNS })
}
