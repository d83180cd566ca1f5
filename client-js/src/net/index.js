// rotree-client/net: HTTP for Node (transport-node.js: HTTP/1.1 over
// transport-h1.js, HTTP/2 over transport-h2.js, both behind the one
// contract of request-handler.js), the URL rules every
// transport keeps (transport-url.js), and the Range and ETag rules the
// servers share (http-range.js). Browsers use transport-web.js (fetch),
// chosen by the #platform import.
export { createTransport } from './transport-node.js'
export { MAX_REDIRECTS, redactUrl, parseTarget, basicAuth, redirectPolicy, redirectTarget } from './transport-url.js'
export { HandshakeTimes } from './handshake-times.js'
export { parseRange, contentRange, unsatisfiedRange, etagMatches, etagMatchesStrong, ifRangeHolds } from './http-range.js'
export { gatedTransport, RENEW_BEFORE_MS, RENEW_FRACTION } from './gated-transport.js'
