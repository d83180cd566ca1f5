// Each actor around a rotree tree, what it can and cannot do, the rules
// (docs/TRUST.md) that hold it to that, and the suites that show it. Written
// into docs/SECURITY.md by security-doc.js; test/security-doc.test.js checks
// that every suite named here exists and that SECURITY.md carries this table.
export const ACTORS = [
  {
    id: 'mirror',
    who: 'A mirror, CDN, object store, proxy or network path',
    can: 'refuse service; serve old, stale or partial folders; answer slowly, endlessly, with errors or redirects; see which blobs a reader asks for; leave entries out of the history `rotree log` lists',
    cannot: 'make a reader hand out a byte the publisher did not sign for that path, accept an older, forked or expired root, believe a 404 as absence, hang a reader past its deadline, redirect a reader to another origin (unless the reader allowed it), make a version-2 reader accept a root short of a role\'s threshold, a trust document not signed by both its old and its new root keys, a document older than one it saw, or another tree\'s name, or show a root in `rotree log` that the key did not sign under that sequence number',
    rules: [1, 2, 3, 4, 5, 6, 7, 10, 11, 12, 13, 17],
    tests: ['test/matrix/matrix.test.js', 'test/client/hostile.test.js', 'test/client/transport-redirect.test.js', 'test/client/mirrors.test.js', 'test/fuzz/reader.test.js', 'test/browser/lying.test.js', 'test/cli/history.test.js']
  },
  {
    id: 'publisher',
    who: 'The publisher of a tree you read (its keys sign whatever it likes)',
    can: 'sign any names, symlink targets, sizes and shapes the format allows; sign a tree that changes, shrinks or disappears; rotate, retire or lose its keys',
    cannot: 'make `rotree get` or `pull` write, chmod or follow anything outside their destination; make one request do unbounded work (symlink walks, listings, decoded-page memory, walk breadth and depth, file sizes beyond the disk); make a reader hand out more bytes than an entry holds; make a gateway write past its Content-Length',
    rules: [3, 8, 9],
    tests: ['test/cli/get-confinement.test.js', 'test/cli/ls-recursive.test.js', 'test/fuzz/get-confinement.test.js', 'test/client/publisher-tricks.test.js', 'test/gateway/hostile-tree.test.js', 'test/mirror/hostile-tree.test.js']
  },
  {
    id: 'key-holder',
    who: 'Someone holding some of a format-2 tree\'s keys (a stolen timestamp key; release or root keys short of their threshold; a key rotated away)',
    can: 'with the timestamp key, keep readers on the newest release they have seen, or a newer one, until it, its trust document or the fsinfo.json expires; sign with fewer keys than a role needs; sign huge sequence numbers; with a key rotated away, still sign roots under the trust documents that listed it, which readers that know no newer document accept',
    cannot: 'publish content without the release threshold, change any key without the old and the new root thresholds, serve a reader an older release than one it saw (also after keys are added to the release role), lock readers out once every key that signed a sequence is rotated away (that role\'s stored sequence is dropped), show a reader that asks the mirrors for the newest trust document a root its rotation retired, vouch for history once its key is dropped from every role (an address key rotated away), bring back a retired tree, pass one tree or one family\'s release, fsinfo.json or trust document off as another\'s (families that share keys included), or make a small-order or non-canonical key count as a key',
    rules: [10, 11, 12, 13, 14],
    tests: ['test/trust/roles.test.js', 'test/client/v2.test.js', 'test/cli/trust.test.js', 'test/matrix/matrix.test.js']
  },
  {
    id: 'other-tree',
    who: 'Another tree on the same gateway, web app origin or browser',
    can: 'run its own pages (HTML, SVG, scripts) in the reader\'s browser',
    cannot: 'run with the rights of the gateway\'s host app or of another tree: read their pages, cookies or APIs, rewrite the verified-site bar or address bar, touch another key\'s rollback state or Service Worker; freeze the requests of other trees on a gateway',
    rules: [15],
    tests: ['test/browser/isolation.test.js', 'test/gateway/sandbox.test.js', 'test/gateway/isolation.test.js', 'test/browser/app.test.js']
  },
  {
    id: 'gateway-client',
    who: 'A client of the gateway (curl, a browser, a WebDAV client, a web page doing DNS rebinding)',
    can: 'send any path, header, range or XML body; open many connections; with each directory listing it asks for, make the gateway fetch from the mirrors small files and directory pages it may never ask for (the read-ahead, bounded per listing and per tree; `--no-prefetch` turns it off), but only as much as clients take: per tree, what is fetched ahead is at most 512 KiB + 4 × the listing bytes sent + 2 × the bytes clients read from files fetched ahead + the pages of directories fetched ahead that clients then listed, so a client that only lists makes the gateway fetch ahead, besides the pages its own listings read, at most 512 KiB + 4 × what it downloads',
    cannot: 'read outside the tree, crash the gateway, get a 404 for a blob a mirror lost, reach a loopback gateway through a foreign Host name, expand XML entities, or learn a mirror\'s credentials',
    rules: [5, 9, 16],
    tests: ['test/gateway/hostile.test.js', 'test/gateway/host-check.test.js', 'test/gateway/credentials.test.js', 'test/webdav/propfind.test.js', 'test/gateway/ranges.test.js', 'test/gateway/prefetch.test.js']
  },
  {
    id: 'local-user',
    who: 'A local user who can write SRC (while a build runs), DEST (between gets), a reader\'s state directory, or the folder given to a gateway as its disk cache',
    can: 'change, swap or link files in SRC or DEST; kill writers; delete or corrupt state; plant links, FIFOs and folders at the names a disk cache uses',
    cannot: 'make the builder publish a file from outside SRC (a directory swapped for a link after the scan is refused), make `get` follow a link it finds in DEST, hold a dead writer\'s lock, make a reader forget the highest root it saw (a state that lost its tables, or a record that is not valid, is refused, not recreated), make a gateway use a cache folder that is a symlink, another user\'s or writable by others (refused at start: `chmod 700` it), or make a gateway write through, read through or block on a link or FIFO in its cache (a miss, removed, never followed)',
    rules: [2, 8],
    tests: ['test/builder/hostile-src.test.js', 'test/cli/get-confinement.test.js', 'test/mirror/lock.test.js', 'test/client/state.test.js', 'test/gateway/disk-cache-hostile.test.js']
  },
  {
    id: 'witness',
    who: 'A witness a trust document names (its operator, or a thief of its key)',
    can: 'refuse to cosign, or be down, so that a publish with fewer than the threshold of witnesses fails (the publisher can still publish with `--no-witness`); cosign any checkpoint the log\'s key signed, and sign with its own key a checkpoint that forks one it cosigned before; learn each checkpoint of the logs it witnesses (their sizes and root hashes, which are public anyway) and when they are published',
    cannot: 'publish, sign or change anything of the tree (it holds no key of the tree); make the publisher write a checkpoint with a cosignature that is not valid for the checkpoint and its key; alone make readers that require K of N witnesses accept a forked log: that takes K witness keys besides the log\'s key',
    rules: [21],
    tests: ['test/tlog/witness.test.js', 'test/tlog/witnessed-publish.test.js', 'test/tlog/cosignature.test.js']
  }
]

