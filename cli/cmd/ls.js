// rotree ls
import { TooLargeError, BadPathError } from 'rotree-client/errors'
import { MAX_DEPTH } from 'rotree-client/format'
import { toStat } from 'rotree-client'
import { READER_OPTIONS, MANY_REQUESTS, withTree, treeTarget, modeString, fmtTime, publicStat, positiveInt } from '../common.js'
import { Lister, asDir } from '../get-lister.js'
import { frame } from '../get-util.js'
import { escapeText } from '../escape.js'
import { fmtBytes } from '../progress.js'
import { DEFAULT_MAX_ENTRIES } from '../download.js'

export default {
  usage: 'ls ADDR [PATH] [-l] [-R] [-h] [--json]',
  summary: 'list a directory, verified',
  positionals: [1, 2],
  options: {
    ...READER_OPTIONS,
    long: { type: 'boolean', short: 'l', help: 'long format: mode, size (entries for a directory), mtime' },
    recursive: { type: 'boolean', short: 'R', help: 'list subdirectories too, depth first, one path per line (symlinks not followed)' },
    human: { type: 'boolean', short: 'h', help: 'with -l: sizes as 1.5 KiB, 3.0 MiB' },
    'max-entries': { type: 'string', arg: 'N', help: `with -R: stop with an error after N entries (default ${DEFAULT_MAX_ENTRIES})` },
    json: { type: 'boolean', help: 'one JSON object per line (with -R, each has its path)' }
  },
  async run ([addr, p], v, io) {
    const target = await treeTarget(addr, p, v)
    if (v.recursive) target.reader = { ...MANY_REQUESTS, ...target.reader }
    const max = v['max-entries'] === undefined ? DEFAULT_MAX_ENTRIES : positiveInt(v['max-entries'], 'max-entries')
    await withTree(target, v, async t => {
      const tree = t.snapshot() // one root for the whole listing (docs/TRUST.md rule 6)
      const top = target.path
      const s = await tree.stat(top)
      if (s.type !== 'dir') return print(io, v, await tree.lstat(top), null)
      if (!v.recursive) {
        for await (const e of tree.list(top)) print(io, v, e, null)
        return
      }
      // depth first, in name order; at a distance each listing is a round
      // trip, so listings are asked for ahead of the walk, in the order it
      // will want them (get-lister.js, bounded in memory as for rotree get)
      const lister = new Lister(tree, { maxDepth: MAX_DEPTH - 1 })
      const root = Object.assign(lister.root(await tree.resolve(top), s.entries), { rel: '' })
      const stack = []
      let n = 0
      try {
        stack.push(frame(tree, root, await lister.take(root)))
        while (stack.length) {
          const f = stack.at(-1)
          const e = await f.next()
          if (e === undefined) {
            stack.pop()
            await f.close()
            lister.release(f.dir)
            continue
          }
          if (++n > max) throw new TooLargeError(`more than ${max} entries below ${top}; see --max-entries`)
          const rel = f.dir.rel + e.name
          print(io, v, toStat(e), rel)
          if (e.type === 'dir') {
            if (stack.length >= MAX_DEPTH) throw new BadPathError(`${rel} is more than ${MAX_DEPTH} directories deep`)
            const d = Object.assign(lister.child(f.dir, f.sub++, asDir(e)), { rel: rel + '/' })
            stack.push(frame(tree, d, await lister.take(d)))
          }
        }
      } finally {
        for (const f of stack) await f.close()
        lister.close()
      }
    }, { warn: m => io.stderr.write(m + '\n') })
  }
}

/** One entry; `rel` is its path below PATH with -R (null otherwise). */
function print (io, v, e, rel) {
  if (v.json) { io.stdout.write(JSON.stringify(rel === null ? publicStat(e) : { path: rel, ...publicStat(e) }) + '\n'); return }
  // names and targets are the publisher's: escaped for the terminal (--json stays exact)
  const name = escapeText(rel ?? e.name) + (e.type === 'dir' ? '/' : '')
  if (!v.long) { io.stdout.write(name + '\n'); return }
  const size = e.type === 'dir' ? String(e.entries) : v.human ? fmtBytes(e.size) : String(e.size)
  io.stdout.write(`${modeString(e)} ${size.padStart(12)} ${fmtTime(e.mtimeMs)} ${name}${e.type === 'symlink' ? ' -> ' + escapeText(e.target) : ''}\n`)
}
