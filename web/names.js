// A file name laid out so it never breaks mid-word: it may wrap only after a
// separator (. - _ space and the like), and a piece too long for its line
// ends in an ellipsis instead of breaking (style.css `.seg`); the whole name
// stays in the title, and the file's own page shows it in full. Names are
// text from a tree: set as textContent, never as markup.

// a break is allowed after each of these
const SEPARATORS = /([._\-+~,;@=\s]+)/

/**
 * @param {string} name
 * @param {string} [suffix] appended to the last piece ('/' for a folder)
 * @returns {HTMLSpanElement}
 */
export function nameNode (name, suffix = '') {
  const outer = document.createElement('span')
  outer.className = 'name'
  outer.title = name + suffix
  const parts = name.split(SEPARATORS)
  const pieces = []
  for (let i = 0; i < parts.length; i += 2) pieces.push(parts[i] + (parts[i + 1] ?? ''))
  if (pieces.length > 1 && pieces.at(-1) === '') pieces.pop()
  if (parts[0] === '' && pieces.length > 1) pieces.splice(0, 2, pieces[0] + pieces[1]) // '.profile' stays whole
  pieces[pieces.length - 1] += suffix
  for (const p of pieces) {
    const seg = document.createElement('span')
    seg.className = 'seg'
    seg.textContent = p
    outer.append(seg)
  }
  return outer
}

// Prose with technical tokens in it (an error message, a mirror's answer):
// its words break only between words, as prose does, while a hex hash, a
// URL or a path, which a phone's line cannot hold, may break anywhere
// (style.css `.long`), and a short token (an error code, ?mirror=URL) never
// breaks at all (`.tech`).
const PLAIN = /^[\p{L}'’"“”()[\],.;:!?-]*$/u
const LONG = 24

/**
 * @param {string} text
 * @returns {HTMLSpanElement} the text, as text, its technical tokens in spans
 */
export function proseNode (text) {
  const outer = document.createElement('span')
  outer.className = 'prose'
  for (const part of String(text).split(/(\s+)/)) {
    if (part === '') continue
    if (/^\s/.test(part) || PLAIN.test(part)) { outer.append(part); continue }
    const span = document.createElement('span')
    span.className = part.length > LONG ? 'long' : 'tech'
    span.textContent = part
    outer.append(span)
  }
  return outer
}
