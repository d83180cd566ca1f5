// The format-version-2 tree of the matrix (docs/FORMAT.md §12) and the
// signed variants its key lies serve. Published with the real publisher
// (builder/trust-publish.js, builder/release.js: what `rotree trust init|sign|
// update`, `rotree build --unsigned` and `rotree sign --publish` run), then
// forged with the test vectors' writer where a liar needs what no honest
// publisher writes.
//
// Family "S" (the address #t<hash of trust 1>:stable):
//   trust 1  root 2 of A, B, C; release 2 of R1, R2; timestamp T1
//            release 1 (readme "one") published under it: fsinfo.old
//   trust 2  root 2 of D, E, F (signed by A, B, D, E); release unchanged; timestamp T2
//            release 2 (readme "two") published under it: the honest fsinfo.json
//
// Family "E" (its own address, the same blobs): trust 1 expired two days ago,
// then trust 2, current. A mirror frozen at trust 1 serves a fresh fsinfo.json
// under it: the final document it shows has expired (FORMAT.md §12.2). E's
// release keys are S's (R1, R2).
//
// Family "G", a sibling of S: one organisation's root keys (A, B, C, then D,
// E, F) over two projects, so G's trust 2 is signed by every key S's chain
// asks of a document 2; it names G's trust 1 as its predecessor.
import fs from 'node:fs/promises'
import path from 'node:path'
import { tmpdir, writeTree, prng } from '../helpers/fixtures.js'
import { generateKeyPair, sign } from 'rotree-client/crypto'
import { decodeTrustDoc, trustMessage, decodeFsinfoV2 } from 'rotree-client/format'
import { trustAnchorOf } from 'rotree-client/trust'
import { build } from '../../builder/build.js'
import { initTrust, signTrust, updateTrust } from '../../builder/trust-publish.js'
import { signOut } from '../../builder/release.js'
import { V2Writer, role } from '../vectors/v2-writer.js'

export const TARGET_V2 = '/data/big.bin'
const DAY = 86400e3
const TTL = 7 * DAY

const KEYS = ['A', 'B', 'C', 'D', 'E', 'F', 'R1', 'R2', 'T1', 'T2', 'X']

/** A release of SRC into OUT under the trust document in force, signed by both release keys and `ts`. */
async function release (src, out, k, ts, now) {
  await build({ src, out, key: k.R1, version: 2, name: 'stable', unsigned: true, ttlMs: TTL, now, fsync: false, threads: 0 })
  await signOut({ out, keys: [k.R1, k.R2], timestampKeys: [ts], publish: true, ttlMs: TTL, now, fsync: false })
  return fs.readFile(path.join(out, 'fsinfo.json'))
}

