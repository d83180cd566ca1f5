// A plain HTTP client for baselines: node:http with keep-alive, no checks.
import http from 'node:http'

const agent = new http.Agent({ keepAlive: true, maxSockets: 64 })

/** GET url; resolves with the byte count (body discarded) */
export function getBytes (url, headers = {}) {
  return new Promise((resolve, reject) => {
    http.get(url, { agent, headers }, res => {
      let n = 0
      res.on('data', b => { n += b.length })
      res.on('end', () => res.statusCode < 300 ? resolve(n) : reject(new Error(`${url}: ${res.statusCode}`)))
      res.on('error', reject)
    }).on('error', reject)
  })
}

/** Run fn over items with at most n in flight. */
export async function pool (items, n, fn) {
  let i = 0
  await Promise.all(Array.from({ length: Math.min(n, items.length) }, async () => {
    while (i < items.length) { const k = i++; await fn(items[k], k) }
  }))
}
