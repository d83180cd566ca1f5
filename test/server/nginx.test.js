// Real nginx (/usr/sbin/nginx, or NGINX_PATH) started from `rotree nginx-config`, as the
// test's own process on a loopback port: the headers readers and caches rely
// on, and the verifying client reading a built tree through it.
import { needing, toolPath } from '../helpers/tools.js'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import { existsSync } from 'node:fs'
import path from 'node:path'
import http from 'node:http'
import net from 'node:net'
import { spawn, execFileSync } from 'node:child_process'
import { openTree } from 'rotree-client'
import { decodeRoot } from '../../lib/published/signed-roots.js'
import { tmpdir, writeTree, makeKey, buildTree, prng } from '../helpers/fixtures.js'

const { test, before, after } = needing('nginx')

const NGINX = toolPath('nginx') ?? '/usr/sbin/nginx'
const BIN = new URL('../../bin/rotree.js', import.meta.url).pathname
const skip = existsSync(NGINX) ? false : 'nginx is not installed'

function rotree (args) {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
    let so = ''; let se = ''
    p.stdout.on('data', b => { so += b }); p.stderr.on('data', b => { se += b })
    p.on('error', reject)
    p.on('close', code => resolve({ code, stdout: so, stderr: se }))
  })
}

function freePort () {
  return new Promise((resolve, reject) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => resolve(port)) })
    s.on('error', reject)
  })
}

function connects (port) {
  return new Promise(resolve => {
    const s = net.connect(port, '127.0.0.1', () => { s.end(); resolve(true) })
    s.on('error', () => resolve(false))
  })
}

/**
 * Start nginx in the foreground from a config made by makeConf(port, prefix).
 * The port is picked by binding port 0 and closing; another process may take
 * it in between, so EADDRINUSE means: pick again.
 */
async function startNginx (makeConf) {
  for (let attempt = 0; attempt < 5; attempt++) {
    const port = await freePort()
    const prefix = await tmpdir('rotree-nginx-')
    const conf = path.join(prefix, 'nginx.conf')
    await fs.writeFile(conf, await makeConf(port, prefix))
    const proc = spawn(NGINX, ['-p', prefix, '-c', conf, '-e', path.join(prefix, 'startup.log'), '-g', 'daemon off;'], { stdio: ['ignore', 'ignore', 'pipe'] })
    let stderr = ''
    proc.stderr.on('data', b => { stderr += b })
    const exited = new Promise(resolve => proc.once('exit', resolve))
    const deadline = Date.now() + 10_000
    while (Date.now() < deadline && proc.exitCode === null && !(await connects(port))) await new Promise(resolve => setTimeout(resolve, 50))
    if (proc.exitCode === null && await connects(port)) {
      const stop = async () => {
        if (proc.exitCode === null) { proc.kill('SIGQUIT'); setTimeout(() => proc.kill('SIGKILL'), 5000).unref() }
        await exited
        await fs.rm(prefix, { recursive: true, force: true })
      }
      return { port, prefix, url: `http://127.0.0.1:${port}/`, stop }
    }
    await exited.catch(() => {})
    let log = stderr
    for (const f of ['startup.log', 'error.log']) log += await fs.readFile(path.join(prefix, f), 'utf8').catch(() => '')
    await fs.rm(prefix, { recursive: true, force: true })
    if (!/Address already in use/.test(log)) throw new Error(`nginx did not start: ${log}`)
  }
  throw new Error('no free port after 5 tries')
}

function req (port, p, { method = 'GET', headers = {} } = {}) {
  return new Promise((resolve, reject) => {
    const r = http.request({ host: '127.0.0.1', port, path: p, method, headers, agent: false }, res => {
      const parts = []
      res.on('data', c => parts.push(c))
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(parts) }))
      res.on('error', reject)
    })
    r.on('error', reject)
    r.end()
  })
}

// Started as root, nginx runs its workers as "nobody", which must be able to
// read the tree (mkdtemp makes 0700 folders).
function letNobodyRead (dir) {
  if (process.getuid?.() === 0) execFileSync('chmod', ['-R', 'a+rX', dir])
}

