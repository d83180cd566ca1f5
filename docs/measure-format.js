#!/usr/bin/env node
// The measurements behind the format's tunable constants (docs/FORMAT.md §11
// "Measured choices"): chunk sizes (CHUNK_MIN/AVG/MAX), the inline threshold
// (INLINE_MAX), the directory page size (PAGE_MIN/PAGE_MAX) and the binary
// encoding against JSON.
//
//   node docs/measure-format.js            (about a minute on 2 cores)
//
// Reads /usr/share/doc, /usr/share/zoneinfo and the .so files under
// /usr/lib/x86_64-linux-gnu (whatever of them exists), generates the rest in
// memory, writes nothing, and prints Markdown tables. The FastCDC loop is
// re-implemented here with its parameters as arguments (same GEAR table and
// masks as client-js/src/format/cdc.js, checked against it at start), and the
// directory measurements use buildDirectory from client-js/src/format/dirpage.js.
import fs from 'node:fs/promises'
import { readFileSync } from 'node:fs'
import path from 'node:path'
import os from 'node:os'
import zlib from 'node:zlib'
import { createHash, createCipheriv } from 'node:crypto'
import { GEAR } from '../client-js/src/format/gear.js'
import { packBlob } from '../client-js/src/format/codec-node.js'
import { chunkLengths } from '../client-js/src/format/cdc.js'
import { buildDirectory, encodeEntry, encodeLeaf, encodeIndex, decodeDirPage } from '../client-js/src/format/dirpage.js'
import { groupByContent, hashCut } from '../client-js/src/format/group.js'
import { checkName } from '../client-js/src/format/entry.js'
import { compareBytes, utf8, Writer } from '../client-js/src/format/bytes.js'
import {
  CHUNK_AVG, INLINE_MAX, INLINE_MAX_V2, PAGE_MIN, PAGE_CUT_BITS, MAX_PAGE_ENTRIES, MAX_INDEX_FANOUT, MAX_BLOB,
  MAX_DIRECT_CHUNKS, HASH_LEN
} from '../client-js/src/format/limits.js'

const T_START = performance.now()
const KiB = 1024; const MiB = 1024 * 1024
const sha = b => createHash('sha256').update(b).digest('hex')
const fmt = (n, d = 1) => Number.isFinite(n) ? n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d }) : String(n)
const int = n => Math.round(n).toLocaleString('en-US')
const pct = (a, b) => b ? fmt(100 * a / b) + '%' : '-'
const kib = n => fmt(n / KiB) + ' KiB'
const quantile = (sorted, q) => sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] : 0
const log = (...a) => console.log(...a)
const table = (head, rows) => {
  log('| ' + head.join(' | ') + ' |'); log('|' + head.map(() => '---').join('|') + '|')
  for (const r of rows) log('| ' + r.join(' | ') + ' |')
  log('')
}
const elapsed = () => ((performance.now() - T_START) / 1000).toFixed(1) + ' s'

// ---- FastCDC with parameters (client-js/src/format/cdc.js, generalised) ----

/** min = avg/4, max = 4·avg, normalized chunking level 2: masks of log2(avg)±2 top bits. */
function chunker (avg) {
  const min = avg / 4; const max = avg * 4; const bits = Math.log2(avg)
  const maskS = (~0 << (32 - (bits + 2))) >>> 0
  const maskL = (~0 << (32 - (bits - 2))) >>> 0
  function scan (buf, start, end) {
    const normal = Math.min(end, start + avg)
    let fp = 0
    let i = start + min
    for (; i < normal; i++) {
      fp = ((fp << 1) + GEAR[buf[i]]) >>> 0
      if ((fp & maskS) === 0) return i + 1 - start
    }
    for (; i < end; i++) {
      fp = ((fp << 1) + GEAR[buf[i]]) >>> 0
      if ((fp & maskL) === 0) return i + 1 - start
    }
    return end - start
  }
  return {
    avg, min, max,
    lengths (buf) {
      const out = []
      for (let pos = 0; pos < buf.length;) {
        const n = buf.length - pos
        const len = n <= min ? n : scan(buf, pos, Math.min(buf.length, pos + max))
        out.push(len); pos += len
      }
      return out
    }
  }
}

const CHUNKERS = [16 * KiB, 64 * KiB, 256 * KiB].map(chunker)

/** Deterministic pseudo-random bytes (AES-256-CTR keystream of a fixed key). */
function prng (n, seed) {
  const c = createCipheriv('aes-256-ctr', createHash('sha256').update(seed).digest(), Buffer.alloc(16))
  return c.update(Buffer.alloc(n))
}

// ---- corpus scanning ----------------------------------------------------------

const strictUtf8 = new TextDecoder('utf-8', { fatal: true })

