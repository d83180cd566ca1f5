// davfs2 (Debian package davfs2) mounts the gateway with `mount -t davfs`
// and the kernel reads the tree: `find` lists it, `cat` reads every file and
// `cmp` compares it with the source. The configuration and the mount command
// are docs/GATEWAY.md's ("davfs2"), read from the doc, and the mount runs
// with no terminal, as fstab, systemd or a script would run it. davfs2
// speaks neon's PROPFIND (a default namespace on every property element),
// which the gateway must read as XML namespaces say. Needs root (mount),
// /dev/fuse and CAP_SYS_ADMIN; skips with the reason otherwise.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { serve } from '../helpers/fixtures.js'
import { davfsMissing, davfsConfig, davfsMountCommand } from '../helpers/davfs.js'
import { makeFixture, fixtureFiles, startGateway, run, readAll, tmpdir, address } from '../gateway/helpers.js'

const skip = davfsMissing()

const fx = {}
before(async () => {
  if (skip) return
  fx.files = { ...fixtureFiles(), 'bin/tool': { data: '#!/bin/sh\necho hi\n', mode: 0o755 } }
  Object.assign(fx, await makeFixture(fx.files))
  fx.mirror = await serve(fx.out)
  fx.gw = await startGateway(null, { tree: address(fx.mirror.url, fx.pk) })
  fx.work = await tmpdir('rotree-davfs-')
})
after(async () => {
  if (fx.mounted) await run('umount', [fx.mnt], { timeoutMs: 30_000 }).catch(() => {})
  await fx.gw?.close(); await fx.mirror?.close(); await fx.cleanup?.()
  if (fx.work) await fs.rm(fx.work, { recursive: true, force: true })
})

test('mount -t davfs as the doc says, unattended: find, cat and cmp read the whole tree as the source has it', { skip, timeout: 120_000 }, async () => {
  const conf = await davfsConfig(fx.work)
  fx.mnt = path.join(fx.work, 'mnt')
  await fs.mkdir(fx.mnt)
  // no terminal: without ask_auth 0 davfs2 asked for credentials and exited 255, saying nothing
  const m = await run('sh', ['-c', `${await davfsMountCommand({ conf, url: fx.gw.url, mnt: fx.mnt })} </dev/null`], { timeoutMs: 60_000 })
  assert.equal(m.code, 0, `mount: ${m.stdout}${m.stderr}`)
  fx.mounted = true

  // find: every regular file (symlinks appear as what they lead to; davfs2 adds its local lost+found)
  const f = await run('find', [fx.mnt, '-type', 'f', '-not', '-path', `${fx.mnt}/lost+found/*`], { timeoutMs: 60_000 })
  assert.equal(f.code, 0, f.stderr)
  const found = f.stdout.split('\n').filter(Boolean).map(p => path.relative(fx.mnt, p)).sort()
  const want = await readAll(fx.src)
  assert.deepEqual(found, Object.keys(want).sort())

  for (const rel of found) {
    const c = await run('cmp', [path.join(fx.mnt, rel), path.join(fx.src, rel)], { timeoutMs: 60_000 })
    assert.equal(c.code, 0, `cmp ${rel}: ${c.stdout}${c.stderr}`)
  }
  const cat = await run('cat', [path.join(fx.mnt, 'hello.txt'), path.join(fx.mnt, 'docs/sub/deep.txt')])
  assert.equal(cat.stdout, 'hello, world\ndeep\n')
  assert.ok(((await fs.stat(path.join(fx.mnt, 'bin/tool'))).mode & 0o111) !== 0, 'the exec bit, from the executable property')
  assert.ok(((await fs.stat(path.join(fx.mnt, 'hello.txt'))).mode & 0o111) === 0)

  const u = await run('umount', [fx.mnt], { timeoutMs: 60_000 })
  assert.equal(u.code, 0, `umount: ${u.stderr}`)
  fx.mounted = false
})
