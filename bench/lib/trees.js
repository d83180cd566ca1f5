// Trees for benchmarks: build a source folder with a fresh key, and open it.
import fs from 'node:fs/promises'
import path from 'node:path'
import { openTree } from 'rotree-client'
import { tmpdir, makeKey, buildTree, prng } from '../../test/helpers/fixtures.js'

/** files: { 'rel/path': size | Uint8Array } → { dir, src, out, key, open(url, opts) } */
export async function makeTree (files, { label = 'tree', version } = {}) {
  const dir = await tmpdir(`rotree-bench-${label}-`)
  const src = path.join(dir, 'src')
  for (const [rel, spec] of Object.entries(files)) {
    const p = path.join(src, rel)
    await fs.mkdir(path.dirname(p), { recursive: true })
    await fs.writeFile(p, typeof spec === 'number' ? prng(spec, rel) : spec)
  }
  const key = makeKey()
  const { out } = await buildTree(src, { key, out: path.join(dir, 'out'), version })
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

/**
 * A published folder (a signed root over one small file) to which a figure
 * adds raw blobs under h/: the servers serve any h/<hash> present, and
 * `rotree serve` wants a fsinfo.json before it starts.
 * @returns {Promise<{ dir: string, out: string, cleanup: () => Promise<void> }>} out: the folder to serve
 */
export async function blobFolder (label) {
  const dir = await tmpdir(`rotree-bench-${label}-`)
  const src = path.join(dir, 'src')
  await fs.mkdir(src)
  await fs.writeFile(path.join(src, 'README'), 'a tree for serving blobs\n')
  const { out } = await buildTree(src, { key: makeKey(), out: path.join(dir, 'out') })
  await fs.mkdir(path.join(out, 'h'), { recursive: true })
  return { dir, out, cleanup: () => fs.rm(dir, { recursive: true, force: true }) }
}