/** Walk a directory like builder/scan.js (lstat, skip what cannot be published). */
async function scanTree (root, onFile) {
  async function visit (abs, name) {
    let st
    try { st = await fs.lstat(abs) } catch { return null }
    if (st.isSymbolicLink()) {
      const target = await fs.readlink(abs).catch(() => null)
      if (!target || target.startsWith('/')) return null
      return { name, type: 'symlink', target, mtime: Math.floor(st.mtimeMs) }
    }
    if (st.isDirectory()) {
      let raw = []
      try { raw = await fs.readdir(abs, { encoding: 'buffer' }) } catch { return null }
      const kids = []
      for (const nb of raw) {
        let n
        try { n = strictUtf8.decode(nb) } catch { continue }
        if (!checkName(n)) continue
        const k = await visit(path.join(abs, n), n)
        if (k) kids.push(k)
      }
      return { name, type: 'dir', mtime: Math.floor(st.mtimeMs), children: kids }
    }
    if (!st.isFile()) return null
    const f = { name, type: 'file', size: st.size, mtime: Math.floor(st.mtimeMs), exec: (st.mode & 0o111) !== 0, ino: st.ino }
    let data
    try { data = await fs.readFile(abs) } catch { return null }
    f.size = data.length
    f.data = new Uint8Array(data) // kept: (b2) inlines files, (e) deflates them
    // chunk refs as the builder would make them (current limits)
    f.hash = sha(data)
    if (f.size > INLINE_MAX) {
      let off = 0
      f.chunks = chunkLengths(data).map(len => {
        const piece = data.subarray(off, off + len); off += len
        // stored: its bytes as version 2 stores them (packBlob), for (b2)
        return { size: len, hash: sha(piece), stored: packBlob(piece).stored.length }
      })
    }
    if (onFile) await onFile(f, data)
    return f
  }
  return visit(root, '')
}

function * walkDirs (node) {
  if (node.type !== 'dir') return
  yield node
  for (const k of node.children) yield * walkDirs(k)
}
function * walkFiles (node) {
  if (node.type === 'file') yield node
  if (node.type === 'dir') for (const k of node.children) yield * walkFiles(k)
}

// ---- (a) chunk sizes -------------------------------------------------------------

function newStats () { return { files: 0, bytes: 0, chunks: 0, sizes: [], unique: new Map(), ms: 0 } }

function addChunks (st, ch, buf) {
  const t = performance.now()
  const lens = ch.lengths(buf)
  st.ms += performance.now() - t
  st.files++; st.bytes += buf.length
  let off = 0
  for (const len of lens) {
    st.chunks++; st.sizes.push(len)
    const h = sha(buf.subarray(off, off + len))
    st.unique.set(h, len)
    off += len
  }
  return lens
}

function chunkRow (label, ch, st) {
  const sizes = Float64Array.from(st.sizes).sort()
  const uniqueBytes = [...st.unique.values()].reduce((a, b) => a + b, 0)
  return [label, `${ch.min / KiB}/${ch.avg / KiB}/${ch.max / KiB}`, int(st.chunks),
    kib(sizes[0] ?? 0), kib(quantile(sizes, 0.5)), kib(st.bytes / st.chunks), kib(sizes[sizes.length - 1] ?? 0),
    fmt(st.chunks / (st.bytes / MiB), 2), fmt(st.bytes / uniqueBytes, 3), fmt(st.bytes / MiB / (st.ms / 1000), 0)]
}
const CHUNK_HEAD = ['corpus', 'min/avg/max KiB', 'chunks', 'smallest', 'median', 'mean', 'largest', 'blobs per MiB', 'dedup (bytes/unique)', 'chunking MB/s']

/** Chunks of `after` that `before` does not have (what a mirror must fetch after the edit). */
function editCost (ch, before, after) {
  const set = new Set()
  let off = 0
  for (const len of ch.lengths(before)) { set.add(sha(before.subarray(off, off + len))); off += len }
  let changed = 0; let changedBytes = 0; let total = 0
  off = 0
  for (const len of ch.lengths(after)) {
    total++
    if (!set.has(sha(after.subarray(off, off + len)))) { changed++; changedBytes += len }
    off += len
  }
  return { changed, changedBytes, total }
}

