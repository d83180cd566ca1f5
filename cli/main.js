// The `rotree` command line (DESIGN.md "The command line"). Exit status: 0 on
// success, 2 on usage errors, 1 on any other failure, which prints one line
// `rotree: CODE: message` (a stack trace only with --debug).
import { parseArgs } from 'node:util'
import { UsageError } from 'rotree-client/errors'
import { COMMAND_NAMES, loadCommand } from './commands.js'

async function usage () {
  const cmds = (await Promise.all(COMMAND_NAMES.map(loadCommand))).filter(Boolean)
  return `rotree: publish a directory as a signed, content-addressed tree; read it back verified

usage: rotree <command> [options]

commands:
${cmds.map(c => `  ${c.usage.padEnd(58)} ${c.summary}`).join('\n')}

ADDR is <mirror-url>#<public-key>. Run 'rotree <command> --help' for a command's options.
`
}

export async function main (argv, io = { stdout: process.stdout, stderr: process.stderr }) {
  const debug = argv.includes('--debug')
  const [name, ...rest] = argv.filter(a => a !== '--debug')
  if (!name || name === '--help' || name === '-h' || name === 'help') { (name ? io.stdout : io.stderr).write(await usage()); return name ? 0 : 2 }
  if (name === '--version') { io.stdout.write('rotree 0.1.0\n'); return 0 }
  const cmd = await loadCommand(name)
  if (!cmd) { io.stderr.write(`rotree: unknown command ${JSON.stringify(name)}\n\n${await usage()}`); return 2 }
  const help = `usage: rotree ${cmd.usage}\n\n${cmd.summary}\n\noptions:\n${Object.entries(cmd.options ?? {}).map(([k, v]) => `  --${k}${v.type === 'string' ? ' ' + (v.arg ?? 'VALUE') : ''}`.padEnd(26) + ' ' + v.help).join('\n')}\n  --debug                  print stack traces\n  --help                   this text\n`
  let args
  try {
    const options = { help: { type: 'boolean', short: 'h' } }
    for (const [k, v] of Object.entries(cmd.options ?? {})) {
      options[k] = { type: v.type, multiple: !!v.multiple }
      if (v.short) options[k].short = v.short
    }
    args = parseArgs({ args: rest, options, allowPositionals: true, strict: true })
  } catch (err) {
    io.stderr.write(`rotree ${name}: ${err.message}\n\n${help}`); return 2
  }
  if (args.values.help) { io.stdout.write(help); return 0 }
  const [min, max] = cmd.positionals
  if (args.positionals.length < min || args.positionals.length > max) {
    io.stderr.write(`rotree ${name}: expected ${min === max ? min : `${min} to ${max}`} arguments\n\n${help}`); return 2
  }
  try {
    return (await cmd.run(args.positionals, args.values, io)) ?? 0
  } catch (err) {
    if (err instanceof UsageError) { io.stderr.write(`rotree ${name}: ${err.message}\n\n${help}`); return 2 }
    const code = err.code && String(err.code).startsWith('ROTREE_') ? err.code : err.code ? `ROTREE_SYSTEM_${err.code}` : 'ROTREE_INTERNAL'
    io.stderr.write(`rotree: ${code}: ${oneLine(err.message)}\n`)
    if (debug) io.stderr.write((err.stack ?? String(err)) + '\n')
    return 1
  }
}

function oneLine (s) { return String(s).replace(/\s*\n\s*/g, ' ') }
