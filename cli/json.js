// --json output: the fields every command spells the same way (docs/JSON.md).
// No imports: build and the other publishing commands load it without the
// reader (cli/common.js loads openTree).

/** Where no --url says where readers find the folder: the address names the mirror by this placeholder. */
export const NO_URL = '<mirror-url>'

/** One JSON object, pretty-printed, on stdout. */
export function printJson (io, obj) { io.stdout.write(JSON.stringify(obj, null, 2) + '\n') }

/** One line of an NDJSON stream. */
export function printLine (io, obj) { io.stdout.write(JSON.stringify(obj) + '\n') }

/**
 * The tree fields, from a Tree's `info` (rotree-client): `key` is the anchor
 * after # (64 hex, or t<hash> for a tree with trust documents), `root` null
 * for a private tree.
 */
export function treeFields (info, address) {
  return { address, name: info.name ?? '', key: info.anchor ?? info.key, seq: info.seq, root: info.root ?? null, expires: info.expires }
}

/** The address of a tree published with this key (or anchor) and name, found at `url` (default: the placeholder). */
export function addressOf (key, name, url) { return `${url ?? NO_URL}#${key}${name ? ':' + name : ''}` }

/**
 * A stat entry (cli/common.js publicStat) as --json prints it: `path`
 * instead of `name` (a `name` is the tree's), every key present, null where
 * the entry has no such thing.
 */
export function entryFields (path, s) {
  return { path, type: s.type, size: s.size, mtime: s.mtime, mode: s.mode, exec: s.exec, target: s.target ?? null, entries: s.entries ?? null, hash: s.hash ?? null, sha256: s.sha256 ?? null }
}

/**
 * What `rotree … --json` prints on failure (cli/main.js), as one JSON object
 * on stdout (the last line of a stream): code, message, the what-to-do
 * sentence, and each mirror's own failure when mirrors failed.
 */
export function errorJson (code, message, todo, err) {
  const list = Array.isArray(err?.errors) ? err.errors.map(e => ({ url: e.mirror ?? e.url ?? null, code: e.code ?? null, message: e.message ?? '' })) : []
  return { error: { code, message, todo: todo ?? null, errors: list } }
}

/** The anchor and tree name an address ends in (`…#KEY` or `…#KEY:NAME`): the `key` and `name` fields. */
export function keyAndName (address) {
  const frag = String(address).slice(String(address).indexOf('#') + 1)
  const i = frag.indexOf(':')
  return i < 0 ? { key: frag, name: '' } : { key: frag.slice(0, i), name: frag.slice(i + 1) }
}
