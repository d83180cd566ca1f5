// What several commands share: reader options, turning ADDR [PATH] or
// NAME:PATH into a tree, opening it, formatting.
import fs from 'node:fs'
import { once } from 'node:events'
// parseIdentities from the main entry, not rotree-client/access: that one
// loads the publisher's keyring sealing (age-encryption, ML-KEM) too
import { openTree, parseIdentities } from 'rotree-client'
import { openHistoric } from 'rotree-client/tree'
import { UsageError } from 'rotree-client/errors'
import { defaultStateDir } from 'rotree-client/trust'
import { gatedTransport } from 'rotree-client/net'
import { decodeGrant } from 'rotree-client/grant'
import { readRemotes, splitRemoteRef, NAME_RE } from './remotes.js'
import { expiryWarning } from './expiry.js'
import { escapeText } from './escape.js'

export const READER_OPTIONS = {
  mirror: { type: 'string', multiple: true, arg: 'URL', help: 'another mirror of the same tree (repeatable)' },
  timeout: { type: 'string', arg: 'SECONDS', help: 'per-request timeout: seconds (0.5) or 500ms, 2s, 1m (default 30)' },
  'state-dir': { type: 'string', arg: 'DIR', help: 'reader state and remotes (default $ROTREE_STATE, $XDG_STATE_HOME/rotree, ~/.local/state/rotree)' },
  ca: { type: 'string', arg: 'FILE', help: 'PEM certificate(s) to trust for https mirrors, besides the system\'s' },
  'allow-redirect': { type: 'string', multiple: true, arg: 'ORIGIN', help: 'let mirrors redirect to ORIGIN (scheme://host:port); by default only to their own origin' },
  http2: { type: 'boolean', help: 'read https mirrors over HTTP/2 when they offer it (one connection each); by default HTTP/1.1 over TLS, which costs less CPU (HTTP/2 still where a mirror refuses HTTP/1.1)' },
  identity: { type: 'string', multiple: true, arg: 'FILE', help: 'a private tree: the age identity file to read it with (age-keygen or rotree keygen --reader; default $ROTREE_IDENTITY, or the remote\'s)' },
  grant: { type: 'string', arg: 'FILE', help: 'a gated tree: the grant to trade for edge tokens (rotree grant issue|delegate; docs/FORMAT.md §12.11); needs --grant-key' },
  'grant-key': { type: 'string', arg: 'KEYFILE', help: 'with --grant: the secret key of the grant\'s holder' }
}

const MAX_IDENTITY_FILE = 1 << 20

/** The text of an age identity file, checked (rotree-client/access parseIdentities); a usage error names the file. */
export function readIdentityFile (file) {
  let text
  try {
    const fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK)
    try {
      const st = fs.fstatSync(fd)
      if (!st.isFile()) throw new UsageError(`identity ${file}: not a regular file`)
      if (st.size > MAX_IDENTITY_FILE) throw new UsageError(`identity ${file}: larger than an identity file is`)
      text = fs.readFileSync(fd, 'utf8')
    } finally { fs.closeSync(fd) }
  } catch (err) {
    if (err instanceof UsageError) throw err
    throw new UsageError(`identity ${file}: ${err.code ?? err.message}`)
  }
  try {
    if (parseIdentities(text).length === 0) throw new UsageError('no AGE-SECRET-KEY-1… line in it')
  } catch (err) { throw new UsageError(`identity ${file}: ${err.message}`) }
  return text
}

/**
 * openTree() options for a command that reads many small things (rotree get
 * of a directory, ls -R, diff): bound by requests per round trip, not by
 * bytes, so twice a reader's default in flight (16 pipelined answers on each
 * of 8 connections over HTTP/1.1). A mirror that cannot be pipelined to still
 * gets at most the default's 64 connections. The fetch window still decides
 * how many a big file uses, and the byte budget bounds them all.
 */
export const MANY_REQUESTS = Object.freeze({ concurrency: 128, pipeline: 16, connections: 64 })

/** Resolves at the first SIGINT or SIGTERM: where a serving command stops and closes. */
export function untilSignal () {
  return new Promise(resolve => {
    const stop = () => { process.off('SIGINT', stop); process.off('SIGTERM', stop); resolve() }
    process.on('SIGINT', stop); process.on('SIGTERM', stop)
  })
}