async function measureChunks () {
  log('## (a) Chunk sizes\n')
  // sanity: the generalised loop is the format's chunker at the current parameters
  const ref = CHUNKERS.find(c => c.avg === CHUNK_AVG)
  const probe = prng(6 * MiB, 'probe')
  const same = ref && JSON.stringify(ref.lengths(probe)) === JSON.stringify(chunkLengths(probe))
  log(`The loop below reproduces client-js/src/format/cdc.js at CHUNK_AVG=${CHUNK_AVG / KiB} KiB: ${same ? 'yes (identical cut points on 6 MiB of test data)' : 'NO'}.\n`)

  const rows = []
  // /usr/share/doc: every file above INLINE_MAX, each chunked on its own as the builder does
  const doc = CHUNKERS.map(newStats)
  const docTree = await scanTree('/usr/share/doc', (f, data) => {
    if (data.length <= INLINE_MAX) return
    CHUNKERS.forEach((ch, i) => addChunks(doc[i], ch, data))
  }).catch(() => null)
  if (docTree) CHUNKERS.forEach((ch, i) => rows.push(chunkRow(`/usr/share/doc (${doc[i].files} files > ${INLINE_MAX} B, ${fmt(doc[i].bytes / MiB)} MiB)`, ch, doc[i])))

  // .so files
  const soList = []
  async function findSo (dir) {
    let ents
    try { ents = await fs.readdir(dir, { withFileTypes: true }) } catch { return }
    for (const e of ents.sort((a, b) => a.name < b.name ? -1 : 1)) {
      const p = path.join(dir, e.name)
      if (e.isDirectory()) await findSo(p)
      else if (e.isFile() && /\.so(\.|$)/.test(e.name)) soList.push(p)
    }
  }
  await findSo('/usr/lib/x86_64-linux-gnu')
  const so = CHUNKERS.map(newStats)
  const inodes = new Set(); let soBytes = 0; let uniqueInodeBytes = 0
  const SO_CAP = 1024 * MiB
  let largestSo = null
  for (const p of soList) {
    if (soBytes >= SO_CAP) break
    const st = await fs.stat(p)
    const data = await fs.readFile(p)
    if (data.length <= INLINE_MAX) continue // inlined by the builder, never chunked
    soBytes += data.length
    if (!inodes.has(st.ino)) { inodes.add(st.ino); uniqueInodeBytes += data.length }
    if (!largestSo || data.length > largestSo.size) largestSo = { path: p, size: data.length }
    CHUNKERS.forEach((ch, i) => addChunks(so[i], ch, data))
  }
  if (soList.length) {
    CHUNKERS.forEach((ch, i) => rows.push(chunkRow(`.so files (${so[i].files}, ${fmt(so[i].bytes / MiB)} MiB)`, ch, so[i])))
  }

  // a generated 50 MiB file
  const gen = prng(50 * MiB, 'measure-format 50 MiB')
  const g = CHUNKERS.map(newStats)
  CHUNKERS.forEach((ch, i) => addChunks(g[i], ch, gen))
  CHUNKERS.forEach((ch, i) => rows.push(chunkRow('generated 50 MiB (AES-CTR)', ch, g[i])))
  table(CHUNK_HEAD, rows)
  if (soList.length) {
    log(`Files up to INLINE_MAX are left out (the builder inlines them). The .so set counts hard links as the separate files a build sees: ${so[0].files} files, ${fmt(soBytes / MiB)} MiB, of which ${fmt(uniqueInodeBytes / MiB)} MiB are distinct inodes ` +
      `(plain whole-file dedup would give ${fmt(soBytes / uniqueInodeBytes, 3)}).\n`)
  }

  // 1-byte insert in the middle
  const editRows = []
  const insert = (buf, at) => Buffer.concat([buf.subarray(0, at), Buffer.of(0x42), buf.subarray(at)])
  const cases = [['generated 50 MiB', gen]]
  if (largestSo) cases.push([`${path.basename(largestSo.path)} (${fmt(largestSo.size / MiB)} MiB)`, await fs.readFile(largestSo.path)])
  for (const [label, buf] of cases) {
    const after = insert(buf, buf.length >> 1)
    for (const ch of CHUNKERS) {
      const r = editCost(ch, buf, after)
      editRows.push([label, `${ch.avg / KiB} KiB`, int(r.total), int(r.changed), kib(r.changedBytes)])
    }
  }
  log('One byte inserted in the middle of a file: chunks of the new version a mirror does not have yet.\n')
  table(['file', 'avg', 'chunks after', 'new chunks', 'new bytes'], editRows)
  return docTree
}

// ---- (b) inline threshold ------------------------------------------------------

const uintLen = v => { let n = 1; while (v >= 0x80) { v = Math.floor(v / 0x80); n++ } return n }
const sintLen = v => uintLen(v >= 0 ? v * 2 : -v * 2 - 1)

