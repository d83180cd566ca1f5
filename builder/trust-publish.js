// The publisher's side of trust documents (docs/FORMAT.md §12.2): write the
// next document of a family, collect its root signatures one machine at a
// time, and publish it as OUT/trust/<seq>.json once it is accepted.
//
//   OUT/trust/<seq>.json       published documents, 1 … n (mirrors serve them)
//   OUT/trust-pending.json     the next document while it collects signatures
//   OUT/publisher.json         { anchor, name, url }: what the address is made of
//
// `rotree trust init|update|retire` write the pending document; `rotree
// trust sign` adds signatures and publishes it the moment the reader's own
// rule accepts it (client-js/src/trust/roles.js acceptTrustStep: the
// threshold of the previous document's root keys and of its own, or for
// document 1 the address's anchor). Nothing here decides what a signature
// is worth: every count is the trust module's.
//
// A published document changes nothing readers see until an fsinfo.json
// names it: after a rotation, publish the next fsinfo.json (rotree resign
// with the timestamp key, or a new release) under the new document.
import fs from 'node:fs/promises'
import path from 'node:path'
import { BadFormatError, BadKeyError, UsageError } from 'rotree-client/errors'
import { decodeTrustDoc, encodeTrustDoc, ROLES, NAME_RE } from 'rotree-client/format'
import { acceptTrustStep, validSigners, trustAnchorOf, trustHash, parseFragment, anchorText } from 'rotree-client/trust'
import { writeDurable } from '../lib/published/history.js'
import { syncDir } from '../lib/published/blob-store.js'
import { readPublishedAny } from '../lib/published/publish.js'
import { readTrustChain, TRUST_DIR } from '../lib/published/signed-roots.js'
import { withOutLock } from './sign.js'
import { sign } from './ed25519-node.js'

export const PENDING_TRUST = 'trust-pending.json'
export const PUBLISHER_FILE = 'publisher.json'
const DAY = 86400e3

/** OUT/publisher.json, or null. */
export async function readPublisher (out) {
  let text
  try { text = await fs.readFile(path.join(out, PUBLISHER_FILE), 'utf8') } catch (err) {
    if (err.code === 'ENOENT') return null
    throw err
  }
  const j = JSON.parse(text)
  parseFragment(j.anchor) // a damaged file is refused here, not used
  if (j.name !== undefined && (typeof j.name !== 'string' || !NAME_RE.test(j.name))) throw new BadFormatError(`${out}/${PUBLISHER_FILE}: bad name`)
  return { anchor: j.anchor, name: j.name ?? '', url: typeof j.url === 'string' ? j.url : undefined }
}

async function writeJson (file, value, fsync = true) {
  const tmp = `${file}.tmp-${process.pid}`
  await writeDurable(tmp, typeof value === 'string' ? value : JSON.stringify(value, null, 2) + '\n', fsync)
  await fs.rename(tmp, file)
  if (fsync) await syncDir(path.dirname(file))
}

/**
 * The anchor OUT's addresses certify (FORMAT.md §12.5), as far as OUT itself
 * says: what publisher.json records, else the key of a single-key tree
 * published there; null leaves it to trust/1.json (its hash).
 */
function recordedAnchor (publisher, current) {
  if (publisher) return parseFragment(publisher.anchor).anchor
  if (current?.version === 2) return parseFragment(current.anchor).anchor
  if (current && current.version !== 2) return { kind: 'key', key: current.key }
  return null
}

/**
 * The trust in force in OUT, checked as a reader would check it: the chain
 * in OUT/trust accepted step by step from the anchor (rule 10; the published
 * folder's readTrustChain). trust: the newest document, or null for a tree
 * that never adopted one (its key holds every role). A chain that is broken
 * or does not verify is an error here: a publisher builds on its own chain.
 * @returns {Promise<{ anchor: string|null, chain: object[], trust: object|null, name: string, url?: string }>}
 */
export async function trustInForce (out) {
  const [publisher, current] = await Promise.all([readPublisher(out), readPublishedAny(out)])
  const c = await readTrustChain(out, recordedAnchor(publisher, current))
  if (c.fault) throw new (c.fault.err?.constructor ?? BadFormatError)(`${out}/${c.fault.message}`, { cause: c.fault.err })
  const anchor = c.anchor === null ? null : anchorText(c.anchor)
  // the tree published is the truth; publisher.json names it before the first release
  const name = current?.version === 2 ? current.name : (publisher?.name ?? '')
  return { anchor, chain: c.docs, trust: c.docs.at(-1) ?? null, name, url: publisher?.url }
}

/** The address fragment readers use: <anchor>[:<name>]. */
export function fragment (anchor, name) { return `${anchor}${name ? ':' + name : ''}` }

