// PROPFIND bodies as real clients send them, and as the XML and Namespaces
// specifications say they must be read: namespaces are scoped per element
// (neon, hence davfs2 and litmus, declares xmlns="…" on each property), an
// empty prefix binding is an error, a DTD or an unknown entity is refused,
// unknown elements in propfind are ignored (RFC 4918 §17), unknown
// properties come back in a 404 propstat in their own namespace.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { serve } from '../helpers/fixtures.js'
import { makeFixture, startGateway, raw, address } from '../gateway/helpers.js'

const fx = {}
before(async () => {
  Object.assign(fx, await makeFixture({
    'hello.txt': 'hello, world\n',
    'tool.sh': { data: '#!/bin/sh\necho hi\n', mode: 0o755 },
    'docs/a.txt': 'a\n'
  }))
  fx.mirror = await serve(fx.out)
  fx.gw = await startGateway(null, { tree: address(fx.mirror.url, fx.pk) })
})
after(async () => { await fx.gw?.close(); await fx.mirror?.close(); await fx.cleanup?.() })

function propfind (path, body, { depth = '0', headers = {} } = {}) {
  return raw(fx.gw.url, path, { method: 'PROPFIND', headers: { Depth: depth, 'Content-Type': 'application/xml', ...headers }, body })
}

/** The 200 and 404 propstats of the one response in a multistatus. */
function propstats (xml) {
  const stats = [...xml.matchAll(/<D:propstat><D:prop>(.*?)<\/D:prop><D:status>HTTP\/1.1 (\d{3}) [^<]*<\/D:status><\/D:propstat>/g)]
  const of = status => stats.filter(m => m[2] === status).map(m => m[1]).join('')
  return { ok: of('200'), missing: of('404') }
}

// neon 0.32 (davfs2 1.6, litmus 0.13): a default namespace on every element
const NEON = '<?xml version="1.0" encoding="utf-8"?>\n<propfind xmlns="DAV:"><prop>\n' +
  '<resourcetype xmlns="DAV:"/>\n<getcontentlength xmlns="DAV:"/>\n<getetag xmlns="DAV:"/>\n<getlastmodified xmlns="DAV:"/>\n' +
  '<executable xmlns="http://apache.org/dav/props/"/>\n<foo xmlns="http://example.com/neon/litmus/"/>\n</prop></propfind>\n'

test('neon\'s body (davfs2, litmus): each property in its own declared namespace', async () => {
  const r = await propfind('/tool.sh', NEON)
  assert.equal(r.status, 207, r.body.toString())
  const { ok, missing } = propstats(r.body.toString())
  assert.match(ok, /<D:getcontentlength>18<\/D:getcontentlength>/)
  assert.match(ok, /<D:resourcetype\/>/)
  assert.match(ok, /<D:getetag>&quot;[0-9a-f]{64}&quot;<\/D:getetag>/)
  assert.match(ok, /<A:executable xmlns:A="http:\/\/apache.org\/dav\/props\/">T<\/A:executable>/, 'the exec bit, as mod_dav says it')
  assert.equal(missing, '<x:foo xmlns:x="http://example.com/neon/litmus/"/>')

  const plain = propstats((await propfind('/hello.txt', NEON)).body.toString())
  assert.match(plain.ok, />F<\/A:executable>/)
  const dir = propstats((await propfind('/docs/', NEON)).body.toString())
  assert.match(dir.ok, /<D:resourcetype><D:collection\/><\/D:resourcetype>/)
  assert.match(dir.missing, /<D:getcontentlength\/>/, 'a collection has no length')
})