/** Encoded bytes of one entry (FORMAT.md §4.2) when files up to `inlineMax` are inlined. */
function entrySize (e, inlineMax, dirSize = 100) {
  const name = utf8.encode(e.name).length
  let n = uintLen(name) + name + 2 + sintLen(e.mtime)
  if (e.type === 'file') {
    n += uintLen(e.size)
    if (e.size <= inlineMax) return n + e.size
    const chunks = e.chunks ?? [{ size: e.size }]
    if (chunks.length > MAX_DIRECT_CHUNKS) return n + 1 + HASH_LEN + uintLen(4096)
    return n + uintLen(chunks.length) + chunks.reduce((s, c) => s + HASH_LEN + uintLen(c.size), 0)
  }
  if (e.type === 'dir') return n + uintLen(e.children.length) + HASH_LEN + uintLen(dirSize)
  const t = utf8.encode(e.target).length
  return n + uintLen(t) + t
}

function measureInline (trees) {
  log('## (b) Inline threshold\n')
  const buckets = [[0, 0], [1, 512], [513, KiB], [KiB + 1, 2 * KiB], [2 * KiB + 1, 4 * KiB], [4 * KiB + 1, 8 * KiB], [8 * KiB + 1, 64 * KiB], [64 * KiB + 1, 256 * KiB], [256 * KiB + 1, MiB], [MiB + 1, Infinity]]
  const bl = ([a, b]) => b === 0 ? '0' : b === Infinity ? `> ${a - 1 >= MiB ? (a - 1) / MiB + ' MiB' : a - 1}` : `${a >= KiB ? fmt((a - 1) / KiB, 1) + 'K' : a}–${b >= KiB ? b / KiB + 'K' : b}`
  const histRows = buckets.map(b => [bl(b)])
  for (const [, tree] of trees) {
    const files = [...walkFiles(tree)]
    const total = files.reduce((s, f) => s + f.size, 0)
    buckets.forEach(([a, b], i) => {
      const inB = files.filter(f => f.size >= a && f.size <= b)
      histRows[i].push(`${int(inB.length)} (${pct(inB.length, files.length)})`, pct(inB.reduce((s, f) => s + f.size, 0), total))
    })
  }
  log('File sizes:\n')
  table(['size (bytes)', ...trees.flatMap(([n]) => [`${n} files`, `${n} bytes`])], histRows)

  const rows = []
  for (const [label, tree] of trees) {
    const files = [...walkFiles(tree)]
    const dirs = [...walkDirs(tree)]
    const totalBytes = files.reduce((s, f) => s + f.size, 0)
    let base
    for (const T of [0, KiB, 2 * KiB, 4 * KiB, 8 * KiB]) {
      const inl = files.filter(f => f.size <= T)
      const dirBytes = dirs.map(d => 4 + uintLen(d.children.length) + d.children.reduce((s, e) => s + entrySize(e, T), 0)).sort((a, b) => a - b)
      const dirTotal = dirBytes.reduce((a, b) => a + b, 0)
      base ??= dirTotal
      // reading every file once, cold: one request per directory page and per distinct chunk
      const chunkBlobs = new Map()
      for (const f of files) if (f.size > T) for (const c of f.chunks ?? [{ hash: f.hash, size: f.size }]) chunkBlobs.set(c.hash, c.size)
      const requests = dirs.length + chunkBlobs.size
      const fetched = dirTotal + [...chunkBlobs.values()].reduce((a, b) => a + b, 0)
      const paged = dirBytes.filter(b => b >= PAGE_MIN).length
      rows.push([label, T ? kib(T) : 'none', pct(inl.length, files.length), pct(inl.reduce((s, f) => s + f.size, 0), totalBytes),
        fmt(dirTotal / KiB, 0) + ' KiB', '+' + pct(dirTotal - base, base), kib(quantile(dirBytes, 0.5)), kib(quantile(dirBytes, 0.9)), kib(dirBytes.at(-1)), String(paged),
        int(requests), fmt(fetched / MiB, 2) + ' MiB'])
    }
  }
  log('Inlining at threshold T (files ≤ T live in their directory page). "requests" and "fetched" are what reading every file once costs (one request per directory and per distinct chunk blob); "paged" counts directories whose page would pass PAGE_MIN and be split.\n')
  table(['tree', 'T', 'files inlined', 'bytes inlined', 'directory bytes', 'dir growth vs none', 'dir p50', 'dir p90', 'dir max', 'paged', 'requests', 'fetched'], rows)
}

// ---- (b2) inline threshold, version 2: pages and blobs stored compressed -----

/**
 * Version 2 stores directory pages and chunks deflated (FORMAT.md §12.6), so a
 * byte carried inline costs its compressed size in the page, and a small file
 * as its own blob costs a request. The same trees as (b), each directory's
 * entries encoded for version 2 and packed as one page (packBlob), each chunk
 * of a file over T packed as the builder packs it.
 */
