// A witnessed tree for the reader's tests (docs/FORMAT.md §13.1): a one-key
// family (A holds every role) whose trust document 2 names three witnesses
// running on loopback (lib/witness/witness.js), 2 of them required.
import fs from 'node:fs/promises'
import path from 'node:path'
import { rotree } from '../cli/helpers.js'
import { createWitness, parseLogList } from '../../lib/witness/witness.js'
import { writeTree } from '../helpers/fixtures.js'

export async function ok (...args) {
  const r = await rotree(args)
  if (r.code !== 0) throw new Error(`rotree ${args.join(' ')}\n${r.err}`)
  return r.out
}

/** Three witnesses of `origin` (log key `hex`), each stoppable; `cleanups` gets their closing. */
export async function startWitnesses (base, origin, hex, cleanups, n = 3) {
  const ws = []
  for (let i = 1; i <= n; i++) {
    const f = path.join(base, `W${i}.key`)
    await ok('keygen', f)
    const key = JSON.parse(await fs.readFile(f, 'utf8'))
    const o = { name: `w${i}.example/witness`, key, stateDir: path.join(base, `w${i}-state`), logs: parseLogList([`${origin}=${hex}`]), fsync: false }
    const w = { o, port: 0 }
    w.start = async () => { w.srv = await createWitness(o); const l = await w.srv.listen({ port: w.port }); w.port = l.port; w.url = l.url; w.vkey = w.srv.verifierKey }
    w.stop = async () => { await w.srv.close(); w.srv = null }
    await w.start()
    cleanups.push(async () => { if (w.srv) await w.stop() })
    ws.push(w)
  }
  return ws
}

/**
 * The witnessed tree in base/out after `builds` publishes: { A, hex, out, src, origin, fragment, ws, build(text) }.
 * @param {string} base @param {Function[]} cleanups @param {{ builds?: number, threshold?: number }} [o]
 */
export async function witnessedTree (base, cleanups, { builds = 2, threshold = 2 } = {}) {
  const A = path.join(base, 'A.key')
  const hex = (await ok('keygen', A)).trim()
  const out = path.join(base, 'out')
  const src = path.join(base, 'src')
  const init = await ok('trust', 'init', out, '--root', A, '--release', A, '--timestamp', A, '--name', 'site')
  await ok('trust', 'sign', out, '--key', A)
  const fragment = init.trimEnd().split('\n').at(-1).split('#')[1]
  const origin = `rotree/${fragment}`
  const ws = await startWitnesses(base, origin, hex, cleanups)
  await ok('trust', 'update', out, ...ws.flatMap(w => ['--add-witness', `${w.o.name}=${w.url}=${w.vkey}`]), '--witness-threshold', String(threshold))
  await ok('trust', 'sign', out, '--key', A)
  const build = async (text, ...extra) => { await writeTree(src, { 'a.txt': text }); await ok('build', src, out, '--key', A, '--no-fsync', ...extra) }
  for (let i = 1; i <= builds; i++) await build(`version ${i}\n`)
  return { A, hex, out, src, origin, fragment, ws, build }
}
