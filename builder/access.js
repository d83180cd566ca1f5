// `rotree access add|remove|list OUT`: the readers of a private tree
// (FORMAT.md §12.8), changed in OUT's private state under OUT's lock. A
// change is published with the next build or resign: adding a reader seals
// a new keyring over the same epoch key; removing one starts a new epoch,
// whose key it never gets, so it reads nothing published from then on.
import { UsageError } from 'rotree-client/errors'
import { readPublishedAny } from '../lib/published/publish.js'
import { readPrivate, writePrivate, addReaders, removeReaders, keyringCurrent } from './private-tree.js'
import { withOutLock } from './sign.js'

async function stateOf (out) {
  const s = await readPrivate(out)
  if (s === null) throw new UsageError(`${out} is not a private tree (build one with rotree build SRC OUT --private --reader age1…)`)
  return s
}

/**
 * The readers and what is published of them.
 * @returns {Promise<{ readers: string[], epoch: number, published: { epoch: number, keyring: string } | null, pending: boolean }>}
 */
export async function listAccess (out) {
  const s = await stateOf(out)
  const cur = await readPublishedAny(out)
  const published = cur?.access ? { epoch: cur.access.epoch, keyring: cur.access.keyring.hash } : null
  const pending = published === null || !keyringCurrent(s) || s.epoch !== published.epoch || s.keyring.hash !== published.keyring
  return { readers: [...s.readers], epoch: s.epoch, published, pending }
}

/**
 * Add or remove readers.
 * @param {string} out @param {'add'|'remove'} op @param {string[]} readers checked recipients
 * @returns {Promise<{ changed: string[], epoch: number, readers: number, newEpoch: boolean }>}
 */
export async function changeAccess (out, op, readers, { fsync = true } = {}) {
  if (!readers.length) throw new UsageError(`access ${op}: give at least one reader (age1…, or --readers FILE)`)
  return withOutLock(out, `rotree access ${op}`, async () => {
    const s = await stateOf(out)
    const before = s.epoch
    const changed = op === 'add' ? addReaders(s, readers) : removeReaders(s, readers)
    if (changed.length) await writePrivate(out, s, fsync)
    return { changed, epoch: s.epoch, readers: s.readers.length, newEpoch: s.epoch !== before }
  })
}
