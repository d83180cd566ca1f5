// rotree build
import { UsageError, BuildInputError } from 'rotree-client/errors'
import { readKeyFile, readKeyFiles, readPublicKey } from '../../builder/keys.js'
import { build, hasTrustDocuments } from '../../builder/build.js'
import { parseDuration } from '../../builder/duration.js'
import { progressBar, fmtBytes } from '../progress.js'
import { checkReader, parseReaders } from '../../builder/private-tree.js'
import fs from 'node:fs/promises'
import { NO_URL, keyAndName } from '../json.js'

const HEX64 = /^[0-9a-f]{64}$/

// not from ../common.js: that module loads the whole reader (openTree), start-up
// a rebuild after a one-file change should not pay (docs/BENCHMARKS.md P6: P6r, notes)
function threadCount (v) {
  const n = Number(v)
  if (v === '' || !Number.isInteger(n) || n < 0 || n > 64) throw new UsageError('--jobs must be a whole number from 0 to 64')
  return n
}

// --reader R… and --readers FILE…: age recipients, checked
async function readerList (v) {
  const out = (v.reader ?? []).map(r => checkReader(r, '--reader'))
  for (const f of v.readers ?? []) {
    let text
    try { text = await fs.readFile(f, 'utf8') } catch (err) { throw new UsageError(`--readers ${f}: ${err.code ?? err.message}`) }
    out.push(...parseReaders(text, f))
  }
  return out
}

// --format 1|2, and --name (a tree name exists only in format 2)
// (neither: the builder takes OUT's format, version 2 for a new OUT)
function formatVersion (v) {
  if (v.format === undefined) return v.name !== undefined ? 2 : undefined
  if (v.format !== '1' && v.format !== '2') throw new UsageError(`--format ${v.format}: expected 1 or 2`)
  if (v.format === '1' && v.name !== undefined) throw new UsageError('--name needs --format 2 (format 1 trees have no name)')
  return Number(v.format)
}

