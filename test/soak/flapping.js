// The mirror that flaps, for the soak: which lies it tells, and when
// (test/helpers/lying-server.js tells them; its set() switches phases).

/**
 * The mirror that flaps: a cycle of phases, one every flapEveryMs. In a lying
 * or down phase each answer is a lie picked at random from the phase's kinds
 * (the report counts which were told).
 *
 * The gateway's client benches a mirror after any fault (30 s by default,
 * client-js/src/fetch/mirrors.js; the soak runs the gateway with --mirror-penalty 1)
 * and asks it for blobs only when the honest mirror is benched too, whereas
 * fsinfo.json is asked of every mirror on every refresh. So fsinfo.json lies
 * are met on every refresh, but a blob lie only once the bench has run out.
 * With the short penalty that is about every second; the cycle still keeps the
 * shape that lets blob lies through under the default 30 s:
 * a head (honest, blob lies, fsinfo.json lies, down), then a stretch of at
 * least 32 s with no fsinfo.json lie (honest, blobs down, blob lies), at whose
 * end the bench has run out and the next blob lie is met.
 */
const BLOB_LIES = {
  flip: (hash, bytes) => {
    if (bytes.length === 0) return 'extend'
    const c = Uint8Array.from(bytes); c[c.length >> 1] ^= 0x01
    return { body: c }
  },
  'high-bit': (hash, bytes) => { // a byte autocannon would decode to U+FFFD, had it reached a client
    if (bytes.length === 0) return 'extend'
    const c = Uint8Array.from(bytes); c[0] |= 0x80
    return { body: c }
  },
  truncate: () => 'truncate',
  'truncate-cl': () => 'truncate-cl',
  extend: () => 'extend',
  'extend-cl': () => 'extend-cl',
  'reset-mid': () => 'reset-mid'
}
const BLOB_DOWN = { reset: () => 'reset', stall: () => 'stall', 'stall-silent': () => 'stall-silent', 500: () => ({ status: 500 }), 404: () => ({ status: 404 }) }

function fsinfoLies (stale) {
  return {
    stale: () => ({ body: stale() }),
    flip: (bytes) => { const c = Uint8Array.from(bytes); c[c.length >> 1] ^= 0x01; return { body: c } },
    'truncate-cl': () => 'truncate-cl',
    reset: () => 'reset',
    stall: () => 'stall',
    503: () => ({ status: 503 })
  }
}

export function flapPhases (staleFsinfo, flapEveryMs) {
  const fl = fsinfoLies(staleFsinfo)
  const head = [
    { name: 'honest' },
    { name: 'blob-lies', blob: BLOB_LIES },
    { name: 'fsinfo-lies', fsinfo: { stale: fl.stale, flip: fl.flip, 'truncate-cl': fl['truncate-cl'] } },
    { name: 'down', blob: BLOB_DOWN, fsinfo: { reset: fl.reset, stall: fl.stall, 503: fl[503] } }
  ]
  const quiet = []
  while (quiet.length * flapEveryMs < 32_000) quiet.push({ name: 'honest' }, { name: 'blob-down', blob: BLOB_DOWN }, { name: 'blob-lies', blob: BLOB_LIES })
  return [...head, ...quiet]
}

/** A behaviour that answers each request with a lie picked from `kinds`, counting it in `told`. */
export function lying (kinds, what, told) {
  if (kinds === undefined) return undefined
  const names = Object.keys(kinds)
  return (...args) => {
    const k = names[Math.floor(Math.random() * names.length)]
    told[`${what}:${k}`] = (told[`${what}:${k}`] ?? 0) + 1
    return kinds[k](...args)
  }
}
