// Hand-written declarations for rotree-client/tree (src/tree/index.js) in
// browsers and bundlers: the Tree of index.d.ts (streams are WHATWG
// ReadableStreams) and the rest of the tree layer (tree-layer-parts.d.ts).
// Under Node's conditions: tree-layer-node.d.ts.
export * from './tree-layer-parts.js'
export { Tree, openTree } from './index.js'
