// Checked by `tsc --noEmit` (test/browser/types.test.js), never run: how a
// browser app or bundler project uses rotree-client's declarations, every
// entry point of the exports map. Every expect-error directive below proves a
// type is precise, not `any`.
import {
  openTree, Tree, parseAddress, mirrorUrl, toStat, SeqStore, walkTree,
  verifyFsinfo, verifyBlob, verifyDirPage, verifyChunkIndex, checkRollback, checkPagePlacement, checkChunkIndexPlacement,
  RotreeError, HashMismatchError, AllMirrorsFailedError, ERROR_TABLE, MIRROR_FAULT_CODES,
  type Stat, type TreeInfo, type TreeOptions, type TreeStats, type Transport, type Ref, type RotreeErrorCode, type MirrorFailure
} from 'rotree-client'
import { DEFAULT_SKEW_MS } from 'rotree-client/verify'
import { decodeFsinfo, limits, toHex, type DirPage } from 'rotree-client/format'
import { NotFoundError } from 'rotree-client/errors'
import * as bundle from 'rotree-client/browser'
// the layer subpaths, as the rest of the rotree repository uses them
import { decodeTrustDoc, readRef, Reader, type TrustDoc } from 'rotree-client/format'
import { decodeBlob } from 'rotree-client/codec'
// @ts-expect-error: packing blobs is Node's (codec-node.d.ts)
import { packBlob } from 'rotree-client/codec'
import { sha256Hex, createSha256, hashBackend, verifySignature } from 'rotree-client/crypto'
import { parseFragment, anchorText, trustHash, acceptTrustStep, checkNotRetired, type Anchor } from 'rotree-client/trust'
import { redactUrl, redirectPolicy } from 'rotree-client/net'
import { parseRange, contentRange, etagMatches } from 'rotree-client/http'
import { LRU, limiter } from 'rotree-client/fetch'
import { splitPath, openHistoric, treeHistory, Tree as LayerTree } from 'rotree-client/tree'

const opts: TreeOptions = { mirrors: ['https://m2.example/'], timeoutMs: 10_000, stateDir: 'rotree', concurrency: 4, readAhead: 4, cacheBytes: 1 << 20, skewMs: DEFAULT_SKEW_MS, graceMs: 0, fsinfoSettleMs: 500, now: () => Date.now() }
// @ts-expect-error: unknown option
const badOpts: TreeOptions = { mirror: 'x' }

export async function usage (key: string): Promise<void> {
  const tree: Tree = await openTree(`https://mirror.example/#${key}`, opts)
  const info: TreeInfo | null = tree.info
  if (info) {
    const seq: number = info.seq
    const root: string = info.root
    // @ts-expect-error: seq is a number
    const s: string = info.seq
    void seq; void root; void s
  }
  const changed: boolean = await tree.refresh()
  const names: string[] = await tree.readdir('/')
  const stats: Stat[] = await tree.readdir('/', { withFileTypes: true })
  for await (const e of tree.list('/docs')) {
    const t: 'file' | 'dir' | 'symlink' = e.type
    const when: Date = e.mtime
    void t; void when
  }
  const st = await tree.stat('/a.txt')
  const size: number = st.size
  const l = await tree.lstat('/link')
  const target: string | undefined = l.target
  const bytes: Uint8Array = await tree.readFile('/a.txt')
  // in browsers a stream is a WHATWG ReadableStream of verified bytes
  const stream: ReadableStream<Uint8Array> = tree.createReadStream('/big.iso', { start: 0, end: 1023 })
  const reader = stream.getReader()
  await reader.read()
  for await (const chunk of tree.readRange('/big.iso', { start: 10 })) { const n: number = chunk.byteLength; void n }
  const pinned: Tree = tree.snapshot()
  const ts: TreeStats = pinned.stats
  const failed = ts.mirrors.filter(m => m.lastError?.code === 'ROTREE_HASH_MISMATCH')
  // @ts-expect-error: readFile wants a path
  await tree.readFile()
  // @ts-expect-error: no such method
  tree.writeFile('/x', bytes)
  tree.close()
  void changed; void names; void stats; void size; void target; void failed

  // errors carry stable codes
  try {
    await tree.readFile('/missing')
  } catch (err) {
    if (err instanceof RotreeError) {
      const code: RotreeErrorCode = err.code
      const each: MirrorFailure[] | undefined = err.errors
      // @ts-expect-error: not a code
      const wrong: RotreeErrorCode = 'ROTREE_NOPE'
      void code; void each; void wrong
    }
  }
  const e = new HashMismatchError('bad', { details: { expected: 'a', actual: 'b' } })
  const c: 'ROTREE_HASH_MISMATCH' = e.code
  const nf = new NotFoundError('gone')
  const all = new AllMirrorsFailedError('all', { details: { errors: [] } })
  const table: ReadonlyArray<readonly [RotreeErrorCode, string, number, string, string]> = ERROR_TABLE
  const isFault: boolean = MIRROR_FAULT_CODES.has(nf.code)
  void c; void all; void table; void isFault

  // the address and the pure verifier
  const { url, publicKey, id } = parseAddress(`https://m.example/pub#${key}`)
  const m: string = mirrorUrl('https://m.example/pub')
  const fs = verifyFsinfo(new Uint8Array(), { publicKey, now: Date.now() })
  const rootRef: Ref = fs.root
  const ok: boolean = checkRollback(fs, { seq: 1, root: 'ab' })
  const blob: Uint8Array = await verifyBlob(bytes, rootRef)
  const page: DirPage = await verifyDirPage(blob, rootRef)
  if (page.kind === 'leaf') { const n: string = page.entries[0].name; void n } else { const lvl: number = page.level; void lvl }
  checkPagePlacement(page, { entries: 3 })
  const idx = await verifyChunkIndex(blob, rootRef)
  checkChunkIndexPlacement(idx, { level: 1, bytes: 10 })
  const decoded = decodeFsinfo('{}')
  const maxBlob: number = limits.MAX_BLOB
  const hex: string = toHex(decoded.message)
  const stat: Stat = toStat({ name: 'a', type: 'file', size: 1, mtime: 0, exec: false, inline: new Uint8Array(1) })
  void url; void m; void ok; void maxBlob; void hex; void stat

  // rollback state and the tree walker
  const store = new SeqStore('rotree-seq')
  const seen = await store.get(id)
  if (seen && 'seq' in seen) { const sq: number = seen.seq; void sq }
  await store.accept(id, { seq: 2, root: rootRef })
  await walkTree(rootRef, async (ref, kind) => kind === 'dir' ? verifyDirPage(await fetchBlob(ref), ref) : verifyChunkIndex(await fetchBlob(ref), ref), (ref, kind, path) => { void ref; void kind; void path })

  // a custom transport
  const transport: Transport = { async get (u, o) { void u; void o.cap; return new Uint8Array() }, close () {}, stats: { requests: 0, bytes: 0 } }
  const t2 = new Tree(`https://m.example/#${key}`, { transport, stateDir: null })
  await t2.refresh()

  // the prebuilt bundle has the same API
  const t3: Tree = await bundle.openTree(`https://m.example/#${key}`)
  void t3
}

