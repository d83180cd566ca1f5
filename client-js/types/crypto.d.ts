// Hand-written declarations for rotree-client/crypto (src/crypto/index.js):
// SHA-256 and ed25519 as each platform does them best. Keys and signatures
// are lowercase hex: a secret key is its 32-byte seed (64 hex), a public key
// 64 hex, a signature 128 hex (RFC 8032).

/** An incremental SHA-256 (a whole file's, FORMAT.md §12.7). */
export interface Sha256 {
  update (bytes: Uint8Array): Sha256
  /** the digest, 64 lowercase hex; once */
  hex (): string
}

export declare function sha256Sync (bytes: Uint8Array): Uint8Array
export declare function sha256HexSync (bytes: Uint8Array): string
export declare function sha256Hex (bytes: Uint8Array): Promise<string>
/** Which implementation hashes here (the web app shows it). */
export declare const hashBackend: 'node:crypto' | 'webcrypto' | '@noble/hashes'
export declare function createSha256 (): Sha256

export declare function generateKeyPair (): { secretKey: string, publicKey: string }
export declare function publicKeyOf (secretKey: string): string
/** Deterministic (RFC 8032 §5.1.6): the same bytes on every platform. */
export declare function sign (message: Uint8Array, secretKey: string): string
/** false, never a throw, for a malformed key, point or signature. */
export declare function verifySignature (sig: string, message: Uint8Array, publicKey: string): boolean

/** AES-256-GCM: ciphertext ‖ 16-byte tag (FORMAT.md §12.8). */
export declare function gcmSeal (key: Uint8Array, nonce: Uint8Array, plain: Uint8Array): Uint8Array
/** The plaintext of ciphertext ‖ tag, or null when the tag does not verify. */
export declare function gcmOpen (key: Uint8Array, nonce: Uint8Array, sealed: Uint8Array): Promise<Uint8Array | null>
export declare function gcmOpenSync (key: Uint8Array, nonce: Uint8Array, sealed: Uint8Array): Uint8Array | null
export declare function hmacSha256 (key: Uint8Array, data: Uint8Array): Uint8Array
