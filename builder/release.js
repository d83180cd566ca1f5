// Releases and fsinfo.json of format version 2 (docs/FORMAT.md §12.3,
// §12.4), signed by the roles of the trust document in force in OUT, or by
// the one key of a tree that never adopted a trust document.
//
//   build --key R --timestamp-key T     release and fsinfo.json at once (thresholds of 1)
//   build --unsigned                    OUT/unsigned.json: a release without signatures
//   sign OUT --key R1                   one release signature into OUT/unsigned.json
//   sign OUT --timestamp-key T --publish   fsinfo.json over the release, published
//   resign OUT --key T                  a new fsinfo.json over the current release
//
// Before anything is renamed into place the result is judged as a reader
// judges it: the chain in OUT/trust walked from the anchor and the
// fsinfo.json checked by the trust module (client-js/src/trust/roles.js,
// verifyFsinfoV2), and every blob the release reaches present in OUT/h. A
// publisher cannot publish what its readers would refuse.
import fs from 'node:fs/promises'
import path from 'node:path'
import { BadFormatError, BadKeyError, BadSignatureError, ExpiredError, ThresholdError, UsageError, RetiredError, RollbackError } from 'rotree-client/errors'
import { encodeFsinfoV2, decodeFsinfoV2, decodeRelease, releaseMessage, parseObject, jsonText, object, hex64 } from 'rotree-client/format'
import { verifyFsinfoV2, singleKeyRoles, trustHash, validSigners, parseFragment } from 'rotree-client/trust'
import { checkFreshness, DEFAULT_SKEW_MS } from 'rotree-client/verify'
import { nextSeq, lastSeq, publishSeq, publishFsinfo, readPublishedAny, writeUnsignedFile, removeUnsigned, UNSIGNED_FILE } from '../lib/published/publish.js'
import { walkLocal } from '../lib/published/pages.js'
import { StatBlobStore } from '../lib/published/blob-store.js'
import { readPrivate, writePrivate, accessFor, rememberRoot, keyringCurrent } from './private-tree.js'
import { buildManifest, fromHex, keylessRoot } from 'rotree-client/format'
import { storedSizeOf } from 'rotree-client/verify'
import { unwrapRoot } from 'rotree-client/access'
import { verifyRoot } from '../lib/published/signed-roots.js'
import { trustInForce, addressOf, fragment } from './trust-publish.js'
import { withOutLock } from './sign.js'
import { sign } from './ed25519-node.js'

export const UNSIGNED_RELEASE_TYPE = 'rotree-unsigned-release'

/** A result's root: the root page's handle, or for a private release (FORMAT.md §12.8) null and `private`. */
const rootOut = root => root.private !== undefined ? { root: null, private: true } : { root: root.hash }
const sameReleaseRoot = (a, b) => a.private !== undefined ? a.private === b.private : a.hash === b.hash

/**
 * The release's root member (FORMAT.md §12.6, JSON form) from a build's root
 * ref: `size` is the stored size, `decodedSize` the page's bytes.
 * @param {{ hash: string, size: number, storedSize?: number, codec?: string, mtime: number }} rootRef
 */
export function releaseRoot (rootRef) {
  const codec = rootRef.codec ?? 'none'
  return { hash: rootRef.hash, size: rootRef.storedSize ?? rootRef.size, codec, decodedSize: rootRef.size, mtime: rootRef.mtime }
}

/**
 * What signs in OUT: the trust in force (trust-publish.js trustInForce) and
 * the roles it gives; a tree without trust documents is its anchor key's alone.
 * @param {string} out @param {{ key?: string }} [o] key: the single key, when OUT has published nothing yet
 */
