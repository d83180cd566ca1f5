// A format-version-2 tree (docs/FORMAT.md §12) written blob by blob with the
// format module's encoders and signed with client-js/src/crypto/ed25519.js, apart
// from the builder: the test vectors and the client tests publish with it,
// so they do not depend on the builder's code. It follows the builder's rules where the format
// has them (FastCDC chunks, inline up to INLINE_MAX_V2, an index past
// MAX_DIRECT_CHUNKS chunks, packBlob's compression rule), so what it writes
// is what a version-2 builder would write.
//
//   const w = new V2Writer(out)                       // out/h/<sha256>, out/trust/<n>.json, out/fsinfo.json
//   const root = await w.dir([{ name: 'a.txt', file: 'hello' }, { name: 'sub', dir: [...] }])
//   const d1 = await w.trust({ seq: 1, root: role([A]), release: role([R]), timestamp: role([T]) }, [A, K])
//   await w.publish({ name: 'stable', trust: d1, root, release: { seq: 1 }, relSigners: [R], tsSigners: [T] })
//
// Entry specs: { name, file: string|Uint8Array, exec?, mtime?, chunkSize? }
//              { name, symlink: target, mtime? }
//              { name, dir: [specs] | ref from w.dir(), mtime? }
//              { name, entry: raw entry fields for writeEntry() }
import fs from 'node:fs/promises'
import path from 'node:path'
import { createHash } from 'node:crypto'
import { buildDirectory, buildFileBody, chunkLengths, INLINE_MAX_V2, encodeTrustDoc, decodeTrustDoc, encodeFsinfoV2, decodeFsinfoV2, releaseMessage } from 'rotree-client/format'
import { trustHash, trustAnchorOf, anchorText } from 'rotree-client/trust'
import { packBlob } from 'rotree-client/codec'
import { sign, publicKeyOf } from 'rotree-client/crypto'

export const V2 = { version: 2 }
const T0 = Date.UTC(2025, 0, 1)
const sha256hex = b => createHash('sha256').update(b).digest('hex')
export const iso = ms => new Date(ms).toISOString()

/** A key pair from a secret (hex), as generateKeyPair() returns one. */
export const keyPair = secretKey => ({ secretKey, publicKey: publicKeyOf(secretKey) })

/** A role of key pairs: their public keys sorted (FORMAT.md §12.2) and a threshold. */
export function role (ks, threshold = 1) { return { threshold, keys: ks.map(k => k.publicKey).sort() } }

/** The role of a retired family: no release keys (docs/TRUST.md rule 14). */
export const RETIRED = Object.freeze({ threshold: 0, keys: [] })

export class V2Writer {
  /**
   * @param {string} out a published folder
   * @param {{ anchor?: string }} [o] the family's anchor (FORMAT.md §12.5); by default the
   *   first one the writer learns: the single key of a first publish without a trust
   *   document, else 't' + the hash of trust document 1
   */
  constructor (out, { anchor } = {}) {
    this.out = out
    this.anchor = anchor ?? null
    this.docs = new Map() // seq → the last document written with it: the next one's default prev
    this.made = Promise.all([fs.mkdir(path.join(out, 'h'), { recursive: true }), fs.mkdir(path.join(out, 'trust'), { recursive: true })])
  }

  /** Store `stored` as a blob (its name: the SHA-256 of these bytes); its handle. */
  async putStored (stored) {
    await this.made
    const hash = sha256hex(stored)
    await fs.writeFile(path.join(this.out, 'h', hash), stored)
    return hash
  }

  /** Store a blob as a version-2 builder would (packBlob: compressed when it pays); its ref. */
  async put (bytes) {
    const { stored, codec } = packBlob(bytes)
    return { hash: await this.putStored(stored), size: bytes.length, storedSize: stored.length, codec }
  }

  /**
   * A file's entry fields: inline, a chunk list or a chunk index, and its
   * SHA-256 (FORMAT.md §12.7). `chunkSize` cuts fixed-size chunks instead of
   * FastCDC's (readers do not check the builder's cut points, §1.6): many
   * small chunks make a chunk index without megabytes of test data.
   */
  async fileBody (data, { chunkSize } = {}) {
    data = typeof data === 'string' ? Buffer.from(data) : data
    if (data.length <= INLINE_MAX_V2) return { size: data.length, inline: new Uint8Array(data) }
    const chunks = []
    let o = 0
    const lengths = chunkSize ? Array.from({ length: Math.ceil(data.length / chunkSize) }, (_, i) => Math.min(chunkSize, data.length - i * chunkSize)) : chunkLengths(data, V2)
    for (const n of lengths) { chunks.push(await this.put(data.subarray(o, o + n))); o += n }
    return { size: data.length, sha256: sha256hex(data), ...(await buildFileBody(chunks, b => this.put(b), V2)) }
  }

