// rotree-client/access: what a private tree adds (FORMAT.md §12.8): the
// keyring of reader keys (an age file), the root hidden behind it, and the
// manifest a keyless mirror walks.
export { recipientKey, identityScalar, recipientOf, encodeEpoch, decodeEpoch, openKeyring } from './keyring.js'
export { sealKeyring } from './keyring-seal.js'
export { encodeRootRef, decodeRootRef, rootCommit, wrapRoot, unwrapRoot } from './root-wrap.js'
export { walkManifest, walkPrivateRoot, MANIFEST_PATH, KEYRING_PATH } from './manifest-walk.js'
export { parseIdentities, rootOpener } from './open-root.js'
