// FORMAT.md §12.8: every blob a private release reaches, from its manifest,
// with no key. What a keyless mirror pulls, fscks, repairs and keeps through
// gc. Each page is checked against what its index promised
// (checkManifestPlacement: its level, its range of handles, its count), so
// an index cannot hide a blob, or list one twice, behind a page.
import { decodeManifestPage, checkManifestPlacement, manifestChildExpectation } from '../format/manifest.js'

/** The path a report gives a blob known only from the manifest (its place in the tree is hidden). */
export const MANIFEST_PATH = '(manifest)'
/** The path of a private tree's keyring. */
export const KEYRING_PATH = '(keyring)'

/**
 * @param {{ hash: string, size: number }} top the release's `manifest`
 * @param {(ref: { hash: string, size: number }) => Promise<Uint8Array>} load a manifest
 *   page's bytes, verified by hash and exact size (VERIFIERS.manifest)
 * @param {(blob: { hash: string, size: number }) => (void|Promise<void>)} onBlob each blob the
 *   manifest lists (size: its stored size), once per walk
 * @param {object} [o]
 * @param {(ref: { hash: string, size: number }) => (void|Promise<void>)} [o.onPage] each manifest
 *   page, before it is loaded (pages are blobs of the release too: a mirror keeps them)
 * @param {(ref: object, err: Error) => void} [o.onLoadError] a page that cannot be loaded or
 *   does not hold what its index promised: skipped with what is below it (else the walk throws)
 * @param {Set<string>} [o.walked] pages already walked ('m' + handle), whose blobs the caller
 *   has: skipped, and filled in (gc walks several roots that share pages)
 * @param {number} [o.concurrency=8] page loads at once
 * @returns {Promise<number>} how many blobs were handed to onBlob
 */
export async function walkManifest (top, load, onBlob, { onPage = () => {}, onLoadError, walked, concurrency = 8 } = {}) {
  let n = 0
  let running = 0
  const waiting = []
  // at most `concurrency` pages loaded at once, across every level
  const slot = async fn => {
    if (running >= concurrency) await new Promise(resolve => waiting.push(resolve))
    running++
    try { return await fn() } finally { running--; waiting.shift()?.() }
  }
  const visit = async (ref, expect) => {
    const key = 'm' + ref.hash
    if (walked?.has(key)) return
    walked?.add(key)
    await onPage(ref)
    // a leaf holds its slot until its blobs are handed on: no more than `concurrency` decoded at once
    let page
    try {
      page = await slot(async () => {
        const p = decodeManifestPage(await load(ref))
        checkManifestPlacement(p, expect)
        if (p.kind === 'leaf') for (const b of p.blobs) { n++; await onBlob(b) }
        return p
      })
    } catch (err) {
      if (!onLoadError || typeof err?.code !== 'string') throw err
      walked?.delete(key)
      onLoadError(ref, err)
      return
    }
    if (page.kind === 'index') await Promise.all(page.children.map((c, i) => visit({ hash: c.hash, size: c.size }, manifestChildExpectation(page, i, expect))))
  }
  await visit({ hash: top.hash, size: top.size }, {})
  return n
}

/**
 * A private release's root as keyless tools hold it (lib/published
 * decodeRoot): `{ hash, size }` of the manifest's top page, `manifest: true`,
 * and the keyring fsinfo.json names (null for a release not yet published).
 * Walked with walkTree's arguments: `onRef(ref, kind, path)` for the keyring
 * ('data'), each manifest page ('manifest', loaded with `load(ref,
 * 'manifest')`) and each blob ('data': a plain ref, its size the stored size).
 * @param {{ hash: string, size: number, manifest: true, keyring: { hash: string, size: number } | null }} root
 * @param {(ref: object, kind: string) => Promise<Uint8Array>} load
 * @param {(ref: object, kind: string, path: string) => (void|Promise<void>)} onRef
 * @param {{ onLoadError?: (ref: object, kind: string, path: string, err: Error) => void, walked?: Set<string>, concurrency?: number }} [o]
 */
export async function walkPrivateRoot (root, load, onRef, { onLoadError, walked, concurrency } = {}) {
  if (root.keyring) await onRef(root.keyring, 'data', KEYRING_PATH)
  await walkManifest(root, ref => load(ref, 'manifest'), b => onRef(b, 'data', MANIFEST_PATH), {
    onPage: ref => onRef(ref, 'manifest', MANIFEST_PATH),
    onLoadError: onLoadError && ((ref, err) => onLoadError(ref, 'manifest', MANIFEST_PATH, err)),
    walked,
    concurrency
  })
}
