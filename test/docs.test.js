// The repository's files as the docs name them: every path of this
// repository that docs/ARCHITECTURE.md, README.md or docs/GATEWAY.md writes in
// backquotes exists, so a move or a rename that leaves a doc behind fails
// here. What counts as a path:
//   - a span, or a word of one (`node bench/gateway.js`), that starts with a
//     top-level folder (`client-js/src/tree/tree.js`, `lib/published/`); a
//     `*` in it must match some file (`src/net/transport-*.js`);
//   - a path relative to its section's folder, when its first segment is a
//     folder there (`src/trust/verify.js` under "### `client-js/`");
//   - a bare JavaScript file name (`walk.js`): some file of that name under
//     the section's folder (the first folder its heading names), or anywhere
//     in the repository in a section without one; in ARCHITECTURE.md's
//     diagram too;
//   - a path in plain prose that starts with a top-level folder;
//   - `rotree-client/<x>` and `rotree/<x>`: a subpath of that package's
//     exports map.
// Relative Markdown links must lead to a file or folder as well.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('../', import.meta.url))
const TOP = ['bench', 'bin', 'builder', 'cli', 'client-js', 'docs', 'gateway', 'lib', 'mirror', 'scripts', 'server', 'test', 'web']
const DOCS = ['docs/ARCHITECTURE.md', 'README.md', 'docs/GATEWAY.md']
const SKIP = new Set(['node_modules', '.git'])

/** Every file and folder of the repository, relative, with '/' (folders end in '/'). */
function listRepo () {
  const out = []
  const walk = rel => {
    for (const e of fs.readdirSync(path.join(ROOT, rel), { withFileTypes: true })) {
      if (SKIP.has(e.name)) continue
      const p = rel + e.name
      if (e.isDirectory()) { out.push(p + '/'); walk(p + '/') } else out.push(p)
    }
  }
  walk('')
  return out
}
const ALL = listRepo()
const ENTRIES = new Set(ALL)
const byName = new Map()
for (const p of ALL) if (!p.endsWith('/')) byName.set(path.posix.basename(p), [...(byName.get(path.posix.basename(p)) ?? []), p])

const exportsOf = file => new Set(Object.keys(JSON.parse(fs.readFileSync(path.join(ROOT, file), 'utf8')).exports ?? {}))
const PACKAGES = { 'rotree-client': exportsOf('client-js/package.json'), rotree: exportsOf('package.json') }

const TOP_WORD = new RegExp(`(?:^|[\\s(])((?:${TOP.join('|')})/[\\w./*-]*)`, 'gm')
const BARE_JS = /^[\w.-]+\.(?:js|mjs|cjs|ts)$/
const PLACEHOLDER = /[<>…{}]/

/** Does `p` (relative; '*' matches within one segment; a trailing '/' a folder) name something in the repository? */
function exists (p) {
  if (!p.includes('*')) return ENTRIES.has(p) || (!p.endsWith('/') && ENTRIES.has(p + '/'))
  const re = new RegExp('^' + p.split('*').map(s => s.replace(/[.+?^$()[\]\\|]/g, '\\$&')).join('[^/]*') + '$')
  return ALL.some(x => re.test(x))
}

/** The doc split at its headings: [{ heading, root, text }], root the first repository folder the heading names in backquotes. */
function sections (doc) {
  const out = []
  let cur = { heading: '(top)', root: null, text: '' }
  let fenced = false
  for (const line of doc.split('\n')) {
    if (/^```/.test(line)) fenced = !fenced
    if (!fenced && /^#{1,6} /.test(line)) {
      out.push(cur)
      const root = [...line.matchAll(/`([^`]+)`/g)].map(m => m[1]).find(s => s.endsWith('/') && TOP.includes(s.split('/')[0]) && ENTRIES.has(s))
      cur = { heading: line, root: root ?? null, text: '' }
      continue
    }
    cur.text += line + '\n'
  }
  out.push(cur)
  return out
}

