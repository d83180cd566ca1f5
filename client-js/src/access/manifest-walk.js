// FORMAT.md §12.8: every blob a private release reaches, from its manifest,
// with no key. What a keyless mirror pulls, fscks, repairs and keeps through
// gc. Each page is checked against what its index promised
// (checkManifestPlacement: its level, its range of handles, its count), so
// an index cannot hide a blob, or list one twice, behind a page.
import { decodeManifestPage, checkManifestPlacement, manifestChildExpectation } from '../format/manifest.js'

/**
 * @param {{ hash: string, size: number }} top the release's `manifest`
 * @param {(ref: { hash: string, size: number }) => Promise<Uint8Array>} load a manifest
 *   page's bytes, verified by hash and exact size (VERIFIERS.data on a plain ref)
 * @param {(blob: { hash: string, size: number }) => (void|Promise<void>)} onBlob each blob the
 *   manifest lists (size: its stored size), once
 * @param {{ onPage?: (ref: { hash: string, size: number }) => void, concurrency?: number }} [o]
 *   onPage: each manifest page (blobs of the release too: a mirror keeps them)
 * @returns {Promise<number>} how many blobs the manifest lists
 */
export async function walkManifest (top, load, onBlob, { onPage = () => {}, concurrency = 8 } = {}) {
  let n = 0
  let running = 0
  const waiting = []
  // at most `concurrency` page loads at once, across every level
  const slot = async fn => {
    if (running >= concurrency) await new Promise(resolve => waiting.push(resolve))
    running++
    try { return await fn() } finally { running--; waiting.shift()?.() }
  }
  const visit = async (ref, expect) => {
    // a leaf holds its slot until its blobs are handed on: no more than `concurrency` decoded at once
    const page = await slot(async () => {
      const p = decodeManifestPage(await load(ref))
      checkManifestPlacement(p, expect)
      onPage(ref)
      if (p.kind === 'leaf') for (const b of p.blobs) { n++; await onBlob(b) }
      return p
    })
    if (page.kind === 'index') await Promise.all(page.children.map((c, i) => visit({ hash: c.hash, size: c.size }, manifestChildExpectation(page, i, expect))))
  }
  await visit({ hash: top.hash, size: top.size }, {})
  return n
}
