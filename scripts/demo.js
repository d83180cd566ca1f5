#!/usr/bin/env node
// The quick start's main job, end to end with the real CLI: make a sample
// site, generate a key, build the signed tree, serve it with the embedded
// server, and read it back verified (ls, stat, cat, get), then compare the
// copy with the original byte for byte. Everything lives under ./demo/.
import fs from 'node:fs/promises'
import path from 'node:path'
import { spawn, execFileSync } from 'node:child_process'
import { createHash, createCipheriv } from 'node:crypto'

const ROOT = path.resolve('demo')
const BIN = new URL('../bin/rotree.js', import.meta.url).pathname
const env = { ...process.env, ROTREE_STATE: path.join(ROOT, 'state') }

function sh (args, opts = {}) {
  console.log(`\n$ rotree ${args.map(a => /[\s#]/.test(a) ? `'${a}'` : a).join(' ')}`)
  const out = execFileSync(process.execPath, [BIN, ...args], { env, stdio: ['ignore', 'pipe', 'inherit'], ...opts })
  process.stdout.write(out.length > 1500 ? out.subarray(0, 1500) + '…\n' : out)
  return out.toString()
}

async function sampleSite (dir) {
  const files = {
    'index.html': '<!doctype html><title>rotree demo</title><h1>Published through untrusted mirrors</h1>\n',
    'docs/README.md': '# rotree demo\n\nEvery byte of this file was checked against the publisher\'s key.\n',
    'docs/guide/install.md': '## Install\n\nFrom a checkout of rotree (the packages are not on the npm registry):\n\n    npm pack -w client-js && npm pack\n    npm install ./rotree-client-0.1.0.tgz ./rotree-0.1.0.tgz\n',
    'bin/hello.sh': '#!/bin/sh\necho "hello from a verified tree"\n',
    'data/notes-日本語.txt': 'unicode names work too\n'
  }
  for (const [rel, text] of Object.entries(files)) {
    await fs.mkdir(path.join(dir, path.dirname(rel)), { recursive: true })
    await fs.writeFile(path.join(dir, rel), text)
  }
  await fs.chmod(path.join(dir, 'bin/hello.sh'), 0o755)
  await fs.symlink('docs/README.md', path.join(dir, 'README-link'))
  // a 32 MiB release file: content-defined chunks, fetched and verified in parallel
  const key = createHash('sha256').update('demo').digest()
  await fs.writeFile(path.join(dir, 'release.iso'), createCipheriv('aes-256-ctr', key, Buffer.alloc(16)).update(Buffer.alloc(32 << 20)))
}

function serve (out) {
  console.log(`\n$ rotree serve ${path.relative('.', out)} --port 0 &`)
  const p = spawn(process.execPath, [BIN, 'serve', out, '--port', '0'], { env, stdio: ['ignore', 'pipe', 'inherit'] })
  return new Promise((resolve, reject) => {
    // both of serve's lines (its URL, then the address) before the demo goes
    // on: the commands after it block this event loop, and a line that came
    // later would be printed after the demo's end
    let text = ''
    p.stdout.on('data', b => {
      process.stdout.write(b)
      text += b
      const m = /at (http:\/\/\S+)/.exec(text)
      if (m && /^address: /m.test(text)) resolve({ url: m[1], stop: () => p.kill('SIGTERM') })
    })
    p.on('exit', code => reject(new Error(`rotree serve exited with ${code}`)))
  })
}

async function main () {
  await fs.rm(ROOT, { recursive: true, force: true })
  const site = path.join(ROOT, 'site'); const out = path.join(ROOT, 'out'); const keyFile = path.join(ROOT, 'publisher.key')
  await sampleSite(site)
  const pub = sh(['keygen', keyFile]).trim().split('\n').at(-1)
  sh(['build', site, out, '--key', keyFile, '--ttl', '7d'])
  const server = await serve(out)
  try {
    const addr = `${server.url}#${pub}`
    sh(['ls', addr, '/'])
    sh(['stat', addr, '/docs/README.md'])
    sh(['cat', addr, '/docs/README.md'])
    const copy = path.join(ROOT, 'copy')
    sh(['get', addr, '/', '-o', copy])
    execFileSync('diff', ['-r', '--no-dereference', site, copy])
    console.log(`\ndiff -r ${path.relative('.', site)} ${path.relative('.', copy)}: identical`)
    // the demo's server stops with it: say so, and how to start one again (the address a new server gives)
    console.log(`\nDemo done; everything is in ${path.relative('.', ROOT)}/. Its server has stopped. To serve and read the tree again\n` +
      `(rotree is on your PATH after npm install -g .; node bin/rotree.js works in this checkout):\n` +
      `  node bin/rotree.js serve ${path.relative('.', out)} --port 8080\n  node bin/rotree.js ls 'http://127.0.0.1:8080/#${pub}' /`)
  } finally {
    server.stop()
  }
}

main().catch(err => { console.error(`demo failed: ${err.message}`); process.exit(1) })
