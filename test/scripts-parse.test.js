// The benchmarks and scripts are not imported by any other test, so a syntax
// error in one (a figure's note is a long template literal) would only show
// when someone runs it. Each file is parsed, not run.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { readdirSync } from 'node:fs'
import { join, dirname } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')
const files = ['bench', 'bench/lib', 'scripts'].flatMap(d => readdirSync(join(ROOT, d)).filter(f => f.endsWith('.js')).map(f => join(d, f)))

const check = f => new Promise(resolve => execFile(process.execPath, ['--check', join(ROOT, f)], (err, stdout, stderr) =>
  resolve(err ? `${f}: ${stderr.split('\n').find(l => /Error/.test(l)) ?? stderr}` : null)))

test('every file of bench/ and scripts/ parses', async () => {
  assert.ok(files.length > 20, `only ${files.length} files found`)
  const bad = []
  for (let i = 0; i < files.length; i += 4) bad.push(...await Promise.all(files.slice(i, i + 4).map(check)))
  assert.deepEqual(bad.filter(Boolean), [])
})
