// RFC 6962 / RFC 9162 Merkle tree hashing for a transparency log, in the
// layout Go's golang.org/x/mod/sumdb/tlog stores it: every hash of the tree
// (leaf hashes and the hashes of complete subtrees) has one "stored hash
// index", in the order an append-only writer produces them, so a log's hashes
// live in one growing array. Proofs are built Go's way (recursive, over the
// stored hashes) and checked RFC 9162's way (§2.1.3.2 and §2.1.4.2), which
// test/tlog/tlog.test.js checks against each other.
//
// Sizes and indexes are JavaScript numbers: exact up to 2^53, far beyond any
// log this writes. Hashes are 32-byte Uint8Arrays.
import { sha256Sync } from '#sha256'

export const HASH_SIZE = 32

/** Every failure of this module: a malformed input or a proof that does not hold. */
export class TlogError extends Error {
  constructor (message) { super(message); this.name = 'TlogError' }
}

/** RFC 6962 §2.1: SHA-256(0x00 ‖ entry). */
export function leafHash (entry) {
  const b = new Uint8Array(1 + entry.length)
  b.set(entry, 1)
  return sha256Sync(b)
}

/** RFC 6962 §2.1: SHA-256(0x01 ‖ left ‖ right). */
export function nodeHash (left, right) {
  const b = new Uint8Array(1 + 2 * HASH_SIZE)
  b[0] = 1
  b.set(left, 1)
  b.set(right, 1 + HASH_SIZE)
  return sha256Sync(b)
}

/** The hash of the empty tree: SHA-256 of no bytes. */
export function emptyHash () { return sha256Sync(new Uint8Array(0)) }

export function equalHash (a, b) {
  if (a.length !== b.length) return false
  let d = 0
  for (let i = 0; i < a.length; i++) d |= a[i] ^ b[i]
  return d === 0
}

const half = n => Math.floor(n / 2)
const odd = n => n % 2 === 1
function checkCount (n, what) {
  if (!Number.isSafeInteger(n) || n < 0) throw new TlogError(`${what} must be a whole number, not ${n}`)
}

/** { k, level }: the largest power of two k < n (n > 1), k = 2^level. */
function maxpow2 (n) {
  let k = 1; let level = 0
  while (k * 2 < n) { k *= 2; level++ }
  return { k, level }
}

function trailingOnes (n) { let c = 0; while (odd(n)) { c++; n = half(n) } return c }

/**
 * Where the n-th hash at `level` (level 0: leaf hashes; level l: the hash of
 * leaves n·2^l … (n+1)·2^l − 1) sits among the stored hashes.
 */
export function storedHashIndex (level, n) {
  for (let l = level; l > 0; l--) n = 2 * n + 1
  let i = 0
  for (; n > 0; n = half(n)) i += n
  return i + level
}

/** The inverse of storedHashIndex: { level, n }. */
export function splitStoredHashIndex (index) {
  let n = half(index)
  let indexN = storedHashIndex(0, n)
  if (indexN > index) throw new TlogError('bad math in splitStoredHashIndex')
  for (;;) {
    // each new leaf n adds 1 + (trailing ones of n) hashes
    const x = indexN + 1 + trailingOnes(n)
    if (x > index) break
    n++
    indexN = x
  }
  const level = index - indexN
  return { level, n: Math.floor(n / 2 ** level) }
}

/** How many hashes a tree of n leaves stores. */
export function storedHashCount (n) {
  checkCount(n, 'tree size')
  if (n === 0) return 0
  let count = storedHashIndex(0, n - 1) + 1
  for (let i = n - 1; odd(i); i = half(i)) count++
  return count
}

/**
 * The hashes appending leaf number n (its leaf hash `h`) adds to the stored
 * hashes: the leaf hash, then the hash of every subtree it completes.
 * @param {number} n @param {Uint8Array} h @param {(indexes: number[]) => Uint8Array[]} readHashes
 */
export function storedHashesForLeafHash (n, h, readHashes) {
  const hashes = [h]
  const m = trailingOnes(n)
  const indexes = new Array(m)
  for (let i = 0; i < m; i++) indexes[m - 1 - i] = storedHashIndex(i, Math.floor(n / 2 ** i) - 1)
  const old = readExactly(readHashes, indexes)
  for (let i = 0; i < m; i++) {
    h = nodeHash(old[m - 1 - i], h)
    hashes.push(h)
  }
  return hashes
}

