// The browser's twin of state-dir-node.js. Reader state lives in IndexedDB
// through `level` (its "browser" field picks browser-level). The "directory"
// is a database-name prefix here.
export function defaultStateDir () { return 'rotree' }
export function stateLocation (dir) { return dir + '-seq' } // IndexedDB database "level-js-rotree-seq"
