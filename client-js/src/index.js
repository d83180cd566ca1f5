// rotree-client: read trees published by `rotree build`, verifying every byte.
export { openTree, Tree, toStat } from './tree.js'
export { parseAddress, mirrorUrl } from './address.js'
export * from './errors.js'
export { verifyFsinfo, verifyBlob, verifyDirPage, verifyChunkIndex, checkRollback, checkPagePlacement, checkChunkIndexPlacement } from './verify.js'
export { SeqStore } from './state.js'
export { walkTree } from './walk.js'
// the Range header as `rotree serve`, the gateway and the web app's Service Worker read it
export { parseRange } from './http-range.js'
