// Writes docs/SECURITY.md from a matrix run: the threat model (SFSRO §3,
// TUF's attack list), and per threat, the lies that stand for it and what
// each reader answered. Generated: edit this file, not the document.
import fs from 'node:fs/promises'
import { THREATS } from './lies.js'
import { PRIVATE_THREAT } from './lies-private.js'
import { WITNESS_THREAT } from './lies-witnessed.js'
import { ACTORS, PRIVATE_ACTORS, GATED_ACTORS } from './actors.js'

const DOC = new URL('../../docs/SECURITY.md', import.meta.url)

// what else in the test suite shows each threat handled
const OTHER_TESTS = {
  'arbitrary-content': ['test/client/hostile.test.js (every blob kind, every read API)', 'test/browser/lying.test.js (the web app shows an error and no byte of a changed blob)', 'test/browser/site.test.js (the Service Worker blocks a changed script, image or page)', 'test/browser/insecure.test.js (the same without WebCrypto)', 'test/fuzz/reader.test.js (random lies against the real reader)', 'test/fuzz/decoders.test.js (no mutated fsinfo.json verifies)', 'test/vectors/ (tampered vectors)'],
  'mix-and-match': ['test/client/hostile.test.js (swaps; a fork between two mirrors seen in one refresh)', 'verify.js placement checks: an index page cannot hide or misplace names'],
  rollback: ['test/client/hostile.test.js (rollback after a reader restart, from the persisted state)', 'test/trust/roles.test.js (trust documents, releases and timestamps never go back; fast-forward recovery)', 'test/browser/lying.test.js (the web app refuses a rollback after a reload, from IndexedDB)', 'test/client/state.test.js (several processes share the state)'],
  freeze: ['test/client/clock.test.js (expiry edges, grace period, a root expiring while open)', 'test/browser/site.test.js (a site whose root expires while open is no longer served)'],
  'endless-data': ['test/client/hostile.test.js (endless bodies stop once the reader hangs up)', 'test/fuzz/decoders.test.js (huge counts refused before allocation)'],
  'slow-retrieval': ['test/client/hostile.test.js (silent stalls, slow drips)'],
  'wrong-key': ['test/client/hostile.test.js', 'test/format/format.test.js'],
  'malicious-mirror': ['test/client/hostile.test.js (404 never becomes "not found"; redirects to bad URLs are mirror faults)'],
  'malformed-metadata': ['test/fuzz/decoders.test.js', 'test/vectors/ (unsorted, non-minimal, inconsistent blobs)'],
  clock: ['test/client/clock.test.js (5-minute skew allowance; the error names the reader clock)'],
  keys: ['test/trust/roles.test.js (thresholds, rotations, duplicate key ids, the order of the checks)', 'test/client/v2.test.js (rotations followed at one address, a hidden rotation, retirement across restarts)', 'test/cli/trust.test.js (what the publisher refuses to sign or publish below a threshold)'],
  private: ['test/access/private-tree.test.js (a private tree end to end: what OUT publishes, every reader with and without its identity, a keyless mirror\'s pull, fsck and repair, a removed reader)', 'test/access/keyring.test.js (the keyring: every reader, age\'s own Decrypter and the age tool open it; damage; the root wrap and its commitment)', 'test/format/private.test.js (Padmé, sealed blobs, refs, the manifest and its placement checks)', 'test/browser/private.test.js (the web app asks for an identity file and keeps it in the page\'s memory only)', 'test/matrix/matrix.test.js (what a keyless mirror holds; a removed reader and a release of before its removal; a keyring sealed for a stranger under the epoch key)'],
  witnesses: ['test/tlog/witnessed-open.test.js (no request to log/ without witnesses; the checkpoint kept in the reader state; a fork beside an honest mirror is that mirror\'s fault; every mirror showing it is ROTREE_SPLIT_VIEW)', 'test/tlog/witnessed-publish.test.js (the reader\'s rule on its own)', 'test/tlog/witness.test.js (a witness never cosigns a fork of what it cosigned)']
}

