// Read-only WebDAV (RFC 4918 class 1 without writes): OPTIONS and PROPFIND at
// Depth 0 and 1, so rclone, davfs2, Finder and Explorer mount a tree as a file
// system. GET and HEAD are the ordinary file routes. Depth: infinity is
// refused (§9.1 allows it; a whole tree in one answer is a denial of service),
// and every method that would write is 405. propfind() answers one request;
// the rest of this file is the protocol's XML.
import { escapeMarkup, sendGenerated } from './body.js'
import { sendError, sendText } from './http-status.js'
import { resolve, fileMeta, dirEtag } from './tree-access.js'
import { notADir } from './paths.js'
import { withTargets } from './targets.js'

export const DAV_ALLOW = 'OPTIONS, GET, HEAD, PROPFIND'
export const DAV_HEADERS = ['DAV', '1', 'MS-Author-Via', 'DAV', 'Allow', DAV_ALLOW]
const DAV = 'DAV:'
const MAX_BODY = 64 * 1024

const KNOWN = ['displayname', 'resourcetype', 'getcontentlength', 'getcontenttype', 'getlastmodified', 'creationdate', 'getetag', 'supportedlock', 'lockdiscovery']

/**
 * PROPFIND on a path of the gateway (RFC 4918 §9.1).
 * @param {import('./gateway.js').Gateway} gw
 * @param {object} ctx the request's context (Gateway._context)
 */
export async function propfind (gw, ctx) {
  const { req, res } = ctx
  const depth = depthOf(req)
  if (depth === null) return sendText(res, 400, '400 Bad Request\nDepth must be 0, 1 or infinity\n')
  if (depth === 'infinity') {
    // RFC 4918 §9.1: a server may refuse; say so with the precondition element
    req.resume()
    const body = Buffer.from(FINITE_DEPTH_BODY)
    res.writeHead(403, ['Content-Type', XML_TYPE, 'Content-Length', String(body.length)])
    return res.end(body)
  }
  const text = await readBody(req)
  if (text === null) return sendText(res, 413, '413 Content Too Large\na PROPFIND body may be at most 64 KiB\n', { headers: ['Connection', 'close'] })
  const want = parsePropfind(text)
  if (want === null) return sendText(res, 400, '400 Bad Request\nthe PROPFIND body is not a DAV:propfind document this server can read\n')
  if (ctx.mount === null) return propfindMounts(gw, ctx, depth, want)
  return propfindTree(gw, ctx, depth, want)
}

/** The gateway's root when only named trees are mounted: the trees as collections. */
function propfindMounts (gw, ctx, depth, want) {
  if (ctx.segs.length > 0) return sendText(ctx.res, 404, `404 Not Found\nno tree is mounted as ${JSON.stringify(ctx.segs[0])}\n`)
  const pieces = (async function * () {
    yield MULTISTATUS_OPEN
    yield davResponse(gw.href(ctx, [], true), { dir: true, name: '', mtime: gw.startedAt.getTime() }, want)
    if (depth === '1') {
      for await (const { entry: m } of gw.mountItems()) {
        yield davResponse(gw.href(ctx, [m.name], true), { dir: true, name: m.name, mtime: m.mtime, etag: m.root && `"d-${m.root}-html"` }, want)
      }
    }
    yield MULTISTATUS_CLOSE
  })()
  return sendGenerated(ctx.req, ctx.res, 207, ['Content-Type', XML_TYPE], pieces, { log: gw.log })
}

