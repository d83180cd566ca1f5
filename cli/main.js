// The `rotree` command line. Exit status: 0 on success, 2 on usage errors
// (one line saying what is wrong and one naming the command's --help), 130
// when interrupted (SIGINT), 1 on any other failure, which prints one line
// `rotree: CODE: message` (a stack trace only with --debug); with --json
// the failure is also one JSON object on stdout (docs/JSON.md). Everything
// printed for a human is escaped (cli/escape.js): messages carry names a
// hostile publisher chose.
import { parseArgs } from 'node:util'
import { UsageError } from 'rotree-client/errors'
import { whatToDo } from './what-to-do.js'
import { COMMAND_NAMES, loadCommand } from './commands.js'
import { escapeText } from './escape.js'
import { errorJson } from './json.js'

async function usage () {
  const cmds = (await Promise.all(COMMAND_NAMES.map(loadCommand))).filter(Boolean)
  return `rotree: publish a directory as a signed, content-addressed tree; read it back verified

usage: rotree <command> [options]

commands:
${cmds.map(c => `  ${c.usage.padEnd(58)} ${c.summary}`).join('\n')}

ADDR is <mirror-url>#<public-key>, or NAME:PATH for a remote (rotree remote add); ADDR@SEQ is an old root (rotree log lists them).
Run 'rotree help <command>' or 'rotree <command> --help' for a command's options.
`
}

/** A command's --help text. */
export function helpText (name, cmd) {
  const flag = (k, v) => (v.short ? `-${v.short}, ` : '') + `--${k}` + (v.type === 'string' ? ' ' + (v.arg ?? 'VALUE') : '')
  const lines = Object.entries(cmd.options ?? {}).map(([k, v]) => `  ${flag(k, v).padEnd(24)} ${v.help}`)
  const help = cmd.options?.help ? [] : [`  ${(shortHelp(cmd) ? '-h, ' : '') + '--help'}`.padEnd(26) + ' this text']
  return `usage: rotree ${cmd.usage}\n\n${cmd.summary}\n\noptions:\n${[...lines, '  --debug                  print stack traces', ...help].join('\n')}\n`
}

// -h is --help unless the command gives -h a meaning of its own (ls -h: human sizes)
function shortHelp (cmd) { return !Object.values(cmd.options ?? {}).some(o => o.short === 'h') }

/**
 * parseArgs, non-strict, then checked here so a mistake reads as one plain
 * line (Node's own messages run to three lines with unbalanced quotes).
 */
