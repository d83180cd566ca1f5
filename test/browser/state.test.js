// Rollback state in the browser (IndexedDB) under concurrency: several
// readers of one origin (tabs, or readers in one page) accept roots at once,
// in any order, and the stored highest sequence must still be the highest
// any of them accepted. IndexedDB has no lock of its own; client-js/src/trust/state.js
// takes a Web Lock around each check-and-write.
import { needing } from '../helpers/tools.js'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import http from 'node:http'
import { ensureBundle, launchChromium, BUNDLE } from './helpers.js'

const { test, before, after } = needing('chromium')

let browser, server, origin

before(async () => {
  await ensureBundle()
  const bundle = await fs.readFile(BUNDLE)
  server = http.createServer((req, res) => {
    if (req.url === '/') return res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!doctype html><title>state</title>')
    if (req.url === '/rotree-client.js') return res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' }).end(bundle)
    res.writeHead(404).end()
  })
  await new Promise(resolve => server.listen(0, '127.0.0.1', resolve))
  origin = `http://127.0.0.1:${server.address().port}/`
  browser = await launchChromium()
})

after(async () => {
  await browser?.close()
  server?.closeAllConnections(); server?.close()
})

// In the page: `stores` SeqStores on one database accept sequences 1..n in a
// shuffled order, all at once; a rollback refusal is expected for many of them.
async function race ({ n, stores }) {
  const { SeqStore } = await import('/rotree-client.js')
  const key = 'a'.repeat(64)
  const info = seq => ({ seq, root: { hash: seq.toString(16).padStart(64, '0') } })
  const order = Array.from({ length: n }, (_, i) => i + 1).sort(() => Math.random() - 0.5)
  const s = Array.from({ length: stores }, () => new SeqStore('race-seq'))
  const codes = {}
  await Promise.all(order.map((seq, i) => s[i % stores].accept(key, info(seq)).then(
    () => { codes.ok = (codes.ok ?? 0) + 1 },
    err => { codes[err.code] = (codes[err.code] ?? 0) + 1 })))
  return { stored: (await new SeqStore('race-seq').get(key))?.seq ?? null, codes }
}

test('concurrent accepts in two pages of one origin keep the highest sequence', { timeout: 120_000 }, async () => {
  const context = await browser.newContext()
  try {
    const pages = [await context.newPage(), await context.newPage()]
    for (const p of pages) await p.goto(origin)
    const results = await Promise.all(pages.map(p => p.evaluate(race, { n: 40, stores: 3 })))
    for (const r of results) {
      for (const code of Object.keys(r.codes)) assert.ok(['ok', 'ROTREE_ROLLBACK'].includes(code), JSON.stringify(r.codes))
    }
    const stored = await pages[0].evaluate(async () => {
      const { SeqStore } = await import('/rotree-client.js')
      return (await new SeqStore('race-seq').get('a'.repeat(64)))?.seq
    })
    assert.equal(stored, 40, `stored ${stored} after ${JSON.stringify(results)}`)
  } finally { await context.close() }
})
