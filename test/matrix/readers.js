// The readers of the matrix. Each runs one read of `path` through its own
// front door and reports { ok, code, out, leftovers }: whether it succeeded,
// the stable error code (or HTTP status) it answered with, the bytes it
// handed out (to the caller, stdout, a file or an HTTP body), and any files
// it left behind in its scratch folder (and may add the error's `message`,
// shown when a cell fails, and `top`, the code of the error it was handed
// before any mirror's own was looked for: a reader the keyring of a private
// tree does not name is told ROTREE_NO_ACCESS, not that every mirror failed).
// A reader whose state is not a folder (the browser's IndexedDB) opens
// `seenAddr` first when it is given, where the others find that root already
// accepted in `stateDir`.
//
// A private tree (FORMAT.md §12.8) is read with `identity`, the text of an
// age identity file, which the CLI readers are given as `identityFile`
// (--identity FILE); null: none. `rotree pull` and `rotree fsck` copy and
// repair it without keys (`keyless`); the pulled or repaired folder is then
// read with the identity. `rotree fsck --repair-from` is a reader of the
// private rows only (`only`): it repairs the blob a lie is about (`damage`),
// deleted from a copy of a mirror folder (`folder`).
import fs from 'node:fs/promises'
import path from 'node:path'
import { spawn } from 'node:child_process'
import http from 'node:http'
import { openTree } from 'rotree-client'
import { gateway, statusOf } from '../../gateway/index.js'
import { serve } from '../helpers/fixtures.js'
import { checkPublished } from '../helpers/check-tree.js'
import { browserReader } from './browser-reader.js'
import { walkLocal } from '../../lib/published/index.js'
import { fsinfoVersion, decodeFsinfoV2, keylessRoot } from 'rotree-client/format'
import { createHash } from 'node:crypto'

const BIN = new URL('../../bin/rotree.js', import.meta.url).pathname

export function runCli (args, env = {}) {
  return new Promise(resolve => {
    const p = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
    const out = []; let err = ''
    p.stdout.on('data', b => out.push(b)); p.stderr.on('data', b => { err += b })
    p.on('close', code => resolve({ code, stdout: Buffer.concat(out), stderr: err }))
  })
}

