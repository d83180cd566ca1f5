// rotree get
import path from 'node:path'
import { UsageError } from 'rotree-client/errors'
import { getPath } from '../download.js'
import { progressBar, fmtBytes } from '../progress.js'
import { READER_OPTIONS, withTree, positiveInt } from '../common.js'

export default {
  usage: 'get ADDR PATH -o DEST',
  summary: 'verified download of a file, or of a directory recursively',
  positionals: [2, 2],
  options: {
    ...READER_OPTIONS,
    output: { type: 'string', short: 'o', arg: 'DEST', help: 'where to write (default: the last path component)' },
    jobs: { type: 'string', arg: 'N', help: 'files fetched in parallel (default 8)' }
  },
  async run ([addr, p], v, io) {
    const dest = v.output ?? path.posix.basename(path.posix.normalize('/' + p))
    if (!dest) throw new UsageError('-o DEST is required for the tree root')
    await withTree(addr, v, async tree => {
      const bar = progressBar({ label: 'get', stream: io.stderr })
      const r = await getPath(tree, p, dest, { jobs: v.jobs ? positiveInt(v.jobs, 'jobs') : undefined, onProgress: (d, t) => bar.update(d, t) })
      bar.done()
      const st = tree.stats
      io.stderr.write(`got ${dest}: ${r.files} files, ${r.dirs} dirs, ${r.symlinks} symlinks, ${fmtBytes(r.bytes)} verified; ${st.requests} requests, seq ${tree.info.seq}\n`)
    })
  }
}
