// What differs between Node and browsers, chosen by the package's "imports"
// conditions (not by sniffing at run time).
import { Readable } from 'node:stream'
import { homedir } from 'node:os'
import { join } from 'node:path'
import { BufferPool } from '../fetch/buffer-pool.js'
export { createTransport } from '../net/transport-node.js'

/** README "The command line": $ROTREE_STATE, else $XDG_STATE_HOME/rotree, else ~/.local/state/rotree */
export function defaultStateDir (env = process.env) {
  if (env.ROTREE_STATE) return env.ROTREE_STATE
  if (env.XDG_STATE_HOME) return join(env.XDG_STATE_HOME, 'rotree')
  return join(homedir(), '.local', 'state', 'rotree')
}

export function stateLocation (dir) { return join(dir, 'seq.db') }

/**
 * The pool a Tree's lent reads take their chunk buffers from (buffer-pool.js):
 * each buffer its own memory, not zero-filled (the transport fills it).
 */
export function bufferPool () { return new BufferPool({ alloc: n => Buffer.allocUnsafeSlow(n) }) }

/** @param {AsyncIterable<Uint8Array>} iter */
export function toStream (iter) { return Readable.from(iter, { objectMode: false, highWaterMark: 1 }) }
