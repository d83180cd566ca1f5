// rotree access: the readers of a private tree (builder/access.js)
import fs from 'node:fs/promises'
import { UsageError } from 'rotree-client/errors'
import { listAccess, changeAccess } from '../../builder/access.js'
import { checkReader, parseReaders } from '../../builder/private-tree.js'

export default {
  usage: 'access (add|remove) OUT [RECIPIENT]… [--readers FILE] | access list OUT [--json]',
  summary: 'add or remove readers of a private tree (published with the next build or resign), or list them',
  positionals: [2, Infinity],
  options: {
    readers: { type: 'string', multiple: true, arg: 'FILE', help: 'add/remove: recipients from a file, one per line (# comments)' },
    json: { type: 'boolean', help: 'print JSON' },
    'no-fsync': { type: 'boolean', help: 'do not fsync the state file' }
  },
  async run ([sub, out, ...rs], v, io) {
    if (sub === 'list') {
      if (rs.length || v.readers) throw new UsageError('access list takes OUT only')
      const r = await listAccess(out)
      if (v.json) { io.stdout.write(JSON.stringify(r, null, 2) + '\n'); return }
      for (const x of r.readers) io.stdout.write(x + '\n')
      io.stderr.write(`${r.readers.length} reader${r.readers.length === 1 ? '' : 's'}, epoch ${r.epoch}` +
        (r.pending ? `; not published yet (published: ${r.published ? `epoch ${r.published.epoch}` : 'nothing'}): rotree resign ${out} --key KEYFILE, or the next build\n` : '; published\n'))
      return
    }
    if (sub !== 'add' && sub !== 'remove') throw new UsageError(`unknown subcommand ${JSON.stringify(sub)}: add, remove or list`)
    const readers = rs.map(r => checkReader(r, 'reader'))
    for (const f of v.readers ?? []) {
      let text
      try { text = await fs.readFile(f, 'utf8') } catch (err) { throw new UsageError(`--readers ${f}: ${err.code ?? err.message}`) }
      readers.push(...parseReaders(text, f))
    }
    const r = await changeAccess(out, sub, readers, { fsync: !v['no-fsync'] })
    if (v.json) { io.stdout.write(JSON.stringify(r, null, 2) + '\n'); return }
    const verb = sub === 'add' ? 'added' : 'removed'
    io.stderr.write(`${verb} ${r.changed.length} reader${r.changed.length === 1 ? '' : 's'} (${readers.length - r.changed.length} ${sub === 'add' ? 'were readers already' : 'were not readers'}); ${r.readers} now, epoch ${r.epoch}` +
      (r.newEpoch ? ' (a new epoch key: the removed readers decrypt nothing published from now on)' : '') +
      (r.changed.length ? `\npublish it: rotree resign ${out} --key KEYFILE, or the next build\n` : '\n'))
  }
}
