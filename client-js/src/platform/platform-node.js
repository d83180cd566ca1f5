// What differs between Node and browsers, chosen by the package's "imports"
// conditions (not by sniffing at run time).
import { Readable } from 'node:stream'
import { BufferPool } from '../fetch/buffer-pool.js'
export { createTransport } from '../net/transport-node.js'
export { defaultStateDir, stateLocation } from './state-dir-node.js'

/**
 * The pool a Tree's lent reads take their chunk buffers from (buffer-pool.js):
 * each buffer its own memory, not zero-filled (the transport fills it).
 */
export function bufferPool () { return new BufferPool({ alloc: n => Buffer.allocUnsafeSlow(n) }) }

/** @param {AsyncIterable<Uint8Array>} iter */
export function toStream (iter) { return Readable.from(iter, { objectMode: false, highWaterMark: 1 }) }
