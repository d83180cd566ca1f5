// GET|HEAD /fsinfo.json: the one mutable file (docs/FORMAT.md §6); and, with
// another `name`, a trust document trust/<seq>.json (§12.2), small JSON read
// the same way.
//
// A rebuild renames a new fsinfo.json into place, so the file behind the path
// changes without notice. Each request stats the path and compares identity
// (dev, ino) and version (size, mtime, ctime) with what is cached: a rename
// gives a new inode, so the very next request sees the new file. fs.watch
// would save the stat but can miss or delay events (and watches the old inode
// after a rename); fsinfo is fetched rarely next to blobs, so one stat is cheap.
//
// Only a regular file is served, as under h/ (lib/open-regular.js): the stat is an
// lstat, so a symlink at the name is a 404 and is never followed out of OUT,
// and the file is opened O_NOFOLLOW | O_NONBLOCK and checked on its
// descriptor, so one swapped in between the lstat and the open is refused too.

import { createHash } from 'node:crypto'
import { lstat } from 'node:fs/promises'
import { join } from 'node:path'
import { etagMatches } from 'rotree-client/http'
import { CORS, sendStatus } from './blob-route.js'
import { openRegular } from '../lib/open-regular.js'

// Far above FORMAT.md's MAX_FSINFO; only here so a stray huge file cannot
// make the server allocate without bound. Readers enforce the real limit.
const READ_MAX = 1 << 20

/**
 * @param {{ dir: string, maxAge: number, name?: string, type?: string, log?: { error?: Function } | null }} opts
 *   name: the file under dir (default fsinfo.json); type: its Content-Type (default application/json)
 * @returns {(req, res) => void} handler for GET/HEAD /<name> (query ignored)
 */
export function createFsinfoRoute ({ dir, maxAge, name = 'fsinfo.json', type = 'application/json', log = null }) {
  const file = join(dir, name)
  const cacheControl = `public, max-age=${Math.max(0, Math.floor(maxAge))}`
  let current = null // { key, buf, etag, h200, h304 }
  let loading = null // { key, promise } while a new version is being read

  const _key = (st) => `${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`

  // Key and bytes come from the same open descriptor, so they always agree,
  // even if another rename lands between our lstat and our read. Null (a 404,
  // never kept in `current`) when no regular file is there now.
  async function _read () {
    const f = await openRegular(file)
    if (f === null) return null
    const { fh, st } = f
    try {
      if (st.size > READ_MAX) throw new Error(`${name} is larger than ${READ_MAX} bytes`)
      const buf = await fh.readFile()
      const etag = `"${createHash('sha256').update(buf).digest('hex')}"`
      const common = ['ETag', etag, 'Cache-Control', cacheControl, 'X-Content-Type-Options', 'nosniff', ...CORS]
      return {
        key: _key(st),
        buf,
        etag,
        h200: ['Content-Type', type, 'Content-Length', String(buf.length), ...common],
        h304: common
      }
    } finally {
      await fh.close()
    }
  }

  async function _current () {
    let st
    try {
      st = await lstat(file)
    } catch (err) {
      if (err.code === 'ENOENT' || err.code === 'ENOTDIR' || err.code === 'ELOOP') return null
      throw err
    }
    if (!st.isFile()) return null // a symlink, a FIFO, a folder: not something the builder wrote
    const key = _key(st)
    if (current !== null && current.key === key) return current
    if (loading === null || loading.key !== key) {
      const promise = _read().then((v) => {
        if (v !== null) current = v
        return v
      }).finally(() => { if (loading?.promise === promise) loading = null })
      loading = { key, promise }
    }
    return loading.promise
  }

  return function fsinfoRoute (req, res) {
    _current().then((v) => {
      if (v === null) return sendStatus(res, 404, 'not found')
      const inm = req.headers['if-none-match']
      if (inm !== undefined && etagMatches(inm, v.etag)) return res.writeHead(304, v.h304).end()
      res.writeHead(200, v.h200)
      req.method === 'HEAD' ? res.end() : res.end(v.buf)
    }, (err) => {
      if (err.code === 'ENOENT') return sendStatus(res, 404, 'not found') // renamed away mid-read
      log?.error?.(`rotree serve: ${name}: ${err.message}`)
      sendStatus(res, 500, `cannot read ${name}`)
    })
  }
}

// trust/revoked.json too (FORMAT.md §12.12): a gated gateway reading this tree verifies it and honours it (gateway/edge-gate.js)
const TRUST_PATH = /^\/trust\/([1-9][0-9]{0,15}|revoked)\.json(?:\?|$)/
const HISTORY_PATH = /^\/history\/(index|0|[1-9][0-9]{0,15})\.json(?:\?|$)/

/**
 * GET|HEAD /trust/<seq>.json and /trust/revoked.json: one fsinfo-style route per trust document asked
 * for, at most `max` of them kept (a family has few; a client asking for many
 * numbers only costs a 404 each once the map is full).
 * @returns {((req, res) => void) & { matches: (url: string) => boolean }}
 */
export function createTrustRoute ({ dir, maxAge, log = null, max = 256 }) {
  return numberedRoute(TRUST_PATH, 'trust', { dir, maxAge, log, max })
}

/**
 * GET|HEAD /history/<seq>.json and /history/index.json: the signed roots this
 * folder published, for `rotree log` (lib/published/history.js). Each is
 * checked by the reader against the tree's key; a mirror can only leave some out.
 * @returns {((req, res) => void) & { matches: (url: string) => boolean }}
 */
export function createHistoryRoute ({ dir, maxAge, log = null, max = 256 }) {
  return numberedRoute(HISTORY_PATH, 'history', { dir, maxAge, log, max })
}

function numberedRoute (re, folder, { dir, maxAge, log, max }) {
  const routes = new Map()
  function route (req, res) {
    const id = re.exec(req.url)[1]
    let r = routes.get(id)
    if (!r) {
      if (routes.size >= max) routes.delete(routes.keys().next().value)
      r = createFsinfoRoute({ dir, maxAge, name: `${folder}/${id}.json`, log })
      routes.set(id, r)
    }
    r(req, res)
  }
  route.matches = url => re.test(url)
  return route
}