let dir, src, out, key, result, nginx
const files = {
  'index.html': '<h1>served by nginx</h1>\n',
  'docs/guide.md': '# guide\n'.repeat(500),
  'bin/tool': { data: '#!/bin/sh\necho hi\n', mode: 0o755 },
  'data/big.bin': prng(5 << 20, 'big'), // several chunks
  'data/huge.bin': prng(10 << 20, 'huge'), // more than 32 chunks: a chunk index
  'link': { symlink: 'docs/guide.md' }
}

before(async () => {
  if (skip) return
  dir = await tmpdir('rotree-nginx-test-')
  src = path.join(dir, 'src'); out = path.join(dir, 'out')
  await writeTree(src, files)
  key = makeKey()
  ;({ result } = await buildTree(src, { key, out }))
  await fs.writeFile(path.join(out, 'h', '.tmp-0123456789abcdef-abcdef'), 'a half-written blob')
  await fs.mkdir(path.join(out, 'trust'))
  await fs.writeFile(path.join(out, 'trust', '1.json'), '{"type":"rotree-trust"}\n') // served as bytes; readers verify
  await fs.writeFile(path.join(out, 'trust', '.tmp-1'), 'half-written')
  letNobodyRead(dir)
  nginx = await startNginx(async (port, prefix) => {
    const r = await rotree(['nginx-config', out, '--listen', `127.0.0.1:${port}`, '--full', '--prefix', prefix, '--workers', '1'])
    assert.equal(r.code, 0, r.stderr)
    return r.stdout
  })
})
after(async () => {
  await nginx?.stop()
  if (dir) await fs.rm(dir, { recursive: true, force: true })
})

test('blobs: immutable, octet-stream, never compressed, ranges, ETag, CORS', { skip }, async () => {
  const blob = result.root
  const r = await req(nginx.port, `/h/${blob}`, { headers: { 'Accept-Encoding': 'gzip, br' } })
  assert.equal(r.status, 200)
  assert.equal(r.headers['content-type'], 'application/octet-stream')
  assert.equal(r.headers['cache-control'], 'public, max-age=31536000, immutable')
  assert.equal(r.headers['content-encoding'], undefined)
  assert.equal(r.headers['x-content-type-options'], 'nosniff')
  assert.equal(r.headers['access-control-allow-origin'], '*')
  assert.match(r.headers['access-control-expose-headers'], /Content-Range/)
  assert.equal(r.headers['accept-ranges'], 'bytes')
  assert.deepEqual(r.body, await fs.readFile(path.join(out, 'h', blob)))
  assert.ok(r.headers.etag)

  const ranged = await req(nginx.port, `/h/${blob}`, { headers: { Range: 'bytes=2-9' } })
  assert.equal(ranged.status, 206)
  assert.equal(ranged.headers['content-range'], `bytes 2-9/${result.rootSize}`)
  assert.deepEqual(ranged.body, r.body.subarray(2, 10))
  assert.equal(ranged.headers['access-control-allow-origin'], '*')

  const cond = await req(nginx.port, `/h/${blob}`, { headers: { 'If-None-Match': r.headers.etag } })
  assert.equal(cond.status, 304)
  const head = await req(nginx.port, `/h/${blob}`, { method: 'HEAD' })
  assert.equal(head.status, 200); assert.equal(head.body.length, 0); assert.equal(Number(head.headers['content-length']), result.rootSize)
  assert.equal((await req(nginx.port, `/h/${blob}`, { method: 'POST' })).status, 405)
})

test('fsinfo.json: application/json, short caching, CORS', { skip }, async () => {
  const r = await req(nginx.port, '/fsinfo.json', { headers: { 'Accept-Encoding': 'gzip' } })
  assert.equal(r.status, 200)
  assert.equal(r.headers['content-type'], 'application/json')
  assert.equal(r.headers['cache-control'], 'public, max-age=30')
  assert.equal(r.headers['access-control-allow-origin'], '*')
  assert.equal(r.headers['content-encoding'], undefined)
  assert.deepEqual(r.body, await fs.readFile(path.join(out, 'fsinfo.json')))

  // a new root renamed in within the same second, at the same length: nginx's own validators
  // (mtime, size) would call it unchanged, and a cache revalidating would keep the old root
  const file = path.join(out, 'fsinfo.json')
  const old = await fs.readFile(file)
  const st = await fs.stat(file)
  const next = Buffer.from(old.toString().replace(/"seq": (\d+)/, (m, n) => `"seq": ${String(Number(n) + 1).padStart(n.length, '0')}`))
  assert.equal(next.length, old.length)
  await fs.writeFile(file + '.next', next)
  await fs.utimes(file + '.next', st.atime, st.mtime)
  if (process.getuid?.() === 0) await fs.chmod(file + '.next', 0o644)
  await fs.rename(file + '.next', file)
  try {
    const again = await req(nginx.port, '/fsinfo.json', { headers: { 'If-None-Match': r.headers.etag ?? '"x"', 'If-Modified-Since': r.headers['last-modified'] ?? st.mtime.toUTCString() } })
    assert.equal(again.status, 200, 'not a 304 for another root')
    assert.deepEqual(again.body, next)
  } finally {
    await fs.writeFile(file + '.back', old)
    if (process.getuid?.() === 0) await fs.chmod(file + '.back', 0o644)
    await fs.rename(file + '.back', file)
  }
})

