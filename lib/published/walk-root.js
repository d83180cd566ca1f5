// One walk for the roots of either kind a published folder holds: a public
// root's pages (client-js walkTree), or a private release's manifest and
// keyring (client-js access walkPrivateRoot, FORMAT.md §12.8), which need no
// key. pull, fsck and gc walk through here, so a keyless mirror keeps,
// copies and checks a private tree as it does a public one.
import { walkTree } from 'rotree-client/tree'
import { walkPrivateRoot } from 'rotree-client/access'

/**
 * walkTree's arguments and options; `root` from decodeRoot (signed-roots.js).
 * @param {object} root @param {(ref: object, kind: string) => Promise<any>} load
 * @param {(ref: object, kind: string, path: string) => any} onRef @param {object} [o]
 */
export function walkRoot (root, load, onRef, o = {}) {
  return root.manifest ? walkPrivateRoot(root, load, onRef, o) : walkTree(root, load, onRef, o)
}

/** What keeps two roots apart for gc: a private release's root is its manifest and its keyring. */
export const rootId = root => root.manifest ? `${root.hash}:${root.keyring?.hash ?? ''}` : root.hash