export async function makeFixtureV2 () {
  const dir = await tmpdir('rotree-matrix-v2-')
  const src = path.join(dir, 'src'); const out = path.join(dir, 'out')
  const big = prng(3 * 1024 * 1024 + 4321, 'matrix-big-v2')
  await writeTree(src, { 'data/big.bin': big, 'data/small.txt': 'small\n', 'readme.txt': 'one\n' })
  const k = Object.fromEntries(KEYS.map(n => [n, generateKeyPair()]))
  const now = Date.now()

  // trust 1 and release 1 under it
  const init = await initTrust(out, { root: [k.A, k.B, k.C].map(x => x.publicKey), rootThreshold: 2, release: [k.R1.publicKey, k.R2.publicKey], releaseThreshold: 2, timestamp: [k.T1.publicKey], name: 'stable', now })
  await signTrust(out, [k.A, k.B], { fsync: false })
  const old = await release(src, out, k, k.T1, now - 60_000)
  // trust 2: every root key replaced, a new timestamp key; release 2 under it
  await updateTrust(out, { addRoot: [k.D, k.E, k.F].map(x => x.publicKey), removeRoot: [k.A, k.B, k.C].map(x => x.publicKey), rootThreshold: 2, timestamp: [k.T2.publicKey], now })
  await signTrust(out, [k.A, k.B, k.D, k.E], { fsync: false })
  await writeTree(src, { 'readme.txt': 'two\n' })
  const current = await release(src, out, k, k.T2, now)

  const trust1 = decodeTrustDoc(await fs.readFile(path.join(out, 'trust', '1.json')))
  const trust2 = decodeTrustDoc(await fs.readFile(path.join(out, 'trust', '2.json')))
  const info = decodeFsinfoV2(current)
  const r = info.release.root
  const root = { hash: r.hash, storedSize: r.size, size: r.decodedSize, codec: r.codec }
  const rel = { seq: info.release.seq, expires: info.release.expiresMs }
  const oldInfo = decodeFsinfoV2(old)
  const o = oldInfo.release.root
  const oldRoot = { hash: o.hash, storedSize: o.size, size: o.decodedSize, codec: o.codec }

  // the liars' documents, written aside (file: false) by the test vectors' writer
  const w = new V2Writer(path.join(dir, 'forged'), { anchor: init.anchor })
  const publish = o => w.publish({ name: 'stable', trust: trust2, root, rootMtime: r.mtime, seq: info.seq + 1, release: rel, relSigners: [k.R1, k.R2], tsSigners: [k.T2], now, file: false, ...o })
  const roles2 = { root: role([k.D, k.E, k.F], 2), release: role([k.R1, k.R2], 2), timestamp: role([k.T2]) }
  const doc2 = (signers, roles = roles2) => w.trust({ seq: 2, prev: trust1, expires: trust2.expiresMs, ...roles }, signers, { file: false }).then(d => Buffer.from(d.text))
  // one stolen root key of trust 1 (A), its signature entered twice, and a new key X for every role of a forged trust 2
  const stolen = await w.trust({ seq: 2, prev: trust1, expires: now + 365 * DAY, root: role([k.X]), release: role([k.X]), timestamp: role([k.X]) }, [k.A, k.A, k.X], { file: false })
  // a document 2 signed by every root key a document 2 needs (trust 1's and its own), whose release
  // role is the identity point in its two spellings: under it any signature verifies (FORMAT.md §1.4)
  const smallOrder = JSON.parse(await doc2([]))
  smallOrder.roles.release = { threshold: 2, keys: ['01' + '00'.repeat(31), '01' + '00'.repeat(30) + '80'] }
  const smallOrderMessage = trustMessage(smallOrder) // the decoder refuses the document: signed by hand
  smallOrder.signatures = [k.A, k.B, k.D, k.E].map(x => ({ key: x.publicKey, sig: sign(smallOrderMessage, x.secretKey) }))

  // family G, S's sibling: the same root keys, its own trust 1 (another expiry: another document)
  const wg = new V2Writer(path.join(dir, 'forged-g'))
  const rolesG1 = { root: role([k.A, k.B, k.C], 2), release: role([k.R1, k.R2], 2), timestamp: role([k.T1]) }
  const g1 = await wg.trust({ seq: 1, expires: trust1.expiresMs - DAY, ...rolesG1 }, [k.A, k.B], { file: false })
  const g2 = await wg.trust({ seq: 2, prev: g1, expires: trust2.expiresMs, ...roles2 }, [k.A, k.B, k.D, k.E], { file: false })
  const gFsinfo = await wg.publish({ name: 'stable', trust: g2, root: oldRoot, rootMtime: o.mtime, seq: info.seq + 1, release: rel, relSigners: [k.R1, k.R2], tsSigners: [k.T2], now, file: false })

  // family E: the same blobs, its first trust document expired
  const outE = path.join(dir, 'out-e')
  await fs.cp(path.join(out, 'h'), path.join(outE, 'h'), { recursive: true })
  const we = new V2Writer(outE)
  const roles1 = { root: role([k.A, k.B, k.C], 2), release: role([k.R1, k.R2], 2) }
  const e1 = await we.trust({ seq: 1, expires: now - 2 * DAY, ...roles1, timestamp: role([k.T1]) }, [k.A, k.B])
  const e2 = await we.trust({ seq: 2, expires: now + 365 * DAY, ...roles1, timestamp: role([k.T2]) }, [k.A, k.B])
  await we.publish({ name: 'stable', trust: e2, root, rootMtime: r.mtime, seq: info.seq, release: rel, relSigners: [k.R1, k.R2], tsSigners: [k.T2], now })
  // E's release of S's old root, signed by the release keys both families share
  const eRelease = decodeFsinfoV2(await we.publish({ name: 'stable', trust: e2, root: oldRoot, rootMtime: o.mtime, seq: info.seq, release: rel, relSigners: [k.R1, k.R2], tsSigners: [k.T2], now, file: false })).release

  return {
    dir, src, out, outE, big, keys: k,
    fragment: `${init.anchor}:stable`,
    fragmentE: `${trustAnchorOf(e1)}:stable`,
    fsinfo: {
      current,
      old,
      // the release carries one of its two release signatures
      oneRelease: Buffer.from(await publish({ relSigners: [k.R1] })),
      // signed by T1, the timestamp key trust 2 retired
      retiredTimestamp: Buffer.from(await publish({ tsSigners: [k.T1] })),
      // tree "nightly" of the same family, validly signed, at the address of "stable"
      nightly: Buffer.from(await publish({ name: 'nightly', release: { ...rel, name: 'nightly' } })),
      // under the forged trust 2 (stolen), signed by X in every role
      stolen: Buffer.from(await w.publish({ name: 'stable', trust: stolen, root, rootMtime: r.mtime, seq: info.seq + 1, release: rel, relSigners: [k.X], tsSigners: [k.X], now, file: false })),
      // forks (the reader saw `current` first): the current release's number over the old release's root, in a
      // newer fsinfo.json; and fsinfo.json's current number binding another release. Both
      // signed by every key they need: only the keys' holders can make them, and a reader that
      // saw the other side must refuse (TRUST.md rule 13)
      releaseFork: Buffer.from(await publish({ root: oldRoot, rootMtime: oldInfo.release.root.mtime })),
      timestampFork: Buffer.from(await publish({ seq: info.seq, root: oldRoot, rootMtime: oldInfo.release.root.mtime, release: { ...rel, seq: rel.seq + 1 } })),
      // the old era: S's fsinfo.json under trust 1, as it was (a fresh reader that asks for
      // trust/2.json beside it must refuse it: FORMAT.md §12.9 step 4)
      oldEra: old,
      // S's sibling G's fsinfo.json, under G's trust 2 (an older root, signed by G's real keys)
      sibling: Buffer.from(gFsinfo),
      // S's current fsinfo.json, signed by S's timestamp key T2, carrying family E's release (signed
      // by the release keys S and E share) of S's old root
      otherFamilyRelease: Buffer.from(await publish({ root: oldRoot, rootMtime: o.mtime, release: { seq: eRelease.seq, expires: eRelease.expiresMs, anchor: eRelease.anchor } })),
      // under the document 2 with small-order release keys, its release with no real signature
      smallOrder: Buffer.from(await w.publish({ name: 'stable', trust: { seq: 2, message: smallOrderMessage }, root, rootMtime: r.mtime, seq: info.seq + 1, release: rel, relSigners: [], tsSigners: [k.T2], now, file: false })),
      // family E: fresh, validly signed, under its expired trust 1
      expiredTrust: Buffer.from(await we.publish({ name: 'stable', trust: e1, root, rootMtime: r.mtime, seq: info.seq + 1, release: rel, relSigners: [k.R1, k.R2], tsSigners: [k.T1], now, file: false }))
    },
    trust2: {
      // one of trust 1's root keys (its threshold is 2), and both of its own
      oneOld: await doc2([k.A, k.D, k.E]),
      // trust 1's root keys only, none of its own (D, E, F)
      noNew: await doc2([k.A, k.B]),
      stolen: Buffer.from(stolen.text),
      // G's document 2, in place of S's
      sibling: Buffer.from(g2.text),
      smallOrder: Buffer.from(JSON.stringify(smallOrder, null, 2) + '\n')
    },
    trust1, trust2Doc: trust2,
    cleanup: () => fs.rm(dir, { recursive: true, force: true })
  }
}
