// `rotree` as a command on the PATH, from a checkout: `npm install -g .`
// (what `npm link` does too) links the checkout's bin/rotree.js into the
// prefix's bin/, and the command runs from any folder. (Outside a checkout,
// `npx rotree` would fetch whatever the npm registry holds under that name:
// the docs never tell anyone to.)
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { tmpdir } from './helpers/fixtures.js'

const ROOT = fileURLToPath(new URL('../', import.meta.url))

function run (cmd, args, { cwd, env = {} } = {}) {
  return new Promise((resolve, reject) => {
    const p = spawn(cmd, args, { cwd, env: { ...process.env, npm_config_update_notifier: 'false', npm_config_fund: 'false', npm_config_audit: 'false', ...env } })
    const out = []; const err = []
    const killer = setTimeout(() => p.kill('SIGKILL'), 120_000)
    p.stdout.on('data', b => out.push(b)); p.stderr.on('data', b => err.push(b))
    p.on('error', reject)
    p.on('close', code => { clearTimeout(killer); resolve({ code, out: Buffer.concat(out).toString(), err: Buffer.concat(err).toString() }) })
  })
}

test('npm install -g . puts a working rotree on the PATH', { timeout: 150_000 }, async t => {
  const prefix = await tmpdir('rotree-install-'); t.after(() => fs.rm(prefix, { recursive: true, force: true }))
  const inst = await run('npm', ['install', '-g', '--prefix', prefix, '--offline', '--ignore-scripts', '.'], { cwd: ROOT })
  assert.equal(inst.code, 0, inst.err)
  const bin = path.join(prefix, 'bin', 'rotree')
  const env = { PATH: `${path.join(prefix, 'bin')}:${process.env.PATH}` }
  const elsewhere = await tmpdir('rotree-install-cwd-'); t.after(() => fs.rm(elsewhere, { recursive: true, force: true }))
  const v = await run('rotree', ['--version'], { cwd: elsewhere, env })
  assert.equal(v.code, 0, v.err)
  assert.match(v.out, /^rotree \d+\.\d+\.\d+\n$/)
  const k = await run(bin, ['keygen', 'a.key'], { cwd: elsewhere })
  assert.equal(k.code, 0, k.err)
  assert.match(k.out, /^[0-9a-f]{64}\n$/)
})
