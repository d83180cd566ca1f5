// Hand-written declarations for rotree-client/grant (src/trust/grant.js and
// src/format/grant.js): grants, delegation and edge-token requests
// (docs/FORMAT.md §12.10–12.11).

export interface Role { threshold: number, keys: string[] }

export interface Grant {
  anchor: string
  name: string
  holder: string
  scope: string
  issued: string
  issuedMs: number
  expires: string
  expiresMs: number
  parent: Grant | null
  parentHash: string | null
  signatures: { key: string, sig: string }[]
  message: Uint8Array
}

export interface GrantVerdict {
  /** the key the chain ends at: who may fetch */
  holder: string
  /** the earliest expiry of the chain */
  expiresMs: number
  expires: string
  scope: string
  /** how many delegations below the first grant */
  depth: number
}

export declare const GRANT_TYPE: string
export declare const MAX_GRANT_CHAIN: number
export declare const MAX_GRANT: number
export declare const GRANT_SKEW_MS: number
export declare const PROOF_WINDOW_MS: number

export declare function decodeGrant (input: Uint8Array | string | object): Grant
export declare function encodeGrant (g: Omit<Grant, 'message' | 'issuedMs' | 'expiresMs' | 'parentHash'>): string
export declare function grantJson (g: Omit<Grant, 'message' | 'issuedMs' | 'expiresMs' | 'parentHash'>): object
export declare function grantHash (g: { message: Uint8Array }): string
export declare function grantMessage (g: { anchor: string, name: string, holder: string, scope: string, issued: string, expires: string, parentHash: string | null }): Uint8Array
export declare function unsignedGrant (o: { anchor: string, name?: string, holder: string, scope?: string, issued: string, expires: string, parent?: Grant | null }): Grant
export declare function signGrant (g: Grant, secretKeys: string[]): Grant
export declare function tokenRequestMessage (o: { anchor: string, name: string, grantHash: string, time: string, nonce: string }): Uint8Array
export declare function decodeTokenRequest (input: Uint8Array | string): { grant: Grant, time: string, timeMs: number, nonce: string, sig: string, message: Uint8Array }
export declare function tokenRequest (grant: Grant, secretKey: string, o?: { now?: number, nonce?: string }): string
export declare function accessRoleOf (trust: { roles: { access?: Role } } | null, anchor: { kind: 'key', key: string } | { kind: 'trust', hash: string }): Role | null
export declare function verifyGrant (grant: Grant | Uint8Array | string, o: { anchor: string, name: string, access: Role | null, now: number, skewMs?: number, revoked?: Set<string> | null }): GrantVerdict
export declare function verifyTokenRequest (body: Uint8Array | string, o: { anchor: string, name: string, access: Role | null, now: number, seen: Map<string, number>, windowMs?: number, revoked?: Set<string> | null }): GrantVerdict

/** A revocation list, trust/revoked.json (docs/FORMAT.md §12.12). */
export interface RevokedList {
  anchor: string
  name: string
  issued: string
  issuedMs: number
  grants: { hash: string, expires: string, expiresMs: number }[]
  signatures: { key: string, sig: string }[]
  message: Uint8Array
}
export declare const REVOKED_TYPE: string
export declare const MAX_REVOKED: number
export declare function decodeRevoked (input: Uint8Array | string | object): RevokedList
export declare function encodeRevoked (r: Omit<RevokedList, 'message' | 'issuedMs'>): string
export declare function revokedMessage (r: { anchor: string, name: string, issued: string, grants: { hash: string, expires: string }[] }): Uint8Array
export declare function verifyRevoked (list: RevokedList | Uint8Array | string, o: { anchor: string, name: string, access: Role | null }): { hashes: Set<string>, issuedMs: number, issued: string }
