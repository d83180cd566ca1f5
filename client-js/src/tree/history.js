// A tree's history as a reader sees it (`rotree log`): the signed roots the
// mirror's folder published, listed by history/index.json and each verified
// by verify.js's verifyHistoryEntry (docs/TRUST.md rule 17). Nothing here
// touches the tree's root store or rollback state: an old root is shown,
// never adopted.
import { verifyHistoryEntry } from '../trust/verify.js'
import { BadFormatError, WrongKeyError, NotFoundError } from '../errors.js'
import { decodeUtf8 } from '../format/bytes.js'
import { fsinfoVersion, decodeFsinfoV2, MAX_FSINFO_V2 } from '../format/fsinfo-v2.js'
import { verifyHistoryEntryV2, checkLoneKey, anchorText } from '../trust/roles.js'
import { walkChain, mirrorTrustSource } from '../trust/trust-chain.js'
import { rootRecordV2, openPrivateRecord } from '../trust/root-store.js'

/** Bytes of history/index.json a reader takes: ~90,000 sequence numbers (years of hourly re-signing). */
export const MAX_HISTORY_INDEX = 1 << 20

/**
 * The newest `limit` entries of a tree's history, newest first, from its
 * mirrors: { seq, ok: true, info } for an entry that verifies, { seq, ok:
 * false, code, message } for one that does not.
 * @param {import('./tree.js').Tree} tree an open tree (its mirrors and key)
 * @param {{ limit?: number }} [o]
 * @returns {Promise<{ total: number, entries: object[] }>} total: entries the index lists
 */
export async function treeHistory (tree, { limit = 20 } = {}) {
  const seqs = await tree.mirrors.fetch('history/index.json', MAX_HISTORY_INDEX, parseIndex)
  const entries = []
  const verify = historyVerifier(tree)
  for (const seq of seqs.slice(0, limit)) {
    try {
      const info = await tree.mirrors.fetch(`history/${seq}.json`, MAX_FSINFO_V2, bytes => verify(bytes, seq))
      entries.push({ seq, ok: true, info })
    } catch (err) {
      if (!err.code?.startsWith('ROTREE_')) throw err
      // every mirror failed: the code that says why (each mirror's own, when they agree)
      const codes = [...new Set((err.errors ?? []).map(e => e.code))]
      entries.push({ seq, ok: false, code: codes.length === 1 ? codes[0] : err.code, message: err.message })
    }
  }
  return { total: seqs.length, entries }
}

/** history/index.json: { "seqs": [newest, …] }, distinct whole numbers, strictly decreasing. */
export function parseIndex (bytes) {
  let j
  try { j = JSON.parse(decodeUtf8(bytes)) } catch (err) { throw new BadFormatError('history/index.json is not JSON', { cause: err }) }
  const seqs = j?.seqs
  if (!Array.isArray(seqs)) throw new BadFormatError('history/index.json has no "seqs" list')
  for (let i = 0; i < seqs.length; i++) {
    if (!Number.isSafeInteger(seqs[i]) || seqs[i] < 0 || (i > 0 && seqs[i] >= seqs[i - 1])) throw new BadFormatError('history/index.json: "seqs" must be whole numbers, newest first, each once')
  }
  return seqs
}

/**
 * A read-only view of `tree` at an old root, history/<seq>.json, verified as
 * verifyHistoryEntry says (signed by the address key, filed under its own
 * seq; not checked for freshness: it is old on purpose). The view reads
 * through the tree's mirrors and caches like the tree; the tree's own root
 * and rollback state are not changed (docs/TRUST.md rule 17).
 * @param {import('./tree.js').Tree} tree @param {number} seq
 * @returns {Promise<import('./tree.js').Tree>} rootRecord: the old root (with `historic: true`)
 */
export async function openHistoric (tree, seq) {
  if (seq === tree.rootRecord?.seq) return tree.snapshot()
  let info
  try {
    info = await tree.mirrors.fetch(`history/${seq}.json`, MAX_FSINFO_V2, bytes => historyVerifier(tree)(bytes, seq))
  } catch (err) {
    // every mirror answers 404: there is no such entry (a mistyped number), not a mirror fault
    if (err.code === 'ROTREE_ALL_MIRRORS_FAILED' && err.errors?.length && err.errors.every(e => e.code === 'ROTREE_MIRROR_HTTP' && / 404 /.test(e.message))) {
      throw new NotFoundError(`the tree's history has no root with sequence ${seq}`, { cause: err, details: { errors: err.errors, todo: 'List the roots it has with rotree log ADDR.' } })
    }
    throw err
  }
  // a private tree's old root, opened with this reader's identity (its keyring of then)
  if (info.private) info = await openPrivateRecord(info, tree.roots.openPrivate)
  return tree.snapshot({ ...info, mirror: null, historic: true })
}

/**
 * The check of one history entry for this tree's address, either format
 * version (docs/TRUST.md rule 17): version 1 by verifyHistoryEntry (the
 * address key); version 2 by the trust module, under the trust document the
 * entry names, fetched and walked from the anchor (rule 10) once per
 * listing. Returns the entry as a root record (version 2: rootRecordV2's
 * shape, so log and ADDR@SEQ read either kind alike).
 * @param {import('./tree.js').Tree} tree
 * @returns {(bytes: Uint8Array, seq: number) => Promise<object>}
 */
export function historyVerifier (tree) {
  const { anchor, name } = tree.roots
  const docs = [] // trust documents 1 … n, each accepted after the one before (never persisted: rule 17)
  const docAt = async n => {
    if (docs.length < n) await walkChain(mirrorTrustSource(tree.mirrors), { anchor, from: docs.at(-1) ?? null, to: n, onStep: d => { docs.push(d) } })
    return docs[n - 1]
  }
  // the newest document this reader trusts: a key it dropped vouches for no entry (checkLoneKey)
  const newest = () => {
    const own = tree.roots.trust.doc
    return docs.length > (own?.seq ?? 0) ? docs.at(-1) : own
  }
  return async (bytes, seq) => {
    if (fsinfoVersion(bytes) !== 2) {
      if (tree.publicKey === null || name !== '') throw new WrongKeyError(`history/${seq}.json is a version-1 root, which this address (a trust document or a tree name) never accepts`)
      checkLoneKey(anchor, newest(), `history/${seq}.json (a version-1 root)`)
      return verifyHistoryEntry(bytes, { publicKey: tree.publicKey, seq })
    }
    const info = decodeFsinfoV2(bytes)
    if (info.seq !== seq) throw new BadFormatError(`history/${seq}.json holds the root of sequence ${info.seq}`, { details: { seq, found: info.seq } })
    const trust = info.trust ? await docAt(info.trust.seq) : null
    const { roles, signers } = verifyHistoryEntryV2(info, { anchor, name, trust, newest: newest() })
    return rootRecordV2(info, { roles, signers, trust, key: tree.publicKey, anchor: anchorText(anchor), raw: bytes })
  }
}
