// GET|HEAD /log/checkpoint, /log/fsinfo.proof and /log/tile/…: the tree's transparency log
// (docs/FORMAT.md §13, lib/published/log.js), each file served as
// fsinfo-route.js serves fsinfo.json: a regular file only (no symlink at its
// name), re-read when it is renamed over. Only the exact C2SP tlog-tiles
// paths are served (parseTilePath accepts the one spelling the publisher
// writes), and a tile under a folder that is a symlink (log/, log/tile/…
// pointing out of OUT) is answered as missing. The checkpoint changes at
// every publish and is cached as briefly as fsinfo.json, and so are
// log/fsinfo.proof (the tlog-proof of the current fsinfo.json, renamed in
// after the checkpoint) and a
// partial tile or bundle (…/<N>.p/<W>: one a killed publish wrote past the
// checkpoint is written again by the next); a full tile or bundle never
// changes its bytes once a checkpoint covers it and is cached for a day.
import { lstat } from 'node:fs/promises'
import { join } from 'node:path'
import { parseTilePath } from 'rotree-client/tlog'
import { createFsinfoRoute } from './fsinfo-route.js'
import { sendStatus } from './blob-route.js'

const LOG_PATH = /^\/log\/(checkpoint|fsinfo\.proof|tile\/[0-9a-z./]{5,80})(?:\?|$)/
/** The files under log/ renamed in at every publish (FORMAT.md §13), served as the checkpoint is. */
const RENAMED = new Set(['checkpoint', 'fsinfo.proof'])
const TILE_MAX_AGE = 86400

/** The path under log/ that `url` names, or null: log/checkpoint, log/fsinfo.proof or a C2SP tile or bundle path. */
export function logPathOf (url) {
  const m = LOG_PATH.exec(url)
  if (!m) return null
  if (RENAMED.has(m[1])) return m[1]
  try { parseTilePath(m[1]) } catch { return null }
  return m[1]
}

/** Every folder from dir/log down to the file's is a real folder (not a symlink). */
async function realFolders (dir, rel) {
  const parts = ['log', ...rel.split('/').slice(0, -1)]
  for (let i = 1; i <= parts.length; i++) {
    let st
    try { st = await lstat(join(dir, ...parts.slice(0, i))) } catch { return false }
    if (!st.isDirectory()) return false
  }
  return true
}

/**
 * @param {{ dir: string, maxAge: number, log?: object | null, max?: number }} o maxAge: the checkpoint's (fsinfo.json's)
 * @returns {((req, res) => void) & { matches: (url: string) => boolean }}
 */
export function createLogRoute ({ dir, maxAge, log = null, max = 256 }) {
  const routes = new Map()
  async function route (req, res) {
    const rel = logPathOf(req.url)
    if (!(await realFolders(dir, rel))) return sendStatus(res, 404, 'not found')
    let r = routes.get(rel)
    if (!r) {
      if (routes.size >= max) routes.delete(routes.keys().next().value)
      const checkpoint = RENAMED.has(rel)
      r = createFsinfoRoute({
        dir,
        name: `log/${rel}`,
        maxAge: checkpoint || rel.includes('.p/') ? maxAge : TILE_MAX_AGE,
        type: checkpoint ? 'text/plain; charset=utf-8' : 'application/octet-stream',
        log
      })
      routes.set(rel, r)
    }
    r(req, res)
  }
  route.matches = url => logPathOf(url) !== null
  return route
}
