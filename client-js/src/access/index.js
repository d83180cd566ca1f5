// rotree-client/access: what a private tree adds (FORMAT.md §12.8): the
// keyring of reader keys (an age file) and the root hidden behind it.
export { recipientKey, identityScalar, recipientOf, encodeEpoch, decodeEpoch, sealKeyring, openKeyring } from './keyring.js'
export { encodeRootRef, decodeRootRef, rootCommit, wrapRoot, unwrapRoot } from './root-wrap.js'
