// What became of each child of a directory the build walks (walk.js), which
// encode-dir.js reads when it encodes the directory: its own module, so the
// two do not import each other.
export const PENDING = 0; export const READ = 1; export const SAME = 2; export const SKIPPED = 3
export const SUBDIR = 4; export const LINK = 5
// read again: the record's file was missing from h/, or its bytes are needed
export const AGAIN_MISSING = 6; export const AGAIN_BYTES = 7
