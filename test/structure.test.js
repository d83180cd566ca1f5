// How the source is laid out, kept so (docs/ARCHITECTURE.md): no module
// imports itself through others, no source file over 500 lines, no function
// over 100 lines but the generated config templates, and nothing outside
// client-js reaches into rotree-client/src/ (each layer's index.js is its
// interface). Functions are found by TypeScript's parser (a dev dependency),
// so a long arrow function inside a call counts as one too.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'

const ROOT = fileURLToPath(new URL('../', import.meta.url))
const DIRS = ['bin', 'builder', 'cli', 'client-js/src', 'gateway', 'lib', 'mirror', 'server', 'web', 'scripts']
// the nginx, Caddy and Varnish configurations are one template each: a function that is mostly the text it writes
const TEMPLATES = new Set(['server/nginx-block.js serverBlock', 'server/caddy-config.js caddyConfig', 'server/varnish-config.js varnishConfig'])
const MAX_FILE_LINES = 500
const MAX_FUNCTION_LINES = 100

function sources () {
  const out = []
  const walk = d => {
    for (const e of fs.readdirSync(path.join(ROOT, d), { withFileTypes: true })) {
      const rel = path.posix.join(d, e.name)
      if (e.isDirectory()) { if (e.name !== 'node_modules' && e.name !== 'dist') walk(rel) } else if (/\.m?js$/.test(e.name) && rel !== 'web/rotree-client.js') out.push(rel)
    }
  }
  for (const d of DIRS) walk(d)
  return out
}

const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'client-js/package.json'), 'utf8'))
const target = t => typeof t === 'string' ? t : target(t.node ?? t.default ?? t.import)

/** The repository file an import names, or null for a package or a built-in. */
function resolve (from, spec) {
  if (spec.startsWith('.')) return path.posix.normalize(path.posix.join(path.posix.dirname(from), spec))
  if (spec === 'rotree-client' || spec.startsWith('rotree-client/')) {
    const sub = spec === 'rotree-client' ? '.' : '.' + spec.slice('rotree-client'.length)
    const t = pkg.exports[sub]
    return t === undefined ? null : path.posix.join('client-js', target(t))
  }
  if (spec.startsWith('#')) return pkg.imports[spec] ? path.posix.join('client-js', target(pkg.imports[spec])) : null
  return null
}

const files = sources()
const parsed = new Map(files.map(f => {
  const text = fs.readFileSync(path.join(ROOT, f), 'utf8')
  return [f, { text, sf: ts.createSourceFile(f, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.JS) }]
}))

test('no import cycles', () => {
  const graph = new Map()
  for (const [f, { sf }] of parsed) {
    const deps = []
    for (const st of sf.statements) {
      if ((ts.isImportDeclaration(st) || ts.isExportDeclaration(st)) && st.moduleSpecifier && ts.isStringLiteral(st.moduleSpecifier)) {
        const r = resolve(f, st.moduleSpecifier.text)
        if (r !== null && parsed.has(r)) deps.push(r)
      }
    }
    graph.set(f, deps)
  }
  // Tarjan's strongly connected components: any of more than one file is a cycle
  let n = 0; const index = new Map(); const low = new Map(); const stack = []; const on = new Set(); const cycles = []
  const visit = v => {
    index.set(v, n); low.set(v, n); n++; stack.push(v); on.add(v)
    for (const w of graph.get(v)) {
      if (!index.has(w)) { visit(w); low.set(v, Math.min(low.get(v), low.get(w))) } else if (on.has(w)) low.set(v, Math.min(low.get(v), index.get(w)))
    }
    if (low.get(v) === index.get(v)) {
      const c = []; let w
      do { w = stack.pop(); on.delete(w); c.push(w) } while (w !== v)
      if (c.length > 1) cycles.push(c.sort().join(' ↔ '))
    }
  }
  for (const v of graph.keys()) if (!index.has(v)) visit(v)
  assert.deepEqual(cycles, [])
})

test(`no source file over ${MAX_FILE_LINES} lines`, () => {
  const long = [...parsed].map(([f, { text }]) => [f, text.split('\n').length - (text.endsWith('\n') ? 1 : 0)]).filter(([, n]) => n > MAX_FILE_LINES)
  assert.deepEqual(long.map(([f, n]) => `${f}: ${n}`), [])
})

test(`no function over ${MAX_FUNCTION_LINES} lines, but the config templates`, () => {
  const long = []
  for (const [f, { sf }] of parsed) {
    const visit = node => {
      if (ts.isFunctionLike(node) && 'body' in node && node.body) {
        const a = sf.getLineAndCharacterOfPosition(node.getStart()).line
        const b = sf.getLineAndCharacterOfPosition(node.getEnd()).line
        const name = node.name?.getText() ?? '(anonymous)'
        if (b - a + 1 > MAX_FUNCTION_LINES && !TEMPLATES.has(`${f} ${name}`)) long.push(`${f}:${a + 1} ${name}: ${b - a + 1} lines`)
      }
      ts.forEachChild(node, visit)
    }
    visit(sf)
  }
  assert.deepEqual(long, [])
})

test('nothing outside client-js imports rotree-client/src/', () => {
  const reaching = [...parsed].filter(([f, { text }]) => !f.startsWith('client-js/') && /['"]rotree-client\/src\//.test(text)).map(([f]) => f)
  assert.deepEqual(reaching, [])
})
