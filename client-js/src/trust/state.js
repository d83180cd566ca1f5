// docs/TRUST.md rules 2 and 13, persisted: the highest { seq, root } accepted
// per public key (format version 1), or per address id, anchor and name
// (version 2: the newest trusted trust document and each role's sequence).
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
//
// The state fails closed. A record is checked whenever it is read (checkRecord,
// used by Node and browsers alike): one without a valid seq and root is
// ROTREE_STATE, never "nothing seen". And a LevelDB directory that exists but
// has lost its tables (its CURRENT file deleted) is refused, not recreated
// empty (state-probe-node.js).
import { StateError } from '../errors.js'
import { checkRollback } from './verify.js'
import { MAX_TRUST_DOC } from '../format/trust-doc.js'
import { MAX_ROLE_KEYS } from '../format/signed-doc.js'
import { probeState } from '#state-probe'

const RETRY_FOR_MS = 15_000
const turns = new Map() // location → the end of the last open queued in this process (_withDb)

// `level` (in Node a native addon and ~35 CommonJS modules, slow to load:
// docs/BENCHMARKS.md P3t, notes) is imported when a store with a location is
// made, not with this module: a reader without persisted state never loads
// it, and one with state loads it while its first requests are in flight.
let levelClass = null
const loadLevel = () => (levelClass ??= import('level').then(m => m.Level))
const HEX64 = /^[0-9a-f]{64}$/

/**
 * A persisted record as read back: null when nothing was stored, else
 * { seq, root } with seq a safe non-negative integer and root 64 lowercase hex
 * (or a format-version-2 record, { v: 2, trust, trustDoc, release, timestamp[, log] },
 * each part with its sequence numbers and hashes; log the witnessed log's
 * checkpoint last accepted (FORMAT.md §13.1); trustDoc is the JSON text
 * of the newest trusted trust document, release and timestamp are null
 * while only a trust document has been accepted).
 * Anything else is a StateError: treating a damaged record as "nothing seen"
 * would let any older root in.
 * @param {unknown} rec @param {string} where for the message
 * @returns {{ seq: number, root: string } | null}
 */
export function checkRecord (rec, where) {
  if (rec === undefined || rec === null) return null
  if (typeof rec === 'object' && rec.v === 2 && validV2(rec)) return rec
  if (typeof rec !== 'object' || rec.v !== undefined || !isSeq(rec.seq) || !isHex(rec.root)) {
    throw new StateError(`reader state at ${where} holds an invalid record ${JSON.stringify(rec)?.slice(0, 200)}`)
  }
  return { seq: rec.seq, root: rec.root }
}

const isSeq = n => Number.isSafeInteger(n) && n >= 0
const isHex = s => typeof s === 'string' && HEX64.test(s)
const isObj = o => typeof o === 'object' && o !== null

// a format-version-2 record (trust/roles.js advanceState: docs/TRUST.md rule 13).
// A trust document is kept with its seq and hash (the root store checks the
// text against the hash when it reads it back); the role parts are null until
// an fsinfo.json is accepted, which a trust document may precede (a
// retirement is kept even though no fsinfo.json under it is ever accepted).
// `log` (FORMAT.md §13.1): the last log checkpoint accepted of a tree whose
// trust document names witnesses, { size, hash }; absent until there is one.
function validV2 ({ trust, trustDoc, release, timestamp, log }) {
  return (log === undefined || (isObj(log) && isSeq(log.size) && log.size >= 1 && isHex(log.hash))) &&
    (trust === null || (isObj(trust) && isSeq(trust.seq) && isHex(trust.hash))) &&
    (trustDoc === undefined ? trust === null : trust !== null && typeof trustDoc === 'string' && trustDoc.length <= MAX_TRUST_DOC) &&
    (release === null || (isObj(release) && isSigners(release.signers) && isSeq(release.seq) && isHex(release.root))) &&
    (timestamp === null || (isObj(timestamp) && isSigners(timestamp.signers) && isSeq(timestamp.seq) && isHex(timestamp.release)))
}

// the keys that signed a role's stored sequence (advanceState): one or more, as a role holds
const isSigners = a => Array.isArray(a) && a.length >= 1 && a.length <= MAX_ROLE_KEYS && a.every(isHex)

export class SeqStore {
  /** @param {string|null} location a directory (Node) or database name (browser); null keeps state in memory only */
  constructor (location) {
    this.location = location
    this.memory = new Map()
    if (location !== null) loadLevel().catch(() => {}) // a failure is reported by the first open
  }

