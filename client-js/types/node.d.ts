// rotree-client: hand-written declarations for the package entry in Node (the
// "node" condition), where createReadStream() returns a stream.Readable. It is
// described structurally so that these types do not need @types/node.
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

/** The part of Node's stream.Readable (object mode off, Uint8Array chunks) most code uses. */
export interface NodeReadable extends AsyncIterable<Uint8Array> {
  pipe<T> (destination: T, options?: { end?: boolean }): T
  on (event: 'data', listener: (chunk: Uint8Array) => void): this
  on (event: 'error', listener: (err: Error) => void): this
  on (event: string, listener: (...args: any[]) => void): this
  once (event: string, listener: (...args: any[]) => void): this
  destroy (error?: Error): this
  readonly readable: boolean
}

/** A verified view of one tree. */
export declare class Tree {
  constructor (address: string, opts?: TreeOptions)
}
export interface Tree extends TreeApi<NodeReadable> {}

/** Open a tree and verify its current fsinfo.json. */
export declare function openTree (address: string, opts?: TreeOptions): Promise<Tree>