/** storedHashesForLeafHash for the entry's bytes. */
export function storedHashes (n, entry, readHashes) { return storedHashesForLeafHash(n, leafHash(entry), readHashes) }

function readExactly (readHashes, indexes) {
  if (indexes.length === 0) return []
  const hashes = readHashes(indexes)
  if (hashes.length !== indexes.length) throw new TlogError(`readHashes(${indexes.length} indexes) gave ${hashes.length} hashes`)
  return hashes
}

/** A readHashes over an array of stored hashes (the writer's, or a test's). */
export function arrayHashReader (stored) {
  return indexes => indexes.map(i => {
    if (!(i >= 0 && i < stored.length)) throw new TlogError(`stored hash ${i} is not in the tree`)
    return stored[i]
  })
}

/** The root hash of the tree of the first n leaves (RFC 6962 MTH). */
export function treeHash (n, readHashes) {
  checkCount(n, 'tree size')
  if (n === 0) return emptyHash()
  const indexes = subTreeIndex(0, n, [])
  const hashes = readExactly(readHashes, indexes)
  const { hash, rest } = subTreeHash(0, n, hashes)
  if (rest.length !== 0) throw new TlogError('bad index math in treeHash')
  return hash
}

// the stored hashes that make up leaves lo … hi − 1, lo a multiple of the first's width
function subTreeIndex (lo, hi, need) {
  while (lo < hi) {
    const { k, level } = maxpow2(hi - lo + 1)
    if (lo % k !== 0) throw new TlogError('bad math in subTreeIndex')
    need.push(storedHashIndex(level, Math.floor(lo / k)))
    lo += k
  }
  return need
}

function subTreeHash (lo, hi, hashes) {
  let numTree = 0
  while (lo < hi) {
    const { k } = maxpow2(hi - lo + 1)
    numTree++
    lo += k
  }
  if (hashes.length < numTree) throw new TlogError('bad index math in subTreeHash')
  let h = hashes[numTree - 1]
  for (let i = numTree - 2; i >= 0; i--) h = nodeHash(hashes[i], h)
  return { hash: h, rest: hashes.slice(numTree) }
}

/** RFC 9162 §2.1.3.1: the inclusion proof of leaf `index` in the tree of `size` leaves. */
export function inclusionProof (size, index, readHashes) {
  checkCount(size, 'tree size'); checkCount(index, 'leaf index')
  if (index >= size) throw new TlogError(`leaf ${index} is not in a tree of ${size}`)
  const hashes = readExactly(readHashes, leafProofIndex(0, size, index, []))
  const { proof, rest } = leafProof(0, size, index, hashes)
  if (rest.length !== 0) throw new TlogError('bad index math in inclusionProof')
  return proof
}

function leafProofIndex (lo, hi, n, need) {
  if (lo + 1 === hi) return need
  const { k } = maxpow2(hi - lo)
  if (n < lo + k) {
    leafProofIndex(lo, lo + k, n, need)
    subTreeIndex(lo + k, hi, need)
  } else {
    subTreeIndex(lo, lo + k, need)
    leafProofIndex(lo + k, hi, n, need)
  }
  return need
}

function leafProof (lo, hi, n, hashes) {
  if (lo + 1 === hi) return { proof: [], rest: hashes }
  const { k } = maxpow2(hi - lo)
  let p, th
  if (n < lo + k) {
    ({ proof: p, rest: hashes } = leafProof(lo, lo + k, n, hashes));
    ({ hash: th, rest: hashes } = subTreeHash(lo + k, hi, hashes))
  } else {
    ({ hash: th, rest: hashes } = subTreeHash(lo, lo + k, hashes));
    ({ proof: p, rest: hashes } = leafProof(lo + k, hi, n, hashes))
  }
  p.push(th)
  return { proof: p, rest: hashes }
}

/** RFC 9162 §2.1.4.1: the consistency proof from the tree of `oldSize` leaves to that of `size` (1 ≤ oldSize ≤ size). */
export function consistencyProof (size, oldSize, readHashes) {
  checkCount(size, 'tree size'); checkCount(oldSize, 'old tree size')
  if (oldSize < 1 || oldSize > size) throw new TlogError(`no consistency proof from ${oldSize} to ${size}`)
  const hashes = readExactly(readHashes, treeProofIndex(0, size, oldSize, []))
  const { proof, rest } = treeProof(0, size, oldSize, hashes)
  if (rest.length !== 0) throw new TlogError('bad index math in consistencyProof')
  return proof
}