test('CORS preflight', { skip }, async () => {
  for (const p of [`/h/${result.root}`, '/fsinfo.json']) {
    const r = await req(nginx.port, p, { method: 'OPTIONS', headers: { Origin: 'https://elsewhere.example', 'Access-Control-Request-Method': 'GET', 'Access-Control-Request-Headers': 'range' } })
    assert.equal(r.status, 204, p)
    assert.equal(r.headers['access-control-allow-origin'], '*')
    assert.match(r.headers['access-control-allow-methods'], /GET/)
    assert.match(r.headers['access-control-allow-headers'], /Range/)
  }
})

test('only fsinfo.json, h/<64 hex>, trust/<seq>.json, history/(index|<seq>).json and log/ are served: everything else is a 404 (with CORS, never stored)', { skip }, async () => {
  const seq = JSON.parse(await fs.readFile(path.join(out, 'fsinfo.json'), 'utf8')).seq
  const paths = ['/', '/h/', '/h/.tmp-0123456789abcdef-abcdef', `/h/${'A'.repeat(64)}`, `/h/${'a'.repeat(63)}`,
    `/h/${'0'.repeat(64)}`, `/h/${result.root}/`, `/h/${result.root}x`, `/history/${seq + 1}.json`, '/history/', '/history/01.json', '/history/.tmp-index-1',
    '/.rotree/build-index/CURRENT', '/unsigned.json', '/fsinfo.json.tmp-1', '/h/../.rotree/build-index/LOCK',
    '/trust/2.json', '/trust/0.json', '/trust/01.json', '/trust/', '/trust/.tmp-1']
  for (const p of paths) {
    const r = await req(nginx.port, p)
    assert.equal(r.status, 404, p)
    assert.equal(r.headers['access-control-allow-origin'], '*', p)
    // a missing blob too: an edge in front must never keep an absence (docs/DEPLOY.md "A CDN in front")
    assert.equal(r.headers['cache-control'], 'no-store', p)
  }
  // history, for rotree log: each signed root as published, and their list
  const hist = await req(nginx.port, `/history/${seq}.json`)
  assert.equal(hist.status, 200)
  assert.equal(hist.headers['content-type'], 'application/json')
  assert.deepEqual(hist.body, await fs.readFile(path.join(out, 'fsinfo.json')))
  const index = await req(nginx.port, '/history/index.json')
  assert.equal(index.status, 200)
  assert.deepEqual(JSON.parse(index.body).seqs, [seq])
  const trust = await req(nginx.port, '/trust/1.json')
  assert.equal(trust.status, 200)
  assert.equal(trust.headers['content-type'], 'application/json')
  assert.equal(trust.headers['cache-control'], 'public, max-age=30')
  assert.equal(trust.headers['access-control-allow-origin'], '*')
  // fsinfo.json missing for a moment (a mirror before its first pull): 404, never stored
  await fs.rename(path.join(out, 'fsinfo.json'), path.join(out, 'fsinfo.json.away'))
  try {
    const gone = await req(nginx.port, '/fsinfo.json')
    assert.equal(gone.status, 404)
    assert.equal(gone.headers['cache-control'], 'no-store')
  } finally { await fs.rename(path.join(out, 'fsinfo.json.away'), path.join(out, 'fsinfo.json')) }
})

