// Hand-written declarations for rotree-client/net (src/net/index.js): Node's
// HTTP transport (HTTP/1.1 with keep-alive and pipelining, HTTP/2 to https:
// mirrors), the URL rules every transport keeps, and the Range and ETag rules
// of http.d.ts. Node only: browsers get their transport (fetch) through the
// package's own entry. URLs are described structurally, so these types need
// neither the DOM lib nor @types/node.
import type { Transport, AbortSignalLike } from './tree.js'

export { parseRange, contentRange, unsatisfiedRange, etagMatches, etagMatchesStrong, ifRangeHolds, ByteRange } from './http.js'

/** The parts of a WHATWG URL these rules read and write. */
export interface UrlLike {
  href: string
  readonly origin: string
  protocol: string
  username: string
  password: string
  hostname: string
  port: string
  pathname: string
}

export interface NodeTransportOptions {
  /** HTTP/1.1 connections per origin (default 16) */
  maxSockets?: number
  /** PEM certificates trusted for https: mirrors, besides the usual ones */
  ca?: string | Uint8Array | Array<string | Uint8Array>
  /** offer HTTP/2 to https: mirrors and read over it those that choose it (default false: HTTP/1.1 over TLS, and HTTP/2 only with a mirror that refuses HTTP/1.1) */
  http2?: boolean
  /** origins a mirror may redirect to (default: its own only) */
  allowRedirectOrigins?: string[]
  /** a mirror may redirect anywhere, never from https to http (default false) */
  crossOriginRedirects?: boolean
  /** answers an http: connection may have outstanding (default 8); 1: no pipelining */
  pipelineDepth?: number
}

/** One request's timing, after its body arrived whole. */
export interface RequestTiming { origin: string, protocol: string, redirects: number, bytes: number, headersMs: number, totalMs: number }

export interface NodeTransport extends Transport {
  get (url: string, o: {
    cap: number
    timeoutMs: number
    signal?: AbortSignalLike
    onTiming?: (t: RequestTiming) => void
    /** a buffer the caller owns: the body is read into it when it fits, and the answer is a view of it */
    into?: Uint8Array
  }): Promise<Uint8Array>
  preconnect (url: string, o: { timeoutMs: number }): void
  rtt (url: string): Promise<number | null>
  post (url: string, body: Uint8Array | string, o: { cap: number, timeoutMs: number, contentType?: string }): Promise<{ status: number, body: Uint8Array }>
  stats: {
    requests: number
    bytes: number
    /** per origin: the protocol it speaks (null until known), and for h2 the sessions opened and those that ended unanswered */
    origins: Record<string, { protocol: 'h2' | 'http/1.1' | null, requests: number, bytes: number, sessions?: number, sessionsUnanswered?: number }>
  }
}

export declare function createTransport (o?: NodeTransportOptions): NodeTransport

/** Redirects one request follows at most. */
export declare const MAX_REDIRECTS: number
/** A URL as it may be shown: without userinfo (also for strings that do not parse). */
export declare function redactUrl (url: string | UrlLike): string
/** An http(s) URL to fetch; anything else is ROTREE_MIRROR_HTTP. */
export declare function parseTarget (url: string): UrlLike
/** The Authorization header for a URL's userinfo (as curl sends it), or null. */
export declare function basicAuth (u: UrlLike): string | null
export interface RedirectPolicy { any: boolean, origins: Set<string> }
/** Which origins a redirect may lead to, besides the mirror's own. */
export declare function redirectPolicy (o?: { allowRedirectOrigins?: string[], crossOriginRedirects?: boolean }): RedirectPolicy
/** The next hop of a redirect, without userinfo; ROTREE_MIRROR_HTTP when the policy refuses it. */
export declare function redirectTarget (first: UrlLike, current: UrlLike, location: string, hops: number, policy: RedirectPolicy, status: number): UrlLike

/** The round trip to each origin, measured by its first connection's handshake. */
export declare class HandshakeTimes {
  constructor ()
  /** A connection to `origin` opened in `ms`, which took `roundTrips` round trips; the first one counts. */
  measured (origin: string, ms: number, roundTrips: number): void
  /** A connection to `origin` failed before it opened. */
  failed (origin: string): void
  /** The measured round trip in ms once the first connection opens; null when it fails first or on close(). */
  rtt (origin: string): Promise<number | null>
  close (): void
}

/** How long before its expiry an edge token is renewed, ms. */
export declare const RENEW_BEFORE_MS: number
/** The fraction of a short token's lifetime it is renewed before it expires (the lesser of this and RENEW_BEFORE_MS). */
export declare const RENEW_FRACTION: number

/**
 * A transport for a gated tree (docs/FORMAT.md §12.11): blob requests carry an
 * edge token, fetched from each mirror's POST <base>.rotree/token with the grant
 * and renewed before it expires; an edge's refusal is ROTREE_NO_ACCESS.
 */
export declare function gatedTransport<T extends { get (url: string, o: any): Promise<Uint8Array>, close (): void }> (inner: T, o: {
  grant: object | (() => Promise<object>)
  secretKey: string | (() => Promise<string>)
  fetch?: (url: string, init: { method: string, headers: Record<string, string>, body: string }) => Promise<{ status: number, text (): Promise<string> }>
  now?: () => number
}): T
