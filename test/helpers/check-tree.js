// Is a published folder complete and valid? fsinfo.json verifies for the key,
// and every blob reachable from its root is present and hashes to its name.
import fs from 'node:fs/promises'
import path from 'node:path'
import { walkTree, verifyFsinfo, verifyDirPage, verifyChunkIndex, verifyBlob } from 'rotree-client'

/** @returns {Promise<{ seq: number, root: string, blobs: number }>} throws when anything is missing or bad */
export async function checkPublished (out, publicKey, { now = Date.now() } = {}) {
  const info = verifyFsinfo(await fs.readFile(path.join(out, 'fsinfo.json')), { publicKey, now })
  const read = ref => fs.readFile(path.join(out, 'h', ref.hash))
  let blobs = 0
  await walkTree(info.root,
    async (ref, kind) => kind === 'dir' ? verifyDirPage(await read(ref), ref) : verifyChunkIndex(await read(ref), ref),
    async (ref, kind) => { blobs++; if (kind === 'data') await verifyBlob(await read(ref), ref) })
  return { seq: info.seq, root: info.root.hash, blobs }
}
