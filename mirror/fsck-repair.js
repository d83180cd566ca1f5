// fsck --repair-from: damaged and missing blobs fetched from another mirror,
// verified against the refs of DIR's own verified root (blobSource does the
// checks, fetch.js), and written atomically over the bad copy. Each blob is
// fetched at most once per pass, whoever asks for it.
import fs from 'node:fs/promises'
import { limiter } from 'rotree-client/src/cache.js'
import { BlobStore, blobPath } from '../lib/published/index.js'

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

  async sync () { await this.store?.sync() }

  report () { return { ...this.result, requests: 0, bytes: 0, ...this.src.stats() } }
}
