// rotree trust init|sign|update|show|retire
import { UsageError } from 'rotree-client/errors'
import { readKeyFiles, readPublicKey } from '../../builder/keys.js'
import { parseDuration } from '../../builder/duration.js'
import { READER_OPTIONS } from '../common.js'
import { keyAndName } from '../json.js'
import { parseCosignatureVerifierKey } from 'rotree-client/tlog'

const SUBS = ['init', 'sign', 'update', 'show', 'retire']

export default {
  usage: 'trust (init|sign|update|show|retire) OUT|ADDR [options]',
  summary: 'manage the keys of a format-version-2 tree: roles, thresholds, rotation, retirement (docs/FORMAT.md §12)',
  positionals: [2, 2],
  options: {
    root: { type: 'string', multiple: true, arg: 'PUBKEY', help: 'init: a root key (repeatable); a .pub file, a key file or 64 hex' },
    release: { type: 'string', multiple: true, arg: 'PUBKEY', help: 'init: a release key (repeatable)' },
    timestamp: { type: 'string', multiple: true, arg: 'PUBKEY', help: 'init, update: the timestamp key(s) (update: replaces them)' },
    'root-threshold': { type: 'string', arg: 'N', help: 'how many root keys must sign a trust document (default 1, update: kept)' },
    'release-threshold': { type: 'string', arg: 'N', help: 'how many release keys must sign a release' },
    'timestamp-threshold': { type: 'string', arg: 'N', help: 'how many timestamp keys must sign fsinfo.json' },
    'add-root': { type: 'string', multiple: true, arg: 'PUBKEY', help: 'update: add a root key' },
    'remove-root': { type: 'string', multiple: true, arg: 'PUBKEY', help: 'update: remove a root key' },
    'add-release': { type: 'string', multiple: true, arg: 'PUBKEY', help: 'update: add a release key' },
    'remove-release': { type: 'string', multiple: true, arg: 'PUBKEY', help: 'update: remove a release key' },
    access: { type: 'string', multiple: true, arg: 'PUBKEY', help: 'init: a key of the optional access role, which signs grants to fetch a gated tree (repeatable; docs/FORMAT.md §12.10)' },
    'add-access': { type: 'string', multiple: true, arg: 'PUBKEY', help: 'update: add an access key' },
    'remove-access': { type: 'string', multiple: true, arg: 'PUBKEY', help: 'update: remove an access key (the last one drops the role)' },
    'access-threshold': { type: 'string', arg: 'N', help: 'init, update: how many access keys must sign a grant (default 1, update: kept)' },
    'add-witness': { type: 'string', multiple: true, arg: 'NAME=URL=VKEY', help: 'update: a witness that cosigns the log\'s checkpoint (rotree witness prints the argument) (repeatable)' },
    'remove-witness': { type: 'string', multiple: true, arg: 'NAME', help: 'update: stop requiring a witness' },
    'witness-threshold': { type: 'string', arg: 'K', help: 'update: how many witnesses must cosign each checkpoint (default: kept, or all)' },
    name: { type: 'string', arg: 'NAME', help: 'init: the tree\'s name, for the address printed (build --name publishes it)' },
    ttl: { type: 'string', arg: 'DURATION', help: 'init, update, retire: how long the trust document is valid (default 365d)' },
    key: { type: 'string', multiple: true, arg: 'KEYFILE', help: 'sign: a root key (or the address key, for document 1 of a tree adopting roles) that signs (repeatable)' },
    url: { type: 'string', arg: 'URL', help: 'the mirror URL to print in the address line' },
    force: { type: 'boolean', help: 'init, update, retire: replace a pending document that is still collecting signatures' },
    'no-fsync': { type: 'boolean', help: 'do not fsync what is written' },
    json: { type: 'boolean', help: 'print the result as JSON' },
    ...READER_OPTIONS
  },
  async run ([sub, target], v, io) {
    if (!SUBS.includes(sub)) throw new UsageError(`unknown trust command ${JSON.stringify(sub)}: expected one of ${SUBS.join(', ')}`)
    const t = await import('../../builder/trust-publish.js')
    const out = target
    const keys = async (list, what) => Promise.all((list ?? []).map(k => readPublicKey(k, what)))
    const int = (s, what) => {
      if (s === undefined) return undefined
      const n = Number(s)
      if (!Number.isInteger(n) || n < 0 || n > 32) throw new UsageError(`--${what} ${s}: a whole number from 1 to 32`)
      return n
    }
    let ttlMs
    if (v.ttl !== undefined && !(ttlMs = parseDuration(v.ttl))) throw new UsageError(`--ttl ${v.ttl}: expected a duration such as 365d`)
    const print = (r, lines) => {
      if (v.json) io.stdout.write(JSON.stringify({ ...r, ...keyAndName(r.address) }, null, 2) + '\n') // docs/JSON.md: key, name
      else io.stdout.write(lines.filter(l => l !== null).join('\n') + '\n')
    }
    const needLines = status => status.need.map(n => `  ${n.have} of ${n.threshold} needed from the ${n.what}${n.have >= n.threshold ? ' (done)' : ''}`)

    if (sub === 'show') return show(target, v, io, t)

    if (sub === 'init') {
      if (!v.root?.length || !v.release?.length || !v.timestamp?.length) throw new UsageError('init needs at least one --root, one --release and one --timestamp key')
      const r = await t.initTrust(out, {
        root: await keys(v.root, '--root'), release: await keys(v.release, '--release'), timestamp: await keys(v.timestamp, '--timestamp'),
        rootThreshold: int(v['root-threshold'], 'root-threshold'), releaseThreshold: int(v['release-threshold'], 'release-threshold'),
        timestampThreshold: int(v['timestamp-threshold'], 'timestamp-threshold'), ttlMs, name: v.name, url: v.url, force: v.force,
        access: await keys(v.access, '--access'), accessThreshold: int(v['access-threshold'], 'access-threshold')
      })
      const address = t.addressOf(r.anchor, v.name ?? '', v.url)
      return print({ pending: 1, adopting: r.adopting, roles: r.doc.roles, expires: r.doc.expires, need: r.status.need, address }, [
        `trust document 1 written to ${out}/${t.PENDING_TRUST}, valid until ${r.doc.expires}:`,
        t.describeRoles(r.doc, { addressKey: t.addressKeyOf(r.anchor) }),
        r.adopting ? `${out} publishes a single-key tree: its key ${r.adopting} must sign too, and the address stays the same` : null,
        'it needs signatures before it is published (rotree trust sign OUT --key ROOTKEY):',
        ...needLines(r.status),
        `address: ${address}`
      ])
    }

    if (sub === 'update' || sub === 'retire') {
      const o = sub === 'retire'
        ? { retire: true, ttlMs, force: v.force }
        : {
            addRoot: await keys(v['add-root'], '--add-root'), removeRoot: await keys(v['remove-root'], '--remove-root'),
            addRelease: await keys(v['add-release'], '--add-release'), removeRelease: await keys(v['remove-release'], '--remove-release'),
            timestamp: await keys(v.timestamp, '--timestamp'),
            rootThreshold: int(v['root-threshold'], 'root-threshold'), releaseThreshold: int(v['release-threshold'], 'release-threshold'),
            timestampThreshold: int(v['timestamp-threshold'], 'timestamp-threshold'), ttlMs, force: v.force,
            addAccess: await keys(v['add-access'], '--add-access'), removeAccess: await keys(v['remove-access'], '--remove-access'),
            accessThreshold: int(v['access-threshold'], 'access-threshold'),
            addWitness: (v['add-witness'] ?? []).map(parseWitnessArg), removeWitness: v['remove-witness'] ?? [],
            witnessThreshold: int(v['witness-threshold'], 'witness-threshold')
          }
      const r = await t.updateTrust(out, o)
      const f = await t.trustInForce(out)
      const address = t.addressOf(r.anchor, f.name, v.url ?? f.url)
      return print({ pending: r.doc.seq, retire: sub === 'retire', roles: r.doc.roles, expires: r.doc.expires, need: r.status.need, address }, [
        `trust document ${r.doc.seq}${sub === 'retire' ? ' (it RETIRES the tree: readers refuse it from then on)' : ''} written to ${out}/${t.PENDING_TRUST}, valid until ${r.doc.expires}:`,
        t.describeRoles(r.doc, { addressKey: t.addressKeyOf(r.anchor) }),
        'it needs signatures before it is published (rotree trust sign OUT --key ROOTKEY):',
        ...needLines(r.status),
        `address: ${address}`
      ])
    }

    // sign
    if (!v.key?.length) throw new UsageError('sign needs --key KEYFILE (a root key)')
    const secret = await readKeyFiles(v.key, m => io.stderr.write(`rotree: warning: ${m}\n`))
    const r = await t.signTrust(out, secret, { fsync: !v['no-fsync'] })
    const f = await t.trustInForce(out)
    const address = t.addressOf(r.anchor, f.name, v.url ?? f.url)
    return print({ seq: r.doc.seq, added: r.added, published: r.published, need: r.status.need, address }, [
      `trust document ${r.doc.seq}: ${r.added.length ? `signed by ${r.added.join(', ')}` : 'no new signature (already signed by these keys)'}`,
      ...needLines(r.status),
      r.published
        ? `published ${out}/trust/${r.doc.seq}.json; readers adopt it with the next fsinfo.json that names it: rotree resign ${out} --key TIMESTAMPKEY` +
          (r.doc.roles.release.threshold === 0 ? ' (that announces the retirement)' : ' (or publish a new release)')
        : 'not published yet: more signatures are needed',
      `address: ${address}`
    ])
  }
}

