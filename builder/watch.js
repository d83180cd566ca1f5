// `rotree build --watch`: build, then rebuild and publish whenever SRC changes.
//
// A cold rebuild must lstat every file of SRC, start Node and load its
// modules, and open the build index: for 100,000 files that is most of a
// second, whatever changed. Here the process stays: OUT's lock, the index
// and the worker threads are held (Builder), every directory of SRC is
// watched (fs.watch, one inotify watch per directory, added when the walk
// opens it and before it is listed, so no change after the listing is
// missed), and a change marks its directory dirty. After a quiet moment
// (`quietMs`, at most `maxWaitMs` after the first change) a partial run
// looks at the dirty directories only, their ancestors coming from the
// index (walk.js), and publishes; it publishes the root a cold build of the
// same SRC gives (test/builder/watch.test.js).
//
// What is trusted, and what is checked: the file system's events say where
// to look; what is published is still only what the walk reads through
// checked handles. A partial run also needs the index to vouch for h/
// (build-index.js): if h/ changed behind its back, the run is full. inotify
// can drop events (its queue overflows, and Node does not report it), so a
// full run is made every `rescanMs` as well, and after a watch fails. A run
// that fails (a file vanished mid-read, a disk full) publishes nothing;
// what it was to look at is looked at again with the next change.
//
// The lock is held as long as it watches: `rotree gc`, `resign` and
// `sign --publish` on the same OUT wait until it stops.
import { watch as fsWatch } from 'node:fs'
import { BuildInputError } from 'rotree-client/errors'
import { Builder } from './build.js'

/**
 * @param {object} o the options of build()
 * @param {object} w
 * @param {(r: object) => void} w.onBuild after each publish, with build()'s result
 * @param {(err: Error) => void} w.onError a run that failed (nothing was published)
 * @param {AbortSignal} w.signal stops watching (after the run in progress)
 * @param {number} [w.quietMs=30] @param {number} [w.maxWaitMs=1000] @param {number} [w.rescanMs=600000]
 * @returns {Promise<void>} once stopped
 */
export async function watchBuild (o, { onBuild, onError = () => {}, signal, quietMs = 30, maxWaitMs = 1000, rescanMs = 600_000 }) {
  const builder = await Builder.open(o)
  const watchers = new Map() // rel → { w, ino, dev }
  let dirty = new Set()
  let full = true // the first run, a rescan, a watch that failed
  let wake = null; let kicked = false
  let timer = null; let first = 0

  // a latch: a kick while nothing waits is not lost
  const kick = () => { kicked = true; const f = wake; wake = null; f?.() }
  const kicks = async () => { if (!kicked) await new Promise(resolve => { wake = resolve }); kicked = false }
  const soon = () => {
    const now = Date.now()
    if (!timer) first = now
    clearTimeout(timer)
    timer = setTimeout(() => { timer = null; kick() }, Math.max(0, Math.min(quietMs, first + maxWaitMs - now)))
  }
  const mark = rel => { dirty.add(rel); soon() }

  const onDir = (rel, abs, st) => {
    const had = watchers.get(rel)
    if (had && had.ino === st.ino && had.dev === st.dev) return
    had?.w.close()
    let w
    try {
      w = fsWatch(abs, { persistent: true }, () => mark(rel))
    } catch (err) {
      // ENOSPC: out of inotify watches (fs.inotify.max_user_watches)
      onError(new BuildInputError(`${rel}: cannot watch (${err.code}); changes below it are seen by the full rebuild every ${Math.round(rescanMs / 1000)} s`, { cause: err, details: { path: rel } }))
      return
    }
    w.on('error', () => { w.close(); watchers.delete(rel); full = true; soon() })
    watchers.set(rel, { w, ino: st.ino, dev: st.dev })
  }
  const onGone = rel => {
    for (const [k, v] of watchers) if (k === rel || k.startsWith(rel + '/')) { v.w.close(); watchers.delete(k) }
  }

  const rescan = setInterval(() => { full = true; soon() }, rescanMs)
  rescan.unref()
  const stop = () => kick()
  signal.addEventListener('abort', stop)
  try {
    while (!signal.aborted) {
      const set = dirty; dirty = new Set()
      const wasFull = full; full = false
      let failed = false
      kicked = false
      try {
        onBuild(await builder.run({ dirty: wasFull ? null : set, onDir, onGone }))
      } catch (err) {
        // looked at again with the next change: what this run was to look at, in full if it was
        for (const rel of set) dirty.add(rel)
        full = full || wasFull
        failed = true
        onError(err)
      }
      if (signal.aborted) break
      // wait for a change (or a rescan, or the end), and then for quiet
      if (failed || (!dirty.size && !full) || timer) await kicks()
      while (timer && !signal.aborted) await kicks()
    }
  } finally {
    signal.removeEventListener('abort', stop)
    clearInterval(rescan); clearTimeout(timer)
    for (const v of watchers.values()) v.w.close()
    await builder.close()
  }
}