test('a default namespace is scoped to its element; a prefix can be rebound inside', async () => {
  // <b/> is in no namespace: the xmlns="urn:x" of its sibling does not reach it
  let r = await propfind('/hello.txt', '<D:propfind xmlns:D="DAV:"><D:prop><a xmlns="urn:x"/><b/><D:displayname/></D:prop></D:propfind>')
  assert.equal(r.status, 207, r.body.toString())
  let s = propstats(r.body.toString())
  assert.equal(s.ok, '<D:displayname>hello.txt</D:displayname>')
  assert.equal(s.missing, '<x:a xmlns:x="urn:x"/><b xmlns=""/>')

  // the inner D names another namespace: its getetag is not DAV:getetag
  r = await propfind('/hello.txt', '<D:propfind xmlns:D="DAV:"><D:prop><D:getetag xmlns:D="urn:not-dav"/><D:getcontentlength/></D:prop></D:propfind>')
  assert.equal(r.status, 207, r.body.toString())
  s = propstats(r.body.toString())
  assert.equal(s.ok, '<D:getcontentlength>13</D:getcontentlength>')
  assert.equal(s.missing, '<x:getetag xmlns:x="urn:not-dav"/>')

  // a DAV-named property in another namespace is not the DAV one
  s = propstats((await propfind('/hello.txt', '<propfind xmlns="DAV:"><prop><o:getcontentlength xmlns:o="http://owncloud.org/ns"/></prop></propfind>')).body.toString())
  assert.equal(s.ok, '')
  assert.equal(s.missing, '<x:getcontentlength xmlns:x="http://owncloud.org/ns"/>')
})

test('unknown elements inside propfind are ignored (RFC 4918 §17); an empty body is allprop', async () => {
  let r = await propfind('/hello.txt', '<?xml version="1.0" encoding="utf-8" ?><propfind xmlns="DAV:"><foobar/><allprop/></propfind>')
  assert.equal(r.status, 207)
  assert.match(propstats(r.body.toString()).ok, /<D:getcontentlength>13</)
  r = await propfind('/hello.txt', '<propfind xmlns="DAV:"><x:ext xmlns:x="urn:ext"><allprop/></x:ext><propname/></propfind>')
  assert.equal(r.status, 207, 'an allprop inside an unknown element does not count')
  assert.match(propstats(r.body.toString()).ok, /^<D:displayname\/>/)
  r = await propfind('/hello.txt', '')
  assert.equal(r.status, 207)
  assert.match(propstats(r.body.toString()).ok, /<D:getcontentlength>13</)
  // comments, processing instructions, CDATA and character references are XML too
  r = await propfind('/hello.txt', '<?xml version="1.0"?>\n<!-- c --><propfind xmlns="DAV:"><?pi x?><![CDATA[ <not-markup> ]]><prop><getcontentlength>&#x41;&amp;</getcontentlength></prop></propfind>\n<!-- end -->')
  assert.equal(r.status, 207, r.body.toString())
  assert.equal(propstats(r.body.toString()).ok, '<D:getcontentlength>13</D:getcontentlength>')
})

test('UTF-16 with a byte-order mark is read; the encoding it declares must match', async () => {
  const text = '<?xml version="1.0" encoding="UTF-16"?><propfind xmlns="DAV:"><prop><displayname/></prop></propfind>'
  const r = await propfind('/hello.txt', Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]))
  assert.equal(r.status, 207, r.body.toString())
  assert.equal(propstats(r.body.toString()).ok, '<D:displayname>hello.txt</D:displayname>')
  const wrong = await propfind('/hello.txt', '<?xml version="1.0" encoding="ISO-8859-1"?><propfind xmlns="DAV:"><allprop/></propfind>')
  assert.equal(wrong.status, 400)
})

