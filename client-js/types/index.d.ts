// rotree-client: hand-written declarations for the package entry, for browsers
// and bundlers (the "browser" and "default" conditions). In browsers,
// createReadStream() returns a WHATWG ReadableStream. Node's entry is node.d.ts.
import type { TreeApi, TreeOptions } from './tree.js'

export * from './tree.js'
export * from './errors.js'
export {
  verifyFsinfo, verifyBlob, verifyDirPage, verifyChunkIndex, checkRollback, checkPagePlacement, checkChunkIndexPlacement,
  VerifyFsinfoOptions, VerifiedFsinfo, SeenRecord, SeenRecordV2, PagePlacement
} from './verify.js'
export type { Ref, Entry, DirPage, ChunkIndex } from './format.js'
// a gated tree's reader (docs/FORMAT.md §12.11): the grant decoded, the Tree's transport wrapped (TreeOptions.wrapTransport)
export { gatedTransport } from './net.js'
export { decodeGrant, Grant } from './grant.js'

/** A verified view of one tree. */
export declare class Tree {
  constructor (address: string, opts?: TreeOptions)
}
export interface Tree extends TreeApi<ReadableStream<Uint8Array>> {}

/** Open a tree and verify its current fsinfo.json. */
export declare function openTree (address: string, opts?: TreeOptions): Promise<Tree>
