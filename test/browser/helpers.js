// Shared pieces of the browser suites: Debian's Chromium through
// playwright-core (README "Tests"), the browser bundle built
// once per checkout, and the servers a page talks to.
import fs from 'node:fs/promises'
import { existsSync, statSync, readdirSync } from 'node:fs'
import http from 'node:http'
import path from 'node:path'
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { deflateSync, crc32 } from 'node:zlib'
import { chromium } from 'playwright-core'
import { createRotreeServer } from '../../server/index.js'
import { toolPath } from '../helpers/tools.js'

export const ROOT = fileURLToPath(new URL('../../', import.meta.url))
// ROTREE_WEB_DIR: another copy of web/ to serve (an older commit's, say, to see a new test fail there)
export const WEB = process.env.ROTREE_WEB_DIR ? path.resolve(process.env.ROTREE_WEB_DIR) : path.join(ROOT, 'web')
export const BUNDLE = path.join(ROOT, 'client-js', 'dist', 'rotree-client.browser.js')
export const WEB_BUNDLE = path.join(ROOT, 'web', 'rotree-client.js')

// A name that resolves to 127.0.0.1 but is not "localhost": pages served from
// it are not a secure context, so they have no crypto.subtle (plain http://).
export const INSECURE_HOST = 'insecure.test'

export const CHROMIUM_ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
  `--host-resolver-rules=MAP ${INSECURE_HOST} 127.0.0.1`
]

/** A fresh Chromium (/usr/bin/chromium, or CHROMIUM_PATH) with its own temporary profile (removed when it closes). */
export function launchChromium () {
  return chromium.launch({ executablePath: toolPath('chromium') ?? '/usr/bin/chromium', args: CHROMIUM_ARGS })
}

/** A page whose console errors and crashes are collected (shown when a test fails). */
export async function newPage (browser, { streamToDisk = false } = {}) {
  const context = await browser.newContext({ acceptDownloads: true })
  const page = await context.newPage()
  page.logs = []
  page.on('console', m => page.logs.push(`${m.type()}: ${m.text()}`))
  page.on('pageerror', e => page.logs.push(`pageerror: ${e.message}`))
  if (!streamToDisk) {
    // headless Chromium cannot answer a save dialog: use the Blob path
    await context.addInitScript(() => { delete window.showSaveFilePicker })
  }
  return page
}

// ---- the bundle ----------------------------------------------------------------

function newestMtime (dir) {
  let t = 0
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name)
    t = Math.max(t, e.isDirectory() ? newestMtime(p) : statSync(p).mtimeMs)
  }
  return t
}

function bundleFresh () {
  if (!existsSync(BUNDLE) || !existsSync(WEB_BUNDLE)) return false
  const built = Math.min(statSync(BUNDLE).mtimeMs, statSync(WEB_BUNDLE).mtimeMs)
  const sources = Math.max(newestMtime(path.join(ROOT, 'client-js', 'src')), statSync(path.join(ROOT, 'package.json')).mtimeMs)
  return built >= sources
}

let built = null
/**
 * `npm run build:browser` unless the bundle is newer than every source. Test
 * files run in parallel processes, so the check-and-build is done under a lock
 * directory; a second process then finds the bundle fresh and builds nothing.
 */
export function ensureBundle () {
  built ??= (async () => {
    const lock = path.join(ROOT, 'client-js', '.build-browser.lock')
    for (let i = 0; ; i++) {
      try { await fs.mkdir(lock); break } catch (err) {
        if (err.code !== 'EEXIST') throw err
        const age = Date.now() - (await fs.stat(lock).then(s => s.mtimeMs, () => Date.now()))
        if (age > 120_000) await fs.rm(lock, { recursive: true, force: true }) // left by a killed run
        await new Promise(resolve => setTimeout(resolve, 100))
      }
    }
    try {
      if (bundleFresh()) return
      const r = spawnSync('npm', ['run', '--silent', 'build:browser'], { cwd: ROOT, encoding: 'utf8' })
      if (r.status !== 0) throw new Error(`npm run build:browser failed:\n${r.stdout}\n${r.stderr}`)
    } finally {
      await fs.rm(lock, { recursive: true, force: true })
    }
  })()
  return built
}

