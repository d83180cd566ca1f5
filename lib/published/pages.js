// A published folder read from its own disk, with a reader's checks: the one
// loader that pull, fsck, gc and `sign --publish` walk a root with.
// Directory pages and chunk indexes are read capped at their size and
// verified (hash, exact size) and decoded by client-js/src/trust/verify.js before
// the walker (client-js/src/tree/walk.js) applies the placement checks, so a
// damaged blob is found, never parsed. Data chunks are trusted by size alone
// unless asked to hash them (docs/TRUST.md rule 3 for a local blob:
// localChunkFault; fsck scrubs every byte).
import fs from 'node:fs/promises'
import { VERIFIERS, localChunkFault, storedSizeOf } from 'rotree-client/verify'
import { DAMAGE_CODES, RotreeError } from 'rotree-client/errors'
import { walkRoot } from './walk-root.js'
import { readLocal, blobPath, missingBlob } from './blob-store.js'

const PAGE_NAMES = { dir: 'directory page', cindex: 'chunk index' }

/**
 * Is this error a local copy that is not the blob (fetch or repair another),
 * rather than a bug or a tree that was signed broken? Bytes that hash right
 * but do not decode were signed that way: another copy would be the same.
 */
export function isLocalDamage (err) {
  return err?.missing === true || (DAMAGE_CODES.has(err?.code) && err.code !== 'ROTREE_BAD_FORMAT')
}

/**
 * A `load` for walkTree over dir/h.
 * @param {string} dir
 * @param {object} [o]
 * @param {(hash: string) => boolean} [o.has] when given and false, the blob is taken as missing without a read
 * @param {(ref, kind, fault: Error) => Promise<object>} [o.onDamage] a page that is missing or damaged
 *   here: return its verified value from elsewhere (pull fetches it, fsck repairs it), or throw.
 *   Without it the fault is thrown (TruncatedError with `missing: true` for an absent blob).
 * @param {(ref, kind) => void} [o.onLocal] a page was read from dir and verified
 * @param {number} [o.cacheBytes=0] keep decoded pages up to this many blob bytes (gc walks
 *   several roots that share most of their pages)
 */
export function pageLoader (dir, { has, onDamage, onLocal, cacheBytes = 0 } = {}) {
  const cache = new Map()
  let cached = 0
  return async function load (ref, kind) {
    // the sizes and codec are part of the key: a second reference that says otherwise must be checked again
    const k = `${kind} ${ref.hash} ${ref.size} ${storedSizeOf(ref)} ${ref.codec}`
    const hit = cache.get(k)
    if (hit) { onLocal?.(ref, kind); return hit }
    let fault = null
    let value
    const bytes = has && !has(ref.hash) ? null : await readLocal(dir, ref.hash, storedSizeOf(ref))
    if (bytes === null) fault = missingBlob(dir, ref, PAGE_NAMES[kind] ?? kind)
    else {
      try { value = await VERIFIERS[kind](bytes, ref) } catch (err) {
        if (!isLocalDamage(err)) throw err
        fault = err
      }
    }
    if (fault) {
      if (!onDamage) throw fault
      return onDamage(ref, kind, fault)
    }
    if (cached + ref.size <= cacheBytes) { cache.set(k, value); cached += ref.size }
    onLocal?.(ref, kind)
    return value
  }
}

/**
 * A data chunk in dir/h checked against one reference to it: null when it is
 * acceptable, else the typed fault (missing: TruncatedError with `missing`;
 * the wrong size: localChunkFault's; with rehash, whatever verifyBlob finds).
 * @param {string} dir @param {{ hash: string, size: number }} ref
 * @param {{ rehash?: boolean, what?: string }} [o]
 */
export async function localDataFault (dir, ref, { rehash = false, what = 'data' } = {}) {
  if (rehash) {
    const bytes = await readLocal(dir, ref.hash, storedSizeOf(ref))
    if (bytes === null) return missingBlob(dir, ref, what)
    try { await VERIFIERS.data(bytes, ref); return null } catch (err) {
      if (!isLocalDamage(err)) throw err
      return err
    }
  }
  let st
  try { st = await fs.stat(blobPath(dir, ref.hash)) } catch (err) {
    if (err.code === 'ENOENT') return missingBlob(dir, ref, what)
    throw err
  }
  return localChunkFault(st.size, ref)
}

/**
 * The same error, its message prefixed with the tree path whose reference
 * failed (a report names the path, not only the hash). Only rotree's own
 * errors are rebuilt: a system error (ENOSPC, EIO) keeps its code and errno
 * as it is.
 * @template {Error} E @param {E} err @param {string} p @param {{ hash: string }} [ref] @returns {E}
 */
export function atPath (err, p, ref) {
  if (!(err instanceof RotreeError)) return err
  const E = err.constructor
  const details = { ...err, hash: err.hash ?? ref?.hash, path: p }
  delete details.name; delete details.code
  return new E(`${p}: ${err.message}`, { cause: err.cause ?? err, details })
}

/**
 * Walk every blob reachable from root in dir. Pages are verified as they are
 * loaded; with checkData every reference to a data chunk (not only the first
 * one to a hash: a tree could list one chunk under two sizes) is checked for
 * presence and size, and the first fault is thrown naming its path.
 * @param {string} dir @param {{ hash: string, size: number }} root
 * @param {{ load?: Function, onRef?: (ref, kind, path) => void, checkData?: boolean, reached?: Set<string>, concurrency?: number }} [o]
 *   concurrency: page loads at once (walkTree's default when not given; a walk of
 *   this disk alone needs few, and each page in flight holds its decoded entries)
 * @returns {Promise<Set<string>>} the handles reached
 */
export async function walkLocal (dir, root, { load = pageLoader(dir), onRef = () => {}, checkData = true, reached = new Set(), concurrency } = {}) {
  const sizes = new Map() // hash → its size on disk, stat'ed once
  await walkRoot(root, load, async (ref, kind, p) => {
    reached.add(ref.hash)
    if (kind === 'data' && checkData) {
      const size = sizes.get(ref.hash)
      if (size === undefined) {
        const fault = await localDataFault(dir, ref)
        if (fault) throw atPath(fault, p)
        sizes.set(ref.hash, storedSizeOf(ref))
      } else {
        const fault = localChunkFault(size, ref)
        if (fault) throw atPath(fault, p)
      }
    }
    return onRef(ref, kind, p)
  }, { concurrency })
  return reached
}
