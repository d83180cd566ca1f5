// rotree ls
import { TooLargeError, BadPathError } from 'rotree-client/errors'
import { MAX_DEPTH } from 'rotree-client/format'
import { toStat } from 'rotree-client'
import { READER_OPTIONS, MANY_REQUESTS, withTree, treeTarget, modeString, fmtTime, publicStat, positiveInt } from '../common.js'
import { walkAhead, treeDirs } from 'rotree-client/tree'
import { WALK } from '../get-dirs.js'
import { escapeText } from '../escape.js'
import { fmtBytes } from '../progress.js'
import { DEFAULT_MAX_ENTRIES } from '../download.js'
import { printLine, treeFields, entryFields } from '../json.js'

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
    json: { type: 'boolean', help: 'one JSON object per line, each entry with its path below PATH, then a summary line (docs/JSON.md)' }
  },
  async run ([addr, p], v, io) {
    const target = await treeTarget(addr, p, v)
    if (v.recursive) target.reader = { ...MANY_REQUESTS, ...target.reader }
    const max = v['max-entries'] === undefined ? DEFAULT_MAX_ENTRIES : positiveInt(v['max-entries'], 'max-entries')
    const faults = []
    let n = 0
    const info = await withTree(target, v, async t => {
      const tree = t.snapshot() // one root for the whole listing (docs/TRUST.md rule 6)
      const top = target.path
      const entry = await tree.resolve(top) // once: a directory's count comes with it, the tree root's from its top page
      if (entry.type !== 'dir') { n++; print(io, v, await tree.lstat(top), null); return tree.info }
      if (!v.recursive) {
        for await (const e of tree.entriesOf(entry)) { n++; print(io, v, toStat(e), null) }
        return tree.info
      }
      // depth first, in name order; at a distance each listing is a round
      // trip, so listings are asked for ahead of the walk, in the order it
      // will want them (client-js walkAhead, bounded as for rotree get)
      const count = entry.size ?? (await tree.stat('/')).entries
      const dirs = treeDirs(tree, (parent, e) => ({ entry: e, count: e.entries, rel: parent.rel + e.name + '/', depth: parent.depth + 1 }))
      await walkAhead({ entry, count, rel: '', depth: 0 }, dirs, {
        entry (dir, e) {
          if (++n > max) throw new TooLargeError(`more than ${max} entries below ${top}; see --max-entries`)
          const rel = dir.rel + e.name
          print(io, v, toStat(e), rel)
          if (e.type === 'dir' && dir.depth + 1 >= MAX_DEPTH) throw new BadPathError(`${rel} is more than ${MAX_DEPTH} directories deep`)
        }
      }, WALK)
      return tree.info
    }, { warn: m => io.stderr.write(m + '\n'), faults })
    if (v.json) printLine(io, { summary: { ...treeFields(info, target.address), count: n, mirrors: faults } })
  }
}

/** One entry; `rel` is its path below PATH with -R (null otherwise: its name). */
function print (io, v, e, rel) {
  if (v.json) { printLine(io, entryFields(rel ?? e.name, publicStat(e))); return }
  // names and targets are the publisher's: escaped for the terminal (--json stays exact)
  const name = escapeText(rel ?? e.name) + (e.type === 'dir' ? '/' : '')
  if (!v.long) { io.stdout.write(name + '\n'); return }
  const size = e.type === 'dir' ? String(e.entries) : v.human ? fmtBytes(e.size) : String(e.size)
  io.stdout.write(`${modeString(e)} ${size.padStart(12)} ${fmtTime(e.mtimeMs)} ${name}${e.type === 'symlink' ? ' -> ' + escapeText(e.target) : ''}\n`)
}
