// System tools the suites use: where each is (CHROMIUM_PATH and NGINX_PATH
// override the Debian paths) and, when one is missing, a skip reason of one
// line naming the Debian package, for `test(name, { skip }, …)`.
import fs from 'node:fs'
import path from 'node:path'
import { test as nodeTest, describe as nodeDescribe, before as nodeBefore, after as nodeAfter } from 'node:test'

const TOOLS = {
  nginx: { env: 'NGINX_PATH', paths: ['/usr/sbin/nginx'], pkg: 'nginx' },
  chromium: { env: 'CHROMIUM_PATH', paths: ['/usr/bin/chromium'], pkg: 'chromium' },
  curl: { pkg: 'curl' },
  wget: { pkg: 'wget' },
  rclone: { pkg: 'rclone' },
  openssl: { pkg: 'openssl' },
  varnishd: { paths: ['/usr/sbin/varnishd'], pkg: 'varnish' },
  caddy: { pkg: 'caddy' },
  litmus: { pkg: 'litmus' },
  'mount.davfs': { paths: ['/usr/sbin/mount.davfs', '/sbin/mount.davfs'], pkg: 'davfs2' },
  age: { pkg: 'age' },
  h2load: { pkg: 'nghttp2-client' }
}

const executable = p => { try { fs.accessSync(p, fs.constants.X_OK); return fs.statSync(p).isFile() } catch { return false } }

/** The path of a tool, or null. */
export function toolPath (name) {
  const t = TOOLS[name] ?? { pkg: name }
  if (t.env && process.env[t.env]) return executable(process.env[t.env]) ? process.env[t.env] : null
  for (const p of t.paths ?? []) if (executable(p)) return p
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (dir && executable(path.join(dir, name))) return path.join(dir, name)
  }
  return null
}

/** false when every tool is there, else one line naming the missing packages. */
export function needs (...names) {
  const missing = names.filter(n => !toolPath(n)).map(n => (TOOLS[n] ?? { pkg: n }).pkg)
  return missing.length === 0 ? false : `needs ${missing.join(', ')} (Debian package${missing.length > 1 ? 's' : ''} ${missing.join(' ')})`
}

/**
 * node:test's test, describe, before and after for a suite that needs
 * `names`: when one is missing, every test is skipped with the one line
 * needs() gives (naming the Debian package) and the hooks do nothing, so the
 * suite never starts the tool it lacks.
 *   const { test, before, after } = needing('chromium')
 * @returns {{ test: Function, describe: Function, before: Function, after: Function, skip: string|false }}
 */
export function needing (...names) {
  const skip = needs(...names)
  const withSkip = fn => (name, opts, body) => {
    if (typeof opts === 'function') { body = opts; opts = {} }
    return fn(name, skip ? { ...opts, skip } : opts, body)
  }
  const hook = fn => (body, opts) => fn(skip ? () => {} : body, opts)
  return { test: withSkip(nodeTest), describe: withSkip(nodeDescribe), before: hook(nodeBefore), after: hook(nodeAfter), skip }
}
