// One entry per command: usage line, options, and the function that runs it.
import fs from 'node:fs'
import path from 'node:path'
import { pipeline } from 'node:stream/promises'
import { openTree } from 'rotree-client'
import { UsageError } from 'rotree-client/errors'
import { writeKeyFile, readKeyFile } from '../builder/keys.js'
import { build } from '../builder/build.js'
import { parseDuration } from '../builder/duration.js'
import { getPath } from './get.js'
import { progressBar, fmtBytes } from './progress.js'

const READER_OPTIONS = {
  mirror: { type: 'string', multiple: true, arg: 'URL', help: 'another mirror of the same tree (repeatable)' },
  timeout: { type: 'string', arg: 'SECONDS', help: 'per-request timeout (default 30)' },
  'state-dir': { type: 'string', arg: 'DIR', help: 'reader state (default $ROTREE_STATE, $XDG_STATE_HOME/rotree, ~/.local/state/rotree)' }
}

function positiveInt (v, name) {
  const n = Number(v)
  if (!Number.isInteger(n) || n <= 0) throw new UsageError(`--${name} must be a positive integer`)
  return n
}

async function open (addr, v) {
  const opts = { mirrors: v.mirror ?? [] }
  if (v.timeout !== undefined) opts.timeoutMs = positiveInt(v.timeout, 'timeout') * 1000
  if (v['state-dir'] !== undefined) opts.stateDir = v['state-dir']
  return openTree(addr, opts)
}

async function withTree (addr, v, fn) {
  const tree = await open(addr, v)
  try { return await fn(tree) } finally { tree.close() }
}

function modeString (s) {
  const t = s.type === 'dir' ? 'd' : s.type === 'symlink' ? 'l' : '-'
  const m = s.mode
  let r = ''
  for (let i = 8; i >= 0; i--) r += m & (1 << i) ? 'rwx'[(8 - i) % 3] : '-'
  return t + r
}

function fmtTime (ms) { return new Date(ms).toISOString().replace('T', ' ').slice(0, 19) }