  async _withDb (fn) {
    const locks = globalThis.navigator?.locks
    if (locks) return locks.request('rotree-state:' + this.location, () => this._open(fn))
    // one open at a time per location in this process: a second would find
    // LevelDB's lock taken by the first and back off (_open), where it can
    // simply follow it
    const prev = turns.get(this.location) ?? Promise.resolve()
    const run = () => this._open(fn)
    const p = prev.then(run, run)
    const tail = p.catch(() => {})
    turns.set(this.location, tail)
    tail.then(() => { if (turns.get(this.location) === tail) turns.delete(this.location) })
    return p
  }

  async _open (fn) {
    let Level
    try { Level = await loadLevel() } catch (err) {
      levelClass = null // asked again next time
      throw new StateError(`cannot load the reader state's database (level): ${err.message}`, { cause: err })
    }
    const deadline = Date.now() + RETRY_FOR_MS
    for (let delay = 5; ; delay = Math.min(delay * 2, 200)) {
      let probe
      try { probe = await probeState(this.location) } catch (err) {
        throw new StateError(`cannot read reader state at ${this.location}: ${err.message}`, { cause: err })
      }
      // Created only where no database was: LevelDB then refuses a directory
      // without CURRENT. Database files without CURRENT are also what another
      // process shows while it creates the database (MANIFEST first, then
      // CURRENT), under LevelDB's LOCK: so a 'lost' directory is judged only
      // once this process holds the lock itself (the open below).
      const db = new Level(this.location, { valueEncoding: 'json', createIfMissing: probe === 'absent' || probe === 'fresh' || probe === 'unknown' })
      try {
        await db.open()
      } catch (err) {
        const locked = err.code === 'LEVEL_LOCKED' || err.cause?.code === 'LEVEL_LOCKED'
        if (locked && Date.now() < deadline) {
          await new Promise(resolve => setTimeout(resolve, delay * (0.5 + Math.random())))
          continue
        }
        if (probe === 'lost' && !locked) {
          throw new StateError(`reader state at ${this.location} lost its tables (no CURRENT file): refusing to start over and forget every sequence number seen; move it aside to reset`, { cause: err })
        }
        throw new StateError(`cannot open reader state at ${this.location}: ${err.cause?.message || err.message}`, { cause: err })
      }
      try { return await fn(db) } finally { await db.close() }
    }
  }

  /** The stored record for `key`, checked (checkRecord). */
  async _read (db, key) {
    let rec
    try { rec = await db.get('seq:' + key) } catch (err) {
      throw new StateError(`cannot read reader state at ${this.location}: ${err.cause?.message || err.message}`, { cause: err })
    }
    return checkRecord(rec, this.location)
  }

  /** @returns {Promise<{ seq: number, root: string } | object | null>} */
  async get (key) {
    if (this.location === null) return this.memory.get(key) ?? null
    const rec = await this._withDb(db => this._read(db, key))
    const mem = this.memory.get(key)
    return mem && (!rec || mem.seq > rec.seq) ? mem : rec ?? null
  }

  /**
   * Check-and-write for format version 2, atomically across processes:
   * `next(seen)` returns the record to store after `seen` (null: nothing to
   * write) or throws (trust/roles.js advanceState: RollbackError, ForkError).
   * It is asked about this process's own copy first, so a state file that
   * another process rewound cannot take this one back either.
   * @param {string} key @param {(seen: object|null) => object|null} next
   * @returns {Promise<object|null>} what was written
   */
  async update (key, next) {
    let rec = next(this.memory.get(key) ?? null)
    if (rec) checkRecord(rec, this.location ?? 'memory') // never write what a read would refuse
    if (this.location !== null) {
      await this._withDb(async db => {
        rec = next(await this._read(db, key))
        if (rec) await db.put('seq:' + key, checkRecord(rec, this.location))
      })
    }
    if (rec) this.memory.set(key, rec)
    return rec
  }

  /**
   * Check `info` against the highest seen and record it if newer, atomically
   * across processes. Throws RollbackError / ForkError.
   */
  async accept (key, info) {
    const rec = checkRecord({ seq: info.seq, root: info.root.hash }, this.location ?? 'memory') // never write what a read would refuse
    // the in-memory copy guards a process even if another one rewinds the file
    checkRollback(info, this.memory.get(key))
    if (this.location !== null) {
      await this._withDb(async db => {
        const seen = await this._read(db, key)
        if (checkRollback(info, seen)) await db.put('seq:' + key, rec)
      })
    }
    const mem = this.memory.get(key)
    if (!mem || mem.seq < rec.seq) this.memory.set(key, rec)
  }
}
