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
  }
]