// A private tree (docs/FORMAT.md §12.8): what each actor around it learns,
// can and cannot do. Written into docs/SECURITY.md ("Private trees: what each
// actor learns") by security-doc.js; test/security-doc.test.js checks that
// every suite named here exists and that SECURITY.md carries this table.
// `rules`: docs/TRUST.md rules that hold the actor to it, besides §12.8 itself.
export const PRIVATE_ACTORS = [
  {
    id: 'p-mirror',
    who: 'A mirror, CDN, object store or network path of a private tree (it holds no key)',
    learns: 'ciphertext only: how many blobs the tree has and their padded sizes (Padmé: a stored size reveals O(log log L) bits of the real one, at most 12% more bytes); which blobs are equal (keys are convergent within a tree: an unchanged blob keeps its handle from release to release, so it sees how much each release changed); the number of readers to within Padmé\'s rounding (the keyring\'s X25519 stanzas are padded to padme(readers)) and exactly how many are post-quantum (their stanzas are age\'s own); when readers were added (a new keyring in the same epoch) or removed (a new epoch); the request patterns of readers: which blobs each asks for, in which order and when, and from them, for what is read, which blob is read first after the keyring (the root), which pages lead to which chunks and how many chunks a file read takes',
    can: 'all it can do to a public tree (the matrix); serve an fsinfo.json of the same tree, validly signed and unexpired, whose keyring does not name a reader yet (a fresh reader gets `ROTREE_NO_ACCESS`; one that saw a newer release `ROTREE_ROLLBACK`), even beside an honest mirror whose answer comes after the reader stopped waiting for it (a known failure of the reader: root-store.js refuses the answers it has instead of waiting for the others); serve another tree\'s keyring, or the same bytes sealed under another key, at a handle; cut or stall the keyring or the manifest; copy, check, repair and gc the tree without a key (`pull`, `fsck`, `gc` walk the manifest)',
    cannot: 'learn names, the tree\'s shape, which blob is the root or which blobs belong to which file, without watching reads; decrypt a byte; make a reader open a blob under another key, another keyring or another root than the signed ones (the hash is checked before the tag: `ROTREE_HASH_MISMATCH`; the keyring is named by a signed handle; the unwrapped root must match the release\'s commitment); make a reader\'s `ROTREE_NO_ACCESS` out of a mirror fault or the reverse',
    rules: [2, 3, 4, 13],
    tests: ['test/matrix/matrix.test.js', 'test/access/private-tree.test.js', 'test/format/private.test.js', 'test/access/keyring.test.js']
  },
  {
    id: 'p-removed',
    who: 'A removed reader (its identity left the keyring; a new epoch)',
    learns: 'what it could already decrypt: every blob whose key it held through the roots it opened (the epoch keys of the epochs it was a reader in open every root wrapped under them, and each root every page and chunk below); from the public manifest of each later release, which of the blobs it knows are still (or again) in the tree, since a byte-identical blob keeps its key and handle, so which of the files it read are unchanged, not what replaced the others',
    can: 'keep and share what it read and the keys it held; read a release of before its removal again wherever a mirror still serves that fsinfo.json, until it expires (unless it saw a newer release: `ROTREE_ROLLBACK`)',
    cannot: 'decrypt anything published after its removal: a new root, page or chunk has a key it never saw, below a root wrapped under an epoch key it does not get (`ROTREE_NO_ACCESS`); derive a blob key (that takes the tree secret, which no reader gets)',
    rules: [2, 13],
    tests: ['test/matrix/matrix.test.js', 'test/access/private-tree.test.js']
  },
  {
    id: 'p-reader',
    who: 'A current reader (its identity opens a stanza of the keyring)',
    learns: 'everything in the tree, for every release while it is a reader: names, contents, shape; the epoch key, so every root wrapped under it; the number of readers to within Padmé\'s rounding, not who they are (no recipient appears in the keyring)',
    can: 'share the plaintext, its identity file, the epoch key or a blob\'s ref with its key (which opens that blob for anyone who fetches it): there is no DRM',
    cannot: 'publish or change who reads (that takes the signing keys: a release signs its root\'s commitment, the timestamp key signs the keyring); read what is published after it is removed',
    rules: [11],
    tests: ['test/matrix/matrix.test.js', 'test/access/private-tree.test.js', 'test/access/keyring.test.js']
  },
  {
    id: 'p-gateway',
    who: 'The operator of a gateway given an identity (`rotree gateway --identity`)',
    learns: 'the identity (read into its memory) and the plaintext of all it reads for its clients and reads ahead: file names and bytes pass through its memory cache, its access log names the paths clients ask for (its disk cache holds blobs still sealed, as mirrors serve them)',
    can: 'decrypt for its clients: whoever can reach the gateway reads the tree in plaintext without an identity of their own (the gateway does not authenticate clients); everything the identity can',
    cannot: 'more than the identity can: it reads no release the identity cannot open (without one its keyring holds, every request is 403 `ROTREE_NO_ACCESS`), and publishes nothing',
    rules: [7],
    tests: ['test/matrix/matrix.test.js', 'test/access/private-tree.test.js']
  },
  {
    id: 'p-publisher',
    who: 'Whoever holds the publisher\'s machine, or a copy of OUT/.rotree/private.json (the tree secret, the current epoch key, the readers, the root refs of the last 16 releases built there; the build index beside it holds the names)',
    learns: 'every blob of the current release (the epoch key opens the root fsinfo.json publishes wrapped) and of every release whose root ref the file keeps, so every name and byte of them; who the readers are (their `age1…` recipients); for any bytes it guesses, whether they are a blob of the tree (the tree secret gives any blob\'s key from its bytes, so its handle)',
    can: 'decrypt all of the above without any signing key; seal a keyring of the epoch key for anyone, and wrap any root it holds under it',
    cannot: 'without the timestamp key, publish that keyring (no reader accepts an `access` not signed by the timestamp role); without the release keys, publish a root (the release signs its commitment); derive the key of a blob it has no root for and cannot guess the bytes of',
    rules: [11],
    tests: ['test/matrix/matrix.test.js', 'test/access/private-tree.test.js']
  },
  {
    id: 'p-timestamp',
    who: 'The holder of a private tree\'s timestamp key (stolen, or the online signer)',
    learns: 'nothing the mirror does not: the timestamp key decrypts nothing',
    can: 're-sign fsinfo.json, newer than the publisher\'s, with another `access`: with the timestamp key alone, the current release\'s wrapped root beside any keyring published in the same epoch (one from before a reader was added locks that reader out, `ROTREE_NO_ACCESS`, honest mirrors beside or not, until the publisher signs a newer fsinfo.json or this one expires); with the epoch key too (any current reader\'s, or private.json\'s), a keyring sealed for anyone, who then reads the current release: it changes who reads',
    cannot: 'change which root is read: the release keys sign the root\'s commitment, and a wrap of another root is `ROTREE_BAD_FORMAT` (an answer refused, the other mirrors\' read on); serve a reader an older release than one it saw (`ROTREE_ROLLBACK`); publish content',
    rules: [11, 13],
    tests: ['test/matrix/matrix.test.js', 'test/access/keyring.test.js']
  }
]

