// rotree cat
import { Writable } from 'node:stream'
import { IsADirectoryError } from 'rotree-client/errors'
import { READER_OPTIONS, withTree, treeTarget, writeFile, publicStat } from '../common.js'
import { printJson, treeFields, entryFields } from '../json.js'

export default {
  usage: 'cat ADDR PATH [--json]',
  summary: "write a file's verified bytes to stdout",
  positionals: [1, 2],
  options: {
    ...READER_OPTIONS,
    json: { type: 'boolean', help: 'read and verify every byte, write none: print the file\'s stat and the tree as one JSON object (docs/JSON.md)' }
  },
  async run ([addr, p], v, io) {
    const target = await treeTarget(addr, p, v, { path: 'required' })
    if (!v.json) return withTree(target, v, tree => writeFile(tree, target.path, io.stdout))
    // JSON and a file's bytes cannot share stdout: the bytes are read, verified and dropped
    const faults = []
    const out = await withTree(target, v, async tree => {
      const s = publicStat(await tree.stat(target.path))
      if (s.type === 'dir') throw new IsADirectoryError(`${target.path} is a directory`)
      let bytes = 0
      await writeFile(tree, target.path, new Writable({ write (b, _, cb) { bytes += b.length; cb() } }))
      return { ...entryFields(target.path, s), bytes, ...treeFields(tree.info, target.address) }
    }, { faults })
    printJson(io, { ...out, mirrors: faults })
  }
}
