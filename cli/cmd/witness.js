// rotree witness: a C2SP tlog-witness for the logs of rotree trees (lib/witness/witness.js, docs/DEPLOY.md "Witnesses")
import fs from 'node:fs/promises'
import { UsageError } from 'rotree-client/errors'
import { isValidKeyName } from 'rotree-client/tlog'
import { readKeyFile } from '../../builder/keys.js'
import { untilSignal } from '../common.js'

export default {
  usage: 'witness --key W.key --state DIR (--log ORIGIN=VKEY … | --logs FILE) [--name NAME] [--port 8090] [--host 127.0.0.1]',
  summary: 'run a transparency-log witness: cosign the checkpoints of the logs it is given, never one that forks what it cosigned (C2SP tlog-witness)',
  positionals: [0, 0],
  options: {
    key: { type: 'string', arg: 'KEYFILE', help: 'the witness\'s key (rotree keygen); its cosignatures are cosignature/v1' },
    state: { type: 'string', arg: 'DIR', help: 'where the latest cosigned checkpoint of each log is kept (fsynced)' },
    name: { type: 'string', arg: 'NAME', help: 'the witness\'s key name, a URL without scheme (default witness/<16 hex of its key>)' },
    log: { type: 'string', multiple: true, arg: 'ORIGIN=VKEY', help: 'a log to accept: its origin and a verifier key (or 64 hex) (repeatable)' },
    logs: { type: 'string', arg: 'FILE', help: 'a file of ORIGIN=VKEY lines, besides --log' },
    port: { type: 'string', arg: 'PORT', help: 'port to listen on (default 8090; 0 picks one)' },
    host: { type: 'string', arg: 'HOST', help: 'address to bind (default 127.0.0.1)' },
    'no-fsync': { type: 'boolean', help: 'do not fsync the state (tests only: a crash may forget a cosignature)' }
  },
  async run (_, v, io) {
    if (!v.key || !v.state) throw new UsageError('witness needs --key KEYFILE and --state DIR')
    const port = v.port === undefined ? 8090 : Number(v.port)
    if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError('--port must be 0..65535')
    const { createWitness, parseLogList, parseLogFile } = await import('../../lib/witness/witness.js')
    const specs = [...(v.log ?? []), ...(v.logs ? parseLogFile(await fs.readFile(v.logs, 'utf8')) : [])]
    if (!specs.length) throw new UsageError('witness needs at least one log: --log ORIGIN=VKEY or --logs FILE')
    let logs
    try { logs = parseLogList(specs) } catch (err) { throw new UsageError(`--log: ${err.message}`) }
    const key = await readKeyFile(v.key)
    if (key.warning) io.stderr.write(`rotree: warning: ${key.warning}\n`)
    const name = v.name ?? `witness/${key.publicKey.slice(0, 16)}`
    if (!isValidKeyName(name)) throw new UsageError(`--name ${JSON.stringify(name)}: no spaces and no +`)
    const w = await createWitness({ name, key, stateDir: v.state, logs, fsync: !v['no-fsync'] })
    const { url } = await w.listen({ port, host: v.host ?? '127.0.0.1' })
    io.stdout.write(`witness ${name} at ${url}\n`) // tests and scripts parse this line: keep "at URL"
    io.stdout.write(`verifier key: ${w.verifierKey}\n`)
    io.stdout.write(`name it in a trust document: rotree trust update OUT --add-witness ${name}=${url}=${w.verifierKey}\n`)
    io.stdout.write(`cosigning ${logs.size} log${logs.size === 1 ? '' : 's'}: ${[...logs.keys()].join(', ')}\n`)
    await untilSignal()
    await w.close()
  }
}
