// A gated tree in the browser (docs/FORMAT.md §12.10–12.11, docs/WEB.md
// "Gated trees in the browser"): its mirrors serve blobs only with an edge
// token, which the holder of a grant trades for at POST <mirror>.rotree/token.
// The reader picks the grant file and the holder's key file; this module
// checks them against the tree before any mirror is asked (another tree's
// grant, an expired one, a key that is not the holder's each get their own
// line, web/explain.js grantRefusal), and wraps a Tree's transport with
// rotree-client's gatedTransport, which asks for a token before the first
// blob and renews it before it expires. The page, or the Service Worker, that
// holds the two files keeps them in memory only: never stored, never in an
// address, sent to no one (the token request carries the grant and a
// signature, never the key). Imported by the app, the bar, the bootstrap of a
// site's own origin and sw.js: no DOM here.
import { gatedTransport, decodeGrant, UsageError } from './rotree-client.js'
import { grantRefusal } from './explain.js'

// a grant is at most 16 KiB (FORMAT.md §12.10); a key file a few hundred bytes
export const GRANT_FILE_MAX = 20 << 10
export const KEY_FILE_MAX = 4 << 10
const KEY_TYPE = 'rotree-ed25519-secret-key'
const HEX64 = /^[0-9a-f]{64}$/

/** An error whose `reason` says which line explain.js's grantRefusal gives. */
function refusal (reason, message, extra = {}) {
  return Object.assign(new UsageError(message), { reason }, extra)
}

/**
 * The text of a picked file, refused when it is far larger than what it should be.
 * @param {File} file @param {'grant'|'key'} kind @returns {Promise<string>}
 */
export async function readGrantPart (file, kind) {
  const max = kind === 'grant' ? GRANT_FILE_MAX : KEY_FILE_MAX
  if (file.size > max) throw refusal(kind === 'grant' ? 'not-grant' : 'not-key', `${file.size} bytes: a ${kind === 'grant' ? 'grant' : 'key'} file is at most ${max}`)
  return file.text()
}

/**
 * The holder's secret key from a key file of `rotree keygen` (JSON, type
 * rotree-ed25519-secret-key). A sealed one (keygen --passphrase) is refused:
 * opening it takes scrypt, which this browser path does not run.
 * @returns {{ secretKey: string, publicKey: string }}
 */
export function parseKeyFile (text) {
  let j = null
  try { j = JSON.parse(text) } catch {}
  if (j?.type !== KEY_TYPE || typeof j.publicKey !== 'string' || !HEX64.test(j.publicKey)) throw refusal('not-key', 'not a rotree key file (rotree keygen KEYFILE writes one)')
  if (j.secretKey === undefined && j.sealed) throw refusal('sealed', 'the secret key is sealed with a passphrase (rotree keygen --passphrase)')
  if (typeof j.secretKey !== 'string' || !HEX64.test(j.secretKey)) throw refusal('not-key', 'not a rotree secret key file')
  return { secretKey: j.secretKey, publicKey: j.publicKey }
}

/** The chain, first grant first. */
function chainOf (g) {
  const chain = []
  for (let x = g; x; x = x.parent) chain.unshift(x)
  return chain
}

/**
 * Check the two files against the tree they are to open (its anchor, as an
 * address spells it, and its name) at `now`: the grant decodes and names this
 * tree throughout its chain, has not expired, and the key is its last
 * holder's. Whether the tree's access role signed it is the edge's decision
 * (FORMAT.md §12.10), never the reader's.
 * @param {{ grantText: string, keyText: string, grantName?: string, keyName?: string }} files
 * @param {{ anchor: string, name: string, now?: number }} tree
 * @returns {{ grant: object, secretKey: string, holder: string, expires: string, expiresMs: number, grantName: string, keyName: string }}
 */
