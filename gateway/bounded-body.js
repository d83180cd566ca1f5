// The body of a response whose Content-Length already went out. Node writes
// whatever it is given past that length (strictContentLength is off by
// default), and on a kept-alive or pipelining connection those extra bytes
// are read as the next response: a tree that yields more bytes than its
// entry announced (a malformed tree, a cache that returns a blob under a
// size it was not verified at) could forge an answer to the client's next
// request. So every piece is checked against what is left: a piece that does
// not fit is not written at all, and the connection is destroyed; a body
// that ends short is destroyed too, never ended clean (docs/TRUST.md rule 3:
// only bytes that verified, and only the bytes announced).
import { destroyAfterHeaders } from './http-status.js'
import { countVerified } from './request-log.js'

export class BoundedBody {
  /**
   * @param {import('node:http').ServerResponse} res headers already written, with Content-Length `length`
   * @param {number} length
   * @param {{ error?: Function } | null} [log]
   */
  constructor (res, length, log = null) {
    this.res = res
    this.left = length
    this.log = log
  }

  /**
   * Write one piece. Resolves false when the response is over (client gone, or destroyed here).
   * `written(piece)` runs once the socket has taken the bytes (res.write's callback without an
   * error), so a lent buffer can be given back (Tree#release); never for a piece not written.
   */
  async write (piece, written) {
    const res = this.res
    if (res.destroyed) return false
    if (piece.length > this.left) return this._abort(`the tree yielded ${piece.length} bytes where ${this.left} were left of the announced Content-Length`)
    this.left -= piece.length
    countVerified(res, piece.length)
    if (!res.write(piece, written === undefined ? undefined : err => { if (!err) written(piece) })) await drained(res)
    return !res.destroyed
  }

  /** End the response: clean only when exactly the announced bytes went out. */
  end () {
    if (this.res.destroyed) return
    if (this.left !== 0) return this._abort(`the body ended ${this.left} bytes short of its Content-Length`)
    this.res.end()
  }

  /** Write `piece` and end: the whole body in one piece. */
  async whole (piece) {
    if (await this.write(piece)) this.end()
  }

  _abort (why) {
    this.log?.error?.(`rotree gateway: transfer aborted: ${why}`)
    destroyAfterHeaders(this.res)
    return false
  }
}

/** Resolves when `res` can take more, or has closed. */
export function drained (res) {
  return new Promise(resolve => {
    const done = () => { res.off('drain', done); res.off('close', done); resolve() }
    res.on('drain', done)
    res.on('close', done)
  })
}
