// The URL rules both transports share (client-js/src/net/transport-url.js):
// redaction, Basic auth from userinfo, and which redirects a mirror may give.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { redactUrl, basicAuth, redirectPolicy, redirectTarget, MAX_REDIRECTS, redactUrl as fromNode } from 'rotree-client/net'
import { redactUrl as fromWeb } from '../../client-js/src/net/transport-web.js'

test('redactUrl drops userinfo, from URLs that parse and from ones that do not', () => {
  assert.equal(redactUrl('https://alice:pw@mirror.example/pub/'), 'https://mirror.example/pub/')
  assert.equal(redactUrl(new URL('http://alice@127.0.0.1:8080/x?y')), 'http://127.0.0.1:8080/x?y')
  assert.equal(redactUrl('http://mirror.example/'), 'http://mirror.example/')
  assert.equal(redactUrl('http://alice:pw@127.0.0.1:99999/x'), 'http://127.0.0.1:99999/x')
  assert.equal(redactUrl('http://al ice:p w@[::1/x'), 'http://[::1/x')
  assert.equal(fromNode, redactUrl)
  assert.equal(fromWeb, redactUrl)
})

test('basicAuth is what curl sends: percent-decoded user:password, UTF-8, base64', () => {
  assert.equal(basicAuth(new URL('http://a%40b:p%C3%A4ss%3A1@h/')), 'Basic ' + Buffer.from('a@b:päss:1').toString('base64'))
  assert.equal(basicAuth(new URL('http://alice@h/')), 'Basic ' + Buffer.from('alice:').toString('base64'))
  assert.equal(basicAuth(new URL('http://h/')), null)
  assert.throws(() => basicAuth(new URL('http://a:%E0%A4%A@h/')), e => e.code === 'ROTREE_BAD_ADDRESS' && !e.message.includes('%E0'))
})

test('which redirects a mirror may give', () => {
  const none = redirectPolicy()
  const hop = (first, location, policy = none, current = first) => redirectTarget(new URL(first), new URL(current), location, 0, policy, 302)
  const refused = (fn, re) => assert.throws(fn, e => e.code === 'ROTREE_MIRROR_HTTP' && re.test(e.message))

  assert.equal(hop('http://m.example/pub/h/1', '/pub/h/2').href, 'http://m.example/pub/h/2')
  assert.equal(hop('http://m.example/pub/h/1', 'h/3').href, 'http://m.example/pub/h/h/3')
  // the usual "always https" redirect: same host, default ports
  assert.equal(hop('http://m.example/pub/', 'https://m.example/pub/').href, 'https://m.example/pub/')
  refused(() => hop('http://m.example:8080/pub/', 'https://m.example/pub/'), /another origin/)
  refused(() => hop('http://m.example/pub/', 'https://m.example:8443/pub/'), /another origin/)
  refused(() => hop('http://m.example/', 'http://other.example/'), /another origin/)
  refused(() => hop('http://m.example/', 'http://m.example:81/'), /another origin/)
  refused(() => hop('http://127.0.0.1:8080/', 'http://127.0.0.1:22/'), /another origin/)
  refused(() => hop('http://m.example/', 'file:///etc/passwd'), /not an http\(s\) URL/)
  refused(() => hop('http://m.example/', 'http://[::1'), /bad redirect Location/)
  // never https -> http, even when every origin is allowed, even back to the http origin the reader named
  const any = redirectPolicy({ crossOriginRedirects: true })
  refused(() => hop('https://m.example/', 'http://m.example/', any), /from https to http/)
  refused(() => hop('http://m.example/', 'http://m.example/x', any, 'https://m.example/'), /from https to http/)
  assert.equal(hop('http://m.example/', 'https://cdn.example/x', any).href, 'https://cdn.example/x')
  // allowed by origin
  const cdn = redirectPolicy({ allowRedirectOrigins: ['https://cdn.example/ignored/path'] })
  assert.equal(hop('https://m.example/', 'https://cdn.example/h/1', cdn).href, 'https://cdn.example/h/1')
  refused(() => hop('https://m.example/', 'https://cdn.example:444/h/1', cdn), /another origin/)
  // a mirror never chooses credentials
  const next = hop('http://m.example/', 'http://eve:pw@m.example/x')
  assert.equal(next.username + next.password, '')
  // at most MAX_REDIRECTS hops
  refused(() => redirectTarget(new URL('http://m.example/'), new URL('http://m.example/'), '/x', MAX_REDIRECTS, none, 302), /too many redirects/)
  assert.throws(() => redirectPolicy({ allowRedirectOrigins: ['not a url'] }), e => e.code === 'ROTREE_USAGE')
})
