// rotree sign
//
// Format version 2 (a release in OUT/unsigned.json, from build --unsigned):
//   sign OUT --key R1                                   one release signature
//   sign OUT --key R2 --timestamp-key T --publish       at the threshold: fsinfo.json, published
//   sign FILE --key R1                                  the same on a copy of unsigned.json (another machine)
//   sign FILE --publish OUT --timestamp-key T           publish a release signed elsewhere
//   sign FILE --key K -o fsinfo.json                    a single-key tree (FORMAT.md §12.5): release and
//                                                       fsinfo.json signed offline by its one key
//   sign fsinfo.json --publish OUT                      install it
// Format version 1:
//   sign unsigned.json --key K -o fsinfo.json           the offline signature
//   sign fsinfo.json --publish OUT                      install it
import fs from 'node:fs/promises'
import path from 'node:path'
import { UsageError } from 'rotree-client/errors'
import { readKeyFiles } from '../../builder/keys.js'
import { signUnsigned, installSigned } from '../../builder/sign.js'
import { isUnsignedRelease, signOut, signReleaseOffline, installSignedV2 } from '../../builder/release.js'
import { versionOf } from '../../lib/published/signed-roots.js'
import { parseDuration } from '../../builder/duration.js'
import { keyAndName } from '../json.js'

// --json: the result with the tree's key and name (docs/JSON.md); no address where no anchor is known yet
const json = (io, r) => io.stdout.write(JSON.stringify({ ...r, ...(r.address ? keyAndName(r.address) : { key: null, name: r.name ?? '' }) }, null, 2) + '\n')

export default {
  usage: 'sign (OUT | FILE) [--key KEYFILE]… [--timestamp-key KEYFILE]… [--publish [OUT]] [-o FSINFO]',
  summary: 'sign a release or a root built with --unsigned (offline), and publish it',
  positionals: [1, 2],
  options: {
    key: { type: 'string', multiple: true, arg: 'KEYFILE', help: 'secret key that signs: format 2, a release key (repeatable); format 1, the tree\'s key' },
    'timestamp-key': { type: 'string', multiple: true, arg: 'KEYFILE', help: 'format 2 with --publish: the timestamp key that signs fsinfo.json (repeatable)' },
    output: { type: 'string', short: 'o', arg: 'FSINFO', help: 'write the signed fsinfo.json here (format 1; format 2 for a single-key tree: release and fsinfo.json signed by --key)' },
    publish: { type: 'boolean', help: 'publish: format 2, once the release has its signatures; format 1, `--publish OUT` installs FILE in OUT' },
    ttl: { type: 'string', arg: 'DURATION', help: 'format 2: how long fsinfo.json is valid (default 7d); format 1 with --key: re-stamp issued and expires' },
    url: { type: 'string', arg: 'URL', help: 'the mirror URL to print in the address line' },
    'no-fsync': { type: 'boolean', help: 'do not fsync what is written' },
    'no-witness': { type: 'boolean', help: 'publish without the cosignatures of the trust document\'s witnesses (readers that require them refuse the tree until a later publish is cosigned)' },
    json: { type: 'boolean', help: 'print the result as JSON' }
  },
  async run ([target, publishTo], v, io) {
    if (publishTo !== undefined && !v.publish) throw new UsageError(`unexpected argument ${JSON.stringify(publishTo)} (the folder to publish into goes after --publish)`)
    let ttlMs
    if (v.ttl !== undefined && !(ttlMs = parseDuration(v.ttl))) throw new UsageError(`--ttl ${v.ttl}: expected a duration such as 30m, 12h, 7d`)
    const readKeys = list => readKeyFiles(list, m => io.stderr.write(`rotree: warning: ${m}\n`))
    const st = await fs.stat(target).catch(err => {
      if (err.code === 'ENOENT') throw new UsageError(`${target} does not exist`)
      throw err
    })
    const input = st.isDirectory() ? null : await fs.readFile(target)
    if (input && isUnsignedRelease(input) && v.output) return signOffline(input, v, ttlMs, io, readKeys)
    if (input && !isUnsignedRelease(input) && v.publish && !v.key && fsinfoVersionOf(input) === 2) return installV2(input, publishTo, v, io)
    if (st.isDirectory() || isUnsignedRelease(input)) {
      if (v.output) throw new UsageError('-o writes fsinfo.json from a copy of unsigned.json (rotree sign FILE --key KEY -o FSINFO); in OUT a release is signed in place')
      if (st.isDirectory() && publishTo !== undefined) throw new UsageError('give OUT once: rotree sign OUT --publish')
      const out = st.isDirectory() ? target : publishTo ?? path.dirname(target)
      const r = await signOut({
        out, file: st.isDirectory() ? undefined : target, keys: await readKeys(v.key), timestampKeys: await readKeys(v['timestamp-key']),
        publish: v.publish, ttlMs: ttlMs ?? parseDuration('7d'), fsync: !v['no-fsync'], url: v.url, witness: !v['no-witness']
      })
      if (v.json) { json(io, r); return }
      if (r.unchecked) {
        io.stdout.write(`release ${r.releaseSeq}${r.name ? ` of ${JSON.stringify(r.name)}` : ''}: signed by ${r.added.join(', ') || '(no new key)'} in ${target}; no trust documents beside it, so the signature is counted where the release is published (rotree sign ${target} --publish OUT …)\n`)
        return
      }
      const lines = [`release ${r.releaseSeq}${r.name ? ` of ${JSON.stringify(r.name)}` : ''}: ${r.added.length ? `signed by ${r.added.join(', ')}; ` : ''}${r.have} of ${r.threshold} release signatures`]
      if (r.published) lines.push(`published seq ${r.seq} (release ${r.releaseSeq}, root ${r.private ? '(private)' : r.root}, ${r.blobs} blobs checked) in ${out}, expires ${r.expires}`)
      else if (r.have >= r.threshold) lines.push(`ready: rotree sign ${out} --timestamp-key TIMESTAMPKEY --publish`)
      else lines.push(`${r.threshold - r.have} more release signature(s) needed: rotree sign ${target} --key RELEASEKEY`)
      lines.push(`address: ${r.address}`)
      io.stdout.write(lines.join('\n') + '\n')
      return
    }
    return signV1(target, input, publishTo, v, ttlMs, io, readKeys)
  }
}

