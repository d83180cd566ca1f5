// rotree log-audit
import { auditLog } from 'rotree-client/log'
import { ERROR_TABLE } from 'rotree-client/errors'
import * as errors from 'rotree-client/errors'
import { READER_OPTIONS, treeAddress, withTree } from '../common.js'
import { escapeText } from '../escape.js'

/** The typed error of a problem's code (a split view first: it is what the log is for). */
function problemError (problems) {
  const first = problems.find(p => p.code === 'ROTREE_SPLIT_VIEW') ?? problems[0]
  const row = ERROR_TABLE.find(r => r[0] === first.code)
  const Cls = row ? errors[row[1]] : errors.BadFormatError
  return new Cls(`the log audit found ${problems.length} problem${problems.length === 1 ? '' : 's'}; the first: ${first.message}`, { details: { problems } })
}

export default {
  usage: 'log-audit ADDR',
  summary: 'fetch the tree\'s whole transparency log (log/, docs/FORMAT.md §13) from its mirrors and check it: the signed checkpoint, every tile and entry, every leaf a root of the tree, no sequence number with two roots',
  positionals: [1, 1],
  options: { ...READER_OPTIONS },
  async run ([addr], v, io) {
    const target = await treeAddress(addr, v)
    await withTree(target, v, async tree => {
      const a = await auditLog(tree)
      const by = a.signedBy.map(s => `${s.name}+${s.id.toString(16).padStart(8, '0')}`).join(', ')
      io.stdout.write(`log ${a.origin}: ${a.size} leaves, root ${a.root}, checkpoint signed by ${by}\n`)
      for (const l of a.leaves) {
        io.stdout.write(l.ok
          ? `leaf ${l.index}  seq ${l.seq}${l.release !== undefined ? `  release ${l.release}` : ''}  ${l.root ? `root ${l.root}` : 'private'}\n`
          : `leaf ${l.index}  seq ${l.seq}  REFUSED ${l.code}: ${escapeText(l.message)}\n`)
      }
      io.stdout.write(`current fsinfo.json: seq ${a.current.seq}, ${a.current.logged ? 'in the log' : 'not in the log yet (published without the keys that sign the log; the next publish adds it)'}\n`)
      for (const p of a.problems) io.stdout.write(`PROBLEM ${p.code}: ${escapeText(p.message)}\n`)
      if (a.problems.length) throw problemError(a.problems)
      io.stdout.write('ok: every leaf is a root of this tree, in sequence, each sequence once\n')
    })
  }
}