// `-o FILE` where the file is an argument (rotree build SRC OUT, keygen KEYFILE):
// say which argument, from the usage line's first form
const OUTPUT_NAMES = new Set(['o', 'out', 'output'])
const DEST_ARGS = ['OUT', 'DEST', 'DIR', 'KEYFILE', 'FILE']
function outputHint (cmd, name) {
  if (!OUTPUT_NAMES.has(name)) return ''
  const first = cmd.usage.split(' | ')[0].split(/ [[(]/)[0]
  const dest = first.split(' ').slice(1).find(w => DEST_ARGS.includes(w))
  return dest ? `: ${dest} is an argument here (rotree ${first})` : ''
}

function parse (cmd, rest) {
  const options = { help: { type: 'boolean' } }
  if (shortHelp(cmd)) options.help.short = 'h'
  const defs = { ...(cmd.options ?? {}) }
  for (const [k, v] of Object.entries(defs)) {
    options[k] = { type: v.type, multiple: !!v.multiple }
    if (v.short) options[k].short = v.short
  }
  const r = parseArgs({ args: rest, options, allowPositionals: true, strict: false, tokens: true })
  for (const t of r.tokens) {
    if (t.kind !== 'option') continue
    const o = options[t.name]
    if (!o) {
      const near = t.rawName.startsWith('--') ? nearest(t.name, Object.keys(options)) : null
      throw new UsageError(`unknown option ${t.rawName}${near ? `: did you mean --${near}?` : outputHint(cmd, t.name)}`)
    }
    if (o.type === 'boolean' && t.value !== undefined) throw new UsageError(`option ${t.rawName} takes no value`)
    if (o.type === 'string') {
      const arg = defs[t.name]?.arg ?? 'VALUE'
      if (t.value === undefined) throw new UsageError(`option ${t.rawName} needs a value (${arg})`)
      // `-o --json`: a forgotten value, not a value that starts with a dash (write --output=--json for that)
      if (!t.inlineValue && t.value.startsWith('-') && t.value !== '-') throw new UsageError(`option ${t.rawName} needs a value (${arg}), got the option ${t.value}`)
    }
  }
  return r
}

export async function main (argv, io = { stdout: process.stdout, stderr: process.stderr }) {
  const debug = argv.includes('--debug')
  let [name, ...rest] = argv.filter(a => a !== '--debug')
  if (name === 'help' && rest.length) { name = rest[0]; rest = ['--help'] }
  if (!name || name === '--help' || name === '-h' || name === 'help') { (name ? io.stdout : io.stderr).write(await usage()); return name ? 0 : 2 }
  if (name === '--version') { io.stdout.write('rotree 0.1.0\n'); return 0 }
  const cmd = await loadCommand(name)
  if (!cmd) {
    const near = nearest(name, COMMAND_NAMES)
    io.stderr.write(`rotree: unknown command ${escapeText(JSON.stringify(name))}${near ? `: did you mean rotree ${near}?` : ''}\nrun rotree help for the list of commands\n`)
    return 2
  }
  // --json: a failure is a JSON object on stdout too (docs/JSON.md), the lines for a person stay on stderr
  const json = rest.includes('--json') && Object.hasOwn(cmd.options ?? {}, 'json')
  const usageError = msg => {
    io.stderr.write(`rotree ${name}: ${escapeText(oneLine(msg))}\nusage: rotree ${cmd.usage}; run rotree ${name} --help\n`)
    if (json) io.stdout.write(JSON.stringify(errorJson('ROTREE_USAGE', oneLine(msg), `usage: rotree ${cmd.usage}; run rotree ${name} --help`)) + '\n')
    return 2
  }
  let args
  try {
    args = parse(cmd, rest)
  } catch (err) {
    if (err instanceof UsageError) return usageError(err.message)
    throw err
  }
  if (args.values.help) { io.stdout.write(helpText(name, cmd)); return 0 }
  const [min, max] = cmd.positionals
  if (args.positionals.length < min || args.positionals.length > max) {
    const n = args.positionals.length
    const extra = args.positionals.slice(max)
    // `rotree get ADDR PATH dest`: the destination of a command that takes one with -o
    const asOutput = extra.length === 1 && Object.values(cmd.options ?? {}).some(o => o.short === 'o') ? `: did you mean -o ${JSON.stringify(extra[0])}?` : ''
    return usageError(`expected ${min === max ? min : `${min} to ${max}`} arguments, got ${n}${n > max ? ` (${extra.map(a => JSON.stringify(a)).join(' ')} too many)${asOutput}` : ''}`)
  }
  try {
    return (await cmd.run(args.positionals, args.values, io)) ?? 0
  } catch (e) {
    if (e instanceof UsageError) return usageError(e.message)
    // a reader without --grant refused by a gated edge: told so, the mirror not blamed (gated-edge.js)
    const err = e?.code === 'ROTREE_MIRROR_HTTP' || e?.code === 'ROTREE_ALL_MIRRORS_FAILED'
      ? await (await import('./gated-edge.js')).noGrantRefusal(e, cmd, args.values)
      : e
    const code = err.code && String(err.code).startsWith('ROTREE_') ? err.code : err.code ? `ROTREE_SYSTEM_${err.code}` : 'ROTREE_INTERNAL'
    io.stderr.write(`rotree: ${code}: ${escapeText(oneLine(err.message))}\n`)
    // the last line: what a person can do about it (what-to-do.js; web/explain.js says it for a browser)
    const todo = whatToDo(err)
    if (todo) io.stderr.write(`  ${todo}\n`)
    if (json) io.stdout.write(JSON.stringify(errorJson(code, oneLine(err.message), todo, err)) + '\n')
    if (debug) io.stderr.write((err.stack ?? String(err)) + '\n')
    return code === 'ROTREE_ABORTED' ? 130 : 1
  }
}

/** The command closest to a mistyped one (at most two edits, or a prefix), or null. */
export function nearest (word, names) {
  let best = null; let bestD = 3
  for (const n of names) {
    const d = n.startsWith(word) && word.length >= 2 ? 1 : editDistance(word, n)
    if (d < bestD) { best = n; bestD = d }
  }
  return best
}

function editDistance (a, b) {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const cur = [i]
    for (let j = 1; j <= b.length; j++) cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1))
    prev = cur
  }
  return prev[b.length]
}

function oneLine (s) { return String(s).replace(/\s*\n\s*/g, ' ') }