export async function layers (tree: Tree, bytes: Uint8Array): Promise<void> {
  const ref: Ref = readRef(new Reader(bytes), 2, 1 << 20)
  const raw: Uint8Array = await decodeBlob(bytes, ref.codec ?? 'none', ref.size)
  // @ts-expect-error: not a codec of FORMAT.md §12.6
  await decodeBlob(bytes, 'gzip', ref.size)
  const hex: string = await sha256Hex(raw)
  const whole: string = createSha256().update(raw).update(raw).hex()
  const backend: 'node:crypto' | 'webcrypto' | '@noble/hashes' = hashBackend
  const signed: boolean = verifySignature('00', raw, hex)

  // a trust document, accepted as the first step from an address's anchor
  const { anchor, name } = parseFragment(`t${hex}:stable`)
  const a: Anchor = anchor
  if (a.kind === 'trust') { const h: string = a.hash; void h }
  const doc: TrustDoc = acceptTrustStep(null, decodeTrustDoc(bytes), anchor)
  checkNotRetired(doc)
  const threshold: number = doc.roles.release.threshold
  const spelled: string = anchorText(anchor) + trustHash(doc)

  const shown: string = redactUrl('https://user:pass@m.example/')
  const anyOrigin: boolean = redirectPolicy({ allowRedirectOrigins: ['https://cdn.example'] }).any
  const range = parseRange('bytes=0-9', 100)
  if (range !== null && range !== 'unsatisfiable') { const header: string = contentRange(range, 100); void header }
  const fresh: boolean = etagMatches('"a"', '"a"')

  const lru = new LRU<Uint8Array>(1 << 20)
  lru.set(ref.hash, raw, raw.length)
  const hit: Uint8Array | undefined = lru.get(ref.hash)
  const one: number = await limiter(4)(async () => 1)

  const parts: string[] = splitPath('/a/../b')
  const old: Tree = await openHistoric(tree, 3)
  const layer: LayerTree = old
  const { total, entries } = await treeHistory(tree, { limit: 5 })
  for (const e of entries) {
    if (e.ok) { const seq: number = e.info.seq; void seq } else { const code: string = e.code; void code }
  }
  void whole; void backend; void signed; void name; void threshold; void spelled; void shown; void anyOrigin; void fresh; void hit; void one; void parts; void layer; void total
}

async function fetchBlob (ref: Ref): Promise<Uint8Array> {
  const r = await fetch(`https://m.example/h/${ref.hash}`)
  return new Uint8Array(await r.arrayBuffer())
}
void badOpts
