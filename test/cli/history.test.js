// `rotree log ADDR`: the roots a folder published (history/<seq>.json, listed
// by history/index.json), newest first, each verified against the address key
// and its own sequence number (docs/TRUST.md rule 17); a mirror can leave
// entries out or break them, and a broken one is listed as refused, never shown.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { tmpdir, serve } from '../helpers/fixtures.js'
import { rotree } from './helpers.js'
import { decodeRoot } from '../../lib/published/signed-roots.js'

// both formats of a single-key tree (the roles of format 2 are the last test's): version 1 signs
// fsinfo.json in `sig`, version 2 in `signatures` (FORMAT.md §12.4)
for (const format of ['1', '2']) {
  test(`rotree log lists every root published, newest first, and refuses a tampered or misfiled entry (format ${format})`, { timeout: 60_000 }, async t => {
    const dir = await tmpdir(); t.after(() => fs.rm(dir, { recursive: true, force: true }))
    const src = path.join(dir, 'src'); const out = path.join(dir, 'out'); const key = path.join(dir, 'k'); const state = path.join(dir, 'state')
    await fs.mkdir(src); await fs.writeFile(path.join(src, 'a.txt'), 'one\n')
    const pub = (await rotree(['keygen', key])).out.trim()
    const roots = []
    const fsinfo = async () => { const r = decodeRoot(await fs.readFile(path.join(out, 'fsinfo.json'))); return { seq: r.seq, root: r.root.hash, version: r.version } }
    assert.equal((await rotree(['build', src, out, '--key', key, '--no-fsync', '--format', format])).code, 0); roots.push(await fsinfo())
    assert.equal(roots[0].version, Number(format))
    await fs.writeFile(path.join(src, 'a.txt'), 'two\n')
    assert.equal((await rotree(['build', src, out, '--key', key, '--no-fsync'])).code, 0); roots.push(await fsinfo())
    assert.equal((await rotree(['resign', out, '--key', key, '--no-fsync'])).code, 0); roots.push(await fsinfo())
    assert.notEqual(roots[0].root, roots[1].root)
    assert.equal(roots[1].root, roots[2].root)
    const seqs = roots.map(r => r.seq).reverse()
    assert.deepEqual(JSON.parse(await fs.readFile(path.join(out, 'history', 'index.json'), 'utf8')).seqs, seqs)

    const srv = await serve(out); t.after(() => srv.close())
    const addr = `${srv.url}#${pub}`
    const log = await rotree(['log', addr, '--state-dir', state])
    assert.equal(log.code, 0, log.err)
    const lines = log.out.trim().split('\n')
    assert.equal(lines.length, 3)
    assert.match(lines[0], new RegExp(`^seq ${seqs[0]} \\(current\\)  issued \\S+  expires \\S+  root ${roots[2].root}$`))
    assert.match(lines[2], new RegExp(`^seq ${seqs[2]}  issued .* root ${roots[0].root}$`))
    const j = JSON.parse((await rotree(['log', addr, '--state-dir', state, '--json', '--limit', '2'])).out)
    assert.equal(j.total, 3)
    assert.deepEqual(j.entries.map(e => [e.seq, e.ok, e.current]), [[seqs[0], true, true], [seqs[1], true, false]])

    // a mirror's word is checked: a byte of the oldest signature flipped, and the middle entry filed as another seq
    const oldest = path.join(out, 'history', `${seqs[2]}.json`)
    const text = await fs.readFile(oldest, 'utf8')
    const sig = format === '1' ? JSON.parse(text).sig : JSON.parse(text).signatures[0].sig
    await fs.writeFile(oldest, text.replace(sig, (sig[0] === '0' ? '1' : '0') + sig.slice(1)))
    await fs.copyFile(path.join(out, 'history', `${seqs[0]}.json`), path.join(out, 'history', `${seqs[1]}.json`))
    const bad = JSON.parse((await rotree(['log', addr, '--state-dir', state, '--json'])).out).entries
    // version 2: a signature that does not verify counts for nothing, so the timestamp threshold is not met (FORMAT.md §12.4, docs/ERRORS.md)
    const broken = format === '1' ? 'ROTREE_BAD_SIGNATURE' : 'ROTREE_THRESHOLD'
    assert.deepEqual(bad.map(e => [e.seq, e.ok, e.code]), [[seqs[0], true, null], [seqs[1], false, 'ROTREE_BAD_FORMAT'], [seqs[2], false, broken]])
    const text2 = (await rotree(['log', addr, '--state-dir', state])).out
    assert.match(text2, new RegExp(`^seq ${seqs[2]}  REFUSED ${broken}: `, 'm'))

    // listing history adopts nothing: the reader still opens the current root, and refuses an old one
    assert.equal((await rotree(['cat', addr, '/a.txt', '--state-dir', state])).out, 'two\n')

    // a folder without an index (published before there was one): one coded line
    await fs.rm(path.join(out, 'history', 'index.json'))
    const none = await rotree(['log', addr, '--state-dir', state])
    assert.equal(none.code, 1)
    assert.match(none.err, /^rotree: ROTREE_ALL_MIRRORS_FAILED: .*history\/index\.json/)
  })
}

