// The walk's record of one directory (walk.js), and two helpers of the walk.
import { listDirBytes } from './src-dirs.js'

const strictUtf8 = new TextDecoder('utf-8', { fatal: true })

/** A directory being walked. */
export class Dir {
  constructor (parent, slot, name, rel, depth, key, mode) {
    this.parent = parent; this.slot = slot; this.name = name; this.rel = rel; this.depth = depth; this.key = key
    this.mode = mode // 'full' | 'dirty' | 'path'
    this.h = null // its handle (src-dirs.js)
    this.seen = null // the lstat its parent's listing took of it
    this.names = null; this.kinds = null
    this.state = null // per child, PENDING …
    this.rbuf = null; this.rpos = null // READ: the file's record in a batch buffer
    this.extra = null // SUBDIR: { ref, mtimeMs, ino, dev }; LINK: { target, mtimeMs }
    this.record = null; this.recIdx = null
    this.waiting = 0; this.files = 0 // children not settled; of them, files
    this.changed = true // anything differs from the record (no record: yes)
    this.round = 0
    this.cb = null
  }
}

// names of a directory that are not UTF-8: the string readdir gave → the name as latin1, for the message
export function notUtf8 (h) {
  const out = new Map()
  for (const nb of listDirBytes(h)) {
    try { strictUtf8.decode(nb) } catch { out.set(nb.toString('utf8'), nb.toString('latin1')) }
  }
  return out
}

export function deferred () {
  let resolve, reject
  const promise = new Promise((res, rej) => { resolve = res; reject = rej })
  promise.catch(() => {})
  return { promise, resolve, reject }
}
