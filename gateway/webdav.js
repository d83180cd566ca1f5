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
import { listingTap } from './readahead.js'
import { readBody, parsePropfind, DAV } from './propfind-body.js'

export const DAV_ALLOW = 'OPTIONS, GET, HEAD, PROPFIND'
export const DAV_HEADERS = ['DAV', '1', 'MS-Author-Via', 'DAV', 'Allow', DAV_ALLOW]
// Apache mod_dav's `executable` (T or F), which davfs2 and neon ask for: the exec bit of the entry
const APACHE = 'http://apache.org/dav/props/'
// ownCloud's checksums property, which rclone (vendor owncloud or nextcloud)
// and ownCloud/Nextcloud clients read: <oc:checksums><oc:checksum>TYPE:hex …
// A file carries it only when the tree signed its SHA-256 (FORMAT.md §12.7).
const OC = 'http://owncloud.org/ns'

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
  const body = await readBody(req)
  if (body === null) return sendText(res, 413, '413 Content Too Large\na PROPFIND body may be at most 64 KiB\n', { headers: ['Connection', 'close'] })
  const parsed = parsePropfind(body)
  if (parsed.error) return sendText(res, 400, `400 Bad Request\n${oneLine(parsed.error)}\n`)
  const want = parsed.want
  if (ctx.mount === null) return propfindMounts(gw, ctx, depth, want)
  return propfindTree(gw, ctx, depth, want)
}

/** The gateway's root when only named trees are mounted: the trees as collections. */
function propfindMounts (gw, ctx, depth, want) {
  if (ctx.segs.length > 0) return sendText(ctx.res, 404, `404 Not Found\nno tree is mounted as ${JSON.stringify(ctx.segs[0])}\n`)
  const tap = listingTap(isDir && depth === '1' ? ctx.mount.readAhead : null, pin, rel, entry)
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
  const tap = listingTap(isDir && depth === '1' ? ctx.mount.readAhead : null, pin, rel, entry)
  const pieces = (async function * () {
    yield MULTISTATUS_OPEN
    yield davResponse(gw.href(ctx, names, isDir), davResource(entry, ctx.segs.at(-1) ?? ''), want)
    if (isDir && depth === '1') {
      const dirHref = gw.href(ctx, names, true)
      for await (const { entry: e, target: t } of tap.items(withTargets(pin, rel, entry))) {
        if (t === null || t === undefined) continue // WebDAV has no symlinks: leave out one that leads nowhere (or was not resolved)
        yield davResponse(dirHref + encodeURIComponent(e.name) + (t.type === 'dir' ? '/' : ''), davResource(t, e.name), want)
      }
    }
    yield MULTISTATUS_CLOSE
  })()
  return sendGenerated(req, res, 207, ['Content-Type', XML_TYPE, ...pin.headers], pieces, { errorHeaders: pin.headers, log: gw.log, onComplete: tap.sent })
}

function davResource (entry, name) {
  if (entry.type === 'dir') return { dir: true, name, mtime: entry.mtime, etag: dirEtag(entry, 'html') }
  const m = fileMeta(entry)
  return { dir: false, name, size: entry.size, mtime: entry.mtime, etag: m.etag, type: m.type, exec: !!entry.exec, sha256: m.sha256 }
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

/**
 * One <D:response> for a resource. Properties are matched by expanded name
 * (namespace and local name), never by prefix; one this server does not have
 * goes back in a 404 propstat with its own namespace (RFC 4918 §9.1).
 * @param {string} href absolute path, already percent-encoded
 * @param {{ dir: boolean, name: string, size?: number, mtime: number, etag?: string, type?: string, exec?: boolean, sha256?: string|null }} r
 * @param {import('./propfind-body.js').Want} want
 */
export function davResponse (href, r, want) {
  const values = davProps(r)
  let ok = ''
  let missing = ''
  if (want.mode === 'propname') {
    for (const v of values.values()) ok += v.empty
  } else if (want.mode === 'allprop') {
    for (const v of values.values()) ok += v.xml
  } else {
    for (const p of want.props) {
      const v = values.get(propKey(p.ns, p.name))
      if (v !== undefined) ok += v.xml
      else missing += emptyProp(p.ns, p.name)
    }
  }
  let out = `<D:response><D:href>${escapeXml(href)}</D:href>`
  if (ok !== '' || missing === '') out += `<D:propstat><D:prop>${ok}</D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat>`
  if (missing !== '') out += `<D:propstat><D:prop>${missing}</D:prop><D:status>HTTP/1.1 404 Not Found</D:status></D:propstat>`
  return out + '</D:response>\n'
}

const propKey = (ns, name) => `${ns} ${name}`

/** An empty property element for {ns}name; names came through xml-reader.js, so they are XML names. */
function emptyProp (ns, name) {
  if (ns === DAV) return `<D:${name}/>`
  if (ns === '') return `<${name} xmlns=""/>`
  return `<x:${name} xmlns:x="${escapeXml(ns)}"/>`
}

/** The live properties of a resource: expanded name → { xml, empty } (the value, and the name alone for propname). */
function davProps (r) {
  const p = new Map()
  const dav = (name, inner) => p.set(propKey(DAV, name), { xml: inner === '' ? `<D:${name}/>` : `<D:${name}>${inner}</D:${name}>`, empty: `<D:${name}/>` })
  const d = new Date(r.mtime)
  const valid = !Number.isNaN(d.getTime())
  dav('displayname', escapeXml(r.name))
  dav('resourcetype', r.dir ? '<D:collection/>' : '')
  if (!r.dir) dav('getcontentlength', String(r.size))
  if (!r.dir && r.type) dav('getcontenttype', escapeXml(r.type))
  if (valid) dav('getlastmodified', d.toUTCString())
  if (valid) dav('creationdate', d.toISOString())
  if (r.etag) dav('getetag', escapeXml(r.etag))
  dav('supportedlock', '') // none: a read-only tree has nothing to lock
  dav('lockdiscovery', '')
  if (!r.dir) {
    p.set(propKey(APACHE, 'executable'), {
      xml: `<A:executable xmlns:A="${APACHE}">${r.exec ? 'T' : 'F'}</A:executable>`,
      empty: `<A:executable xmlns:A="${APACHE}"/>`
    })
  }
  if (!r.dir && r.sha256) {
    // the algorithm name as ownCloud spells its others (SHA1:, MD5:, ADLER32:)
    p.set(propKey(OC, 'checksums'), {
      xml: `<oc:checksums xmlns:oc="${OC}"><oc:checksum>SHA256:${r.sha256}</oc:checksum></oc:checksums>`,
      empty: `<oc:checksums xmlns:oc="${OC}"/>`
    })
  }
  return p
}

export const MULTISTATUS_OPEN = '<?xml version="1.0" encoding="utf-8"?>\n<D:multistatus xmlns:D="DAV:">\n'
export const MULTISTATUS_CLOSE = '</D:multistatus>\n'
export const XML_TYPE = 'application/xml; charset=utf-8'

export const FINITE_DEPTH_BODY = '<?xml version="1.0" encoding="utf-8"?>\n<D:error xmlns:D="DAV:"><D:propfind-finite-depth/></D:error>\n'

export { KNOWN as DAV_PROPS }

function oneLine (s) { return String(s).replace(/[\r\n]+\s*/g, ' ').slice(0, 500) }
