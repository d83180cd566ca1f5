// What several commands share: reader options, opening a tree, formatting.
import { openTree } from 'rotree-client'
import { UsageError } from 'rotree-client/errors'

export const READER_OPTIONS = {
  mirror: { type: 'string', multiple: true, arg: 'URL', help: 'another mirror of the same tree (repeatable)' },
  timeout: { type: 'string', arg: 'SECONDS', help: 'per-request timeout (default 30)' },
  'state-dir': { type: 'string', arg: 'DIR', help: 'reader state (default $ROTREE_STATE, $XDG_STATE_HOME/rotree, ~/.local/state/rotree)' }
}

export function positiveInt (v, name) {
  const n = Number(v)
  if (!Number.isInteger(n) || n <= 0) throw new UsageError(`--${name} must be a positive integer`)
  return n
}

/** openTree() options from the READER_OPTIONS values. */
export function readerOptions (v) {
  const opts = { mirrors: v.mirror ?? [] }
  if (v.timeout !== undefined) opts.timeoutMs = positiveInt(v.timeout, 'timeout') * 1000
  if (v['state-dir'] !== undefined) opts.stateDir = v['state-dir']
  return opts
}

export async function withTree (addr, v, fn) {
  const tree = await openTree(addr, readerOptions(v))
  try { return await fn(tree) } finally { tree.close() }
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
  return o
}