export default {
  usage: 'build SRC OUT (--key KEYFILE [--timestamp-key KEYFILE] | --unsigned [--pubkey HEX]) [--ttl 7d] [--format 1|2] [--name NAME] [--private --reader age1… [--readers FILE]] [--exclude PATTERN]… [--skip-bad] [--watch]',
  summary: 'build or update the published folder OUT from directory SRC',
  positionals: [2, 2],
  options: {
    key: { type: 'string', arg: 'KEYFILE', help: 'secret key file (from rotree keygen); required unless --unsigned. With trust documents in OUT: a release key' },
    'timestamp-key': { type: 'string', multiple: true, arg: 'KEYFILE', help: 'format 2 with trust documents: the timestamp key that signs fsinfo.json (repeatable)' },
    'release-ttl': { type: 'string', arg: 'DURATION', help: 'format 2: how long the release is valid (default: --ttl; 90d with trust documents)' },
    url: { type: 'string', arg: 'URL', help: 'the mirror URL to print in the address line' },
    ttl: { type: 'string', arg: 'DURATION', help: 'how long the signed root is valid: 30m, 12h, 7d, 2w (default 7d)' },
    unsigned: { type: 'boolean', help: 'do not sign: write OUT/unsigned.json for `rotree sign` on another machine' },
    pubkey: { type: 'string', arg: 'HEX', help: 'with --unsigned: the public key the root will be signed with (not needed when OUT has trust documents)' },
    'skip-bad': { type: 'boolean', help: 'skip input that cannot be published (special files, bad names, escaping symlinks) instead of failing' },
    jobs: { type: 'string', arg: 'N', help: 'worker threads that read, chunk and hash files (default: one per core, at most 4; 0: none)' },
    rehash: { type: 'boolean', help: 'read every file again, ignoring the build index of unchanged files' },
    'no-fsync': { type: 'boolean', help: 'do not fsync blobs and fsinfo.json (faster; not crash-safe)' },
    'no-witness': { type: 'boolean', help: 'publish without the cosignatures of the trust document\'s witnesses (readers that require them refuse the tree until a later publish is cosigned)' },
    watch: { type: 'boolean', help: 'after building, rebuild and publish each time SRC changes, until interrupted (holds OUT\'s lock)' },
    exclude: { type: 'string', multiple: true, arg: 'PATTERN', help: 'leave out what matches, as a .gitignore line: *.log, node_modules/, /build, **/tmp (repeatable)' },
    json: { type: 'boolean', help: 'print the result as JSON (with --watch: one line per publish)' },
    format: { type: 'string', arg: '1|2', help: 'format version to build (default: OUT\'s, 2 for a new OUT: compressed blobs, each file\'s SHA-256, tree names, docs/FORMAT.md §12; 1: the first format, read by older readers)' },
    name: { type: 'string', arg: 'NAME', help: 'the tree\'s name, read at <mirror-url>#<key>:NAME (implies --format 2)' },
    private: { type: 'boolean', help: 'a new OUT: a private tree, every blob encrypted, readable only by its readers (docs/FORMAT.md §12.8); an OUT that is private stays so' },
    reader: { type: 'string', multiple: true, arg: 'RECIPIENT', help: 'a private tree\'s reader, an age recipient (age1…, from rotree keygen --reader or age-keygen; repeatable); added to a private OUT\'s readers' },
    readers: { type: 'string', multiple: true, arg: 'FILE', help: 'readers from a file, one recipient per line (# comments), as age -R takes them' }
  },
  async run ([src, out], v, io) {
    // SRC itself missing is a wrong argument, not an entry --skip-bad could leave out
    const srcStat = await fs.stat(src).catch(() => null)
    if (srcStat === null) throw new UsageError(`SRC ${src} does not exist: give the folder to publish`)
    if (!srcStat.isDirectory()) throw new UsageError(`SRC ${src} is not a folder: give the folder to publish`)
    const ttlMs = parseDuration(v.ttl ?? '7d')
    if (!ttlMs) throw new UsageError(`--ttl ${v.ttl}: expected a duration such as 30m, 12h, 7d`)
    let key
    let releaseTtlMs
    if (v['release-ttl'] !== undefined && !(releaseTtlMs = parseDuration(v['release-ttl']))) throw new UsageError(`--release-ttl ${v['release-ttl']}: expected a duration such as 30d`)
    const rolesOut = await hasTrustDocuments(out) // signed by roles: no single key needed for --unsigned
    if (v.unsigned) {
      if (v.pubkey !== undefined && !HEX64.test(v.pubkey)) throw new UsageError('--pubkey must be 64 lowercase hex digits (the last line keygen printed)')
      if (v['timestamp-key']) throw new UsageError('--timestamp-key signs; --unsigned does not (give it to rotree sign --publish)')
      if (v.pubkey === undefined && !v.key && !rolesOut) throw new UsageError('--unsigned needs --pubkey HEX (or --key KEYFILE to take its public half)')
      key = v.pubkey ? { publicKey: v.pubkey } : v.key ? { publicKey: await readPublicKey(v.key) } : { publicKey: null }
    } else {
      if (v.pubkey !== undefined) throw new UsageError('--pubkey goes with --unsigned')
      if (!v.key) throw new UsageError('--key KEYFILE is required (or --unsigned --pubkey HEX)')
      key = await readKeyFile(v.key)
      if (key.warning) io.stderr.write(`rotree: warning: ${key.warning}\n`)
    }
    const timestampKeys = await readKeyFiles(v['timestamp-key'], m => io.stderr.write(`rotree: warning: ${m}\n`))
    const readers = await readerList(v)
    if (v.private && v.format === '1') throw new UsageError('--private needs format version 2')
    const opts = {
      src, out, key, ttlMs, onBad: v['skip-bad'] ? 'skip' : 'fail', fsync: !v['no-fsync'], witness: !v['no-witness'], unsigned: v.unsigned, rehash: v.rehash, exclude: v.exclude ?? [],
      threads: v.jobs !== undefined ? threadCount(v.jobs) : undefined,
      version: formatVersion(v), name: v.name, timestampKeys, releaseTtlMs, url: v.url, private: v.private, readers,
      warn: m => io.stderr.write(`${io.stderr.isTTY ? '\r\x1b[K' : ''}rotree: warning: ${m}\n`)
    }
    if (v.watch) return watchLoop(opts, out, v, io)
    const bar = progressBar({ label: 'build', stream: io.stderr })
    const r = await build({ ...opts, onProgress: p => bar.update(p.done, p.total, `${p.files} files`) }).catch(err => {
      bar.done()
      throw v['skip-bad'] ? err : withSkipBadHint(err)
    })
    bar.done()
    if (v.json) { io.stdout.write(JSON.stringify(jsonOf(r, v), null, 2) + '\n'); return }
    r.address ??= `${v.url ?? NO_URL}#${r.publicKey}` // format 1: the key is the address
    io.stdout.write(`built ${out}: ${r.files} files, ${r.dirs} dirs, ${r.symlinks} symlinks, ${fmtBytes(r.bytes)}\n` +
      `  read ${r.index.misses} files, ${r.index.hits} unchanged (${fmtBytes(r.index.hitBytes)}) taken from the build index\n` +
      `  new blobs ${r.blobs.written} (${fmtBytes(r.blobs.writtenBytes)}), reused ${r.blobs.reused}` +
      (r.skipped.length ? `, skipped ${r.skipped.length}` : '') + (r.excluded ? `, excluded ${r.excluded}` : '') + ` in ${(r.ms / 1000).toFixed(1)} s\n` +
      `  seq ${r.seq}, root ${r.root}, expires ${r.expires}\n` +
      (r.private ? `  private: epoch ${r.epoch}, ${r.readers} reader${r.readers === 1 ? '' : 's'}; its secret and epoch key are in ${out}/.rotree/private.json (back it up with the keys; never publish it)\n` : '') +
      (r.unsigned && r.version === 2
        ? `  NOT SIGNED: release ${r.releaseSeq} waits in ${out}/unsigned.json for release signatures: rotree sign ${out} --key RELEASEKEY,\n` +
          `  then: rotree sign ${out} --timestamp-key TIMESTAMPKEY --publish\n`
        : r.unsigned
          ? `  NOT SIGNED: ${out}/unsigned.json waits for: rotree sign unsigned.json --key KEYFILE -o fsinfo.json (on the signing machine),\n` +
            `  then: rotree sign fsinfo.json --publish ${out}\n`
          : '') +
      `address: ${r.address}\n`)
  }
}

