// Publisher key files. A key file holds the ed25519 secret key (and its public
// half, so a typo in a copied file is caught); it is created mode 0600 and
// never overwritten.
import fs from 'node:fs/promises'
// node:crypto, not @noble: same keys and signatures, none of its start-up cost (ed25519-node.js)
import { generateKeyPair, publicKeyOf } from './ed25519-node.js'
import { BadKeyError } from 'rotree-client/errors'

const TYPE = 'rotree-ed25519-secret-key'
const HEX64 = /^[0-9a-f]{64}$/

export async function writeKeyFile (file, { force = false } = {}) {
  const { secretKey, publicKey } = generateKeyPair()
  const text = JSON.stringify({ type: TYPE, secretKey, publicKey }, null, 2) + '\n'
  await fs.writeFile(file, text, { mode: 0o600, flag: force ? 'w' : 'wx' })
  await fs.chmod(file, 0o600) // 'w' on an existing file keeps its old mode
  return { publicKey }
}

/** @returns {Promise<{ secretKey: string, publicKey: string, warning?: string }>} */
export async function readKeyFile (file) {
  let text, st
  try {
    [text, st] = await Promise.all([fs.readFile(file, 'utf8'), fs.stat(file)])
  } catch (err) {
    throw new BadKeyError(`cannot read key file ${file}: ${err.code || err.message}`, { cause: err })
  }
  let j
  try { j = JSON.parse(text) } catch { throw new BadKeyError(`${file} is not a rotree key file (not JSON)`) }
  if (j?.type !== TYPE || !HEX64.test(j.secretKey) || !HEX64.test(j.publicKey)) throw new BadKeyError(`${file} is not a rotree secret key file`)
  if (publicKeyOf(j.secretKey) !== j.publicKey) throw new BadKeyError(`${file}: public key does not match the secret key`)
  const warning = st.mode & 0o077 ? `${file} is readable by other users (mode ${(st.mode & 0o777).toString(8)}); chmod 600 it` : undefined
  return { secretKey: j.secretKey, publicKey: j.publicKey, warning }
}
