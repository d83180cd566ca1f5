// What the soak's tree holds and what every answer of the gateway must be
// (test/soak/soak.js drives the load; this file judges it).
//
// Why bodies are compared as strings: autocannon hands onResponse the body as
// a string built by `body += chunk` (each Buffer chunk decoded as UTF-8 on
// its own), so arbitrary binary content would be compared lossily. Every file
// of the soak tree is therefore 7-bit ASCII (content-defined chunking and
// hashing see bytes either way). For an expected body that is pure ASCII the
// comparison is exact: decoding is the identity on ASCII bytes, and any
// byte >= 0x80 in a response, whatever chunk it falls in, decodes to U+FFFD
// or to a code point >= 0x80, neither of which the expected string holds.
// So every byte of every response autocannon reads is checked, at full load,
// without a second, slower client.
import http from 'node:http'
import { prng } from '../helpers/fixtures.js'

const MiB = 1024 * 1024

// 64 symbols: letters, digits, space and newline, so the files read as text
const ALPHABET = Buffer.from('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789 \n')

/** n deterministic 7-bit ASCII bytes (see the header: exact string comparison). */
export function asciiBytes (n, seed) {
  const b = prng(n, seed)
  for (let i = 0; i < n; i++) b[i] = ALPHABET[b[i] & 63]
  return b
}

/** The soak tree: small inlined files, mid-sized one-chunk files, one multi-chunk file. */
export function soakFiles ({ bigBytes = 5 * MiB } = {}) {
  const files = { 'small/empty.txt': Buffer.alloc(0) }
  for (let i = 0; i < 24; i++) files[`small/s${String(i).padStart(2, '0')}.txt`] = asciiBytes(1 + i * 170, `small-${i}`) // 1 .. 3911 B: inlined
  const mids = [16, 40, 64, 100, 150, 200, 256, 300]
  mids.forEach((k, i) => { files[`mid/m${i}.txt`] = asciiBytes(k * 1024 + i, `mid-${i}`) })
  files['big.txt'] = asciiBytes(bigBytes, 'big')
  return files
}

/** Version n of the file that changes on every publish: its stamp, then 20 KiB that depend on n (a new blob each time). */
export function versionBytes (n) {
  return Buffer.concat([Buffer.from(`version ${n}\n`), asciiBytes(20 * 1024, `version-${n}`)])
}

/**
 * What every answer must be. For each request of the load: its expected status
 * and a check of its body. Stable files must be their exact bytes; the
 * versioned file and the root listing must be those of the sequence number
 * in X-Rotree-Seq (one root per request), which must be a published one.
 */
export class Expectations {
  constructor (files) {
    this.files = new Map(Object.entries(files).map(([k, v]) => [k, Buffer.from(v).toString('latin1')]))
    this.versions = new Map() // seq → the versioned file's content at that seq
    this.counts = { responses: 0, bytes: 0, wrong: 0, wrongRoot: 0, unknownSeq: 0, unexpected: 0, s5xx: 0, byClass: { '2xx': 0, '3xx': 0, '4xx': 0, '5xx': 0 }, byCode: {} }
    this.samples = [] // the first few failures, described
    this.versionsServed = new Set()
    this.seqsServed = new Set()
    const sizes = {}
    for (const [k, v] of Object.entries(files)) sizes[k] = v.length
    this.sizes = sizes
    this.big = this.files.get('big.txt')
  }

  publish (seq, bytes) { this.versions.set(seq, bytes.toString('latin1')) }

  requests () {
    const file = p => ({ path: '/' + p, check: (body, seq) => body === this.files.get(p) })
    const big = this.big.length
    const ranges = [[1_000_000, 1_999_999], [big - 70_000, big - 1], [12_345, 12_345 + 300_000]]
    const list = [
      ...['small/s00.txt', 'small/s05.txt', 'small/s11.txt', 'small/s17.txt', 'small/s23.txt', 'small/empty.txt'].map(file),
      file('mid/m0.txt'), file('mid/m3.txt'), file('mid/m7.txt'),
      file('big.txt'),
      ...ranges.map(([a, b]) => ({ path: '/big.txt', headers: { range: `bytes=${a}-${b}` }, status: 206, check: body => body === this.big.slice(a, b + 1) })),
      { path: '/versioned.txt', check: (body, seq) => this._versioned(body, seq) },
      file('small/s08.txt'),
      { path: '/versioned.txt', check: (body, seq) => this._versioned(body, seq) },
      { path: '/', headers: { accept: 'application/json' }, check: (body, seq) => this._rootListing(body, seq) },
      { path: '/mid/', check: body => this._midListing(body) },
      { path: '/small/missing.txt', status: 404, check: () => true }
    ]
    return list.map(r => ({
      method: 'GET',
      path: r.path,
      headers: r.headers ?? {},
      onResponse: (status, body, ctx, headers) => this._check(r, status, body, headers)
    }))
  }