export async function signersOf (out, { key, allowRetired = false } = {}) {
  const t = await trustInForce(out)
  if (t.trust) {
    if (t.trust.roles.release.threshold === 0 && allowRetired) return { ...t, roles: t.trust.roles, retired: true }
    if (t.trust.roles.release.threshold === 0) throw new RetiredError(`${out} is retired by trust document ${t.trust.seq}: nothing more can be published`)
    return { ...t, roles: t.trust.roles }
  }
  const anchor = t.anchor ?? key
  if (!anchor) throw new UsageError(`${out} has no trust documents and no key published: build with --key first`)
  const a = parseFragment(anchor).anchor
  if (a.kind !== 'key') throw new UsageError(`${out}'s address certifies trust document 1, which is not published yet: sign it first (rotree trust sign ${out} --key ROOTKEY)`)
  return { ...t, anchor, roles: singleKeyRoles(a.key) }
}

/** Add a signature per key that holds the release role; any other key is refused (roles null: not checked here). */
export function signRelease (release, keys, roles) {
  const sigs = [...(release.signatures ?? [])]
  const added = []
  for (const k of keys) {
    if (roles && !roles.release.keys.includes(k.publicKey)) {
      throw new BadKeyError(`key ${k.publicKey} is not a release key of this tree: its signature would count for nothing`, {
        details: { todo: 'Sign with one of the tree\'s release keys (rotree trust show OUT lists them), or build into a new OUT to publish under this key.' }
      })
    }
    if (sigs.some(s => s.key === k.publicKey)) continue
    sigs.push({ key: k.publicKey, sig: sign(releaseMessage(release), k.secretKey) })
    added.push(k.publicKey)
  }
  return { release: { ...release, signatures: sigs }, added }
}

/** Distinct valid release signatures against the roles (the trust module's count). */
export function releaseSigners (release, roles) {
  return validSigners(releaseMessage(release), release.signatures ?? [], roles.release).size
}

/**
 * OUT/unsigned.json for a version-2 release. `key`: a single-key tree's key
 * (its address's anchor, FORMAT.md §12.5), which a release does not name:
 * recorded so that `rotree sign` can count the signature before OUT has
 * published anything (as version 1's unsigned root carries its key).
 */
export function encodeUnsignedRelease (release, { key } = {}) {
  const { anchor, name, seq, expires, root, manifest = null, signatures = [] } = release
  // a private release names its manifest (FORMAT.md §12.8), which its signatures cover
  return jsonText({ type: UNSIGNED_RELEASE_TYPE, version: 2, release: { anchor, name, seq, expires, root, ...(manifest ? { manifest } : {}), signatures }, ...(key ? { key } : {}) })
}

/** Is this unsigned.json text a version-2 release (else it is version 1's)? */
export function isUnsignedRelease (bytes) {
  try { return parseObject(bytes, 64 * 1024, 'unsigned.json').type === UNSIGNED_RELEASE_TYPE } catch { return false }
}

/** An unsigned.json of version 2: { release, key } (key: a single-key tree's, or null). */
export function readUnsignedRelease (bytes) {
  const j = object(parseObject(bytes, 64 * 1024, 'unsigned.json'), 'unsigned.json', ['type', 'version', 'release', 'key'])
  if (j.type !== UNSIGNED_RELEASE_TYPE || j.version !== 2) throw new BadFormatError('not an unsigned version-2 release')
  return { release: decodeRelease(j.release), key: j.key === undefined ? null : hex64(j.key, 'unsigned.json key') }
}

export function decodeUnsignedRelease (bytes) { return readUnsignedRelease(bytes).release }

/** The key of a tree signed by one key (no trust documents), else undefined. */
function singleKeyOf (signers) {
  if (signers.trust || !signers.anchor) return undefined
  const a = parseFragment(signers.anchor).anchor
  return a.kind === 'key' ? a.key : undefined
}

/**
 * Sign fsinfo.json over a release with the timestamp keys, under the trust
 * document in force (or none), valid from now for ttlMs but never past the
 * release's own expiry (a reader would refuse it from then on anyway).
 */