function treeProofIndex (lo, hi, n, need) {
  if (n === hi) return lo === 0 ? need : subTreeIndex(lo, hi, need)
  const { k } = maxpow2(hi - lo)
  if (n <= lo + k) {
    treeProofIndex(lo, lo + k, n, need)
    subTreeIndex(lo + k, hi, need)
  } else {
    subTreeIndex(lo, lo + k, need)
    treeProofIndex(lo + k, hi, n, need)
  }
  return need
}

function treeProof (lo, hi, n, hashes) {
  if (n === hi) {
    if (lo === 0) return { proof: [], rest: hashes }
    const { hash, rest } = subTreeHash(lo, hi, hashes)
    return { proof: [hash], rest }
  }
  const { k } = maxpow2(hi - lo)
  let p, th
  if (n <= lo + k) {
    ({ proof: p, rest: hashes } = treeProof(lo, lo + k, n, hashes));
    ({ hash: th, rest: hashes } = subTreeHash(lo + k, hi, hashes))
  } else {
    ({ hash: th, rest: hashes } = subTreeHash(lo, lo + k, hashes));
    ({ proof: p, rest: hashes } = treeProof(lo + k, hi, n, hashes))
  }
  p.push(th)
  return { proof: p, rest: hashes }
}

/**
 * RFC 9162 §2.1.3.2: does `proof` show the leaf hash `leaf` at `index` in the
 * tree of `size` leaves with root `root`? Throws TlogError when it does not.
 */
export function verifyInclusion (proof, size, index, leaf, root) {
  checkCount(size, 'tree size'); checkCount(index, 'leaf index')
  if (index >= size) throw new TlogError(`leaf ${index} is not in a tree of ${size}`)
  let fn = index; let sn = size - 1; let r = leaf
  for (const p of proof) {
    if (sn === 0) throw new TlogError('inclusion proof too long')
    if (odd(fn) || fn === sn) {
      r = nodeHash(p, r)
      while (!odd(fn) && fn !== 0) { fn = half(fn); sn = half(sn) }
    } else {
      r = nodeHash(r, p)
    }
    fn = half(fn); sn = half(sn)
  }
  if (sn !== 0 || !equalHash(r, root)) throw new TlogError('inclusion proof does not verify')
}

/**
 * RFC 9162 §2.1.4.2: does `proof` show the tree of `oldSize` leaves (root
 * `oldRoot`) is a prefix of the tree of `size` leaves (root `root`)? Equal
 * sizes need an empty proof and equal roots. Throws TlogError when not.
 */
export function verifyConsistency (proof, size, oldSize, root, oldRoot) {
  checkCount(size, 'tree size'); checkCount(oldSize, 'old tree size')
  if (oldSize < 1 || oldSize > size) throw new TlogError(`no consistency proof from ${oldSize} to ${size}`)
  if (oldSize === size) {
    if (proof.length !== 0 || !equalHash(root, oldRoot)) throw new TlogError('consistency proof does not verify')
    return
  }
  if (proof.length === 0) throw new TlogError('consistency proof is empty')
  const path = isPow2(oldSize) ? [oldRoot, ...proof] : proof
  let fn = oldSize - 1; let sn = size - 1
  while (odd(fn)) { fn = half(fn); sn = half(sn) }
  let fr = path[0]; let sr = path[0]
  for (const c of path.slice(1)) {
    if (sn === 0) throw new TlogError('consistency proof too long')
    if (odd(fn) || fn === sn) {
      fr = nodeHash(c, fr); sr = nodeHash(c, sr)
      while (!odd(fn) && fn !== 0) { fn = half(fn); sn = half(sn) }
    } else {
      sr = nodeHash(sr, c)
    }
    fn = half(fn); sn = half(sn)
  }
  if (sn !== 0 || !equalHash(fr, oldRoot) || !equalHash(sr, root)) throw new TlogError('consistency proof does not verify')
}

function isPow2 (n) { while (n > 1 && !odd(n)) n = half(n); return n === 1 }
