// Node side of the reader-state probe (package.json "#state-probe"): has a
// LevelDB directory lost its tables? LevelDB finds its tables through the
// CURRENT file; without it, opening with createIfMissing starts an empty
// database over the old files, and every sequence number this reader accepted
// is forgotten without a word: rollback protection gone (docs/TRUST.md rule 2).
import fs from 'node:fs/promises'

// what LevelDB writes only once a database exists: the manifest, tables, logs
const DB_FILE = /^(MANIFEST-\d+|\d+\.(ldb|sst|log))$/

/**
 * @param {string} location the LevelDB directory
 * @returns {Promise<'absent'|'fresh'|'ok'|'lost'>}
 *   absent: no directory (first use); fresh: a directory with no database
 *   files yet (empty, or another process is creating it right now: LOCK and
 *   LOG come first); ok: CURRENT is there; lost: database files without CURRENT
 */
export async function probeState (location) {
  let names
  try { names = await fs.readdir(location) } catch (err) {
    if (err.code === 'ENOENT') return 'absent'
    throw err
  }
  if (names.includes('CURRENT')) return 'ok'
  return names.some(n => DB_FILE.test(n)) ? 'lost' : 'fresh'
}
