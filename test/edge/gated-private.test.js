// docs/DEPLOY.md "A gated private tree behind a caching edge", run as
// written there, with real nginx (`nginx-config --full --gated`), `rotree
// token-server` and Varnish (`varnish-config --gated`) on loopback; the
// changes to each line: the test's ports for 8080, 8082 and 8000, its own
// folders for /srv/origin and /srv/edge, the tree's key for KEY, and varnishd kept in the
// foreground with its state in the test's folder (`-F -j none -n DIR -T
// none`, a 32 MB store). Shown:
//   - the reader with the grant and its identity gets the source's exact bytes;
//   - no grant: ROTREE_NO_ACCESS naming the gated edge, not a mirror fault;
//     a grant without an identity, or with one the keyring does not name:
//     ROTREE_NO_ACCESS naming the identity;
//   - the edge's folders and every byte Varnish served (each blob, fsinfo.json,
//     the log's checkpoint) hold no source file name and none of a sample of
//     16-byte runs of the source files; blobs are sent Cache-Control: private
//     at Padmé sizes (FORMAT.md §12.8), fsinfo.json stays public;
//   - nginx's access log carries each blob request's token expiry, which the
//     token-server's stderr maps to the grant's holder;
//   - a revoked grant gets no new token from a token-server that read the
//     revocation (a fresh one: a running one reads it within a minute), while
//     a token given before still fetches, and another holder's grant is unaffected.
// The walkthrough's text is kept below too: while DEPLOY.md has the section,
// its blocks must equal these; the test runs whichever it finds.
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import { statSync, chmodSync } from 'node:fs'
import path from 'node:path'
import net from 'node:net'
import { spawn, execFileSync } from 'node:child_process'
import { padme, TAG_LEN } from 'rotree-client/format'
import { needing } from '../helpers/tools.js'
import { tmpdir, writeTree, prng } from '../helpers/fixtures.js'
import { freePort, req } from './helpers.js'
import { docRecipe } from '../gateway/helpers.js'

const { test, before, after } = needing('nginx', 'varnishd')
const BIN = new URL('../../bin/rotree.js', import.meta.url).pathname

const WALKTHROUGH = {
  'gated-private-publish': `# the reader: an age identity to decrypt with, and a key to hold a grant with;
# it sends the age1… line of me.recipient and holder.pub to the publisher
rotree keygen --reader me.key > me.recipient
rotree keygen holder.key > holder.pub
# the publisher: its key (a single-key tree's key holds the access role too),
# a private tree for that reader, the edges' secret, a grant for the holder key
rotree keygen tree.key > tree.pub
rotree build ./data OUT --key tree.key --private --reader "$(cat me.recipient)"
rotree grant secret edge.secret
rotree grant issue OUT --to holder.pub --ttl 30d --key tree.key -o me.grant`,
  'gated-private-edge': `rotree token-server --grants edge.secret --tree OUT --port 8082
mkdir -p /srv/origin /srv/edge
rotree nginx-config OUT --listen 127.0.0.1:8080 --full --prefix /srv/origin --gated edge.secret --token-upstream 127.0.0.1:8082 > /srv/origin/nginx.conf
chmod 600 /srv/origin/nginx.conf
nginx -p /srv/origin -c /srv/origin/nginx.conf -e /srv/origin/error.log -g 'daemon off;'
rotree varnish-config --backend 127.0.0.1:8080 --gated > /srv/edge/edge.vcl
varnishd -a :8000 -f /srv/edge/edge.vcl -s malloc,1G`,
  'gated-private-read': `rotree get http://127.0.0.1:8000/#KEY / -o copy --identity me.key --grant me.grant --grant-key holder.key`,
  'gated-private-revoke': `rotree grant revoke OUT me.grant --key tree.key`
}

