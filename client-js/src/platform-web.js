// Browser side of platform-node.js.
export { createTransport } from './transport-web.js'

export function defaultStateDir () { return 'rotree' }
export function stateLocation (dir) { return dir + '-seq' } // an IndexedDB database name

/** @param {AsyncIterable<Uint8Array>} iter @returns {ReadableStream<Uint8Array>} */
export function toStream (iter) {
  const it = iter[Symbol.asyncIterator]()
  return new ReadableStream({
    async pull (ctl) {
      const { done, value } = await it.next()
      if (done) ctl.close(); else ctl.enqueue(value)
    },
    cancel () { return it.return?.() }
  })
}
