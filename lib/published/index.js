// The published folder: what a publisher's OUT and a mirror's DIR have in
// common, in one place that builder/ and mirror/ both import.
//
//   DIR/h/<sha256>            write-once blob store (blob-store.js; StatBlobStore for a build)
//   DIR/history/<seq>.json    every fsinfo.json published here (history.js)
//   DIR/fsinfo.json           renamed in last (publish.js)
//   DIR/.rotree-lock          one writer at a time (lock.js)
//
// and reading it back with a reader's checks (pages.js), and collecting the
// blobs no kept root reaches (gc.js).
export { BlobStore, StatBlobStore, writeBlobSync, blobWriter, readLocal, blobPath, missingBlob, syncDir, TMP_PREFIX, HEX64 } from './blob-store.js'
export { HISTORY_DIR, listHistory, readHistory, writeHistory, isHistoryConflict, cleanHistoryTemps } from './history.js'
export { historyEntries, verifyHistoryEntry } from './history-roots.js'
export { UNSIGNED_FILE, readPublished, nextSeq, publishSeq, lastSeq, publishFsinfo, writeUnsignedFile, removeUnsigned } from './publish.js'
export { LOCK_NAME, lockDir, withDirLock, pidAlive } from './lock.js'
export { pageLoader, localDataFault, walkLocal, atPath, isLocalDamage } from './pages.js'
export { collectGarbage } from './gc.js'