// ---- servers -------------------------------------------------------------------

/** `rotree serve DIR --web` in process: the tree and the web app on one origin. */
export async function serveWithWeb (dir, { host = '127.0.0.1' } = {}) {
  const srv = await createRotreeServer({ dir, webRoot: WEB })
  const { url, port } = await srv.listen({ port: 0, host })
  return { url, port, close: () => srv.close({ timeoutMs: 1000 }) }
}

/**
 * The lying server sends no CORS headers; a page on another origin could not
 * read it at all (and would only ever see a network error). Real mirrors send
 * them (rotree nginx-config, rotree serve), so add them in front of its handler.
 */
export function allowCors (liar) {
  liar.server.prependListener('request', (req, res) => res.setHeader('access-control-allow-origin', '*'))
  return liar
}

const STATIC_TYPES = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8', '.json': 'application/json', '.png': 'image/png', '.svg': 'image/svg+xml' }

/** Serve a folder of static files (index.html for '/'); null when the path is not in it. */
export async function readStatic (root, urlPath) {
  let rel
  try { rel = decodeURIComponent(urlPath.split('?')[0]) } catch { return null }
  if (rel.endsWith('/')) rel += 'index.html'
  const file = path.join(root, rel)
  if (!file.startsWith(root + path.sep)) return null
  try {
    return { body: await fs.readFile(file), type: STATIC_TYPES[path.extname(file)] ?? 'application/octet-stream' }
  } catch { return null }
}

/**
 * The web app on its own origin, whose /fsinfo.json and /h/… are forwarded to
 * `upstream` (e.g. a lying server): a static host that serves the app and
 * hostile tree data, so the page's own origin is the liar.
 */
