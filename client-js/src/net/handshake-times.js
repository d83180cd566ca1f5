// How far away each mirror is, before it has answered anything: the time its
// first connection took to open, in round trips (a TCP handshake is one; TCP
// and TLS 1.3 are two). A reader opening a tree asks every mirror for
// fsinfo.json at once and must decide how long to wait for the slower ones
// (mirrors.js fetchAll): a mirror that is far away is waited for as long as
// its distance explains, one that is near but silent is not waited for
// longer. Node's transports measure it (transport-h1.js, transport-h2.js);
// browsers cannot see handshakes, so there the answer is always "unknown".
export class HandshakeTimes {
  constructor () {
    /** @type {Map<string, { rtt: number|null, waiters: Function[] }>} */
    this.origins = new Map()
  }

  _rec (origin) {
    let r = this.origins.get(origin)
    if (!r) this.origins.set(origin, r = { rtt: null, waiters: [] })
    return r
  }

  /** A connection to `origin` opened in `ms`, which took `roundTrips` round trips; the first one counts. */
  measured (origin, ms, roundTrips) {
    const r = this._rec(origin)
    if (r.rtt === null) r.rtt = ms / roundTrips
    this._flush(r, r.rtt)
  }

  /** A connection to `origin` failed before it opened: nobody waits on it any more. */
  failed (origin) { const r = this.origins.get(origin); if (r && r.rtt === null) this._flush(r, null) }

  /**
   * The measured round trip to `origin` in ms, once its first connection
   * opens; null when it fails first or the transport closes.
   * @param {string} origin @returns {Promise<number|null>}
   */
  rtt (origin) {
    const r = this._rec(origin)
    if (r.rtt !== null) return Promise.resolve(r.rtt)
    return new Promise(resolve => r.waiters.push(resolve))
  }

  close () { for (const r of this.origins.values()) this._flush(r, null) }

  _flush (r, v) { for (const w of r.waiters.splice(0)) w(v) }
}