function measureInlineV2 (trees) {
  log('## (b2) Inline threshold, version 2 (compressed pages and blobs)\n')
  const rows = []
  const pageOf = (d, T) => {
    const parts = d.children.map(e => {
      if (e.type === 'dir') return encodeEntry({ ...e, size: e.children.length, dir: { hash: '0'.repeat(64), size: 100 } }, { version: 2 })
      if (e.type !== 'file') return encodeEntry(e, { version: 2 })
      if (e.size <= T) {
        // kind 1 as entry.js writes it (encodeEntry refuses more than INLINE_MAX_V2, which T may pass)
        const w = new Writer(64 + e.size)
        w.lbytes(utf8.encode(e.name)); w.byte(1); w.byte(e.exec ? 1 : 0); w.sint(e.mtime); w.uint(e.size); w.bytes(e.data)
        return w.result()
      }
      // T ≥ INLINE_MAX: every file over T was chunked by scanTree
      const chunks = e.chunks.map(c => ({ hash: c.hash, size: c.size, storedSize: c.stored, codec: c.stored < c.size ? 'deflate-raw' : 'none' }))
      const body = chunks.length > MAX_DIRECT_CHUNKS
        ? { index: { hash: e.hash, size: 4096, levels: 1 }, lead: chunks[0] }
        : { chunks }
      return encodeEntry({ ...e, sha256: e.hash, ...body }, { version: 2 })
    })
    // magic and count (5-7 bytes), then the entries
    return packBlob(Buffer.concat([Buffer.alloc(6), ...parts])).stored.length
  }
  for (const [label, tree] of trees) {
    const files = [...walkFiles(tree)]
    const dirs = [...walkDirs(tree)]
    for (const T of [4 * KiB, 8 * KiB, 16 * KiB, 32 * KiB, 64 * KiB]) {
      const pageStored = dirs.map(d => pageOf(d, T)).sort((a, b) => a - b)
      const pageTotal = pageStored.reduce((a, b) => a + b, 0)
      const blobs = new Map()
      for (const f of files) {
        if (f.size <= T) continue
        for (const c of f.chunks) blobs.set(c.hash, c.stored)
      }
      const blobTotal = [...blobs.values()].reduce((a, b) => a + b, 0)
      rows.push([label, kib(T), pct(files.filter(f => f.size <= T).length, files.length), int(blobs.size),
        int(dirs.length + blobs.size), fmt((pageTotal + blobTotal) / MiB, 2) + ' MiB', fmt(pageTotal / KiB, 0) + ' KiB',
        kib(quantile(pageStored, 0.5)), kib(quantile(pageStored, 0.9)), kib(pageStored.at(-1))])
    }
  }
  log('Inlining at T, version 2: every directory one page (the builder cuts past PAGE_MIN; "page max" is the whole largest directory), deflated as the builder stores it; every chunk of a file over T deflated when that pays. "requests" and "stored" are what reading every file once costs (one request per directory and per distinct blob), and what a mirror stores; "page" columns are the compressed directory pages a cold lookup fetches.\n')
  table(['tree', 'T', 'files inlined', 'file blobs', 'requests', 'stored', 'pages stored', 'page p50', 'page p90', 'page max'], rows)
}

// ---- (c) directory pages: 1,000,000 entries -----------------------------------

// the page-cut hash of dirpage.js (FNV-1a of the name), for the re-implementation below
function fnv1a (bytes) {
  let h = 0x811c9dc5
  for (let i = 0; i < bytes.length; i++) h = Math.imul(h ^ bytes[i], 0x01000193)
  return h >>> 0
}

/** buildDirectory of dirpage.js with PAGE_MIN/PAGE_MAX as parameters, on pre-encoded sorted items. */
async function buildDirP (items, put, pageMin, pageMax) {
  const leaves = groupByContent(items, {
    size: t => t.bytes.length, cut: t => fnv1a(t.nameBytes) >>> (32 - PAGE_CUT_BITS) === 0, min: pageMin, max: pageMax, maxCount: MAX_PAGE_ENTRIES
  })
  let level = await Promise.all(leaves.map(async page => ({ firstName: page[0].name, entries: page.length, ...(await put(encodeLeaf(page.map(t => t.bytes)))) })))
  let depth = 1
  for (; level.length > 1; depth++) {
    const groups = groupByContent(level, { size: c => utf8.encode(c.firstName).length + HASH_LEN + 16, cut: c => hashCut(c.hash, 8), min: 0, max: MAX_BLOB - 64, maxCount: MAX_INDEX_FANOUT })
    const d = depth
    level = await Promise.all(groups.map(async g => ({ firstName: g[0].firstName, entries: g.reduce((n, c) => n + c.entries, 0), ...(await put(encodeIndex(d, g))) })))
  }
  return { hash: level[0].hash, size: level[0].size, leaves: leaves.length, levels: depth - 1 }
}

