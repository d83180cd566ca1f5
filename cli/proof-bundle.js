// A proof bundle (docs/FORMAT.md §13.2): what a `rotree get` downloaded,
// checkable later with no network. The exact fsinfo.json bytes, the trust
// documents the reader walked from the address's anchor, the log's C2SP
// tlog-proof of that fsinfo.json (checkpoint with its cosignatures, leaf
// index, inclusion proof), and the directory pages from the root to the
// downloaded path and below it: their entries hold each file's size, mode
// and whole-file SHA-256 (§12.7), so the files are checked without a data
// chunk. `rotree verify --offline` reads it back (cli/offline.js).
import crypto from 'node:crypto'
import { BadFormatError, UsageError, HashMismatchError } from 'rotree-client/errors'
import { proveLogged, logSignersOf } from 'rotree-client/log'
import { MAX_TRUST_DOC } from 'rotree-client/format'

export const PROOF_TYPE = 'rotree-proof'
export const PROOF_SUFFIX = '.rotree-proof'
const MAX_BUNDLE = 256 << 20
const TRUST_PATH = /^trust\/([1-9][0-9]{0,8})\.json$/
const BLOB_PATH = /^h\/([0-9a-f]{64})$/

const b64 = bytes => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString('base64')
// canonical base64 only: a flipped bit the decoder would ignore is refused too
const unb64 = (s, what) => {
  const b = typeof s === 'string' && s.length % 4 === 0 && /^[A-Za-z0-9+/]*={0,2}$/.test(s) ? Buffer.from(s, 'base64') : null
  if (b === null || b.toString('base64') !== s) throw new BadFormatError(`proof bundle: ${what} is not canonical base64`)
  return new Uint8Array(b)
}

/**
 * A recorder for a reader's transport (openTree's wrapTransport): keeps the
 * trust documents it fetched and the bytes of every directory page the tree
 * asked for (tree.blobs.get(ref, 'dir'), see watch()), copied, as they
 * arrive; data chunks are not kept.
 */
export function proofRecorder () {
  const trust = new Map() // n → bytes (the first answer)
  const pageHashes = new Map() // hash → stored size
  const pages = new Map() // hash → stored bytes
  const wrap = inner => ({
    ...inner,
    preconnect: inner.preconnect?.bind(inner),
    rtt: inner.rtt?.bind(inner),
    close: () => inner.close(),
    get stats () { return inner.stats },
    async get (url, o) {
      const bytes = await inner.get(url, o)
      const rel = new URL(url).pathname.split('/').slice(-2).join('/')
      const t = TRUST_PATH.exec(rel)
      if (t && !trust.has(Number(t[1]))) trust.set(Number(t[1]), bytes.slice())
      const h = BLOB_PATH.exec(rel)
      if (h && pageHashes.has(h[1]) && !pages.has(h[1])) pages.set(h[1], bytes.slice())
      return bytes
    }
  })
  /** Note the hashes of the directory pages `tree` reads (before their requests go out). */
  const watch = tree => {
    const blobs = tree.blobs
    const get = blobs.get.bind(blobs)
    const note = ref => pageHashes.set(ref.hash, ref.storedSize ?? ref.size)
    blobs.get = (ref, kind, ...rest) => { if (kind === 'dir') note(ref); return get(ref, kind, ...rest) }
    // the root page was asked for while the tree opened, before this
    if (tree.rootRecord?.root) note(tree.rootRecord.root)
  }
  /** Pages read from the cache or asked for before watch(): fetched again, checked by hash. */
  const missing = async tree => {
    await Promise.all([...pageHashes].filter(([h]) => !pages.has(h)).map(async ([h, cap]) => {
      pages.set(h, await tree.fetchFile('h/' + h, cap, bytes => {
        if (crypto.createHash('sha256').update(bytes).digest('hex') !== h) throw new HashMismatchError(`h/${h}: the page's bytes hash to something else`)
        return bytes.slice()
      }))
    }))
  }
  return { wrap, watch, missing, trust, pages }
}

/**
 * The bundle of a finished get: { json text, bytes by part }.
 * @param {import('rotree-client').Tree} tree the tree the get read (its mirrors for the log)
 * @param {ReturnType<typeof proofRecorder>} rec
 * @param {string} treePath the path downloaded
 */
