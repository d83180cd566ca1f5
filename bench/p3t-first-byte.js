// P3t: time to the first verified byte at a distance. The library, from the
// start of openTree() to the first chunk of createReadStream() of a large file
// (signed root, directory page, chunk index and the first chunk, each verified),
// against curl's time_starttransfer for the same bytes as a plain file (a
// fresh connection each, both through the same emulated link), at RTT 10, 50
// and 100 ms, over HTTP/1.1 and over HTTPS + HTTP/2. The target is counted in
// round trips: at most 3 RTT more than curl.
import { missing, skipped } from './lib/need.js'
import { bigFileTree, linkTo, PROTOCOLS, runContext, relayNote } from './lib/netfix.js'
import { libraryRead, curl } from './lib/clients.js'
import { median } from './lib/proc.js'

export const id = 'P3t'
const TARGET_RTT = 3

export async function run ({ quick = false } = {}) {
  const miss = missing('nginx', 'curl', 'openssl')
  if (miss) return skipped(id, miss)
  const size = (quick ? 32 : 256) * 2 ** 20 // the file P3w reads: same tree, same chunk index depth
  const rtts = quick ? [50] : [10, 50, 100]
  const reps = quick ? 1 : 3
  const f = await bigFileTree(size)
  const rows = []; const raw = []; const relay = []
  for (const rttMs of rtts) {
    for (const p of PROTOCOLS) {
      const link = await linkTo({ nginx: f.nginx, tls: p.tls, rttMs, mbit: 1000 })
      const ca = p.tls ? f.cert.cert : null
      const c = []; const lib = []; let wire = null
      try {
        for (let i = 0; i < reps; i++) {
          // a range: the first byte of the response comes when it would for the whole file
          c.push(await curl({ url: link.origin + 'plain/big.bin', http2: p.http2, cacert: ca, range: '0-65535', limitS: 20 }))
          const mark = await f.nginx.logMark()
          lib.push(await libraryRead({ addr: f.addr(link.origin), file: '/big.bin', ca, first: true, limitS: 20 }))
          wire ??= await f.nginx.logSince(mark)
        }
        relay.push(await link.stats())
      } finally { await link.stop() }
      const first = median(lib.map(r => r.firstMs)); const open = median(lib.map(r => r.openMs))
      const start = median(c.map(r => r.startMs))
      const extra = (first - start) / rttMs
      rows.push({ label: `${p.name}, RTT ${rttMs} ms: first verified byte`, value: first, baseline: start, baselineLabel: `curl time_starttransfer, HTTP/${c[0].httpVersion}`, unit: 'ms', higherIsBetter: false, note: `(${extra >= 0 ? '+' : ''}${extra.toFixed(1)} RTT)` })
      raw.push({ protocol: p.name, rttMs, firstMs: first, openMs: open, curlStartMs: start, curlConnectMs: median(c.map(r => r.connectMs)), extraRtt: extra, requestsBeforeFirst: wire?.requests, connections: wire?.connections })
    }
  }
  const worst = Math.max(...raw.map(r => r.extraRtt))
  const inRtt = (ms, r) => (ms / r.rttMs).toFixed(1)
  return {
    id,
    title: 'time to the first verified byte at a distance',
    command: `npm run bench${quick ? ':quick' : ''} -- P3t`,
    target: `first verified byte ≤ curl's first byte + ${TARGET_RTT} RTT`,
    met: worst <= TARGET_RTT,
    rows,
    raw,
    notes: [
      `Median of ${reps} run${reps > 1 ? 's' : ''} each, a new process and new connections every time, through the link of P3w (1 Gbit/s; a TCP handshake costs one RTT, and a new connection starts with 10 segments of window). The library's time runs from just before openTree() to the first chunk createReadStream() yields; curl's is time_starttransfer (first byte of the response, headers included) of a 64 KiB range of the same bytes as a plain file. Ratio: rotree ÷ curl; the note counts the difference in RTTs.`,
      'Where the library\'s time went: ' + raw.map(r => `${r.protocol}, RTT ${r.rttMs} ms: openTree() ${inRtt(r.openMs, r)} RTT, then ${inRtt(r.firstMs - r.openMs, r)} RTT to the first chunk (${r.requestsBeforeFirst} requests on ${r.connections} connections by then), against curl's ${inRtt(r.curlStartMs, r)} RTT`).join('; ') + '.',
      relayNote(relay),
      runContext()
    ],
    gap: `The first verified byte costs ${raw.map(r => `${r.extraRtt.toFixed(1)}`).join(', ')} RTT more than curl's first byte (rows in table order). A reader needs, in turn, the signed root (fsinfo.json), the root directory page, the file's chunk index and the whole first chunk (~256 KiB, hashed before a byte is handed out), each a request that waits for the one before; every new connection also pays a TCP handshake (and a TLS one), and the first chunk arrives over a connection whose congestion window starts at 10 segments (~14 KiB), so ~256 KiB takes several more RTTs of slow start. What would close it: one warm connection for the whole chain (HTTP/2, or the fsinfo.json connection kept for what follows, so only the first request pays the handshakes and slow start), and fewer dependent steps before the first chunk (the root page and the chunk index asked for as soon as their hashes are known, the first chunks requested on connections whose windows have already grown).`
  }
}