// When every mirror failed the reader says ROTREE_ALL_MIRRORS_FAILED and names
// what each mirror did (docs/TRUST.md rule 4); the matrix reports the lone
// liar's own code, which is what the lie must produce.
const cliTop = stderr => /^rotree: (ROTREE_[A-Z_]+):/.exec(stderr)?.[1] ?? null
const cliCode = stderr => {
  const top = cliTop(stderr)
  if (top !== 'ROTREE_ALL_MIRRORS_FAILED') return top
  return /: (ROTREE_[A-Z_]+) \(/.exec(stderr.slice(stderr.indexOf(':', 8)))?.[1] ?? top
}
export const codeOf = err => err?.code === 'ROTREE_ALL_MIRRORS_FAILED' && err.errors?.length ? err.errors[0].code : err?.code

/**
 * A pulled folder is complete: version 1 through checkPublished; version 2
 * (FORMAT.md §12) by walking every blob its release's root reaches, each
 * present and hashing to its name (walkLocal; a private release's root is,
 * without keys, its manifest and keyring: keylessRoot); its fsinfo.json and
 * trust documents are judged by the fresh reader that then reads the folder.
 */
async function checkPulled (dir, key) {
  const bytes = await fs.readFile(path.join(dir, 'fsinfo.json'))
  if (fsinfoVersion(bytes) !== 2) return checkPublished(dir, key)
  const info = decodeFsinfoV2(bytes)
  await walkLocal(dir, keylessRoot(info.release, info.access))
}

/** Blobs in DIR/h that do not hash to their name: what a keyless copy must never hold. */
async function badBlobs (dir) {
  const bad = []
  for (const n of await fs.readdir(path.join(dir, 'h')).catch(() => [])) {
    const b = await fs.readFile(path.join(dir, 'h', n))
    if (createHash('sha256').update(b).digest('hex') !== n) bad.push(`h/${n} (not its hash)`)
  }
  return bad
}

/** A fresh reader of a folder (served as it is) at the address's fragment, with the row's identity. */
async function readFolder (dir, key, p, identity) {
  const srv = await serve(dir)
  try {
    const tree = await openTree(`${srv.url}#${key}`, { stateDir: null, identity })
    try { return Buffer.from(await tree.readFile(p)) } finally { tree.close() }
  } finally { await srv.close() }
}

const identityArgs = file => file ? ['--identity', file] : []

async function listLeft (dir) { return (await fs.readdir(dir).catch(() => [])).sort() }

export const READERS = [
  {
    id: 'library readFile',
    async run ({ addr, mirrors, stateDir, timeoutS, path: p, identity }) {
      try {
        const tree = await openTree(addr, { mirrors, stateDir, timeoutMs: timeoutS * 1000, identity })
        try { return { ok: true, out: Buffer.from(await tree.readFile(p)) } } finally { tree.close() }
      } catch (err) { return { ok: false, code: codeOf(err), top: err?.code, out: Buffer.alloc(0) } }
    }
  },
  {
    id: 'library stream',
    async run ({ addr, mirrors, stateDir, timeoutS, path: p, identity }) {
      const parts = []
      try {
        const tree = await openTree(addr, { mirrors, stateDir, timeoutMs: timeoutS * 1000, identity })
        try { for await (const b of tree.createReadStream(p)) parts.push(b) } finally { tree.close() }
        return { ok: true, out: Buffer.concat(parts) }
      } catch (err) { return { ok: false, code: codeOf(err), top: err?.code, out: Buffer.concat(parts) } }
    }
  },
  {
    id: 'library, lent read',
    // readRange({ lend: true }) with a small memory cache, so the file streams
    // and its chunks land in pooled buffers (client-js/src/fetch/buffer-pool.js);
    // each piece is copied and given back at once, so later chunks, good or
    // lied about, are read into buffers that earlier pieces came in
    async run ({ addr, mirrors, stateDir, timeoutS, path: p, identity }) {
      const parts = []
      try {
        const tree = await openTree(addr, { mirrors, stateDir, timeoutMs: timeoutS * 1000, cacheBytes: 256 << 10, identity })
        try {
          for await (const b of tree.readRange(p, { lend: true })) { parts.push(Buffer.from(b)); tree.release(b) }
          // the file is ~3 MiB of chunks: a read that did not go through the pool tests nothing here
          if (tree.blobs.pool.stats.made === 0) return { ok: false, code: 'not lent', out: Buffer.concat(parts) }
        } finally { tree.close() }
        return { ok: true, out: Buffer.concat(parts) }
      } catch (err) { return { ok: false, code: codeOf(err), top: err?.code, out: Buffer.concat(parts) } }
    }
  },
  {
    id: 'library, mirrors striped',
    // Many chunks in flight (readAhead 8: the requests a mirror always gets; its
    // window, 2 MiB at first, decides the rest), so the first mirror's window fills and the second
    // carries the rest at the same time (client-js/src/fetch/sched.js): the liar is
    // asked for the first window of the file, the lied-about chunk included,
    // while the honest mirror serves beside it. With an honest mirror the read
    // must also have been split between the two, unless the liar was benched.
    async run ({ addr, mirrors, stateDir, timeoutS, path: p, identity }) {
      const parts = []
      try {
        const tree = await openTree(addr, { mirrors, stateDir, timeoutMs: timeoutS * 1000, concurrency: 32, readAhead: 8, identity })
        try {
          for await (const b of tree.createReadStream(p)) parts.push(b)
          const h = tree.stats.mirrors
          if (mirrors.length > 0 && h.every(m => m.healthy) && !h.every(m => m.requests > 0)) {
            return { ok: false, code: 'not striped', out: Buffer.concat(parts), message: JSON.stringify(h) }
          }
        } finally { tree.close() }
        return { ok: true, out: Buffer.concat(parts) }
      } catch (err) { return { ok: false, code: codeOf(err), top: err?.code, out: Buffer.concat(parts), message: err.message } }
    }
  },
  {
    id: 'rotree cat',
    async run ({ addr, mirrors, stateDir, timeoutS, path: p, identityFile }) {
      const r = await runCli(['cat', addr, p, '--timeout', String(timeoutS), '--state-dir', stateDir, ...identityArgs(identityFile), ...mirrors.flatMap(m => ['--mirror', m])])
      // a failure is one coded line and at most one indented line of what to do (cli/main.js)
      const lines = r.stderr.split('\n').filter(Boolean)
      if (r.code !== 0 && !(lines.length === 1 || (lines.length === 2 && lines[1].startsWith('  ')))) throw new Error(`rotree cat printed ${lines.length} lines on failure:\n${r.stderr}`)
      return { ok: r.code === 0, code: r.code === 0 ? null : cliCode(r.stderr), top: cliTop(r.stderr), out: r.stdout, message: r.stderr.trim() }
    }
  },
  {
    id: 'rotree get',
    async run ({ addr, mirrors, stateDir, timeoutS, path: p, scratch, identityFile }) {
      const dest = path.join(scratch, 'got.bin')
      const r = await runCli(['get', addr, p, '-o', dest, '--timeout', String(timeoutS), '--state-dir', stateDir, ...identityArgs(identityFile), ...mirrors.flatMap(m => ['--mirror', m])])
      const out = await fs.readFile(dest).catch(() => Buffer.alloc(0))
      return { ok: r.code === 0, code: r.code === 0 ? null : cliCode(r.stderr), top: cliTop(r.stderr), out, leftovers: (await listLeft(scratch)).filter(n => n !== 'got.bin' || r.code !== 0), message: r.stderr.trim() }
    }
  },
  {
    id: 'gateway',
    // the gateway answers in HTTP: the lie's codes through statusOf(), or a broken
    // transfer when a later chunk fails after the headers went out (GATEWAY.md).
    // A private tree's identity is the gateway's own (`rotree gateway --identity`
    // hands it over as treeOptions, cli/cmd/gateway.js)
    accepts: (codes, got) => got === 'broken transfer' || codes.some(code => got === `HTTP ${statusOf({ code })}`),
    async run ({ addr, mirrors, stateDir, timeoutS, path: p, identity }) {
      const mw = gateway({ tree: addr, mirrors, stateDir, timeoutMs: timeoutS * 1000, refreshSeconds: 0, ...(identity ? { treeOptions: { identity } } : {}) })
      const server = http.createServer((req, res) => mw(req, res, () => { res.statusCode = 404; res.end() }))
      await new Promise(resolve => server.listen(0, '127.0.0.1', resolve))
      try {
        return await new Promise(resolve => {
          http.get(`http://127.0.0.1:${server.address().port}${p}`, res => {
            const parts = []
            res.on('data', b => parts.push(b))
            const done = complete => {
              const out = res.statusCode === 200 ? Buffer.concat(parts) : Buffer.alloc(0)
              const ok = complete && res.statusCode === 200
              resolve({ ok, code: ok ? null : res.statusCode !== 200 ? `HTTP ${res.statusCode}` : 'broken transfer', out })
            }
            res.on('end', () => done(res.complete))
            res.on('aborted', () => done(false))
            res.on('error', () => done(false))
          }).on('error', () => resolve({ ok: false, code: 'broken transfer', out: Buffer.alloc(0) }))
        })
      } finally {
        server.closeAllConnections(); server.close(); await mw.close()
      }
    }
  },
  {
    id: 'rotree pull',
    keyless: true,
    // the bytes a pull hands out are the folder it publishes: on failure there must be
    // no fsinfo.json in it and no blob that is not what its name says. A private tree is
    // pulled without keys; the pulled folder is then read with the row's identity
    async run ({ addr, mirrors, stateDir, timeoutS, path: p, scratch, identity }) {
      const dir = path.join(scratch, 'mirror')
      const r = await runCli(['pull', addr, dir, '--timeout', String(timeoutS), '--state-dir', stateDir, ...mirrors.flatMap(m => ['--mirror', m])])
      const key = addr.slice(addr.lastIndexOf('#') + 1)
      const leftovers = await badBlobs(dir)
      if (r.code !== 0) {
        if (await fs.stat(path.join(dir, 'fsinfo.json')).catch(() => null)) leftovers.push('fsinfo.json published')
        return { ok: false, code: cliCode(r.stderr), top: cliTop(r.stderr), out: Buffer.alloc(0), leftovers, message: r.stderr.trim() }
      }
      await checkPulled(dir, key)
      try {
        return { ok: true, out: await readFolder(dir, key, p, identity), leftovers }
      } catch (err) { return { ok: false, code: codeOf(err), top: err?.code, out: Buffer.alloc(0), leftovers, message: `pulled, then read: ${err.message}` } }
    }
  },
  {
    id: 'rotree fsck --repair-from',
    keyless: true,
    only: 'private',
    needsTarget: true,
    // a mirror folder that lost the blob the lie is about, repaired from the liar (and the
    // honest mirror beside) without keys; then read with the row's identity. What it hands
    // out is the folder: no blob in it may be other than its name says
    async run ({ addr, mirrors, timeoutS, path: p, scratch, identity, folder, damage }) {
      const dir = path.join(scratch, 'mirror')
      await fs.cp(folder, dir, { recursive: true })
      await fs.rm(path.join(dir, 'h', damage))
      const key = addr.slice(addr.lastIndexOf('#') + 1)
      const r = await runCli(['fsck', dir, '--key', key, '--repair-from', addr, '--timeout', String(timeoutS), '--no-fsync', '--json', ...mirrors.flatMap(m => ['--mirror', m])])
      const leftovers = await badBlobs(dir)
      let report
      try { report = JSON.parse(r.stdout) } catch { throw new Error(`rotree fsck printed no JSON report (exit ${r.code}):\n${r.stderr}`) }
      if (r.code !== 0 || !report.ok) {
        const failed = report.repair?.unrepaired?.[0]
        const inner = failed?.code === 'ROTREE_ALL_MIRRORS_FAILED' ? /: (ROTREE_[A-Z_]+) \(/.exec(failed.message)?.[1] : null
        return { ok: false, code: inner ?? failed?.code ?? `exit ${r.code}`, top: failed?.code, out: Buffer.alloc(0), leftovers, message: JSON.stringify(report.repair ?? report.fsinfo) }
      }
      try {
        return { ok: true, out: await readFolder(dir, key, p, identity), leftovers }
      } catch (err) { return { ok: false, code: codeOf(err), top: err?.code, out: Buffer.alloc(0), leftovers, message: `repaired, then read: ${err.message}` } }
    }
  },
  // last, so that without Chromium every Node reader has still been checked
  browserReader
]