export function signFsinfoV2 ({ release, trust, name, seq, now, ttlMs, timestampKeys, roles, access = null }) {
  const relExp = Date.parse(release.expires)
  if (relExp <= now) throw new ExpiredError(`release ${release.seq} expired at ${release.expires}: publish a new release`)
  const issued = new Date(now).toISOString()
  const expires = new Date(Math.min(now + ttlMs, relExp)).toISOString()
  // the family is the release's (FORMAT.md §12.4): publishRelease checked it is OUT's
  // a private release: the keyring and the wrapped root (FORMAT.md §12.8), signed with the rest
  const fields = { anchor: release.anchor, name, trust: trust ? { seq: trust.seq, hash: trustHash(trust) } : null, seq, issued, expires, release, access }
  const { message } = decodeFsinfoV2(encodeFsinfoV2(fields))
  const sigs = []
  for (const k of timestampKeys) {
    if (!roles.timestamp.keys.includes(k.publicKey)) throw new BadKeyError(`key ${k.publicKey} is not a timestamp key of this tree`)
    if (!sigs.some(s => s.key === k.publicKey)) sigs.push({ key: k.publicKey, sig: sign(message, k.secretKey) })
  }
  return encodeFsinfoV2({ ...fields, signatures: sigs })
}

/**
 * Judge a signed fsinfo.json v2 for OUT as a fresh reader of its address
 * would (rules 10–14 and 2, all in the trust module), then check every blob
 * it reaches is in OUT/h, unless the caller has just written or checked
 * them itself (`present`: a build, whose walk stored every blob or found it
 * in h/, as a format-1 build publishes without a walk).
 * @returns {Promise<{ info: object, blobs: number|null }>} blobs: how many the walk reached (null: not walked)
 */
export async function checkPublishable (out, text, { anchor, name, trust, now, present = false, epochKey = null }) {
  const info = decodeFsinfoV2(text)
  verifyFsinfoV2(info, { anchor: parseFragment(anchor).anchor, name, trust, now, skewMs: DEFAULT_SKEW_MS, graceMs: 0, checkFreshness })
  // a private release: its readers unwrap this root and check it against the commitment (FORMAT.md §12.8)
  if (info.access !== null && epochKey !== null) await unwrapRoot(fromHex(epochKey), info.access.root, info.release.root.private)
  if (present && info.access === null) return { info, blobs: null }
  // pages from this disk: a few loads at once keep up, and hold few decoded pages (P13's peak); a
  // private release's manifest pages and keyring, which a keyless mirror copies, are read even for a build
  const reached = await walkLocal(out, keylessRoot(info.release, info.access), { concurrency: 4, checkData: !present })
  if (present) return { info, blobs: null }
  return { info, blobs: reached.size }
}

/**
 * Publish a release: a new fsinfo.json over it, signed by the timestamp keys,
 * checked, recorded in history/ and renamed into place.
 * @param {string} out
 * @param {{ release: object, signers: object, timestampKeys: object[], ttlMs: number, now?: number, fsync?: boolean, url?: string, seq?: number, present?: boolean }} o
 *   seq: fsinfo.json's sequence number, forced (above everything OUT published); by default nextSeq's
 *   present: the caller vouches that every blob of the release's root is in OUT/h (checkPublishable)
 *   witness: false publishes without asking the trust document's witnesses (`--no-witness`)
 */
export async function publishRelease (out, { release, signers, timestampKeys, ttlMs, now = Date.now(), fsync = true, url = signers.url, seq: forced, present = false, witness = true }) {
  const { roles, trust, anchor, name } = signers
  const have = releaseSigners(release, roles)
  if (have < roles.release.threshold) {
    throw new ThresholdError(`release ${release.seq} has ${have} of the ${roles.release.threshold} release signatures it needs (rotree sign OUT --key RELEASEKEY)`, { details: { valid: have, threshold: roles.release.threshold } })
  }
  if (release.name !== name) throw new UsageError(`the release is for tree ${JSON.stringify(release.name)}, but ${out} publishes ${JSON.stringify(name)}`)
  if (release.anchor !== anchor) throw new UsageError(`the release is for the tree family #${release.anchor}, but ${out} publishes #${anchor}`)
  const seq = await publishSeq(out, now, forced)
  const priv = release.root.private === undefined ? null : await privateAccess(out, release, fsync)
  const text = signFsinfoV2({ release, trust, name, seq, now, ttlMs, timestampKeys, roles, access: priv?.access })
  const { info, blobs } = await checkPublishable(out, text, { anchor, name, trust, now, present, epochKey: priv?.epochKey })
  // FORMAT.md §13.1: the trust document's witnesses cosign the log's checkpoint (--no-witness: none asked)
  await publishFsinfo(out, text, fsync, { keys: timestampKeys, witnesses: witness ? trust?.witnesses ?? null : null })
  return { seq, releaseSeq: release.seq, ...rootOut(release.root), expires: info.expires, releaseExpires: release.expires, trustSeq: trust?.seq ?? null, blobs, address: addressOf(anchor, name, url), fragment: fragment(anchor, name) }
}

