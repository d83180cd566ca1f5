// The lies of the matrix: each names the threat it stands for (SFSRO §3 and
// TUF's attack list), what the lying mirror does, the error codes a reader
// may answer with, and whether the reader must have seen the newer root first.
export const THREATS = {
  'arbitrary-content': 'Arbitrary content: a mirror changes bytes of a file or of the metadata that names it',
  'mix-and-match': 'Mix-and-match: a mirror serves valid blobs or roots that belong elsewhere (another chunk, another version)',
  rollback: 'Rollback: a mirror serves an older, validly signed tree after a newer one was seen',
  freeze: 'Indefinite freeze: a mirror keeps serving a signed root past its expiry',
  'endless-data': 'Endless data: a mirror sends more bytes than asked for, without end',
  'slow-retrieval': 'Slow retrieval: a mirror stalls or drips bytes to hold a reader forever',
  'wrong-key': 'Wrong key: a mirror serves a tree signed by a key other than the one in the address',
  'malicious-mirror': 'Malicious mirror: errors, resets and false "not found" answers',
  'malformed-metadata': 'Malformed metadata: broken, oversized or unknown-version fsinfo.json; malformed blobs under a valid signature',
  'clock': 'Clock: a root issued in the future (a publisher or reader clock that is wrong)',
  keys: 'Keys and thresholds (format version 2): too few signatures for a role, a key a rotation retired, a trust document its old or new root keys did not sign, one key counted twice'
}

const blob = (pick, action) => f => ({ blob: (hash, bytes) => hash === pick(f) ? action(f, bytes) : 'honest' })
const flipped = (f, bytes) => { const b = Uint8Array.from(bytes); b[b.length >> 1] ^= 0x20; return { body: b } }
const fsinfo = pick => f => ({ fsinfo: () => ({ body: pick(f) }) })

/** { id, threat, what, lie(fixture) → lying-server options, codes: [...], seenNewer? } */
export const LIES = [
  { id: 'chunk-changed', threat: 'arbitrary-content', what: 'one byte of a file chunk flipped', lie: blob(f => f.middle, flipped), codes: ['ROTREE_HASH_MISMATCH'] },
  { id: 'dir-changed', threat: 'arbitrary-content', what: 'one byte of a directory page flipped', lie: blob(f => f.dataPage, flipped), codes: ['ROTREE_HASH_MISMATCH'] },
  { id: 'root-changed', threat: 'arbitrary-content', what: 'one byte of the root directory page flipped', lie: blob(f => f.rootPage, flipped), codes: ['ROTREE_HASH_MISMATCH'] },
  { id: 'fsinfo-bad-signature', threat: 'arbitrary-content', what: 'fsinfo.json sequence changed, signature kept', lie: fsinfo(f => f.fsinfo.badSig), codes: ['ROTREE_BAD_SIGNATURE'] },
  { id: 'chunk-swapped', threat: 'mix-and-match', what: 'another valid chunk served in place of the one asked for', lie: blob(f => f.middle, f => ({ swapWith: f.otherChunk })), codes: ['ROTREE_HASH_MISMATCH', 'ROTREE_TOO_LARGE', 'ROTREE_TRUNCATED'] },
  { id: 'fork', threat: 'mix-and-match', what: 'the current sequence number signed over another (older) root', lie: fsinfo(f => f.fsinfo.fork), codes: ['ROTREE_FORK'], seenNewer: true },
  { id: 'rollback', threat: 'rollback', what: 'an older, validly signed fsinfo.json after the newer one was seen', lie: fsinfo(f => f.fsinfo.old), codes: ['ROTREE_ROLLBACK'], seenNewer: true },
  { id: 'expired', threat: 'freeze', what: 'a validly signed fsinfo.json that has expired', lie: fsinfo(f => f.fsinfo.expired), codes: ['ROTREE_EXPIRED'] },
  { id: 'endless-chunk', threat: 'endless-data', what: 'an endless body for a chunk', lie: blob(f => f.middle, () => 'endless'), codes: ['ROTREE_TOO_LARGE'] },
  { id: 'extended-chunk', threat: 'endless-data', what: 'a chunk with 1 KiB appended', lie: blob(f => f.middle, () => 'extend'), codes: ['ROTREE_TOO_LARGE'] },
  { id: 'oversized-fsinfo', threat: 'endless-data', what: 'an 8 KiB fsinfo.json (the limit is 4 KiB)', lie: fsinfo(f => f.fsinfo.oversized), codes: ['ROTREE_TOO_LARGE', 'ROTREE_BAD_FORMAT'] },
  { id: 'stall', threat: 'slow-retrieval', what: 'headers for a chunk, then nothing', lie: blob(f => f.middle, () => 'stall'), codes: ['ROTREE_TIMEOUT'] },
  { id: 'drip', threat: 'slow-retrieval', what: 'a chunk at one byte every 50 ms', lie: blob(f => f.middle, () => ({ drip: 50 })), codes: ['ROTREE_TIMEOUT'] },
  { id: 'wrong-key', threat: 'wrong-key', what: 'fsinfo.json signed by another key', lie: fsinfo(f => f.fsinfo.wrongKey), codes: ['ROTREE_WRONG_KEY'] },
  { id: 'chunk-404', threat: 'malicious-mirror', what: '404 for a chunk (must not become "not found")', lie: blob(f => f.middle, () => ({ status: 404 })), codes: ['ROTREE_MIRROR_HTTP'] },
  { id: 'dir-404', threat: 'malicious-mirror', what: '404 for a directory page (must not become "not found")', lie: blob(f => f.dataPage, () => ({ status: 404 })), codes: ['ROTREE_MIRROR_HTTP'] },
  { id: 'chunk-500', threat: 'malicious-mirror', what: '500 for a chunk', lie: blob(f => f.middle, () => ({ status: 500 })), codes: ['ROTREE_MIRROR_HTTP'] },
  { id: 'truncated-chunk', threat: 'malicious-mirror', what: 'a chunk cut in half', lie: blob(f => f.middle, () => 'truncate'), codes: ['ROTREE_TRUNCATED'] },
  { id: 'reset', threat: 'malicious-mirror', what: 'the connection reset mid-body', lie: blob(f => f.middle, () => 'reset-mid'), codes: ['ROTREE_MIRROR_NETWORK'] },
  { id: 'fsinfo-malformed', threat: 'malformed-metadata', what: 'fsinfo.json that is not JSON', lie: fsinfo(f => f.fsinfo.malformed), codes: ['ROTREE_BAD_FORMAT'] },
  { id: 'fsinfo-version', threat: 'malformed-metadata', what: 'fsinfo.json of a format version this reader does not know (3)', lie: fsinfo(f => f.fsinfo.version3), codes: ['ROTREE_UNSUPPORTED_VERSION'] },
  { id: 'malformed-tree', threat: 'malformed-metadata', what: 'a validly signed root whose directory blob is malformed', lie: fsinfo(f => f.fsinfo.badTree), codes: ['ROTREE_BAD_FORMAT'] },
  { id: 'future', threat: 'clock', what: 'fsinfo.json issued a day in the future', lie: fsinfo(f => f.fsinfo.future), codes: ['ROTREE_NOT_YET_VALID'] }
]