/** What one backquoted span names in a section: a list of { what, ok }. */
function checkSpan (span, root) {
  const found = []
  for (let word of span.split(/\s+/)) {
    word = word.replace(/[,;:)]+$/, '').replace(/^\(/, '')
    if (!word || PLACEHOLDER.test(word)) continue
    const pkg = /^(rotree-client|rotree)\/([\w./-]+)$/.exec(word)
    if (pkg) { found.push({ what: word, ok: PACKAGES[pkg[1]].has('./' + pkg[2]) }); continue }
    const first = word.split('/')[0]
    if (word.includes('/') && TOP.includes(first)) { found.push({ what: word, ok: exists(word) }); continue }
    if (word.includes('/') && root && ENTRIES.has(root + first + '/')) { found.push({ what: `${word} (in ${root})`, ok: exists(root + word) }); continue }
    if (BARE_JS.test(word)) {
      const places = byName.get(word) ?? []
      found.push({ what: root ? `${word} (in ${root})` : word, ok: places.some(p => root === null || p.startsWith(root)) })
    }
  }
  return found
}

/** Every repository path a doc names, with whether it exists. */
function namedPaths (file) {
  const doc = fs.readFileSync(path.join(ROOT, file), 'utf8')
  const out = []
  for (const s of sections(doc)) {
    const [prose, ...blocks] = s.text.split(/^```.*$/m).reduce((acc, part, i) => { if (i % 2) acc.push(part); else acc[0] += part; return acc }, [''])
    for (const [, span] of prose.matchAll(/`([^`\n]+)`/g)) {
      for (const f of checkSpan(span, s.root)) out.push({ ...f, where: s.heading })
    }
    // and a repository path in plain prose, `(bench/p13-memory.js)`
    for (const [, word] of prose.replace(/`[^`\n]+`/g, ' ').matchAll(TOP_WORD)) {
      const w = word.replace(/[.,;:]+$/, '')
      if (!PLACEHOLDER.test(w)) out.push({ what: w, ok: exists(w), where: s.heading })
    }
    // ARCHITECTURE.md's diagram names files without backquotes (other docs' blocks are commands and examples)
    for (const block of file === 'docs/ARCHITECTURE.md' ? blocks : []) {
      for (const [name] of block.matchAll(/\b[\w-]+\.js\b/g)) out.push({ what: name, ok: byName.has(name), where: `${s.heading} (diagram)` })
    }
    for (const [, link] of prose.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:|^#/.test(link)) continue
      const target = path.posix.normalize(path.posix.join(path.posix.dirname(file), link.split('#')[0]))
      out.push({ what: `link ${link}`, ok: exists(target), where: s.heading })
    }
  }
  return out
}

for (const file of DOCS) {
  test(`every repository path ${file} names exists`, () => {
    const named = namedPaths(file)
    assert.ok(named.length > 10, `${file}: only ${named.length} paths found; the parser has gone wrong`)
    const missing = named.filter(n => !n.ok).map(n => `${n.what}  [${n.where}]`)
    assert.deepEqual(missing, [], `${file} names what is not in the repository`)
  })
}

test('the checker finds a stale name', () => {
  assert.deepEqual(checkSpan('src/transport-*.js', 'client-js/').map(f => f.ok), [false])
  assert.deepEqual(checkSpan('src/net/transport-*.js', 'client-js/').map(f => f.ok), [true])
  assert.deepEqual(checkSpan('builder/scan.js', null).map(f => f.ok), [false])
  assert.deepEqual(checkSpan('node bench/gateway.js', null).map(f => f.ok), [true])
  assert.deepEqual(checkSpan('walk.js', 'builder/').map(f => f.ok), [true])
  assert.deepEqual(checkSpan('resolve.js', 'builder/').map(f => f.ok), [false])
  assert.deepEqual(checkSpan('rotree-client/errors', null).map(f => f.ok), [true])
  assert.deepEqual(checkSpan('rotree-client/src/errors.js', null).map(f => f.ok), [false])
  assert.deepEqual(checkSpan('OUT/h/<hash>', 'builder/'), [])
})
