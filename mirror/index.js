// Mirror operators' tools: `rotree pull` (verified incremental sync) and
// `rotree fsck` (scrub and repair). See docs/MIRRORING.md. What a mirror's
// DIR shares with a publisher's OUT (blob store, history, publish, lock, gc)
// is lib/published/.
export { pull, readLocalFsinfo } from './pull.js'
export { fsck } from './fsck.js'
export { collect } from './gc.js'
export { scrub } from './scrub.js'
export { blobSource } from './source.js'
export { listHistory, readHistory, writeHistory } from '../lib/published/index.js'
