// DNS rebinding (gateway/host-check.js): a gateway that listens on a loopback
// address answers only a loopback Host, so a page on evil.example whose name
// now resolves to 127.0.0.1 reads nothing; names the operator allows
// (allowHosts, --allow-host) are served too.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import http from 'node:http'
import { serve } from '../helpers/fixtures.js'
import { gateway } from '../../gateway/index.js'
import { hostGuard } from '../../gateway/host-check.js'
import { makeFixture, startGateway, raw, address } from './helpers.js'

const fx = {}
before(async () => {
  Object.assign(fx, await makeFixture({ 'hello.txt': 'hello, world\n' }))
  fx.mirror = await serve(fx.out)
  fx.addr = address(fx.mirror.url, fx.pk)
})
after(async () => { await fx.mirror?.close(); await fx.cleanup?.() })

const get = (url, host, path = '/hello.txt', method = 'GET') => raw(url, path, { method, headers: host === undefined ? {} : { host } })

test('on a loopback address: a rebinding Host gets 421 and not one byte of the tree, for every method; loopback names are served', async t => {
  const gw = await startGateway(t, { tree: fx.addr })
  for (const host of ['evil.example', `evil.example:${gw.port}`, 'evil.localhost.example', '127.0.0.1.evil.example', '10.0.0.1', '[::2]']) {
    for (const [method, path] of [['GET', '/hello.txt'], ['HEAD', '/hello.txt'], ['GET', '/'], ['GET', '/.well-known/rotree/status'], ['PROPFIND', '/'], ['OPTIONS', '/']]) {
      const r = await get(gw.url, host, path, method)
      assert.equal(r.status, 421, `${method} ${path} Host ${host}`)
      assert.equal(r.headers['x-rotree-root'], undefined, 'nothing about the tree either')
      if (method === 'GET') {
        assert.match(r.body.toString(), /loopback/, 'the body says why')
        assert.ok(!r.body.toString().includes('hello, world'))
      }
    }
  }
  // and the loopback's own names and addresses are served, with or without a port
  for (const host of ['localhost', `localhost:${gw.port}`, 'LOCALHOST', 'app.localhost', `127.0.0.1:${gw.port}`, '127.1.2.3', '[::1]', `[::1]:${gw.port}`, undefined]) {
    const r = await get(gw.url, host)
    assert.equal(r.status, 200, `Host ${host}`)
    assert.equal(r.body.toString(), 'hello, world\n')
  }
})

test('allowHosts: the names a proxy or the user uses are served, others still refused; [\'*\'] serves any', async t => {
  const gw = await startGateway(t, { tree: fx.addr, allowHosts: ['files.example.org', 'other.example:8443'] })
  assert.equal((await get(gw.url, 'files.example.org')).status, 200)
  assert.equal((await get(gw.url, 'Files.Example.Org:443')).status, 200, 'any port of an allowed name')
  assert.equal((await get(gw.url, 'other.example:8443')).status, 200, 'a name:port as given')
  assert.equal((await get(gw.url, 'localhost')).status, 200, 'loopback names stay allowed')
  const r = await get(gw.url, 'evil.example')
  assert.equal(r.status, 421)
  assert.match(r.body.toString(), /not one this gateway serves/)
  const any = await startGateway(t, { tree: fx.addr, allowHosts: ['*'] })
  assert.equal((await get(any.url, 'evil.example')).status, 200)
})

test('the address a request arrived on is served as its Host (an address is never a rebinding name); other addresses and names are not', () => {
  const req = (host, localAddress) => ({ headers: { host }, socket: { localAddress } })
  const listed = hostGuard(['files.example.org']) // with a list, the check applies on any address
  assert.equal(listed(req('192.0.2.2:8081', '192.0.2.2')), null) // before: 421 at the URL the CLI prints
  assert.equal(listed(req('192.0.2.2', '::ffff:192.0.2.2')), null, 'an IPv4 client of a dual-stack socket')
  assert.equal(listed(req('[fd00::2]:8081', 'fd00::2')), null)
  assert.equal(listed(req('[FD00:0::2]', 'fd00::2')), null, 'compared as addresses, not as text')
  assert.match(listed(req('192.0.2.3:8081', '192.0.2.2')), /not one this gateway serves/)
  assert.match(listed(req('evil.example', '192.0.2.2')), /not one this gateway serves/)
  // on loopback: 0.0.0.0 is neither a loopback name nor the address a request arrives on
  assert.match(hostGuard(null)(req('0.0.0.0:8081', '127.0.0.1')), /loopback/)
})

test('the Express middleware on a loopback address checks Host the same way', async t => {
  const mw = gateway({ tree: fx.addr, stateDir: null, refreshSeconds: 3600 })
  await mw.ready
  const server = http.createServer((req, res) => mw(req, res))
  await new Promise(resolve => server.listen(0, '127.0.0.1', resolve))
  t.after(async () => { server.closeAllConnections(); await new Promise(resolve => server.close(resolve)); await mw.close() })
  const url = `http://127.0.0.1:${server.address().port}/`
  assert.equal((await get(url, 'evil.example')).status, 421)
  assert.equal((await get(url, 'localhost')).status, 200)
})