test('trust/revoked.json (FORMAT.md §12.12), for a gated gateway: served as fsinfo.json is (short max-age, no validators, CORS); missing, a 404 never stored', { skip }, async () => {
  const file = path.join(out, 'trust', 'revoked.json')
  const gone = await req(nginx.port, '/trust/revoked.json')
  assert.equal(gone.status, 404)
  assert.equal(gone.headers['cache-control'], 'no-store')
  assert.equal(gone.headers['access-control-allow-origin'], '*')
  const list = Buffer.from('{"type":"rotree-revoked","issued":"2030-01-01T00:00:00Z"}\n') // served as bytes; a gateway verifies
  await fs.writeFile(file, list)
  letNobodyRead(out)
  try {
    const r = await req(nginx.port, '/trust/revoked.json', { headers: { 'Accept-Encoding': 'gzip' } })
    assert.equal(r.status, 200)
    assert.deepEqual(r.body, list)
    assert.equal(r.headers['content-type'], 'application/json')
    assert.equal(r.headers['cache-control'], 'public, max-age=30', 'it changes at every revocation: never immutable')
    assert.equal(r.headers['access-control-allow-origin'], '*')
    assert.equal(r.headers['x-content-type-options'], 'nosniff')
    assert.equal(r.headers['content-encoding'], undefined)
    assert.equal(r.headers.etag, undefined)
    // a new list renamed in within the same second at the same length: never a 304
    const st = await fs.stat(file)
    const next = Buffer.from(list.toString().replace('2030', '2031'))
    await fs.writeFile(file + '.next', next)
    await fs.utimes(file + '.next', st.atime, st.mtime)
    if (process.getuid?.() === 0) await fs.chmod(file + '.next', 0o644)
    await fs.rename(file + '.next', file)
    const again = await req(nginx.port, '/trust/revoked.json', { headers: { 'If-None-Match': '*', 'If-Modified-Since': st.mtime.toUTCString() } })
    assert.equal(again.status, 200)
    assert.deepEqual(again.body, next)
    const pre = await req(nginx.port, '/trust/revoked.json', { method: 'OPTIONS', headers: { Origin: 'https://elsewhere.example', 'Access-Control-Request-Method': 'GET' } })
    assert.equal(pre.status, 204)
    for (const p of ['/trust/revoked.json.tmp-1', '/trust/Revoked.json', '/trust/revoked']) assert.equal((await req(nginx.port, p)).status, 404, p)
  } finally { await fs.rm(file, { force: true }) }
})

test('the log (FORMAT.md §13): log/checkpoint, log/fsinfo.proof and partial tiles briefly cached, full tiles for a day; nothing else under log/, no symlink followed', { skip }, async () => {
  const cp = await req(nginx.port, '/log/checkpoint')
  assert.equal(cp.status, 200)
  assert.deepEqual(cp.body, await fs.readFile(path.join(out, 'log', 'checkpoint')))
  assert.equal(cp.headers['content-type'], 'text/plain; charset=utf-8')
  assert.equal(cp.headers['cache-control'], 'public, max-age=30')
  assert.equal(cp.headers['access-control-allow-origin'], '*')
  // the tlog-proof of the current fsinfo.json the publisher wrote beside the checkpoint: served as the checkpoint is
  const proof = await req(nginx.port, '/log/fsinfo.proof')
  assert.equal(proof.status, 200)
  assert.deepEqual(proof.body, await fs.readFile(path.join(out, 'log', 'fsinfo.proof')))
  assert.match(String(proof.body), /^c2sp\.org\/tlog-proof@v1\n/)
  assert.equal(proof.headers['content-type'], 'text/plain; charset=utf-8')
  assert.equal(proof.headers['cache-control'], 'public, max-age=30')
  assert.equal(proof.headers['access-control-allow-origin'], '*')
  const partial = await req(nginx.port, '/log/tile/0/000.p/1') // the one-leaf log's level-0 tile
  assert.equal(partial.status, 200)
  assert.equal(partial.headers['content-type'], 'application/octet-stream')
  assert.equal(partial.headers['cache-control'], 'public, max-age=30')
  const full = path.join(out, 'log', 'tile', '1', 'x001', '000')
  await fs.mkdir(path.dirname(full), { recursive: true })
  await fs.writeFile(full, Buffer.alloc(8192, 7))
  const secretDir = path.join(dir, 'secret-log'); await fs.mkdir(secretDir, { recursive: true })
  await fs.writeFile(path.join(secretDir, '000'), 'secret-tile')
  await fs.symlink(secretDir, path.join(out, 'log', 'tile', '2'))
  try {
    const f = await req(nginx.port, '/log/tile/1/x001/000')
    assert.equal(f.status, 200)
    assert.equal(f.headers['cache-control'], 'public, max-age=86400')
    for (const p of ['/log/', '/log/checkpoint.tmp-1', '/log/fsinfo.proof.tmp-1', '/log/fsinfo-proof', '/log/other', '/log/tile/0/000.p/256', '/log/tile/0/000.p/0', '/log/tile/64/000', '/log/tile/0/0000', '/log/tile/2/000']) {
      const r = await req(nginx.port, p)
      assert.equal(r.status, 404, p)
      assert.equal(r.headers['cache-control'], 'no-store', p)
      assert.ok(!String(r.body).includes('secret-tile'), p)
    }
  } finally {
    await fs.rm(path.join(out, 'log', 'tile', '1'), { recursive: true })
    await fs.rm(path.join(out, 'log', 'tile', '2'))
  }
})

