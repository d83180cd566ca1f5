// Blobs by hash from other mirrors, without opening their fsinfo.json: fsck
// --repair-from needs only blobs named by DIR's own verified root, and another
// mirror that serves a newer (or expired) root still has the blobs. Every blob
// is checked against the ref that DIR's root gave (fetch.js).
import { parseAddress, mirrorUrl } from 'rotree-client'
import { Mirrors } from 'rotree-client/fetch'
import { createTransport } from 'rotree-client/net'
import { verifyBlob } from 'rotree-client/verify'
import { MAX_BLOB } from 'rotree-client/format'
import { fetchVerified } from './fetch.js'

/**
 * @param {string} address '<mirror-url>#<anchor>[:<name>]': only the mirror URL is used here; the
 *   refs (and, for format version 2, the anchor that trust documents are accepted from) are fsck's
 * @param {{ mirrors?: string[], timeoutMs?: number, concurrency?: number }} [o]
 */
export function blobSource (address, { mirrors = [], timeoutMs = 30_000, concurrency = 8 } = {}) {
  const { url, publicKey } = parseAddress(address)
  const transport = createTransport({ maxSockets: concurrency * 2 })
  const m = new Mirrors([...new Set([url, ...mirrors.map(mirrorUrl)])], { transport, timeoutMs })
  return {
    publicKey,
    mirrors: m,
    /** @returns {Promise<{ value: any, raw: Uint8Array }>} */
    fetch: (ref, kind) => fetchVerified(m, ref, kind),
    /** A blob known only by its name (no ref gives its size): capped at MAX_BLOB, it must hash to the name. */
    fetchByHash: async hash => {
      let raw
      await m.fetch('h/' + hash, MAX_BLOB, async bytes => { await verifyBlob(bytes, { hash, size: bytes.length }); raw = bytes })
      return { value: raw, raw }
    },
    stats: () => ({ ...transport.stats, mirrors: m.health() }),
    close: () => transport.close()
  }
}
