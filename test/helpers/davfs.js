// davfs2 (Debian package davfs2), for the suite that mounts the gateway
// (test/webdav/davfs.test.js) and the figure that copies a tree out of such a
// mount (bench/p10-get.js): whether this machine can mount one, and the
// configuration and mount command docs/GATEWAY.md gives users ("davfs2"),
// read from there, so what the doc says is what is mounted.
import fs from 'node:fs/promises'
import { existsSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { needs } from './tools.js'
import { gatewayRecipe } from '../gateway/helpers.js'

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
 * docs/GATEWAY.md's davfs2 configuration, as written there (no locks, never
 * ask for credentials, buf_size 64), in a file of our own (conf=) in `dir`,
 * with only a cache and an empty secrets file in `dir` added, so neither
 * /etc/davfs2 nor the secrets there are used. davfs2 runs as its own user,
 * so `dir` and every folder above it must be open to it.
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
  await fs.writeFile(conf, `${await gatewayRecipe('davfs2')}\ncache_dir ${cache}\nsecrets ${secrets}\n`)
  await fs.chmod(dir, 0o755)
  return conf
}

/**
 * docs/GATEWAY.md's mount command, as written there, for `conf` (davfsConfig),
 * the gateway at `url` and the mount point `mnt`: a line for `sh -c`.
 */
export async function davfsMountCommand ({ conf, url, mnt }) {
  let line = await gatewayRecipe('davfs2-mount')
  for (const [doc, ours] of [['/etc/davfs2/gateway.conf', conf], ['http://127.0.0.1:8081/', url], ['/mnt/tree', mnt]]) {
    if (line.split(doc).length !== 2) throw new Error(`docs/GATEWAY.md's davfs2 mount line names ${doc} not once: ${line}`)
    line = line.replace(doc, () => shellWord(ours))
  }
  return line
}

const shellWord = s => `'${String(s).replaceAll("'", "'\\''")}'`
