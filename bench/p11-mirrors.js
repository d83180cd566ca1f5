// P11: two mirrors at once. One nginx behind two emulated links, each its own
// 200 Mbit/s cap and RTT 20 ms (two mirrors a reader reaches over different
// paths); a verified read of a large file given both (openTree's mirrors,
// `rotree cat --mirror`) against the same read given one, in the same run.
// Each link counts the bytes it carried, so the figure shows how the reader
// split the file between them.
import { missing, skipped } from './lib/need.js'
import { bigFileTree, linkTo, runContext, relayNote } from './lib/netfix.js'
import { libraryRead, rotreeCat, curl } from './lib/clients.js'

export const id = 'P11'
const TARGET = 1.7
const LINK = { rttMs: 20, mbit: 200 }
const mbps = (bytes, ms) => bytes / 1e6 / (ms / 1000)

export async function run ({ quick = false } = {}) {
  const miss = missing('nginx', 'curl', 'openssl')
  if (miss) return skipped(id, miss)
  const size = (quick ? 32 : 256) * 2 ** 20
  const limitS = quick ? 10 : 30
  const f = await bigFileTree(size)
  const a = await linkTo({ nginx: f.nginx, tls: false, ...LINK })
  const b = await linkTo({ nginx: f.nginx, tls: false, ...LINK })
  const addr = f.addr(a.origin)
  const raw = {}; const relay = []
  const split = async fn => {
    await a.resetStats(); await b.resetStats()
    const r = await fn()
    const [sa, sb] = [await a.stats(), await b.stats()]
    relay.push(sa, sb)
    return { ...r, bytesA: sa.bytesDown, bytesB: sb.bytesDown }
  }
  try {
    raw.curl = await curl({ url: a.origin + 'plain/big.bin', limitS })
    raw.one = await split(() => libraryRead({ addr, file: '/big.bin', limitS }))
    raw.two = await split(() => libraryRead({ addr, file: '/big.bin', mirrors: [b.origin], limitS }))
    raw.catOne = await split(() => rotreeCat({ addr, file: '/big.bin', size, limitS, stateDir: f.stateDir }))
    raw.catTwo = await split(() => rotreeCat({ addr, file: '/big.bin', size, mirrors: [b.origin], limitS, stateDir: f.stateDir }))
  } finally { await a.stop(); await b.stop() }
  const rate = r => mbps(r.bytes, r.totalMs ?? r.ms)
  const cut = r => !r.truncated ? '' : Number.isFinite(r.bytes) ? `(limit: first ${Math.round(r.bytes / 2 ** 20)} MiB in ${limitS} s)` : `(not done in ${limitS} s)`
  const shareB = r => r.bytesB / (r.bytesA + r.bytesB)
  const rows = [
    { label: 'createReadStream, two mirrors vs one', value: rate(raw.two), baseline: rate(raw.one), baselineLabel: 'the same, one mirror', unit: 'MB/s', note: cut(raw.two) },
    { label: '`rotree cat --mirror`, two mirrors vs one', value: rate(raw.catTwo), baseline: rate(raw.catOne), baselineLabel: '`rotree cat`, one mirror', unit: 'MB/s', note: cut(raw.catTwo) },
    { label: 'createReadStream, one mirror, against curl', value: rate(raw.one), baseline: mbps(raw.curl.bytes, raw.curl.ms), baselineLabel: 'curl, one file, one link', unit: 'MB/s' }
  ]
  const gain = rows[0].value / rows[0].baseline
  const capMBs = LINK.mbit / 8
  return {
    id,
    title: `two mirrors, each ${LINK.mbit} Mbit/s at RTT ${LINK.rttMs} ms: verified read of ${size >> 20} MiB`,
    command: `npm run bench${quick ? ':quick' : ''} -- P11`,
    target: `≥ ${TARGET}× the throughput of one mirror with two`,
    met: gain >= TARGET,
    rows,
    raw,
    notes: [
      `One run per row (time limit ${limitS} s). One nginx (HTTP/1.1) behind two links of bench/lib/link.js, each ${LINK.mbit} Mbit/s (${capMBs} MB/s) with its own token bucket, RTT ${LINK.rttMs} ms, TCP windows as in P3w; the first mirror in the address, the second given as a mirror. Two links together carry at most ${2 * capMBs} MB/s.`,
      `Bytes each link carried (first / second mirror): library, one mirror ${fmtSplit(raw.one)}; library, two mirrors ${fmtSplit(raw.two)} (${(100 * shareB(raw.two)).toFixed(0)}% from the second); cat, two mirrors ${fmtSplit(raw.catTwo)} (${(100 * shareB(raw.catTwo)).toFixed(0)}% from the second).`,
      relayNote(relay),
      runContext()
    ],
    gap: shareB(raw.two) < 0.05
      ? `With two mirrors the reader took ${(100 * shareB(raw.two)).toFixed(0)}% of the bytes from the second: it asks the first mirror for every blob and turns to the next only when one fails or lies (client-js/src/fetch/mirrors.js), so a second mirror adds resilience, not bandwidth, and the read stays at one link's ${capMBs} MB/s. What would close it: striping blob requests across healthy mirrors (each blob is verified by its hash whichever mirror sends it), with each mirror's share of the window following its measured throughput, so a slow mirror gets fewer requests rather than holding the stream back.`
      : `With two mirrors the reader took ${(100 * shareB(raw.two)).toFixed(0)}% of the bytes from the second and reached ${(rate(raw.two) / capMBs).toFixed(2)}× one link's ${capMBs} MB/s (two links: ${2 * capMBs} MB/s). What is left is in flight per mirror: each link needs its own bandwidth-delay product (${(LINK.mbit * 1e6 / 8 * LINK.rttMs / 1000 / 2 ** 20).toFixed(2)} MiB here) in requests to stay full, and a mirror's share should follow its measured throughput.`
  }
}

const fmtSplit = r => `${(r.bytesA / 2 ** 20).toFixed(0)} / ${(r.bytesB / 2 ** 20).toFixed(0)} MiB`