/** A path in a tree: the resource, and at Depth 1 a directory's members (symlinks as what they lead to). */
async function propfindTree (gw, ctx, depth, want) {
  const { req, res, rel } = ctx
  const pin = await ctx.mount.current()
  let entry
  try {
    entry = await resolve(pin, rel)
  } catch (err) {
    return sendError(res, err, { headers: pin.headers, log: gw.log })
  }
  const names = [...ctx.mountSegs, ...rel]
  const isDir = entry.type === 'dir'
  if (!isDir && ctx.slash && rel.length > 0) return sendError(res, notADir(rel), { headers: pin.headers })
  const pieces = (async function * () {
    yield MULTISTATUS_OPEN
    yield davResponse(gw.href(ctx, names, isDir), davResource(entry, ctx.segs.at(-1) ?? ''), want)
    if (isDir && depth === '1') {
      const dirHref = gw.href(ctx, names, true)
      for await (const { entry: e, target: t } of withTargets(pin, rel, entry)) {
        if (t === null || t === undefined) continue // WebDAV has no symlinks: leave out one that leads nowhere (or was not resolved)
        yield davResponse(dirHref + encodeURIComponent(e.name) + (t.type === 'dir' ? '/' : ''), davResource(t, e.name), want)
      }
    }
    yield MULTISTATUS_CLOSE
  })()
  return sendGenerated(req, res, 207, ['Content-Type', XML_TYPE, ...pin.headers], pieces, { errorHeaders: pin.headers, log: gw.log })
}

function davResource (entry, name) {
  if (entry.type === 'dir') return { dir: true, name, mtime: entry.mtime, etag: dirEtag(entry, 'html') }
  const m = fileMeta(entry)
  return { dir: false, name, size: entry.size, mtime: entry.mtime, etag: m.etag, type: m.type }
}

/** XML text: markup escaped, and the control characters XML 1.0 cannot carry replaced. */
export function escapeXml (s) {
  // eslint-disable-next-line no-control-regex
  return escapeMarkup(s).replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g, '\ufffd')
}

/**
 * The Depth header: '0', '1', or 'infinity' (also when absent, RFC 4918 §9.1);
 * null when it is neither.
 */
export function depthOf (req) {
  const d = req.headers.depth
  if (d === undefined) return 'infinity'
  const v = d.trim().toLowerCase()
  return v === '0' || v === '1' || v === 'infinity' ? v : null
}

/** The request body, at most MAX_BODY bytes; null when larger (the caller answers 413). */
export function readBody (req) {
  return new Promise((resolve, reject) => {
    const parts = []
    let n = 0
    req.on('data', c => {
      n += c.length
      if (n > MAX_BODY) { req.removeAllListeners('data'); req.resume(); resolve(null); return }
      parts.push(c)
    })
    req.on('end', () => resolve(n > MAX_BODY ? null : Buffer.concat(parts).toString('utf8')))
    req.on('error', reject)
  })
}

/**
 * What a PROPFIND body asks for: { mode: 'allprop' } (also for an empty body),
 * { mode: 'propname' }, or { mode: 'prop', props: [{ ns, name }] }. This is a
 * deliberately small reader for the one shape RFC 4918 §14.20 defines; a body
 * it cannot read is a 400, never a guess.
 * @returns {{ mode: string, props?: { ns: string, name: string }[] } | null}
 */
