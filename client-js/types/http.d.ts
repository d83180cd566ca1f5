// Hand-written declarations for rotree-client/http (src/net/http-range.js):
// Range requests and validators (RFC 9110 §13, §14) as `rotree serve`, the
// gateway and the web app's Service Worker answer them. No I/O: browsers load
// it as it is.

/** Byte range of a response, both ends inclusive (as in Content-Range). */
export interface ByteRange { start: number, end: number }

/**
 * The one byte range a Range header asks for (RFC 9110 §14.2): null to ignore
 * the header (send the whole representation, 200), 'unsatisfiable' for a 416,
 * else the inclusive range.
 */
export declare function parseRange (header: string | null | undefined, size: number): ByteRange | 'unsatisfiable' | null
/** `bytes A-B/SIZE` for a range from parseRange. */
export declare function contentRange (range: ByteRange, size: number): string
// `bytes */SIZE`, the Content-Range of a 416
export declare function unsatisfiedRange (size: number): string
/** If-None-Match (RFC 9110 §13.1.2): weak comparison with our quoted entity-tag; `*` matches. */
export declare function etagMatches (ifNoneMatch: string, etag: string): boolean
/** If-Match (RFC 9110 §13.1.1): strong comparison; `*` matches. */
export declare function etagMatchesStrong (ifMatch: string, etag: string): boolean
/** If-Range (RFC 9110 §13.1.5): does the range still apply? Absent: yes. */
export declare function ifRangeHolds (ifRange: string | null | undefined, validators: { etag: string, lastModified?: string | null }): boolean
