// rotree resign
import { UsageError } from 'rotree-client/errors'
import { readKeyFile } from '../../builder/keys.js'
import { resign } from '../../builder/sign.js'
import { parseDuration } from '../../builder/duration.js'

export default {
  usage: 'resign OUT --key KEYFILE [--ttl 7d] [--if-expiring-within 2d]',
  summary: 're-issue the current root with a higher sequence number and a new expiry (no blob changes)',
  positionals: [1, 1],
  options: {
    key: { type: 'string', arg: 'KEYFILE', help: 'the secret key that signed OUT; required' },
    ttl: { type: 'string', arg: 'DURATION', help: 'how long the re-signed root is valid (default 7d)' },
    'if-expiring-within': { type: 'string', arg: 'DURATION', help: 'do nothing (exit 0) unless the current root expires within DURATION: run it from a timer' },
    'no-fsync': { type: 'boolean', help: 'do not fsync fsinfo.json and its history entry' },
    json: { type: 'boolean', help: 'print the result as JSON' }
  },
  async run ([out], v, io) {
    if (!v.key) throw new UsageError('--key KEYFILE is required')
    const ttlMs = parseDuration(v.ttl ?? '7d')
    if (!ttlMs) throw new UsageError(`--ttl ${v.ttl}: expected a duration such as 30m, 12h, 7d`)
    let ifExpiringWithinMs
    if (v['if-expiring-within'] !== undefined && !(ifExpiringWithinMs = parseDuration(v['if-expiring-within']))) {
      throw new UsageError(`--if-expiring-within ${v['if-expiring-within']}: expected a duration such as 12h, 2d`)
    }
    const key = await readKeyFile(v.key)
    if (key.warning) io.stderr.write(`rotree: warning: ${key.warning}\n`)
    const r = await resign(out, key, { ttlMs, fsync: !v['no-fsync'], ifExpiringWithinMs })
    if (v.json) { io.stdout.write(JSON.stringify(r, null, 2) + '\n'); return }
    if (r.skipped) {
      io.stdout.write(`${out} is valid until ${r.expires} (${(r.leftMs / 86400e3).toFixed(1)} days), not within ${v['if-expiring-within']}: nothing re-signed\n`)
      return
    }
    io.stdout.write(`re-signed ${out}: seq ${r.previousSeq} → ${r.seq}, root ${r.root}, expires ${r.expires}\n`)
  }
}