test('a symlink in OUT is never followed: trust/, history/, h/ and fsinfo.json serve nothing outside OUT', { skip }, async () => {
  const secret = path.join(dir, 'secret.json')
  const marker = 'secret-' + Date.now()
  await fs.writeFile(secret, JSON.stringify({ marker }) + '\n')
  const links = [path.join(out, 'trust', '3.json'), path.join(out, 'history', '99.json'), path.join(out, 'h', 'f'.repeat(64))]
  for (const l of links) await fs.symlink(secret, l)
  const real = path.join(out, 'fsinfo.json')
  await fs.rename(real, real + '.away')
  await fs.symlink(secret, real)
  try {
    for (const p of ['/trust/3.json', '/history/99.json', `/h/${'f'.repeat(64)}`, '/fsinfo.json']) {
      const r = await req(nginx.port, p)
      assert.notEqual(r.status, 200, p)
      assert.ok(!String(r.body).includes(marker), `${p}: none of the secret's bytes`)
    }
  } finally {
    await fs.rm(real)
    await fs.rename(real + '.away', real)
    for (const l of links) await fs.rm(l)
  }
  assert.equal((await req(nginx.port, '/fsinfo.json')).status, 200)
})

test('the verifying client reads the whole tree through nginx, and sees a rebuild', { skip, timeout: 60_000 }, async t => {
  const state = path.join(dir, 'state')
  const tree = await openTree(`${nginx.url}#${key.publicKey}`, { stateDir: state }); t.after(() => tree.close())
  for (const [rel, spec] of Object.entries(files)) {
    if (spec.symlink) continue
    const want = typeof spec === 'string' || spec instanceof Uint8Array ? spec : spec.data
    assert.equal(Buffer.compare(Buffer.from(await tree.readFile('/' + rel)), Buffer.from(want)), 0, rel)
  }
  assert.equal(Buffer.from(await tree.readFile('/link')).toString(), files['docs/guide.md'])
  assert.equal((await tree.stat('/bin/tool')).exec, true)
  // a ranged stream across chunk boundaries of the chunk-indexed file
  const parts = []
  for await (const c of tree.createReadStream('/data/huge.bin', { start: 3_000_000, end: 7_999_999 })) parts.push(c)
  assert.equal(Buffer.compare(Buffer.concat(parts), files['data/huge.bin'].subarray(3_000_000, 8_000_000)), 0)

  // publish a new root: nginx serves the new fsinfo.json at once (no stale open file)
  await writeTree(src, { 'index.html': '<h1>v2</h1>\n' })
  // the stand-in trust/1.json of before() is served as bytes but is no trust document: a build into OUT refuses it
  await fs.rm(path.join(out, 'trust'), { recursive: true, force: true })
  await buildTree(src, { key, out })
  letNobodyRead(out)
  assert.equal(await tree.refresh(), true)
  assert.equal(Buffer.from(await tree.readFile('/index.html')).toString(), '<h1>v2</h1>\n')
})

