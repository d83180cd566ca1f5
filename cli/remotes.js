// Named tree addresses (`rotree remote add NAME ADDR`), kept beside the
// reader's other state in one small JSON file, <state-dir>/remotes.json,
// replaced whole through a temporary file and a rename so a crash leaves the
// old list or the new one. A remote is only a shorthand: its address keeps
// the public key (docs/TRUST.md rule 1: the key comes from the user, here
// typed once into `remote add`), and everything read through it is verified
// as through the address itself.
import fs from 'node:fs/promises'
import { constants } from 'node:fs'
import path from 'node:path'
import { randomBytes } from 'node:crypto'
import { parseAddress, mirrorUrl } from 'rotree-client'
import { UsageError, StateError } from 'rotree-client/errors'
import { defaultStateDir } from 'rotree-client/trust'

export const NAME_RE = /^[a-z0-9][a-z0-9._-]*$/
const MAX_NAME = 64
const MAX_FILE = 1 << 20 // a list of shorthands: far below this
// names a reader could take for a URL scheme: `http:/x` must never mean a remote
const SCHEMES = new Set(['http', 'https', 'file', 'ftp', 'ws', 'wss', 'data', 'blob', 'about', 'javascript'])

export function remotesFile (stateDir = defaultStateDir()) { return path.join(stateDir, 'remotes.json') }

/** Refuse a name that is not [a-z0-9][a-z0-9._-]*, or that reads as a URL scheme. */
export function checkRemoteName (name) {
  if (typeof name !== 'string' || !NAME_RE.test(name) || name.length > MAX_NAME) {
    throw new UsageError(`remote name ${JSON.stringify(name)}: use lower-case letters, digits and . _ - (starting with a letter or digit, at most ${MAX_NAME})`)
  }
  if (SCHEMES.has(name)) throw new UsageError(`remote name ${JSON.stringify(name)} reads as a URL scheme; choose another`)
}

/**
 * Normalised { address, mirrors[, identity] } for a remote, or a typed error (BadAddressError for a
 * bad ADDR or mirror). identity: the absolute path of the age identity file a private tree is read
 * with (the file is read at each use, never copied here).
 */
export function remoteRecord (address, mirrors = [], identity) {
  parseAddress(address)
  const r = { address, mirrors: [...new Set(mirrors.map(mirrorUrl))] }
  if (identity !== undefined) {
    if (typeof identity !== 'string' || !path.isAbsolute(identity)) throw new UsageError('a remote\'s identity is the absolute path of an age identity file')
    r.identity = identity
  }
  return r
}

/** @returns {Promise<Record<string, { address: string, mirrors: string[] }>>} */
export async function readRemotes (stateDir) {
  const file = remotesFile(stateDir)
  let text
  try {
    const fh = await fs.open(file, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0))
    try {
      if ((await fh.stat()).size > MAX_FILE) throw new StateError(`${file} is larger than ${MAX_FILE} bytes`)
      text = await fh.readFile('utf8')
    } finally { await fh.close() }
  } catch (err) {
    if (err.code === 'ENOENT') return {}
    throw err
  }
  let j
  try { j = JSON.parse(text) } catch (err) { throw new StateError(`${file} is not JSON: ${err.message}`, { cause: err }) }
  if (j?.version !== 1 || typeof j.remotes !== 'object' || j.remotes === null || Array.isArray(j.remotes)) throw new StateError(`${file}: not a remotes list (version 1)`)
  const out = Object.create(null)
  for (const [name, r] of Object.entries(j.remotes)) {
    try {
      checkRemoteName(name)
      if (!Array.isArray(r?.mirrors) || !r.mirrors.every(m => typeof m === 'string')) throw new TypeError('mirrors is not a list of URLs')
      out[name] = remoteRecord(r.address, r.mirrors, r.identity)
    } catch (err) {
      throw new StateError(`${file}: remote ${JSON.stringify(name)}: ${err.message}`, { cause: err })
    }
  }
  return out
}

/** Replace the list: a temporary file beside it (never an existing one, never through a link), fsync, rename. */
export async function writeRemotes (stateDir, remotes) {
  const file = remotesFile(stateDir)
  await fs.mkdir(path.dirname(file), { recursive: true, mode: 0o700 })
  const sorted = Object.fromEntries(Object.keys(remotes).sort().map(k => [k, remotes[k]]))
  const tmp = `${file}.${randomBytes(8).toString('hex')}.tmp`
  const fh = await fs.open(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0), 0o600)
  try {
    try {
      await fh.writeFile(JSON.stringify({ version: 1, remotes: sorted }, null, 2) + '\n')
      await fh.sync()
    } finally { await fh.close() }
    await fs.rename(tmp, file)
  } catch (err) {
    await fs.unlink(tmp).catch(() => {})
    throw err
  }
}

/**
 * `NAME:PATH` → { name, path }, or null when `arg` is not a remote reference
 * (an ADDR: a URL, whose scheme is never a remote name).
 */
export function splitRemoteRef (arg) {
  const m = /^([a-z0-9][a-z0-9._-]*):(.*)$/s.exec(arg)
  if (!m || SCHEMES.has(m[1]) || m[2].startsWith('//')) return null
  return { name: m[1], path: m[2] === '' ? '/' : m[2].startsWith('/') ? m[2] : '/' + m[2] }
}
