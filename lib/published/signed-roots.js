// The signed roots of a published folder, read from its own disk, for the
// tools that check or keep them (pull, fsck, gc, push): fsinfo.json and
// history/<seq>.json of either format version and, for version 2, the trust
// documents in trust/<seq>.json they are signed under (FORMAT.md §12.2,
// §12.4). Every decision is the reader's (client-js/src/trust/verify.js,
// client-js/src/trust/roles.js); what this module adds is where the bytes
// come from, and that it checks signatures without the clock: an old root's
// age is no reason to doubt who signed it (docs/TRUST.md rule 17). Tools
// that judge freshness say so (fsck's check of the current root).
//
// What a folder's roots are checked against (a "context"):
//   given      the anchor and name of an address (FORMAT.md §12.5), as a
//              reader takes them: the user's, never the folder's;
//   self       no address: the folder's own claims, checked for consistency
//              only (the anchor is trust document 1's hash, or the key that
//              signed a single-key fsinfo.json; the name is fsinfo.json's).
import fs from 'node:fs/promises'
import path from 'node:path'
import { verifyFsinfoSignature } from 'rotree-client/verify'
import { ThresholdError, BadFormatError } from 'rotree-client/errors'
import { decodeFsinfo, fsinfoVersion, decodeFsinfoV2, decodeTrustDoc, MAX_TRUST_DOC, keylessRoot } from 'rotree-client/format'
import { trustHash, verifyFsinfoV2, verifyHistoryEntryV2, checkLoneKey, parseFragment, walkChain } from 'rotree-client/trust'
import { readRegular } from '../open-regular.js'

export const TRUST_DIR = 'trust'
const TRUST_NAME = /^([1-9][0-9]{0,15})\.json$/

/** The format version of a signed fsinfo.json text (FORMAT.md §6.1), or a typed error. */
export function versionOf (bytes) { return fsinfoVersion(bytes) }

/**
 * Decode (not verify) an fsinfo.json of either version into the fields the
 * tools use: { version, seq, root (ref; version 2: the release root, with its
 * codec), name, trust, info }.
 */
export function decodeRoot (bytes) {
  if (fsinfoVersion(bytes) !== 2) {
    const info = decodeFsinfo(bytes)
    return { version: 1, seq: info.seq, root: info.root, name: '', trust: null, key: info.key, info }
  }
  const info = decodeFsinfoV2(bytes)
  // a private release: its manifest and keyring, which need no key (FORMAT.md §12.8)
  return { version: 2, seq: info.seq, root: keylessRoot(info.release, info.access), name: info.name, trust: info.trust, key: null, info }
}

/**
 * The trust documents in dir/trust, each accepted as a reader accepts it
 * (acceptTrustStep, docs/TRUST.md rule 10) from the anchor on, as far as
 * the chain holds. `anchor` null: the folder's own (self-consistency only,
 * the anchor being document 1's hash).
 * @param {string} dir @param {{ kind: 'key', key: string } | { kind: 'trust', hash: string } | null} anchor
 * @returns {Promise<{ docs: object[], highest: number, fault: { seq: number, code: string, message: string, missing?: boolean, err?: Error } | null, anchor: object|null }>}
 *   docs[i] is document i + 1 (decoded, with `text` and `bytes`); highest: the highest seq present
 *   in trust/; fault: the first document that is missing (below `highest`) or does not verify
 */
export async function readTrustChain (dir, anchor) {
  let names = []
  try { names = await fs.readdir(path.join(dir, TRUST_DIR)) } catch (err) { if (err.code !== 'ENOENT') throw err }
  const highest = Math.max(0, ...names.map(n => TRUST_NAME.exec(n)).filter(Boolean).map(m => Number(m[1])))
  const out = { docs: [], highest, fault: null, anchor }
  const fault = (n, err) => { out.fault = { seq: n, code: err.code, message: `${TRUST_DIR}/${n}.json: ${err.message}`, err } }
  try {
    // self: the folder's own document 1 is the anchor (consistency from there on)
    if (highest > 0 && out.anchor === null) {
      const first = await readRegular(trustFile(dir, 1), MAX_TRUST_DOC)
      if (first !== null) out.anchor = { kind: 'trust', hash: trustHash(decodeTrustDoc(first)) }
    }
    await walkChain(folderTrustSource(dir), { anchor: out.anchor, to: highest, onStep: d => { out.docs.push(d) } })
  } catch (err) {
    if (typeof err.code !== 'string' || !err.code.startsWith('ROTREE_')) throw err
    fault(out.docs.length + 1, err)
    return out
  }
  const n = out.docs.length + 1
  if (n <= highest) out.fault = { seq: n, code: 'ROTREE_NOT_FOUND', message: `${TRUST_DIR}/${n}.json is missing, but ${TRUST_DIR}/${highest}.json is there: the chain is broken`, missing: true }
  return out
}