export function positiveInt (v, name) {
  const n = Number(v)
  if (!Number.isInteger(n) || n <= 0) throw new UsageError(`--${name} must be a positive integer`)
  return n
}

/** '30', '0.5' (seconds), '500ms', '2s', '1m' → milliseconds, > 0. */
export function parseDuration (v, name) {
  const m = /^(\d+(?:\.\d*)?|\.\d+)\s*(ms|s|m)?$/.exec(String(v).trim())
  const ms = m && Math.round(Number(m[1]) * { ms: 1, s: 1000, m: 60_000 }[m[2] ?? 's'])
  if (!m || !Number.isSafeInteger(ms) || ms <= 0) throw new UsageError(`--${name} must be a duration such as 30, 0.5, 500ms, 2s or 1m`)
  return ms
}

/** The reader state directory: --state-dir, else $ROTREE_STATE, $XDG_STATE_HOME/rotree, ~/.local/state/rotree. */
export function stateDirOf (v) { return v['state-dir'] ?? defaultStateDir() }

/**
 * openTree() options from the READER_OPTIONS values (and a remote's mirrors, first). The
 * identities: --identity, else the remote's, else $ROTREE_IDENTITY (a file), read now.
 */
export function readerOptions (v, remoteMirrors = [], remoteIdentity) {
  const opts = { mirrors: [...new Set([...remoteMirrors, ...(v.mirror ?? [])])] }
  const ids = v.identity?.length ? v.identity : remoteIdentity ? [remoteIdentity] : process.env.ROTREE_IDENTITY ? [process.env.ROTREE_IDENTITY] : []
  if (ids.length) opts.identity = ids.map(readIdentityFile)
  if (v.timeout !== undefined) opts.timeoutMs = parseDuration(v.timeout, 'timeout')
  if (v['state-dir'] !== undefined) opts.stateDir = v['state-dir']
  const ca = caOption(v)
  if (ca !== undefined) opts.ca = ca
  if (v['allow-redirect']) opts.allowRedirectOrigins = v['allow-redirect']
  if (v.http2) opts.http2 = true
  if (!v.grant !== !v['grant-key']) throw new UsageError('--grant FILE and --grant-key KEYFILE go together')
  if (v.grant) opts.wrapTransport = gatedReader(v.grant, v['grant-key'])
  return opts
}

/** The certificates `--ca FILE` names (a user's own file, read as given), or undefined; a usage error when it cannot be read. */
export function caOption (v) {
  if (v.ca === undefined) return undefined
  try { return fs.readFileSync(v.ca) } catch (err) { throw new UsageError(`--ca ${v.ca}: ${err.code ?? err.message}`) }
}

/** A gated tree's reader (docs/FORMAT.md §12.11): blob requests carry edge tokens for the grant; both files are read when the first token is asked for. */
function gatedReader (grantFile, keyFile) {
  return inner => gatedTransport(inner, {
    grant: async () => {
      try { return decodeGrant(fs.readFileSync(grantFile)) } catch (err) { throw new UsageError(`--grant ${grantFile}: ${err.code === 'ROTREE_BAD_FORMAT' ? err.message : err.code ?? err.message}`) }
    },
    secretKey: async () => (await (await import('../builder/keys.js')).readKeyFile(keyFile)).secretKey
  })
}

/**
 * What a reading command's ADDR [PATH] names: ADDR as always
 * (`<mirror-url>#<public-key>`, then PATH), or `NAME:PATH` (`NAME:` for the
 * root) for a remote saved with `rotree remote add`, whose mirrors come
 * before any --mirror. Every reading command resolves its arguments here.
 * @param {string} addr the ADDR positional
 * @param {string|undefined} p the PATH positional, if any
 * @param {object} v the parsed options (READER_OPTIONS)
 * @param {{ path?: 'required'|'optional'|'none', defaultPath?: string }} [o]
 *   'none': the command takes no tree path (pull, gateway): `NAME:` or `NAME:/` only
 * @returns {Promise<{ address: string, path: string|undefined, reader: object, remote: string|null }>}
 */
