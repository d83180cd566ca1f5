// What the publisher of a private tree keeps (FORMAT.md §12.8), in
// OUT/.rotree/private.json: the tree secret every blob key is derived from,
// the epoch and its key, the readers, the keyring last sealed for them, and
// the root ref behind each release commitment still to be wrapped. None of it
// is ever published; `.rotree/` is the builder's own folder (mode 0700, the
// file 0600), which no rotree server, config or push serves or copies.
//
// Losing the file loses the tree: no new root can be wrapped for its readers
// (docs/DEPLOY.md says to back it up with the keys).
//
// Readers are age recipients. Adding one re-seals the keyring over the same
// epoch key; removing one starts a new epoch, whose key the removed reader
// never gets. Either takes effect with the next publish (build, resign).
import crypto from 'node:crypto'
import fs from 'node:fs/promises'
import path from 'node:path'
import { UsageError, BadFormatError } from 'rotree-client/errors'
import { recipientKey, sealKeyring, encodeRootRef, rootCommit, wrapRoot } from 'rotree-client/access'
import { fromHex, toHex, MAX_READERS } from 'rotree-client/format'
import { writeDurable } from '../lib/published/history.js'
import { ensurePrivateFolder } from '../lib/private-folder.js'
import { readRegular } from '../lib/open-regular.js'

export const PRIVATE_FILE = path.join('.rotree', 'private.json')
const TYPE = 'rotree-private-tree'
const KEEP_ROOTS = 16
const MAX_STATE = 64 << 20 // 100,000 readers of ~70 bytes each, with room // root refs kept for commitments not yet published, or published last

/**
 * The recipients in a readers file (as age's -R: one per line, # comments and blank lines ignored).
 * @param {string} text @param {string} file for messages
 */
export function parseReaders (text, file) {
  const out = []
  for (const [i, raw] of text.split(/\r?\n/).entries()) {
    const line = raw.trim()
    if (line === '' || line.startsWith('#')) continue
    out.push(checkReader(line, `${file}:${i + 1}`))
  }
  return out
}

/** An age recipient a keyring can be sealed to: `age1…` (X25519) or `age1pq1…` (hybrid). */
export function checkReader (r, where = 'reader') {
  const s = String(r).trim()
  if (s.startsWith('age1pq1')) {
    if (!/^age1pq1[02-9ac-hj-np-z]+$/.test(s)) throw new UsageError(`${where}: ${s.slice(0, 20)}… is not an age1pq1… recipient`)
    return s
  }
  try { recipientKey(s) } catch { throw new UsageError(`${where}: ${JSON.stringify(s.slice(0, 80))} is not an age recipient (age1…; rotree keygen --reader FILE prints one)`) }
  return s
}

/** A reader list without duplicates, in a fixed order. */
const readerSet = rs => [...new Set(rs)].sort()
const digestOf = readers => crypto.createHash('sha256').update(readers.join('\n')).digest('hex')

/** @returns {Promise<object|null>} OUT's private state, or null for a public OUT */
export async function readPrivate (out) {
  const file = path.join(out, PRIVATE_FILE)
  // a regular file only: a link planted here must not choose the secret a build seals with
  const bytes = await readRegular(file, MAX_STATE)
  if (bytes === null) return null
  if (bytes.length > MAX_STATE) throw new BadFormatError(`${file} is larger than a private tree's state can be`)
  let s
  try { s = JSON.parse(Buffer.from(bytes).toString('utf8')) } catch { s = null }
  const hex = v => typeof v === 'string' && /^[0-9a-f]{64}$/.test(v)
  if (!s || s.type !== TYPE || s.version !== 1 || !hex(s.secret) || !hex(s.epochKey) || !Number.isSafeInteger(s.epoch) || s.epoch < 1 ||
      !Array.isArray(s.readers) || typeof s.roots !== 'object' || s.roots === null) {
    throw new BadFormatError(`${file} is not a private tree's state this builder wrote`)
  }
  return s
}

