// rotree cat
import { pipeline } from 'node:stream/promises'
import { READER_OPTIONS, withTree } from '../common.js'

export default {
  usage: 'cat ADDR PATH',
  summary: "write a file's verified bytes to stdout",
  positionals: [2, 2],
  options: READER_OPTIONS,
  async run ([addr, p], v, io) {
    await withTree(addr, v, tree => pipeline(tree.createReadStream(p), io.stdout, { end: false }))
  }
}