test('a server block under --base /pub/, included in the operator\'s own nginx.conf', { skip, timeout: 60_000 }, async t => {
  const ng = await startNginx(async (port, prefix) => {
    const r = await rotree(['nginx-config', out, '--listen', `127.0.0.1:${port}`, '--base', '/pub/', '--fsinfo-max-age', '5'])
    assert.equal(r.code, 0, r.stderr)
    assert.doesNotMatch(r.stdout, /^\s*(http|events|pid)\b/m)
    await fs.writeFile(path.join(prefix, 'rotree.conf'), r.stdout)
    const tmp = n => `${n}_temp_path ${path.join(prefix, n)};`
    return `pid ${prefix}/nginx.pid; error_log ${prefix}/error.log; worker_processes 1;
events { worker_connections 64; }
http { access_log off; ${['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map(tmp).join(' ')}
  include ${path.join(prefix, 'rotree.conf')};
}\n`
  })
  t.after(ng.stop)
  assert.equal((await req(ng.port, '/fsinfo.json')).status, 404)
  const f = await req(ng.port, '/pub/fsinfo.json')
  assert.equal(f.status, 200); assert.equal(f.headers['cache-control'], 'public, max-age=5')
  assert.equal((await req(ng.port, `/pub/h/${'0'.repeat(64)}`)).status, 404)
  const tree = await openTree(`${ng.url}pub/#${key.publicKey}`, { stateDir: null }); t.after(() => tree.close())
  assert.equal(Buffer.compare(Buffer.from(await tree.readFile('/data/big.bin')), files['data/big.bin']), 0)
})

