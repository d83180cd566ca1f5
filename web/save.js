// Saving a verified file. Every chunk tree.readRange() yields has already been
// verified (trust rule 3); what is left is to never leave something on disk
// that looks complete when it is not.
//
// - File System Access API (Chromium, secure contexts): stream chunk by chunk
//   to the file the user picked. The browser writes to a hidden swap file and
//   moves it into place only on close(); on any error we abort(), which
//   discards it. Memory stays flat for any file size.
// - Elsewhere: collect the chunks and hand the browser a Blob, only after the
//   whole file has verified.

/** True when this browser can stream to a file the user picks. */
export function canStreamToDisk () { return typeof globalThis.showSaveFilePicker === 'function' }

/**
 * Ask where to save. Must run straight from the click handler: browsers only
 * open the picker during the user's gesture. Resolves null when the user cancels.
 */
export async function pickFile (name) {
  try {
    return await globalThis.showSaveFilePicker({ suggestedName: name })
  } catch (err) {
    if (err?.name === 'AbortError') return null
    throw err
  }
}

/**
 * Save what `produce` writes, as one file: streamed to `handle` when there is
 * one (the browser's swap file, moved into place by close(), discarded by
 * abort() when `produce` throws), else gathered and handed to the browser as
 * a Blob download named `name` only once `produce` has finished.
 * @param {{ name: string, handle?: FileSystemFileHandle|null }} o
 * @param {(write: (bytes: Uint8Array) => Promise<void>) => Promise<void>} produce
 * @returns {Promise<{ method: string, bytes: number }>}
 */
export async function saveWith ({ name, handle = null }, produce) {
  let bytes = 0
  if (handle) {
    const w = await handle.createWritable()
    try {
      await produce(async b => { await w.write(b); bytes += b.length })
      await w.close()
    } catch (err) {
      await w.abort().catch(() => {})
      throw err
    }
    return { method: 'stream', bytes }
  }
  const parts = []
  await produce(async b => { parts.push(b); bytes += b.length })
  // only now, with every byte verified, does anything reach the download
  const url = URL.createObjectURL(new Blob(parts, { type: 'application/octet-stream' }))
  const a = document.createElement('a')
  a.href = url
  a.download = name
  a.rel = 'noopener'
  document.body.append(a)
  a.click()
  a.remove()
  setTimeout(() => URL.revokeObjectURL(url), 60_000)
  return { method: 'blob', bytes }
}

/**
 * @param {AsyncIterable<Uint8Array>} chunks verified bytes, in order
 * @param {{ name: string, handle?: FileSystemFileHandle|null, onProgress?: (bytes: number) => void }} o
 * @returns {Promise<{ method: string, bytes: number }>}
 */
export function saveChunks (chunks, { name, handle = null, onProgress = () => {} }) {
  let n = 0
  return saveWith({ name, handle }, async write => {
    for await (const b of chunks) { await write(b); n += b.length; onProgress(n) }
  })
}
