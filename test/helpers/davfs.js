// davfs2 (Debian package davfs2), for the suite that mounts the gateway
// (test/webdav/davfs.test.js) and the figure that copies a tree out of such a
// mount (bench/p10-get.js): whether this machine can mount one, and a user
// configuration of our own.
import fs from 'node:fs/promises'
import { existsSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { needs } from './tools.js'

/** false when `mount -t davfs` can run here, else one line saying why not. */
export function davfsMissing () {
  if (process.platform !== 'linux') return 'davfs2 mounts need Linux'
  const tool = needs('mount.davfs')
  if (tool) return tool
  if (process.getuid?.() !== 0) return 'mounting needs root'
  if (!existsSync('/dev/fuse')) return 'no /dev/fuse in this machine or container'
  const eff = /^CapEff:\s*([0-9a-f]+)$/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1]
  if (eff === undefined || !(BigInt('0x' + eff) & (1n << 21n))) return 'no CAP_SYS_ADMIN: the kernel will not mount here'
  return false
}

/**
 * A davfs2 user configuration of our own (conf=) in `dir`, so neither
 * /etc/davfs2 nor the secrets there are used: no locks (the gateway is class
 * 1), never ask for credentials, a cache in `dir`, and buf_size 64 (KiB):
 * davfs2 1.6's default of 16 is smaller than the readdir buffer recent
 * kernels ask for, and every readdir would fail with EINVAL. davfs2 runs as
 * its own user, so `dir` and every folder above it must be open to it.
 * @returns {Promise<string>} the configuration file, for `-o conf=`
 */
export async function davfsConfig (dir) {
  const cache = path.join(dir, 'cache')
  await fs.mkdir(cache)
  // davfs2 makes its cache folder as its own unprivileged user (davfs2 by default): let its group write
  const gid = /^davfs2:[^:]*:(\d+):/m.exec(await fs.readFile('/etc/group', 'utf8').catch(() => ''))?.[1]
  if (gid !== undefined) { await fs.chown(cache, 0, Number(gid)); await fs.chmod(cache, 0o775) }
  const secrets = path.join(dir, 'secrets')
  await fs.writeFile(secrets, '', { mode: 0o600 })
  const conf = path.join(dir, 'davfs2.conf')
  await fs.writeFile(conf, `use_locks 0\nask_auth 0\nbuf_size 64\ncache_dir ${cache}\nsecrets ${secrets}\n`)
  await fs.chmod(dir, 0o755)
  return conf
}
