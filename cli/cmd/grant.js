// rotree grant: issue, delegate and show grants (docs/FORMAT.md §12.10),
// write the secret a gated edge mints its tokens with (§12.11), and trade a
// grant for an edge token for curl, wget and WebDAV clients (grant token).
import fs from 'node:fs/promises'
import { randomBytes } from 'node:crypto'
import { UsageError, BadKeyError, BadPathError, MirrorHttpError } from 'rotree-client/errors'
import { parseFragment } from 'rotree-client/trust'
import path from 'node:path'
import { decodeGrant, encodeGrant, unsignedGrant, signGrant, verifyGrant, accessRoleOf, grantHash, decodeRevoked, encodeRevoked, revokedMessage, verifyRevoked } from 'rotree-client/grant'
import { readKeyFiles, readPublicKey } from '../../builder/keys.js'
import { parseDuration } from '../../builder/duration.js'
import { addressOf } from '../json.js'

const SUBS = ['issue', 'delegate', 'show', 'secret', 'revoke', 'token']

export default {
  usage: 'grant issue OUT --to KEY.pub --ttl 30d --key KEYFILE -o GRANT | grant delegate GRANT --grant-key KEYFILE --to KEY.pub --ttl 1d -o GRANT2 | grant show GRANT [--json] | grant secret FILE | grant revoke OUT GRANT --key KEYFILE | grant token GRANT --grant-key KEYFILE URL [--ca FILE] [--json]',
  summary: 'who may fetch a gated tree: sign a grant with the access key, delegate one, show one, revoke one; write an edge\'s token secret; trade a grant for an edge token (docs/FORMAT.md §12.10–12.12)',
  positionals: [2, 3],
  options: {
    to: { type: 'string', arg: 'KEY.pub', help: 'issue, delegate: the holder\'s public key (64 hex, a file holding it, or its secret key file)' },
    ttl: { type: 'string', arg: 'DURATION', help: 'issue, delegate: how long the grant is valid (issue: default 30d; delegate: default 1d, never past the parent)' },
    key: { type: 'string', multiple: true, arg: 'KEYFILE', help: 'issue, revoke: an access key (repeatable: the access role\'s threshold of them)' },
    'grant-key': { type: 'string', arg: 'KEYFILE', help: 'delegate, token: the secret key of the grant\'s holder' },
    tree: { type: 'string', arg: 'NAME', help: 'issue: the tree name (default: the one OUT publishes)' },
    output: { type: 'string', short: 'o', arg: 'FILE', help: 'issue, delegate: where to write the grant' },
    json: { type: 'boolean', help: 'show: print the grant\'s chain as JSON; token: the exchange\'s whole answer (token, expires, holder, header, query)' },
    ca: { type: 'string', arg: 'FILE', help: 'token: PEM certificate(s) to trust for an https URL, besides the system\'s' }
  },
  async run ([sub, target, third], v, io) {
    if (!SUBS.includes(sub)) throw new UsageError(`grant ${sub}: expected one of ${SUBS.join(', ')}`)
    const two = sub === 'revoke' || sub === 'token'
    if (two !== (third !== undefined)) throw new UsageError(sub === 'revoke' ? 'grant revoke OUT GRANT: which grant?' : sub === 'token' ? 'grant token GRANT URL: where? (a gated mirror, gateway or token exchange)' : `grant ${sub} takes one argument`)
    if (sub === 'revoke') return revoke(target, third, v, io)
    if (sub === 'token') return token(target, third, v, io)
    if (sub === 'show') return show(target, v, io)
    if (sub === 'secret') return writeSecret(target, io)
    if (!v.to) throw new UsageError(`grant ${sub} needs --to KEY.pub (the holder's public key)`)
    if (!v.output) throw new UsageError(`grant ${sub} needs -o FILE (where to write the grant)`)
    const ttlMs = parseDuration(v.ttl ?? (sub === 'issue' ? '30d' : '1d'))
    if (!ttlMs) throw new UsageError(`--ttl ${v.ttl}: expected a duration such as 10m, 12h, 30d`)
    const holder = await readPublicKey(v.to, '--to')
    const warn = m => io.stderr.write(`rotree: warning: ${m}\n`)
    const now = Date.now()
    const g = sub === 'issue' ? await issue(target, { holder, ttlMs, now, v, warn }) : await delegate(target, { holder, ttlMs, now, v, warn, io })
    await fs.writeFile(v.output, encodeGrant(g), { flag: 'wx', mode: 0o644 }).catch(err => {
      if (err.code === 'EEXIST') throw new BadPathError(`${v.output} exists and is kept: a grant is never overwritten`, { details: { path: v.output } })
      throw err
    })
    io.stdout.write(`wrote ${v.output}: ${holder} may fetch ${g.anchor}${g.name ? ':' + g.name : ''} until ${g.expires}${g.parent ? ` (delegated from ${g.parent.holder})` : ''}\n`)
  }
}

