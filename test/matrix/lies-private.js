// The lies of the matrix about a private tree (docs/FORMAT.md §12.8), against
// the tree of fixture-private.js, read at #t<hash of trust 1>:private by
// reader A. A mirror of a private tree holds ciphertext only and no key: what
// it can do is what any mirror can (serve another blob at a handle, cut a
// blob, stall, serve an older fsinfo.json that was validly signed), now on
// sealed blobs, the keyring and the manifest. It cannot sign fsinfo.json, so
// another wrap of the root is the lie of someone holding the timestamp key
// (and the epoch key of OUT/.rotree/private.json).
//
// Every reader that reads must refuse with the typed error or, with an honest
// mirror beside, read the true bytes; a reader the keyring does not name
// (no identity, or a removed reader) gets ROTREE_NO_ACCESS, never a mirror
// fault. `rotree pull` copies a private tree without keys: its cell is the
// pull and then a read of the pulled folder with the row's identity.
// `rotree fsck --repair-from` repairs, without keys, the blob the lie is
// about, deleted from a mirror folder (fixture-private.js `mirror`), from the
// liar (and the honest mirror beside); it reads no mirror's fsinfo.json.
export const PRIVATE_THREAT = {
  private: 'Private trees (FORMAT.md §12.8): sealed blobs, the keyring, the wrapped root and the manifest; readers the keyring does not name'
}

const blob = (pick, action) => f => ({ blob: (hash, bytes) => hash === pick(f) ? action(f, bytes) : 'honest' })
const flipped = (f, bytes) => { const b = Uint8Array.from(bytes); b[b.length >> 1] ^= 0x20; return { body: b } }
const fsinfo = pick => f => ({ fsinfo: () => ({ body: pick(f) }) })
const honest = () => ({})

// readers that copy a private tree without keys (readers.js `keyless`), and why the others are not asked
const NO_MANIFEST = 'a reader that reads through the root its identity opens never asks for the manifest (checked in every other row)'
const NO_FSINFO = '`rotree fsck --repair-from` repairs blobs against the folder\'s own verified root: it reads no mirror\'s fsinfo.json and uses no identity'
const readersOnly = (ids, why) => ({ only: ids, why })

/**
 * { id, threat, what, lie(fixture) → lying-server options, codes, because?, target?, identity?, seenNewer?, refusedWithHonest?, applies? }
 * because: what the library's error says (lies-v2.js), with the row's identity.
 * target(f): the blob the lie is about (fsck --repair-from repairs it); without one, fsck does not apply.
 * identity: 'none' or 'removed' (C) instead of reader A.
 * refusedWithHonest: { readers?: ids (default every reader), why }: refused even with an honest
 *   mirror beside (a signed answer that no other mirror can outrank, or a reader the keyring does not name).
 * applies: { only: reader ids, why }: the other readers are not asked (n/a, why).
 */
export const LIES_PRIVATE = [
  { id: 'p-chunk-changed', threat: 'private', what: 'private: one byte of a sealed file chunk flipped', lie: blob(f => f.middle, flipped), target: f => f.middle, codes: ['ROTREE_HASH_MISMATCH'] },
  { id: 'p-page-changed', threat: 'private', what: 'private: one byte of a sealed directory page flipped', lie: blob(f => f.dataPage, flipped), target: f => f.dataPage, codes: ['ROTREE_HASH_MISMATCH'] },
  { id: 'p-chunk-other-key', threat: 'private', what: 'private: a sealed chunk replaced by the same bytes sealed under another tree\'s key (the same stored size)', lie: blob(f => f.middle, f => ({ body: f.q.chunk })), target: f => f.middle, codes: ['ROTREE_HASH_MISMATCH'] },
  { id: 'p-keyring-other-tree', threat: 'private', what: 'private: the keyring replaced by another tree\'s keyring for the same readers (the same size; reader A opens it)', lie: blob(f => f.keyring, f => ({ body: f.q.keyring })), target: f => f.keyring, codes: ['ROTREE_HASH_MISMATCH'] },
  { id: 'p-keyring-stall', threat: 'private', what: 'private: headers for the keyring, then nothing', lie: blob(f => f.keyring, () => 'stall'), target: f => f.keyring, codes: ['ROTREE_TIMEOUT'] },
  { id: 'p-manifest-other', threat: 'private', what: 'private: the manifest page of release 1 (valid, the same size) served in place of the current one', lie: blob(f => f.manifest, f => ({ swapWith: f.oldManifest })), target: f => f.manifest, codes: ['ROTREE_HASH_MISMATCH'], applies: readersOnly(['rotree pull', 'rotree fsck --repair-from'], NO_MANIFEST) },
  { id: 'p-manifest-truncated', threat: 'private', what: 'private: the manifest page cut in half', lie: blob(f => f.manifest, () => 'truncate'), target: f => f.manifest, codes: ['ROTREE_TRUNCATED'], applies: readersOnly(['rotree pull', 'rotree fsck --repair-from'], NO_MANIFEST) },
  { id: 'p-stale-keyring', threat: 'private', what: 'private: to reader A, never seen the tree, the fsinfo.json of the current release from before A was added (validly signed, unexpired; its keyring, of the same epoch, does not name A)', lie: fsinfo(f => f.fsinfo.beforeAdd), because: /not one of the tree's readers/, codes: ['ROTREE_NO_ACCESS'] },
  { id: 'p-stale-keyring-seen', threat: 'private', what: 'private: the same after reader A read the tree', lie: fsinfo(f => f.fsinfo.beforeAdd), because: /fsinfo\.json sequence \d+ is below \d+, already seen/, codes: ['ROTREE_ROLLBACK'], seenNewer: true },
  { id: 'p-ts-old-keyring', threat: 'private', what: 'private: a stolen timestamp key (no other key) re-signs the current fsinfo.json, newer, with the keyring of the same epoch from before A was added', lie: fsinfo(f => f.fsinfo.oldKeyring), because: /not one of the tree's readers/, codes: ['ROTREE_NO_ACCESS'], refusedWithHonest: { why: 'the newest validly signed fsinfo.json names a keyring without this reader' } },
  { id: 'p-other-wrap', threat: 'private', what: 'private: a stolen timestamp key and the epoch key of OUT/.rotree/private.json re-sign the current fsinfo.json, newer, its access.root wrapping release 1\'s root (another commitment)', lie: fsinfo(f => f.fsinfo.otherWrap), because: /its commitment differs/, codes: ['ROTREE_BAD_FORMAT'], refusedWithHonest: { readers: ['rotree pull'], why: 'a keyless pull cannot open the root: it copies the newest validly signed fsinfo.json, which its readers then refuse' } },
  { id: 'p-no-identity', threat: 'private', what: 'private: an honest mirror, read without an identity', lie: honest, identity: 'none', because: /no identity was given/, codes: ['ROTREE_NO_ACCESS'], refusedWithHonest: { why: 'not a reader of the tree' } },
  { id: 'p-removed-reader', threat: 'private', what: 'private: an honest mirror, read by reader C, removed before the current release (a new epoch)', lie: honest, identity: 'removed', because: /not one of the tree's readers/, codes: ['ROTREE_NO_ACCESS'], refusedWithHonest: { why: 'not a reader of the tree' } }
]

/** Which readers a lie is asked of: { ok: true } or { ok: false, why }. */
export function appliesTo (lie, reader) {
  if (lie.applies && !lie.applies.only.includes(reader.id)) return { ok: false, why: lie.applies.why }
  if (reader.needsTarget && !lie.target) return { ok: false, why: NO_FSINFO }
  return { ok: true }
}