/** Write OUT's private state (0600, in a folder only this user can write). */
export async function writePrivate (out, s, fsync = true) {
  const dir = path.join(out, '.rotree')
  await ensurePrivateFolder(dir, 'the builder\'s folder of a private tree')
  await fs.chmod(dir, 0o700) // the build index beside it holds the tree's names
  const file = path.join(out, PRIVATE_FILE)
  const tmp = `${file}.${process.pid}.tmp`
  await writeDurable(tmp, JSON.stringify(s, null, 2) + '\n', fsync, 0o600)
  await fs.rename(tmp, file)
}

/** A new private tree's state: a random secret and epoch key, epoch 1. */
export function newPrivate (readers) {
  if (!readers.length) throw new UsageError('a private tree needs at least one reader (--reader age1… or --readers FILE)')
  return {
    type: TYPE,
    version: 1,
    secret: crypto.randomBytes(32).toString('hex'),
    epoch: 1,
    epochKey: crypto.randomBytes(32).toString('hex'),
    readers: readerSet(readers),
    keyring: null,
    roots: {}
  }
}

/**
 * Readers added; the epoch key stays (a new keyring at the next publish).
 * @returns {string[]} those that were not readers already
 */
export function addReaders (s, readers) {
  const added = readers.filter(r => !s.readers.includes(r))
  if (s.readers.length + added.length > MAX_READERS) throw new UsageError(`a private tree has at most ${MAX_READERS} readers`)
  s.readers = readerSet([...s.readers, ...added])
  return added
}

/**
 * Readers removed: a new epoch and epoch key, which they never get.
 * @returns {string[]} those that were readers
 */
export function removeReaders (s, readers) {
  const removed = readers.filter(r => s.readers.includes(r))
  if (!removed.length) return removed
  const left = s.readers.filter(r => !removed.includes(r))
  if (!left.length) throw new UsageError('a private tree keeps at least one reader: removing every one would leave a tree nobody can read')
  s.readers = left
  s.epoch++
  s.epochKey = crypto.randomBytes(32).toString('hex')
  return removed
}

/** Remember the root ref behind a commitment (the release names the commitment only). @returns {string} the commitment */
export function rememberRoot (s, ref, mtime) {
  const bytes = encodeRootRef(ref, mtime)
  const commit = rootCommit(bytes)
  delete s.roots[commit]
  s.roots[commit] = toHex(bytes)
  const keys = Object.keys(s.roots)
  for (const k of keys.slice(0, Math.max(0, keys.length - KEEP_ROOTS))) delete s.roots[k]
  return commit
}

/** Is the keyring the state remembers sealed for its epoch and readers? */
export const keyringCurrent = s => s.keyring !== null && s.keyring.epoch === s.epoch && s.keyring.readers === digestOf(s.readers)

/**
 * fsinfo.json's `access` for a release whose root is `commit`: the keyring
 * of the epoch (sealed again and stored in OUT/h when the readers or the
 * epoch changed) and the root wrapped under the epoch key. Mutates `s`
 * (its keyring); the caller writes it.
 * @param {object} s @param {string} commit
 * @param {(bytes: Uint8Array) => Promise<{ hash: string, size: number }>} put stores a blob in OUT/h as it is
 * @param {string} out for messages
 */
export async function accessFor (s, commit, put, out) {
  const rootRef = s.roots[commit]
  if (rootRef === undefined) throw new UsageError(`${path.join(out, PRIVATE_FILE)} does not hold the root of this release (commitment ${commit.slice(0, 16)}…): build it again in this OUT`)
  if (!keyringCurrent(s)) {
    const bytes = await sealKeyring({ epoch: s.epoch, key: fromHex(s.epochKey), readers: s.readers })
    const { hash, size } = await put(bytes)
    s.keyring = { epoch: s.epoch, readers: digestOf(s.readers), hash, size }
  }
  return { epoch: s.epoch, keyring: { hash: s.keyring.hash, size: s.keyring.size }, root: wrapRoot(fromHex(s.epochKey), fromHex(rootRef)) }
}