// --watch: a line (or a JSON object) per publish, until SIGINT or SIGTERM;
// a run that fails is reported and the watch goes on (builder/watch.js)
async function watchLoop (opts, out, v, io) {
  const { watchBuild } = await import('../../builder/watch.js')
  const ac = new AbortController()
  const stop = () => ac.abort()
  process.on('SIGINT', stop); process.on('SIGTERM', stop)
  try {
    await watchBuild(opts, {
      signal: ac.signal,
      onBuild: r => io.stdout.write(v.json
        ? JSON.stringify({ at: new Date().toISOString(), ...jsonOf(r, v) }) + '\n'
        : `${new Date().toISOString()} published ${out}: seq ${r.seq}, root ${r.root}; read ${r.index.misses} files in ${r.ms} ms${r.partial ? '' : ' (full)'}\n`),
      onError: err => io.stderr.write(`rotree: ${err.code ?? 'error'}: ${err.message} (still watching)\n`)
    })
  } finally { process.off('SIGINT', stop); process.off('SIGTERM', stop) }
}

/**
 * The result as --json prints it (docs/JSON.md): the tree's fields first,
 * `key` the anchor after # (the builder's publicKey is the signing key).
 */
function jsonOf (r, v) {
  const { publicKey, address: a, name: _, ...rest } = r
  const address = a ?? `${v.url ?? NO_URL}#${publicKey}` // format 1: the key is the address
  return { address, ...keyAndName(address), private: false, epoch: null, readers: null, ...rest } // one shape, private or not
}

/** A build stopped by one entry it cannot publish: say that --skip-bad would leave such entries out. */
function withSkipBadHint (err) {
  if (err?.code !== 'ROTREE_BUILD_INPUT' || err.details?.changed) return err
  return new BuildInputError(`${err.message} (to publish the rest, rebuild with --skip-bad: each such entry is left out with a warning)`, { cause: err, details: err.details })
}