export async function makeProofBundle (tree, rec, treePath) {
  const r = tree.rootRecord
  if (r.version !== 2) throw new UsageError('--proof: a proof bundle is for a format-2 tree (this one is format 1)')
  if (r.private) throw new UsageError('--proof: a private tree\'s pages are ciphertext; a proof bundle is for public trees')
  const fsinfoBytes = tree.fsinfoBytes
  await rec.missing(tree)
  let log = null
  try {
    log = (await proveLogged((p, cap, check) => tree.fetchFile(p, cap, check), { fsinfoBytes, ...logSignersOf(r) })).text
  } catch (err) {
    // a tree published before logs has none; one whose trust document names witnesses must
    // or holds it not yet (signed elsewhere, published without the log's keys: FORMAT.md §13)
    const absent = err.code === 'ROTREE_ALL_MIRRORS_FAILED' && err.errors?.every(e => e.code === 'ROTREE_MIRROR_HTTP' && / 404 /.test(e.message))
    if (!(absent || err.code === 'ROTREE_SPLIT_VIEW') || tree.trustDocument?.witnesses) throw err
  }
  // the chain the reader accepted, from the anchor's document to the newest it trusts;
  // those it had in its state already (a reader that read this tree before) are fetched now
  const known = tree.trustDocument?.seq ?? 0
  for (let n = 1; n <= known; n++) {
    if (!rec.trust.has(n)) rec.trust.set(n, await tree.fetchFile(`trust/${n}.json`, MAX_TRUST_DOC, b => b.slice()))
  }
  const trust = {}
  for (const n of [...rec.trust.keys()].sort((a, b) => a - b)) if (n <= known) trust[n] = b64(rec.trust.get(n))
  const bundle = {
    type: PROOF_TYPE,
    version: 1,
    tree: r.name ? `${r.anchor}:${r.name}` : r.anchor,
    path: treePath,
    fsinfo: b64(fsinfoBytes),
    trust,
    log,
    pages: [...rec.pages.values()].map(b64)
  }
  return JSON.stringify(bundle) + '\n'
}

/**
 * A bundle's parts, checked for shape only (what they prove is checked by
 * the reader): { tree, path, fsinfo, trust: Map n → bytes, log, files: Map path → bytes }.
 */
export function readProofBundle (bytes) {
  if (bytes.length > MAX_BUNDLE) throw new BadFormatError(`proof bundle: over ${MAX_BUNDLE} bytes`)
  let j
  try { j = JSON.parse(Buffer.from(bytes).toString('utf8')) } catch (err) { throw new BadFormatError(`proof bundle: not JSON (${err.message})`) }
  if (j?.type !== PROOF_TYPE || j.version !== 1) throw new BadFormatError(`proof bundle: not a ${PROOF_TYPE} of version 1`)
  const members = ['type', 'version', 'tree', 'path', 'fsinfo', 'trust', 'log', 'pages']
  if (Object.keys(j).join() !== members.join()) throw new BadFormatError(`proof bundle: its members are ${members.join(', ')}, in that order`)
  if (typeof j.tree !== 'string' || typeof j.path !== 'string') throw new BadFormatError('proof bundle: tree and path are strings')
  if (j.log !== null && typeof j.log !== 'string') throw new BadFormatError('proof bundle: log is a tlog-proof text or null')
  if (typeof j.trust !== 'object' || j.trust === null || !Array.isArray(j.pages)) throw new BadFormatError('proof bundle: trust is an object and pages a list')
  const files = new Map([['fsinfo.json', unb64(j.fsinfo, 'fsinfo')]])
  for (const [n, t] of Object.entries(j.trust)) {
    if (!/^[1-9][0-9]{0,8}$/.test(n)) throw new BadFormatError(`proof bundle: trust document number ${JSON.stringify(n)}`)
    files.set(`trust/${n}.json`, unb64(t, `trust document ${n}`))
  }
  for (const p of j.pages) {
    const page = unb64(p, 'a page')
    files.set('h/' + crypto.createHash('sha256').update(page).digest('hex'), page)
  }
  return { tree: j.tree, path: j.path, log: j.log, files }
}
