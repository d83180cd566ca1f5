// Small pieces of `rotree get` (cli/download.js) that are not its policy:
// stopping a read on Ctrl-C, telling errors with the user's path, and
// reading mtimes the way the builder does.
import { AbortedError } from 'rotree-client/errors'

/** A bigint stat's mtime in whole milliseconds, floored (as the builder reads it). */
export function msOf (st) {
  const q = st.mtimeNs / 1000000n
  return st.mtimeNs < 0n && q * 1000000n !== st.mtimeNs ? q - 1n : q
}

/**
 * Verified bytes from `iterable`, until `signal` aborts: then AbortedError at
 * once, without waiting for a fetch in flight (the tree's close() ends it).
 */
export async function * abortable (iterable, signal) {
  if (!signal) { yield * iterable; return }
  const it = iterable[Symbol.asyncIterator]()
  let onAbort
  const aborted = new Promise((resolve, reject) => { onAbort = () => reject(new AbortedError('interrupted')) })
  aborted.catch(() => {})
  signal.addEventListener('abort', onAbort, { once: true })
  let pending = false
  try {
    while (true) {
      if (signal.aborted) throw new AbortedError('interrupted')
      pending = true
      const r = await Promise.race([it.next(), aborted])
      pending = false
      if (r.done) return
      yield r.value
    }
  } finally {
    signal.removeEventListener('abort', onAbort)
    const done = it.return?.()
    if (!pending) await done; else done?.catch(() => {}) // a next() still in flight: not waited for
  }
}

/** A system error about a temporary file, told with the user's path for it. */
export function userError (err, tmp, shown) {
  if (!(err instanceof Error) || err.code?.startsWith?.('ROTREE_')) return err
  let msg = tmp ? err.message.split(tmp).join(shown) : err.message
  if (err.path === tmp) err.path = shown
  if (err.dest === tmp) err.dest = shown
  if (!msg.includes(shown)) msg = `${shown}: ${msg}`
  err.message = msg
  return err
}
