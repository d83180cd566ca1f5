// The system tools a figure needs: a figure that misses one is skipped with
// one line naming the Debian package to install, instead of failing the run.
import { execFileSync } from 'node:child_process'

const PACKAGES = {
  nginx: { probe: ['/usr/sbin/nginx', '-v'], pkg: 'nginx' },
  curl: { probe: ['curl', '--version'], pkg: 'curl' },
  h2load: { probe: ['h2load', '--version'], pkg: 'nghttp2-client' },
  openssl: { probe: ['openssl', 'version'], pkg: 'openssl' },
  taskset: { probe: ['taskset', '--version'], pkg: 'util-linux' },
  tar: { probe: ['tar', '--version'], pkg: 'tar' },
  wget: { probe: ['wget', '--version'], pkg: 'wget' },
  chromium: { probe: ['/usr/bin/chromium', '--version'], pkg: 'chromium' }
}

const seen = new Map()
function has (tool) {
  if (!seen.has(tool)) {
    const [cmd, ...args] = PACKAGES[tool].probe
    try { execFileSync(cmd, args, { stdio: 'ignore', timeout: 10_000 }); seen.set(tool, true) } catch { seen.set(tool, false) }
  }
  return seen.get(tool)
}

/**
 * null when every tool is there, else the one line a skipped figure prints,
 * e.g. "h2load not found (Debian package: nghttp2-client)".
 */
export function missing (...tools) {
  const gone = tools.filter(t => !has(t))
  return gone.length ? gone.map(t => `${t} not found (Debian package: ${PACKAGES[t].pkg})`).join('; ') : null
}

/** The figure a module returns when it cannot run here. */
export function skipped (id, reason) { return { id, skipped: reason } }
