// The browser client as a reader of the matrix: the real bundle
// (client-js/dist/rotree-client.browser.js) in Debian's Chromium through
// playwright-core (README "Tests"), reading with openTree() and
// readFile() in a page. The page has its own origin (a tiny local server that
// serves one HTML page and the bundle), so both mirrors are cross-origin and
// answer with CORS headers, as `rotree serve` and `rotree nginx-config` do.
//
// One Chromium and one page for the whole run, started on first use. Every
// read starts from nothing the page kept: its origin's storage is cleared
// (Storage.clearDataForOrigin: IndexedDB, where the browser build keeps the
// highest sequence seen per key) and the page is loaded again (no module or
// memory state survives a navigation); the client never uses the HTTP cache
// (cache: 'no-store', transport-web.js). A lie that needs the newer root seen
// first has the page open the tree against `seenAddr` before the read. (A new
// browser context per read gives the same, for a renderer process started
// each time: ~1.2 s a read on a 2-core machine, 87 s of the matrix.) A read
// holds the page until it ends: one that throws (a crashed page) closes its
// context, and one that never ends keeps it, so the next read gets a new one.
// A private tree (FORMAT.md §12.8) is read with the identity's text given to
// openTree() in the page, as the bundle's API takes it; the web app (web/)
// does not ask for one yet, so this column is the bundle's, not the app's.
import http from 'node:http'
import fs from 'node:fs/promises'
import { ensureBundle, launchChromium, BUNDLE } from '../browser/helpers.js'
import { toolPath } from '../helpers/tools.js'

const PAGE = '<!doctype html><meta charset="utf-8"><title>rotree matrix reader</title>\n'

let started = null

/** The browser and the page's origin, started once (a failure is kept, so every cell reports it). */
function _start () {
  started ??= (async () => {
    await ensureBundle()
    const bundle = await fs.readFile(BUNDLE)
    const server = http.createServer((req, res) => {
      if (req.url === '/') return res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE)
      if (req.url === '/rotree-client.js') return res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' }).end(bundle)
      res.writeHead(404).end()
    })
    await new Promise(resolve => server.listen(0, '127.0.0.1', resolve))
    const origin = `http://127.0.0.1:${server.address().port}/`
    let browser
    try {
      browser = await launchChromium()
    } catch (err) {
      server.close()
      throw new Error(`cannot start Chromium (${toolPath('chromium') ?? '/usr/bin/chromium'}, Debian package "chromium"): ${err.message}`, { cause: err })
    }
    return { browser, server, origin, idle: null }
  })()
  return started
}

/** The page the reads share, taken while one reads; a new one when none is idle. */
async function _takeTab (s) {
  const tab = s.idle
  s.idle = null
  if (tab !== null) return tab
  const context = await s.browser.newContext()
  const page = await context.newPage()
  return { context, page, cdp: await context.newCDPSession(page) }
}

/** Close the browser and the page server if they were started. */
export async function closeBrowserReader () {
  if (!started) return
  const s = await started.catch(() => null)
  started = null
  if (!s) return
  await s.browser.close()
  s.server.closeAllConnections()
  await new Promise(resolve => s.server.close(() => resolve()))
}

/**
 * Runs in the page. The bytes go back as base64 (a data: URL of a Blob: fast
 * for the 3 MiB file), all of them, so the Node side checks the exact bytes
 * handed out, not a summary the page computed.
 */
async function _readInPage ({ addr, mirrors, seenAddr, timeoutMs, path, identity }) {
  // what the reads before this one stored is gone (run() cleared it): checked, not assumed
  const left = await indexedDB.databases()
  if (left.length) return { ok: false, code: 'state left by an earlier read', message: left.map(d => d.name).join(', '), b64: '' }
  const { openTree } = await import('/rotree-client.js')
  if (seenAddr) (await openTree(seenAddr, { timeoutMs, identity: identity ?? undefined })).close()
  let bytes
  try {
    const tree = await openTree(addr, { mirrors, timeoutMs, identity: identity ?? undefined })
    try { bytes = await tree.readFile(path) } finally { tree.close() }
  } catch (err) {
    const code = err?.code === 'ROTREE_ALL_MIRRORS_FAILED' && err.errors?.length ? err.errors[0].code : err?.code // as readers.js codeOf
    return { ok: false, code: code ?? `${err?.name}: ${err?.message}`, top: err?.code, message: String(err?.message ?? err), b64: '' }
  }
  const url = await new Promise((resolve, reject) => {
    const r = new FileReader()
    r.onload = () => resolve(r.result)
    r.onerror = () => reject(r.error)
    r.readAsDataURL(new Blob([bytes]))
  })
  return { ok: true, code: null, b64: url.slice(url.indexOf(',') + 1) }
}

export const browserReader = {
  id: 'browser (Chromium)',
  async run ({ addr, mirrors, seenAddr, timeoutS, path, identity = null }) {
    const s = await _start()
    const tab = await _takeTab(s)
    const { context, page, cdp } = tab
    try {
      // leave the last read's document first, so nothing of it holds the database open
      await page.goto('about:blank')
      await cdp.send('Storage.clearDataForOrigin', { origin: s.origin.slice(0, -1), storageTypes: 'all' })
      await page.goto(s.origin)
      const r = await page.evaluate(_readInPage, { addr, mirrors, seenAddr, timeoutMs: timeoutS * 1000, path, identity })
      s.idle = tab
      return { ok: r.ok, code: r.code, top: r.top, message: r.message, out: Buffer.from(r.b64, 'base64') }
    } catch (err) {
      await context.close().catch(() => {})
      throw err
    }
  }
}