/** The address line commands print last. */
export function addressOf (anchor, name, url) { return `${url ?? '<mirror-url>'}#${fragment(anchor, name)}` }

function role (keys, threshold, what) {
  const list = [...new Set(keys.map(k => k.toLowerCase()))].sort()
  if (list.length !== keys.length) throw new UsageError(`--${what}: a key is given twice`)
  const t = threshold ?? (what === 'release' && list.length === 0 ? 0 : 1)
  if (!Number.isInteger(t) || t < 0 || t > list.length || (list.length > 0 && t === 0)) {
    throw new UsageError(`--${what}-threshold ${threshold}: must be 1 … ${list.length} (the number of ${what} keys)`)
  }
  return { threshold: t, keys: list }
}

/** A document's fields checked by the reader's own decoder (keys sorted, thresholds within counts). */
function checked (doc) { return decodeTrustDoc(encodeTrustDoc(doc)) }

/**
 * `rotree trust init`: trust document 1 of a new family, pending in OUT until
 * its root keys sign it. If OUT already publishes a single-key tree, that key
 * adopts the roles (FORMAT.md §12.5): the address stays `#<key>`, and
 * document 1 needs that key's signature besides its own root threshold.
 * Otherwise the address becomes `#t<hash of document 1>`.
 * @param {string} out
 * @param {{ root: string[], rootThreshold?: number, release: string[], releaseThreshold?: number,
 *   timestamp: string[], timestampThreshold?: number, access?: string[], accessThreshold?: number, ttlMs?: number, now?: number, name?: string, url?: string, force?: boolean }} o
 *   url: the mirror URL, remembered in publisher.json for the address lines
 */
export async function initTrust (out, o) {
  return withOutLock(out, 'rotree trust init', async () => {
    if ((await readTrustChain(out, null)).highest > 0) throw new UsageError(`${out} already has trust documents: change them with rotree trust update`)
    if (!o.force && await readPending(out)) throw new UsageError(`${out}/${PENDING_TRUST} is waiting for signatures (rotree trust sign); give --force to replace it`)
    if (o.name && !NAME_RE.test(o.name)) throw new UsageError(`--name ${o.name}: 1-64 of a-z 0-9 . _ -, starting with a letter or digit`)
    const now = o.now ?? Date.now()
    const doc = checked({
      seq: 1,
      expires: new Date(now + (o.ttlMs ?? 365 * DAY)).toISOString(),
      roles: {
        root: role(o.root, o.rootThreshold, 'root'),
        release: role(o.release, o.releaseThreshold, 'release'),
        timestamp: role(o.timestamp, o.timestampThreshold, 'timestamp'),
        // FORMAT.md §12.10: optional; who may sign grants to fetch a gated tree
        ...(o.access?.length ? { access: role(o.access, o.accessThreshold, 'access') } : {})
      }
    })
    const cur = await readPublishedAny(out)
    const adopting = cur && !(cur.version === 2 && cur.trust !== null) ? (cur.version === 2 ? cur.anchor : cur.key) : null
    const anchor = adopting ?? trustAnchorOf(doc)
    await writeJson(path.join(out, PENDING_TRUST), encodeTrustDoc(doc))
    await writeJson(path.join(out, PUBLISHER_FILE), { anchor, name: o.name ?? '', ...(o.url ? { url: o.url } : {}) })
    return { doc, anchor, adopting, status: signingStatus(null, doc, parseFragment(anchor).anchor) }
  })
}

/**
 * `rotree trust update` and `rotree trust retire`: the next document, from
 * the newest published one with the changes asked for, pending until both
 * the old and the new root thresholds sign it.
 * @param {string} out
 * @param {{ addRoot?: string[], removeRoot?: string[], rootThreshold?: number, addRelease?: string[], removeRelease?: string[],
 *   releaseThreshold?: number, timestamp?: string[], timestampThreshold?: number, retire?: boolean, ttlMs?: number, now?: number, force?: boolean }} o
 */
