// The key lies of the matrix: format version 2 (docs/FORMAT.md §12,
// docs/TRUST.md rules 10–14) against the tree of fixture-v2.js, read at
// #t<hash of trust 1>:stable. Each is what a mirror can serve with the
// family's real documents, replayed signatures and keys it does not hold (or
// one root key it stole): none may make a reader hand out a byte.
//
// When no mirror serves a trust chain the reader accepts, the fsinfo.json
// that named it is refused as ROTREE_THRESHOLD (FORMAT.md §12.9 step 4): the
// code of a forged trust/2.json.
const fsinfo = pick => f => ({ fsinfo: () => ({ body: pick(f) }) })
const trust2 = (pick, fs) => f => ({ trust: seq => seq === 2 ? { body: pick(f) } : 'honest', ...(fs ? { fsinfo: () => ({ body: fs(f) }) } : {}) })

/**
 * { id, threat, what, lie(fixture) → lying-server options, because, codes: [...], seenNewer?, family? }
 * because: what the library's error says when the liar is alone, so a lie is
 * shown refused by the rule it stands for, not by another that answers with
 * the same code; family 'E': fixture-v2.js's family whose trust 1 expired.
 */
export const LIES_V2 = [
  { id: 'v2-release-threshold', threat: 'keys', what: 'format 2: a release with 1 of its 2 release signatures', lie: fsinfo(f => f.fsinfo.oneRelease), because: /release \d+ \(release keys\): 1 valid signature/, codes: ['ROTREE_THRESHOLD'] },
  { id: 'v2-retired-timestamp-key', threat: 'keys', what: 'format 2: fsinfo.json signed by the timestamp key trust document 2 retired', lie: fsinfo(f => f.fsinfo.retiredTimestamp), because: /fsinfo\.json \(timestamp keys\): 0 valid/, codes: ['ROTREE_THRESHOLD'] },
  { id: 'v2-trust-one-old-key', threat: 'keys', what: 'format 2: trust/2.json signed by one root key of document 1 (2 needed)', lie: trust2(f => f.trust2.oneOld), because: /trust document 2 \(root keys of 1\): 1 valid/, codes: ['ROTREE_THRESHOLD'] },
  { id: 'v2-trust-no-new-key', threat: 'keys', what: 'format 2: trust/2.json signed by document 1\'s root keys, none of its own', lie: trust2(f => f.trust2.noNew), because: /trust document 2 \(its own root keys\): 0 valid/, codes: ['ROTREE_THRESHOLD'] },
  { id: 'v2-trust-duplicate-key', threat: 'keys', what: 'format 2: a forged trust/2.json whose one stolen root key signs twice to reach 2', lie: trust2(f => f.trust2.stolen, f => f.fsinfo.stolen), because: /trust document 2 \(root keys of 1\): 1 valid/, codes: ['ROTREE_THRESHOLD'] },
  { id: 'v2-trust-rollback', threat: 'rollback', what: 'format 2: an older, validly signed fsinfo.json under trust document 1 after document 2 was seen', lie: fsinfo(f => f.fsinfo.old), because: /under trust document 1, older than 2/, codes: ['ROTREE_ROLLBACK'], seenNewer: true },
  { id: 'v2-release-fork', threat: 'mix-and-match', what: 'format 2: after release N was seen, a newer fsinfo.json binding release N over another (older) root, signed by every key it needs', lie: fsinfo(f => f.fsinfo.releaseFork), because: /release \d+ was already seen with a different root/, codes: ['ROTREE_FORK'], seenNewer: true },
  { id: 'v2-timestamp-fork', threat: 'mix-and-match', what: 'format 2: the fsinfo.json sequence number already seen, binding another release', lie: fsinfo(f => f.fsinfo.timestampFork), because: /fsinfo\.json sequence \d+ was already seen binding another release/, codes: ['ROTREE_FORK'], seenNewer: true },
  { id: 'v2-other-name', threat: 'mix-and-match', what: 'format 2: tree "nightly" of the same keys served at the address of "stable"', lie: fsinfo(f => f.fsinfo.nightly), because: /for tree "nightly", not "stable"/, codes: ['ROTREE_WRONG_NAME'] },
  { id: 'v2-old-era', threat: 'rollback', what: 'format 2: to a reader that never saw the rotation, the fsinfo.json of before it (under trust document 1, signed by the timestamp key document 2 retired), trust/2.json served beside it', lie: fsinfo(f => f.fsinfo.oldEra), because: /under trust document 1, older than 2/, codes: ['ROTREE_ROLLBACK'] },
  { id: 'v2-sibling-family', threat: 'mix-and-match', what: 'format 2: a sibling family\'s trust/2.json and fsinfo.json (the same root keys, another trust document 1), signed by its real keys', lie: trust2(f => f.trust2.sibling, f => f.fsinfo.sibling), because: /for the tree family #t[0-9a-f]{64}, not the address's/, codes: ['ROTREE_WRONG_KEY'] },
  { id: 'v2-sibling-trust', threat: 'keys', what: 'format 2: a sibling family\'s trust/2.json, signed by every root key a document 2 of this family needs', lie: trust2(f => f.trust2.sibling), because: /trust document 2 belongs to another family/, codes: ['ROTREE_WRONG_KEY'] },
  { id: 'v2-other-family-release', threat: 'mix-and-match', what: 'format 2: an fsinfo.json signed by this tree\'s timestamp key, carrying another family\'s release signed by the release keys both share', lie: fsinfo(f => f.fsinfo.otherFamilyRelease), because: /the release is for the tree family/, codes: ['ROTREE_WRONG_KEY'] },
  { id: 'v2-small-order-keys', threat: 'keys', what: 'format 2: trust/2.json, signed by the root keys it needs, whose release keys are the identity point in its two spellings (any signature verifies under it), and a release with no real signature', lie: trust2(f => f.trust2.smallOrder, f => f.fsinfo.smallOrder), because: /point of small order/, codes: ['ROTREE_BAD_FORMAT'] },
  { id: 'v2-expired-trust', threat: 'freeze', what: 'format 2: a fresh fsinfo.json under a trust document that has expired (the newest a frozen mirror shows)', lie: fsinfo(f => f.fsinfo.expiredTrust), because: /trust document 1 expired/, codes: ['ROTREE_EXPIRED'], family: 'E' }
]
