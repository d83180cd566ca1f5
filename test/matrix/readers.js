// The readers of the matrix. Each runs one read of `path` through its own
// front door and reports { ok, code, out, leftovers }: whether it succeeded,
// the stable error code (or HTTP status) it answered with, the bytes it
// handed out (to the caller, stdout, a file or an HTTP body), and any files
// it left behind in its scratch folder.
import fs from 'node:fs/promises'
import path from 'node:path'
import { spawn } from 'node:child_process'
import { openTree } from 'rotree-client'

const BIN = new URL('../../bin/rotree.js', import.meta.url).pathname

export function runCli (args, env = {}) {
  return new Promise(resolve => {
    const p = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
    const out = []; let err = ''
    p.stdout.on('data', b => out.push(b)); p.stderr.on('data', b => { err += b })
    p.on('close', code => resolve({ code, stdout: Buffer.concat(out), stderr: err }))
  })
}

const cliCode = stderr => /^rotree: (ROTREE_[A-Z_]+):/.exec(stderr)?.[1] ?? null

async function listLeft (dir) { return (await fs.readdir(dir).catch(() => [])).sort() }

export const READERS = [
  {
    id: 'library readFile',
    async run ({ addr, mirrors, stateDir, timeoutS, path: p }) {
      try {
        const tree = await openTree(addr, { mirrors, stateDir, timeoutMs: timeoutS * 1000 })
        try { return { ok: true, out: Buffer.from(await tree.readFile(p)) } } finally { tree.close() }
      } catch (err) { return { ok: false, code: err.code, out: Buffer.alloc(0) } }
    }
  },
  {
    id: 'library stream',
    async run ({ addr, mirrors, stateDir, timeoutS, path: p }) {
      const parts = []
      try {
        const tree = await openTree(addr, { mirrors, stateDir, timeoutMs: timeoutS * 1000 })
        try { for await (const b of tree.createReadStream(p)) parts.push(b) } finally { tree.close() }
        return { ok: true, out: Buffer.concat(parts) }
      } catch (err) { return { ok: false, code: err.code, out: Buffer.concat(parts) } }
    }
  },
  {
    id: 'rotree cat',
    async run ({ addr, mirrors, stateDir, timeoutS, path: p }) {
      const r = await runCli(['cat', addr, p, '--timeout', String(timeoutS), '--state-dir', stateDir, ...mirrors.flatMap(m => ['--mirror', m])])
      const lines = r.stderr.trim().split('\n').filter(Boolean)
      if (r.code !== 0 && lines.length !== 1) throw new Error(`rotree cat printed ${lines.length} lines on failure:\n${r.stderr}`)
      return { ok: r.code === 0, code: r.code === 0 ? null : cliCode(r.stderr), out: r.stdout }
    }
  },
  {
    id: 'rotree get',
    async run ({ addr, mirrors, stateDir, timeoutS, path: p, scratch }) {
      const dest = path.join(scratch, 'got.bin')
      const r = await runCli(['get', addr, p, '-o', dest, '--timeout', String(timeoutS), '--state-dir', stateDir, ...mirrors.flatMap(m => ['--mirror', m])])
      const out = await fs.readFile(dest).catch(() => Buffer.alloc(0))
      return { ok: r.code === 0, code: r.code === 0 ? null : cliCode(r.stderr), out, leftovers: (await listLeft(scratch)).filter(n => n !== 'got.bin' || r.code !== 0) }
    }
  }
]