async function issue (out, { holder, ttlMs, now, v, warn }) {
  if (!v.key?.length) throw new UsageError('grant issue needs --key KEYFILE (an access key; a single-key tree\'s own key)')
  if (v['grant-key']) throw new UsageError('--grant-key goes with grant delegate')
  const { trustInForce } = await import('../../builder/trust-publish.js')
  const f = await trustInForce(out)
  const anchor = f.anchor
  if (anchor === null) throw new UsageError(`${out} publishes no tree yet: build or sign it first`)
  const name = v.tree ?? f.name
  const access = accessRoleOf(f.trust, parseFragment(anchor).anchor)
  if (access === null) throw new UsageError(`trust document ${f.trust.seq} of ${out} has no access role: add one (rotree trust update OUT --add-access KEY) before granting`)
  const keys = await readKeyFiles(v.key, warn)
  for (const k of keys) if (!access.keys.includes(k.publicKey)) throw new BadKeyError(`key ${k.publicKey} is not in the access role of ${out}: its signature would count for nothing`)
  const g = signGrant(unsignedGrant({ anchor, name, holder, issued: new Date(now).toISOString(), expires: new Date(now + ttlMs).toISOString() }), keys.map(k => k.secretKey))
  verifyGrant(g, { anchor, name, access, now }) // the edge's own rule, the only judge (a threshold not met is said here)
  return g
}

async function delegate (file, { holder, ttlMs, now, v, warn, io }) {
  if (!v['grant-key']) throw new UsageError('grant delegate needs --grant-key KEYFILE (the secret key of the grant\'s holder)')
  if (v.key?.length || v.tree) throw new UsageError('--key and --tree go with grant issue')
  const parent = decodeGrant(await fs.readFile(file))
  const [k] = await readKeyFiles([v['grant-key']], warn)
  if (k.publicKey !== parent.holder) throw new BadKeyError(`--grant-key ${v['grant-key']} is not the holder of ${file} (${parent.holder})`)
  let expiresMs = now + ttlMs
  if (expiresMs > parent.expiresMs) {
    io.stderr.write(`rotree: note: --ttl capped: a delegation expires no later than its parent (${parent.expires})\n`)
    expiresMs = parent.expiresMs
  }
  if (expiresMs <= now) throw new UsageError(`${file} expired at ${parent.expires}: there is nothing left to delegate`)
  return signGrant(unsignedGrant({ anchor: parent.anchor, name: parent.name, holder, scope: parent.scope, issued: new Date(now).toISOString(), expires: new Date(expiresMs).toISOString(), parent }), [k.secretKey])
}

