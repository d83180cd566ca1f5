// A verified site's `_redirects` file (docs/WEB.md "Single-page apps and
// redirects"): a subset of the Netlify / IPFS gateway syntax, read from the
// tree root, signed like every other file. One rule a line:
//
//   FROM TO [STATUS]        # a comment
//
//   FROM    a path from the site's root: literal segments, `:name`
//           placeholders (one whole segment each) and, last, `*` (the rest)
//   TO      a path from the site's root, which may use FROM's `:name`s and
//           `:splat` (what `*` matched); never a URL of another origin
//   STATUS  200 (rewrite: TO's verified bytes at FROM's URL), 301, 302, 303,
//           307, 308 (redirect to TO), 404 (TO's verified bytes as a 404);
//           301 when absent
//
// Rules apply only to a path the signed tree proves absent (a file that is
// there is always served as it is), first match wins, and a TO that leaves
// the tree (`..`) never matches. Bounded, as the file comes from a publisher
// who may be hostile to the reader: at most MAX_BYTES and MAX_RULES, parsed
// once per root. A file that breaks any of this is reported and ignored as a
// whole. Pure: no I/O, imports nothing (served to browsers as it is).

export const REDIRECTS_PATH = '/_redirects'
export const MAX_BYTES = 64 << 10
export const MAX_RULES = 1000
const REDIRECT = new Set([301, 302, 303, 307, 308])
const SERVE = new Set([200, 404])
const NAME = /^:[A-Za-z_][A-Za-z0-9_]*$/

/**
 * @param {Uint8Array|string} input the file's verified bytes
 * @returns {{ rules: object[], error: string | null }} no rules when error is set
 */
export function parseRedirects (input) {
  if (typeof input !== 'string' && input.length > MAX_BYTES) return bad(`${input.length} bytes, over the limit of ${MAX_BYTES}`)
  let text = input
  if (typeof input !== 'string') {
    try { text = new TextDecoder('utf-8', { fatal: true }).decode(input) } catch { return bad('not UTF-8 text') }
  }
  const rules = []
  const lines = text.split(/\r?\n/)
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].replace(/(^|\s)#.*$/, '').trim()
    if (line === '') continue
    if (rules.length === MAX_RULES) return bad(`more than ${MAX_RULES} rules`)
    const r = parseRule(line)
    if (typeof r === 'string') return bad(`line ${i + 1}: ${r}`)
    rules.push(r)
  }
  return { rules, error: null }
}

function bad (why) { return { rules: [], error: `_redirects ignored: ${why}` } }

/** A piece of the file, quoted, and short: the bar shows it, and a line may be 64 KiB long. */
function show (v) { return JSON.stringify(v.length > 80 ? v.slice(0, 77) + '…' : v) }

/** One rule, or why the line is not one. */
function parseRule (line) {
  const f = line.split(/\s+/)
  if (f.length < 2 || f.length > 3) return `expected "FROM TO [STATUS]", got ${f.length} field${f.length === 1 ? '' : 's'}`
  const [from, to, code = '301'] = f
  if (!/^[0-9]{3}$/.test(code)) return `status ${show(code)} is not one of 200, 301, 302, 303, 307, 308, 404`
  const status = Number(code)
  if (!REDIRECT.has(status) && !SERVE.has(status)) return `status ${status} is not one of 200, 301, 302, 303, 307, 308, 404`
  const src = pathSegments(from, 'FROM')
  if (typeof src === 'string') return src
  const names = new Set()
  for (let i = 0; i < src.length; i++) {
    const s = src[i]
    if (s === '*') { if (i !== src.length - 1) return 'FROM may have `*` only as its last segment'; names.add(':splat'); continue }
    if (s.startsWith(':')) {
      if (!NAME.test(s) || s === ':splat') return `FROM has a malformed placeholder ${show(s)}`
      if (names.has(s)) return `FROM names ${s} twice`
      names.add(s)
    } else if (s.includes('*')) return 'FROM may have `*` only as a whole last segment'
  }
  const dst = pathSegments(to, 'TO')
  if (typeof dst === 'string') return dst
  for (const s of dst) {
    if (s.startsWith(':') && !names.has(s)) return `TO uses ${s}, which FROM does not define`
  }
  return { from: src, to: dst, status }
}

/** '/a/:b/*' → ['a', ':b', '*']; a string says why it is not a path of this site. */
function pathSegments (p, what) {
  // only a path from the site's root: a URL or '//host' could lead off this origin
  if (!p.startsWith('/') || p.startsWith('//')) return `${what} must be a path starting with one "/" (no URL of another origin), got ${show(p)}`
  if (/[?#\\]/.test(p)) return `${what} may not hold "?", "#" or "\\": ${show(p)}`
  const segs = p.split('/').filter(s => s !== '')
  let decoded
  try { decoded = segs.map(s => decodeURIComponent(s)) } catch { return `${what} has a malformed %-escape: ${show(p)}` }
  if (decoded.some(s => s === '.' || s === '..' || s.includes('/') || s.includes('\0'))) return `${what} may not hold "." or ".." segments: ${show(p)}`
  return decoded
}

/**
 * The first rule for a tree path.
 * @param {object[]} rules from parseRedirects
 * @param {string} path a tree path, '/'-separated, decoded
 * @returns {{ status: number, to: string[] } | null} to: the target's segments, each one a
 *   single name (never '', '.', '..' or holding '/'): inside the tree, and safe to encode into a URL
 */
export function matchRedirect (rules, path) {
  const segs = path.split('/').filter(s => s !== '')
  for (const r of rules) {
    const vars = match(r.from, segs)
    if (vars === null) continue
    const to = []
    for (const s of r.to) {
      if (s === ':splat') to.push(...vars.get(s))
      else if (s.startsWith(':')) to.push(vars.get(s))
      else to.push(s)
    }
    if (to.some(s => s === '' || s === '.' || s === '..' || s.includes('/') || s.includes('\0'))) continue // would leave the tree
    return { status: r.status, to }
  }
  return null
}

function match (from, segs) {
  const vars = new Map()
  for (let i = 0; i < from.length; i++) {
    const f = from[i]
    if (f === '*') { vars.set(':splat', segs.slice(i)); return vars }
    if (i >= segs.length) return null
    if (f.startsWith(':')) vars.set(f, segs[i])
    else if (f !== segs[i]) return null
  }
  return from.length === segs.length ? vars : null
}