export async function startFront (upstream, { root = WEB } = {}) {
  const up = new URL(upstream)
  const server = http.createServer(async (req, res) => {
    if (req.url === '/fsinfo.json' || req.url.startsWith('/fsinfo.json?') || req.url.startsWith('/h/')) {
      const p = http.get({ host: up.hostname, port: up.port, path: req.url }, r => {
        res.writeHead(r.statusCode, r.headers)
        r.pipe(res)
        r.on('error', () => res.destroy())
      })
      p.on('error', () => res.destroy())
      res.on('close', () => p.destroy())
      return
    }
    const f = await readStatic(root, req.url)
    if (!f) { res.writeHead(404).end('not found'); return }
    res.writeHead(200, { 'content-type': f.type, 'content-length': f.body.length }).end(f.body)
  })
  await new Promise(resolve => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${server.address().port}/`,
    close: () => new Promise(resolve => { server.closeAllConnections(); server.close(() => resolve()) })
  }
}

// ---- content -------------------------------------------------------------------

/** A real PNG of w × h pixels (RGB, noisy so it does not compress below the inline size). */
export function makePng (w, h, seed = 1) {
  const raw = Buffer.alloc((w * 3 + 1) * h)
  let x = seed >>> 0 || 1
  for (let y = 0; y < h; y++) {
    raw[y * (w * 3 + 1)] = 0
    for (let i = 1; i <= w * 3; i++) { x ^= x << 13; x ^= x >>> 17; x ^= x << 5; raw[y * (w * 3 + 1) + i] = (x & 0x3f) + (i % 3 === 1 ? 180 : 40) }
  }
  const chunk = (type, data) => {
    const len = Buffer.alloc(4); len.writeUInt32BE(data.length)
    const td = Buffer.concat([Buffer.from(type), data])
    const crc = Buffer.alloc(4); crc.writeUInt32BE(crc32(td))
    return Buffer.concat([len, td, crc])
  }
  const ihdr = Buffer.alloc(13)
  ihdr.writeUInt32BE(w, 0); ihdr.writeUInt32BE(h, 4); ihdr[8] = 8; ihdr[9] = 2
  return Buffer.concat([Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]), chunk('IHDR', ihdr), chunk('IDAT', deflateSync(raw)), chunk('IEND', Buffer.alloc(0))])
}

/** What a failed page assertion should print: the page's console. */
export function pageLogs (page) { return '\n--- page console ---\n' + (page.logs ?? []).join('\n') }

// ---- the tree most browser suites read ------------------------------------------

export const README_MARKER = 'verified-readme-line'

/** Files of the standard browser fixture, as { path: bytes }. */
export function standardFiles (prng) {
  return {
    'README.md': Buffer.from(Array.from({ length: 600 }, (_, i) => `${README_MARKER} ${i}: every byte checked\n`).join('')), // > 16 KiB (version 2's inline limit): its own blob
    'notes/small.txt': Buffer.from('a small note, inline in its directory\n'),
    'notes/deep/leaf.txt': Buffer.from('leaf\n'),
    'img/logo.png': makePng(120, 80),
    'data.bin': prng(3 << 20, 'browser data') // several chunks, over the preview limit
  }
}

/** Wait until the app has settled on `hash` (shown or refused); returns its state: ok, error or start. */
export async function settled (page, hash, timeout = 20_000) {
  await page.waitForFunction(h => document.body.dataset.shown === h, hash, { timeout })
  return page.evaluate(() => document.body.dataset.state)
}

/**
 * The blobs that hold a file's bytes, in order, read through a Node client
 * `tree` (openTree): each its ref and { start, end } (end exclusive). `hash`
 * names the stored blob h/<hash>: in format version 2 a chunk may be stored
 * deflated, and its name is then the SHA-256 of the stored bytes, not of the
 * file's (FORMAT.md §12.6); `size` is the decoded size. Only for a file
 * stored as a chunk list (FORMAT.md §4.3), which is what the suites tamper.
 */
export async function fileChunks (tree, p) {
  const { entry } = await tree._resolve(await tree._root(), p, true)
  if (!entry.chunks) throw new Error(`${p} is not stored as a chunk list (it is inline, or under a chunk index)`)
  let at = 0
  return entry.chunks.map(c => ({ ...c, start: at, end: (at += c.size) })) // the ref (hash, size, and for version 2 storedSize and codec)
}

/**
 * Words of the visible text under `selector` that the layout broke over two
 * lines. A token (a run without white space) is prose, or a short technical
 * token (an error code, ?mirror=URL): each must stay on one line, except
 * right after a hyphen or a slash. Tokens longer than `long` characters (a
 * 64-hex hash, a URL) may break anywhere and are left out.
 */
export function brokenProse (page, selector, long = 24) {
  return page.$$eval(selector, (els, long) => {
    const broken = []
    for (const e of els) {
      const chars = []
      const walk = document.createTreeWalker(e, NodeFilter.SHOW_TEXT)
      const blockOf = n => { let b = n.parentElement; while (b !== e && getComputedStyle(b).display.startsWith('inline')) b = b.parentElement; return b }
      let block = null
      for (let n = walk.nextNode(); n; n = walk.nextNode()) {
        if (!n.parentElement.getClientRects().length) continue // not shown
        // text in another block is another word, whatever touches it in the markup
        if (blockOf(n) !== block) { block = blockOf(n); chars.push([null, 0, ' ']) }
        for (let i = 0; i < n.data.length; i++) chars.push([n, i, n.data[i]])
      }
      const lines = (a, b) => {
        const r = document.createRange()
        r.setStart(chars[a][0], chars[a][1])
        r.setEnd(chars[b][0], chars[b][1] + 1)
        return new Set([...r.getClientRects()].filter(x => x.width > 0).map(x => Math.round(x.top))).size
      }
      let i = 0
      while (i < chars.length) {
        if (/\s/.test(chars[i][2])) { i++; continue }
        let j = i
        while (j < chars.length && !/\s/.test(chars[j][2])) j++
        const token = chars.slice(i, j).map(c => c[2]).join('')
        if (token.length <= long) {
          // pieces ending in a hyphen or slash: a line may end after one
          let a = i
          for (let k = i; k < j; k++) {
            if (k === j - 1 || /[-/]/.test(chars[k][2])) {
              if (lines(a, k) > 1) { broken.push(token); break }
              a = k + 1
            }
          }
        }
        i = j
      }
    }
    return broken
  }, long)
}
