// A publisher of format-version-2 trees for the client tests: a folder
// written with test/vectors/v2-writer.js, a family of keys, and the steps a
// publisher takes (rotate the trust document, publish a release, retire).
//
//   const p = await Publisher.create({ name: 'stable' })     // anchor 't<hash of trust 1>'
//   await p.publish({ 'a.txt': 'one' })                       // release 1 under trust 1
//   await p.rotate({ root: [p.k.A, p.k.B, p.k.D], ... })       // trust 2, signed by 2 of 1's and 2 of its own
//   const mirror = await startStaticMirror(p.out)
//   openTree(p.address(mirror.url), …)
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { generateKeyPair } from 'rotree-client/crypto'
import { trustAnchorOf } from 'rotree-client/trust'
import { V2Writer, role, RETIRED } from '../vectors/v2-writer.js'

export { role, RETIRED }

const NAMES = ['K', 'A', 'B', 'C', 'D', 'E', 'F', 'R1', 'R2', 'R3', 'T1', 'T2', 'T3']

export class Publisher {
  /**
   * @param {object} [o]
   * @param {string} [o.name=''] the tree's name
   * @param {'trust'|'key'} [o.anchor='trust'] 'trust': the address certifies trust document 1
   *   (2 of A, B, C; release R1; timestamp T1); 'key': the address is key K, which
   *   publishes alone until adopt()
   * @param {() => number} [o.now] the publisher's clock
   */
  static async create ({ name = '', anchor = 'trust', now = Date.now } = {}) {
    const out = await fs.mkdtemp(path.join(os.tmpdir(), 'rotree-v2-pub-'))
    const p = new Publisher(out, name, now)
    if (anchor === 'trust') {
      const k = p.k
      p.doc = await p.w.trust({ seq: 1, root: role([k.A, k.B, k.C], 2), release: role([k.R1]), timestamp: role([k.T1]) }, [k.A, k.B])
      p.signers = { rel: [k.R1], ts: [k.T1] }
      p.anchor = trustAnchorOf(p.doc)
    } else {
      p.anchor = p.k.K.publicKey
      p.signers = { rel: [p.k.K], ts: [p.k.K] }
    }
    return p
  }

  constructor (out, name, now) {
    this.out = out
    this.name = name
    this.now = now
    this.w = new V2Writer(out)
    this.k = Object.fromEntries(NAMES.map(n => [n, generateKeyPair()]))
    this.doc = null // the trust document in force (null: the single key K)
    this.releaseSeq = 0
    this.seq = 0
  }

  /** The address of this tree at `url`: <url>#<anchor>[:<name>]. */
  address (url, name = this.name) { return `${url}#${this.anchor}${name ? ':' + name : ''}` }

  /**
   * The next trust document with roles made by role() (or RETIRED), signed by
   * `signers` (default: every root key of the current document and of the
   * new one, K for the first); it becomes the document in force, and
   * `rel`/`ts` (default: all of the new roles' keys) sign from now on.
   */
  async rotate ({ root, release, timestamp, expires }, { signers, rel, ts } = {}) {
    const seq = (this.doc?.seq ?? 0) + 1
    signers ??= [...new Set([...(this.doc ? this.keysOf(this.doc.roles.root) : [this.k.K]), ...this.keysOf(root)])]
    this.doc = await this.w.trust({ seq, root, release, timestamp, ...(expires ? { expires } : {}) }, signers)
    this.signers = { rel: rel ?? this.keysOf(release), ts: ts ?? this.keysOf(timestamp) }
    return this.doc
  }

  /** The key pairs of a role's public keys. */
  keysOf (r) { return Object.values(this.k).filter(k => r.keys.includes(k.publicKey)) }

  /**
   * Publish `files` ({ 'path/name': string|Uint8Array|{ symlink } }) as the
   * next release, under the trust document in force, signed by the current
   * release and timestamp keys unless `relSigners`/`tsSigners` say otherwise.
   * @returns {Promise<string>} the fsinfo.json text (also written, unless `file` is false)
   */
  async publish (files, { ttlMs = 3600e3, releaseTtlMs = 30 * 86400e3, relSigners, tsSigners, name = this.name, file = true, release } = {}) {
    const root = await this.w.dir(specs(files))
    const now = this.now()
    if (release === undefined) release = { seq: ++this.releaseSeq, expires: now + releaseTtlMs }
    this.seq = Math.max(this.seq + 1, Math.floor(now / 1000))
    return this.w.publish({
      name, trust: this.doc, root, seq: this.seq, issued: now - 60e3, expires: now + ttlMs, release,
      relSigners: relSigners ?? this.signers.rel, tsSigners: tsSigners ?? this.signers.ts, now, file
    })
  }

  close () { return fs.rm(this.out, { recursive: true, force: true }) }
}

/** { 'a/b.txt': data | { symlink } | { data, chunkSize } } as the nested entry specs of V2Writer.dir(). */
export function specs (files) {
  const root = []
  for (const [p, v] of Object.entries(files)) {
    const parts = p.split('/')
    let list = root
    for (const d of parts.slice(0, -1)) {
      let e = list.find(x => x.name === d)
      if (!e) { e = { name: d, dir: [] }; list.push(e) }
      list = e.dir
    }
    const name = parts.at(-1)
    list.push(v?.symlink !== undefined ? { name, symlink: v.symlink } : v?.chunkSize ? { name, file: v.data, chunkSize: v.chunkSize } : { name, file: v })
  }
  return root
}