/**
 * fsinfo.json's `access` for a private release, from OUT's private state
 * (builder/private-tree.js): a keyring sealed again when the readers or the
 * epoch changed, the root wrapped under the epoch key. The state is written
 * before fsinfo.json is: a keyring it names is in h/ and remembered.
 */
async function privateAccess (out, release, fsync) {
  const state = await readPrivate(out)
  if (state === null) throw new UsageError(`${out} publishes a private tree, but its state (.rotree/private.json) is gone: no root can be wrapped for its readers without it`)
  const store = new StatBlobStore(out, { fsync }).open()
  const access = await accessFor(state, release.root.private, bytes => store.put(bytes), out)
  await store.sync()
  await writePrivate(out, state, fsync)
  return { access, epochKey: state.epochKey }
}

/**
 * A private build's release root and manifest (FORMAT.md §12.8): the root
 * ref remembered in OUT's private state behind its commitment, and the
 * manifest of every blob the root reaches, its pages stored in OUT/h as
 * they are. The blobs are the ones the build's walk collected (walk.js
 * `reached`: a full walk visits every directory), or else are found by
 * walking the root back from OUT/h with the keys its pages carry.
 * @param {string} out @param {object} state private-tree.js (written here)
 * @param {object} rootRef the build's sealed root ref, with mtime
 * @param {boolean} fsync
 * @param {Map<string, number> | null} reached hash → stored size of every blob the root reaches, or null
 * @returns {Promise<{ root: { private: string }, manifest: { hash: string, size: number } }>}
 */
async function privateRelease (out, state, rootRef, fsync, reached) {
  let blobs = reached
  if (blobs === null) {
    blobs = new Map()
    await walkLocal(out, rootRef, { checkData: false, concurrency: 4, onRef: ref => { blobs.set(ref.hash, storedSizeOf(ref)) } })
  }
  const store = new StatBlobStore(out, { fsync }).open()
  const top = await buildManifest([...blobs].map(([hash, size]) => ({ hash, size })), bytes => store.put(bytes))
  await store.sync()
  const root = { private: rememberRoot(state, rootRef, rootRef.mtime) }
  await writePrivate(out, state, fsync)
  return { root, manifest: { hash: top.hash, size: top.size } }
}

/**
 * The version-2 publish step of a build (builder/build.js): a release of the
 * new root, signed and published at once when the keys given meet the
 * thresholds (one release key and the timestamp keys), or left in
 * OUT/unsigned.json for `rotree sign`.
 * @param {string} out
 * @param {{ rootRef: object, key: { publicKey: string, secretKey?: string }, timestampKeys?: object[], name?: string,
 *   ttlMs: number, releaseTtlMs?: number, now: number, seq?: number, fsync?: boolean, unsigned?: boolean, url?: string,
 *   private?: object, reached?: Map<string, number> | null }} o  private: a private tree's state (builder/private-tree.js),
 *   its root sealed; reached: every blob of that root, hash → stored size, as the build's walk collected them
 */