/**
 * Who may fetch a gated tree (FORMAT.md §12.10–12.11): what the holder of a
 * grant, its delegate, an edge with the token secret and a mirror without
 * it can do. The table security-doc.js writes into docs/SECURITY.md.
 */
export const GATED_ACTORS = [
  {
    id: 'g-holder',
    who: 'The holder of a grant (its key and the grant)',
    can: 'trade the grant, with a fresh request its key signs, for edge tokens until the grant expires, and fetch every blob of that tree with them; delegate a grant to any key, for no longer than its own and no more of the tree; hand a token (a bearer token) to anyone, who then fetches with it until it expires (minutes)',
    cannot: 'fetch from a gated edge after the grant expires or is revoked (beyond the token it already holds); make a grant for another tree, a later expiry or a wider scope (`ROTREE_NO_ACCESS`: not signed by the access role, or a delegation that widens); read a private tree without a keyring identity (a grant opens the edge, not the ciphertext)',
    rules: [20],
    tests: ['test/edge/gated.test.js', 'test/trust/grant.test.js', 'test/trust/revoked.test.js', 'test/matrix/gated.test.js']
  },
  {
    id: 'g-delegate',
    who: 'The holder of a delegated grant',
    can: 'all a holder can, with the delegated grant: until the earliest expiry of its chain; delegate further while the chain is shorter than 4 grants',
    cannot: 'outlive, leave the tree of, or widen its parent (each refused by the verifier at the edge); move its grant under another parent (the parent is named by its hash); use a chain of more than 4 grants; go on after its parent is revoked',
    rules: [20],
    tests: ['test/edge/gated.test.js', 'test/trust/grant.test.js', 'test/fuzz/grant.test.js', 'test/trust/revoked.test.js', 'test/matrix/gated.test.js']
  },
  {
    id: 'g-edge',
    who: 'An edge with the token secret (rotree serve --grants, rotree token-server, rotree gateway --grants, nginx from nginx-config --gated, or anyone who reads their configuration)',
    can: 'mint tokens for any expiry, for every tree it is configured for with that secret, and so let anyone fetch ciphertext; serve blobs to anyone regardless of tokens; see which grant holders ask for tokens and when; replay a token request it was sent at another edge with the same secret within the request\'s two minutes (a token for that holder\'s own grant)',
    cannot: 'make a grant, or a revocation list (both take the access role\'s keys); bring a revoked grant back by restoring an older list (the exchange then gives no token at all; a gated gateway keeps the newest list it verified from its mirrors); make a reader accept a byte the publisher did not sign (it is a mirror to readers: rules 2–4); decrypt a private tree',
    rules: [2, 3, 4, 20],
    tests: ['test/edge/gated.test.js', 'test/trust/revoked.test.js', 'test/gateway/gated-clients.test.js', 'test/gateway/gated-nginx.test.js', 'test/edge/gated-private.test.js']
  },
  {
    id: 'g-mirror',
    who: 'A mirror or cache of a gated tree without the secret (a CDN, a copy of OUT, a network path)',
    can: 'serve what it holds to anyone (the gate is the edge\'s, not the blobs\'): a copy of OUT pulled ungated is ungated; see the tokens requests carry and replay them until they expire (minutes); see token requests and replay them at the edge within two minutes, where they are refused (the nonce was seen); answer a reader given a grant with a refusal at its own `/.rotree/token`, which that reader reports as `ROTREE_NO_ACCESS` naming the mirror (a reader with a grant takes a mirror\'s word on it, rather than asking the next); withhold `trust/revoked.json` from a gated gateway (`rotree gateway --grants`) that has not read it yet, which then gives a revoked grant tokens',
    cannot: 'make a token for a later expiry or another tree (the MD5 is keyed by the secret); get a token for a grant it does not hold the key of; turn a refused token into a mirror fault at a reader; as a Varnish cache from varnish-config --gated, serve a cached blob to any token but the one the gated nginx admitted for it, or after that token expires; undo a revocation a gated gateway has read (by serving an older list, none, or a forged one)',
    rules: [20],
    tests: ['test/edge/gated.test.js', 'test/trust/grant.test.js', 'test/matrix/gated.test.js', 'test/gateway/gated-clients.test.js', 'test/mirror/pull-revoked.test.js', 'test/edge/gated-private.test.js']
  }
]