/**
 * --add-witness NAME=URL=VKEY: the witness's key name, where its
 * add-checkpoint lives, and its cosignature/v1 verifier key (whose name must
 * be NAME), or 64 hex.
 */
function parseWitnessArg (arg) {
  const eq = arg.indexOf('=')
  const name = arg.slice(0, eq)
  const rest = arg.slice(eq + 1)
  const named = rest.lastIndexOf(`=${name}+`) // the verifier key starts with its name
  const at = named >= 0 ? named : rest.lastIndexOf('=')
  if (eq <= 0 || at <= 0) throw new UsageError(`--add-witness ${arg}: expected NAME=URL=VKEY`)
  const url = rest.slice(0, at).replace(/\/+$/, ''); const vkey = rest.slice(at + 1)
  if (/^[0-9a-f]{64}$/.test(vkey)) return { name, url, key: vkey }
  let v
  try { v = parseCosignatureVerifierKey(vkey) } catch (err) { throw new UsageError(`--add-witness ${arg}: ${err.message}`) }
  if (v.name !== name) throw new UsageError(`--add-witness: the verifier key is for ${v.name}, not ${name}`)
  return { name, url, key: v.publicKey }
}

// show OUT: the chain published in OUT and a pending document; show ADDR: what a reader accepts at that address
async function show (target, v, io, t) {
  const { splitRemoteRef } = await import('../remotes.js')
  if (/^https?:\/\//.test(target) || splitRemoteRef(target) !== null) {
    // an address, or a remote (NAME:)
    const { withTree, treeAddress } = await import('../common.js')
    const { address, reader } = await treeAddress(target, v)
    target = address
    const faults = []
    const r = await withTree({ address, reader }, v, async tree => {
      const rec = tree.current
      const info = tree.info
      const r = { address: target, version: info.version ?? 1, name: info.name ?? '', key: info.anchor ?? info.key, seq: info.seq, root: info.root ?? null, expires: info.expires, releaseSeq: info.releaseSeq ?? null, releaseExpires: info.releaseExpires ?? null, trustSeq: info.trustSeq ?? null, roles: rec.roles ?? null }
      if (v.json) return r
      const lines = [`${target}: format ${r.version}${r.name ? `, tree ${JSON.stringify(r.name)}` : ''}, fsinfo.json seq ${r.seq} until ${r.expires}`]
      if (r.version === 2) {
        lines.push(`  release ${r.releaseSeq} until ${r.releaseExpires}`)
        lines.push(r.trustSeq ? `  trust document ${r.trustSeq}:` : '  no trust document: the address key holds every role')
        if (r.roles) lines.push(t.describeRoles({ roles: r.roles }, { addressKey: t.addressKeyOf(r.key) }))
      }
      lines.push(`address: ${target}`)
      io.stdout.write(lines.join('\n') + '\n')
    }, { faults })
    if (v.json) io.stdout.write(JSON.stringify({ ...r, mirrors: faults }, null, 2) + '\n') // docs/JSON.md
    return
  }
  const { anchor, chain, trust, name, url } = await t.trustInForce(target)
  const pending = await t.readPending(target)
  const address = anchor ? t.addressOf(anchor, name, v.url ?? url) : null
  const r = {
    key: anchor, name: name ?? '', trust: trust ? { seq: trust.seq, expires: trust.expires, roles: trust.roles, retired: trust.roles.release.threshold === 0 } : null,
    documents: chain.length,
    pending: pending ? { seq: pending.seq, roles: pending.roles, need: t.signingStatus(trust, pending, (await import('rotree-client/trust')).parseFragment(anchor).anchor).need } : null,
    address
  }
  if (v.json) { io.stdout.write(JSON.stringify(r, null, 2) + '\n'); return }
  const lines = []
  if (trust) {
    lines.push(`${target}: trust document ${trust.seq} of ${chain.length}, valid until ${trust.expires}${r.trust.retired ? ' — RETIRED' : ''}:`)
    lines.push(t.describeRoles(trust, { addressKey: t.addressKeyOf(anchor) }))
  } else {
    lines.push(`${target}: no trust document published${anchor ? `; the key ${anchor} holds every role` : ''}`)
  }
  if (pending) {
    lines.push(`pending: trust document ${pending.seq}, collecting signatures:`)
    lines.push(t.describeRoles(pending, { addressKey: t.addressKeyOf(anchor) }))
    for (const n of r.pending.need) lines.push(`  ${n.have} of ${n.threshold} needed from the ${n.what}`)
  }
  if (address) lines.push(`address: ${address}`)
  io.stdout.write(lines.join('\n') + '\n')
}