test('rotree diff lists added, removed and changed paths, never entering a subtree both roots share; ADDR@SEQ reads an old root', { timeout: 60_000 }, async t => {
  const dir = await tmpdir(); t.after(() => fs.rm(dir, { recursive: true, force: true }))
  const src = path.join(dir, 'src'); const out = path.join(dir, 'out'); const key = path.join(dir, 'k'); const state = path.join(dir, 'state')
  const write = async (rel, text) => { await fs.mkdir(path.dirname(path.join(src, rel)), { recursive: true }); await fs.writeFile(path.join(src, rel), text) }
  await write('a.txt', 'a\n'); await write('docs/x.md', 'x\n'); await write('docs/deep/y.md', 'y\n'); await write('same/sub/s.txt', 's\n')
  await fs.symlink('a.txt', path.join(src, 'link'))
  const pub = (await rotree(['keygen', key])).out.trim()
  assert.equal((await rotree(['build', src, out, '--key', key, '--no-fsync'])).code, 0)
  const seq1 = JSON.parse(await fs.readFile(path.join(out, 'fsinfo.json'), 'utf8')).seq
  await write('a.txt', 'changed\n'); await fs.rm(path.join(src, 'docs/x.md')); await write('docs/deep/new.md', 'new\n')
  await fs.chmod(path.join(src, 'docs/deep/y.md'), 0o755)
  await fs.rm(path.join(src, 'link')); await fs.symlink('docs', path.join(src, 'link'))
  await write('added/q.txt', 'q\n')
  assert.equal((await rotree(['build', src, out, '--key', key, '--no-fsync'])).code, 0)
  const seq2 = JSON.parse(await fs.readFile(path.join(out, 'fsinfo.json'), 'utf8')).seq

  const srv = await serve(out); t.after(() => srv.close())
  const addr = `${srv.url}#${pub}`
  // /same is the same subtree in both roots: its page is taken away, and diff must not need it
  const samePage = JSON.parse((await rotree(['stat', addr, '/same', '--json', '--state-dir', state])).out).hash
  assert.match(samePage, /^[0-9a-f]{64}$/)
  await fs.rename(path.join(out, 'h', samePage), path.join(dir, 'same-page'))
  const d = await rotree(['diff', addr, String(seq1), String(seq2), '--state-dir', state])
  assert.equal(d.code, 0, d.err)
  // a new directory is listed with what it holds, one line per path
  assert.equal(d.out, 'M /a.txt\n+ /added/\n+ /added/q.txt\n+ /docs/deep/new.md\nM /docs/deep/y.md\n- /docs/x.md\nM /link\n')
  assert.match(d.err, new RegExp(`7 changes from seq ${seq1} to seq ${seq2}`))
  const j = (await rotree(['diff', addr, String(seq1), '--json', '--state-dir', state])).out.trim().split('\n').map(l => JSON.parse(l))
  assert.deepEqual(j[1], { op: '+', path: '/added', type: 'dir' })
  assert.deepEqual(j[2], { op: '+', path: '/added/q.txt', type: 'file' })
  assert.deepEqual([j.at(-1).summary.fromSeq, j.at(-1).summary.changes], [seq1, j.length - 1], 'the summary line last (docs/JSON.md)')
  await fs.rename(path.join(dir, 'same-page'), path.join(out, 'h', samePage))

  // ADDR@SEQ: the old root, read-only, its age on stderr; the current root stays the reader's
  const old = await rotree(['cat', `${addr}@${seq1}`, '/a.txt', '--state-dir', state])
  assert.equal(old.code, 0, old.err)
  assert.equal(old.out, 'a\n')
  assert.match(old.err, new RegExp(`^rotree: seq ${seq1}, an old root signed .*; the current one is seq ${seq2}\\n$`))
  assert.equal((await rotree(['ls', `${addr}@${seq1}`, '/docs', '--state-dir', state])).out, 'deep/\nx.md\n')
  assert.equal((await rotree(['cat', addr, '/a.txt', '--state-dir', state])).out, 'changed\n')
  const missing = await rotree(['cat', `${addr}@12345`, '/a.txt', '--state-dir', state])
  assert.equal(missing.code, 1)
  // a sequence number the history does not hold: said as such, not as a failure of every mirror
  assert.match(missing.err, /^rotree: ROTREE_NOT_FOUND: the tree's history has no root with sequence 12345\n  List the roots it has with rotree log ADDR\.\n$/)
})

test('rotree log and ADDR@SEQ on a format-2 tree of roles: entries under each trust document, through a rotation', { timeout: 120_000 }, async t => {
  const dir = await tmpdir(); t.after(() => fs.rm(dir, { recursive: true, force: true }))
  const src = path.join(dir, 'src'); const out = path.join(dir, 'out'); const state = path.join(dir, 'state')
  const k = {}
  for (const n of ['A', 'R', 'T', 'T2']) k[n] = { key: path.join(dir, n), pub: (await rotree(['keygen', path.join(dir, n)])).out.trim() }
  await fs.mkdir(src); await fs.writeFile(path.join(src, 'a.txt'), 'one\n')
  const ok = async (...args) => { const r = await rotree(args); assert.equal(r.code, 0, `${args.join(' ')}: ${r.err}`); return r.out }
  await ok('trust', 'init', out, '--root', k.A.pub, '--release', k.R.pub, '--timestamp', k.T.pub, '--name', 'main')
  await ok('trust', 'sign', out, '--key', k.A.key)
  await ok('build', src, out, '--key', k.R.key, '--timestamp-key', k.T.key, '--no-fsync')
  const first = JSON.parse(await fs.readFile(path.join(out, 'fsinfo.json'), 'utf8'))
  // the timestamp key rotates; the next root is under trust document 2
  await ok('trust', 'update', out, '--timestamp', k.T2.pub)
  await ok('trust', 'sign', out, '--key', k.A.key)
  await fs.writeFile(path.join(src, 'a.txt'), 'two\n')
  await ok('build', src, out, '--key', k.R.key, '--timestamp-key', k.T2.key, '--no-fsync')
  const srv = await serve(out); t.after(() => srv.close())
  const anchor = JSON.parse(await fs.readFile(path.join(out, 'publisher.json'), 'utf8')).anchor
  const addr = `${srv.url}#${anchor}:main`
  const j = JSON.parse(await ok('log', addr, '--state-dir', state, '--json'))
  assert.equal(j.total, 2)
  assert.deepEqual(j.entries.map(e => e.ok), [true, true])
  assert.equal(j.entries[1].seq, first.seq)
  assert.equal(j.entries[1].root, first.release.root.hash)
  // the old root reads as it was, and is not adopted
  assert.equal(await ok('cat', `${addr}@${first.seq}`, '/a.txt', '--state-dir', state), 'one\n')
  assert.equal(await ok('cat', addr, '/a.txt', '--state-dir', state), 'two\n')
  // an entry signed by a key the trust document it names does not hold is refused, never shown
  const forged = JSON.parse(await fs.readFile(path.join(out, 'history', `${first.seq}.json`), 'utf8'))
  forged.signatures = [{ key: k.T2.pub, sig: forged.signatures[0].sig }]
  await fs.writeFile(path.join(out, 'history', `${first.seq}.json`), JSON.stringify(forged, null, 2) + '\n')
  const j2 = JSON.parse(await ok('log', addr, '--state-dir', state, '--json'))
  assert.deepEqual(j2.entries.map(e => [e.ok, e.code ?? null]), [[true, null], [false, 'ROTREE_THRESHOLD']])
})

/**
 * What diff should print from folder `a` to folder `b`: depth first, names
 * in byte order; a folder only one side has, then everything in it.
 */
async function folderDiff (a, b, rel = '') {
  const names = async d => new Set(await fs.readdir(d).catch(() => []))
  const na = await names(path.join(a, rel)); const nb = await names(path.join(b, rel))
  const all = [...new Set([...na, ...nb])].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)))
  const out = []
  for (const n of all) {
    const p = rel + '/' + n
    const sa = na.has(n) ? await fs.lstat(path.join(a, p)) : null
    const sb = nb.has(n) ? await fs.lstat(path.join(b, p)) : null
    const shown = s => p + (s.isDirectory() ? '/' : '')
    const only = async (op, root, s) => [op + ' ' + shown(s), ...s.isDirectory() ? await below(op, root, p) : []]
    if (!sb) out.push(...await only('-', a, sa))
    else if (!sa) out.push(...await only('+', b, sb))
    else if (sa.isDirectory() !== sb.isDirectory()) out.push(...await only('-', a, sa), ...await only('+', b, sb))
    else if (sa.isDirectory()) out.push(...await folderDiff(a, b, p))
    else if (!(await fs.readFile(path.join(a, p))).equals(await fs.readFile(path.join(b, p))) || (sa.mode & 0o111) !== (sb.mode & 0o111)) out.push('M ' + p)
  }
  return out
}

