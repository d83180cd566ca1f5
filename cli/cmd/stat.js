// rotree stat
import { READER_OPTIONS, withTree, treeTarget, publicStat } from '../common.js'
import { escapeText } from '../escape.js'

export default {
  usage: 'stat ADDR PATH',
  summary: 'show verified metadata of a path',
  positionals: [1, 2],
  options: { ...READER_OPTIONS, json: { type: 'boolean', help: 'print JSON' } },
  async run ([addr, arg], v, io) {
    const target = await treeTarget(addr, arg, v, { path: 'required' })
    const p = target.path
    await withTree(target, v, async tree => {
      const s = publicStat(await tree.lstat(p))
      const i = tree.info
      const out = { path: p, ...s, tree: { key: i.key, seq: i.seq, root: i.root, expires: i.expires } }
      if (v.json) { io.stdout.write(JSON.stringify(out, null, 2) + '\n'); return }
      for (const [k, val] of Object.entries(out)) {
        if (k === 'tree') continue
        if (k === 'hash' && val === out.sha256) continue // one value: printed once, as sha256 (--json keeps both)
        io.stdout.write(`${k.padEnd(8)} ${escapeText(val)}\n`) // names and targets are the publisher's (--json stays exact)
      }
      io.stdout.write(`verified seq ${i.seq}, root ${i.root}, expires ${i.expires}\n`)
    }, { warn: m => io.stderr.write(m + '\n') })
  }
}
