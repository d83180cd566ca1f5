// rotree remote: named tree addresses, so `rotree ls NAME:/docs` reads the
// tree at a saved ADDR with its saved mirrors (cli/remotes.js).
import { UsageError } from 'rotree-client/errors'
import { readRemotes, writeRemotes, checkRemoteName, remoteRecord, remotesFile } from '../remotes.js'
import path from 'node:path'
import { stateDirOf, readIdentityFile } from '../common.js'
import { escapeText } from '../escape.js'

export default {
  usage: 'remote (add NAME ADDR [--mirror URL]… [--identity FILE] | list [--json] | remove NAME)',
  summary: 'name a tree address: then NAME:PATH works wherever ADDR PATH does',
  positionals: [1, 3],
  options: {
    mirror: { type: 'string', multiple: true, arg: 'URL', help: 'add: another mirror of the tree (repeatable)' },
    identity: { type: 'string', arg: 'FILE', help: 'add: the age identity file a private tree is read with (its path is kept, not its contents)' },
    json: { type: 'boolean', help: 'list: print JSON' },
    'state-dir': { type: 'string', arg: 'DIR', help: 'where remotes.json lives (default $ROTREE_STATE, $XDG_STATE_HOME/rotree, ~/.local/state/rotree)' }
  },
  async run ([sub, ...args], v, io) {
    const dir = stateDirOf(v)
    const arity = { add: 2, list: 0, remove: 1, rm: 1 }[sub]
    if (arity === undefined) throw new UsageError(`unknown subcommand ${JSON.stringify(sub)}: add, list or remove`)
    if (args.length !== arity) throw new UsageError(`remote ${sub} takes ${arity ? `${arity === 2 ? 'NAME ADDR' : 'NAME'}` : 'no arguments'}`)
    if (v.mirror && sub !== 'add') throw new UsageError('--mirror goes with remote add')
    if (v.identity !== undefined && sub !== 'add') throw new UsageError('--identity goes with remote add')
    if (v.json && sub !== 'list') throw new UsageError('--json goes with remote list')
    if (sub === 'list') {
      const remotes = await readRemotes(dir)
      // --json: a list, each with the same keys (docs/JSON.md); `name` would be a tree's
      if (v.json) { io.stdout.write(JSON.stringify({ remotes: Object.entries(remotes).map(([remote, r]) => ({ remote, address: r.address, mirrors: r.mirrors, identity: r.identity ?? null })) }, null, 2) + '\n'); return }
      for (const [name, r] of Object.entries(remotes)) {
        io.stdout.write(`${escapeText(name)}\t${escapeText(r.address)}${r.mirrors.map(m => `\n${' '.repeat(name.length)}\t  mirror ${escapeText(m)}`).join('')}${r.identity ? `\n${' '.repeat(name.length)}\t  identity ${escapeText(r.identity)}` : ''}\n`)
      }
      return
    }
    const name = args[0]
    checkRemoteName(name)
    const remotes = await readRemotes(dir)
    if (sub === 'add') {
      if (remotes[name]) throw new UsageError(`remote ${name} exists (${remotes[name].address}); remove it first`)
      if (v.identity !== undefined) readIdentityFile(v.identity) // a typo is caught now, not at the first read
      remotes[name] = remoteRecord(args[1], v.mirror ?? [], v.identity === undefined ? undefined : path.resolve(v.identity))
      await writeRemotes(dir, remotes)
      io.stderr.write(`added ${name}: rotree ls ${name}:/ reads ${escapeText(remotes[name].address)}\n`)
    } else {
      if (!remotes[name]) throw new UsageError(`no remote named ${name} in ${remotesFile(dir)}`)
      delete remotes[name]
      await writeRemotes(dir, remotes)
    }
  }
}
