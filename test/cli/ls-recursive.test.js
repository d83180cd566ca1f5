// `rotree ls -R` lists directories ahead of what it prints (client-js walkAhead),
// so its order must still be exactly depth first, in the tree's name order,
// whatever order the listings come back in; --max-entries still stops it at
// the Nth entry. Checked against a walk of the source folder, over a real
// server, with enough directories that many listings are out at once; and a
// hostile tree of 4,096³ paths from three shared pages is listed ahead in
// bounded memory, stopped by the entry cap.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { rotree, servedHere } from './helpers.js'
import { tmpdir, makeKey, serve, address } from '../helpers/fixtures.js'
import { SignedTree } from '../helpers/signed-tree.js'

/** Paths below `dir`, depth first, each directory's names in byte order (a directory marked with '/'). */
async function depthFirst (dir, rel = '') {
  const out = []
  const names = (await fs.readdir(path.join(dir, rel))).sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)))
  for (const name of names) {
    const p = rel ? `${rel}/${name}` : name
    const st = await fs.lstat(path.join(dir, p))
    out.push(st.isDirectory() ? p + '/' : p)
    if (st.isDirectory()) out.push(...await depthFirst(dir, p))
  }
  return out
}

test('ls -R: depth first in name order, with listings ahead; --max-entries stops at N', { timeout: 120_000 }, async t => {
  const files = {}
  // 3 levels of directories whose names sort in byte order, not by locale or length
  const tops = ['B', 'a', 'a-b', 'a.b', 'a0', 'aa', 'b', 'z', 'ä', 'Z9', 'm', 'n']
  for (const [i, top] of tops.entries()) {
    files[`${top}/f${i}.txt`] = `top ${i}\n`
    for (let j = 0; j < 5; j++) {
      for (let k = 0; k < 3; k++) files[`${top}/s${j}/t${k}/x${i}${j}${k}`] = `${i}.${j}.${k}\n`
      files[`${top}/s${j}/y.txt`] = 'y\n'
    }
  }
  files['a/s0/t0/link'] = { symlink: '../y.txt' } // printed, never followed
  files['top.txt'] = 'top\n'
  const { dir, site, url, pub } = await servedHere(t, files, 'rotree-lsr-')
  const env = { ROTREE_STATE: path.join(dir, 'state') }
  const want = await depthFirst(site)
  assert.ok(want.length > 300)

  const all = await rotree(['ls', '-R', `${url}#${pub}`, '/'], { env })
  assert.equal(all.code, 0, all.err)
  assert.deepEqual(all.out.trimEnd().split('\n'), want)

  const sub = await rotree(['ls', '-R', `${url}#${pub}`, '/a'], { env })
  assert.deepEqual(sub.out.trimEnd().split('\n'), (await depthFirst(path.join(site, 'a'))))

  const json = await rotree(['ls', '-R', '--json', `${url}#${pub}`], { env })
  assert.deepEqual(json.out.trimEnd().split('\n').slice(0, -1).map(l => JSON.parse(l).path), want.map(p => p.replace(/\/$/, '')))

  const capped = await rotree(['ls', '-R', `${url}#${pub}`, '/', '--max-entries', '100'], { env })
  assert.equal(capped.code, 1)
  assert.match(capped.err, /ROTREE_TOO_LARGE: more than 100 entries/)
  assert.deepEqual(capped.out.trimEnd().split('\n'), want.slice(0, 100))
})

test('ls -R of 4,096³ paths from three shared pages: listed ahead in little memory, stopped at --max-entries', { timeout: 120_000 }, async t => {
  const dir = await tmpdir(); t.after(() => fs.rm(dir, { recursive: true, force: true }))
  const st = new SignedTree(path.join(dir, 'out'))
  const key = makeKey()
  const name = i => String(i).padStart(5, '0')
  const leaf = await st.dir(Array.from({ length: 4096 }, (_, i) => ({ name: `f${name(i)}`, file: '' })))
  const mid = await st.dir(Array.from({ length: 4096 }, (_, i) => ({ name: `d${name(i)}`, dir: leaf })))
  await st.sign(key, Array.from({ length: 4096 }, (_, i) => ({ name: `d${name(i)}`, dir: mid })))
  const srv = await serve(path.join(dir, 'out')); t.after(srv.close)
  // a heap far too small to hold what the tree claims, or many of its 4,096-entry listings at once
  const r = await rotree(['ls', '-R', address(srv.url, key.publicKey), '/', '--max-entries', '20000'],
    { env: { ROTREE_STATE: path.join(dir, 'state'), NODE_OPTIONS: '--max-old-space-size=64' } })
  assert.equal(r.code, 1, r.err)
  assert.match(r.err, /ROTREE_TOO_LARGE: more than 20000 entries/)
  const lines = r.out.trimEnd().split('\n')
  assert.equal(lines.length, 20000)
  assert.deepEqual(lines.slice(0, 3), ['d00000/', 'd00000/d00000/', 'd00000/d00000/f00000'])
  assert.equal(lines[4098], 'd00000/d00001/')
})
