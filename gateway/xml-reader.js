// A strict, namespace-aware reader for the small XML bodies WebDAV clients
// send (PROPFIND). It checks well-formedness (XML 1.0) and namespace
// well-formedness (Namespaces in XML 1.0) and returns the element tree with
// every name expanded to { ns, local }; text is checked but not kept.
//
// Why our own and not a library: a request body is hostile input on the
// gateway's hot process, and what PROPFIND needs is tiny. This reader has no
// entity expansion beyond the five predefined entities and character
// references, refuses any DOCTYPE (so no DTD, no external entity, no
// billion-laughs), bounds element depth, and makes one forward pass: every
// search (indexOf, sticky regexes without nested quantifiers) starts where
// the last one ended, so time is linear in the body, which the caller bounds
// (64 KiB). Namespace scopes are per element, as the spec says: a default
// namespace declared on one element does not leak to its siblings, and an
// empty prefixed binding (xmlns:p="") is an error in Namespaces 1.0.
//
// readXml() never throws: it answers { root } or { error } (a one-line
// reason the 400 body carries).

export const XML_NS = 'http://www.w3.org/XML/1998/namespace'
export const XMLNS_NS = 'http://www.w3.org/2000/xmlns/'
export const MAX_DEPTH = 32

// XML 1.0 (fifth edition) §2.3 NameStartChar / NameChar, without ':' (an NCName)
const START = 'A-Z_a-z\\u00C0-\\u00D6\\u00D8-\\u00F6\\u00F8-\\u02FF\\u0370-\\u037D\\u037F-\\u1FFF\\u200C\\u200D\\u2070-\\u218F\\u2C00-\\u2FEF\\u3001-\\uD7FF\\uF900-\\uFDCF\\uFDF0-\\uFFFD\\u{10000}-\\u{EFFFF}'
const NCNAME = `[${START}][${START}\\-.0-9\\u00B7\\u0300-\\u036F\\u203F\\u2040]*`
const QNAME = new RegExp(`(${NCNAME})(?::(${NCNAME}))?`, 'uy')
const PI_TARGET = new RegExp(`${NCNAME}`, 'uy')
const SPACE = /[ \t\r\n]*/y
const NOT_CHAR = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u
const XML_DECL = /<\?xml[ \t\r\n]+version[ \t\r\n]*=[ \t\r\n]*(?:"1\.[0-9]+"|'1\.[0-9]+')(?:[ \t\r\n]+encoding[ \t\r\n]*=[ \t\r\n]*(?:"([A-Za-z][A-Za-z0-9._-]*)"|'([A-Za-z][A-Za-z0-9._-]*)'))?(?:[ \t\r\n]+standalone[ \t\r\n]*=[ \t\r\n]*(?:"(?:yes|no)"|'(?:yes|no)'))?[ \t\r\n]*\?>/y
// a reference: the five predefined entities, or a character reference
const REF = /&(?:(lt|gt|amp|apos|quot)|#([0-9]{1,7})|#x([0-9A-Fa-f]{1,6}));/y
const PREDEFINED = { lt: '<', gt: '>', amp: '&', apos: "'", quot: '"' }

/**
 * Decode a request body: UTF-16 by its byte-order mark, else UTF-8 (invalid
 * sequences refused, not replaced). → { text, encoding } | { error }
 * @param {Uint8Array} bytes
 */
export function decodeBody (bytes) {
  const b = bytes
  let encoding = 'utf-8'
  if (b.length >= 2 && b[0] === 0xff && b[1] === 0xfe) encoding = 'utf-16le'
  else if (b.length >= 2 && b[0] === 0xfe && b[1] === 0xff) encoding = 'utf-16be'
  try {
    // ignoreBOM: false strips the byte-order mark
    return { text: new TextDecoder(encoding, { fatal: true }).decode(b), encoding }
  } catch {
    return { error: `the body is not valid ${encoding.toUpperCase()}` }
  }
}

/**
 * @param {string} text the decoded body (decodeBody)
 * @param {{ encoding?: string, maxDepth?: number }} [o] encoding: what the bytes were, checked against the declaration
 * @returns {{ root: XmlElement } | { error: string }}
 * @typedef {{ ns: string, local: string, children: XmlElement[] }} XmlElement  ns '' is no namespace
 */
export function readXml (text, { encoding = 'utf-8', maxDepth = MAX_DEPTH } = {}) {
  const r = new Reader(text, encoding, maxDepth)
  const root = r.document()
  return root === null ? { error: r.why } : { root }
}

class Reader {
  constructor (s, encoding, maxDepth) {
    this.s = s
    this.i = 0
    this.encoding = encoding
    this.maxDepth = maxDepth
    this.why = null
  }

  fail (why) {
    this.why ??= `${why} (at character ${this.i})`
    return null
  }

  document () {
    const s = this.s
    const bad = NOT_CHAR.exec(s)
    if (bad !== null) { this.i = bad.index; return this.fail(`U+${bad[0].codePointAt(0).toString(16).toUpperCase().padStart(4, '0')} is not allowed in XML`) }
    if (!this.declaration()) return null
    if (!this.misc()) return null
    if (this.i >= s.length) return this.fail('no root element')
    if (s.startsWith('<!DOCTYPE', this.i)) return this.fail('a document type declaration (DTD) is not accepted')
    const root = this.elements()
    if (root === null) return null
    if (!this.misc()) return null
    if (this.i < s.length) return this.fail('content after the root element')
    return root
  }

  /** The XML declaration, only at the very start; its encoding must be what the bytes were. */
  declaration () {
    if (!this.s.startsWith('<?xml', 0) || !/[ \t\r\n?]/.test(this.s[5] ?? '')) return true
    XML_DECL.lastIndex = 0
    const m = XML_DECL.exec(this.s)
    if (m === null) return this.fail('a malformed XML declaration') ?? false
    const enc = (m[1] ?? m[2] ?? '').toLowerCase()
    const utf16 = this.encoding.startsWith('utf-16')
    if (enc !== '' && (utf16 ? enc !== 'utf-16' : !['utf-8', 'utf8', 'us-ascii', 'ascii'].includes(enc))) {
      return this.fail(`the declared encoding ${JSON.stringify(enc)} is not what the body is (${this.encoding.toUpperCase()})`) ?? false
    }
    this.i = XML_DECL.lastIndex
    return true
  }

  /** Whitespace, comments and processing instructions (outside the root element). */
  misc () {
    const s = this.s
    for (;;) {
      this.space()
      if (s.startsWith('<!--', this.i)) { if (!this.comment()) return false } else if (s.startsWith('<?', this.i)) { if (!this.pi()) return false } else return true
    }
  }

  space () {
    SPACE.lastIndex = this.i
    SPACE.exec(this.s)
    const moved = SPACE.lastIndex > this.i
    this.i = SPACE.lastIndex
    return moved
  }

  comment () {
    const end = this.s.indexOf('-->', this.i + 4)
    if (end === -1) return this.fail('an unterminated comment') ?? false
    const body = this.s.slice(this.i + 4, end)
    if (body.includes('--') || body.endsWith('-')) return this.fail('"--" inside a comment') ?? false
    this.i = end + 3
    return true
  }

  pi () {
    PI_TARGET.lastIndex = this.i + 2
    const m = PI_TARGET.exec(this.s)
    if (m === null) return this.fail('a processing instruction without a target') ?? false
    if (m[0].toLowerCase() === 'xml') return this.fail('an XML declaration that is not at the start') ?? false
    const end = this.s.indexOf('?>', PI_TARGET.lastIndex)
    if (end === -1) return this.fail('an unterminated processing instruction') ?? false
    if (end > PI_TARGET.lastIndex && !/[ \t\r\n]/.test(this.s[PI_TARGET.lastIndex])) return this.fail('a malformed processing instruction') ?? false
    this.i = end + 2
    return true
  }

  /** The root element and everything inside it, iteratively (depth bounded). */
  elements () {
    const s = this.s
    const stack = [] // { el, qname, scope }
    let root = null
    do {
      if (stack.length === 0) {
        if (s[this.i] !== '<') return this.fail('no root element')
        const opened = this.startTag(null)
        if (opened === null) return null
        root = opened.el
        if (!opened.empty) stack.push(opened)
        continue
      }
      // content of the innermost open element
      const lt = s.indexOf('<', this.i)
      if (lt === -1) { this.i = s.length; return this.fail(`<${stack.at(-1).qname}> is not closed`) }
      if (!this.text(lt)) return null
      this.i = lt
      if (s.startsWith('</', lt)) {
        if (!this.endTag(stack.pop())) return null
      } else if (s.startsWith('<!--', lt)) {
        if (!this.comment()) return null
      } else if (s.startsWith('<![CDATA[', lt)) {
        const end = s.indexOf(']]>', lt + 9)
        if (end === -1) return this.fail('an unterminated CDATA section')
        this.i = end + 3
      } else if (s.startsWith('<?', lt)) {
        if (!this.pi()) return null
      } else if (s.startsWith('<!', lt)) {
        return this.fail('a declaration inside an element')
      } else {
        if (stack.length >= this.maxDepth) return this.fail(`elements nested deeper than ${this.maxDepth}`)
        const parent = stack.at(-1)
        const opened = this.startTag(parent)
        if (opened === null) return null
        parent.el.children.push(opened.el)
        if (!opened.empty) stack.push(opened)
      }
    } while (stack.length > 0)
    return root
  }

  /** Character data from this.i up to `end`: no "]]>", and every '&' a reference we know. */
  text (end) {
    const t = this.s.slice(this.i, end)
    const cd = t.indexOf(']]>')
    if (cd !== -1) { this.i += cd; return this.fail('"]]>" in character data') ?? false }
    return this.references(t, this.i) !== null
  }

  /** `t` with its references replaced; null (and a reason) when one is not allowed. */
  references (t, at) {
    let out = ''
    let from = 0
    for (let amp = t.indexOf('&'); amp !== -1; amp = t.indexOf('&', from)) {
      REF.lastIndex = amp
      const m = REF.exec(t)
      if (m === null) { this.i = at + amp; return this.fail('an "&" that is not one of &lt; &gt; &amp; &apos; &quot; or a character reference (no DTD, so no other entity)') }
      let c
      if (m[1] !== undefined) c = PREDEFINED[m[1]]
      else {
        const cp = m[2] !== undefined ? Number(m[2]) : parseInt(m[3], 16)
        c = cp <= 0x10ffff ? String.fromCodePoint(cp) : '\u0000'
        if (NOT_CHAR.test(c) || (cp >= 0xd800 && cp <= 0xdfff)) { this.i = at + amp; return this.fail(`a character reference to U+${cp.toString(16).toUpperCase()}, not an XML character`) }
      }
      out += t.slice(from, amp) + c
      from = REF.lastIndex
    }
    return out + t.slice(from)
  }

  /**
   * '<' QName (S Attribute)* S? ('>' | '/>'), with its namespace scope.
   * @returns {{ el: XmlElement, qname: string, scope: Map<string,string>, empty: boolean } | null}
   */
  startTag (parent) {
    const s = this.s
    this.i++ // '<'
    const name = this.qname()
    if (name === null) return this.fail('a malformed element name')
    const attrs = []
    const seen = new Set()
    for (;;) {
      const spaced = this.space()
      if (s.startsWith('/>', this.i) || s[this.i] === '>') break
      if (!spaced) return this.fail(`a malformed start tag <${name.raw}>`)
      const an = this.qname()
      if (an === null) return this.fail(`a malformed attribute in <${name.raw}>`)
      if (seen.has(an.raw)) return this.fail(`attribute ${an.raw} given twice`)
      seen.add(an.raw)
      this.space()
      if (s[this.i] !== '=') return this.fail(`attribute ${an.raw} without a value`)
      this.i++
      this.space()
      const q = s[this.i]
      if (q !== '"' && q !== "'") return this.fail(`attribute ${an.raw}: the value is not quoted`)
      const end = s.indexOf(q, this.i + 1)
      if (end === -1) return this.fail(`attribute ${an.raw}: unterminated value`)
      const rawValue = s.slice(this.i + 1, end)
      if (rawValue.includes('<')) return this.fail(`attribute ${an.raw}: "<" in its value`)
      const value = this.references(rawValue.replace(/[\t\r\n]/g, ' '), this.i + 1)
      if (value === null) return null
      attrs.push({ name: an, value })
      this.i = end + 1
    }
    const empty = s[this.i] === '/'
    this.i += empty ? 2 : 1
    const scope = this.scope(parent?.scope ?? null, attrs)
    if (scope === null) return null
    const ns = this.resolve(scope, name, true)
    if (ns === null) return null
    // expanded attribute names must be unique too (xmlns attributes are declarations, not attributes)
    const expanded = new Set()
    for (const a of attrs) {
      if (isDeclaration(a.name)) continue
      if (a.name.prefix === null) continue // no namespace: the raw-name check covered it
      const ans = this.resolve(scope, a.name, false)
      if (ans === null) return null
      const key = `${ans} ${a.name.local}`
      if (expanded.has(key)) return this.fail(`attribute {${ans}}${a.name.local} given twice`)
      expanded.add(key)
    }
    return { el: { ns, local: name.local, children: [] }, qname: name.raw, scope, empty }
  }

  endTag (open) {
    this.i += 2
    const name = this.qname()
    if (name === null || name.raw !== open.qname) return this.fail(`</${name?.raw ?? ''}> does not close <${open.qname}>`) ?? false
    this.space()
    if (this.s[this.i] !== '>') return this.fail(`a malformed end tag </${name.raw}>`) ?? false
    this.i++
    return true
  }

  /** → { prefix: string|null, local, raw } */
  qname () {
    QNAME.lastIndex = this.i
    const m = QNAME.exec(this.s)
    if (m === null) return null
    this.i = QNAME.lastIndex
    if (this.s[this.i] === ':') return null // a Name, but not a QName (two colons, or a trailing one)
    return m[2] === undefined ? { prefix: null, local: m[1], raw: m[0] } : { prefix: m[1], local: m[2], raw: m[0] }
  }

  /** The element's namespace scope: its parent's, with its own declarations on top (Namespaces 1.0 §3). */
  scope (parentScope, attrs) {
    let scope = parentScope
    for (const { name, value } of attrs) {
      if (!isDeclaration(name)) continue
      scope = scope === parentScope ? new Map(parentScope ?? []) : scope
      if (name.prefix === null) { // xmlns="…": the default namespace, '' undeclares it
        if (value === XML_NS || value === XMLNS_NS) return this.fail(`the default namespace may not be ${value}`)
        scope.set('', value)
        continue
      }
      const p = name.local
      if (value === '') return this.fail(`xmlns:${p}="": a prefix cannot be bound to the empty name (Namespaces in XML 1.0)`)
      if (p === 'xmlns') return this.fail('the prefix xmlns cannot be declared')
      if ((p === 'xml') !== (value === XML_NS)) return this.fail(`the prefix xml belongs to ${XML_NS}, and only to it`)
      if (value === XMLNS_NS) return this.fail(`${XMLNS_NS} cannot be bound to a prefix`)
      scope.set(p, value)
    }
    return scope ?? new Map()
  }

  resolve (scope, name, isElement) {
    if (name.prefix === null) return isElement ? (scope.get('') ?? '') : ''
    if (name.prefix === 'xml') return XML_NS
    if (name.prefix === 'xmlns') return this.fail(`<${name.raw}>: the prefix xmlns is reserved`)
    const ns = scope.get(name.prefix)
    if (ns === undefined) return this.fail(`the prefix ${name.prefix} (in ${name.raw}) is not declared`)
    return ns
  }
}

function isDeclaration (n) { return n.prefix === 'xmlns' || (n.prefix === null && n.local === 'xmlns') }