export async function publishBuilt (out, o) {
  const signers = await signersOf(out, { key: o.key.publicKey })
  const name = o.name ?? signers.name
  if (signers.name && o.name !== undefined && o.name !== signers.name && signers.trust) {
    // one family may publish several names, but OUT holds one tree: say so rather than switch silently
    throw new UsageError(`${out} publishes tree ${JSON.stringify(signers.name)}; build tree ${JSON.stringify(o.name)} into its own OUT`)
  }
  const s = { ...signers, name }
  const seq = await publishSeq(out, o.now, o.seq)
  const releaseTtlMs = o.releaseTtlMs ?? (signers.trust ? Math.max(o.ttlMs, 90 * 86400e3) : o.ttlMs)
  const { root, manifest } = o.private ? await privateRelease(out, o.private, o.rootRef, o.fsync ?? true, o.reached ?? null) : { root: releaseRoot(o.rootRef), manifest: null }
  let release = { anchor: signers.anchor, name, seq, expires: new Date(o.now + releaseTtlMs).toISOString(), root, ...(manifest ? { manifest } : {}), signatures: [] }
  decodeRelease(release) // the reader's checks of every member
  if (o.unsigned) {
    await writeUnsignedFile(out, encodeUnsignedRelease(release, { key: singleKeyOf(signers) }), o.fsync ?? true)
    return { seq, expires: release.expires, unsigned: true, releaseSeq: seq, name, address: addressOf(s.anchor, name, o.url ?? signers.url), needs: signers.roles.release.threshold }
  }
  if (!o.key.secretKey) throw new UsageError('a secret key is needed to sign (or build with --unsigned)')
  release = signRelease(release, [o.key], signers.roles).release
  const timestampKeys = o.timestampKeys?.length ? o.timestampKeys : [o.key]
  // a forced seq (build's `seq`) is the release's and fsinfo.json's, as version 1's is fsinfo.json's
  // the build's walk stored every blob of this root or found it in h/ (walk.js): no second walk
  const r = await publishRelease(out, { release, signers: s, timestampKeys, ttlMs: o.ttlMs, now: o.now, fsync: o.fsync ?? true, url: o.url, seq: o.seq, present: true, witness: o.witness ?? true })
  await removeUnsigned(out) // a pending offline-signed root is older than this one
  return { ...r, name }
}

/**
 * `rotree sign OUT --key R… [--timestamp-key T… --publish]`: add release
 * signatures to OUT/unsigned.json (or FILE), and with `publish` sign
 * fsinfo.json over it and publish it in OUT.
 * @param {{ out: string, file?: string, keys: object[], timestampKeys?: object[], publish?: boolean, ttlMs: number, now?: number, fsync?: boolean, url?: string }} o
 */
export async function signOut (o) {
  const { out, keys = [], timestampKeys = [], now = Date.now(), fsync = true } = o
  const file = o.file ?? path.join(out, UNSIGNED_FILE)
  return withOutLock(out, 'rotree sign', async () => {
    let bytes
    try { bytes = await fs.readFile(file) } catch (err) {
      if (err.code === 'ENOENT') throw new UsageError(`${file} does not exist: build with --unsigned first`)
      throw err
    }
    if (!isUnsignedRelease(bytes)) {
      throw new UsageError(`${file} is not a format-2 release; a format-1 root is signed with rotree sign ${file} --key KEYFILE -o fsinfo.json (or --publish OUT)`)
    }
    const unsigned = readUnsignedRelease(bytes)
    let release = unsigned.release
    const key = unsigned.key ?? undefined
    let signers
    // OUT's own anchor first; the file's key for a single-key tree that has published nothing yet
    try { signers = await signersOf(out, { key }) } catch (err) {
      // a copy of unsigned.json on a signing machine, without OUT's trust/ beside it: the
      // signature is added unchecked, and counted where the release is published
      if (!(o.file && !o.publish && err.code === 'ROTREE_USAGE')) throw err
      const r = signRelease(release, keys, null)
      await fs.writeFile(file, encodeUnsignedRelease(r.release, { key }))
      return { releaseSeq: release.seq, name: release.name, added: r.added, have: null, threshold: null, published: false, unchecked: true, address: null }
    }
    const s = { ...signers, name: release.name }
    const r = signRelease(release, keys, signers.roles)
    release = r.release
    const have = releaseSigners(release, signers.roles)
    const result = { releaseSeq: release.seq, name: release.name, added: r.added, have, threshold: signers.roles.release.threshold, published: false, address: addressOf(signers.anchor, release.name, o.url ?? signers.url) }
    if (r.added.length) {
      const text = encodeUnsignedRelease(release, { key })
      if (o.file) await fs.writeFile(file, text)
      else await writeUnsignedFile(out, text, fsync)
    }
    if (!o.publish) return result
    if (!timestampKeys.length) {
      const single = signers.trust ? null : keys.find(k => signers.roles.timestamp.keys.includes(k.publicKey))
      if (!single) throw new UsageError('--publish needs --timestamp-key KEYFILE (fsinfo.json is signed by the timestamp role)')
      timestampKeys.push(single)
    }
    const p = await publishRelease(out, { release, signers: s, timestampKeys, ttlMs: o.ttlMs, now, fsync, url: o.url, witness: o.witness ?? true })
    // a release pending in OUT that is not newer than the one published is superseded
    const pending = await fs.readFile(path.join(out, UNSIGNED_FILE)).catch(() => null)
    if (pending && (!isUnsignedRelease(pending) || decodeUnsignedRelease(pending).seq <= release.seq)) await removeUnsigned(out)
    return { ...result, ...p, published: true }
  })
}

