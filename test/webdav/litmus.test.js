// litmus (the WebDAV server test suite, Debian package litmus) against the
// gateway. litmus starts every suite with DELETE and MKCOL of its collection
// and cannot run on a read-only server, so a small front answers exactly
// those two set-up requests (DELETE and MKCOL of /litmus/) and proxies every
// other request, untouched, to the gateway; the tree holds a litmus/ folder
// for the suites to read. Every test that only reads must pass; the tests that
// need a write (PUT, MKCOL of anything else, COPY, MOVE, PROPPATCH, LOCK) fail
// or are skipped, and each is listed in docs/GATEWAY.md ("litmus").
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import http from 'node:http'
import fs from 'node:fs/promises'
import { serve } from '../helpers/fixtures.js'
import { makeFixture, startGateway, run, tmpdir, address } from '../gateway/helpers.js'

import { toolPath, needs } from '../helpers/tools.js'

const LITMUS = toolPath('litmus')
const skip = needs('litmus')

// suite → tests that read only, which must pass
const MUST_PASS = {
  basic: ['init', 'begin', 'options', 'finish'],
  props: ['init', 'begin', 'propfind_invalid', 'propfind_invalid2', 'propfind_d0', 'propextended', 'propwformed', 'propcleanup', 'finish'],
  http: ['init', 'begin', 'finish'],
  copymove: ['init', 'begin', 'finish'],
  locks: ['init', 'begin', 'options'] // then: no class 2, so litmus skips every locking test
}
// the tests that need a write this server refuses by design (docs/GATEWAY.md)
const REFUSED = {
  // put_no_parent, delete_null and mkcol_no_parent pass: a refusal is what they check
  basic: ['put_get', 'put_get_utf8_segment', 'mkcol_over_plain', 'delete', 'delete_fragment', 'mkcol', 'mkcol_again', 'delete_coll', 'mkcol_with_body'],
  // propget reads back what propset wrote with PROPPATCH: litmus skips it when the PROPPATCH is refused
  props: ['propinit', 'propset', 'propget', 'propmove', 'propdeletes', 'propreplace', 'propnullns', 'prophighunicode', 'propremoveset', 'propsetremove', 'propvalnspace', 'propmanyns'],
  copymove: ['copy_init', 'copy_simple', 'copy_overwrite', 'copy_nodestcoll', 'copy_cleanup', 'copy_coll', 'copy_shallow', 'move', 'move_coll', 'move_cleanup'],
  locks: ['precond'], // LOCK: the gateway is class 1, litmus skips the rest of the suite
  http: ['expect100'] // a PUT with Expect: 100-continue; it passes, as the 405 comes without a 100
}

const fx = {}
before(async () => {
  if (skip) return
  Object.assign(fx, await makeFixture({ 'litmus/readme.txt': 'litmus reads here\n', 'hello.txt': 'hello\n' }))
  fx.mirror = await serve(fx.out)
  fx.gw = await startGateway(null, { tree: address(fx.mirror.url, fx.pk) })
  fx.front = await startFront(new URL(fx.gw.url))
  fx.work = await tmpdir('rotree-litmus-')
})
after(async () => {
  await new Promise(resolve => fx.front ? fx.front.close(resolve) : resolve())
  await fx.gw?.close(); await fx.mirror?.close(); await fx.cleanup?.()
  if (fx.work) await fs.rm(fx.work, { recursive: true, force: true })
})

/** The set-up answers (MKCOL and DELETE of /litmus/ only), and a plain proxy to the gateway for the rest. */
function startFront (gw) {
  const server = http.createServer((req, res) => {
    if (req.url === '/litmus/' && (req.method === 'MKCOL' || req.method === 'DELETE')) {
      req.resume()
      res.writeHead(req.method === 'MKCOL' ? 201 : 204, { 'Content-Length': '0' })
      return res.end()
    }
    const up = http.request({ host: gw.hostname, port: gw.port, path: req.url, method: req.method, headers: req.headers, agent: false }, r => {
      res.writeHead(r.statusCode, r.rawHeaders)
      r.pipe(res)
    })
    up.on('error', () => res.destroy())
    req.pipe(up)
  })
  return new Promise(resolve => server.listen(0, '127.0.0.1', () => {
    server.url = `http://127.0.0.1:${server.address().port}/`
    resolve(server)
  }))
}

/**
 * litmus's report → suite → [{ n, name, result }] (result: pass, FAIL, SKIPPED).
 * It prints each test's name twice (a progress line, then after a \r the
 * final one), and a warning pushes the result to a continuation line.
 */
function parseReport (out) {
  const suites = {}
  let suite = null
  let current = null
  for (const m of out.matchAll(/-> running `(\w+)'|(\d+)\. (\w+)\.{2,}|\b(pass|FAIL|SKIPPED)\b/g)) {
    if (m[1]) { suite = m[1]; suites[suite] = []; current = null } else if (m[2]) {
      if (current === null || current.n !== Number(m[2])) { current = { n: Number(m[2]), name: m[3], result: null }; suites[suite].push(current) }
    } else if (current !== null && current.result === null) current.result = m[4]
  }
  return suites
}

test('litmus: every read test passes; only tests that need a write fail or are skipped', { skip, timeout: 180_000 }, async () => {
  const r = await run(LITMUS, ['-k', fx.front.url], { cwd: fx.work, env: { TESTS: 'basic props http copymove locks' }, timeoutMs: 170_000 })
  const report = parseReport(r.stdout)
  const summary = r.stdout.split('\n').filter(l => l.startsWith('<- summary')).join('\n')
  for (const [suite, names] of Object.entries(MUST_PASS)) {
    const got = report[suite]
    assert.ok(got, `litmus ran no ${suite} suite:\n${r.stdout}${r.stderr}`)
    for (const name of names) {
      const t = got.find(x => x.name === name)
      assert.equal(t?.result, 'pass', `${suite}/${name}: ${t?.result}\n${summary}`)
    }
    for (const t of got) {
      if (t.result === 'pass') continue
      assert.ok(REFUSED[suite]?.includes(t.name), `${suite}/${t.name} is ${t.result} but is not a test that needs a write:\n${r.stdout}`)
    }
  }
  const ran = Object.values(report).flat().length
  assert.ok(ran > 60, `litmus ran ${ran} tests`)
})