  async entry (s) {
    const mtime = s.mtime ?? T0
    if (s.entry) return { name: s.name, mtime, exec: false, ...s.entry }
    if (s.symlink !== undefined) return { name: s.name, type: 'symlink', mtime, size: Buffer.byteLength(s.symlink), exec: false, target: s.symlink }
    if (s.dir) {
      const ref = Array.isArray(s.dir) ? await this.dir(s.dir) : s.dir
      // a private tree's (FORMAT.md §12.8) directory ref carries its page's key
      const key = ref.key === undefined ? {} : { key: ref.key }
      return { name: s.name, type: 'dir', mtime, exec: false, size: ref.entries, dir: { hash: ref.hash, size: ref.size, storedSize: ref.storedSize, codec: ref.codec, ...key } }
    }
    return { name: s.name, type: 'file', mtime, exec: !!s.exec, ...(await this.fileBody(s.file, s)) }
  }

  /** A directory from entry specs: its top page's ref and entry count. */
  async dir (specs) {
    return buildDirectory(await Promise.all(specs.map(s => this.entry(s))), b => this.put(b), V2)
  }

  /**
   * Write trust/<seq>.json signed by `signers` (key pairs; `bad` adds a
   * garbage signature per key given). Returns the decoded document.
   */
  async trust ({ seq, prev, root, release, timestamp, expires = T0 + 3 * 365 * 86400e3 }, signers, { bad = [], file = true } = {}) {
    prev ??= seq === 1 ? null : this.docs.get(seq - 1)
    const fields = { seq, prev: prev == null ? null : typeof prev === 'string' ? prev : trustHash(prev), expires: iso(expires), roles: { root, release, timestamp } }
    const { message } = decodeTrustDoc(encodeTrustDoc(fields))
    const signatures = signers.map(k => ({ key: k.publicKey, sig: sign(message, k.secretKey) }))
    for (const k of bad) signatures.push({ key: k.publicKey, sig: 'ab'.repeat(64) })
    const text = encodeTrustDoc({ ...fields, signatures })
    if (file) { await this.made; await fs.writeFile(path.join(this.out, 'trust', seq + '.json'), text) }
    const doc = decodeTrustDoc(text)
    doc.text = text
    this.docs.set(seq, doc)
    if (seq === 1) this.anchor ??= trustAnchorOf(doc)
    return doc
  }

  /**
   * fsinfo.json text for a root (a dir() ref, with `mtime`), a release and
   * the trust document in force (null: a single-key tree), signed by the
   * release and timestamp keys given. Written to fsinfo.json unless `file` is false.
   */
  async publish ({ anchor, name = '', trust = null, root, rootMtime = T0, seq = 1, issued, expires, release = {}, relSigners, tsSigners, now = Date.now(), file = true }) {
    issued ??= now - 60e3
    expires ??= now + 3600e3
    if (!trust) this.anchor ??= tsSigners[0]?.publicKey ?? relSigners[0]?.publicKey
    anchor = anchor === undefined ? this.anchor : typeof anchor === 'string' ? anchor : anchorText(anchor)
    const rel = {
      anchor: release.anchor ?? anchor,
      name: release.name ?? name,
      seq: release.seq ?? 1,
      expires: iso(release.expires ?? now + 30 * 86400e3),
      root: { hash: root.hash, size: root.storedSize ?? root.size, codec: root.codec ?? 'none', decodedSize: root.size, mtime: rootMtime }
    }
    rel.signatures = relSigners.map(k => ({ key: k.publicKey, sig: sign(releaseMessage(rel), k.secretKey) }))
    const fields = { anchor, name, trust: trust && { seq: trust.seq, hash: trustHash(trust) }, seq, issued: iso(issued), expires: iso(expires), release: rel }
    const { message } = decodeFsinfoV2(encodeFsinfoV2(fields))
    const signatures = tsSigners.map(k => ({ key: k.publicKey, sig: sign(message, k.secretKey) }))
    const text = encodeFsinfoV2({ ...fields, signatures })
    if (file) { await this.made; await fs.writeFile(path.join(this.out, 'fsinfo.json'), text) }
    return text
  }
}