/** `op` and every path below folder `rel` of `root`, depth first, names in byte order. */
async function below (op, root, rel) {
  const out = []
  const names = (await fs.readdir(path.join(root, rel))).sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)))
  for (const n of names) {
    const p = rel + '/' + n
    const dir = (await fs.lstat(path.join(root, p))).isDirectory()
    out.push(`${op} ${p}${dir ? '/' : ''}`, ...dir ? await below(op, root, p) : [])
  }
  return out
}

test('rotree diff over hundreds of changed directories, their pages asked for ahead, prints what a walk of the two folders finds', { timeout: 120_000 }, async t => {
  const dir = await tmpdir(); t.after(() => fs.rm(dir, { recursive: true, force: true }))
  const out = path.join(dir, 'out'); const key = path.join(dir, 'k'); const state = path.join(dir, 'state')
  const write = async (root, rel, text) => { await fs.mkdir(path.dirname(path.join(root, rel)), { recursive: true }); await fs.writeFile(path.join(root, rel), text) }
  const a = path.join(dir, 'a'); const b = path.join(dir, 'b')
  const tops = ['B', 'a', 'a-b', 'a.b', 'a0', 'aa', 'b', 'z', 'ä', 'Z9', 'm', 'n', 'q', 'r']
  for (const [i, top] of tops.entries()) {
    for (let j = 0; j < 6; j++) {
      for (let k = 0; k < 3; k++) {
        const rel = `${top}/s${j}/t${k}/x.txt`
        await write(a, rel, `${i}.${j}.${k}\n`)
        // most leaves change; some directories are left alone (never entered), some gain or lose a file
        if ((i + j + k) % 5 !== 0) await write(b, rel, `${i}.${j}.${k} changed\n`)
        else await write(b, rel, `${i}.${j}.${k}\n`)
        if (k === 1 && j % 2) await write(b, `${top}/s${j}/t${k}/new.txt`, 'new\n')
        if (k === 2 && j === 3) await write(a, `${top}/s${j}/t${k}/gone.txt`, 'gone\n')
      }
    }
    if (i % 4 === 0) await write(a, `${top}/only-a/f`, 'a\n')
    if (i % 4 === 1) await write(b, `${top}/only-b/f`, 'b\n')
    if (i % 4 === 2) { await write(b, `${top}/only-b/g/h/f`, 'b\n'); await write(b, `${top}/only-b/g/e`, 'e\n') }
    // a folder that becomes a file, and a file that becomes a folder
    if (i === 3) { await write(a, `${top}/kind/x/f`, 'a\n'); await write(b, `${top}/kind`, 'b\n') }
    if (i === 5) { await write(a, `${top}/kind`, 'a\n'); await write(b, `${top}/kind/x/f`, 'b\n') }
  }
  const pub = (await rotree(['keygen', key])).out.trim()
  assert.equal((await rotree(['build', a, out, '--key', key, '--no-fsync'])).code, 0)
  const seq1 = JSON.parse(await fs.readFile(path.join(out, 'fsinfo.json'), 'utf8')).seq
  assert.equal((await rotree(['build', b, out, '--key', key, '--no-fsync'])).code, 0)
  const seq2 = JSON.parse(await fs.readFile(path.join(out, 'fsinfo.json'), 'utf8')).seq
  const srv = await serve(out); t.after(() => srv.close())
  const addr = `${srv.url}#${pub}`

  const want = await folderDiff(a, b)
  assert.ok(want.length > 200)
  const d = await rotree(['diff', addr, String(seq1), String(seq2), '--state-dir', state])
  assert.equal(d.code, 0, d.err)
  assert.deepEqual(d.out.trimEnd().split('\n'), want)
  const back = await rotree(['diff', addr, String(seq2), String(seq1), '--state-dir', state])
  assert.deepEqual(back.out.trimEnd().split('\n'), await folderDiff(b, a))
})