async function show (file, v, io) {
  const g = decodeGrant(await fs.readFile(file))
  const chain = []
  for (let c = g; c; c = c.parent) chain.unshift(c)
  const levels = chain.map((c, i) => ({
    holder: c.holder, scope: c.scope, issued: c.issued, expires: c.expires, hash: grantHash(c),
    signedBy: i === 0 ? c.signatures.map(s => s.key) : [chain[i - 1].holder]
  }))
  const effective = chain.reduce((a, c) => c.expiresMs < a.expiresMs ? c : a)
  const tree = `${g.anchor}${g.name ? ':' + g.name : ''}`
  if (v.json) {
    // the tree as every --json names it (docs/JSON.md): a grant knows no mirror, so <mirror-url> stands for it
    io.stdout.write(JSON.stringify({ address: addressOf(g.anchor, g.name), key: g.anchor, name: g.name ?? '', holder: g.holder, scope: g.scope, expires: effective.expires, delegations: chain.length - 1, chain: levels }, null, 2) + '\n')
    return
  }
  const lines = [`grant for tree #${tree}`, `  holder  ${g.holder}`, `  scope   ${g.scope}`, `  expires ${effective.expires}${Date.parse(effective.expires) <= Date.now() ? ' (expired)' : ''}`]
  levels.forEach((l, i) => lines.push(`  ${i === 0 ? 'issued' : `delegation ${i}`} ${l.issued} to ${l.holder.slice(0, 16)}…, until ${l.expires}, signed by ${l.signedBy.map(k => k.slice(0, 16) + '…').join(', ')}`))
  lines.push('  (signatures are checked by the edge that serves the tree, against its access role)')
  io.stdout.write(lines.join('\n') + '\n')
}

/**
 * Add GRANT to OUT/trust/revoked.json (FORMAT.md §12.12), signed again by the
 * access keys given: entries whose grant has expired are dropped, the rest
 * kept. Edges that gate OUT's tree refuse new tokens to any chain holding it
 * within a minute; tokens already given live out their few minutes.
 */
async function revoke (out, file, v, io) {
  if (!v.key?.length) throw new UsageError('grant revoke needs --key KEYFILE (an access key; a single-key tree\'s own key)')
  const { trustInForce } = await import('../../builder/trust-publish.js')
  const f = await trustInForce(out)
  if (f.anchor === null) throw new UsageError(`${out} publishes no tree yet`)
  const g = decodeGrant(await fs.readFile(file))
  const name = f.name ?? ''
  if (g.anchor !== f.anchor || g.name !== name) throw new UsageError(`${file} is a grant for ${g.anchor}:${g.name}, not for ${f.anchor}:${name}, the tree ${out} publishes`)
  const access = accessRoleOf(f.trust, parseFragment(f.anchor).anchor)
  if (access === null) throw new UsageError(`${out} has no access role: there is nothing to revoke`)
  const keys = await readKeyFiles(v.key, m => io.stderr.write(`rotree: warning: ${m}\n`))
  for (const k of keys) if (!access.keys.includes(k.publicKey)) throw new BadKeyError(`key ${k.publicKey} is not in the access role of ${out}: its signature would count for nothing`)
  const listFile = path.join(out, 'trust', 'revoked.json')
  const now = Date.now()
  let entries = []
  const old = await fs.readFile(listFile).catch(err => { if (err.code === 'ENOENT') return null; throw err })
  if (old !== null) entries = decodeRevoked(old).grants.filter(e => e.expiresMs > now)
  let expires = g.expires // the chain's earliest expiry: the grant is dead after it anyway
  for (let c = g; c; c = c.parent) if (c.expiresMs < Date.parse(expires)) expires = c.expires
  const hash = grantHash(g)
  if (!entries.some(e => e.hash === hash)) entries.push({ hash, expires })
  entries.sort((a, b) => a.hash < b.hash ? -1 : 1)
  // issued strictly after the list it replaces: edges refuse an older list (a rollback)
  const issued = new Date(Math.max(now, old === null ? 0 : decodeRevoked(old).issuedMs + 1)).toISOString()
  const unsigned = { anchor: f.anchor, name, issued, grants: entries, signatures: [] }
  const signed = signGrant({ ...unsigned, message: revokedMessage(unsigned) }, keys.map(k => k.secretKey))
  const text = encodeRevoked(signed)
  verifyRevoked(decodeRevoked(text), { anchor: f.anchor, name, access }) // the edge's own check (a threshold not met is said here)
  await fs.mkdir(path.join(out, 'trust'), { recursive: true })
  const tmp = `${listFile}.tmp-${process.pid}`
  await fs.writeFile(tmp, text, { mode: 0o644 })
  await fs.rename(tmp, listFile)
  io.stdout.write(`revoked ${hash} (holder ${g.holder}) in ${listFile}: ${entries.length} grant${entries.length === 1 ? '' : 's'} listed; edges gating ${out} refuse it new tokens within a minute\n`)
}