/**
 * `rotree resign` of a version-2 tree: a new fsinfo.json over the current
 * release, signed by the timestamp keys under the newest trust document in
 * OUT. A release the keys in force no longer accept (its release keys
 * rotated away) is signed again with the same root when the keys given
 * include enough release keys (a single-key tree's key always does), else
 * refused: publish a new release then.
 * @param {string} out @param {object[]} keys
 * @param {{ ttlMs: number, now?: number, fsync?: boolean, ifExpiringWithinMs?: number, url?: string }} o
 */
export async function resignV2 (out, keys, { ttlMs, now = Date.now(), fsync = true, ifExpiringWithinMs, url, witness = true }) {
  return withOutLock(out, 'rotree resign', async () => {
    const cur = await readPublishedAny(out)
    if (!cur || cur.version !== 2) throw new UsageError(`${out} has no version-2 fsinfo.json to re-sign`)
    const signers = await signersOf(out, { allowRetired: true })
    if (signers.retired) return announceRetirement(out, cur, signers, keys, { ttlMs, now, fsync, url, witness })
    // as version 1's resign (sign.js): never launder an fsinfo.json someone dropped into OUT. The
    // current one must verify, without the clock, under the trust it names (docs/TRUST.md rules
    // 10-12, 14) or the single key's (FORMAT.md §12.5), or its release would be signed again
    await verifyCurrent(out, cur, signers)
    const s = { ...signers, name: cur.name }
    // a key that cannot re-sign is refused whether or not it is time to (a timer learns it at once)
    const timestampKeys = keys.filter(k => signers.roles.timestamp.keys.includes(k.publicKey))
    if (!timestampKeys.length) throw new BadKeyError(`none of the keys given is a timestamp key of ${out}${signers.trust ? ` (trust document ${signers.trust.seq})` : ''}`)
    const left = Math.min(cur.expiresMs, cur.release.expiresMs) - now
    const trustMoved = (signers.trust?.seq ?? 0) !== (cur.trust?.seq ?? 0)
    // a private tree's readers changed since (rotree access add|remove): published now, whatever the expiry
    const accessMoved = cur.access ? await accessPending(out, cur) : false
    if (ifExpiringWithinMs !== undefined && left > ifExpiringWithinMs && !trustMoved && !accessMoved) {
      return { skipped: true, seq: cur.seq, previousSeq: cur.seq, ...rootOut(cur.release.root), expires: cur.expires, leftMs: left, address: addressOf(signers.anchor, cur.name, url ?? signers.url) }
    }
    let release = cur.release
    const single = !signers.trust
    const stale = releaseSigners(release, signers.roles) < signers.roles.release.threshold
    const expiring = release.expiresMs - now < ttlMs
    if (stale || (single && expiring)) {
      const relKeys = keys.filter(k => signers.roles.release.keys.includes(k.publicKey))
      if (relKeys.length < signers.roles.release.threshold) {
        throw new ThresholdError(stale
          ? `release ${release.seq} is not signed by the release keys of trust document ${signers.trust?.seq}: publish a new release (rotree build … --unsigned, then rotree sign)`
          : `release ${release.seq} expires at ${release.expires}: publish a new release`)
      }
      const { seq } = await nextSeq(out, now)
      release = signRelease({ anchor: signers.anchor, name: release.name, seq, expires: new Date(now + ttlMs).toISOString(), root: release.root, ...(release.manifest ? { manifest: release.manifest } : {}), signatures: [] }, relKeys, signers.roles).release
    }
    const p = await publishRelease(out, { release, signers: s, timestampKeys, ttlMs, now, fsync, url, witness })
    return { skipped: false, previousSeq: cur.seq, ...p }
  })
}

