// Names in the order directory pages and the build index keep them: by
// their UTF-8 bytes (FORMAT.md §4.4; LevelDB compares keys as bytes). A JS
// string compares by UTF-16 code units, which is the same order except where
// a surrogate (a character past U+FFFF) meets a character from U+E000 to
// U+FFFF; only then are the bytes compared.

/** @param {string} a @param {string} b @returns {number} < 0, 0, > 0 as a's UTF-8 bytes sort before b's */
export function compareNames (a, b) {
  const n = Math.min(a.length, b.length)
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i); const y = b.charCodeAt(i)
    if (x !== y) return x < 0xd800 && y < 0xd800 ? x - y : Buffer.compare(Buffer.from(a.slice(i)), Buffer.from(b.slice(i)))
  }
  return a.length - b.length
}

const HIGH = /[\ud800-\uffff]/

/** Sort in place by UTF-8 bytes (the native sort, unless a name needs the slow comparison). */
export function sortNames (names) {
  names.sort()
  if (names.some(n => HIGH.test(n))) names.sort(compareNames)
  return names
}