// not an fsinfo.json: null, and signV1 says what it is
function fsinfoVersionOf (bytes) {
  try { return versionOf(bytes) } catch { return null }
}

// FORMAT.md §12.5: a single-key tree's release and fsinfo.json, both signed offline by its key
async function signOffline (input, v, ttlMs, io, readKeys) {
  if (v.publish) throw new UsageError('give one of -o FSINFO and --publish: sign offline with -o, then install the file with rotree sign FSINFO --publish OUT')
  if (v['timestamp-key']) throw new UsageError('-o signs a single-key tree\'s fsinfo.json with --key; a tree with a timestamp key publishes with rotree sign FILE --publish OUT --timestamp-key T')
  if (!v.key) throw new UsageError('-o needs --key KEYFILE')
  const keys = await readKeys(v.key)
  const { text, info, key } = signReleaseOffline(input, keys, { ttlMs: ttlMs ?? 7 * 24 * 3600e3 })
  const tmp = path.join(path.dirname(v.output), `.${path.basename(v.output)}.tmp-${process.pid}`)
  await fs.writeFile(tmp, text, { mode: 0o644 })
  await fs.rename(tmp, v.output)
  const frag = info.name ? `${key}:${info.name}` : key
  const r = { signed: true, seq: info.seq, releaseSeq: info.release.seq, root: info.release.root.hash, expires: info.expires, output: v.output, address: `${v.url ?? '<mirror-url>'}#${frag}` }
  if (v.json) { json(io, r); return }
  io.stdout.write(`signed seq ${r.seq} (release ${r.releaseSeq}), root ${r.private ? '(private)' : r.root}, expires ${r.expires} → ${r.output}\naddress: ${r.address}\n`)
}

async function installV2 (input, publishTo, v, io) {
  if (publishTo === undefined) throw new UsageError('--publish needs OUT (the folder to publish into) for a signed fsinfo.json')
  if (v['timestamp-key'] || v.ttl) throw new UsageError('this fsinfo.json is signed already: rotree sign FSINFO --publish OUT installs it as it is')
  const r = await installSignedV2(publishTo, input, { fsync: !v['no-fsync'], url: v.url })
  if (v.json) { json(io, { published: publishTo, ...r }); return }
  io.stdout.write(r.already ? `${publishTo} already publishes seq ${r.seq}\n` : `published seq ${r.seq} (release ${r.releaseSeq}, root ${r.private ? '(private)' : r.root}, ${r.blobs} blobs checked) in ${publishTo}, expires ${r.expires}\n`)
  io.stdout.write(`address: ${r.address}\n`)
}

async function signV1 (file, input, publishTo, v, ttlMs, io, readKeys) {
  if (v['timestamp-key']) throw new UsageError('--timestamp-key is for format 2 (this file is a format-1 root)')
  if (!v.output === !v.publish) throw new UsageError('give exactly one of -o FSINFO and --publish OUT')
  if (v.publish && publishTo === undefined) throw new UsageError('--publish needs OUT (the folder to publish into) for a format-1 root')
  if ((v.key?.length ?? 0) > 1) throw new UsageError('a format-1 root is signed by one --key')
  if (!v.key && v.output) throw new UsageError('-o needs --key KEYFILE (without a key, sign only publishes a signed file)')
  if (!v.key && ttlMs) throw new UsageError('--ttl needs --key KEYFILE')
  let text = input
  const r = {}
  if (v.key) {
    const [key] = await readKeys(v.key)
    const s = signUnsigned(input, key, { ttlMs })
    text = s.text
    Object.assign(r, { signed: true, seq: s.fields.seq, root: s.fields.root, issued: s.fields.issued, expires: s.fields.expires })
    if (v.output) {
      const tmp = path.join(path.dirname(v.output), `.${path.basename(v.output)}.tmp-${process.pid}`)
      await fs.writeFile(tmp, text, { mode: 0o644 })
      await fs.rename(tmp, v.output)
      r.output = v.output
    }
    r.address = `${v.url ?? '<mirror-url>'}#${key.publicKey}`
  }
  if (v.publish) {
    const p = await installSigned(publishTo, text, { fsync: !v['no-fsync'] })
    Object.assign(r, { published: publishTo, seq: p.seq, root: p.root, already: p.already, blobs: p.blobs, address: `${v.url ?? '<mirror-url>'}#${p.key}` })
  }
  if (v.json) { json(io, r); return }
  if (r.signed) io.stdout.write(`signed seq ${r.seq}, root ${r.private ? '(private)' : r.root}, expires ${r.expires}${r.output ? ` → ${r.output}` : ''}\n`)
  if (r.published) io.stdout.write(r.already ? `${r.published} already publishes seq ${r.seq}\n` : `published seq ${r.seq} (root ${r.private ? '(private)' : r.root}, ${r.blobs} blobs checked) in ${r.published}\n`)
  io.stdout.write(`address: ${r.address}\n`)
}
