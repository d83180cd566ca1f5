// Trust rule 2, persisted: the highest { seq, root } accepted per public key.
// Kept in `level` (classic-level in Node, IndexedDB in browsers). LevelDB
// allows one process at a time, and a gateway, a CLI read and a second gateway
// must share the state at once without failing, so each update opens the
// database, does its check-and-write under that exclusive open, and closes it;
// a process that finds it locked retries with backoff.
//
// IndexedDB takes no such lock: two tabs (or two readers in one page) could
// both read seq 3, then one write 9 and the other 5, and the 9 would be lost.
// Where the Web Locks API exists (every current browser), the check-and-write
// runs under an exclusive lock named after the database, which every tab and
// worker of the origin shares.
import { Level } from 'level'
import { StateError } from './errors.js'
import { checkRollback } from './verify.js'

const RETRY_FOR_MS = 15_000

export class SeqStore {
  /** @param {string|null} location a directory (Node) or database name (browser); null keeps state in memory only */
  constructor (location) {
    this.location = location
    this.memory = new Map()
  }

  async _withDb (fn) {
    const locks = globalThis.navigator?.locks
    if (locks) return locks.request('rotree-state:' + this.location, () => this._open(fn))
    return this._open(fn)
  }

  async _open (fn) {
    const deadline = Date.now() + RETRY_FOR_MS
    for (let delay = 5; ; delay = Math.min(delay * 2, 200)) {
      const db = new Level(this.location, { valueEncoding: 'json' })
      try {
        await db.open()
      } catch (err) {
        const locked = err.code === 'LEVEL_LOCKED' || err.cause?.code === 'LEVEL_LOCKED'
        if (locked && Date.now() < deadline) {
          await new Promise(resolve => setTimeout(resolve, delay * (0.5 + Math.random())))
          continue
        }
        throw new StateError(`cannot open reader state at ${this.location}: ${err.cause?.message || err.message}`, { cause: err })
      }
      try { return await fn(db) } finally { await db.close() }
    }
  }

  /** @returns {Promise<{ seq: number, root: string } | null>} */
  async get (key) {
    if (this.location === null) return this.memory.get(key) ?? null
    const rec = await this._withDb(db => db.get('seq:' + key))
    const mem = this.memory.get(key)
    return mem && (!rec || mem.seq > rec.seq) ? mem : rec ?? null
  }

  /**
   * Check `info` against the highest seen and record it if newer, atomically
   * across processes. Throws RollbackError / ForkError.
   */
  async accept (key, info) {
    const rec = { seq: info.seq, root: info.root.hash }
    // the in-memory copy guards a process even if another one rewinds the file
    checkRollback(info, this.memory.get(key))
    if (this.location !== null) {
      await this._withDb(async db => {
        const seen = await db.get('seq:' + key)
        if (checkRollback(info, seen)) await db.put('seq:' + key, rec)
      })
    }
    const mem = this.memory.get(key)
    if (!mem || mem.seq < rec.seq) this.memory.set(key, rec)
  }
}
