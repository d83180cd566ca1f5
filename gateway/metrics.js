// Prometheus metrics in the text exposition format (version 0.0.4), served
// beside the status document at /.well-known/rotree/metrics. Counters are
// kept as requests finish and mirror faults are seen; the per-tree gauges
// (root age, seconds to expiry) and the cache figures are read at scrape
// time from what the gateway already keeps, so a scrape costs nothing
// between scrapes.
//
// Every name has one HELP and one TYPE line; label values are escaped as the
// format says (\\, \" and \n), so a mirror URL or a tree name cannot break a
// line or forge a sample.

/** A label value as the exposition format writes it. */
export function escapeLabel (v) {
  return String(v).replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')
}

/** HELP text: backslash and newline escaped. */
function escapeHelp (s) { return s.replace(/\\/g, '\\\\').replace(/\n/g, '\\n') }

const labelText = labels => {
  const keys = Object.keys(labels)
  if (keys.length === 0) return ''
  return '{' + keys.map(k => `${k}="${escapeLabel(labels[k])}"`).join(',') + '}'
}

/** Numbers as the format spells them (+Inf, -Inf, NaN; integers without an exponent). */
function num (v) {
  if (Number.isNaN(v)) return 'NaN'
  if (v === Infinity) return '+Inf'
  if (v === -Infinity) return '-Inf'
  return String(v)
}

/** A counter family: values by label set, only ever increased. */
export class Counter {
  constructor (name, help, labelNames = []) {
    this.name = name
    this.help = help
    this.labelNames = labelNames
    this.values = new Map() // label text → { labels, value }
  }

  inc (labels = {}, by = 1) {
    const key = labelText(labels)
    const e = this.values.get(key)
    if (e === undefined) this.values.set(key, { labels, value: by })
    else e.value += by
  }

  get (labels = {}) { return this.values.get(labelText(labels))?.value ?? 0 }
}

/** The gateway's counters (gauges are computed at scrape time: metricsText). */
export class Metrics {
  constructor () {
    this.requests = new Counter('rotree_gateway_requests_total', 'Requests answered, by method and status (499: the client went away before the status was sent).', ['method', 'status'])
    this.verifiedBytes = new Counter('rotree_gateway_verified_bytes_total', 'File bytes sent to clients, every one verified against the signed tree.', ['tree'])
    this.faults = new Counter('rotree_gateway_mirror_faults_total', 'Mirror faults seen (errors, stalls, lies caught by verification), by tree, mirror and code.', ['tree', 'mirror', 'code'])
    this.rootChanges = new Counter('rotree_gateway_root_changes_total', 'New roots adopted, by tree.', ['tree'])
    this.refreshFailures = new Counter('rotree_gateway_refresh_failures_total', 'fsinfo.json checks that found no valid root on any mirror, by tree.', ['tree'])
  }
}

const METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'PROPFIND', 'PUT', 'POST', 'DELETE', 'MKCOL', 'COPY', 'MOVE', 'PROPPATCH', 'LOCK', 'UNLOCK', 'PATCH'])
/** A bounded method label: a client cannot grow the metrics with made-up methods. */
export const methodLabel = m => METHODS.has(m) ? m : 'other'

/**
 * The whole exposition.
 * @param {Metrics} m
 * @param {{ trees: { tree: string, seq: number|null, issuedMs: number|null, expiresMs: number|null, upstreamRequests: number, upstreamBytes: number, memory: { hits: number, misses: number, bytes: number }, localFaults: number }[], disk: object|null, nowMs: number }} s
 */
export function metricsText (m, s) {
  const out = []
  const family = (name, type, help, samples) => {
    out.push(`# HELP ${name} ${escapeHelp(help)}`, `# TYPE ${name} ${type}`)
    for (const [labels, v] of samples) out.push(`${name}${labelText(labels)} ${num(v)}`)
  }
  const counter = c => family(c.name, 'counter', c.help, [...c.values.values()].map(e => [e.labels, e.value]))
  counter(m.requests)
  counter(m.verifiedBytes)
  counter(m.faults)
  counter(m.rootChanges)
  counter(m.refreshFailures)
  const withRoot = s.trees.filter(t => t.seq !== null)
  family('rotree_gateway_root_seq', 'gauge', 'Sequence number of the root each tree serves.', withRoot.map(t => [{ tree: t.tree }, t.seq]))
  family('rotree_gateway_root_age_seconds', 'gauge', 'Seconds since the served root was issued (its fsinfo.json "issued").', withRoot.map(t => [{ tree: t.tree }, (s.nowMs - t.issuedMs) / 1000]))
  family('rotree_gateway_root_expiry_seconds', 'gauge', 'Seconds until the served root expires (negative: expired; no mirror had a newer one).', withRoot.map(t => [{ tree: t.tree }, (t.expiresMs - s.nowMs) / 1000]))
  family('rotree_gateway_upstream_requests_total', 'counter', 'Requests the tree made to its mirrors.', s.trees.map(t => [{ tree: t.tree }, t.upstreamRequests]))
  family('rotree_gateway_upstream_bytes_total', 'counter', 'Bytes the tree received from its mirrors.', s.trees.map(t => [{ tree: t.tree }, t.upstreamBytes]))
  family('rotree_gateway_local_faults_total', 'counter', 'Blobs from the disk cache that failed verification (deleted and fetched again).', s.trees.map(t => [{ tree: t.tree }, t.localFaults]))
  const hits = s.trees.map(t => [{ cache: 'memory', tree: t.tree }, t.memory.hits])
  const misses = s.trees.map(t => [{ cache: 'memory', tree: t.tree }, t.memory.misses])
  if (s.disk) { hits.push([{ cache: 'disk', tree: '' }, s.disk.hits]); misses.push([{ cache: 'disk', tree: '' }, s.disk.misses]) }
  family('rotree_gateway_cache_hits_total', 'counter', 'Verified-blob cache hits: memory (per tree) and disk (shared, tree="").', hits)
  family('rotree_gateway_cache_misses_total', 'counter', 'Verified-blob cache misses: memory (per tree) and disk (shared, tree="").', misses)
  family('rotree_gateway_memory_cache_bytes', 'gauge', 'Bytes held by each tree\'s memory cache.', s.trees.map(t => [{ tree: t.tree }, t.memory.bytes]))
  if (s.disk) {
    family('rotree_gateway_disk_cache_bytes', 'gauge', 'Bytes held by the disk cache.', [[{}, s.disk.bytes]])
    family('rotree_gateway_disk_cache_dropped_total', 'counter', 'Blobs the disk cache did not store because its write queue was full.', [[{}, s.disk.dropped]])
  }
  return out.join('\n') + '\n'
}
