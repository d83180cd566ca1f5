// The published folder read back with a reader's checks now lives in
// lib/published/pages.js (one loader for pull, fsck, gc and sign). This file
// only keeps the old names for a caller in builder/ that still imports them.
export { walkLocal, pageLoader as localLoader } from '../lib/published/pages.js'
