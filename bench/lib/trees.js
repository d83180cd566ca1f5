// Trees for benchmarks: build a source folder with a fresh key, and open it.
import fs from 'node:fs/promises'
import path from 'node:path'
import { openTree } from 'rotree-client'
import { tmpdir, makeKey, buildTree, prng } from '../../test/helpers/fixtures.js'

/** files: { 'rel/path': size | Uint8Array } → { dir, src, out, key, open(url, opts) } */
export async function makeTree (files, { label = 'tree' } = {}) {
  const dir = await tmpdir(`rotree-bench-${label}-`)
  const src = path.join(dir, 'src')
  for (const [rel, spec] of Object.entries(files)) {
    const p = path.join(src, rel)
    await fs.mkdir(path.dirname(p), { recursive: true })
    await fs.writeFile(p, typeof spec === 'number' ? prng(spec, rel) : spec)
  }
  const key = makeKey()
  const { out } = await buildTree(src, { key, out: path.join(dir, 'out') })
  return {
    dir, src, out, key,
    open: (url, opts = {}) => openTree(`${url}#${key.publicKey}`, { stateDir: null, ...opts }),
    cleanup: () => fs.rm(dir, { recursive: true, force: true })
  }
}

export async function timed (fn) {
  const t = performance.now()
  const v = await fn()
  return { ms: performance.now() - t, v }
}
