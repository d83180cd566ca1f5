// rotree-client: read trees published by `rotree build`, verifying every byte.
export { openTree, Tree, toStat } from './tree/tree.js'
export { parseAddress, mirrorUrl } from './trust/address.js'
// a private tree's reader: an identity file's text checked before it is handed to openTree (FORMAT.md §12.8)
export { parseIdentities } from './access/open-root.js'
// a gated tree's reader: a grant file checked, and the Tree's transport wrapped to trade it for edge tokens (FORMAT.md §12.11)
export { gatedTransport } from './net/gated-transport.js'
export { decodeGrant } from './format/grant.js'
export * from './errors.js'
export { verifyFsinfo, verifyBlob, verifyDirPage, verifyChunkIndex, checkRollback, checkPagePlacement, checkChunkIndexPlacement } from './trust/verify.js'
export { SeqStore } from './trust/state.js'
export { walkTree } from './tree/walk.js'
// the Range header as `rotree serve`, the gateway and the web app's Service Worker read it
export { parseRange } from './net/http-range.js'
