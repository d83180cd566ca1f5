// The command registry. Each command is a module in cli/cmd/ exporting
// { usage, summary, positionals: [min, max], options, run(positionals, values, io) };
// only the module of the command being run is loaded.
export const COMMAND_NAMES = [
  'keygen', 'trust', 'build', 'access', 'grant', 'sign', 'resign', 'gc', 'serve', 'nginx-config',
  'ls', 'stat', 'cat', 'get', 'log', 'log-audit', 'diff', 'gateway', 'pull', 'fsck', 'push', 'remote', 'caddy-config', 'varnish-config', 'witness', 'token-server', 'verify'
]

/** The command's module, or null for an unknown name (or one not built yet). */
export async function loadCommand (name) {
  if (!COMMAND_NAMES.includes(name)) return null
  const url = new URL(`./cmd/${name}.js`, import.meta.url)
  try {
    return (await import(url)).default
  } catch (err) {
    if (err.code === 'ERR_MODULE_NOT_FOUND' && err.url === url.href) return null
    if (err.code === 'ERR_MODULE_NOT_FOUND' && String(err.message).includes(url.pathname)) return null
    throw err
  }
}
