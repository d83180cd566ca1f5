// The one contract between transport-node.js, which owns what a request
// must keep (its byte cap, docs/TRUST.md rule 3; its one deadline across
// every redirect hop; its redirects and credentials, transport-url.js), and
// the wire clients that carry a hop: transport-h1.js (HTTP/1.1, http:) and
// transport-h2.js (HTTP/2, https: by ALPN). As undici's dispatcher handler:
// a wire client is handed one hop as
//
//   client.dispatch(handler, url, auth)   url: the hop's URL; auth: the
//                                         Authorization value for its origin, or null
//
// and from then on talks to the request only through `handler` below. What a
// client keeps per request (the request's head or headers, how often it was
// asked again) and per connection or session (streams open, the peer's
// limit, a PING out) it keeps in records of its own; it never writes a field
// onto the handler, and the handler never looks into the client's objects.
//
// A hop ends for the client when it calls onComplete or onError, when
// onHeaders returns false (a redirect went on to a new hop, dispatched
// afresh; or the request failed), or when the cancel function it gave
// onCancel is called. After that it drops the hop and calls nothing more,
// except onBodyRead for bytes it still reads into bodyRoom() to keep the
// answers queued behind on its connection in order.
import { MirrorNetworkError } from '../errors.js'

/**
 * @typedef {object} RequestHandler
 * @property {boolean} done settled (answered, failed, timed out or aborted):
 *   a client that finds it so drops it and sends nothing for it
 * @property {number} cap the most body bytes it accepts: where to queue it
 *   (a small one may wait behind short answers)
 * @property {number} timeoutMs its deadline, which also bounds a connection
 *   or handshake opened for it
 * @property {(cancel: (timedOut: boolean) => void) => void} onCancel how to
 *   stop what this hop waits on now (queued, written, streaming); given
 *   again whenever that changes. Called at most once: when the request ends
 *   other than by onComplete or a refused head (onError, the caller's
 *   abort, or its deadline: timedOut, so a client that multiplexes may check
 *   whether the whole connection stalled)
 * @property {(status: number, location: string|undefined, contentLength: number|string|undefined) => boolean} onHeaders
 *   the answer's head: true, read the body (into bodyRoom() or through
 *   onData); false, this hop is over and the client discards what the
 *   server still sends (DRAIN_MAX)
 * @property {number} bodyLeft bytes of the body buffer not filled yet (after onHeaders said true)
 * @property {() => Buffer} bodyRoom the unfilled rest of the body buffer, for
 *   a client that reads body bytes in place (the kernel's read, a copy from
 *   its scratch buffer); it then says how many with onBodyRead
 * @property {(n: number) => void} onBodyRead n bytes were written at the start
 *   of the last bodyRoom()
 * @property {(chunk: Uint8Array) => void} onData body bytes to copy in; more
 *   than the buffer holds fail the request (TooLargeError, rule 3)
 * @property {() => void} onComplete the body ended: the request resolves
 * @property {(err: Error) => void} onError the hop failed with a typed error
 *   (errors.js; networkFault for a socket's); the request fails and its
 *   cancel function is called
 * @property {() => void} onHttp1 transport-h2.js only: the origin chose
 *   HTTP/1.1 by ALPN; the request takes this hop over HTTP/1.1 instead
 */

// An unwanted body (a redirect's, an error page, the rest of a cancelled
// answer) no larger than this is read and dropped so the connection stays
// open; a larger or unannounced one closes it.
export const DRAIN_MAX = 64 * 1024

/** A socket's error as the network fault of `origin` (docs/TRUST.md rule 4). */
export function networkFault (origin, err) {
  return new MirrorNetworkError(`${origin}: ${err.code || err.message}`, { cause: err })
}
