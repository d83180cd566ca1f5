// GET and HEAD: a file (files.js), or a directory: 301 to its slash form,
// its index.html, or a listing (HTML, or JSON when asked for; `DIR/?listing`
// is the listing even where DIR holds index.html). With only named trees
// mounted, the gateway's own root lists them.
import { etagMatches } from 'rotree-client/http'
import { sendError, sendText, NOWHERE_CODES } from './http-status.js'
import { resolve, dirEtag } from './tree-access.js'
import { notADir } from './paths.js'
import { sendFile } from './files.js'
import { sendGenerated } from './body.js'
import { wantsJson, asksListing, htmlListing, jsonListing, LISTING_QUERY } from './listing.js'
import { withTargets } from './targets.js'
import { listingTap } from './readahead.js'
import { sandboxHeaders } from './sandbox.js'

const HTML = 'text/html; charset=utf-8'
const JSON_TYPE = 'application/json; charset=utf-8'

/**
 * @param {import('./gateway.js').Gateway} gw
 * @param {object} ctx the request's context (Gateway._context)
 */
export async function serveGet (gw, ctx) {
  if (ctx.mount === null) return mountList(gw, ctx)
  const { req, res, head, rel } = ctx
  const pin = await ctx.mount.current()
  let entry
  try {
    entry = await resolve(pin, rel)
  } catch (err) {
    return sendError(res, err, { head, headers: pin.headers, log: gw.log })
  }
  if (entry.type !== 'dir') {
    if (ctx.slash && rel.length > 0) return sendError(res, notADir(rel), { head, headers: pin.headers })
    return sendFile(req, res, pin, entry, { log: gw.log, sandbox: gw.sandbox, onRead: onRead(ctx) })
  }
  if (!ctx.slash) return redirect(gw, ctx)
  const json = wantsJson(req)
  if (gw.index && !json && !asksListing(ctx.query)) {
    let idx = null
    try {
      idx = await resolve(pin, [...rel, 'index.html'])
    } catch (err) {
      if (!NOWHERE_CODES.has(err.code)) return sendError(res, err, { head, headers: pin.headers, log: gw.log })
    }
    if (idx !== null && idx.type === 'file') return sendFile(req, res, pin, idx, { log: gw.log, vary: true, sandbox: gw.sandbox, onRead: onRead(ctx) })
  }
  return listing(gw, ctx, pin, entry, json)
}

/** What a file's body takes of the read-ahead (readahead.js: it earns the tree's credit). */
function onRead (ctx) {
  const ra = ctx.mount.readAhead
  return ra === null ? undefined : (entry, start, end) => ra.read(entry, start, end)
}

/** A directory's listing: HTML with symlink targets resolved (within a budget), or JSON. */
function listing (gw, ctx, pin, entry, json) {
  const { req, res, rel } = ctx
  const type = json ? JSON_TYPE : HTML
  const etag = dirEtag(entry, json ? 'json' : 'html')
  const headers = [
    'Content-Type', type, 'ETag', etag, 'Cache-Control', pin.cacheControl(), 'Vary', 'Accept',
    'X-Content-Type-Options', 'nosniff', ...sandboxHeaders(type, gw.sandbox), ...pin.headers
  ]
  const inm = req.headers['if-none-match']
  if (inm !== undefined && etagMatches(inm, etag)) { res.writeHead(304, headers.slice(2)); return res.end() }
  const title = titleOf(ctx)
  // JSON names a symlink's target, it does not follow it
  const tap = listingTap(ctx.mount.readAhead, pin, rel, entry)
  const items = tap.items(withTargets(pin, rel, entry, { links: !json }))
  const pieces = json ? jsonListing(title, items)
    : htmlListing(title, parentLink(gw, ctx), onPath(pin, rel, entry, items), '', { dirQuery: dirQuery(gw) })
  return sendGenerated(req, res, 200, headers, pieces, { errorHeaders: pin.headers, log: gw.log, onComplete: tap.sent })
}

/** What a listing appends to its directory links: where index.html stands in for listings, the query that lists. */
function dirQuery (gw) { return gw.index ? LISTING_QUERY : '' }

/** The "../" row's link: a listing of this gateway's above, the app above its mount (Express), or none at its root. */
function parentLink (gw, ctx) {
  return ctx.segs.length > 0 ? '../' + dirQuery(gw) : ctx.base !== '' ? '../' : null
}

/**
 * Marks each symlink that leads to a directory on the request's own path (the
 * listed one or one above it) with `up`, how many levels above the listed one
 * that is: linked as "./name/", it would open an endless path (a/up/a/up/…)
 * to a client that follows every link (`wget -r -l inf`). Directories are
 * compared by handle: one of the same content as a directory on the path
 * holds the same symlink again. A real subdirectory never matches (its handle
 * is part of its parent's page), and any symlink loop, however long, comes
 * back to a directory already on the path.
 */
async function * onPath (pin, rel, dirEntry, items) {
  let path = null // the handles of the directories from the tree's root to the listed one
  for await (const item of items) {
    const t = item.target
    if (item.entry.type === 'symlink' && t !== null && t !== undefined && t.type === 'dir') {
      path ??= await pathHandles(pin, rel, dirEntry)
      const i = path.lastIndexOf(t.dir.hash)
      if (i !== -1) { yield { ...item, up: rel.length - i }; continue }
    }
    yield item
  }
}

async function pathHandles (pin, rel, dirEntry) {
  const out = []
  for (let i = 0; i < rel.length; i++) out.push((await resolve(pin, rel.slice(0, i))).dir.hash)
  out.push(dirEntry.dir.hash)
  return out
}

/** The gateway's root when only named trees are mounted: a listing of them. */
function mountList (gw, ctx) {
  const { req, res, segs } = ctx
  if (segs.length > 0) return sendText(res, 404, `404 Not Found\nno tree is mounted as ${JSON.stringify(segs[0])}\n`, { head: ctx.head })
  if (!ctx.slash) return redirect(gw, ctx)
  const json = wantsJson(req)
  const type = json ? JSON_TYPE : HTML
  const headers = ['Content-Type', type, 'Cache-Control', 'no-cache', 'Vary', 'Accept', 'X-Content-Type-Options', 'nosniff', ...sandboxHeaders(type, gw.sandbox)]
  const items = gw.mountItems()
  const pieces = json ? jsonListing(titleOf(ctx), items) : htmlListing(titleOf(ctx), parentLink(gw, ctx), items, 'trees served by this gateway', { dirQuery: dirQuery(gw) })
  return sendGenerated(req, res, 200, headers, pieces, { log: gw.log })
}

function redirect (gw, ctx) {
  const loc = gw.href(ctx, ctx.segs, true) + ctx.query
  sendText(ctx.res, 301, `301 Moved Permanently\n${loc}\n`, { head: ctx.head, headers: ['Location', loc] })
}

/** The public path a listing shows, e.g. "/downloads/docs/". */
function titleOf (ctx) {
  let base = ctx.base
  try { base = decodeURIComponent(base) } catch {}
  return (base + '/' + ctx.segs.map(s => s + '/').join('')).replace(/^\/{2,}/, '/')
}
