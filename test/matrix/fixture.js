// The tree every cell of the matrix reads, and the signed fsinfo.json
// variants the lies serve. Built once per run with a fresh key.
import fs from 'node:fs/promises'
import path from 'node:path'
import { createHash } from 'node:crypto'
import { tmpdir, makeKey, writeTree, buildTree, prng } from '../helpers/fixtures.js'
import { encodeFsinfo, fsinfoMessage, decodeDirPage } from 'rotree-client/format'
import { sign } from 'rotree-client/crypto'

export const TARGET = '/data/big.bin'

function signed (fields, secretKey) { return Buffer.from(encodeFsinfo({ ...fields, sig: sign(fsinfoMessage(fields), secretKey) })) }
const sha = b => createHash('sha256').update(b).digest('hex')

export async function makeFixture () {
  const dir = await tmpdir('rotree-matrix-')
  const src = path.join(dir, 'src')
  const big = prng(3 * 1024 * 1024 + 12345, 'matrix-big')
  await writeTree(src, { 'data/big.bin': big, 'data/small.txt': 'small\n', 'readme.txt': 'hello\n', 'loop-a': { symlink: 'loop-b' }, 'loop-b': { symlink: 'loop-a' } })
  const key = makeKey(); const other = makeKey()
  const now = Date.now()
  // the lies of lies.js are about a format-version-1 tree (v1 fsinfo.json fields re-signed, v1
  // blob names), so it is built as version 1 on purpose; version 2 is fixture-v2.js's world
  // v1 then v2 (a change elsewhere), so an older, validly signed root exists
  const v1 = await buildTree(src, { key, out: path.join(dir, 'out'), now: now - 60_000, ttlMs: 7 * 86400e3, seq: 1000, version: 1 })
  const old = await fs.readFile(path.join(v1.out, 'fsinfo.json'))
  await fs.writeFile(path.join(src, 'readme.txt'), 'hello, version two\n')
  const v2 = await buildTree(src, { key, out: v1.out, now, ttlMs: 7 * 86400e3, seq: 1001, version: 1 })
  const out = v2.out
  const current = JSON.parse(await fs.readFile(path.join(out, 'fsinfo.json'), 'utf8'))
  const fields = { key: current.key, seq: current.seq, issued: current.issued, expires: current.expires, root: current.root, rootSize: current.rootSize, rootMtime: current.rootMtime }
  const iso = ms => new Date(ms).toISOString()

  // the blobs a read of TARGET needs: the root page, the /data page, a middle chunk
  const h = name => fs.readFile(path.join(out, 'h', name))
  const rootPage = decodeDirPage(await h(current.root))
  const dataEntry = rootPage.entries.find(e => e.name === 'data')
  const dataPage = decodeDirPage(await h(dataEntry.dir.hash))
  const bigEntry = dataPage.entries.find(e => e.name === 'big.bin')
  const chunks = bigEntry.chunks
  const middle = chunks[chunks.length >> 1].hash
  const otherChunk = chunks.find(c => c.hash !== middle && c.size !== chunks[chunks.length >> 1].size)?.hash ?? chunks[0].hash

  // a signed root whose directory blob is malformed (hash-correct garbage): only a
  // publisher can make one, but readers must refuse it cleanly
  const garbage = Buffer.from('rtD\x01\xff\xff\xff\xff garbage that is not a directory page')
  const garbageHash = sha(garbage)
  await fs.writeFile(path.join(out, 'h', garbageHash), garbage) // an orphan in the honest folder; only the lie's root names it

  return {
    dir, src, out, key, big, middle, otherChunk, dataPage: dataEntry.dir.hash, rootPage: current.root,
    fsinfo: {
      current: await fs.readFile(path.join(out, 'fsinfo.json')),
      old,
      wrongKey: signed({ ...fields, key: other.publicKey }, other.secretKey),
      badSig: Buffer.from(JSON.stringify({ ...current, seq: current.seq + 5 })),
      expired: signed({ ...fields, seq: fields.seq + 1, issued: iso(now - 3 * 86400e3), expires: iso(now - 86400e3) }, key.secretKey),
      future: signed({ ...fields, seq: fields.seq + 1, issued: iso(now + 86400e3), expires: iso(now + 8 * 86400e3) }, key.secretKey),
      fork: signed({ ...fields, root: JSON.parse(old).root, rootSize: JSON.parse(old).rootSize }, key.secretKey),
      malformed: Buffer.from('{"version": 1, "key": '),
      version3: Buffer.from(JSON.stringify({ ...current, version: 3 })),
      oversized: Buffer.from(JSON.stringify({ ...current, pad: 'x'.repeat(8000) })),
      badTree: signed({ ...fields, seq: fields.seq + 1, root: garbageHash, rootSize: garbage.length }, key.secretKey)
    },
    cleanup: () => fs.rm(dir, { recursive: true, force: true })
  }
}