export async function updateTrust (out, o) {
  return withOutLock(out, o.retire ? 'rotree trust retire' : 'rotree trust update', async () => {
    const { trust, anchor } = await trustInForce(out)
    if (!trust) throw new UsageError(`${out} has no published trust document: start one with rotree trust init`)
    if (trust.roles.release.threshold === 0) throw new UsageError(`${out} is retired (trust document ${trust.seq}); a retired family stays retired`)
    if (!o.force && await readPending(out)) throw new UsageError(`${out}/${PENDING_TRUST} is waiting for signatures (rotree trust sign); give --force to replace it`)
    const now = o.now ?? Date.now()
    const edit = (r, add = [], remove = [], what) => {
      const keys = new Set(trust.roles[r]?.keys ?? [])
      for (const k of remove) {
        if (!keys.delete(k)) throw new UsageError(`--remove-${what} ${k}: not a ${r} key of trust document ${trust.seq}`)
      }
      for (const k of add) keys.add(k)
      return [...keys]
    }
    const roles = {}
    if (o.retire) {
      roles.root = trust.roles.root
      roles.release = { threshold: 0, keys: [] }
      roles.timestamp = trust.roles.timestamp
    } else {
      const rootKeys = edit('root', o.addRoot, o.removeRoot, 'root')
      const relKeys = edit('release', o.addRelease, o.removeRelease, 'release')
      const tsKeys = o.timestamp?.length ? o.timestamp : trust.roles.timestamp.keys
      const keep = (r, keys, t) => t ?? Math.min(trust.roles[r].threshold, keys.length)
      roles.root = role(rootKeys, keep('root', rootKeys, o.rootThreshold), 'root')
      roles.release = role(relKeys, keep('release', relKeys, o.releaseThreshold), 'release')
      roles.timestamp = role(tsKeys, keep('timestamp', tsKeys, o.timestampThreshold), 'timestamp')
      if (roles.release.keys.length === 0) throw new UsageError('this leaves no release keys, which retires the tree: use rotree trust retire for that')
    }
    // the access role (FORMAT.md §12.10) carries over unless changed; removing its last key drops it
    const accessKeys = trust.roles.access || o.addAccess?.length ? edit('access', o.addAccess, o.removeAccess, 'access') : []
    if (accessKeys.length > 0) roles.access = role(accessKeys, o.accessThreshold ?? Math.min(trust.roles.access?.threshold ?? 1, accessKeys.length), 'access')
    // FORMAT.md §12.2: each document names the one it follows
    const doc = checked({ seq: trust.seq + 1, prev: trustHash(trust), expires: new Date(now + (o.ttlMs ?? 365 * DAY)).toISOString(), roles, witnesses: editWitnesses(trust.witnesses, o) })
    await writeJson(path.join(out, PENDING_TRUST), encodeTrustDoc(doc))
    return { doc, prev: trust, anchor, status: signingStatus(trust, doc, parseFragment(anchor).anchor) }
  })
}

/**
 * The witnesses of the next document (FORMAT.md §13.1): the current ones,
 * less `removeWitness` (names), plus `addWitness` ({ name, url, key }; a name
 * already there is replaced), with `witnessThreshold` or the current threshold
 * (at most their number); none left: no witnesses.
 */
function editWitnesses (cur, { addWitness = [], removeWitness = [], witnessThreshold } = {}) {
  const byName = new Map((cur?.list ?? []).map(w => [w.name, w]))
  for (const n of removeWitness) if (!byName.delete(n)) throw new UsageError(`--remove-witness ${n}: not a witness of the trust document in force`)
  for (const w of addWitness) byName.set(w.name, w)
  if (byName.size === 0) {
    if (witnessThreshold) throw new UsageError('--witness-threshold: the document names no witnesses')
    return null
  }
  const threshold = witnessThreshold ?? Math.min(cur?.threshold ?? byName.size, byName.size)
  if (threshold < 1 || threshold > byName.size) throw new UsageError(`--witness-threshold ${threshold}: 1 to the ${byName.size} witnesses named`)
  return { threshold, list: [...byName.values()].sort((a, b) => a.name < b.name ? -1 : 1) }
}

/** OUT/trust-pending.json decoded (with its signatures so far), or null. */
export async function readPending (out) {
  let text
  try { text = await fs.readFile(path.join(out, PENDING_TRUST)) } catch (err) {
    if (err.code === 'ENOENT') return null
    throw err
  }
  return decodeTrustDoc(text)
}

/**
 * What a pending document still needs: for each requirement of rule 10, the
 * distinct valid signers so far and the threshold (validSigners, the trust
 * module's count).
 */
export function signingStatus (prev, doc, anchor) {
  const need = []
  const count = (what, r) => need.push({ what, have: validSigners(doc.message, doc.signatures, r).size, threshold: r.threshold, keys: r.keys })
  if (prev) count(`root keys of trust document ${prev.seq}`, prev.roles.root)
  else if (anchor.kind === 'key') count('address key', { threshold: 1, keys: [anchor.key] })
  count(`root keys of trust document ${doc.seq}`, doc.roles.root)
  return { need, complete: need.every(n => n.have >= n.threshold) }
}

/**
 * `rotree trust sign`: add one signature per key to the pending document; a
 * key that no requirement counts is refused (it would sign for nothing).
 * When the reader's rule accepts the document it is published as
 * OUT/trust/<seq>.json and the pending file removed.
 * @param {string} out @param {{ secretKey: string, publicKey: string }[]} keys
 * @param {{ fsync?: boolean }} [o]
 */
