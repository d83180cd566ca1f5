// Browser side of platform-node.js, chosen by the package's "imports"
// conditions (#platform: node vs default), never by sniffing at run time.
// Nothing here may import a Node built-in: the browser bundle is built with
// esbuild --platform=browser, which refuses them, and a test checks its inputs.
export { createTransport } from '../net/transport-web.js'

export { defaultStateDir, stateLocation } from './state-dir-web.js'

// no pool: nothing in a browser reads with { lend: true } yet, so lent reads
// are plain reads there and the pool stays out of the bundle
export function bufferPool () { return null }

/**
 * Verified bytes as a WHATWG ReadableStream. Pull-based: the next chunk is
 * fetched and verified only when the consumer asks, so a slow writer (a disk,
 * a Response body) holds back the network instead of buffering the file.
 * @param {AsyncIterable<Uint8Array>} iter @returns {ReadableStream<Uint8Array>}
 */
export function toStream (iter) {
  const it = iter[Symbol.asyncIterator]()
  return new ReadableStream({
    async pull (ctl) {
      const { done, value } = await it.next()
      if (done) ctl.close(); else ctl.enqueue(value)
    },
    cancel () { return it.return?.() }
  }, { highWaterMark: 0 })
}

/**
 * The part of Node's EventEmitter that abstract-level (under browser-level)
 * uses: it does `require('events')`, which browsers do not have and which no
 * package in our tree provides. The browser build aliases 'events' (and
 * 'buffer', whose absence abstract-level and level-transcoder handle: they only
 * need Buffer for the 'buffer' encoding, and we store JSON under string keys)
 * to this module. Semantics follow Node: 'newListener' fires before a listener
 * is added, 'removeListener' after one is removed, and an 'error' event
 * without a listener throws.
 */
export class EventEmitter {
  #ev = new Map()
  on (name, fn) {
    if (this.#ev.has('newListener')) this.emit('newListener', name, fn)
    const list = this.#ev.get(name)
    if (list) list.push(fn); else this.#ev.set(name, [fn])
    return this
  }

  addListener (name, fn) { return this.on(name, fn) }
  prependListener (name, fn) { this.on(name, fn); const l = this.#ev.get(name); l.unshift(l.pop()); return this }
  once (name, fn) {
    const wrapper = (...args) => { this.off(name, wrapper); fn.apply(this, args) }
    wrapper.listener = fn
    return this.on(name, wrapper)
  }

  off (name, fn) {
    const list = this.#ev.get(name)
    const i = list ? list.findIndex(l => l === fn || l.listener === fn) : -1
    if (i < 0) return this
    const [removed] = list.splice(i, 1)
    if (list.length === 0) this.#ev.delete(name)
    if (this.#ev.has('removeListener')) this.emit('removeListener', name, removed.listener ?? removed)
    return this
  }

  removeListener (name, fn) { return this.off(name, fn) }
  removeAllListeners (name) {
    for (const n of name === undefined ? [...this.#ev.keys()] : [name]) {
      for (const fn of [...(this.#ev.get(n) ?? [])].reverse()) this.off(n, fn)
    }
    return this
  }

  emit (name, ...args) {
    const list = this.#ev.get(name)
    if (!list) {
      if (name === 'error') throw args[0] instanceof Error ? args[0] : new Error(`unhandled 'error' event: ${args[0]}`)
      return false
    }
    for (const fn of [...list]) fn.apply(this, args)
    return true
  }

  listenerCount (name) { return this.#ev.get(name)?.length ?? 0 }
  listeners (name) { return (this.#ev.get(name) ?? []).map(l => l.listener ?? l) }
  eventNames () { return [...this.#ev.keys()] }
  setMaxListeners () { return this }
  getMaxListeners () { return Infinity }
}
