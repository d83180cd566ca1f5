// rotree log
import { treeHistory } from 'rotree-client/tree'
import { READER_OPTIONS, positiveInt, treeAddress, withTree } from '../common.js'
import { escapeText } from '../escape.js'

export default {
  usage: 'log ADDR [--limit N] [--json]',
  summary: 'list the roots the tree published, newest first, each checked against its key',
  positionals: [1, 1],
  options: {
    ...READER_OPTIONS,
    limit: { type: 'string', arg: 'N', help: 'the newest N entries (default 20)' },
    json: { type: 'boolean', help: 'print the entries as JSON' }
  },
  async run ([addr], v, io) {
    const limit = v.limit === undefined ? 20 : positiveInt(v.limit, 'limit')
    const target = await treeAddress(addr, v)
    await withTree(target, v, async tree => {
      const current = tree.rootRecord.seq
      const h = await treeHistory(tree, { limit })
      if (v.json) {
        io.stdout.write(JSON.stringify({
          total: h.total,
          entries: h.entries.map(e => e.ok
            ? { seq: e.seq, ok: true, current: e.seq === current, issued: e.info.issued, expires: e.info.expires, ...(e.info.private ? { private: true, root: null, epoch: e.info.info.access.epoch } : { root: e.info.root.hash, rootSize: e.info.root.size }) }
            : { seq: e.seq, ok: false, code: e.code, message: e.message })
        }, null, 2) + '\n')
        return
      }
      for (const e of h.entries) {
        if (e.ok) io.stdout.write(`seq ${e.seq}${e.seq === current ? ' (current)' : ''}  issued ${e.info.issued}  expires ${e.info.expires}  ${e.info.private ? `private, epoch ${e.info.info.access.epoch}` : `root ${e.info.root.hash}`}\n`)
        else io.stdout.write(`seq ${e.seq}  REFUSED ${e.code}: ${escapeText(e.message)}\n`)
      }
      if (h.total > h.entries.length) io.stdout.write(`(${h.total - h.entries.length} older; --limit ${h.total} lists all)\n`)
    })
  }
}
