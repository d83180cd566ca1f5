// What names and symlink targets `rotree get` (cli/download.js) writes: the
// "Names" and "Symlinks" rules of its header, docs/TRUST.md rule 8. Pure
// decisions; the walk asks before it writes anything.
import { BadPathError } from 'rotree-client/errors'

export class Names {
  /**
   * @param {object} o
   * @param {boolean} o.win the Windows rules for names and targets
   * @param {boolean} o.rewriteLinks an absolute target inside the download becomes the relative one
   * @param {boolean} o.skipUnsafeLinks a target that could leave DEST skips the link instead of refusing the tree
   * @param {string[]|null} [o.topParts] the download's canonical path in the tree (canonical()), for rewriteLinks
   */
  constructor ({ win, rewriteLinks, skipUnsafeLinks, topParts = null }) {
    this.win = win
    this.rewriteLinks = rewriteLinks
    this.skipUnsafeLinks = skipUnsafeLinks
    this.topParts = topParts
  }

  /** Decoders refuse these already (FORMAT.md §3); checked again, with what Windows forbids besides. */
  checkName (name, where) {
    const bad = name === '' || name === '.' || name === '..' || name.includes('/') || name.includes('\0') ||
      (this.win && (/[\\:*?"<>|\x00-\x1f]/.test(name) || /[. ]$/.test(name) || /^(con|prn|aux|nul|com[0-9¹²³]|lpt[0-9¹²³])(\..*)?$/i.test(name)))
    if (bad) throw new BadPathError(`${where}: a name this file system cannot hold safely`, { details: { path: where } })
  }

  /**
   * The target to write for symlink `e` in a directory `depth` levels below
   * DEST: its own when it cannot leave DEST, a rewritten one (rewriteLinks),
   * null to skip it (skipUnsafeLinks); otherwise ROTREE_BAD_PATH: the target
   * is a valid one in the tree (FORMAT.md §4.6), only not one this download
   * can hold safely (as a name Windows forbids); ROTREE_SYMLINK_LOOP is kept
   * for what resolving a path in the tree meets (too many hops, above the root).
   * @param {{ target: string }} e @param {number} depth @param {string} where
   */
  linkTarget (e, depth, where) {
    const t = e.target
    const parts = t.split('/').filter(c => c !== '' && c !== '.')
    let out = null
    if (this.win && /[\\:]/.test(t)) {
      out = null
    } else if (t.startsWith('/')) {
      // FORMAT.md §4.6: '/' is the tree root, never the reader's file system
      const tp = this.topParts
      if (this.rewriteLinks && tp && !parts.includes('..') && tp.every((c, i) => parts[i] === c)) {
        out = [...Array(depth).fill('..'), ...parts.slice(tp.length)].join('/') || '.'
      }
    } else {
      // all of its `..` leading, no more of them than the link's depth below DEST
      let up = 0
      while (up < parts.length && parts[up] === '..') up++
      if (up <= depth && !parts.slice(up).includes('..')) out = t
    }
    if (out !== null || this.skipUnsafeLinks) return out
    throw new BadPathError(`symlink ${where} -> ${t} ${unsafeWhy(t)}: refused (--strict-links; without it such a link is skipped, and --rewrite-links writes an absolute target inside the download as a relative one)`, { details: { path: where, target: t } })
  }
}

/** Why target `t` is not written: what `rotree get` says of a skipped or refused link. */
export function unsafeWhy (t) {
  return t.startsWith('/') ? 'has an absolute target (the tree root), outside DEST' : 'has a target that could lead out of DEST'
}

/**
 * `src`'s path in `tree` when no component of it is a symlink, else null
 * (absolute targets are then not rewritten: the download is not where the
 * tree's paths say).
 */
export async function canonical (tree, src) {
  const parts = []
  for (const c of src.split('/')) {
    if (c === '' || c === '.') continue
    if (c === '..') parts.pop(); else parts.push(c)
  }
  for (let i = 1; i <= parts.length; i++) {
    if ((await tree.lstat('/' + parts.slice(0, i).join('/'))).type === 'symlink') return null
  }
  return parts
}
