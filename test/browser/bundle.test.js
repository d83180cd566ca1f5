// The browser bundle (npm run build:browser): its size budget, that nothing
// from Node reached it, and that it exports the same API as the package entry.
import { test, before } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { gzipSync } from 'node:zlib'
import { pathToFileURL } from 'node:url'
import { builtinModules } from 'node:module'
import * as entry from 'rotree-client'
import { ROOT, BUNDLE, WEB_BUNDLE, ensureBundle } from './helpers.js'

// The budget stated in client-js/README.md: about 1.2× the size measured when
// it was set (97,871 bytes minified, 33,001 gzipped), then raised by what
// format version 2 measured (+18,398 minified, +5,788 gzipped: the trust
// rules, trust documents, fsinfo.json v2, the trust chain and the web codec),
// rounded up to the hundred; then to the measured 136,201 / 46,054 once the
// fetch scheduler (sched.js 5,829 bytes, window.js 2,343) and the redirect
// and credential rules (transport-url.js 1,765) had used the 1.2× headroom,
// plus 500 / 300 bytes for the scheduler's late fixes (sched.js was 5,939
// bytes at 136,309 / 46,096); then to 137,800 minified and 46,900 gzipped (measured 137,226 /
// 46,412) for the history of format-2 trees (verifyHistoryEntryV2, the trust
// documents history.js walks) and the read pipeline's lead ref; then to
// 138,700 / 47,100 (measured 138,099 / 46,677, from 137,288 / 46,452) for
// asking for the root page once a root verifies, the read pipeline's
// stored-bytes accounting, isoString and the deferred import of `level`;
// then to 139,800 / 47,400 (measured 139,175 / 47,149) for lent reads (the
// scheduler's per-request buffer, blobs.js's claims; the pool itself is
// Node only) and the whole-file SHA-256 verdicts (verify.js FileHashVerdicts);
// then to 140,700 / 47,700 (measured 140,147 / 47,432, from 139,325 / 47,199)
// for close() failing what is in flight with ROTREE_ABORTED (sched.js,
// mirrors.js), the reader state read during the fsinfo.json fetch
// (root-store.js, state.js) and verify.js fileHashImplied; then to 141,500 /
// 48,000 (measured 140,879 / 47,740, from 140,214 / 47,455) for parseRange,
// which web/sw.js imports from the bundle instead of its own copy; then to
// 145,300 / 49,600 (measured 144,713 / 49,188, from 140,879 / 47,795) for
// the trust fixes of format 2: trust documents chained by `prev`, releases
// and fsinfo.json bound to their family's anchor, sequences kept by their
// signers, the trust probe beside fsinfo.json, the small-order key check
// (format/public-key.js), history's lone-key rule, the lead chunk held until
// the chunk index confirms it, and the read-ahead's page admission hook.
// then to 161,900 / 55,500 (measured 161,341 / 55,082) for the sealed blobs
// of private trees (FORMAT.md §12.8): AES-256-GCM from @noble/ciphers for the
// pages without WebCrypto (plain http:), Padmé and the sealed-blob opening;
// then to 192,100 / 67,400 (measured 191,455 / 66,639-67,022) for opening a private
// tree's root: the keyring's X25519 (@noble/curves' Montgomery ladder alone),
// ChaCha20-Poly1305 and HKDF, bech32 and base64url (@scure/base), the root
// unwrap (post-quantum identities are read in Node only: age-pq-web.js);
// then to 193,300 / 67,500 (measured 192,734 / 67,019) for a verdict every
// mirror gave reported as itself (unanimousOrAllFailed) and parseIdentities;
// then to 193,900 / 68,100 (measured 193,246 / 67,594, gzipped as this test
// does) for the refresh that waits for mirrors still answering when every
// answer in hand was refused; then to 195,600 / 68,800 (measured 195,071 /
// 68,274, from 193,728 / 67,785) for the trust document's witnesses
// (trust-doc.js, +1,200 / +434) and a tree's wrapTransport hook for a gated
// mirror's edge tokens with the longer ROTREE_NO_ACCESS meaning (+143 / +55;
// gated-transport.js itself is not bundled); then to 209,100 / 74,000
// (measured 208,392 / 73,731, from 195,071 / 68,274) for the witnesses a
// trust document names, required when a tree is opened (trust/witnessed.js
// and the log code of tlog/ it needs, ~11.7 KB minified); then to 214,300 /
// 76,400 (measured 213,709 / 75,788, from 208,578 / 73,801) for gated trees
// in the web app and its Service Worker: gatedTransport and decodeGrant
// exported by the entry (the grant format, the token request and its
// signing, +5,131 / +1,987); then to 217,100 / 77,300 (measured 216,535 /
// 76,769, from 213,709 / 75,788) for one request to the log per open
// (log/fsinfo.proof, FORMAT.md §13): tlog/'s tlog-proof parser and inclusion
// check (+1,460) and witnessed.js's proof path (+1,364); then to 218,100 /
// 77,600 (measured 217,548 / 77,048) for the token exchange's deadline and
// capped answer (gated-transport.js, +1,013); then to 218,400 / 77,700
// (measured 218,295 / 77,307, from 218,040 / 77,227) for the Tree's API for
// tools that keep a published folder (anchor, name, trustDocument, fetchFile,
// fetchFromEveryMirror: +255 / +80).
// Growing past it should be a decision, not an accident.
const BUDGET_BYTES = 218_400
const BUDGET_GZIP_BYTES = 77_700

