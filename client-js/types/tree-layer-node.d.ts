// Hand-written declarations for rotree-client/tree under Node's conditions:
// the Tree of node.d.ts (streams are Node's) and the rest of the tree layer
// (tree-layer-parts.d.ts).
export * from './tree-layer-parts.js'
export { Tree, openTree } from './node.js'
