// rotree cat
import { READER_OPTIONS, withTree, treeTarget, writeFile } from '../common.js'

export default {
  usage: 'cat ADDR PATH',
  summary: "write a file's verified bytes to stdout",
  positionals: [1, 2],
  options: READER_OPTIONS,
  async run ([addr, p], v, io) {
    const target = await treeTarget(addr, p, v, { path: 'required' })
    await withTree(target, v, tree => writeFile(tree, target.path, io.stdout))
  }
}