export const COMMANDS = {
  keygen: {
    usage: 'keygen KEYFILE',
    summary: 'write a new secret key (mode 0600); print the public key last',
    positionals: [1, 1],
    options: { force: { type: 'boolean', help: 'overwrite an existing key file' } },
    async run ([file], v, io) {
      const { publicKey } = await writeKeyFile(file, { force: v.force }).catch(err => {
        if (err.code === 'EEXIST') throw new UsageError(`${file} exists; use --force to overwrite it`)
        throw err
      })
      io.stderr.write(`wrote secret key to ${file}; the public key is:\n`)
      io.stdout.write(publicKey + '\n')
    }
  },

  build: {
    usage: 'build SRC OUT --key KEYFILE [--ttl 7d]',
    summary: 'build or update the published folder OUT from directory SRC',
    positionals: [2, 2],
    options: {
      key: { type: 'string', arg: 'KEYFILE', help: 'secret key file (from rotree keygen); required' },
      ttl: { type: 'string', arg: 'DURATION', help: 'how long the signed root is valid: 30m, 12h, 7d, 2w (default 7d)' },
      'skip-bad': { type: 'boolean', help: 'skip input that cannot be published (special files, bad names, escaping symlinks) instead of failing' },
      jobs: { type: 'string', arg: 'N', help: 'files read in parallel (default 4)' },
      'no-fsync': { type: 'boolean', help: 'do not fsync blobs and fsinfo.json (faster; not crash-safe)' },
      json: { type: 'boolean', help: 'print the result as JSON' }
    },
    async run ([src, out], v, io) {
      if (!v.key) throw new UsageError('--key KEYFILE is required')
      const ttlMs = parseDuration(v.ttl ?? '7d')
      if (!ttlMs) throw new UsageError(`--ttl ${v.ttl}: expected a duration such as 30m, 12h, 7d`)
      const key = await readKeyFile(v.key)
      if (key.warning) io.stderr.write(`rotree: warning: ${key.warning}\n`)
      const bar = progressBar({ label: 'build', stream: io.stderr })
      const r = await build({
        src, out, key, ttlMs, onBad: v['skip-bad'] ? 'skip' : 'fail', fsync: !v['no-fsync'],
        jobs: v.jobs ? positiveInt(v.jobs, 'jobs') : undefined,
        onProgress: p => bar.update(p.done, p.total, `${p.files} files`),
        warn: m => io.stderr.write(`${io.stderr.isTTY ? '\r\x1b[K' : ''}rotree: warning: ${m}\n`)
      })
      bar.done()
      if (v.json) { io.stdout.write(JSON.stringify(r, null, 2) + '\n'); return }
      io.stdout.write(`built ${out}: ${r.files} files, ${r.dirs} dirs, ${r.symlinks} symlinks, ${fmtBytes(r.bytes)}\n` +
        `  new blobs ${r.blobs.written} (${fmtBytes(r.blobs.writtenBytes)}), reused ${r.blobs.reused}` +
        (r.skipped.length ? `, skipped ${r.skipped.length}` : '') + ` in ${(r.ms / 1000).toFixed(1)} s\n` +
        `  seq ${r.seq}, root ${r.root}, expires ${r.expires}\n` +
        `  address: <mirror-url>#${r.publicKey}\n`)
    }
  },

  serve: {
    usage: 'serve OUT [--port 8080] [--host 127.0.0.1] [--web]',
    summary: 'serve a published folder over HTTP (fsinfo.json and h/<hash>)',
    positionals: [1, 1],
    options: {
      port: { type: 'string', arg: 'PORT', help: 'port to listen on (default 8080; 0 picks one)' },
      host: { type: 'string', arg: 'HOST', help: 'address to bind (default 127.0.0.1)' },
      web: { type: 'boolean', help: 'also serve the web app at /' }
    },
    async run ([out], v, io) {
      const { createRotreeServer } = await import('../server/index.js')
      if (!fs.existsSync(path.join(out, 'h'))) throw new UsageError(`${out} is not a published folder (no h/); run rotree build first`)
      const port = v.port === undefined ? 8080 : Number(v.port)
      if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError('--port must be 0..65535')
      const webRoot = v.web ? new URL('../web/', import.meta.url).pathname : null
      if (webRoot && !fs.existsSync(webRoot)) throw new UsageError('--web: the web app is not built in this checkout')
      const srv = await createRotreeServer({ dir: out, webRoot })
      const { url } = await srv.listen({ port, host: v.host ?? '127.0.0.1' })
      io.stdout.write(`serving ${out} at ${url}\n`)
      await new Promise(resolve => {
        const stop = () => { process.off('SIGINT', stop); process.off('SIGTERM', stop); resolve() }
        process.on('SIGINT', stop); process.on('SIGTERM', stop)
      })
      await srv.close({ timeoutMs: 5000 })
    }
  },

  ls: {
    usage: 'ls ADDR [PATH]',
    summary: 'list a directory, verified',
    positionals: [1, 2],
    options: { ...READER_OPTIONS, json: { type: 'boolean', help: 'one JSON object per line' } },
    async run ([addr, p = '/'], v, io) {
      await withTree(addr, v, async tree => {
        const s = await tree.stat(p)
        const list = s.type === 'dir' ? tree.list(p) : [await tree.lstat(p)]
        for await (const e of list) {
          if (v.json) { io.stdout.write(JSON.stringify(publicStat(e)) + '\n'); continue }
          const name = e.name + (e.type === 'dir' ? '/' : '') + (e.type === 'symlink' ? ' -> ' + e.target : '')
          io.stdout.write(`${modeString(e)} ${String(e.type === 'dir' ? e.entries : e.size).padStart(12)} ${fmtTime(e.mtimeMs)} ${name}\n`)
        }
      })
    }
  },

  stat: {
    usage: 'stat ADDR PATH',
    summary: 'show verified metadata of a path',
    positionals: [2, 2],
    options: { ...READER_OPTIONS, json: { type: 'boolean', help: 'print JSON' } },
    async run ([addr, p], v, io) {
      await withTree(addr, v, async tree => {
        const s = publicStat(await tree.lstat(p))
        const i = tree.info
        const out = { path: p, ...s, tree: { key: i.key, seq: i.seq, root: i.root, expires: i.expires } }
        if (v.json) { io.stdout.write(JSON.stringify(out, null, 2) + '\n'); return }
        for (const [k, val] of Object.entries(out)) {
          if (k === 'tree') continue
          io.stdout.write(`${k.padEnd(8)} ${val}\n`)
        }
        io.stdout.write(`verified seq ${i.seq}, root ${i.root}, expires ${i.expires}\n`)
      })
    }
  },

  cat: {
    usage: 'cat ADDR PATH',
    summary: "write a file's verified bytes to stdout",
    positionals: [2, 2],
    options: READER_OPTIONS,
    async run ([addr, p], v, io) {
      await withTree(addr, v, tree => pipeline(tree.createReadStream(p), io.stdout, { end: false }))
    }
  },

  get: {
    usage: 'get ADDR PATH -o DEST',
    summary: 'verified download of a file, or of a directory recursively',
    positionals: [2, 2],
    options: {
      ...READER_OPTIONS,
      output: { type: 'string', short: 'o', arg: 'DEST', help: 'where to write (default: the last path component)' },
      jobs: { type: 'string', arg: 'N', help: 'files fetched in parallel (default 4)' }
    },
    async run ([addr, p], v, io) {
      const dest = v.output ?? path.posix.basename(path.posix.normalize('/' + p))
      if (!dest) throw new UsageError('-o DEST is required for the tree root')
      await withTree(addr, v, async tree => {
        const bar = progressBar({ label: 'get', stream: io.stderr })
        const r = await getPath(tree, p, dest, { jobs: v.jobs ? positiveInt(v.jobs, 'jobs') : undefined, onProgress: (d, t) => bar.update(d, t) })
        bar.done()
        const st = tree.stats
        io.stderr.write(`got ${dest}: ${r.files} files, ${r.dirs} dirs, ${r.symlinks} symlinks, ${fmtBytes(r.bytes)} verified; ${st.requests} requests, seq ${tree.info.seq}\n`)
      })
    }
  }
}

function publicStat (s) {
  const o = { name: s.name, type: s.type, size: s.size, mtime: s.mtime.toISOString(), mode: s.mode.toString(8), exec: s.exec }
  if (s.target !== undefined) o.target = s.target
  if (s.entries !== undefined) o.entries = s.entries
  if (s.hash) o.hash = s.hash
  return o
}