const rootSkip = skip || (process.getuid?.() !== 0 ? 'needs root (nginx switches its workers\' user only when started as root)' : false)
test('--full generated as root: the workers run as the owner of OUT, so a folder only its owner can read is served', { skip: rootSkip, timeout: 60_000 }, async t => {
  const owner = 'daemon' // an account every Debian system has, that is neither root nor nobody
  const base = await tmpdir('rotree-nginx-owner-'); t.after(() => fs.rm(base, { recursive: true, force: true }))
  await fs.chmod(base, 0o711) // searchable, not readable: the owner needs only to reach OUT
  const own = path.join(base, 'out')
  await buildTree(src, { key, out: own })
  execFileSync('chown', ['-R', `${owner}:${owner}`, own])
  execFileSync('chmod', ['-R', 'go-rwx', own]) // only its owner can read it
  let conf
  const ng = await startNginx(async (port, prefix) => {
    const r = await rotree(['nginx-config', own, '--listen', `127.0.0.1:${port}`, '--full', '--prefix', prefix, '--workers', '1'])
    assert.equal(r.code, 0, r.stderr)
    conf = r.stdout
    return conf
  })
  t.after(ng.stop)
  assert.match(conf, new RegExp(`^user ${owner} ${owner};$`, 'm'))
  assert.doesNotMatch(conf, /# warning/)
  const f = await req(ng.port, '/fsinfo.json')
  assert.equal(f.status, 200, 'nobody would get a 403 here')
  const { root } = decodeRoot(f.body) // either format version's fsinfo.json (FORMAT.md §6, §12.4)
  assert.equal((await req(ng.port, `/h/${root.hash}`)).status, 200)

  // a folder root owns and keeps to itself: no `user root`, and a warning that says what to do
  const mine = path.join(base, 'root-only')
  await fs.mkdir(mine, { mode: 0o700 })
  await fs.mkdir(path.join(mine, 'h'), { mode: 0o700 })
  const r = await rotree(['nginx-config', mine, '--listen', '127.0.0.1:1', '--full', '--prefix', base])
  assert.equal(r.code, 0, r.stderr)
  assert.doesNotMatch(r.stdout, /^user /m)
  assert.match(r.stdout, /^# warning: .*nobody cannot read .*root-only.*chmod -R a\+rX/m)
})

test('nginx-config usage errors exit 2', { skip }, async () => {
  for (const args of [
    ['nginx-config', out],
    ['nginx-config', out, '--listen', '127.0.0.1:80', '--full'],
    ['nginx-config', out, '--listen', 'localhost:99999'],
    ['nginx-config', out, '--listen', '1.2.3.4:80; evil'],
    ['nginx-config', out, '--listen', '80', '--base', '/../x/'],
    ['nginx-config', path.join(dir, 'we"ird'), '--listen', '80'],
    ['nginx-config', out, '--listen', '80', '--prefix', dir]
  ]) {
    const r = await rotree(args)
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`)
  }
})

// The end-to-end check of docs/DEPLOY.md "nginx": a real tree (/usr/share/doc and a ~100 MB binary) served
// by nginx from the generated config and read back verified; then an
// incremental rebuild after a one-line change, and a resign. Opt-in (it reads
// ~230 MB twice): ROTREE_REAL_TREE=1 node --test test/server/nginx.test.js
const real = process.env.ROTREE_REAL_TREE === '1' && existsSync('/usr/share/doc') ? false : 'set ROTREE_REAL_TREE=1 (needs /usr/share/doc)'
test('a real tree through nginx: /usr/share/doc and a 100 MB binary', { skip: skip || real, timeout: 600_000 }, async t => {
  const { build } = await import('../../builder/build.js')
  const { resign } = await import('../../builder/sign.js')
  const rdir = await tmpdir('rotree-real-'); t.after(() => fs.rm(rdir, { recursive: true, force: true }))
  const rsrc = path.join(rdir, 'src'); const rout = path.join(rdir, 'out')
  await fs.mkdir(rsrc, { recursive: true })
  execFileSync('cp', ['-a', '/usr/share/doc', path.join(rsrc, 'doc')])
  await fs.writeFile(path.join(rsrc, 'release.bin'), prng(100 << 20, 'release'))
  const rkey = makeKey()
  await new Promise(resolve => setTimeout(resolve, 3500)) // let the copy age past the racy window
  const one = await build({ src: rsrc, out: rout, key: rkey, ttlMs: 3600e3, fsync: false, onBad: 'skip' })
  t.diagnostic(`built ${one.files} files, ${(one.bytes / 1e6).toFixed(0)} MB, ${one.blobs.written} blobs in ${one.ms} ms; skipped ${one.skipped.length}`)
  // (not chmod -R of SRC: that changes every file's ctime, and the next build would rightly read them all again)
  if (process.getuid?.() === 0) execFileSync('chmod', ['a+rx', rdir])
  letNobodyRead(rout)
  const ng = await startNginx(async (port, prefix) => (await rotree(['nginx-config', rout, '--listen', `127.0.0.1:${port}`, '--full', '--prefix', prefix])).stdout)
  t.after(ng.stop)
  const state = path.join(rdir, 'state')
  const tree = await openTree(`${ng.url}#${rkey.publicKey}`, { stateDir: state }); t.after(() => tree.close())
  let n = 0; let bytes = 0
  async function walk (p) {
    for (const e of await tree.readdir(p, { withFileTypes: true })) {
      const q = p === '/' ? '/' + e.name : p + '/' + e.name
      if (e.type === 'dir') await walk(q)
      else if (e.type === 'file') {
        const got = Buffer.from(await tree.readFile(q))
        assert.equal(Buffer.compare(got, await fs.readFile(path.join(rsrc, q))), 0, q)
        n++; bytes += got.length
      }
    }
  }
  await walk('/')
  t.diagnostic(`read back ${n} files, ${(bytes / 1e6).toFixed(0)} MB, verified, through nginx; ${tree.stats.requests} requests`)
  assert.equal(n, one.files)

  // a one-line change: one file read again, the rest from the build index
  const changed = (await fs.readdir(path.join(rsrc, 'doc'))).find(d => existsSync(path.join(rsrc, 'doc', d, 'copyright')))
  await fs.appendFile(path.join(rsrc, 'doc', changed, 'copyright'), 'one more line\n')
  await new Promise(resolve => setTimeout(resolve, 3500))
  const two = await build({ src: rsrc, out: rout, key: rkey, ttlMs: 3600e3, fsync: false, onBad: 'skip' })
  t.diagnostic(`rebuild after one change: read ${two.index.misses} file(s), encoded ${two.index.dirsEncoded} directories, ${two.blobs.written} new blobs in ${two.ms} ms (full build: ${one.ms} ms)`)
  assert.equal(two.index.misses, 1)
  letNobodyRead(rout)
  assert.equal(await tree.refresh(), true)
  assert.match(Buffer.from(await tree.readFile(`/doc/${changed}/copyright`)).toString(), /one more line\n$/)

  // resign: same root, readers take it
  const r = await resign(rout, rkey, { ttlMs: 7 * 86400e3, fsync: false })
  letNobodyRead(rout)
  assert.equal(await tree.refresh(), false)
  assert.equal(tree.info.seq, r.seq)
})
