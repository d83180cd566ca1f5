// What a PROPFIND body asks for (RFC 4918 §9.1, §14.20): every live property
// (allprop, also for an empty body), their names (propname), or a list of
// properties by expanded name (prop). The XML is read by xml-reader.js, which
// refuses anything that is not namespace-well-formed; this file reads the
// DAV:propfind element out of it, ignoring elements it does not know as
// RFC 4918 §17 asks (so `<propfind><foobar/><allprop/></propfind>` is allprop).

import { decodeBody, readXml } from './xml-reader.js'

export const DAV = 'DAV:'
export const MAX_BODY = 64 * 1024

/**
 * The request body, at most MAX_BODY bytes; null when larger (the caller
 * answers 413, and stops reading).
 * @returns {Promise<Buffer|null>}
 */
export function readBody (req) {
  return new Promise((resolve, reject) => {
    const parts = []
    let n = 0
    req.on('data', c => {
      n += c.length
      if (n > MAX_BODY) { req.removeAllListeners('data'); req.resume(); resolve(null); return }
      parts.push(c)
    })
    req.on('end', () => resolve(n > MAX_BODY ? null : Buffer.concat(parts)))
    req.on('error', reject)
  })
}

/**
 * @param {Uint8Array} bytes the whole body
 * @returns {{ want: Want } | { error: string }}
 * @typedef {{ mode: 'allprop' | 'propname' } | { mode: 'prop', props: { ns: string, name: string }[] }} Want
 */
export function parsePropfind (bytes) {
  const d = decodeBody(bytes)
  if (d.error) return d
  // RFC 4918 §9.1: an empty body is an allprop request
  if (/^[ \t\r\n]*$/.test(d.text)) return { want: { mode: 'allprop' } }
  const x = readXml(d.text, { encoding: d.encoding })
  if (x.error) return { error: `the body is not well-formed XML: ${x.error}` }
  const root = x.root
  if (root.ns !== DAV || root.local !== 'propfind') return { error: `the root element is {${root.ns}}${root.local}, not {DAV:}propfind` }
  const kinds = root.children.filter(c => c.ns === DAV && (c.local === 'allprop' || c.local === 'propname' || c.local === 'prop'))
  if (kinds.length !== 1) return { error: kinds.length === 0 ? 'propfind holds none of allprop, propname, prop' : 'propfind holds more than one of allprop, propname, prop' }
  const kind = kinds[0]
  if (kind.local !== 'prop') return { want: { mode: kind.local } }
  const props = []
  const seen = new Set()
  for (const p of kind.children) {
    const key = `${p.ns} ${p.local}`
    if (seen.has(key)) continue
    seen.add(key)
    props.push({ ns: p.ns, name: p.local })
  }
  return { want: { mode: 'prop', props } }
}
