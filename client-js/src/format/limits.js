// FORMAT.md §2: every bound a reader enforces before it allocates. A second
// implementation must use the same numbers; readers reject anything past them.

export const FORMAT_VERSION = 1
export const HASH_LEN = 32

export const MAX_BLOB = 1 << 20 // 1 MiB: the largest blob of any kind
export const MAX_NAME = 255 // bytes of UTF-8 in one directory entry name
export const MAX_SYMLINK = 4095 // bytes of a symlink target
export const MAX_PATH = 4096 // bytes of a path a reader will resolve
export const MAX_DEPTH = 256 // components in such a path
export const MAX_SYMLINK_HOPS = 40 // as Linux's MAXSYMLINKS
export const MAX_DIRECT_CHUNKS = 32 // chunk refs kept in the entry; more go to an index tree
export const MAX_INDEX_FANOUT = 4096 // refs per chunk-index or directory-index blob
export const MAX_INDEX_LEVELS = 6 // depth of a chunk-index or directory-index tree
export const MAX_PAGE_ENTRIES = 65536 // entries in one directory page
export const MAX_FILE_SIZE = Number.MAX_SAFE_INTEGER
export const MAX_FSINFO = 4096 // bytes of fsinfo.json

// FORMAT.md §5: content-defined chunking parameters (measured, see FORMAT.md).
export const CHUNK_MIN = 64 * 1024
export const CHUNK_AVG = 256 * 1024
export const CHUNK_MAX = 1024 * 1024

// FORMAT.md §4.3: files up to this size live inside their directory page.
export const INLINE_MAX = 4096
// FORMAT.md §12.6: version 2 stores pages compressed, so inlining pays up to
// a larger size (measured in FORMAT.md §11.2).
export const INLINE_MAX_V2 = 16 * 1024
/** @param {1|2} version */
export const inlineMax = version => version === 2 ? INLINE_MAX_V2 : INLINE_MAX

// FORMAT.md §4.4: directory pages are cut by content (the name's hash) once
// they pass PAGE_MIN bytes, and always before PAGE_MAX.
export const PAGE_MIN = 128 * 1024
export const PAGE_MAX = 512 * 1024
export const PAGE_CUT_BITS = 5 // after PAGE_MIN, an entry ends a page with chance 2^-5

// FORMAT.md §12.8, private trees: the keyring (an age file, one stanza of
// about 100 bytes per reader) a reader fetches, and the readers one holds.
export const MAX_KEYRING = 16 << 20
export const MAX_READERS = 100_000