// the dataset: names that appear nowhere else, bytes that do not compress
const FILES = {
  'confidential-survey/quarterly-report-q3.txt': Buffer.from('Quarterly numbers, not for the public: revenue 1234567, churn 3.2%, the acquisition of Example Corp.\n'.repeat(20)),
  'confidential-survey/field-measurements.bin': prng(300_000, 'measurements'),
  'interview-transcripts.md': prng(40_000, 'transcripts')
}
const NAMES = ['confidential-survey', 'quarterly-report-q3', 'field-measurements', 'interview-transcripts']

// every child runs without the identity, config or reader state of the user running the tests
for (const k of Object.keys(process.env)) if (k.startsWith('ROTREE_')) delete process.env[k]

const fx = { procs: {} }
before(async () => {
  fx.dir = await tmpdir('rotree-gated-private-')
  await writeTree(path.join(fx.dir, 'data'), FILES)
  fx.origin = path.join(fx.dir, 'srv-origin')
  fx.edge = path.join(fx.dir, 'srv-edge')
  fx.vwork = path.join(fx.dir, 'varnish')
  fx.ports = { nginx: await freePort(), tokens: await freePort(), varnish: await freePort() }
  fx.url = `http://127.0.0.1:${fx.ports.varnish}/`
  fx.bin = path.join(fx.dir, 'bin')
  await fs.mkdir(fx.bin)
  await fs.writeFile(path.join(fx.bin, 'rotree'), `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`, { mode: 0o755 })
  fx.env = { ...process.env, PATH: `${fx.bin}:${process.env.PATH}`, HOME: fx.dir, ROTREE_STATE: path.join(fx.dir, 'state') }
})
after(async () => {
  for (const p of Object.values(fx.procs)) await stop(p)
  if (fx.dir) await fs.rm(fx.dir, { recursive: true, force: true })
})

/** A block of the walkthrough: DEPLOY.md's while it has the section (and then equal to the one kept here), else this file's. */
async function block (name) {
  let text = WALKTHROUGH[name]
  const doc = await docRecipe('DEPLOY.md', name).catch(() => null)
  if (doc !== null) { assert.equal(doc, text, `docs/DEPLOY.md's block ${name} changed: change WALKTHROUGH here with it`); text = doc }
  return text.split('\n').filter(l => l.trim() !== '' && !l.startsWith('#'))
}

/** A line with this run's ports, folders and key. */
function ours (line) {
  return line
    .replaceAll('/srv/origin', fx.origin)
    .replaceAll('/srv/edge', fx.edge)
    .replaceAll('127.0.0.1:8080', `127.0.0.1:${fx.ports.nginx}`)
    .replaceAll('127.0.0.1:8082', `127.0.0.1:${fx.ports.tokens}`)
    .replace('--port 8082', `--port ${fx.ports.tokens}`)
    .replace('-a :8000', `-a 127.0.0.1:${fx.ports.varnish}`)
    .replaceAll('http://127.0.0.1:8000/', fx.url)
    .replace('#KEY', '#' + (fx.key ?? 'KEY'))
    .replace(/^varnishd /, `varnishd -F -j none -n ${fx.vwork} -T none `)
    .replace('-s malloc,1G', '-s malloc,32m')
}