export async function signTrust (out, keys, { fsync = true } = {}) {
  return withOutLock(out, 'rotree trust sign', async () => {
    const doc = await readPending(out)
    if (!doc) throw new UsageError(`${out} has no pending trust document (rotree trust init, update or retire writes one)`)
    const { trust: prev, anchor } = await trustInForce(out)
    if ((prev?.seq ?? 0) + 1 !== doc.seq) throw new BadFormatError(`the pending document is number ${doc.seq}, but ${out} has published up to ${prev?.seq ?? 0}`)
    const a = parseFragment(anchor).anchor
    const signers = new Set([...doc.roles.root.keys, ...(prev ? prev.roles.root.keys : a.kind === 'key' ? [a.key] : [])])
    const sigs = [...doc.signatures]
    const added = []
    for (const k of keys) {
      if (!signers.has(k.publicKey)) throw new BadKeyError(`key ${k.publicKey} is not a root key of trust document ${doc.seq}${prev ? ` or ${prev.seq}` : a.kind === 'key' ? ' nor the address key' : ''}: its signature would count for nothing`)
      if (sigs.some(s => s.key === k.publicKey)) continue
      sigs.push({ key: k.publicKey, sig: sign(doc.message, k.secretKey) })
      added.push(k.publicKey)
    }
    const next = checked({ ...doc, signatures: sigs })
    const status = signingStatus(prev, next, a)
    const text = encodeTrustDoc(next)
    if (!status.complete) {
      await writeJson(path.join(out, PENDING_TRUST), text, fsync)
      return { doc: next, added, status, published: false, anchor }
    }
    acceptTrustStep(prev, next, a) // the reader's rule, the only judge
    await fs.mkdir(path.join(out, TRUST_DIR), { recursive: true })
    const file = path.join(out, TRUST_DIR, `${next.seq}.json`)
    try {
      await fs.writeFile(file, text, { flag: 'wx', mode: 0o644 })
    } catch (err) {
      if (err.code === 'EEXIST') throw new UsageError(`${file} exists already; published documents are never replaced`)
      throw err
    }
    if (fsync) { const fh = await fs.open(file, 'r'); await fh.sync(); await fh.close(); await syncDir(path.dirname(file)) }
    await fs.rm(path.join(out, PENDING_TRUST), { force: true })
    return { doc: next, added, status, published: true, anchor }
  })
}

/**
 * The roles of a decoded document as text lines, for `trust show` and the
 * commands' reports: each role's threshold, then each of its keys by a short
 * id, the roles that key holds, and whether it is the key in the address
 * (`addressKey`: the anchor when it is a key, FORMAT.md §12.5). The signed
 * format carries no label for a key (FORMAT.md §12.2); --json gives each
 * whole.
 * @param {{ roles: Record<string, { threshold: number, keys: string[] }> }} doc
 * @param {{ addressKey?: string|null }} [o]
 */
export function describeRoles (doc, { addressKey = null } = {}) {
  const holds = new Map() // key → the roles it holds, in ROLES order
  for (const r of ROLES) for (const k of doc.roles[r].keys) holds.set(k, [...(holds.get(k) ?? []), r])
  const id = shortIds([...holds.keys(), ...(addressKey ? [addressKey] : [])])
  const line = k => `    ${id(k)}  ${holds.get(k).join(', ')}${k === addressKey ? '; the address key' : ''}`
  const lines = ROLES.map(r => [`  ${r.padEnd(9)} ${doc.roles[r].threshold} of ${doc.roles[r].keys.length}`, ...doc.roles[r].keys.map(line)].join('\n'))
  // a tree that adopted roles (FORMAT.md §12.5): its address key may hold none of them
  if (addressKey && !holds.has(addressKey)) lines.push(`  the address key ${id(addressKey)} holds no role`)
  // FORMAT.md §13.1: who must cosign the log's checkpoint
  if (doc.witnesses) lines.push([`  witnesses ${doc.witnesses.threshold} of ${doc.witnesses.list.length}`, ...doc.witnesses.list.map(w => `    ${w.name}  ${w.url}  ${w.key.slice(0, 16)}`)].join('\n'))
  return lines.join('\n')
}

/**
 * Short ids for hex keys: the first 16 digits (as an OpenPGP long key id), or
 * as many more as it takes to tell apart keys that share them.
 * @param {string[]} keys @returns {(key: string) => string}
 */
export function shortIds (keys) {
  const distinct = [...new Set(keys)]
  let n = 16
  while (n < 64 && new Set(distinct.map(k => k.slice(0, n))).size < distinct.length) n++
  return k => k.slice(0, n)
}

/** The key an address fragment's anchor names, or null for a trust-hash anchor (`t…`). */
export function addressKeyOf (anchor) { return /^[0-9a-f]{64}$/.test(anchor ?? '') ? anchor : null }
