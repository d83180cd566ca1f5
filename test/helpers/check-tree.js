// Is a published folder complete and valid? fsinfo.json verifies for the key,
// and every blob reachable from its root is present and hashes to its name.
// Either format: version 1 under its key; version 2 signed by that single key
// (FORMAT.md §12.5) or by the roles of OUT's own trust/ documents.
import fs from 'node:fs/promises'
import path from 'node:path'
import { walkTree, verifyFsinfo } from 'rotree-client'
import { VERIFIERS, checkFreshness, DEFAULT_SKEW_MS } from 'rotree-client/trust'
import { decodeRoot, rootContext, verifyRoot, checkRootTimes } from '../../lib/published/signed-roots.js'

/** @returns {Promise<{ seq: number, root: string, blobs: number, version: 1|2 }>} throws when anything is missing or bad */
export async function checkPublished (out, publicKey, { now = Date.now() } = {}) {
  const bytes = await fs.readFile(path.join(out, 'fsinfo.json'))
  const current = decodeRoot(bytes)
  let root
  if (current.version === 1) root = verifyFsinfo(bytes, { publicKey, now }).root
  else {
    const ctx = await rootContext(out, { current })
    // a single-key tree must be signed by the key the test gave, not merely by itself
    if (ctx.anchor.kind === 'key' && ctx.anchor.key !== publicKey) throw new Error(`fsinfo.json is signed by ${ctx.anchor.key}, not ${publicKey}`)
    const v = verifyRoot(bytes, ctx)
    checkRootTimes(v, ctx, { now, skewMs: DEFAULT_SKEW_MS, checkFreshness })
    root = v.root
  }
  const read = ref => fs.readFile(path.join(out, 'h', ref.hash))
  let blobs = 0
  await walkTree(root,
    async (ref, kind) => VERIFIERS[kind](await read(ref), ref),
    async (ref, kind) => { blobs++; if (kind === 'data') await VERIFIERS.data(await read(ref), ref) })
  return { seq: current.seq, root: root.hash, blobs, version: current.version }
}
