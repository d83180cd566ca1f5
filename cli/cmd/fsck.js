// rotree fsck
import { UsageError } from 'rotree-client/errors'
import { parseAddress } from 'rotree-client'
import { parseFragment } from 'rotree-client/trust'
import { fsck } from '../../mirror/fsck.js'
import { blobSource } from '../../mirror/source.js'
import { fmtBytes } from '../progress.js'
import { READER_OPTIONS, treeAddress, positiveInt } from '../common.js'
import { expiryWarning } from '../expiry.js'
import { addressOf } from '../json.js'

export default {
  usage: 'fsck DIR [--key ANCHOR[:NAME]] [--repair-from ADDR]',
  summary: 'scrub a published folder: re-hash every blob, find missing and orphan blobs, check fsinfo.json',
  positionals: [1, 1],
  options: {
    key: { type: 'string', arg: 'ANCHOR[:NAME]', help: 'what follows # in the tree\'s address: the publisher\'s public key (64 hex) or t<trust document hash>, and the tree name (format 2); without it the folder\'s own claims are checked, with a warning' },
    'repair-from': { type: 'string', arg: 'ADDR', help: 'fetch corrupt and missing blobs from this tree address, or a remote (NAME:), verified, then check again' },
    mirror: { ...READER_OPTIONS.mirror, help: 'with --repair-from: another mirror to repair from (repeatable)' },
    timeout: READER_OPTIONS.timeout,
    'state-dir': { ...READER_OPTIONS['state-dir'], help: 'with --repair-from NAME:: where the remote is saved' },
    jobs: { type: 'string', arg: 'N', help: 'hashing threads (default: CPUs - 1, at most 4; 1 hashes on the main thread)' },
    'no-fsync': { type: 'boolean', help: 'with --repair-from: do not fsync repaired blobs' },
    json: { type: 'boolean', help: 'print the report as JSON' }
  },
  async run ([dir], v, io) {
    if (v.mirror && !v['repair-from']) throw new UsageError('--mirror needs --repair-from')
    let given = null
    if (v.key !== undefined) {
      try { given = parseFragment(v.key) } catch (err) { throw new UsageError(`--key: ${err.message}`) }
    }
    let keySource = 'given'
    let src = null
    if (v['repair-from']) {
      // an address, or a remote (NAME:), with its mirrors
      const { address, reader: ro } = await treeAddress(v['repair-from'], v)
      const a = parseAddress(address)
      if (given && given.id !== a.id) throw new UsageError('--key and the anchor in --repair-from differ')
      if (!given) { given = a; keySource = 'address' }
      src = blobSource(address, { mirrors: ro.mirrors, timeoutMs: ro.timeoutMs })
    }
    const tty = io.stderr.isTTY && !v.json
    let last = 0
    let r
    try {
      r = await fsck(dir, {
        publicKey: given?.anchor.kind === 'key' ? given.anchor.key : null, anchor: given?.anchor ?? null, name: given?.name ?? '',
        keySource, repairFrom: src, fsync: !v['no-fsync'],
        jobs: v.jobs ? positiveInt(v.jobs, 'jobs') : undefined,
        onProgress: (phase, d, t) => {
          if (!tty || (Date.now() - last < 100 && d < t)) return
          last = Date.now()
          io.stderr.write(`\rfsck: hashing ${d}/${t} blobs\x1b[K`)
        }
      })
    } finally {
      src?.close()
      if (tty) io.stderr.write('\r\x1b[K')
    }
    if (v.json) io.stdout.write(JSON.stringify(jsonOf(r), null, 2) + '\n')
    else io.stdout.write(report(r))
    for (const w of r.warnings) io.stderr.write(`rotree: warning: ${w}\n`)
    // a tree nobody re-signs goes dark for every reader at once (cli/expiry.js)
    const soon = r.fsinfo.present && r.fsinfo.expires ? expiryWarning({ issued: r.fsinfo.issued, expires: r.fsinfo.expires }) : null
    if (soon) io.stderr.write(soon + '\n')
    return r.ok ? 0 : 1
  }
}