const THREAT_TITLES = { ...THREATS, ...PRIVATE_THREAT, ...WITNESS_THREAT }

/** The "who can do what" table (actors.js), each actor with its rules in docs/TRUST.md and its suites. */
export function actorTable () {
  const L = ['| actor | can | cannot | rules (docs/TRUST.md) | shown by |', '|---|---|---|---|---|']
  for (const a of ACTORS) L.push(`| **${a.who}** | ${a.can} | ${a.cannot} | ${a.rules.join(', ')} | ${a.tests.map(t => '`' + t + '`').join(', ')} |`)
  L.push('')
  return L
}

/** The private-tree table (actors.js PRIVATE_ACTORS): what each actor learns, can and cannot do. */
export function privateActorTable () {
  const L = ['| actor | learns | can | cannot | rules (docs/TRUST.md) | shown by |', '|---|---|---|---|---|---|']
  for (const a of PRIVATE_ACTORS) L.push(`| **${a.who}** | ${a.learns} | ${a.can} | ${a.cannot} | ${a.rules.join(', ')} | ${a.tests.map(t => '`' + t + '`').join(', ')} |`)
  L.push('')
  return L
}

/** The gated-tree table (actors.js GATED_ACTORS): who may fetch, and what each can and cannot do. */
export function gatedActorTable () {
  const L = ['| actor | can | cannot | rules (docs/TRUST.md) | shown by |', '|---|---|---|---|---|']
  for (const a of GATED_ACTORS) L.push(`| **${a.who}** | ${a.can} | ${a.cannot} | ${a.rules.join(', ')} | ${a.tests.map(t => '`' + t + '`').join(', ')} |`)
  L.push('')
  return L
}

export const GATED_INTRO = 'A gated edge (FORMAT.md §12.10–12.11) serves a tree\'s blobs only to requests carrying an edge token: an MD5 secure_link value over the token\'s expiry, the tree and the edge\'s secret, minted for minutes at `POST /.rotree/token` for a grant signed by the tree\'s access role (or delegated from one), and checked by `rotree serve --grants`, by `rotree gateway --grants` (for the gateway\'s own clients, each tree at its own exchange), by stock nginx (`nginx-config --gated`, with Varnish in front keeping a blob per admitted token), or for Caddy by `rotree token-server` (`forward_auth`, a local request per blob). It decides who may download, not who may read (that is a private tree\'s keyring), and it holds only where the secret is: a copy of the blobs elsewhere is as open as its server makes it. A grant is stopped before it expires by the tree\'s revocation list (`trust/revoked.json`, FORMAT.md §12.12, signed by the access role): the exchange gives it and its delegations no new token, and a token already given lives out its minutes.'

const list = xs => xs.length > 1 ? xs.slice(0, -1).join(', ') + ' and ' + xs.at(-1) : xs.join('')

/** A row's "with an honest mirror" cell: the true bytes, or what was refused and why. */
function honestCell (cells) {
  const ran = cells.filter(c => c && !c.na)
  const ok = ran.filter(c => c.withHonest === 'ok')
  const refused = ran.filter(c => c.withHonest !== 'ok')
  if (refused.length === 0) return 'true bytes'
  const codes = [...new Set(refused.map(c => '`' + c.withHonest + '`'))].join(', ')
  const why = [...new Set(refused.map(c => c.why))].join('; ')
  if (ok.length === 0) return `${codes} (refused: ${why})`
  return `true bytes; ${list(refused.map(c => '`' + c.reader + '`'))}: ${codes} (refused: ${why})`
}