function sh (line, { timeoutMs = 60_000 } = {}) {
  return new Promise((resolve, reject) => {
    const p = spawn('sh', ['-c', line], { cwd: fx.dir, env: fx.env, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''; let stderr = ''
    p.stdout.on('data', b => { stdout += b }); p.stderr.on('data', b => { stderr += b })
    const timer = setTimeout(() => p.kill('SIGKILL'), timeoutMs)
    p.on('error', reject)
    p.on('close', code => { clearTimeout(timer); resolve({ code, stdout, stderr }) })
  })
}

async function ok (line) {
  const r = await sh(ours(line))
  assert.equal(r.code, 0, `${ours(line)}\n${r.stderr}`)
  return r
}

const connects = port => new Promise(resolve => {
  const s = net.connect(port, '127.0.0.1', () => { s.end(); resolve(true) })
  s.on('error', () => resolve(false))
})

/** A long-running line of the walkthrough, in the background until `port` accepts. */
async function startLine (name, line, port) {
  const p = spawn('sh', ['-c', 'exec ' + ours(line)], { cwd: fx.dir, env: fx.env, stdio: ['ignore', 'pipe', 'pipe'] })
  const rec = { proc: p, out: '', err: '', exited: new Promise(resolve => p.once('exit', resolve)) }
  p.stdout.on('data', b => { rec.out += b }); p.stderr.on('data', b => { rec.err += b })
  fx.procs[name] = rec
  const deadline = Date.now() + 30_000
  while (p.exitCode === null && Date.now() < deadline && !(await connects(port))) await new Promise(resolve => setTimeout(resolve, 50))
  assert.ok(p.exitCode === null && await connects(port), `${name} did not start: ${ours(line)}\n${rec.out}${rec.err}`)
  return rec
}

async function stop (rec) {
  if (rec.proc.exitCode === null && rec.proc.signalCode === null) {
    rec.proc.kill('SIGTERM')
    const t = setTimeout(() => rec.proc.kill('SIGKILL'), 5000)
    await rec.exited
    clearTimeout(t)
  }
}

/** Started as root, nginx's workers run as nobody: let them read OUT (never OUT/.rotree) and pass the folders above it. */
function openForWorkers (out) {
  if (process.getuid?.() !== 0) return
  execFileSync('find', [out, '-path', path.join(out, '.rotree'), '-prune', '-o', '-exec', 'chmod', 'a+rX', '{}', '+'])
  for (let d = path.dirname(out); d !== path.dirname(d); d = path.dirname(d)) {
    const mode = statSync(d).mode & 0o7777
    if ((mode & 0o001) === 0) chmodSync(d, mode | 0o001)
  }
}

const readLine = async () => (await block('gated-private-read'))[0]

test('the walkthrough: keys, a private tree, a grant, the gated origin and Varnish, and a verified read with grant and identity', { timeout: 180_000 }, async () => {
  for (const line of await block('gated-private-publish')) await ok(line)
  fx.key = (await fs.readFile(path.join(fx.dir, 'tree.pub'), 'utf8')).trim()
  fx.holder = (await fs.readFile(path.join(fx.dir, 'holder.pub'), 'utf8')).trim()
  fx.out = path.join(fx.dir, 'OUT')
  openForWorkers(fx.out)
  const edge = await block('gated-private-edge')
  for (const line of edge) {
    if (line.startsWith('rotree token-server ')) { fx.tokenLine = line; await startLine('tokens', line, fx.ports.tokens) } else if (line.startsWith('nginx ')) await startLine('nginx', line, fx.ports.nginx)
    else if (line.startsWith('varnishd ')) await startLine('varnish', line, fx.ports.varnish)
    else await ok(line)
  }
  assert.equal(Object.keys(fx.procs).length, 3, 'the token-server, nginx and varnishd run')
  const r = await ok(await readLine())
  assert.match(r.stderr + r.stdout, /verified/)
  for (const [name, bytes] of Object.entries(FILES)) assert.ok((await fs.readFile(path.join(fx.dir, 'copy', name))).equals(bytes), name)
})

test('no grant: ROTREE_NO_ACCESS naming the gated edge, not a mirror fault', { timeout: 60_000 }, async () => {
  const line = (await readLine()).replace(' --grant me.grant --grant-key holder.key', '').replace('-o copy', '-o copy-no-grant')
  assert.ok(!line.includes('--grant') && line.includes('--identity'))
  const r = await sh(ours(line))
  assert.equal(r.code, 1, r.stderr)
  assert.match(r.stderr, new RegExp(`^rotree: ROTREE_NO_ACCESS: ${fx.url.replaceAll('.', '\\.')} is a gated edge: [^\\n]*grant[^\\n]*\\n  Give a grant[^\\n]*--grant FILE --grant-key KEYFILE[^\\n]*\\n$`))
  assert.doesNotMatch(r.stderr, /MIRROR_HTTP|ALL_MIRRORS|Check the mirror/)
})

test('a grant without an identity, or with one the keyring does not name: ROTREE_NO_ACCESS naming the identity', { timeout: 60_000 }, async () => {
  const base = (await readLine()).replace(' --identity me.key', '')
  assert.ok(!base.includes('--identity') && base.includes('--grant'))
  let r = await sh(ours(base.replace('-o copy', '-o copy-no-identity')))
  assert.equal(r.code, 1, r.stderr)
  assert.match(r.stderr, /^rotree: ROTREE_NO_ACCESS: the tree is private and no identity was given[^\n]*\n  [^\n]*--identity FILE[^\n]*\n$/)
  await ok('rotree keygen --reader stranger.key > stranger.recipient')
  r = await sh(ours(base.replace('-o copy', '-o copy-stranger') + ' --identity stranger.key'))
  assert.equal(r.code, 1, r.stderr)
  assert.match(r.stderr, /^rotree: ROTREE_NO_ACCESS: [^\n]*\n  [^\n]*\n$/)
  assert.match(r.stderr.split('\n')[0], /this identity is not one of the tree's readers: the keyring holds no epoch key for it/)
  assert.doesNotMatch(r.stderr, /gated edge|refuses this grant/)
})

test('the edge holds ciphertext only: no file name, no 16-byte run of a file, in its folders or in anything Varnish served', { timeout: 120_000 }, async () => {
  const served = []
  const token = (await ok(`rotree grant token me.grant --grant-key holder.key ${fx.url}`)).stdout.trim()
  const fsinfo = await req(fx.ports.varnish, '/fsinfo.json')
  assert.equal(fsinfo.status, 200, 'fsinfo.json is public')
  assert.match(fsinfo.headers['cache-control'], /^public, max-age=\d+$/)
  served.push(fsinfo.body)
  const info = JSON.parse(fsinfo.body)
  const checkpoint = await req(fx.ports.varnish, '/log/checkpoint')
  assert.equal(checkpoint.status, 200, 'the log is public')
  served.push(checkpoint.body)
  const unpadded = new Set([info.access.keyring.hash, info.release.manifest.hash]) // stored as they are (FORMAT.md §12.8)
  const blobs = await fs.readdir(path.join(fx.out, 'h'))
  assert.ok(blobs.length >= 4)
  for (const b of blobs) {
    assert.equal((await req(fx.ports.varnish, `/h/${b}`)).status, 403, 'no token, no blob')
    const r = await req(fx.ports.varnish, `/h/${b}`, { headers: { 'X-Rotree-Token': token } })
    assert.equal(r.status, 200, b)
    assert.match(r.headers['cache-control'], /^private, /, 'a CDN must not keep it for everyone')
    if (!unpadded.has(b)) assert.equal(padme(r.body.length - TAG_LEN), r.body.length - TAG_LEN, `${b}: ${r.body.length} bytes, not a Padmé size`)
    served.push(r.body)
  }
  // the edge's folders: nginx's prefix (config, logs), Varnish's VCL and its state
  const files = []
  for (const d of [fx.origin, fx.edge, fx.vwork]) {
    for (const e of await fs.readdir(d, { recursive: true, withFileTypes: true })) if (e.isFile()) files.push(path.join(e.parentPath ?? e.path, e.name))
  }
  const haystacks = [...served.map((b, i) => ({ what: `served #${i}`, bytes: b }))]
  for (const f of files) haystacks.push({ what: f, bytes: await fs.readFile(f) })
  assert.ok(haystacks.some(h => h.what.endsWith('access.log')), 'nginx logged')
  const runs = sampleRuns(Object.values(FILES), 64)
  for (const bytes of Object.values(FILES)) assert.notEqual(findRun(Buffer.concat([prng(1000, 'x'), bytes]), runs), null, 'the scan finds a file in the clear')
  for (const h of haystacks) {
    for (const n of NAMES) assert.equal(h.bytes.indexOf(n), -1, `${h.what} holds the name ${n}`)
    assert.equal(findRun(h.bytes, runs), null, `${h.what} holds a 16-byte run of a source file`)
  }
})

test('nginx\'s access log gives each blob request the token\'s expiry, which the token-server\'s stderr maps to the holder', { timeout: 30_000 }, async () => {
  const log = path.join(fx.origin, 'access.log')
  const blobLine = /"GET \/h\/[0-9a-f]{64} HTTP\/1\.1" 200 \d+ token_expires=(\d+)$/
  const lines = (await fs.readFile(log, 'utf8')).split('\n').filter(l => blobLine.test(l))
  assert.ok(lines.length >= 4, 'the read and the edge test fetched blobs through nginx')
  const issued = new Map()
  for (const m of fx.procs.tokens.err.matchAll(/^rotree: token for (\S+) to holder ([0-9a-f]{64}), expires (\d+)$/gm)) issued.set(m[3], { tree: m[1], holder: m[2] })
  assert.ok(issued.size >= 1, fx.procs.tokens.err)
  for (const l of lines) {
    const e = blobLine.exec(l)[1]
    assert.ok(issued.has(e), `${l}: an expiry the token-server gave`)
    assert.equal(issued.get(e).holder, fx.holder, l)
    assert.equal(issued.get(e).tree, `${fx.key}:`)
  }
  assert.doesNotMatch(await fs.readFile(log, 'utf8'), /rotree_token/, 'no token in the log')
})

test('a revoked grant: the token-server gives it no new token, a token given before lives out its minutes, another grant is unaffected', { timeout: 90_000 }, async () => {
  const before = (await ok(`rotree grant token me.grant --grant-key holder.key ${fx.url}`)).stdout.trim()
  await ok('rotree keygen colleague.key > colleague.pub')
  await ok('rotree grant issue OUT --to colleague.pub --ttl 1d --key tree.key -o colleague.grant')
  for (const line of await block('gated-private-revoke')) await ok(line)
  // a running token-server reads the list at most a minute (TREE_RECHECK_MS) after it last read OUT: a fresh one reads it at once
  await stop(fx.procs.tokens)
  await startLine('tokens', fx.tokenLine, fx.ports.tokens)
  const t = await sh(ours(`rotree grant token me.grant --grant-key holder.key ${fx.url}`))
  assert.equal(t.code, 1, t.stdout)
  assert.match(t.stderr, /^rotree: ROTREE_NO_ACCESS: [^\n]* refuses this grant: the grant \([0-9a-f]{64}\) is revoked by the tree's access role/)
  const g = await sh(ours((await readLine()).replace('-o copy', '-o copy-revoked')))
  assert.equal(g.code, 1)
  assert.match(g.stderr, /^rotree: ROTREE_NO_ACCESS: [^\n]*is revoked/)
  const blob = (await fs.readdir(path.join(fx.out, 'h')))[0]
  assert.equal((await req(fx.ports.nginx, `/h/${blob}`, { headers: { 'X-Rotree-Token': before } })).status, 200, 'a token given before the revocation, until it expires')
  assert.equal((await sh(ours(`rotree grant token colleague.grant --grant-key colleague.key ${fx.url}`))).code, 0, 'another holder\'s grant')
})

/** `n` 16-byte runs of each buffer, at even steps from its start to its end. */
function sampleRuns (bufs, n) {
  const runs = []
  for (const b of bufs) for (let i = 0; i < n; i++) runs.push(b.subarray(Math.floor(i * (b.length - 16) / (n - 1)), Math.floor(i * (b.length - 16) / (n - 1)) + 16))
  return runs
}

/** The first of `runs` found in `hay` (by a table of their first four bytes, each hit confirmed), or null. */
function findRun (hay, runs) {
  const byHead = new Map()
  for (const r of runs) { const k = r.readUInt32LE(0); if (!byHead.has(k)) byHead.set(k, []); byHead.get(k).push(r) }
  for (let i = 0; i + 16 <= hay.length; i++) {
    const cands = byHead.get(hay.readUInt32LE(i))
    if (cands === undefined) continue
    for (const r of cands) if (hay.compare(r, 0, 16, i, i + 16) === 0) return { at: i, run: r.toString('hex') }
  }
  return null
}