  _check (r, status, body, headers) {
    const c = this.counts
    c.responses++
    c.bytes += body.length
    const cls = `${Math.floor(status / 100)}xx`
    c.byClass[cls] = (c.byClass[cls] ?? 0) + 1
    c.byCode[status] = (c.byCode[status] ?? 0) + 1
    if (status >= 500) { c.s5xx++; this._sample('5xx', r, status, body, headers); return }
    const want = r.status ?? 200
    if (status !== want) { c.unexpected++; this._sample('status', r, status, body, headers); return }
    const seqH = header(headers, 'x-rotree-seq')
    const seq = seqH === undefined ? undefined : Number(seqH)
    // every answer from a tree names the root it was served from (GATEWAY.md), and it must be a published one
    if (!this.versions.has(seq)) { c.unknownSeq++; c.wrong++; this._sample('unknown or missing X-Rotree-Seq', r, status, body, headers); return }
    this.seqsServed.add(seq)
    if (!r.check(body, seq)) { c.wrong++; this._sample('wrong bytes', r, status, body, headers) }
  }

  /**
   * Every request of the load once, one after the other, by node:http.
   * @returns {Promise<{ requests: number, errors: number, errorKinds: object }>} answers are counted as the load's
   */
  async sweep (base, { timeoutMs }) {
    const out = { requests: 0, errors: 0, errorKinds: {} }
    for (const r of this.requests()) {
      out.requests++
      try {
        const { status, headers, body } = await fetchOnce(base, r.path, r.headers, timeoutMs)
        r.onResponse(status, body.toString('latin1'), {}, headers)
      } catch (err) {
        out.errors++
        out.errorKinds[err.code ?? err.message] = (out.errorKinds[err.code ?? err.message] ?? 0) + 1
      }
    }
    return out
  }

  _versioned (body, seq) {
    const atSeq = this.versions.get(seq)
    if (body === atSeq) { this.versionsServed.add(seq); return true }
    // not the file of the root it claims; is it any version at all? (either way: wrong)
    for (const v of this.versions.values()) if (v === body) { this.counts.wrongRoot++; break }
    return false
  }

  _rootListing (body, seq) {
    let j
    try { j = JSON.parse(body) } catch { return false }
    const v = this.versions.get(seq)
    if (v === undefined || !Array.isArray(j?.entries)) return false
    const want = [
      { name: 'big.txt', type: 'file', size: this.sizes['big.txt'] },
      { name: 'mid', type: 'dir', entries: 8 },
      { name: 'small', type: 'dir', entries: 25 },
      { name: 'versioned.txt', type: 'file', size: v.length }
    ]
    const got = j.entries.map(e => e.type === 'dir' ? { name: e.name, type: e.type, entries: e.entries } : { name: e.name, type: e.type, size: e.size })
    return j.path === '/' && JSON.stringify(got) === JSON.stringify(want)
  }

  _midListing (body) {
    if (!body.startsWith('<!DOCTYPE html>') || !body.endsWith('</body></html>\n')) return false
    for (let i = 0; i < 8; i++) if (!body.includes(`<a href="./m${i}.txt">m${i}.txt</a>`)) return false
    return (body.match(/<tr>/g) ?? []).length === 10 // header row, ../ and eight files
  }

  _sample (kind, r, status, body, headers) {
    if (this.samples.length >= 10) return
    const exp = r.path === '/big.txt' && r.headers?.range ? null : this.files.get(r.path.slice(1))
    let firstDiff = null
    if (typeof exp === 'string') { firstDiff = 0; while (firstDiff < body.length && body[firstDiff] === exp[firstDiff]) firstDiff++ }
    this.samples.push({
      kind, path: r.path, range: r.headers?.range, status, seq: header(headers, 'x-rotree-seq'),
      length: body.length, expectedLength: exp?.length, firstDiff, head: body.slice(0, 200)
    })
  }

  summary () {
    const c = this.counts
    return {
      requests: c.responses,
      bytesVerified: c.bytes,
      wrongBytes: c.wrong,
      wrongRoot: c.wrongRoot,
      unknownSeq: c.unknownSeq,
      unexpectedStatus: c.unexpected,
      status: c.byClass,
      statusCodes: c.byCode,
      versionsPublished: this.versions.size,
      versionsServed: this.versionsServed.size,
      seqsServed: this.seqsServed.size,
      failureSamples: this.samples
    }
  }
}

function header (headers, name) {
  for (const k of Object.keys(headers ?? {})) if (k.toLowerCase() === name) return headers[k]
  return undefined
}


/** One GET with a deadline; rejects when the transfer breaks or the time is up. */
function fetchOnce (base, p, headers, timeoutMs) {
  return new Promise((resolve, reject) => {
    const req = http.get(new URL(p, base), { agent: false, headers }, res => {
      const parts = []
      res.on('data', d => parts.push(d))
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(parts) }))
      res.on('error', reject)
      res.on('aborted', () => reject(new Error('transfer broken off')))
    })
    req.on('error', reject)
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)))
  })
}
