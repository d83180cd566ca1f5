// fsck --repair-from: damaged and missing blobs fetched from another mirror,
// verified against the refs of DIR's own verified root (blobSource does the
// checks, fetch.js), and written atomically over the bad copy. Each blob is
// fetched at most once per pass, whoever asks for it. Format version 2:
// missing or broken trust documents are fetched the same way, the chain
// walked from the anchor as a reader walks it (walkChain).
import fs from 'node:fs/promises'
import path from 'node:path'
import { limiter } from 'rotree-client/fetch'
import { walkChain, firstTrustSource, mirrorTrustSource } from 'rotree-client/trust'
import { BlobStore, blobPath, syncDir } from '../lib/published/index.js'
import { writeDurable } from '../lib/published/history.js'
import { TRUST_DIR, folderTrustSource } from '../lib/published/signed-roots.js'

export class Repairer {
  /**
   * @param {string} dir
   * @param {ReturnType<import('./source.js').blobSource>} src
   * @param {{ fsync?: boolean }} o
   */
  constructor (dir, src, { fsync = true } = {}) {
    this.dir = dir
    this.src = src
    this.fsync = fsync
    this.store = null
    this.pending = new Map() // hash + kind → promise of the decoded value
    this.result = { repaired: [], unrepaired: [], removed: [] }
  }

  /**
   * Fetch and store one blob. kind null: a blob no current ref names, so no
   * size is known; it must still hash to its name.
   * @returns {Promise<any>} the verified value (decoded, for a page)
   */
  fix (ref, kind, { record = true } = {}) {
    const k = ref.hash + kind
    let p = this.pending.get(k)
    if (!p) {
      p = this._fix(ref, kind, record)
      this.pending.set(k, p)
    }
    return p
  }

  async _fix (ref, kind, record) {
    this.store ??= await new BlobStore(this.dir, { fsync: this.fsync }).open()
    try {
      const { value, raw } = kind ? await this.src.fetch(ref, kind) : await this.src.fetchByHash(ref.hash)
      await this.store.replace(ref.hash, raw) // the damaged copy is renamed over, atomically
      this.result.repaired.push({ hash: ref.hash, kind, size: raw.length })
      return value
    } catch (err) {
      if (record) this.result.unrepaired.push({ hash: ref.hash, kind, code: err.code, message: err.message })
      throw err
    }
  }

  /** The source's copy of each corrupt blob no root needs; if it has none, the bad file goes. */
  async unreferenced (entries) {
    const limit = limiter(8)
    await Promise.all(entries.map(e => limit(async () => {
      try {
        await this.fix({ hash: e.hash }, null, { record: false })
      } catch {
        // not fetchable, but nothing needs it: removing it is the repair
        await fs.rm(blobPath(this.dir, e.hash), { force: true })
        this.result.removed.push({ hash: e.hash })
      }
    })))
  }

  /**
   * trust/1.json … <upTo>.json as a chain from ctx.anchor, walked as a reader
   * walks it (walkChain, docs/TRUST.md rule 10): each document DIR holds that
   * follows is kept (one after a repaired hole too), the rest fetched from
   * the source, accepted, and renamed into place. Stops at the first one it
   * cannot get.
   * @param {{ anchor: object }} ctx (signed-roots.js rootContext)
   */
  async trust (ctx, upTo) {
    const tdir = path.join(this.dir, TRUST_DIR)
    await fs.mkdir(tdir, { recursive: true })
    let reached = 0
    try {
      await walkChain(firstTrustSource(folderTrustSource(this.dir), mirrorTrustSource(this.src.mirrors)), {
        anchor: ctx.anchor,
        to: upTo,
        onStep: async doc => {
          reached = doc.seq
          if (doc.source === 0) return
          const tmp = path.join(tdir, `.tmp-${doc.seq}-${process.pid}`)
          await writeDurable(tmp, doc.bytes, this.fsync)
          await fs.rename(tmp, path.join(tdir, `${doc.seq}.json`))
          this.result.repaired.push({ hash: null, kind: 'trust', seq: doc.seq, size: doc.bytes.length })
        }
      })
    } catch (err) {
      this.result.unrepaired.push({ hash: null, kind: 'trust', seq: reached + 1, code: err.code, message: err.message })
      return
    }
    if (this.fsync) await syncDir(tdir)
  }

  async sync () { await this.store?.sync() }

  report () { return { ...this.result, requests: 0, bytes: 0, ...this.src.stats() } }
}
