// rotree diff
import { UsageError } from 'rotree-client/errors'
import { openHistoric } from 'rotree-client/tree'
import { READER_OPTIONS, MANY_REQUESTS, treeAddress, withTree } from '../common.js'
import { diffTrees } from '../tree-diff.js'
import { escapeText } from '../escape.js'
import { printLine, treeFields } from '../json.js'

const SEQ = /^(0|[1-9][0-9]{0,15})$/

export default {
  usage: 'diff ADDR SEQ1 [SEQ2] [--json]',
  summary: 'paths added (+), removed (-) and changed (M) from root SEQ1 to SEQ2 (default: the current one), a new or removed directory with everything in it; rotree log lists them',
  positionals: [2, 3],
  options: { ...READER_OPTIONS, json: { type: 'boolean', help: 'one JSON object per change, then a summary line (docs/JSON.md)' } },
  async run ([addr, s1, s2], v, io) {
    for (const s of [s1, s2]) if (s !== undefined && !SEQ.test(s)) throw new UsageError(`${s}: a sequence number, as rotree log lists them`)
    const target = await treeAddress(addr, v)
    target.reader = { ...MANY_REQUESTS, ...target.reader } // directory pages asked for ahead (tree-diff.js)
    const faults = []
    const sum = await withTree(target, v, async tree => {
      const a = await openHistoric(tree, Number(s1))
      const b = s2 === undefined ? tree.snapshot() : await openHistoric(tree, Number(s2))
      let n = 0
      await diffTrees(a, b, d => {
        n++
        const shown = d.path + (d.type === 'dir' ? '/' : '')
        if (v.json) printLine(io, { op: d.op, path: d.path, type: d.type })
        else io.stdout.write(`${d.op} ${escapeText(shown)}\n`)
      })
      if (!v.json) io.stderr.write(`rotree: ${n} change${n === 1 ? '' : 's'} from seq ${a.rootRecord.seq} to seq ${b.rootRecord.seq}\n`)
      return { ...treeFields(b.info, target.address), fromSeq: a.info.seq, fromRoot: a.info.root ?? null, changes: n }
    }, { faults })
    if (v.json) printLine(io, { summary: { ...sum, mirrors: faults } })
  }
}
