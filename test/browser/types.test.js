// The hand-written declarations in client-js/types: tsc checks two usage files
// against them (browser/bundler resolution and Node's), and every value the
// package exports at run time is declared, and nothing more.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import path from 'node:path'
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

const runtime = async spec => Object.keys(await import(spec)).sort()

test('every exported value is declared, for each entry point', async () => {
  const cases = [
    ['rotree-client', 'index.d.ts'],
    ['rotree-client', 'node.d.ts'],
    ['rotree-client/errors', 'errors.d.ts'],
    ['rotree-client/verify', 'verify.d.ts'],
    ['rotree-client/format', 'format.d.ts']
  ]
  for (const [spec, dts] of cases) {
    assert.deepEqual(declaredValues(path.join(TYPES, dts)), await runtime(spec), `${dts} vs ${spec}`)
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
