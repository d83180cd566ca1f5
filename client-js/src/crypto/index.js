// rotree-client/crypto: SHA-256 and ed25519 as this platform does them best
// (package.json "imports": node:crypto in Node, WebCrypto and @noble in
// browsers). Ed25519 signatures are deterministic, so both give the same bytes.
export { sha256Sync, sha256HexSync, sha256Hex, hashBackend, createSha256 } from '#sha256'
export { generateKeyPair, publicKeyOf, sign, verifySignature } from '#ed25519'
// AES-256-GCM and HMAC-SHA256 for private trees (FORMAT.md §12.8)
export { gcmSeal, gcmOpen, gcmOpenSync, hmacSha256 } from '#aead'