/** Index levels above the leaves of a stored directory. */
function levelsOf (blobs, ref) {
  const page = decodeDirPage(blobs.get(ref.hash))
  return page.kind === 'leaf' ? 0 : page.level
}

function store () {
  const blobs = new Map()
  return { blobs, put: async b => { const h = sha(b); blobs.set(h, b); return { hash: h, size: b.length } } }
}

/** A verified lookup as a reader does it: fetch, hash-check, decode, descend. */
function lookup (blobs, ref, nameBytes) {
  let blobsFetched = 0; let bytes = 0
  for (;;) {
    const b = blobs.get(ref.hash)
    if (sha(b) !== ref.hash) throw new Error('hash')
    blobsFetched++; bytes += b.length
    const page = decodeDirPage(b)
    if (page.kind === 'leaf') {
      const found = page.entries.some(e => compareBytes(e.nameBytes, nameBytes) === 0)
      return { blobsFetched, bytes, found }
    }
    const cs = page.children
    if (compareBytes(nameBytes, cs[0].firstNameBytes) < 0) return { blobsFetched, bytes, found: false }
    let i = cs.length - 1
    while (compareBytes(cs[i].firstNameBytes, nameBytes) > 0) i--
    ref = cs[i]
  }
}

function lookupStats (blobs, root, names) {
  let n = 0; let maxBlobs = 0; let sumBlobs = 0; let maxBytes = 0; let sumBytes = 0; let found = 0
  for (const name of names) {
    const r = lookup(blobs, root, utf8.encode(name))
    n++; sumBlobs += r.blobsFetched; sumBytes += r.bytes; found += r.found
    maxBlobs = Math.max(maxBlobs, r.blobsFetched); maxBytes = Math.max(maxBytes, r.bytes)
  }
  return { avgBlobs: sumBlobs / n, maxBlobs, avgBytes: sumBytes / n, maxBytes, found }
}