export function checkGrant ({ grantText, keyText, grantName = 'the grant file', keyName = 'the key file' }, { anchor, name, now = Date.now() }) {
  let grant
  try { grant = decodeGrant(grantText) } catch (err) { throw refusal('not-grant', err.message) }
  const chain = chainOf(grant)
  const other = chain.find(g => g.anchor !== anchor || g.name !== name)
  if (other) throw refusal('tree', `the grant is for tree ${other.anchor}:${other.name}, not ${anchor}:${name}`, { tree: `${other.anchor}${other.name ? ':' + other.name : ''}` })
  const first = chain.reduce((a, g) => g.expiresMs < a.expiresMs ? g : a)
  if (first.expiresMs <= now) throw refusal('expired', `the grant expired at ${first.expires}`, { expires: first.expires })
  const key = parseKeyFile(keyText)
  const holder = chain.at(-1).holder
  if (key.publicKey !== holder) throw refusal('holder', `the key ${key.publicKey} is not the grant's holder ${holder}`, { holder })
  return { grant, secretKey: key.secretKey, holder, expires: first.expires, expiresMs: first.expiresMs, grantName, keyName }
}

/** The anchor and name of the tree an address fragment names (<anchor>[:<name>]). */
export function treeOf (fragment) {
  const i = fragment.indexOf(':')
  return i < 0 ? { anchor: fragment.toLowerCase(), name: '' } : { anchor: fragment.slice(0, i).toLowerCase(), name: fragment.slice(i + 1) }
}

/** Tree options that read through `held` (checkGrant's value): blob requests carry its edge tokens. */
export function gatedOptions (held) {
  return held ? { wrapTransport: inner => gatedTransport(inner, { grant: held.grant, secretKey: held.secretKey }) } : {}
}

/** An edge's refusal of a grant (gatedTransport: ROTREE_NO_ACCESS naming the edge), not a private tree's. */
export const edgeRefused = err => err?.code === 'ROTREE_NO_ACCESS' && typeof err.edge === 'string'

const probed = new Map() // mirror base → Promise<boolean>

/**
 * Whether `err` is a gated tree refusing a reader without a grant: a mirror
 * answered 403 for a blob, and that mirror's token exchange answers as a gated
 * edge does (403 ROTREE_NO_ACCESS to a request without a grant). Then the
 * reader is asked for a grant, and no mirror is blamed.
 * @returns {Promise<boolean>}
 */
export async function needsGrant (err) {
  const all = Array.isArray(err?.errors) ? err.errors : [err]
  const bases = new Set()
  for (const e of all) {
    // transport-web's words for a refusal: "<origin> answered 403 for <base path>h/<hash>"
    const m = e?.code === 'ROTREE_MIRROR_HTTP' && /^(\S+) answered 403 for ((?:\/[^/\s]+)*\/)h\/[0-9a-f]{64}/.exec(e.message ?? '')
    if (m) bases.add(m[1] + m[2])
  }
  for (const base of bases) {
    if (!probed.has(base)) probed.set(base, probe(base))
    if (await probed.get(base)) return true
  }
  return false
}

async function probe (base) {
  try {
    const res = await fetch(base + '.rotree/token', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}', cache: 'no-store' })
    if (res.status !== 403) return false
    return (await res.json().catch(() => null))?.code === 'ROTREE_NO_ACCESS'
  } catch { return false }
}

/**
 * Two file inputs, the grant's and the holder's key's: once both hold a file
 * their texts go to `send` (the verifier, register.js sendGrant), and a refusal
 * is shown by `problem` (explain.js grantRefusal; '' clears it). A file picked
 * again replaces the one before. The inputs keep no handle on the files.
 * @param {HTMLInputElement} grantInput @param {HTMLInputElement} keyInput
 * @param {(grantText: string, keyText: string) => Promise<{ ok: boolean }>} send
 * @param {(text: string) => void} problem
 * @param {(r: object) => void} [accepted]
 */
export function wireGrantInputs (grantInput, keyInput, send, problem, accepted = () => {}) {
  const parts = { grant: null, key: null }
  const picked = kind => async ev => {
    const input = ev.target
    const file = input.files?.[0]
    input.value = ''
    if (!file) return
    const names = { grant: parts.grant?.name, key: parts.key?.name, [kind]: file.name }
    try {
      parts[kind] = { text: await readGrantPart(file, kind), name: file.name }
    } catch (err) { return problem(grantRefusal(names, err)) }
    problem('')
    if (!parts.grant || !parts.key) return
    const r = await send(parts.grant.text, parts.key.text).catch(err => ({ ok: false, code: err?.code ?? 'ERROR', message: err?.message ?? String(err) }))
    if (r?.ok === true) accepted(r); else problem(grantRefusal(names, r))
  }
  grantInput.addEventListener('change', picked('grant'))
  keyInput.addEventListener('change', picked('key'))
}
