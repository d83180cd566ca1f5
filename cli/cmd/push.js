// rotree push
import { UsageError } from 'rotree-client/errors'
import { mirrorUrl } from 'rotree-client/trust'
import { push } from '../../builder/push.js'
import { progressBar } from '../progress.js'
import { addressOf } from '../json.js'

export default {
  usage: 'push OUT DEST [--url URL] [--rclone-arg ARG]…',
  summary: 'upload a published folder to any rclone remote: new blobs first, fsinfo.json last',
  positionals: [2, 2],
  options: {
    url: { type: 'string', arg: 'URL', help: 'where readers will find DEST (printed as the address)' },
    'rclone-arg': { type: 'string', multiple: true, arg: 'ARG', help: 'passed to every rclone call (e.g. --bwlimit=10M, --s3-acl=public-read)' },
    json: { type: 'boolean', help: 'print the result as JSON' }
  },
  async run ([out, dest], v, io) {
    let url = null
    if (v.url !== undefined) {
      try { url = mirrorUrl(v.url) } catch (err) { throw new UsageError(`--url: ${err.message}`) }
    }
    // without a terminal (cron, CI) a line every 5 s: an upload of gigabytes is not silent for minutes
    const bar = progressBar({ label: 'push', stream: io.stderr, lineEveryMs: 5000 })
    const r = await push(out, dest, {
      rcloneArgs: v['rclone-arg'] ?? [],
      onProgress: p => bar.update(p.bytes, p.totalBytes, p.phase)
    })
    bar.done()
    const address = url && `${url}#${r.key}${r.name ? ':' + r.name : ''}`
    // --json: an address always, <mirror-url> standing for the URL not given (docs/JSON.md)
    if (v.json) { io.stdout.write(JSON.stringify({ ...r, name: r.name ?? '', dest, address: addressOf(r.key, r.name, url) }, null, 2) + '\n'); return }
    io.stdout.write(`pushed ${out} to ${dest}: seq ${r.seq}, root ${r.root}, ${r.blobs.transferred} blobs uploaded\n`)
    if (address) io.stdout.write(`address: ${address}\n`)
  }
}
