// The benchmarks and scripts are not imported by any other test, so a syntax
// error in one (a figure's note is a long template literal) would only show
// when someone runs it. Each file is parsed as the ES module it is, not run:
// all of them in one child process (vm.SourceTextModule parses as
// `node --check` does, without a process per file).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { readdirSync, mkdtempSync, writeFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, dirname } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')
const files = ['bench', 'bench/lib', 'scripts'].flatMap(d => readdirSync(join(ROOT, d)).filter(f => f.endsWith('.js')).map(f => join(d, f)))

const PARSER = `
const vm = require('node:vm'); const fs = require('node:fs')
const bad = []
for (const f of process.argv.slice(1)) {
  try { new vm.SourceTextModule(fs.readFileSync(f, 'utf8'), { identifier: f }) } catch (e) { bad.push(f + ': ' + e.name + ': ' + e.message) }
}
process.stdout.write(JSON.stringify(bad))`

/** The files among `paths` that do not parse, each with its error. */
const unparsed = paths => new Promise((resolve, reject) => execFile(process.execPath, ['--experimental-vm-modules', '--no-warnings', '-e', PARSER, ...paths], { cwd: ROOT }, (err, stdout, stderr) =>
  err ? reject(new Error(stderr || err.message)) : resolve(JSON.parse(stdout))))

test('every file of bench/ and scripts/ parses', async () => {
  assert.ok(files.length > 20, `only ${files.length} files found`)
  assert.deepEqual(await unparsed(files), [])
})

test('the parse check finds a broken file', async () => {
  // a note with an unescaped backtick inside a template literal: the slip this test exists for
  const dir = mkdtempSync(join(tmpdir(), 'rotree-parse-'))
  const broken = join(dir, 'broken.js')
  writeFileSync(broken, '#!/usr/bin/env node\nexport const note = `a `quoted` word`\n')
  try {
    const bad = await unparsed([broken, files[0]])
    assert.equal(bad.length, 1)
    assert.match(bad[0], /broken\.js: SyntaxError/)
  } finally { rmSync(dir, { recursive: true, force: true }) }
})
