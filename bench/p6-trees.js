// Generated source trees for the build figures (P6, P6r, P13), written with
// synchronous calls (a million small files in a couple of minutes).
//
//   smallTree(dir, n)  n small files, 100 per directory under d<k>/,
//                      sizes log-uniform 64 B .. 16 KiB (three in four inlined)
//   tinyTree(dir, n)   n files of 0..200 bytes, 1,000 per directory: the memory figure
//   bigFile(dir, bytes) one file of pseudo-random bytes
import { mkdirSync, writeFileSync, openSync, writeSync, closeSync } from 'node:fs'
import path from 'node:path'
import { createHash, createCipheriv } from 'node:crypto'

// one keystream, sliced: a cipher per file costs more than the write
function stream (salt, n) {
  return createCipheriv('aes-256-ctr', createHash('sha256').update(salt).digest(), Buffer.alloc(16)).update(Buffer.alloc(n))
}

// a cheap deterministic sequence (xorshift32) for sizes
function rng (salt) {
  let x = salt >>> 0 || 1
  return () => { x ^= x << 13; x >>>= 0; x ^= x >>> 17; x ^= x << 5; x >>>= 0; return x / 2 ** 32 }
}

/** @returns {{ files: number, bytes: number, dirs: number }} */
export function smallTree (dir, n, { perDir = 100, lo = 64, hi = 16 << 10, salt = 1 } = {}) {
  return writeMany(dir, n, perDir, u => Math.round(lo * Math.exp(u * Math.log(hi / lo))), salt)
}

export function tinyTree (dir, n, { perDir = 1000, salt = 2 } = {}) {
  return writeMany(dir, n, perDir, u => Math.floor(u * 201), salt)
}

function writeMany (dir, n, perDir, sizeOf, salt) {
  const next = rng(salt)
  const pool = stream('p6-' + salt, 1 << 20)
  let bytes = 0; let dirs = 0; let off = 0
  for (let d = 0; d * perDir < n; d++) {
    // two levels, so no directory holds more than perDir entries
    const sub = path.join(dir, `g${String(Math.floor(d / 100)).padStart(3, '0')}`, `d${String(d % 100).padStart(2, '0')}`)
    mkdirSync(sub, { recursive: true }); dirs++
    for (let i = d * perDir; i < Math.min(n, (d + 1) * perDir); i++) {
      const size = sizeOf(next())
      if (off + size > pool.length) off = 0
      // a counter in front makes every file distinct (no chunk is shared by accident)
      const data = Buffer.concat([Buffer.from(`${i}\n`), pool.subarray(off, off + size)]).subarray(0, size)
      off += 4099
      writeFileSync(path.join(sub, `f${i}.dat`), data)
      bytes += size
    }
  }
  return { files: n, bytes, dirs }
}

export function bigFile (dir, bytes, name = 'big.bin') {
  mkdirSync(dir, { recursive: true })
  const fd = openSync(path.join(dir, name), 'w')
  try {
    const block = 8 << 20
    const cipher = createCipheriv('aes-256-ctr', createHash('sha256').update('p6-big').digest(), Buffer.alloc(16))
    const zero = Buffer.alloc(block)
    for (let done = 0; done < bytes; done += block) {
      const b = cipher.update(zero.subarray(0, Math.min(block, bytes - done)))
      for (let o = 0; o < b.length;) o += writeSync(fd, b, o)
    }
  } finally { closeSync(fd) }
  return { files: 1, bytes, dirs: 0 }
}