// each must be a 400 whose body says why
const INVALID = {
  'not closed (litmus propfind_invalid)': '<foo>',
  'an empty prefix binding (litmus propfind_invalid2)': '<D:propfind xmlns:D="DAV:"><D:prop><bar:foo xmlns:bar=""/></D:prop></D:propfind>',
  'a DTD': '<!DOCTYPE x [<!ENTITY a "b">]><propfind xmlns="DAV:"><allprop/></propfind>',
  'an external entity': '<!DOCTYPE propfind SYSTEM "file:///etc/passwd"><propfind xmlns="DAV:"><allprop/></propfind>',
  'an undeclared entity': '<propfind xmlns="DAV:"><prop><displayname>&xxe;</displayname></prop></propfind>',
  'a bare ampersand': '<propfind xmlns="DAV:"><prop>a & b</prop></propfind>',
  'a reference to U+0000': '<propfind xmlns="DAV:"><prop>&#0;</prop></propfind>',
  'a control character': '<propfind xmlns="DAV:"><prop>\u0001</prop></propfind>',
  'an undeclared prefix': '<D:propfind xmlns:D="DAV:"><D:prop><x:y/></D:prop></D:propfind>',
  'a prefix declared only on a sibling': '<D:propfind xmlns:D="DAV:"><D:prop><x:a xmlns:x="urn:x"/><x:b/></D:prop></D:propfind>',
  'the xmlns prefix declared': '<propfind xmlns="DAV:" xmlns:xmlns="urn:x"><allprop/></propfind>',
  'the xml prefix rebound': '<propfind xmlns="DAV:" xmlns:xml="urn:x"><allprop/></propfind>',
  'two colons in a name': '<a:b:c xmlns:a="DAV:"/>',
  'an attribute twice': '<propfind xmlns="DAV:" a="1" a="2"><allprop/></propfind>',
  'an expanded attribute twice': '<propfind xmlns="DAV:" xmlns:p="urn:u" xmlns:q="urn:u" p:a="1" q:a="2"><allprop/></propfind>',
  'an unquoted attribute': '<propfind xmlns=DAV:><allprop/></propfind>',
  'mismatched end tag': '<propfind xmlns="DAV:"><allprop></propfind>',
  'a second root': '<propfind xmlns="DAV:"><allprop/></propfind><propfind xmlns="DAV:"/>',
  'text after the root': '<propfind xmlns="DAV:"><allprop/></propfind>x',
  '"--" in a comment': '<propfind xmlns="DAV:"><!-- a -- b --><allprop/></propfind>',
  'an XML declaration not at the start': ' <?xml version="1.0"?><propfind xmlns="DAV:"><allprop/></propfind>',
  'invalid UTF-8': Buffer.from([0x3c, 0x61, 0xff, 0x2f, 0x3e]),
  'nested 40 deep': '<propfind xmlns="DAV:"><prop>' + '<x>'.repeat(40) + '</x>'.repeat(40) + '</prop></propfind>',
  'not DAV:propfind': '<not-dav/>',
  'propfind in no namespace': '<propfind><allprop/></propfind>',
  'both prop and allprop': '<propfind xmlns="DAV:"><allprop/><prop><getetag/></prop></propfind>',
  'none of prop, allprop, propname': '<propfind xmlns="DAV:"><foobar/></propfind>'
}

test('invalid documents are refused with 400 and a reason, never guessed at', async () => {
  for (const [what, body] of Object.entries(INVALID)) {
    const r = await propfind('/hello.txt', body)
    assert.equal(r.status, 400, `${what}: ${r.status} ${r.body.toString().slice(0, 200)}`)
    assert.match(r.body.toString(), /^400 Bad Request\n.+\n$/, what)
    assert.equal(r.headers['cache-control'], 'no-store')
  }
})

test('a body of many small elements up to the 64 KiB bound is read; past it, 413', async () => {
  const props = '<x:p xmlns:x="urn:x"/>'.repeat(2900) // ~64,000 bytes
  const body = `<propfind xmlns="DAV:"><prop>${props}<getetag/></prop></propfind>`
  assert.ok(body.length < 64 * 1024)
  const r = await propfind('/hello.txt', body)
  assert.equal(r.status, 207)
  assert.match(propstats(r.body.toString()).ok, /<D:getetag>/)
  assert.equal((await propfind('/hello.txt', body + ' '.repeat(2000))).status, 413)
})