const trustFile = (dir, n) => path.join(dir, TRUST_DIR, `${n}.json`)

/**
 * dir/trust/<n>.json as a source of the reader's chain walk (client-js
 * walkChain): a regular file only, never through a link or from a FIFO
 * (lib/open-regular.js); null when there is none.
 * @param {string} dir @returns {import('rotree-client/trust').TrustSource}
 */
export function folderTrustSource (dir) {
  return {
    async get (n, accept) {
      const bytes = await readRegular(trustFile(dir, n), MAX_TRUST_DOC)
      return bytes === null ? null : accept(bytes)
    }
  }
}

/**
 * The context a folder's roots are checked against. `given`: { anchor, name }
 * from an address; without it, the folder's own (self-asserted) claims from
 * its current fsinfo.json (`current`, decodeRoot's value) and trust/.
 * @returns {Promise<{ anchor: object|null, name: string, self: boolean, chain: Awaited<ReturnType<typeof readTrustChain>> }>}
 */
export async function rootContext (dir, { given = null, current = null } = {}) {
  if (given) return { anchor: given.anchor, name: given.name ?? '', self: false, chain: await readTrustChain(dir, given.anchor) }
  // the anchor the folder's fsinfo.json names (FORMAT.md §12.4), as version 1's key is the one
  // inside its fsinfo.json; without one, its own trust/1.json's hash (readTrustChain)
  const named = current?.version === 2 ? parseFragment(current.info.anchor).anchor : current?.version === 1 ? { kind: 'key', key: current.key } : null
  const chain = await readTrustChain(dir, named)
  return { anchor: chain.anchor, name: current?.name ?? '', self: true, chain }
}

/**
 * A signed root of either version checked against a context, without the
 * clock: version 1 by verifyFsinfoSignature (the anchor's key), version 2 by
 * verifyHistoryEntryV2 (the trust module's clock-free check) under the
 * trust document it names, which the local chain must hold (docs/TRUST.md
 * rules 10–12, 14; rule 2's times are left to the caller: checkRootTimes).
 * Throws the reader's typed error.
 * @returns {{ version: 1|2, seq: number, root: object, name: string, trust: object|null, raw: Uint8Array, info: object, roles?: object }}
 */
export function verifyRoot (bytes, ctx) {
  if (!ctx.anchor) throw new ThresholdError('no anchor to check fsinfo.json against: no trust/1.json, no signature, no key')
  const r = decodeRoot(bytes)
  const newest = ctx.chain.docs.at(-1) ?? null // a key the chain dropped vouches for nothing (rule 17)
  if (r.version === 1) {
    const info = verifyFsinfoSignature(bytes, { publicKey: ctx.anchor.kind === 'key' ? ctx.anchor.key : null, name: ctx.name })
    checkLoneKey(ctx.anchor, newest, `fsinfo.json seq ${r.seq} (a version-1 root)`)
    return { ...r, info, raw: bytes }
  }
  let trust = null
  if (r.trust !== null) {
    trust = ctx.chain.docs[r.trust.seq - 1] ?? null
    if (trust === null) {
      const why = ctx.chain.fault ? ctx.chain.fault.message : `${TRUST_DIR}/ holds documents up to ${ctx.chain.highest} only`
      throw new ThresholdError(`fsinfo.json seq ${r.seq} names trust document ${r.trust.seq}, which is not in a chain this folder holds from the anchor (${why}): its signatures cannot be counted`)
    }
  }
  const { roles, signers } = verifyHistoryEntryV2(r.info, { anchor: ctx.anchor, name: ctx.name, trust, newest })
  return { ...r, raw: bytes, trustDoc: trust, roles, signers }
}

/**
 * The same root judged with the clock as a reader judges it (docs/TRUST.md
 * rule 2 for version 1; rules 2 and 14 for version 2, against the trust
 * document it names). For a root verifyRoot() accepted.
 * @param {ReturnType<typeof verifyRoot>} v @param {{ anchor: object, name: string }} ctx
 * @param {{ now: number, skewMs: number, graceMs?: number, checkFreshness: Function }} o
 */
export function checkRootTimes (v, ctx, { now, skewMs, graceMs = 0, checkFreshness }) {
  if (v.version === 1) return checkFreshness(v.info, { now, skewMs, graceMs })
  verifyFsinfoV2(v.info, { anchor: ctx.anchor, name: ctx.name, trust: v.trustDoc, now, skewMs, graceMs, checkFreshness })
}

/**
 * A history entry (historyEntries()) checked against a context: verifyRoot,
 * and filed under its own seq.
 */
export function verifyHistoryRoot (h, ctx) {
  if (h.error) throw h.error
  const v = verifyRoot(h.raw, ctx)
  if (v.seq !== h.seq) throw new BadFormatError(`history/${h.seq}.json holds seq ${v.seq}`)
  return v
}
