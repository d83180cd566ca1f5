// One walk for the roots of either kind a published folder holds: a public
// root's pages (client-js walkTree), or a private release's manifest and
// keyring (client-js access walkPrivateRoot, FORMAT.md §12.8), which need no
// key. pull, fsck and gc walk through here, so a keyless mirror keeps,
// copies and checks a private tree as it does a public one.
//
// Both walkers are imported when a walk starts, not with this module:
// rotree-client/tree carries the whole reader (its transports), and a build,
// which imports this module through pages.js, walks nothing unless it signs
// or seals (docs/BENCHMARKS.md P6, notes: a one-file rebuild is mostly
// start-up).

/**
 * walkTree's arguments and options; `root` from decodeRoot (signed-roots.js).
 * @param {object} root @param {(ref: object, kind: string) => Promise<any>} load
 * @param {(ref: object, kind: string, path: string) => any} onRef @param {object} [o]
 */
export async function walkRoot (root, load, onRef, o = {}) {
  if (root.manifest) {
    const { walkPrivateRoot } = await import('rotree-client/access')
    return walkPrivateRoot(root, load, onRef, o)
  }
  const { walkTree } = await import('rotree-client/tree')
  return walkTree(root, load, onRef, o)
}

/** What keeps two roots apart for gc: a private release's root is its manifest and its keyring. */
export const rootId = root => root.manifest ? `${root.hash}:${root.keyring?.hash ?? ''}` : root.hash