export async function writeSecurityDoc (results, { readers, lies }) {
  const L = []
  L.push('# Security', '', '<!-- generated by test/matrix/matrix.test.js from a real run; do not edit by hand -->', '')
  L.push('## Threat model', '',
    'rotree follows SFSRO (§3): the publisher signs the root of a tree offline; servers, mirrors, CDNs and the network are **untrusted** and do no cryptography. Their only power is to refuse service. A reader is given the publisher\'s public key in the tree address and trusts nothing else it receives.',
    '',
    '**Trusted**: the publisher\'s secret key and the machine that signs; the public key the reader types or is given; the reader\'s code and its clock (within the 5-minute skew allowance); the reader\'s local state (the highest sequence number seen per key).',
    '',
    '**Not trusted**: every mirror and every byte it sends: fsinfo.json, blobs, status codes, headers, timing.',
    '',
    'A mirror can always deny service (answer nothing). What it must not achieve is to make any reader hand out a byte the publisher did not sign for that path, accept an older or expired tree, or hang forever. Every reader applies the same rules from one module (`client-js/src/trust/verify.js`, and `client-js/src/trust/roles.js` for format version 2), each numbered in docs/TRUST.md.',
    '',
    'A validly signed tree is trusted to be what its publisher signed, not to be kind to whoever reads it, and one gateway or browser origin may serve many trees. So the threat model has more actors than mirrors:',
    '',
    ...actorTable(),
    '**Not defended, by design**: the confidentiality of a public tree (anyone with its address reads it; a private tree, FORMAT.md §12.8, is for its readers only: below); what a private tree\'s readers do with what they read (no DRM), and what a mirror learns from which blobs readers ask for, in which order and when (no oblivious access); a compromised publisher key, or a threshold of a role\'s keys in format 2 (it signs whatever its role signs until the root keys rotate it away or what it signed expires: keep root and release keys offline, leave only the timestamp key online, use short `--ttl`); freshness beyond the expiry time (a mirror may serve a valid root until it expires, so the TTL bounds how stale a reader can be); the web app\'s own code, which comes from the origin that serves it.',
    '')
  L.push('## Private trees: what each actor learns', '',
    'A private tree (FORMAT.md §12.8) seals every blob (AES-256-GCM under a key derived from the tree secret and the blob\'s own bytes, carried in its parent\'s ref; Padmé padding), names its root in the release by a commitment, and wraps the root\'s ref under an epoch key that the keyring (an age file, one stanza per reader) gives each reader. The signing keys decide what is published and, through the keyring fsinfo.json names, who reads; what decrypts is the tree secret (kept on the publisher\'s machine), the epoch key (every current reader\'s) and the blob keys (whoever opened a root above them). All the threat model above says of mirrors and keys holds for a private tree too; this is what each actor learns from one besides, and what it can do with that:',
    '',
    ...privateActorTable(),
    'A private tree does not hide that it is private, nor its name, address, trust documents, release times or sequence numbers: they are fsinfo.json\'s, signed in the clear. docs/TRUST.md has no rule of its own for private trees yet; their checks are FORMAT.md §12.8\'s: a sealed blob is opened only after the hash check of rule 3, the unwrapped root must match the release\'s commitment, and a reader the keyring does not name is told `ROTREE_NO_ACCESS` (403), which is not a mirror fault under rule 4. The matrix below shows them for every reader.',
    '')
  L.push('## Gated trees: who may fetch', '', GATED_INTRO, '', ...gatedActorTable())
  const seenFirst = list(lies.filter(l => l.seenNewer).map(l => '`' + l.id + '`'))
  const ran = results.filter(c => !c.na)
  const pub = readers.filter(r => results.some(c => c.reader === r && THREATS[c.threat]))
  const priv = readers.filter(r => !pub.includes(r))
  L.push('## The matrix', '',
    `Every lie below was served by a real lying HTTP server (\`test/helpers/lying-server.js\`) to every reader: ${pub.map(r => '`' + r + '`').join(', ')}${priv.length ? `, and for a private tree ${list(priv.map(r => '`' + r + '`'))}` : ''}. ` +
    'For each cell the test asserts: with the liar alone, the read fails with the listed code, hands out no byte that is not the true file\'s (a stream may have delivered a verified prefix), and leaves no file behind; with an honest mirror beside the liar, the read succeeds with the exact bytes, unless the last column says why it must not. ' +
    `${ran.length} cells passed in the run that wrote this file${ran.length < results.length ? `; ${results.length - ran.length} are n/a, a lie about something that reader never asks for` : ''}.`, '',
    'The lies marked "format 2" are about a version-2 tree (`test/matrix/fixture-v2.js`) read at `#t<hash of trust document 1>:stable`: trust document 1 has a 2-of-3 root, a 2-of-2 release and one timestamp key, and was rotated to document 2 (all root keys and the timestamp key replaced); it is published with the real publisher (`rotree trust init|sign|update`, `build --unsigned`, `sign --publish`), and the liars\' documents are forged with `test/vectors/v2-writer.js`. The expired trust document is served for a second family of the same keys and blobs whose document 1 expired before it rotated to 2; its release keys are the first family\'s. A third family, its sibling, has the same root keys in its own chain (one organisation\'s offline keys over two projects). Each of these lies is also shown refused, by the library, with the message of the rule it stands for (docs/TRUST.md rules 10–14).', '',
    'The lies marked "private" are about a private tree (`test/matrix/fixture-private.js`, FORMAT.md §12.8) read at `#t<hash of trust document 1>:private` by reader A. It is published with the real publisher (`rotree trust init|sign`, `build --private`, `access remove|add`, `resign`) under one root, one release and one timestamp key: release 1 for readers B and C (epoch 1); C removed (epoch 2) and release 2 for B; A added in the same epoch, and release 2 published again for A and B. Every reader is given A\'s identity (`--identity FILE` to the CLI, `identity` to the library and the browser bundle, the gateway its own as `rotree gateway --identity` gives it) unless the row says otherwise. `rotree pull` copies a private tree without keys: its cell is the pull and then a read of the pulled folder with the row\'s identity. `rotree fsck --repair-from` repairs without keys the blob the lie is about, deleted from a mirror folder, from the liar (and the honest mirror beside), and the folder is then read; it reads no mirror\'s fsinfo.json. A reader the keyring does not name must be told `ROTREE_NO_ACCESS` itself, never a mirror fault (not inside an `ROTREE_ALL_MIRRORS_FAILED`), and no reader that reads through the root may ask for the manifest. The blobs served in place of this tree\'s at the same size are another private tree\'s (its own secret, the same files and readers). Each of these lies is also shown refused, by the library, with the message of the check it stands for.', '',
    // how the browser reader is driven (browser-reader.js)
    'The browser column is the browser bundle (`client-js/dist/rotree-client.browser.js`, `openTree()` then `readFile()`) in headless Chromium, in a page loaded afresh for every read after its origin\'s storage was cleared, so its rollback state in IndexedDB starts empty, as the page checks before it reads (or holds the newer root, for ' + seenFirst + '). ' +
    'Its page is on another origin than the mirrors, which send CORS headers as `rotree serve` and `rotree nginx-config` do, so the page sees each lie and not a blocked response. A private tree\'s identity is given to its `openTree()` as text, as the web app gives it the file its user picks.', '')
  for (const [threat, title] of Object.entries(THREAT_TITLES)) {
    const ls = lies.filter(l => l.threat === threat)
    if (!ls.length) continue
    const cols = readers.filter(r => results.some(c => c.reader === r && ls.some(l => l.id === c.lie)))
    L.push(`### ${title}`, '')
    L.push(`| lie | ${cols.join(' | ')} | with an honest mirror |`, `|---|${cols.map(() => '---').join('|')}|---|`)
    const na = new Set()
    for (const lie of ls) {
      const cells = cols.map(r => results.find(x => x.lie === lie.id && x.reader === r))
      for (const c of cells) if (c?.na) na.add(c.na)
      L.push(`| ${lie.what} | ${cells.map(c => !c ? '—' : c.na ? 'n/a' : '`' + c.alone + '`').join(' | ')} | ${honestCell(cells)} |`)
    }
    L.push('')
    if (na.size) L.push(`n/a: ${[...na].join('; ')}.`, '')
    L.push('Also covered by: ' + (OTHER_TESTS[threat] ?? []).join('; ') + '.', '')
  }
  L.push('## Reporting', '', 'Report a vulnerability privately to the maintainers before opening an issue.', '')
  await fs.writeFile(DOC, L.join('\n'))
}
