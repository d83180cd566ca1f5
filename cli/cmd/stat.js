// rotree stat
import { READER_OPTIONS, withTree, treeTarget, publicStat } from '../common.js'
import { escapeText } from '../escape.js'
import { printJson, treeFields, entryFields } from '../json.js'

export default {
  usage: 'stat ADDR PATH [--json]',
  summary: 'show verified metadata of a path',
  positionals: [1, 2],
  options: { ...READER_OPTIONS, json: { type: 'boolean', help: 'print one JSON object: the entry and the tree (docs/JSON.md)' } },
  async run ([addr, arg], v, io) {
    const target = await treeTarget(addr, arg, v, { path: 'required' })
    const p = target.path
    const faults = []
    const out = await withTree(target, v, async tree => {
      const s = publicStat(await tree.lstat(p))
      const i = tree.info
      if (v.json) return { ...entryFields(p, s), ...treeFields(i, target.address) }
      for (const [k, val] of Object.entries({ path: p, ...s })) {
        if (k === 'hash' && val === s.sha256) continue // one value: printed once, as sha256 (--json keeps both)
        io.stdout.write(`${k.padEnd(8)} ${escapeText(val)}\n`) // names and targets are the publisher's (--json stays exact)
      }
      io.stdout.write(`verified seq ${i.seq}, root ${i.root}, expires ${i.expires}\n`)
    }, { warn: m => io.stderr.write(m + '\n'), faults })
    if (v.json) printJson(io, { ...out, mirrors: faults })
  }
}
