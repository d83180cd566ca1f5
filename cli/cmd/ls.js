// rotree ls
import { READER_OPTIONS, withTree, modeString, fmtTime, publicStat } from '../common.js'
import { escapeText } from '../escape.js'

export default {
  usage: 'ls ADDR [PATH]',
  summary: 'list a directory, verified',
  positionals: [1, 2],
  options: { ...READER_OPTIONS, json: { type: 'boolean', help: 'one JSON object per line' } },
  async run ([addr, p = '/'], v, io) {
    await withTree(addr, v, async tree => {
      const s = await tree.stat(p)
      const list = s.type === 'dir' ? tree.list(p) : [await tree.lstat(p)]
      for await (const e of list) {
        if (v.json) { io.stdout.write(JSON.stringify(publicStat(e)) + '\n'); continue }
        // names and targets are the publisher's: escaped for the terminal (--json stays exact)
        const name = escapeText(e.name) + (e.type === 'dir' ? '/' : '') + (e.type === 'symlink' ? ' -> ' + escapeText(e.target) : '')
        io.stdout.write(`${modeString(e)} ${String(e.type === 'dir' ? e.entries : e.size).padStart(12)} ${fmtTime(e.mtimeMs)} ${name}\n`)
      }
    })
  }
}