export function parsePropfind (text) {
  const body = text.replace(/<\?xml[^>]*\?>/, '').replace(/<!--[\s\S]*?-->/g, '').trim()
  if (body === '') return { mode: 'allprop' }
  if (/<!DOCTYPE|<!ENTITY/i.test(body)) return null // no DTDs, no entity tricks
  const ns = new Map()
  for (const m of body.matchAll(/xmlns(?::([A-Za-z_][\w.-]*))?\s*=\s*("([^"]*)"|'([^']*)')/g)) ns.set(m[1] ?? '', m[3] ?? m[4])
  const qname = (prefix) => ns.get(prefix ?? '') ?? (prefix ? null : '')
  const TAG = /<(\/?)(?:([A-Za-z_][\w.-]*):)?([A-Za-z_][\w.-]*)\b[^>]*?(\/?)>/g
  const tags = [...body.matchAll(TAG)].map(m => ({ close: m[1] === '/', ns: qname(m[2]), name: m[3], empty: m[4] === '/' }))
  if (tags.length === 0 || tags[0].ns !== DAV || tags[0].name !== 'propfind') return null
  const kinds = tags.filter(t => !t.close && t.ns === DAV && ['allprop', 'propname', 'prop'].includes(t.name))
  if (kinds.length === 0) return null
  const kind = kinds[0].name
  if (kind !== 'prop') return { mode: kind }
  const start = tags.findIndex(t => !t.close && t.ns === DAV && t.name === 'prop')
  if (tags[start].empty) return { mode: 'prop', props: [] }
  const props = []
  let depth = 0
  for (let i = start + 1; i < tags.length; i++) {
    const t = tags[i]
    if (t.close) { if (depth === 0) break; depth--; continue }
    if (depth === 0) {
      if (t.ns === null) return null // an undeclared prefix
      props.push({ ns: t.ns, name: t.name })
    }
    if (!t.empty) depth++
  }
  return { mode: 'prop', props }
}

/**
 * One <D:response> for a resource.
 * @param {string} href absolute path, already percent-encoded
 * @param {{ dir: boolean, name: string, size?: number, mtime: number, etag?: string, type?: string }} r
 * @param {{ mode: string, props?: { ns: string, name: string }[] }} want
 */
export function davResponse (href, r, want) {
  const values = davProps(r)
  let ok = ''
  let missing = ''
  if (want.mode === 'propname') {
    for (const k of Object.keys(values)) ok += `<D:${k}/>`
  } else if (want.mode === 'allprop') {
    for (const v of Object.values(values)) ok += v
  } else {
    for (const p of want.props) {
      if (p.ns === DAV && values[p.name] !== undefined) ok += values[p.name]
      else missing += p.ns === DAV ? `<D:${p.name}/>` : `<x:${p.name} xmlns:x="${escapeXml(p.ns)}"/>`
    }
  }
  let out = `<D:response><D:href>${escapeXml(href)}</D:href>`
  if (ok !== '' || missing === '') out += `<D:propstat><D:prop>${ok}</D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat>`
  if (missing !== '') out += `<D:propstat><D:prop>${missing}</D:prop><D:status>HTTP/1.1 404 Not Found</D:status></D:propstat>`
  return out + '</D:response>\n'
}

function davProps (r) {
  const p = {}
  const d = new Date(r.mtime)
  const valid = !Number.isNaN(d.getTime())
  p.displayname = `<D:displayname>${escapeXml(r.name)}</D:displayname>`
  p.resourcetype = r.dir ? '<D:resourcetype><D:collection/></D:resourcetype>' : '<D:resourcetype/>'
  if (!r.dir) p.getcontentlength = `<D:getcontentlength>${r.size}</D:getcontentlength>`
  if (!r.dir && r.type) p.getcontenttype = `<D:getcontenttype>${escapeXml(r.type)}</D:getcontenttype>`
  if (valid) p.getlastmodified = `<D:getlastmodified>${d.toUTCString()}</D:getlastmodified>`
  if (valid) p.creationdate = `<D:creationdate>${d.toISOString()}</D:creationdate>`
  if (r.etag) p.getetag = `<D:getetag>${escapeXml(r.etag)}</D:getetag>`
  p.supportedlock = '<D:supportedlock/>' // none: a read-only tree has nothing to lock
  p.lockdiscovery = '<D:lockdiscovery/>'
  return p
}

export const MULTISTATUS_OPEN = '<?xml version="1.0" encoding="utf-8"?>\n<D:multistatus xmlns:D="DAV:">\n'
export const MULTISTATUS_CLOSE = '</D:multistatus>\n'
export const XML_TYPE = 'application/xml; charset=utf-8'

export const FINITE_DEPTH_BODY = '<?xml version="1.0" encoding="utf-8"?>\n<D:error xmlns:D="DAV:"><D:propfind-finite-depth/></D:error>\n'

export { KNOWN as DAV_PROPS }
