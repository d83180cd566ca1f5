// rotree-client: read trees published by `rotree build`, verifying every byte.
export { openTree, Tree, toStat } from './tree.js'
export { parseAddress, mirrorUrl } from './address.js'
export * from './errors.js'
export { verifyFsinfo, verifyBlob, verifyDirPage, verifyChunkIndex, checkRollback, checkPagePlacement, checkChunkIndexPlacement } from './verify.js'
export { SeqStore } from './state.js'
export { walkTree } from './walk.js'
