// rotree sign
import fs from 'node:fs/promises'
import path from 'node:path'
import { UsageError } from 'rotree-client/errors'
import { readKeyFile } from '../../builder/keys.js'
import { signUnsigned, installSigned } from '../../builder/sign.js'
import { parseDuration } from '../../builder/duration.js'

export default {
  usage: 'sign FILE [--key KEYFILE] (-o FSINFO | --publish OUT)',
  summary: 'sign an unsigned root (from build --unsigned) offline; or publish a signed fsinfo.json into OUT',
  positionals: [1, 1],
  options: {
    key: { type: 'string', arg: 'KEYFILE', help: 'secret key: sign FILE (an unsigned.json); without it FILE must already be signed' },
    output: { type: 'string', short: 'o', arg: 'FSINFO', help: 'write the signed fsinfo.json here' },
    publish: { type: 'string', arg: 'OUT', help: 'check the signed root against OUT (key, seq, every blob present) and publish it there' },
    ttl: { type: 'string', arg: 'DURATION', help: 'with --key: re-stamp issued = now and expires = now + DURATION (default: as built)' },
    'no-fsync': { type: 'boolean', help: 'do not fsync what is written' },
    json: { type: 'boolean', help: 'print the result as JSON' }
  },
  async run ([file], v, io) {
    if (!v.output === !v.publish) throw new UsageError('give exactly one of -o FSINFO and --publish OUT')
    if (!v.key && v.output) throw new UsageError('-o needs --key KEYFILE (without a key, sign only publishes a signed file)')
    if (!v.key && v.ttl) throw new UsageError('--ttl needs --key KEYFILE')
    let ttlMs
    if (v.ttl !== undefined && !(ttlMs = parseDuration(v.ttl))) throw new UsageError(`--ttl ${v.ttl}: expected a duration such as 30m, 12h, 7d`)
    const input = await fs.readFile(file)
    let text = input
    const r = {}
    if (v.key) {
      const key = await readKeyFile(v.key)
      if (key.warning) io.stderr.write(`rotree: warning: ${key.warning}\n`)
      const s = signUnsigned(input, key, { ttlMs })
      text = s.text
      Object.assign(r, { signed: true, seq: s.fields.seq, root: s.fields.root, issued: s.fields.issued, expires: s.fields.expires })
      if (v.output) {
        const tmp = path.join(path.dirname(v.output), `.${path.basename(v.output)}.tmp-${process.pid}`)
        await fs.writeFile(tmp, text, { mode: 0o644 })
        await fs.rename(tmp, v.output)
        r.output = v.output
      }
    }
    if (v.publish) {
      const p = await installSigned(v.publish, text, { fsync: !v['no-fsync'] })
      Object.assign(r, { published: v.publish, seq: p.seq, root: p.root, already: p.already, blobs: p.blobs })
    }
    if (v.json) { io.stdout.write(JSON.stringify(r, null, 2) + '\n'); return }
    if (r.signed) io.stdout.write(`signed seq ${r.seq}, root ${r.root}, expires ${r.expires}${r.output ? ` → ${r.output}` : ''}\n`)
    if (r.published) io.stdout.write(r.already ? `${r.published} already publishes seq ${r.seq}\n` : `published seq ${r.seq} (root ${r.root}, ${r.blobs} blobs checked) in ${r.published}\n`)
  }
}
