// rotree log
import { treeHistory } from 'rotree-client/tree'
import { READER_OPTIONS, positiveInt, treeAddress, withTree } from '../common.js'
import { escapeText } from '../escape.js'
import { UsageError } from 'rotree-client/errors'
import { printJson, treeFields } from '../json.js'

export default {
  usage: 'log ADDR [--limit N] [--json] | log audit ADDR',
  summary: 'list the roots the tree published, newest first, each checked against its key; `log audit ADDR` is rotree log-audit',
  positionals: [1, 2],
  options: {
    ...READER_OPTIONS,
    limit: { type: 'string', arg: 'N', help: 'the newest N entries (default 20)' },
    json: { type: 'boolean', help: 'print one JSON object: the tree and its entries (docs/JSON.md)' }
  },
  async run ([addr, more], v, io) {
    // `rotree log audit ADDR`: the log's audit (log-audit.js); "audit" is never an address (no # and no NAME:)
    if (addr === 'audit' && more !== undefined) return (await import('./log-audit.js')).default.run([more], v, io)
    if (more !== undefined) throw new UsageError(`log takes one ADDR (or: rotree log audit ADDR), not ${JSON.stringify(more)}`)
    const limit = v.limit === undefined ? 20 : positiveInt(v.limit, 'limit')
    const target = await treeAddress(addr, v)
    const faults = []
    const out = await withTree(target, v, async tree => {
      const current = tree.rootRecord.seq
      const h = await treeHistory(tree, { limit })
      if (v.json) return { ...treeFields(tree.info, target.address), total: h.total, entries: h.entries.map(e => logEntry(e, current)) }
      for (const e of h.entries) {
        if (e.ok) io.stdout.write(`seq ${e.seq}${e.seq === current ? ' (current)' : ''}  issued ${e.info.issued}  expires ${e.info.expires}  ${e.info.private ? `private, epoch ${e.info.info.access.epoch}` : `root ${e.info.root.hash}`}\n`)
        else io.stdout.write(`seq ${e.seq}  REFUSED ${e.code}: ${escapeText(e.message)}\n`)
      }
      if (h.total > h.entries.length) io.stdout.write(`(${h.total - h.entries.length} older; --limit ${h.total} lists all)\n`)
    }, { faults })
    if (v.json) printJson(io, { ...out, mirrors: faults })
  }
}

// one history entry, every key present (docs/JSON.md): null where it does not apply
function logEntry (e, current) {
  const o = { seq: e.seq, ok: e.ok, current: e.seq === current, issued: null, expires: null, root: null, rootSize: null, private: false, epoch: null, code: null, message: null }
  if (!e.ok) return { ...o, code: e.code, message: e.message }
  Object.assign(o, { issued: e.info.issued, expires: e.info.expires })
  if (e.info.private) return { ...o, private: true, epoch: e.info.info.access.epoch }
  return { ...o, root: e.info.root.hash, rootSize: e.info.root.size }
}