export async function treeTarget (addr, p, v, { path: want = 'optional', defaultPath = '/' } = {}) {
  // ADDR@SEQ: an old root of the tree, from its history (rotree log lists them)
  // NAME@SEQ:PATH: the same through a remote
  const at = /^(.*#[^@]*)@(0|[1-9][0-9]{0,15})$/s.exec(addr) ?? /^([a-z0-9][a-z0-9._-]*)@(0|[1-9][0-9]{0,15})(:.*)$/s.exec(addr)
  if (at) {
    if (want === 'none') throw new UsageError(`${addr}: this command takes the tree as it is now, not an old root (@SEQ)`)
    return { ...(await treeTarget(at[1] + (at[3] ?? ''), p, v, { path: want, defaultPath })), atSeq: Number(at[2]) }
  }
  // --mirror NAME: a remote's address and its mirrors, as more mirrors of this tree
  if (v.mirror?.some(m => splitRemoteRef(m) !== null)) v = { ...v, mirror: await mirrorsOf(v.mirror, v) }
  const ref = splitRemoteRef(addr)
  // `127.0.0.1:8080/#KEY`, `mirror.example.org/pub/#KEY`: an address without its scheme, not a remote
  if (ref !== null && addr.includes('#')) throw new UsageError(`${addr} has no scheme: did you mean http://${addr} (or https://…)?`)
  if (ref === null) {
    if (!addr.includes('#') && NAME_RE.test(addr) && (await readRemotes(stateDirOf(v)))[addr]) {
      throw new UsageError(`${addr} is a remote: write ${addr}:${p ?? '/'}`)
    }
    if (want === 'required' && p === undefined) throw new UsageError('PATH is missing (ADDR PATH, or NAME:PATH for a remote)')
    return { address: addr, path: p ?? (want === 'none' ? undefined : defaultPath), reader: readerOptions(v), remote: null }
  }
  const remotes = await readRemotes(stateDirOf(v))
  const r = remotes[ref.name]
  if (!r) {
    const known = Object.keys(remotes)
    throw new UsageError(`no remote named ${ref.name}${known.length ? ` (there are: ${known.join(', ')})` : ''}; add it with rotree remote add ${ref.name} ADDR`)
  }
  if (p !== undefined) throw new UsageError(`${addr} already names the path: give NAME:PATH, or ADDR PATH, not both`)
  if (want === 'none' && ref.path !== '/') throw new UsageError(`${addr}: this command takes a whole tree (${ref.name}:), not a path in it`)
  return { address: r.address, path: want === 'none' ? undefined : ref.path, reader: readerOptions(v, r.mirrors, r.identity), remote: ref.name }
}

// each --mirror value: a URL as it is, or a remote (NAME:) as its address's URL and its own mirrors
async function mirrorsOf (list, v) {
  const remotes = await readRemotes(stateDirOf(v))
  const out = []
  for (const m of list) {
    const ref = splitRemoteRef(m)
    if (ref === null) { out.push(m); continue }
    const r = remotes[ref.name]
    if (!r) throw new UsageError(`--mirror ${m}: no remote named ${ref.name}`)
    out.push(r.address.slice(0, r.address.indexOf('#')), ...r.mirrors)
  }
  return out
}

/**
 * ADDR or NAME: → the address and openTree() options, for commands that take
 * a whole tree (pull, gateway).
 * @returns {Promise<{ address: string, reader: object }>}
 */
export async function treeAddress (addr, v) {
  const { address, reader } = await treeTarget(addr, undefined, v, { path: 'none' })
  return { address, reader }
}

/**
 * Open the tree `target` names (from treeTarget), run fn, close it; warns on
 * `warn` when the tree expires soon. With target.atSeq, fn gets a read-only
 * view of that old root (verified from history/, never adopted: the reader's
 * state keeps the newest root), and stderr says how old it is. The mirrors
 * that failed are warned of on stderr and, given `faults` (an array), pushed
 * to it for --json (docs/JSON.md, `mirrors`).
 */
export async function withTree (target, v, fn, { warn, faults } = {}) {
  const { address, reader, atSeq } = typeof target === 'string' ? { address: target, reader: readerOptions(v) } : target
  // ADDR@SEQ reads an old root: the current one's page would be asked for in vain
  const tree = await openTree(address, atSeq === undefined ? reader : { ...reader, prefetchRoot: false })
  try {
    if (atSeq !== undefined) {
      const view = await openHistoric(tree, atSeq)
      const old = view.rootRecord; const cur = tree.rootRecord
      if (old.seq !== cur.seq) process.stderr.write(`rotree: seq ${old.seq}, an old root signed ${old.issued} (${fmtAge(Date.now() - old.issuedMs)} ago; ${old.expiresMs < Date.now() ? 'expired' : 'expires'} ${old.expires}); the current one is seq ${cur.seq}\n`)
      const r = await fn(view)
      const warned = warnMirrorFaults(tree) // always on stderr; for --json too when asked
      faults?.push(...warned)
      return r
    }
    if (warn) { const w = expiryWarning(tree.rootRecord); if (w) warn(w) }
    const r = await fn(tree)
    const warned = warnMirrorFaults(tree)
    faults?.push(...warned)
    return r
  } finally { tree.close() }
}

/**
 * The mirrors that failed during a command that still succeeded: one line
 * each on stderr (a lying mirror must not go unmentioned because another one
 * answered). Their answers were not used: every byte read was verified.
 * @param {{ stats: { mirrors: object[] } }} tree
 * @returns {{ url: string, faults: number, code: string, message: string }[]} what was reported (for --json)
 */
export function warnMirrorFaults (tree, stderr = process.stderr) {
  const out = []
  for (const m of tree.stats.mirrors) {
    if (!m.faults) continue
    const f = m.lastFault
    out.push({ url: m.url, faults: m.faults, code: f?.code ?? 'ROTREE_INTERNAL', message: f?.message ?? '' })
    stderr.write(`rotree: warning: mirror ${escapeText(m.url)} failed ${m.faults} time${m.faults === 1 ? '' : 's'} (last: ${f?.code}: ${escapeText(f?.message ?? '')}); its bad answers were discarded and asked of another mirror: every byte used was verified\n`)
  }
  return out
}

const fmtAge = ms => ms >= 86400e3 ? `${Math.floor(ms / 86400e3)} days` : ms >= 3600e3 ? `${Math.floor(ms / 3600e3)} h` : `${Math.max(0, Math.floor(ms / 60e3))} min`

/**
 * A file's verified bytes to `out` (rotree cat, rotree get PATH -). Written
 * to process.stdout, a read lends its buffers (Tree#readRange, lend): each
 * piece is given back once its write's callback says the bytes are out of
 * it, which for stdout (a file, a pipe or a terminal) means in the kernel.
 * Any other writable may keep the chunk it was handed (a PassThrough does),
 * so it gets a read that does not lend.
 */
export async function writeFile (tree, path, out) {
  const lend = out === process.stdout
  let failed = null
  const onError = err => { failed ??= err }
  out.on('error', onError)
  try {
    for await (const b of tree.readRange(path, { lend })) {
      if (failed !== null) throw failed
      const ok = out.write(b, lend ? err => { if (!err) tree.release(b) } : undefined)
      if (!ok) await once(out, 'drain')
    }
    if (failed !== null) throw failed
  } finally { out.off('error', onError) }
}

export function modeString (s) {
  const t = s.type === 'dir' ? 'd' : s.type === 'symlink' ? 'l' : '-'
  let r = ''
  for (let i = 8; i >= 0; i--) r += s.mode & (1 << i) ? 'rwx'[(8 - i) % 3] : '-'
  return t + r
}

export function fmtTime (ms) { return new Date(ms).toISOString().replace('T', ' ').slice(0, 19) }

export function publicStat (s) {
  const o = { name: s.name, type: s.type, size: s.size, mtime: s.mtime.toISOString(), mode: s.mode.toString(8), exec: s.exec }
  if (s.target !== undefined) o.target = s.target
  if (s.entries !== undefined) o.entries = s.entries
  if (s.hash) o.hash = s.hash
  // a file's SHA-256 as sha256sum prints it (format 2: signed, FORMAT.md §12.7); null where a version-1 tree records none
  if (s.type === 'file') o.sha256 = s.sha256 ?? null
  return o
}
