// A private release's blobs in a published folder, from its manifest
// (FORMAT.md §12.8), with no key: what pull, fsck, gc and `sign --publish`
// check and keep of a private tree. The manifest pages and the keyring are
// plain blobs, verified by hash and exact size as they are read; the blobs
// the manifest lists are checked by their stored size (a stat), or hashed
// with `rehash` (fsck's scrub).
import { VERIFIERS } from 'rotree-client/verify'
import { walkManifest } from 'rotree-client/access'
import { readLocal, missingBlob } from './blob-store.js'
import { localDataFault } from './pages.js'

/** A manifest page's (or the keyring's) bytes from dir/h, verified by hash and exact size. */
export function plainLoader (dir, what = 'manifest page') {
  return async ref => {
    const bytes = await readLocal(dir, ref.hash, ref.size)
    if (bytes === null) throw missingBlob(dir, ref, what)
    return VERIFIERS.data(bytes, { hash: ref.hash, size: ref.size })
  }
}

/**
 * Walk the manifest `top` in dir: every page verified, every listed blob
 * present at its stored size (checkData) or hashed (rehash), `extra` plain
 * blobs (the keyring) verified; the first fault thrown.
 * @param {string} dir @param {{ hash: string, size: number }} top
 * @param {{ extra?: { hash: string, size: number }[], checkData?: boolean, rehash?: boolean,
 *   onBlob?: (b: { hash: string, size: number }) => (void|Promise<void>), onPage?: (ref: object) => void,
 *   load?: (ref: object) => Promise<Uint8Array> }} [o]
 * @returns {Promise<number>} how many blobs the manifest lists
 */
export async function walkLocalManifest (dir, top, { extra = [], checkData = true, rehash = false, onBlob = () => {}, onPage, load = plainLoader(dir) } = {}) {
  for (const ref of extra) await plainLoader(dir, 'keyring')(ref)
  return walkManifest(top, load, async b => {
    if (checkData || rehash) {
      // a sealed blob's hash is of its stored bytes: checked as a plain blob of that size
      const fault = await localDataFault(dir, { hash: b.hash, size: b.size }, { rehash, what: 'a blob of the manifest' })
      if (fault) throw fault
    }
    return onBlob(b)
  }, { onPage, concurrency: 4 })
}
