// `wget -r` through the gateway with its defaults (a directory's index.html
// served in its place, read-ahead on), run exactly as docs/GATEWAY.md's
// recipe says ("Mirroring with wget"; the line is read from the doc): every
// file of a tree whose sites (index.html) sit in the start directory and in
// subdirectories nested deeper than wget's default 5 levels, with symlinks
// that lead back up their own path, arrives with its bytes, and nothing else
// but the listings wget read.
import { needing } from '../helpers/tools.js'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { serve } from '../helpers/fixtures.js'
import { makeFixture, startGateway, gatewayRecipe, curl, run, readAll, tmpdir, prng, address } from './helpers.js'

const { test, before, after } = needing('wget', 'curl')

const BIN = prng(300 * 1024, 'wget-bin') // several chunks
const DEEP = 'd1/d2/d3/d4/d5/d6/d7/d8'
// the tree; everything under docs/ is what the recipe mirrors
const FILES = {
  'docs/index.html': '<a href="guide.html">the guide</a>\n', // a site at the start: it links one file
  'docs/guide.html': '<p>guide</p>\n',
  'docs/unlinked.txt': 'linked by no page\n',
  'docs/site/index.html': '<a href="page.html">page</a>\n',
  'docs/site/page.html': '<p>page</p>\n',
  'docs/site/data.bin': BIN,
  'docs/site/sub/index.html': '<p>nothing linked</p>\n',
  'docs/site/sub/more.txt': 'only in the listing\n',
  'docs/d1/d2/d3/d4/d5/d6/index.html': '<p>six</p>\n',
  'docs/d1/d2/d3/d4/d5/d6/other.txt': 'beside a site, six deep\n',
  'docs/d1/d2/d3/d4/d5/d6/d7/deep.txt': 'seven deep\n',
  [`docs/${DEEP}/index.html`]: '<p>eight</p>\n',
  [`docs/${DEEP}/deepest.bin`]: prng(20_000, 'deepest'),
  'docs/sp ace #1 100%/ünï ✓.txt': 'odd names\n',
  'docs/link-dir': { symlink: 'site/sub' }, // arrives as a copy
  'docs/link-file': { symlink: 'guide.html' },
  'docs/d1/up': { symlink: '..' }, // lead back up their own path: linked there
  'docs/d1/d2/self': { symlink: '.' },
  'docs/d1/d2/d3/top': { symlink: '../../..' },
  'docs/x/xf.txt': 'x\n',
  'docs/x/to-y': { symlink: '../y' }, // x/to-y/to-x/… would never end
  'docs/y/yf.txt': 'y\n',
  'docs/y/to-x': { symlink: '../x' },
  'docs/broken': { symlink: 'nothing-here' },
  'outside.txt': 'above the start: -np\n',
  'index.html': '<a href="docs/">docs</a> <a href="outside.txt">outside</a>\n'
}

/** What the mirror of docs/ must hold: every file, the symlinks' copies, nothing above. */
function wanted () {
  const want = {}
  for (const [k, v] of Object.entries(FILES)) if (k.startsWith('docs/') && (typeof v === 'string' || v instanceof Uint8Array)) want[k.slice(5)] = Buffer.from(v)
  want['link-dir/index.html'] = want['site/sub/index.html']
  want['link-dir/more.txt'] = want['site/sub/more.txt']
  want['link-file'] = want['guide.html']
  want['x/to-y/yf.txt'] = want['y/yf.txt'] // once: x/to-y/to-x is x again, on the path
  want['y/to-x/xf.txt'] = want['x/xf.txt']
  return want
}

const LISTING = 'index.html?listing' // where wget keeps each listing it read (docs/GATEWAY.md)

const fx = {}
before(async () => {
  Object.assign(fx, await makeFixture(FILES))
  fx.mirror = await serve(fx.out)
  fx.gw = await startGateway(null, { tree: address(fx.mirror.url, fx.pk) }) // the defaults: index.html served, read-ahead on
  fx.work = await tmpdir('rotree-gw-wget-')
})
after(async () => {
  await fx.gw?.close(); await fx.mirror?.close(); await fx.cleanup?.()
  if (fx.work) await fs.rm(fx.work, { recursive: true, force: true })
})

test('the doc\'s wget recipe brings every file of a directory, sites and all, deeper than 5 levels, with its bytes', { timeout: 60_000 }, async () => {
  const recipe = await gatewayRecipe('wget')
  assert.match(recipe, /^wget -r -l inf -np 'http:\/\/127\.0\.0\.1:8081\/docs\/\?listing'$/, 'one wget line, for /docs/ of a gateway at 8081')
  const doc = await fs.readFile(new URL('../../docs/GATEWAY.md', import.meta.url), 'utf8')
  for (const line of doc.split('\n').filter(l => l.startsWith('wget -'))) assert.ok(line.startsWith(recipe), `every wget line of the doc is the recipe: ${line}`)

  const dest = path.join(fx.work, 'recipe')
  await fs.mkdir(dest)
  const r = await run('sh', ['-c', recipe.replaceAll('http://127.0.0.1:8081/', fx.gw.url)], { cwd: dest, timeoutMs: 50_000 })
  assert.equal(r.code, 0, `wget exit ${r.code}: ${r.stderr.slice(-2000)}`)

  const host = new URL(fx.gw.url).host
  assert.deepEqual(await fs.readdir(dest), [host])
  assert.deepEqual(await fs.readdir(path.join(dest, host)), ['docs'], 'nothing above /docs/ (-np)')
  const got = await readAll(path.join(dest, host, 'docs'), { skip: rel => path.basename(rel) === LISTING })
  const want = wanted()
  assert.deepEqual(Object.keys(got).sort(), Object.keys(want).sort(), 'the files, and no page that is not one of them')
  for (const [k, v] of Object.entries(want)) assert.ok(got[k].equals(v), `${k}: its bytes`)
  // one listing per directory reached, the start included
  const listings = (await run('find', [path.join(dest, host, 'docs'), '-name', LISTING])).stdout.split('\n').filter(Boolean)
  assert.equal(listings.length, 17)
})

test('listings link directories to their listings, and a symlink back up its own path to where it leads', async () => {
  const list = async p => (await curl(fx.gw.url + p)).body.toString()
  assert.equal(await list('docs/site/'), FILES['docs/site/index.html'], 'a browser still gets the site')
  const docs = await list('docs/?listing')
  assert.ok(docs.includes('<a href="./site/?listing">site/</a>'))
  assert.ok(docs.includes('<a href="../?listing">../</a>'))
  assert.ok(docs.includes('<a href="./link-dir/?listing">link-dir/ → site/sub</a>'))
  assert.ok(docs.includes('<a href="./link-file">link-file → guide.html</a>'))
  assert.ok(docs.includes('<td>broken → nothing-here (broken)</td>'), 'a broken symlink is not linked')
  assert.ok((await list('docs/d1/?listing')).includes('<a href="../?listing">up/ → ..</a>'))
  assert.ok((await list('docs/d1/d2/?listing')).includes('<a href="./?listing">self/ → .</a>'))
  assert.ok((await list('docs/d1/d2/d3/?listing')).includes('<a href="../../../?listing">top/ → ../../..</a>'))
  // x/to-y is y, linked into; from there to-x is x again, already on the path
  assert.ok((await list('docs/x/?listing')).includes('<a href="./to-y/?listing">to-y/ → ../y</a>'))
  assert.ok((await list('docs/x/to-y/?listing')).includes('<a href="../?listing">to-x/ → ../x</a>'))
})
