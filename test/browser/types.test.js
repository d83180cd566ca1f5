// The hand-written declarations in client-js/types: tsc checks two usage files
// against them (browser/bundler resolution and Node's), and for every subpath
// of the exports map, every value it exports at run time is declared, and
// nothing more.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { spawnSync } from 'node:child_process'
import { createRequire } from 'node:module'
import ts from 'typescript'
import { ROOT } from './helpers.js'

const require = createRequire(import.meta.url)
const TSC = require.resolve('typescript/bin/tsc')
const TYPES = path.join(ROOT, 'client-js', 'types')

function tsc (file, args) {
  const r = spawnSync(process.execPath, [TSC, '--noEmit', '--strict', '--target', 'es2022', '--skipLibCheck', 'false', ...args, file], { cwd: ROOT, encoding: 'utf8' })
  assert.equal(r.status, 0, `tsc ${file}:\n${r.stdout}${r.stderr}`)
}

test('tsc: a browser/bundler project (moduleResolution bundler, DOM lib)', () => {
  tsc('test/browser/types-usage.ts', ['--module', 'esnext', '--moduleResolution', 'bundler', '--lib', 'es2022,dom,dom.iterable,dom.asynciterable'])
})

test('tsc: a Node project (nodenext, no DOM lib, no @types/node)', () => {
  tsc('test/browser/types-usage-node.ts', ['--module', 'nodenext', '--moduleResolution', 'nodenext', '--lib', 'es2022'])
})

/** Names of the values (not types) a declaration file exports. */
function declaredValues (file) {
  const program = ts.createProgram([file], { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext, moduleResolution: ts.ModuleResolutionKind.Bundler, lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'] })
  const checker = program.getTypeChecker()
  const sym = checker.getSymbolAtLocation(program.getSourceFile(file))
  return checker.getExportsOfModule(sym)
    .filter(s => {
      const target = s.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(s) : s
      return target.flags & ts.SymbolFlags.Value
    })
    .map(s => s.name).sort()
}

const PKG = path.dirname(TYPES)
const EXPORTS = JSON.parse(ts.sys.readFile(path.join(PKG, 'package.json'))).exports

/** What a conditions object (or a plain path) gives under `condition`, as Node resolves it. */
const pick = (target, condition) => typeof target === 'string' ? target : target[condition] ?? target.default

/**
 * Each declaration file of the exports map with the code it stands for, under
 * Node's conditions and under the default ones (bundlers, and browsers past
 * "./browser", the prebuilt bundle that bundle.test.js compares with the entry).
 */
function declarationPairs () {
  const pairs = []
  for (const [subpath, entry] of Object.entries(EXPORTS)) {
    if (subpath === './browser' || subpath === './package.json') continue
    assert.ok(typeof entry === 'object' && Object.keys(entry)[0] === 'types', `exports["${subpath}"] declares its types first`)
    for (const condition of ['node', 'default']) {
      const dts = pick(entry.types, condition)
      const code = pick(entry, condition)
      if (!pairs.some(p => p.dts === dts && p.code === code)) pairs.push({ subpath, condition, dts, code })
    }
  }
  return pairs
}

test('every exported value is declared, for each entry point', async () => {
  for (const { subpath, condition, dts, code } of declarationPairs()) {
    const runtime = Object.keys(await import(pathToFileURL(path.join(PKG, code)).href)).sort()
    assert.deepEqual(declaredValues(path.join(PKG, dts)), runtime, `${dts} vs ${code} (exports["${subpath}"], ${condition})`)
  }
})

test('every error code and class of ERROR_TABLE is declared', async () => {
  const { ERROR_TABLE } = await import('rotree-client/errors')
  const text = ts.sys.readFile(path.join(TYPES, 'errors.d.ts'))
  for (const [code, name] of ERROR_TABLE) {
    assert.ok(text.includes(`'${code}'`), `${code} missing from RotreeErrorCode`)
    assert.ok(text.includes(`export declare const ${name}: Coded<'${code}'>`), `${name} missing`)
  }
})