before(ensureBundle)

test('the bundle stays within its size budget', async () => {
  const bytes = await fs.readFile(BUNDLE)
  const gz = gzipSync(bytes, { level: 9 }).length
  assert.ok(bytes.length <= BUDGET_BYTES, `bundle is ${bytes.length} bytes, budget ${BUDGET_BYTES} (client-js/README.md)`)
  assert.ok(gz <= BUDGET_GZIP_BYTES, `bundle is ${gz} bytes gzipped, budget ${BUDGET_GZIP_BYTES}`)
  assert.ok((await fs.readFile(WEB_BUNDLE)).equals(bytes), 'web/rotree-client.js is the same build')
})

test('no Node built-in reaches the browser build; level resolves to IndexedDB', async () => {
  const meta = JSON.parse(await fs.readFile(path.join(ROOT, 'client-js', 'dist', 'meta.json'), 'utf8'))
  const inputs = Object.keys(meta.inputs)
  const builtins = new Set(builtinModules.flatMap(m => [m, 'node:' + m]))
  for (const [file, { imports }] of Object.entries(meta.inputs)) {
    for (const imp of imports) {
      assert.ok(!imp.external, `${file} imports ${imp.path} as external`)
      assert.ok(!builtins.has(imp.path) && !imp.path.startsWith('node:'), `${file} imports the Node built-in ${imp.path}`)
    }
  }
  const has = p => inputs.some(i => i.includes(p))
  assert.ok(has('client-js/src/platform/platform-web.js') && has('client-js/src/net/transport-web.js') && has('client-js/src/crypto/sha256-web.js'))
  assert.ok(!has('platform-node.js') && !has('transport-node.js') && !has('sha256-node.js'), 'no Node variant')
  assert.ok(has('node_modules/level/browser.js') && has('node_modules/browser-level/'), 'level → browser-level (its "browser" field)')
  assert.ok(!has('classic-level'), 'no classic-level (LevelDB bindings)')
  assert.ok(!has('node_modules/buffer/'), 'no Buffer polyfill: abstract-level runs without Buffer')
})

test('the bundle exports the same API as the package entry', async () => {
  const bundle = await import(pathToFileURL(BUNDLE).href)
  assert.deepEqual(Object.keys(bundle).sort(), Object.keys(entry).sort())
  // and is ESM, minified: one line of code, no sourcemap comment pointing at local paths
  const text = await fs.readFile(BUNDLE, 'utf8')
  assert.ok(/\bexport\s*\{/.test(text))
  assert.ok(!text.includes(ROOT), 'no local paths in the bundle')
})

test('the EventEmitter stand-in behaves like Node\'s for what abstract-level needs', async () => {
  const { EventEmitter } = await import('../../client-js/src/platform/platform-web.js')
  const { EventEmitter: NodeEE } = await import('node:events')
  const scenario = E => {
    const e = new E()
    const log = []
    e.on('newListener', n => log.push('new ' + n))
    e.on('removeListener', n => log.push('removed ' + n))
    const f = x => log.push('f ' + x)
    e.on('write', f)
    e.once('write', x => log.push('once ' + x))
    log.push('count ' + e.listenerCount('write'))
    e.emit('write', 1)
    e.emit('write', 2)
    e.off('write', f)
    log.push('count ' + e.listenerCount('write'), 'emit ' + e.emit('write', 3))
    try { e.emit('error', new Error('boom')) } catch (err) { log.push('threw ' + err.message) }
    return log
  }
  const ours = scenario(EventEmitter)
  assert.deepEqual(ours, scenario(NodeEE))
  assert.ok(ours.includes('threw boom') && ours.includes('once 1') && !ours.includes('once 2'))
})
