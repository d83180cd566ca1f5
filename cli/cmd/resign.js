// rotree resign
import { UsageError } from 'rotree-client/errors'
import { readKeyFile } from '../../builder/keys.js'
import { resign } from '../../builder/sign.js'
import { parseDuration } from '../../builder/duration.js'

export default {
  usage: 'resign OUT --key KEYFILE [--ttl 7d]',
  summary: 're-issue the current root with a higher sequence number and a new expiry (no blob changes)',
  positionals: [1, 1],
  options: {
    key: { type: 'string', arg: 'KEYFILE', help: 'the secret key that signed OUT; required' },
    ttl: { type: 'string', arg: 'DURATION', help: 'how long the re-signed root is valid (default 7d)' },
    'no-fsync': { type: 'boolean', help: 'do not fsync fsinfo.json and its history entry' },
    json: { type: 'boolean', help: 'print the result as JSON' }
  },
  async run ([out], v, io) {
    if (!v.key) throw new UsageError('--key KEYFILE is required')
    const ttlMs = parseDuration(v.ttl ?? '7d')
    if (!ttlMs) throw new UsageError(`--ttl ${v.ttl}: expected a duration such as 30m, 12h, 7d`)
    const key = await readKeyFile(v.key)
    if (key.warning) io.stderr.write(`rotree: warning: ${key.warning}\n`)
    const r = await resign(out, key, { ttlMs, fsync: !v['no-fsync'] })
    if (v.json) { io.stdout.write(JSON.stringify(r, null, 2) + '\n'); return }
    io.stdout.write(`re-signed ${out}: seq ${r.previousSeq} → ${r.seq}, root ${r.root}, expires ${r.expires}\n`)
  }
}