async function measureBigDir () {
  log('## (c) Directory pages: one directory of 1,000,000 entries\n')
  const N = 1_000_000
  const name = i => 'file-' + String(i).padStart(7, '0')
  const probes = []
  for (let k = 0; k < 1000; k++) probes.push(name((k * 7919 + 13) % N))
  const absent = []
  for (let k = 0; k < 200; k++) absent.push(name((k * 4999) % N) + (k % 2 ? '.x' : '-'))
  absent.push('a', 'zzz')
  const variants = [
    ['inline, 0 bytes', i => ({ name: name(i), type: 'file', size: 0, mtime: 1700000000000 + i, exec: false, inline: new Uint8Array(0) }), true],
    ['one chunk ref', i => ({ name: name(i), type: 'file', size: 100000 + i % 1000, mtime: 1700000000000 + i, exec: false, chunks: [{ hash: sha(name(i)), size: 100000 + i % 1000 }] }), false]
  ]
  const rows = []; const sweep = []
  for (const [label, make, sweepIt] of variants) {
    let t = performance.now()
    const entries = new Array(N)
    for (let i = 0; i < N; i++) entries[i] = make(i)
    const s = store()
    const root = await buildDirectory(entries, s.put)
    const buildMs = performance.now() - t
    const sizes = [...s.blobs.values()].map(b => ({ len: b.length, kind: b[2] === 0x44 ? 'leaf' : 'index' }))
    const leaves = sizes.filter(x => x.kind === 'leaf').map(x => x.len).sort((a, b) => a - b)
    const total = sizes.reduce((a, x) => a + x.len, 0)
    t = performance.now()
    const hit = lookupStats(s.blobs, root, probes)
    const miss = lookupStats(s.blobs, root, absent)
    const lookMs = (performance.now() - t) / (probes.length + absent.length)
    if (hit.found !== probes.length || miss.found !== 0) throw new Error('lookup wrong')
    rows.push([label, fmt(total / MiB, 1) + ' MiB', int(s.blobs.size), `${kib(leaves[0])} / ${kib(total / s.blobs.size)} / ${kib(leaves.at(-1))}`,
      kib(root.size), `${fmt(hit.avgBlobs, 2)} (max ${hit.maxBlobs})`, `${kib(hit.avgBytes)} (max ${kib(Math.max(hit.maxBytes, miss.maxBytes))})`,
      `${fmt(miss.avgBlobs, 2)}`, fmt(buildMs / 1000, 1) + ' s', fmt(lookMs, 2) + ' ms'])

    entries.length = 0
    if (!sweepIt) continue
    // PAGE_MIN sweep on the same entries (pre-encoded once), and the cost of one insert
    const items = []
    for (let i = 0; i < N; i++) { const e = make(i); items.push({ name: e.name, nameBytes: utf8.encode(e.name), bytes: encodeEntry(e) }) }
    items.sort((a, b) => compareBytes(a.nameBytes, b.nameBytes))
    const extra = make(N / 2); extra.name = name(N / 2) + '-new'
    const extraItem = { name: extra.name, nameBytes: utf8.encode(extra.name), bytes: encodeEntry(extra) }
    const at = items.findIndex(x => compareBytes(x.nameBytes, extraItem.nameBytes) > 0)
    for (const pm of [16 * KiB, 32 * KiB, 64 * KiB, PAGE_MIN]) {
      let a = s; let r = { ...root, leaves: leaves.length, levels: levelsOf(s.blobs, root) }
      if (pm !== PAGE_MIN) {
        a = store()
        r = await buildDirP(items, a.put, pm, 4 * pm)
      } else {
        // the re-implementation must give buildDirectory's root at the current parameters
        const check = await buildDirP(items, store().put, PAGE_MIN, 4 * PAGE_MIN)
        if (check.hash !== root.hash) throw new Error('re-implementation differs from buildDirectory')
      }
      const st = pm === PAGE_MIN ? hit : lookupStats(a.blobs, r, probes)
      const b = store()
      await buildDirP([...items.slice(0, at), extraItem, ...items.slice(at)], b.put, pm, 4 * pm)
      let changed = 0; let changedBytes = 0
      for (const [h, v] of b.blobs) if (!a.blobs.has(h)) { changed++; changedBytes += v.length }
      sweep.push([label, kib(pm) + (pm === PAGE_MIN ? ' (current)' : ''), int(r.leaves), String(r.levels), kib(r.size),
        fmt(st.avgBlobs, 2), kib(st.avgBytes), kib(st.maxBytes), `${changed} (${kib(changedBytes)})`])
    }
  }
  log(`Built with buildDirectory (client-js/src/format/dirpage.js, PAGE_MIN ${kib(PAGE_MIN)}), put() storing into a Map; names 'file-%07d'. A lookup fetches, hash-checks and decodes each page on the way down (${int(1000)} present names, ${int(202)} absent ones).\n`)
  table(['entries are', 'total', 'blobs', 'page min / mean / max', 'top page', 'blobs per lookup', 'bytes per lookup', 'blobs per miss', 'build', 'lookup CPU'], rows)
  log('The inline entries cut with other PAGE_MIN values (PAGE_MAX = 4 × PAGE_MIN; same cut rule; the re-implementation is checked to give buildDirectory\'s root at the current values). "after 1 insert": blobs (and bytes) a mirror must fetch after one entry is added in the middle.\n')
  table(['entries are', 'PAGE_MIN', 'leaves', 'index levels', 'top page', 'blobs per lookup', 'bytes per lookup', 'max bytes per lookup', 'after 1 insert'], sweep)
}

// ---- (d) encoding: binary vs JSON ----------------------------------------------

async function measureEncoding (tree) {
  log('## (d) Encoding: binary pages vs JSON\n')
  const s = store()
  let bin = 0; let json = 0; let binGz = 0; let jsonGz = 0; let dirs = 0; let checked = 0
  const ratios = []
  async function enc (node) {
    const entries = []
    const jsonEntries = []
    for (const k of node.children) {
      let e
      if (k.type === 'file') {
        e = { name: k.name, type: 'file', size: k.size, mtime: k.mtime, exec: k.exec }
        if (k.size <= INLINE_MAX) e.inline = k.data
        else if (k.chunks.length <= MAX_DIRECT_CHUNKS) e.chunks = k.chunks.map(c => ({ hash: c.hash, size: c.size }))
        else e.index = { hash: sha(k.name), size: 4096, levels: 1 } // (none in the corpora measured)
      } else if (k.type === 'dir') {
        const ref = await enc(k)
        e = { name: k.name, type: 'dir', size: ref.entries, mtime: k.mtime, dir: { hash: ref.hash, size: ref.size } }
      } else {
        e = { name: k.name, type: 'symlink', target: k.target, mtime: k.mtime, size: 0 }
      }
      entries.push(e)
      const j = { name: e.name, type: e.type, size: e.type === 'symlink' ? undefined : e.size, mtime: e.mtime }
      if (e.exec) j.exec = true
      if (e.inline) j.data = Buffer.from(e.inline).toString('base64')
      if (e.chunks) j.chunks = e.chunks
      if (e.index) j.index = e.index
      if (e.dir) j.dir = e.dir
      if (e.target) j.target = e.target
      jsonEntries.push(j)
      // the size formula of (b) against the real encoder
      if (entrySize(k, INLINE_MAX, e.dir?.size) !== encodeEntry(e).length && !e.index) throw new Error('entrySize formula wrong for ' + k.name)
      checked++
    }
    const before = s.blobs.size
    const ref = await buildDirectory(entries, s.put)
    // the directory's own blobs: the pages just added (none when an identical directory was stored before)
    const own = [...s.blobs.entries()].slice(before)
    const b = own.reduce((n, [, v]) => n + v.length, 0) || ref.size
    const jtext = Buffer.from(JSON.stringify(jsonEntries))
    bin += b; json += jtext.length; dirs++
    binGz += own.reduce((n, [, v]) => n + zlib.gzipSync(v).length, 0) || zlib.gzipSync(s.blobs.get(ref.hash)).length
    jsonGz += zlib.gzipSync(jtext).length
    if (b > 256) ratios.push(jtext.length / b)
    return ref
  }
  await enc(tree)
  ratios.sort((a, b) => a - b)
  table(['/usr/share/doc', 'directories', 'binary pages', 'JSON + base64', 'JSON / binary', 'median ratio (dirs > 256 B)', 'gzip: binary', 'gzip: JSON'],
    [['', int(dirs), kib(bin), kib(json), fmt(json / bin, 2), fmt(quantile(ratios, 0.5), 2), kib(binGz), kib(jsonGz)]])
  log(`(entrySize() of (b) matched encodeEntry() on all ${int(checked)} entries.)\n`)
}

