// Text from a tree, made safe to print on a terminal. Entry names and symlink
// targets are whatever the publisher signed (FORMAT.md §3: any UTF-8 but NUL
// and '/'), so a hostile name can carry escape sequences that move the
// cursor, rewrite the screen or the window title, or bidi controls that make
// `evil.exe‮txt.` look like something else. Human-readable output escapes
// them; --json output stays exact (JSON.stringify escapes C0 itself).

// C0, DEL, C1; the bidi embeddings, overrides and isolates, the implicit
// marks (LRM, RLM, ALM) and the line and paragraph separators. A backslash is
// escaped too, so that an escaped name cannot be confused with a name that
// contains the escape's text.
// eslint-disable-next-line no-control-regex
const UNSAFE = /[\x00-\x1f\x7f-\x9f\\\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/gu

/** `s` with every character a terminal would act on written as \xHH or \u{HHHH}, and `\` as `\\`. */
export function escapeText (s) {
  return String(s).replace(UNSAFE, c => {
    if (c === '\\') return '\\\\'
    const n = c.codePointAt(0)
    return n <= 0xff ? '\\x' + n.toString(16).padStart(2, '0') : '\\u{' + n.toString(16) + '}'
  })
}
