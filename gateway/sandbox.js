// A tree is someone else's content served under the gateway's host. A page
// in it that ran with the host's origin could read the host app's
// cookie-authenticated API, or another tree mounted on the same gateway
// (docs/TRUST.md rule 15, docs/GATEWAY.md "Sandboxed documents"). So every type a
// browser renders as an active document (HTML, XHTML, SVG, XML) is sent with
// `Content-Security-Policy: sandbox …` without allow-same-origin: the browser
// gives the document an opaque origin. Its scripts still run (a static site
// keeps working), but it has no cookies of the host, and its requests to the
// host are cross-origin, which the gateway never allows by CORS.
//
// What the flags allow, and why each is safe without allow-same-origin:
//   allow-scripts     the site's own scripts; they run in the opaque origin
//   allow-forms       forms post like any other site's: cross-origin, Origin: null
//   allow-popups, allow-popups-to-escape-sandbox
//                     links with target=_blank open normally; a page opened
//                     from the gateway is sandboxed again by its own header
//   allow-modals, allow-downloads   alert() and <a download>
// Not allowed: allow-same-origin (the whole point), allow-top-navigation
// (a framed tree page may not navigate the host's window).

export const SANDBOX_POLICY = 'sandbox allow-scripts allow-forms allow-popups allow-popups-to-escape-sandbox allow-modals allow-downloads'

const ACTIVE = new Set(['text/html', 'application/xhtml+xml', 'image/svg+xml', 'text/xml', 'application/xml', 'text/xsl', 'application/xslt+xml'])

/** Is `type` (a Content-Type value) one a browser renders as a document that can run script? */
export function isActiveType (type) {
  const base = String(type).split(';', 1)[0].trim().toLowerCase()
  return ACTIVE.has(base) || base.endsWith('+xml')
}

/** The header pair to add for `type`, or [] (sandbox off, or an inert type). */
export function sandboxHeaders (type, enabled) {
  return enabled && isActiveType(type) ? ['Content-Security-Policy', SANDBOX_POLICY] : []
}
