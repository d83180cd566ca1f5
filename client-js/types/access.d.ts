// rotree-client/access: private trees (FORMAT.md §12.8): the keyring of reader keys and the hidden root.
import type { Ref } from './format.js'

/** The 32-byte X25519 key of an `age1…` recipient. */
export declare function recipientKey (recipient: string): Uint8Array
/** The 32-byte scalar of an `AGE-SECRET-KEY-1…` identity. */
export declare function identityScalar (identity: string): Uint8Array
/** The `age1…` recipient of an identity. */
export declare function recipientOf (identity: string): string
export declare function encodeEpoch (epoch: number, key: Uint8Array): Uint8Array
export declare function decodeEpoch (payload: Uint8Array): { epoch: number, key: Uint8Array }
/** An age file of the epoch key, one stanza per reader (`age1…`, `age1pq1…`). */
export declare function sealKeyring (o: { epoch: number, key: Uint8Array, readers: string[] }): Promise<Uint8Array>
/** The epoch key a keyring holds for an identity; ROTREE_NO_ACCESS when it holds none. */
export declare function openKeyring (keyring: Uint8Array, identity: string): Promise<{ epoch: number, key: Uint8Array }>
export declare function encodeRootRef (ref: Ref & { key: string }, mtime: number): Uint8Array
export declare function decodeRootRef (bytes: Uint8Array): { ref: Ref & { key: string }, mtime: number }
/** The release's `private` member (64 hex) for a root ref's bytes. */
export declare function rootCommit (rootRefBytes: Uint8Array): string
export declare function wrapRoot (epochKey: Uint8Array, rootRefBytes: Uint8Array): string
export declare function unwrapRoot (epochKey: Uint8Array, wrapped: string, commit: string): Promise<{ ref: Ref & { key: string }, mtime: number }>
/** The age identities in an identity file's text (or several texts): `AGE-SECRET-KEY-1…` lines, # comments skipped. */
export declare function parseIdentities (v: string | string[] | null | undefined): string[]
/** A reader's opener of private roots: the keyring fetched, opened with the first identity it holds, the root unwrapped and checked. */
export declare function rootOpener (o: { identities: string[], fetchKeyring: (ref: { hash: string, size: number }) => Promise<Uint8Array> }): (info: object) => Promise<{ ref: Ref & { key: string }, mtime: number }>
/** Every blob a private release's manifest lists (FORMAT.md §12.8), each page checked against its index; resolves to the count. */
export declare function walkManifest (
  top: { hash: string, size: number },
  load: (ref: { hash: string, size: number }) => Promise<Uint8Array>,
  onBlob: (blob: { hash: string, size: number }) => void | Promise<void>,
  o?: { onPage?: (ref: { hash: string, size: number }) => void | Promise<void>, onLoadError?: (ref: { hash: string, size: number }, err: Error) => void, walked?: Set<string>, concurrency?: number }
): Promise<number>
/** A private release's keyring, manifest pages and blobs, with walkTree's arguments (kinds 'data' and 'manifest'). */
export declare function walkPrivateRoot (
  root: { hash: string, size: number, manifest: true, keyring: { hash: string, size: number } | null },
  load: (ref: { hash: string, size: number }, kind: 'manifest') => Promise<Uint8Array>,
  onRef: (ref: { hash: string, size: number }, kind: 'data' | 'manifest', path: string) => void | Promise<void>,
  o?: { onLoadError?: (ref: object, kind: string, path: string, err: Error) => void, walked?: Set<string>, concurrency?: number }
): Promise<void>
/** The path reports give a blob known only from the manifest, and the keyring's. */
export declare const MANIFEST_PATH: string
export declare const KEYRING_PATH: string