/** Does OUT's private state hold readers or an epoch that its fsinfo.json does not publish yet? */
async function accessPending (out, cur) {
  const s = await readPrivate(out)
  return s === null || !keyringCurrent(s) || s.epoch !== cur.access.epoch || s.keyring.hash !== cur.access.keyring.hash
}

/** resignV2: OUT's fsinfo.json verified (lib/published/signed-roots.js verifyRoot) against the anchor and chain in force. */
async function verifyCurrent (out, cur, signers) {
  const bytes = await fs.readFile(path.join(out, 'fsinfo.json'))
  const ctx = { anchor: parseFragment(signers.anchor).anchor, name: cur.name, chain: { docs: signers.chain, highest: signers.chain.length, fault: null } }
  try { verifyRoot(bytes, ctx) } catch (err) {
    if (typeof err.code !== 'string' || !err.code.startsWith('ROTREE_')) throw err
    throw new BadSignatureError(`${out}/fsinfo.json does not verify (${err.message}); refusing to re-sign it`, { cause: err })
  }
}

/**
 * Readers learn that a tree is retired from an fsinfo.json that names the
 * retiring trust document (FORMAT.md §12.9: they fetch trust documents an
 * answer names): the timestamp keys sign one over the current release. It is
 * checked to be refused, as ROTREE_RETIRED, by the trust module.
 */
async function announceRetirement (out, cur, signers, keys, { ttlMs, now, fsync, url, witness = true }) {
  const { trust, anchor } = signers
  const timestampKeys = keys.filter(k => trust.roles.timestamp.keys.includes(k.publicKey))
  if (!timestampKeys.length) throw new BadKeyError(`none of the keys given is a timestamp key of trust document ${trust.seq}`)
  const { seq } = await nextSeq(out, now)
  // an expired release is carried with a new expiry: its signatures no longer match, which no
  // reader checks, since retirement is judged before anything the answer says (TRUST.md rule 14)
  const release = cur.release.expiresMs > now ? cur.release : { ...cur.release, expires: new Date(now + ttlMs).toISOString() }
  const text = signFsinfoV2({ release, trust, name: cur.name, seq, now, ttlMs, timestampKeys, roles: trust.roles })
  try {
    await checkPublishable(out, text, { anchor, name: cur.name, trust, now })
    throw new Error('internal: a retiring fsinfo.json was accepted')
  } catch (err) {
    if (err.code !== 'ROTREE_RETIRED') throw err
  }
  await publishFsinfo(out, text, fsync, { keys: timestampKeys, witnesses: witness ? trust.witnesses ?? null : null })
  return { skipped: false, retired: true, previousSeq: cur.seq, seq, trustSeq: trust.seq, ...rootOut(cur.release.root), expires: new Date(Math.min(now + ttlMs, Date.parse(release.expires))).toISOString(), address: addressOf(anchor, cur.name, url ?? signers.url) }
}

/**
 * The offline signature of a single-key tree's release (FORMAT.md §12.5: its
 * one key holds every role): `rotree sign unsigned.json --key K -o
 * fsinfo.json` on a machine with the key and nothing else. The release and
 * an fsinfo.json over it are both signed by K, and the result is checked as
 * a reader of `#<K>` checks it (the blobs are checked where it is
 * installed). Its seq is the signing time in seconds, as version 1's
 * offline signature takes (FORMAT.md §6.2), so it stays above whatever OUT
 * published in between.
 * @param {Uint8Array} bytes an unsigned.json of version 2
 * @param {object[]} keys @param {{ ttlMs: number, now?: number }} o
 * @returns {{ text: string, info: object }}
 */