// ---- (e) deflate level --------------------------------------------------------------

/**
 * The level a builder deflates at (DEFLATE_LEVEL, FORMAT.md §12.6): the bytes
 * kept and the speed of one core at each level, over what a version-2 build
 * deflates: the files of /usr/share/doc over INLINE_MAX_V2 and the node
 * binary, in 256 KiB pieces, each decided as packBlob decides (the 8 KiB
 * sample at level 1 first, stored raw unless 1/32 is saved).
 */
function measureDeflateLevels (tree) {
  log('## (e) Deflate level\n')
  const pieces = []
  for (const f of walkFiles(tree)) if (f.size > INLINE_MAX_V2) for (let o = 0; o < f.data.length; o += 256 * KiB) pieces.push(f.data.subarray(o, o + 256 * KiB))
  const bin = readFileSync(process.execPath)
  for (let o = 0; o < bin.length; o += 256 * KiB) pieces.push(bin.subarray(o, o + 256 * KiB))
  const total = pieces.reduce((a, b) => a + b.length, 0)
  const pays = (n, z) => n - z >= 64 && (n - z) * 32 >= n
  const rows = []
  for (const level of [6, 1, 2, 3, 4, 6, 9]) { // 6 twice: the first run warms the page cache and the allocator
    const t = performance.now(); let stored = 0
    for (const p of pieces) {
      if (p.length >= 32 * KiB && !pays(8 * KiB, zlib.deflateRawSync(p.subarray(0, 8 * KiB), { level: 1 }).length)) { stored += p.length; continue }
      const z = zlib.deflateRawSync(p, { level }); stored += pays(p.length, z.length) ? z.length : p.length
    }
    const ms = performance.now() - t
    if (rows.length === 0) { rows.push(null); continue }
    rows.push([String(level), fmt(stored / MiB) + ' MiB', pct(stored, total), fmt(total / MiB / (ms / 1000), 0) + ' MiB/s'])
  }
  log(`${int(pieces.length)} pieces, ${fmt(total / MiB)} MiB (files of /usr/share/doc over ${INLINE_MAX_V2 / KiB} KiB and ${process.execPath}); one core, zlib ${process.versions.zlib}.\n`)
  table(['level', 'stored', 'of the input', 'speed'], rows.slice(1))
}

// ---- main ------------------------------------------------------------------------

log(`# rotree format measurements\n\n\`node docs/measure-format.js\` on ${os.cpus().length} × ${os.cpus()[0]?.model?.trim() ?? 'cpu'}, Node ${process.version}, ${new Date().toISOString().slice(0, 10)}\n`)
const docTree = await measureChunks()
log(`(${elapsed()})\n`)
const zone = await scanTree('/usr/share/zoneinfo').catch(() => null)
const trees = [['/usr/share/doc', docTree], ['/usr/share/zoneinfo', zone]].filter(([, t]) => t)
if (trees.length) measureInline(trees)
if (trees.length) measureInlineV2(trees)
log(`(${elapsed()})\n`)
await measureBigDir()
log(`(${elapsed()})\n`)
if (docTree) await measureEncoding(docTree)
if (docTree) measureDeflateLevels(docTree)
log(`Total ${elapsed()}.`)
