// The app's two downloads (app.js): the file shown, and the folder shown as
// a .zip (zipdir.js, zip.js), each verified as it is read and streamed to
// disk where the File System Access API is (save.js), else handed to the
// browser as a Blob.
import { parseFragment } from './address.js'
import { renderPanel } from './panel.js'
import { canStreamToDisk, pickFile, saveChunks, saveWith } from './save.js'
import { planFolder, writeFolder } from './zipdir.js'

const $ = id => document.getElementById(id)

/**
 * Wire the download buttons.
 * @param {{ state: { tree: object|null, nav: number }, showError: (err: Error) => void, fmtSize: (n: number) => string }} app
 */
export function wireDownloads (app) {
  $('download').addEventListener('click', () => download(app))
  $('download-folder').addEventListener('click', () => downloadFolder(app))
}

async function download ({ state, showError, fmtSize }) {
  const addr = parseFragment(location.hash)
  if (!addr || addr.error || !state.tree) return
  const { path } = addr
  const name = path.slice(path.lastIndexOf('/') + 1) || 'download'
  const btn = $('download')
  // the picker must open inside the click's user activation, before any await on the network
  const handle = canStreamToDisk() ? await pickFile(name) : null
  if (canStreamToDisk() && !handle) return // cancelled
  btn.disabled = true
  document.body.dataset.download = 'running'
  const bar = $('progress')
  const label = $('progress-text')
  const nav = state.nav
  try {
    const stat = await state.tree.stat(path)
    bar.max = Math.max(stat.size, 1); bar.value = 0; bar.hidden = false
    const onProgress = n => { bar.value = n; label.textContent = `${fmtSize(n)} of ${fmtSize(stat.size)} verified` }
    onProgress(0)
    const r = await saveChunks(state.tree.readRange(path), { name, handle, onProgress })
    label.textContent = `✓ ${fmtSize(r.bytes)} verified and saved${r.method === 'stream' ? ' (streamed to disk)' : ''}`
    document.body.dataset.download = 'done'
    renderPanel(state.tree)
  } catch (err) {
    bar.hidden = true
    label.textContent = ''
    document.body.dataset.download = 'failed'
    if (nav === state.nav) showError(err)
  } finally {
    btn.disabled = false
  }
}

// a folder is gathered in memory where the browser cannot stream to disk: past this, it is refused
const BLOB_MAX = 2 ** 31

/**
 * The folder shown, as a .zip (zipdir.js, zip.js): listed first (its size
 * known before a byte is written), then every file read through the
 * verifying reader, all from one root. Streamed to disk where the File
 * System Access API is (a failure discards the file), else handed to the
 * browser as a Blob once the whole archive is written.
 */
async function downloadFolder ({ state, showError, fmtSize }) {
  const addr = parseFragment(location.hash)
  if (!addr || addr.error || !state.tree) return
  const { key, path } = addr
  const info = state.tree.info ?? {}
  const top = path === '/' ? (info.name || `tree-${key.replace(/^t/, '').slice(0, 8)}`) : path.slice(path.lastIndexOf('/') + 1)
  const fileName = `${top}.zip`
  const btn = $('download-folder')
  // the picker must open inside the click's user activation, before any await on the network
  const handle = canStreamToDisk() ? await pickFile(fileName) : null
  if (canStreamToDisk() && !handle) return // cancelled
  btn.disabled = true
  document.body.dataset.zip = 'running'
  const bar = $('zip-progress')
  const label = $('zip-text')
  const nav = state.nav
  const view = state.tree.snapshot() // one root for the listing and every file (docs/TRUST.md rule 6)
  try {
    label.textContent = 'Listing the folder…'
    const plan = await planFolder(view, path, { top })
    if (!handle && plan.bytes > BLOB_MAX) {
      throw Object.assign(new Error(`${fmtSize(plan.bytes)} is too much to gather in this browser's memory: save it with a browser that streams to disk (Chromium), or with rotree get`), { code: 'ROTREE_USAGE' })
    }
    bar.max = Math.max(plan.bytes, 1); bar.value = 0; bar.hidden = false
    const onProgress = p => {
      bar.value = p.bytes
      label.textContent = `${p.files} of ${plan.files} files, ${fmtSize(p.bytes)} of ${fmtSize(plan.bytes)} verified`
    }
    onProgress({ files: 0, bytes: 0 })
    const r = await saveWith({ name: fileName, handle }, write => writeFolder(view, plan, write, { onProgress }))
    const n = plan.skipped.length
    const left = n ? ` Left out: ${plan.skipped.slice(0, 3).map(x => `${x.path} (${x.why})`).join('; ')}${n > 3 ? `, and ${n - 3} more` : ''}.` : ''
    label.textContent = `✓ ${fileName}: ${plan.files} files, ${fmtSize(plan.bytes)} verified and saved${r.method === 'stream' ? ' (streamed to disk)' : ''}.${left}`
    document.body.dataset.zip = 'done'
    renderPanel(state.tree)
  } catch (err) {
    bar.hidden = true
    label.textContent = ''
    document.body.dataset.zip = 'failed'
    if (nav === state.nav) showError(err)
  } finally {
    btn.disabled = false
  }
}
