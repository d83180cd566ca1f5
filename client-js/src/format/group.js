// FORMAT.md §4.5: how a builder cuts a sorted list into pages. Cut points are
// chosen by content (a hash of the item's key, as in prolly trees) so that an
// edit moves only the pages near it, and within hard bounds so every page fits
// the format's limits. Readers do not check this rule; builders must follow it
// for two builds of the same input to give the same root (FORMAT.md §1.6).

/**
 * @template T
 * @param {T[]} items
 * @param {{ size: (t: T) => number, cut: (t: T) => boolean, min: number, max: number, maxCount: number }} o
 *   size(t): encoded bytes of the item; cut(t): the content-defined boundary test;
 *   a page closes after an item when its bytes ≥ min and cut(item), or when the
 *   next item would push it past max bytes or maxCount items.
 * @returns {T[][]}
 */
export function groupByContent (items, { size, cut, min, max, maxCount }) {
  const pages = []
  let page = []; let bytes = 0
  for (let i = 0; i < items.length; i++) {
    const t = items[i]
    page.push(t); bytes += size(t)
    const next = items[i + 1]
    if (next === undefined) break
    if ((bytes >= min && cut(t)) || bytes + size(next) > max || page.length >= maxCount) {
      pages.push(page); page = []; bytes = 0
    }
  }
  if (page.length) pages.push(page)
  return pages
}

/** True with chance 2^-bits, decided by the top bits of a 32-byte hash (hex or bytes). */
export function hashCut (hash, bits) {
  const top = typeof hash === 'string' ? parseInt(hash.slice(0, 4), 16) : (hash[0] << 8) | hash[1]
  return top >>> (16 - bits) === 0
}
