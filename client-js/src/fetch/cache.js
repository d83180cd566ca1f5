// A byte-bounded LRU of verified things (SFSRO §4.3 keeps inode,
// indirect-block, small-block and directory caches; since every blob is named
// by its hash, one cache serves all of them). Its user picks the keys and
// what each value is charged (blobs.js: kind + hash + size, charged by
// heap cost). Only verified values go in, so a hit needs no re-check.
export class LRU {
  constructor (maxBytes) { this.max = maxBytes; this.bytes = 0; this.map = new Map(); this.hits = 0; this.misses = 0 }
  get (key) {
    const v = this.map.get(key)
    if (v === undefined) { this.misses++; return undefined }
    this.map.delete(key); this.map.set(key, v); this.hits++
    return v.value
  }
  set (key, value, size) {
    if (size > this.max / 4) return // one huge value would flush everything else
    const old = this.map.get(key)
    if (old) { this.bytes -= old.size; this.map.delete(key) }
    this.map.set(key, { value, size }); this.bytes += size
    for (const [k, v] of this.map) {
      if (this.bytes <= this.max) break
      this.map.delete(k); this.bytes -= v.size
    }
  }
  stats () { return { entries: this.map.size, bytes: this.bytes, maxBytes: this.max, hits: this.hits, misses: this.misses } }
}

/** At most n of the returned function's tasks run at once. */
export function limiter (n) {
  let active = 0
  const queue = []
  const next = () => {
    if (active >= n || queue.length === 0) return
    active++
    const { fn, resolve, reject } = queue.shift()
    fn().then(resolve, reject).finally(() => { active--; next() })
  }
  return fn => new Promise((resolve, reject) => { queue.push({ fn, resolve, reject }); next() })
}
