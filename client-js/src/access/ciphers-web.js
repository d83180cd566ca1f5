// The browser's twin of ciphers-node.js: the same functions, imported at once.
import { openKeyring } from './keyring.js'
import { unwrapRoot } from './root-wrap.js'

export const ciphers = async () => ({ openKeyring, unwrapRoot })
