// DNS rebinding: a web page on evil.example can make its own name resolve to
// 127.0.0.1 and then read, same-origin, whatever a local gateway serves. The
// browser still sends `Host: evil.example`, so a gateway that listens on a
// loopback address answers only requests whose Host names the loopback:
// localhost (and *.localhost, RFC 6761), 127.x.y.z, [::1], with any port.
// Names a reverse proxy or the user really uses are allowed explicitly
// (`allowHosts`, `--allow-host NAME`); '*' turns the check off. Given a list,
// the check applies whatever the listening address (docs/GATEWAY.md).

const IPV4_LOOPBACK = /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/

/** The host part of a Host header value, lower-case, without the port; '' when absent. */
export function hostName (host) {
  if (typeof host !== 'string') return ''
  const h = host.trim().toLowerCase()
  if (h.startsWith('[')) { const end = h.indexOf(']'); return end === -1 ? h : h.slice(0, end + 1) }
  const colon = h.indexOf(':')
  return (colon === -1 ? h : h.slice(0, colon)).replace(/\.$/, '')
}

/** Does `name` (from hostName) always mean this machine? */
export function isLoopbackName (name) {
  return name === 'localhost' || name.endsWith('.localhost') || IPV4_LOOPBACK.test(name) ||
    name === '[::1]' || name === '[::ffff:127.0.0.1]' || /^\[::ffff:7f[0-9a-f]{2}:[0-9a-f]{1,4}\]$/.test(name)
}

/** Is the socket's own address a loopback one (the gateway was bound to it)? */
export function isLoopbackAddress (addr) {
  if (typeof addr !== 'string') return false
  return IPV4_LOOPBACK.test(addr) || addr === '::1' || /^::ffff:127\./.test(addr)
}

/**
 * Is `name` (from hostName) the IP literal of the address the request
 * arrived on? A rebinding page's Host is the attacker's DNS name, never an
 * address, so the gateway's own address is always served: with
 * `--allow-host NAME` on `--host 192.0.2.2`, http://192.0.2.2:8081/ (the URL
 * it prints) is answered too. Compared in URL form (lower case, IPv6
 * compressed); a v4-mapped socket address (::ffff:a.b.c.d) is the IPv4 one.
 */
export function isOwnAddress (name, localAddress) {
  if (typeof localAddress !== 'string' || localAddress === '' || name === '') return false
  const local = localAddress.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/i, '')
  const own = urlHost(local.includes(':') ? `[${local}]` : local)
  return own !== null && own === urlHost(name)
}

function urlHost (h) {
  if (!/^(\[[0-9a-f:.]+\]|[0-9.]+)$/i.test(h)) return null // addresses only: never a name
  try { return new URL(`http://${h}/`).hostname } catch { return null }
}

/**
 * @param {string[]|null} allowHosts names (optionally name:port) to accept besides the loopback ones; ['*']: all
 * @returns {(req) => string|null} null when the request may proceed, else the reason to refuse it
 */
export function hostGuard (allowHosts = null) {
  if (allowHosts !== null && !Array.isArray(allowHosts)) throw new TypeError('gateway: allowHosts must be an array of host names')
  const any = allowHosts?.includes('*') ?? false
  const names = new Set((allowHosts ?? []).map(h => String(h).trim().toLowerCase()))
  return function check (req) {
    if (any) return null
    if (allowHosts === null && !isLoopbackAddress(req.socket?.localAddress)) return null
    const raw = req.headers.host
    if (raw === undefined) return null // HTTP/1.0 without Host: not a browser, so not a rebinding page
    const name = hostName(raw)
    if (isLoopbackName(name) || names.has(name) || names.has(String(raw).trim().toLowerCase())) return null
    if (isOwnAddress(name, req.socket?.localAddress)) return null
    const shown = JSON.stringify(String(raw).slice(0, 100))
    return allowHosts === null
      ? `this gateway listens on a loopback address and answers only Host: localhost, 127.0.0.1 or [::1] (got ${shown}), so that no web page can reach it by DNS rebinding; start it with --allow-host NAME (allowHosts) to serve another name`
      : `Host ${shown} is not one this gateway serves (localhost, 127.0.0.1, [::1], the address it was reached at, and --allow-host names)`
  }
}
