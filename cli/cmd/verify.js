// rotree verify --offline
import fs from 'node:fs/promises'
import { UsageError } from 'rotree-client/errors'
import { parseFragment } from 'rotree-client/trust'
import { verifyFolder, verifyDownload } from '../offline.js'
import { readProofBundle, PROOF_SUFFIX } from '../proof-bundle.js'
import { positiveInt } from '../common.js'
import { fmtBytes } from '../progress.js'
import { escapeText } from '../escape.js'

export default {
  usage: 'verify --offline [--at TIME] [--key ANCHOR[:NAME]] [--proof FILE] TARGET',
  summary: 'check a pulled folder, or a get output with its proof bundle, as the reader would have at TIME, with no network',
  positionals: [1, 1],
  options: {
    offline: { type: 'boolean', help: 'required: verify from the bytes on this machine only (docs/FORMAT.md §13.2)' },
    at: { type: 'string', arg: 'TIME', help: 'the reader\'s clock: an ISO time (2026-01-31T12:00:00Z) or unix seconds (default: now)' },
    key: { type: 'string', arg: 'ANCHOR[:NAME]', help: 'what follows # in the tree\'s address; without it the bundle\'s (or the folder\'s fsinfo.json\'s) own claim is used, with a warning' },
    proof: { type: 'string', arg: 'FILE', help: `TARGET is a get output: its proof bundle (default TARGET${PROOF_SUFFIX}, when it exists)` },
    jobs: { type: 'string', arg: 'N', help: 'a folder: hashing threads (default: CPUs - 1, at most 4)' }
  },
  async run ([target], v, io) {
    if (!v.offline) throw new UsageError('verify checks offline only: give --offline')
    const atMs = parseAt(v.at)
    const given = v.key === undefined ? null : fragmentOf(v.key)
    const bundleFile = v.proof ?? await exists(target + PROOF_SUFFIX)
    const warn = what => io.stderr.write(`rotree: warning: no --key: trust comes from ${what} only, not from an address you hold\n`)
    let r
    if (bundleFile) {
      let bytes
      try { bytes = await fs.readFile(bundleFile) } catch (err) { throw new UsageError(`--proof ${bundleFile}: ${err.code ?? err.message}`) }
      const bundle = readProofBundle(bytes)
      if (!given) warn(`the proof bundle's own tree (#${escapeText(bundle.tree)})`)
      r = await verifyDownload(target, bundle, { fragment: given ?? fragmentOf(bundle.tree), atMs })
    } else {
      const st = await fs.stat(target)
      if (!st.isDirectory()) throw new UsageError(`${target} is a file: give its proof bundle (--proof FILE, made by rotree get --proof)`)
      let fragment = given
      if (!fragment) {
        fragment = await folderFragment(target)
        warn(`the folder's own fsinfo.json (#${escapeText(fragment)})`)
      }
      r = await verifyFolder(target, { fragment, atMs, jobs: v.jobs ? positiveInt(v.jobs, 'jobs') : undefined })
    }
    io.stdout.write(report(target, r, atMs))
    return 0
  }
}

function parseAt (s) {
  if (s === undefined) return Date.now()
  if (/^[0-9]{1,12}$/.test(s)) return Number(s) * 1000
  const ms = Date.parse(s)
  if (!/^\d{4}-\d\d-\d\d/.test(s) || Number.isNaN(ms)) throw new UsageError(`--at: ${JSON.stringify(s)} is not an ISO time or unix seconds`)
  return ms
}

function fragmentOf (s) {
  try { parseFragment(s) } catch (err) { throw new UsageError(`--key: ${err.message}`) }
  return s
}

async function exists (f) { try { await fs.access(f); return f } catch { return null } }

/** The anchor[:name] a folder's fsinfo.json claims (version 2), or its key (version 1). */
async function folderFragment (dir) {
  let j
  try { j = JSON.parse(await fs.readFile(`${dir}/fsinfo.json`, 'utf8')) } catch (err) { throw new UsageError(`${dir}/fsinfo.json: ${err.code ?? err.message}; give --key ANCHOR[:NAME]`) }
  const f = j?.version === 2 ? (j.name ? `${j.anchor}:${j.name}` : j.anchor) : j?.key
  if (typeof f !== 'string') throw new UsageError(`${dir}/fsinfo.json names no anchor; give --key ANCHOR[:NAME]`)
  return fragmentOf(f)
}

function report (target, r, atMs) {
  const rec = r.record
  const lines = [`verified offline at ${new Date(atMs).toISOString()}: ${target}`]
  lines.push(`  fsinfo.json  seq ${rec.seq}, ${rec.version === 2 ? `tree ${JSON.stringify(rec.name)}, trust document ${rec.trust?.seq ?? 'none'}, ` : ''}expires ${rec.expires}`)
  if (r.log) lines.push(`  log          leaf ${r.log.index} of ${r.log.size}; ${r.log.cosigned.length} fresh witness cosignature(s)${r.log.cosigned.length ? ': ' + r.log.cosigned.map(c => escapeText(c.name)).join(', ') : ''}`)
  else lines.push('  log          not checked: no log holds this fsinfo.json, and the trust document names no witnesses')
  if (r.kind === 'folder') lines.push(`  blobs        ${r.blobs} hashed, ${fmtBytes(r.bytes)}`)
  else lines.push(`  files        ${r.files} files (${fmtBytes(r.bytes)}), ${r.dirs} directories, ${r.links} symlinks${r.linksAbsent ? ` (${r.linksAbsent} not written by get)` : ''}`)
  lines.push('ok')
  return lines.join('\n') + '\n'
}
