#!/usr/bin/env node
// Does a fan-out of h/ (h/ab/<hash>) pay at a million blobs? Creates N small
// files the way the builder stores blobs (a temporary name in the folder, then
// a rename to the blob's name), flat and fanned out into 256 subdirectories,
// then looks up a seventh of them and 200,000 absent names. Synchronous calls,
// one thread: the file system's cost per blob, not Node's.
//
//   node bench/h-fanout.js [N=1000000] [flat,fan256]   (the order is the runs' order)
// Needs ~2N inodes free for the moment it runs; removes everything it made.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { createHash } from 'node:crypto'

const N = Number(process.argv[2] ?? 1_000_000)
const modes = (process.argv[3] ?? 'flat,fan256').split(',')
const base = fs.mkdtempSync(path.join(os.tmpdir(), 'rotree-fanout-'))
const name = i => createHash('sha256').update(String(i)).digest('hex')
try {
  for (const mode of modes) {
    const h = path.join(base, mode, 'h')
    fs.mkdirSync(h, { recursive: true })
    if (mode === 'fan256') for (let i = 0; i < 256; i++) fs.mkdirSync(path.join(h, i.toString(16).padStart(2, '0')))
    const at = n => mode === 'flat' ? path.join(h, n) : path.join(h, n.slice(0, 2), n)
    let t = performance.now()
    for (let i = 0; i < N; i++) { const tmp = path.join(h, `.tmp-${i}`); fs.writeFileSync(tmp, 'x'); fs.renameSync(tmp, at(name(i))) }
    const create = performance.now() - t
    t = performance.now()
    for (let i = 0; i < N; i += 7) fs.statSync(at(name(i)))
    const hit = performance.now() - t
    t = performance.now()
    for (let i = 0; i < 200_000; i++) { try { fs.statSync(at(name(N + i))) } catch {} }
    const miss = performance.now() - t
    console.log(`${mode}, ${N} blobs: create + rename ${(create * 1000 / N).toFixed(1)} µs each, lookup ${(hit * 1000 / Math.ceil(N / 7)).toFixed(1)} µs, absent ${(miss * 1000 / 200_000).toFixed(1)} µs`)
  }
} finally { fs.rmSync(base, { recursive: true, force: true }) }