/**
 * Trade GRANT at URL's `.rotree/token` (a gated mirror, `rotree
 * token-server`, or a gated gateway's tree: FORMAT.md §12.11) and print the
 * edge token, for `curl -H "X-Rotree-Token: $(rotree grant token …)"`. The
 * request is made and the answer judged by the reader's own code,
 * gatedTransport (rotree-client/net), over a transport that only notes the
 * token it is handed: what a reader of a gated mirror would get, and the
 * same refusals (ROTREE_NO_ACCESS with the edge's reason).
 */
async function token (file, url, v, io) {
  if (!v['grant-key']) throw new UsageError('grant token needs --grant-key KEYFILE (the secret key of the grant\'s holder)')
  let base
  try {
    const u = new URL(url)
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('not http')
    u.hash = ''; u.search = ''
    if (!u.pathname.endsWith('/')) u.pathname += '/'
    base = u.href
  } catch { throw new UsageError(`grant token: ${url} is not an http(s) URL (the mirror or gateway tree URL: its exchange is <URL>.rotree/token)`) }
  const g = decodeGrant(await fs.readFile(file))
  const [k] = await readKeyFiles([v['grant-key']], m => io.stderr.write(`rotree: warning: ${m}\n`))
  if (k.publicKey !== g.holder) throw new BadKeyError(`--grant-key ${v['grant-key']} is not the holder of ${file} (${g.holder})`)
  const { gatedTransport, createTransport } = await import('rotree-client/net')
  const ca = (await import('../common.js')).caOption(v)
  // the reader's own transport posts the request (its TLS trust: --ca, its deadline); its answer is kept for --json
  const http = createTransport(ca ? { ca } : {})
  let answer = null
  let sent = null
  const noting = {
    get: async u => { sent = u; return new Uint8Array(0) },
    post: async (u, body, o) => {
      const r = await http.post(u, body, o)
      if (r.status === 200) { try { answer = JSON.parse(new TextDecoder().decode(r.body)) } catch {} }
      return r
    },
    close () { http.close() }
  }
  const t = gatedTransport(noting, { grant: g, secretKey: k.secretKey })
  try {
    await t.get(`${base}h/${'0'.repeat(64)}`) // a blob path: the one kind of request a token is fetched for
  } catch (err) {
    if (err.code === 'ROTREE_NO_ACCESS') err.todo = `The edge refuses this grant: check that ${url} serves the grant's tree (#${g.anchor}${g.name ? ':' + g.name : ''}) and that the grant is current (rotree grant show ${file}); else ask whoever gave it for a new one.`
    else err.todo ??= `Check the URL: its exchange is ${base}.rotree/token (a gated mirror, rotree token-server, or a gated gateway's tree).`
    throw err
  } finally { t.close() }
  const tok = new URL(sent).searchParams.get('rotree_token')
  if (tok === null) {
    const err = new MirrorHttpError(`${base} is not gated (its .rotree/token answered 404): it needs no edge token`, { details: { status: 404 } })
    err.todo = 'Fetch without a token, or give the URL of the gated mirror or gateway tree (the one that answered 403).'
    throw err
  }
  io.stdout.write(v.json ? JSON.stringify(answer, null, 2) + '\n' : tok + '\n')
}

/** 32 random bytes, hex, mode 0600: the secret an edge mints and checks tokens with (FORMAT.md §12.11). */
async function writeSecret (file, io) {
  await fs.writeFile(file, randomBytes(32).toString('hex') + '\n', { flag: 'wx', mode: 0o600 }).catch(err => {
    if (err.code === 'EEXIST') throw new BadPathError(`${file} exists and is kept (a secret is never overwritten)`, { details: { path: file } })
    throw err
  })
  io.stdout.write(`wrote an edge token secret to ${file} (mode 0600): give it to rotree serve --grants, rotree token-server and rotree nginx-config --gated, nobody else\n`)
}
