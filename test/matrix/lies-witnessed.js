// The lies of the matrix about a witnessed tree (docs/FORMAT.md §13.1,
// docs/TRUST.md rule 21), against the tree of fixture-witnessed.js: what a
// mirror (or a publisher's key thief with K witness keys whose memory is
// gone) can serve of log/ beside a validly signed fsinfo.json. Every reader
// fetches log/fsinfo.proof from the mirror that gave it fsinfo.json (and,
// when that proof does not decide, log/checkpoint and one or two tiles), and
// refuses that mirror's answer; with an honest mirror beside, it reads the
// honest tree. A liar who edits the checkpoint edits it in both files: the
// same edit in the proof alone is set aside by the reader (the honest
// checkpoint then decides), which test/tlog/witnessed-open.test.js shows.
import { readFileSync } from 'node:fs'
import path from 'node:path'

export const WITNESS_THREAT = {
  witnesses: 'Witnessed logs (FORMAT.md §13.1): a checkpoint that forks from the one a reader kept, stale or too few cosignatures, an fsinfo.json the log does not hold'
}

const fromDir = dir => rel => {
  try { return { body: readFileSync(path.join(dir, 'log', rel)) } } catch { return { status: 404 } }
}
const checkpoint = edit => (rel, bytes) => {
  if (rel === 'checkpoint') return { body: edit(bytes) }
  if (rel !== 'fsinfo.proof') return 'honest'
  // the checkpoint inside the tlog-proof (after its first empty line), edited alike
  const at = Buffer.from(bytes).indexOf('\n\n') + 2
  return { body: Buffer.concat([Buffer.from(bytes).subarray(0, at), Buffer.from(edit(Buffer.from(bytes).subarray(at)))]) }
}

/** { id, threat, what, lie(fixture) → lying-server options, because, codes, seenNewer? } (lies-v2.js) */
export const LIES_WITNESSED = [
  {
    id: 'w-log-fork',
    threat: 'witnesses',
    what: 'witnessed: after the reader kept the cosigned checkpoint, a newer fsinfo.json in a log that forks from it, cosigned by K witnesses whose state was wiped',
    lie: f => ({ fsinfo: () => ({ body: readFileSync(path.join(f.fork, 'fsinfo.json')) }), log: fromDir(f.fork) }),
    because: /does not extend the checkpoint of size \d+ this reader accepted/,
    codes: ['ROTREE_SPLIT_VIEW'],
    seenNewer: true
  },
  {
    id: 'w-cosignatures-old',
    threat: 'witnesses',
    what: 'witnessed: the checkpoint with its witnesses\' cosignatures made two days ago',
    lie: f => ({ log: checkpoint(() => f.oldCheckpoint) }),
    because: /0 fresh cosignatures .*older than 24 hours/,
    codes: ['ROTREE_THRESHOLD']
  },
  {
    id: 'w-cosignatures-few',
    threat: 'witnesses',
    what: 'witnessed: the checkpoint with one witness\'s cosignature of the two required',
    lie: f => ({ log: checkpoint(bytes => Buffer.from(Buffer.from(bytes).toString().split('\n').filter(l => !f.witnesses.slice(0, 2).some(n => l.startsWith(`— ${n} `))).join('\n'))) }),
    because: /1 fresh cosignature from the trust document's witnesses, 2 required/,
    codes: ['ROTREE_THRESHOLD']
  },
  {
    id: 'w-entry-missing',
    threat: 'witnesses',
    what: 'witnessed: the log as it was one publish ago (cosigned), without the fsinfo.json served',
    lie: f => ({ log: fromDir(f.logAt2) }),
    because: /the fsinfo\.json served is not in the log its witnesses cosigned/,
    codes: ['ROTREE_SPLIT_VIEW']
  }
]