// --json (docs/JSON.md): key the anchor as text, its source beside it, and the address it makes
function jsonOf (r) {
  const name = r.fsinfo.name ?? ''
  return { ...r, address: r.key.value ? addressOf(r.key.value, name) : null, name, key: r.key.value, keySource: r.key.source }
}

function report (r) {
  const lines = []
  const f = r.fsinfo
  lines.push(`fsck ${r.dir}`)
  const anchor = `${f.version === 2 ? 'anchor' : 'key'} ${r.key.value} (${r.key.source === 'fsinfo' ? 'self-asserted' : r.key.source})`
  if (f.present && f.seq !== undefined && f.version === 2) {
    lines.push(`  fsinfo.json  format 2, tree ${JSON.stringify(f.name)}, seq ${f.seq}, release ${f.releaseSeq}, root ${f.root}, expires ${f.expires}, ${anchor}`)
    const chain = f.trust.highest ? `; ${f.trust.docs} of ${f.trust.highest} document(s) in trust/ verify as a chain` : ''
    lines.push(`  trust        ${f.trustSeq === null ? 'none (single key)' : `document ${f.trustSeq} named`}${chain}`)
  } else if (f.present && f.seq !== undefined) lines.push(`  fsinfo.json  seq ${f.seq}, root ${f.root}, expires ${f.expires}, ${anchor}`)
  for (const p of f.problems) lines.push(`  FSINFO   ${p.code}: ${p.message}`)
  lines.push(`  blobs        ${r.blobs.files} files, ${fmtBytes(r.blobs.bytes)} hashed in ${(r.blobs.hashMs / 1000).toFixed(1)} s (${r.blobs.threads} thread${r.blobs.threads > 1 ? 's' : ''}); ${r.blobs.reachable} reachable from the current root; ${r.history.roots} history roots`)
  const used = e => e.paths.length ? `  used by ${e.paths.join(', ')}${e.refs > e.paths.length ? ` (${e.refs} refs)` : ''}` : '  (no current root uses it)'
  for (const e of r.corrupt) {
    const what = e.error ? `unreadable (${e.error})` : e.actual ? `hashes to ${e.actual}` : 'larger than any blob'
    lines.push(`  CORRUPT  ${e.hash}  ${e.kind ?? 'blob'}, ${e.onDisk} bytes on disk${e.size ? `, ${e.size} expected` : ''}, ${what}${used(e)}`)
  }
  for (const e of r.missing) lines.push(`  MISSING  ${e.hash}  ${e.kind}, ${e.size} bytes${used(e)}`)
  for (const u of r.unchecked) lines.push(`  UNCHECKED below ${u.path}: ${u.kind} page ${u.hash} is ${u.reason}${u.reason === 'unreadable' ? ` (${u.code})` : ''}`)
  for (const o of r.orphans) lines.push(`  orphan   ${o.hash}  ${o.size} bytes`)
  for (const s of r.stray) lines.push(`  stray    h/${s}`)
  if (r.repair) {
    for (const x of r.repair.repaired) lines.push(x.kind === 'trust' ? `  repaired trust/${x.seq}.json, ${x.size} bytes` : `  repaired ${x.hash}  ${x.kind ?? 'blob'}, ${x.size} bytes`)
    for (const x of r.repair.removed) lines.push(`  removed  ${x.hash}  (corrupt, used by no root, not on the repair source)`)
    for (const x of r.repair.unrepaired) lines.push(`  NOT REPAIRED ${x.kind === 'trust' ? `trust/${x.seq}.json` : x.hash ?? ''} ${x.code}: ${x.message}`)
    lines.push(`  repair: ${r.before.problems} problem(s) before, ${r.repair.repaired.length} blob(s) fetched, ${r.repair.requests} requests, ${fmtBytes(r.repair.bytes)}; checked again:`)
  }
  const n = r.corrupt.length; const m = r.missing.length; const fp = r.fsinfo.problems.length
  lines.push(`${r.ok ? 'ok' : 'PROBLEMS'}: ${r.problems} problem(s) (${n} corrupt, ${m} missing, ${fp} in fsinfo.json), ${r.orphans.length} orphan(s)`)
  return lines.join('\n') + '\n'
}
