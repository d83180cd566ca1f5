// rotree resign
import { UsageError } from 'rotree-client/errors'
import { readKeyFiles } from '../../builder/keys.js'
import { resign } from '../../builder/sign.js'
import { parseDuration } from '../../builder/duration.js'
import { readPublishedAny } from '../../lib/published/publish.js'
import { NO_URL, keyAndName } from '../json.js'

export default {
  usage: 'resign OUT --key KEYFILE… [--ttl 7d] [--if-expiring-within 2d]',
  summary: 're-issue fsinfo.json over the current root with a higher sequence number and a new expiry (no blob changes); format 2: with the timestamp key',
  positionals: [1, 1],
  options: {
    key: { type: 'string', multiple: true, arg: 'KEYFILE', help: 'format 1: the key that signed OUT; format 2: a timestamp key (repeatable; a release key too re-signs a release the keys in force no longer accept)' },
    ttl: { type: 'string', arg: 'DURATION', help: 'how long the re-signed root is valid (default 7d)' },
    'if-expiring-within': { type: 'string', arg: 'DURATION', help: 'do nothing (exit 0) unless the current root expires within DURATION: run it from a timer' },
    url: { type: 'string', arg: 'URL', help: 'the mirror URL to print in the address line' },
    'no-fsync': { type: 'boolean', help: 'do not fsync fsinfo.json and its history entry' },
    'no-witness': { type: 'boolean', help: 'publish without the cosignatures of the trust document\'s witnesses (readers that require them refuse the tree until a later publish is cosigned)' },
    json: { type: 'boolean', help: 'print the result as JSON' }
  },
  async run ([out], v, io) {
    if (!v.key?.length) throw new UsageError('--key KEYFILE is required')
    const ttlMs = parseDuration(v.ttl ?? '7d')
    if (!ttlMs) throw new UsageError(`--ttl ${v.ttl}: expected a duration such as 30m, 12h, 7d`)
    let ifExpiringWithinMs
    if (v['if-expiring-within'] !== undefined && !(ifExpiringWithinMs = parseDuration(v['if-expiring-within']))) {
      throw new UsageError(`--if-expiring-within ${v['if-expiring-within']}: expected a duration such as 12h, 2d`)
    }
    const keys = await readKeyFiles(v.key, m => io.stderr.write(`rotree: warning: ${m}\n`))
    const o = { ttlMs, fsync: !v['no-fsync'], ifExpiringWithinMs, witness: !v['no-witness'] }
    let r
    if ((await readPublishedAny(out))?.version === 2) {
      const { resignV2 } = await import('../../builder/release.js')
      r = await resignV2(out, keys, { ...o, url: v.url })
    } else {
      if (keys.length > 1) throw new UsageError('a format-1 tree is re-signed by its one --key')
      r = await resign(out, keys[0], o)
      r.address = `${v.url ?? NO_URL}#${keys[0].publicKey}`
    }
    // fsinfo.json never outlives its release (or trust document): a longer --ttl is capped, said so
    const asked = Date.now() + ttlMs
    if (!r.skipped && !r.retired && r.expires && Date.parse(r.expires) < asked - 60e3) {
      io.stderr.write(`rotree: warning: --ttl ${v.ttl ?? '7d'} asked for ${new Date(asked).toISOString()}, but fsinfo.json cannot outlive ${r.releaseExpires !== undefined ? `release ${r.releaseSeq} (until ${r.releaseExpires})` : 'what it signs'}: it expires ${r.expires}; publish a new release (rotree build, or rotree sign with the release keys) to go further\n`)
    }
    if (v.json) { io.stdout.write(JSON.stringify(jsonOf(r), null, 2) + '\n'); return }
    if (r.skipped) {
      io.stdout.write(`${out} is valid until ${r.expires} (${(r.leftMs / 86400e3).toFixed(1)} days), not within ${v['if-expiring-within']}: nothing re-signed\n`)
      return
    }
    if (r.retired) {
      io.stdout.write(`published the retirement of ${out} (trust document ${r.trustSeq}, seq ${r.seq}): readers refuse the tree from their next refresh\naddress: ${r.address}\n`)
      return
    }
    io.stdout.write(`re-signed ${out}: seq ${r.previousSeq} → ${r.seq}, root ${r.private ? '(private)' : r.root}, expires ${r.expires}` +
      (r.releaseSeq !== undefined ? ` (release ${r.releaseSeq}${r.trustSeq ? `, trust document ${r.trustSeq}` : ''})` : '') + `\naddress: ${r.address}\n`)
  }
}

// --json (docs/JSON.md): one shape for format 1 and 2, re-signed, skipped or retired: null where a key does not apply
function jsonOf (r) {
  const keys = ['skipped', 'retired', 'previousSeq', 'seq', 'releaseSeq', 'root', 'private', 'issued', 'expires', 'releaseExpires', 'trustSeq', 'blobs', 'leftMs']
  const o = Object.fromEntries(keys.map(k => [k, r[k] ?? null]))
  return { ...o, skipped: !!r.skipped, retired: !!r.retired, private: !!r.private, address: r.address, ...keyAndName(r.address) }
}