export function signReleaseOffline (bytes, keys, { ttlMs, now = Date.now() }) {
  const { release, key } = readUnsignedRelease(bytes)
  if (!key) throw new UsageError('this release is for a tree with trust documents: add release signatures with rotree sign FILE --key RELEASEKEY, then publish it with rotree sign FILE --publish OUT --timestamp-key TIMESTAMPKEY')
  const k = keys.find(x => x.publicKey === key)
  if (!k) throw new BadKeyError(`this release is for the tree of key ${key}; sign it with that key`)
  if (release.anchor !== key) throw new BadFormatError(`this release names the tree family #${release.anchor}, not the key ${key} it is to be signed by`)
  if (release.root.private !== undefined) {
    // fsinfo.json of a private tree carries the root wrapped under the epoch key, which only OUT's machine holds
    throw new UsageError('this is a private tree\'s release: sign it here with rotree sign FILE --key KEYFILE (release signatures only), then publish it where OUT is with rotree sign OUT --publish --timestamp-key KEYFILE')
  }
  const roles = singleKeyRoles(key)
  const signed = signRelease(release, [k], roles).release
  const seq = Math.floor(now / 1000)
  const text = signFsinfoV2({ release: signed, trust: null, name: signed.name, seq, now, ttlMs, timestampKeys: [k], roles })
  const info = decodeFsinfoV2(text)
  verifyFsinfoV2(info, { anchor: { kind: 'key', key }, name: signed.name, trust: null, now, skewMs: DEFAULT_SKEW_MS, graceMs: 0, checkFreshness })
  return { text, info, key }
}

/**
 * `rotree sign fsinfo.json --publish OUT` for a version-2 fsinfo.json signed
 * elsewhere (signReleaseOffline): judged against OUT's own anchor (its
 * trust documents, its published key, or the key of its pending
 * unsigned.json) as a fresh reader would judge it, above everything OUT has
 * published, every blob present; then published.
 * @param {string} out @param {Uint8Array} bytes
 * @param {{ now?: number, fsync?: boolean, url?: string }} [o]
 */
export async function installSignedV2 (out, bytes, { now = Date.now(), fsync = true, url } = {}) {
  return withOutLock(out, 'rotree sign --publish', async () => {
    const pendingBytes = await fs.readFile(path.join(out, UNSIGNED_FILE)).catch(() => null)
    const pending = pendingBytes && isUnsignedRelease(pendingBytes) ? readUnsignedRelease(pendingBytes) : null
    const signers = await signersOf(out, { key: pending?.key ?? undefined })
    const claimed = decodeFsinfoV2(bytes)
    const name = signers.trust || signers.name ? signers.name : claimed.name
    const currentBytes = await fs.readFile(path.join(out, 'fsinfo.json')).catch(() => null)
    const { info, blobs } = await checkPublishable(out, bytes, { anchor: signers.anchor, name, trust: signers.trust, now })
    if (currentBytes && Buffer.from(currentBytes).equals(Buffer.from(bytes))) return { seq: info.seq, ...rootOut(info.release.root), already: true, address: addressOf(signers.anchor, name, url ?? signers.url) }
    const last = await lastSeq(out)
    if (info.seq <= last) throw new RollbackError(`this fsinfo.json has seq ${info.seq}, but ${out} already published ${last}; sign the release again (rotree sign picks a higher seq)`, { details: { seq: info.seq, seen: last } })
    await publishFsinfo(out, bytes, fsync)
    if (pending && sameReleaseRoot(pending.release.root, info.release.root) && pending.release.seq <= info.release.seq) await removeUnsigned(out)
    return { seq: info.seq, releaseSeq: info.release.seq, ...rootOut(info.release.root), expires: info.expires, blobs, already: false, address: addressOf(signers.anchor, name, url ?? signers.url) }
  })
}
