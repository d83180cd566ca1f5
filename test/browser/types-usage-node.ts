// Checked by `tsc --noEmit --module nodenext` (test/browser/types.test.js), never
// run: under Node's conditions the same package types createReadStream() as a
// stream.Readable, without needing @types/node, and the layer subpaths give
// what Node has besides (packing blobs, the HTTP transport, buffer pools).
import { openTree, type Tree, type NodeReadable, type Ref, type DirPage } from 'rotree-client'
import { packBlob, decodeBlobSync, decodeBlob, DEFLATE_LEVEL } from 'rotree-client/codec'
import { generateKeyPair, sign, publicKeyOf } from 'rotree-client/crypto'
import { parseAddress, SeqStore, TrustChain, RootStore, walkChain, mirrorTrustSource, DEFAULT_SKEW_MS, type SeenRecordV2 } from 'rotree-client/trust'
import { createTransport, type NodeTransport } from 'rotree-client/net'
import { ifRangeHolds } from 'rotree-client/http'
import { Mirrors, VerifiedBlobs, bufferPool, type MirrorLoad } from 'rotree-client/fetch'
import { openTree as openLayerTree, walkTree, readChunks, walkAhead, treeDirs, readAheadGate, type WalkSource } from 'rotree-client/tree'

export async function usage (key: string, sink: { write (b: Uint8Array): boolean, end (): void }): Promise<void> {
  const tree: Tree = await openTree(`http://127.0.0.1:8080/#${key}`, { stateDir: null })
  const s: NodeReadable = tree.createReadStream('/big.iso', { start: 0, end: 99 })
  s.on('error', (err: Error) => { void err.message })
  s.pipe(sink)
  for await (const chunk of tree.createReadStream('/a.txt')) { const n: number = chunk.byteLength; void n }
  // @ts-expect-error: a Node stream is not a WHATWG ReadableStream
  tree.createReadStream('/a.txt').getReader()
  tree.close()
}

export async function layers (ref: Ref): Promise<void> {
  // a builder packs blobs (FORMAT.md §12.6)
  const { stored, codec } = packBlob(new Uint8Array(100))
  const back: Uint8Array = decodeBlobSync(stored, codec, 100)
  const same: Uint8Array = await decodeBlob(stored, codec, 100)
  const level: number = DEFLATE_LEVEL
  const { secretKey, publicKey } = generateKeyPair()
  const sig: string = sign(back, secretKey)
  const pub: string = publicKeyOf(secretKey)

  // the reader's machinery, piece by piece
  const transport: NodeTransport = createTransport({ maxSockets: 4, http2: false, pipelineDepth: 1 })
  transport.preconnect('http://127.0.0.1:8080/', { timeoutMs: 1000 })
  const rtt: number | null = await transport.rtt('http://127.0.0.1:8080/')
  const mirrors = new Mirrors(['http://127.0.0.1:8080/'], { transport, timeoutMs: 1000 })
  const seqs: number[] = await mirrors.fetch('history/index.json', 1 << 20, bytes => [bytes.length])
  for (const r of await mirrors.fetchAll('fsinfo.json', 4096, bytes => bytes.length, { settleMs: 100 })) {
    if ('value' in r) { const n: number = r.value; void n }
  }
  const health: MirrorLoad[] = mirrors.health()
  const blobs = new VerifiedBlobs({ mirrors, cacheBytes: 1 << 20, concurrency: 8, counters: { localFaults: 0 }, pool: bufferPool() })
  const page: DirPage = await blobs.get(ref, 'dir')
  const chunk: Uint8Array = await blobs.chunk(ref)
  // @ts-expect-error: a page is not bytes
  const wrong: Uint8Array = await blobs.get(ref, 'dir')

  // the trust chain and the root store of one address
  const { anchor, name, id } = parseAddress(`http://127.0.0.1:8080/#${publicKey}`)
  const newest = await walkChain(mirrorTrustSource(mirrors), { anchor, to: 3 })
  if (newest !== null) { const text: string = newest.text; void text }
  const state = new SeqStore(null)
  const chain = new TrustChain({ anchor, id, mirrors, state })
  const roots = new RootStore({ publicKey, anchor, name, id, mirrors, state, now: Date.now, skewMs: DEFAULT_SKEW_MS, graceMs: 0, settleMs: 100 })
  const changed: boolean = await roots.refresh()
  const rootKeys: string[] | undefined = chain.doc?.roles.root.keys
  const seen: SeenRecordV2 | null = await state.update(id, prev => prev !== null && 'v' in prev ? prev : null)
  const signers: string[] | undefined = seen?.release?.signers

  // the tree layer: the same Tree, Node's streams
  const tree = await openLayerTree(`http://127.0.0.1:8080/#${publicKey}`, { stateDir: null, transport })
  const s: NodeReadable = tree.createReadStream('/a.txt')
  const entry = await tree.resolve('/a.txt')
  for await (const piece of readChunks({ chunk: r => blobs.chunk(r), chunkIndex: async () => { throw new Error('no index') } }, entry, 0, entry.size)) { void piece.byteLength }
  await walkTree(ref, async () => page, () => {}, { walked: new Set(), onLoadError: (r, kind, path, err) => { void r.hash; void kind; void path; void err.message } })
  // the look-ahead walk: a tree's directories, and nodes of the caller's own
  const dirs = treeDirs(tree, (parent: { entry: typeof entry, count?: number, depth: number }, e) => ({ entry: e, count: e.entries, depth: parent.depth + 1 }))
  await walkAhead({ entry, count: 1, depth: 0 }, dirs, { entry: (dir, e, child) => { void dir.depth; void e.name; void child?.count } }, { breadth: 128, maxDepth: 255 })
  const pages: WalkSource<{ id: number }, { id: number, leaf: boolean }> = {
    expand: async n => ({ entries: [{ id: n.id + 1, leaf: n.id > 3 }], cost: 256 }),
    child: (n, e) => e.leaf ? null : { id: e.id }
  }
  await walkAhead({ id: 0 }, pages, { enter: async (n, entries) => { void n.id; void entries?.length } })
  const gate = readAheadGate(mirrors, { count: 64 })
  await gate.enter(gate.charge(entry.size)); gate.leave(gate.charge(entry.size))
  const holds: boolean = ifRangeHolds(undefined, { etag: '"x"' })
  void same; void level; void sig; void pub; void rtt; void seqs; void health; void chunk; void wrong; void changed; void rootKeys; void signers; void s; void holds
}
