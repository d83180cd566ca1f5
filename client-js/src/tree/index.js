// rotree-client/tree: a verified view of one tree (tree.js): paths resolved
// with a work budget (resolve.js), byte ranges as verified chunks
// (read-pipeline.js), the look-ahead walk (walk-ahead.js) and every blob a
// root reaches on it (walk.js), the byte gate of what a reader has in flight
// (byte-gate.js), and the roots a tree published (history.js).
export { openTree, Tree, toStat } from './tree.js'
export { MAX_WALK_COMPONENTS, MAX_WALK_TARGET_BYTES, SLICE_MS, slicer, resolvePath } from './resolve.js'
export { readChunks, chunkSpans } from './read-pipeline.js'
export { walkTree } from './walk.js'
export { walkAhead, treeDirs, entryCost, ENTRY_COST } from './walk-ahead.js'
export { ByteGate, readAheadGate, GATE_COUNT, GATE_FLOOR } from './byte-gate.js'
export { splitPath, joinPath } from './path.js'
export { MAX_HISTORY_INDEX, treeHistory, parseIndex, openHistoric } from './history.js'
