// The publisher's side of C2SP tlog-witness (docs/FORMAT.md §13.1): a new
// checkpoint goes to every witness the trust document names, with a
// consistency proof from the size the witness last cosigned, and comes back
// with their cosignature lines. A witness's size is not known in advance: the
// request starts from the size of the log's previous checkpoint, and a 409
// answer names the witness's size, from which the request is made again
// (once). At least the document's threshold of witnesses must cosign, or the
// publish stops before fsinfo.json is replaced.
import { consistencyProof, formatAddCheckpoint, cosignatureVerifierOf, verifyCosignatures } from 'rotree-client/tlog'
import { ThresholdError } from 'rotree-client/errors'

/** How long one witness may take to answer one request. */
export const WITNESS_TIMEOUT_MS = 15_000

async function post (url, body, timeoutMs) {
  const res = await fetch(`${url.replace(/\/+$/, '')}/add-checkpoint`, { method: 'POST', body, signal: AbortSignal.timeout(timeoutMs) })
  return { status: res.status, text: await res.text() }
}

/**
 * One witness's cosignature line for `note` (the log-signed checkpoint of
 * `size` leaves); throws an Error saying why not.
 * @param {{ name: string, url: string, key: string }} w
 * @param {{ note: string, text: string, size: number, oldSize: number, read: Function, timeoutMs?: number }} o
 */
export async function cosignOne (w, { note, text, size, oldSize, read, timeoutMs = WITNESS_TIMEOUT_MS }) {
  const ask = old => post(w.url, formatAddCheckpoint({ oldSize: old, proof: old === 0 || old === size ? [] : consistencyProof(size, old, read), note }), timeoutMs)
  let r = await ask(oldSize)
  if (r.status === 409) {
    const held = /^(0|[1-9][0-9]*)\n$/.exec(r.text) ? Number(r.text) : NaN
    if (!Number.isSafeInteger(held)) throw new Error(`409 without a size (${JSON.stringify(r.text.slice(0, 80))})`)
    if (held > size) throw new Error(`it has cosigned ${held} entries of this log, more than the ${size} here: this log was rolled back or forked`)
    r = await ask(held)
  }
  if (r.status !== 200) throw new Error(`${r.status} ${r.text.trim().slice(0, 200)}`)
  const v = cosignatureVerifierOf(w.name, w.key)
  const mine = r.text.split('\n').filter(l => l.startsWith(`\u2014 ${w.name} `))
  for (const line of mine) {
    let ok = []
    try { ok = verifyCosignatures(text + '\n' + line + '\n', [v]) } catch {}
    if (ok.length) return line + '\n'
  }
  throw new Error('its answer holds no valid cosignature by its key')
}

function reasonOf (err, timeoutMs) {
  if (err?.name === 'TimeoutError') return `no answer in ${timeoutMs / 1000} s`
  if (err?.cause?.code) return `${err.cause.code} (not reachable)`
  return err?.message ?? String(err)
}

/**
 * The cosignature lines of at least `witnesses.threshold` witnesses (all that
 * answer, in list order), asked at once; ThresholdError naming every witness's
 * failure when too few cosign.
 * @param {{ threshold: number, list: { name: string, url: string, key: string }[] }} witnesses
 * @param {{ note: string, text: string, size: number, oldSize: number, read: Function, origin: string, timeoutMs?: number }} o
 * @returns {Promise<{ lines: string[], failed: { name: string, url: string, message: string }[] }>}
 */
export async function collectCosignatures (witnesses, o) {
  const results = await Promise.allSettled(witnesses.list.map(w => cosignOne(w, o)))
  const lines = []; const failed = []
  results.forEach((r, i) => {
    const w = witnesses.list[i]
    if (r.status === 'fulfilled') lines.push(r.value)
    else failed.push({ name: w.name, url: w.url, message: reasonOf(r.reason, o.timeoutMs ?? WITNESS_TIMEOUT_MS) })
  })
  if (lines.length < witnesses.threshold) {
    const why = failed.map(f => `${f.name} (${f.url}): ${f.message}`).join('; ')
    throw new ThresholdError(
      `${lines.length} of the ${witnesses.threshold} witness cosignatures the trust document requires for the log of ${o.origin} (size ${o.size}); ` +
      `nothing was published: fsinfo.json and log/checkpoint are unchanged. ${why}. Publish again once the witnesses answer, or give --no-witness ` +
      '(readers that require witnesses refuse the tree until a later publish is cosigned)',
      { details: { valid: lines.length, threshold: witnesses.threshold, witnesses: failed } })
  }
  return { lines, failed }
}
