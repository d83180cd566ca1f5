// Publisher key files. A key file holds the ed25519 secret key (and its public
// half, so a typo in a copied file is caught); it is created mode 0600 and
// never overwritten.
//
// With a passphrase (`keygen --passphrase`) the secret key is stored sealed,
// as minisign and signify store theirs: scrypt (N = 2^16, r = 8, p = 1, a
// random 32-byte salt) derives a 256-bit key from the passphrase, and
// AES-256-GCM seals the 32 secret bytes, with the public key as associated
// data so that a sealed key cannot be paired with another public half. The
// passphrase comes from ROTREE_PASSPHRASE or, when that is unset, from the
// terminal without echo. Those scrypt parameters are the only ones read back:
// they are what every keygen has written, and a key file that chose its own
// (N = 2^20, r = 32 takes 4 GiB, p = 16 runs that sixteen times over) would
// make opening it cost whatever whoever edited it liked, before the passphrase
// is even checked, so it is refused as malformed (ROTREE_BAD_KEY) first.
//
//   { "type": "rotree-ed25519-secret-key", "publicKey": "<hex>",
//     "sealed": { "kdf": "scrypt", "N": 65536, "r": 8, "p": 1, "salt": "<hex>",
//                 "cipher": "aes-256-gcm", "iv": "<hex>", "data": "<hex>", "tag": "<hex>" } }
//
// Public key arguments (`trust init --root A.pub`) accept a 64-hex key, a file
// holding one (what keygen prints), or a secret key file (its public half).
import fs from 'node:fs/promises'
import * as crypto from 'node:crypto'
import { promisify } from 'node:util'
// node:crypto, not @noble: same keys and signatures, none of its start-up cost (ed25519-node.js)
import { generateKeyPair, publicKeyOf } from './ed25519-node.js'
import { BadKeyError } from 'rotree-client/errors'
import { weakKeyReason } from 'rotree-client/format'

const TYPE = 'rotree-ed25519-secret-key'
const HEX64 = /^[0-9a-f]{64}$/
const SCRYPT = { N: 2 ** 16, r: 8, p: 1 }
const scrypt = promisify(crypto.scrypt)
const scryptKey = (pass, salt, { N, r, p }) => scrypt(pass.normalize('NFKC'), salt, 32, { N, r, p, maxmem: 256 * N * r })

/**
 * Write a new key file (mode 0600), sealed when a passphrase is given.
 * @param {string} file @param {{ force?: boolean, passphrase?: string }} [o]
 */
export async function writeKeyFile (file, { force = false, passphrase } = {}) {
  const { secretKey, publicKey } = generateKeyPair()
  const body = passphrase === undefined ? { type: TYPE, secretKey, publicKey } : { type: TYPE, publicKey, sealed: await seal(secretKey, publicKey, passphrase) }
  const text = JSON.stringify(body, null, 2) + '\n'
  await fs.writeFile(file, text, { mode: 0o600, flag: force ? 'w' : 'wx' })
  await fs.chmod(file, 0o600) // 'w' on an existing file keeps its old mode
  return { publicKey, sealed: passphrase !== undefined }
}

async function seal (secretKey, publicKey, passphrase) {
  if (!passphrase) throw new BadKeyError('an empty passphrase seals nothing: give one, or leave --passphrase out')
  const salt = crypto.randomBytes(32)
  const iv = crypto.randomBytes(12)
  const c = crypto.createCipheriv('aes-256-gcm', await scryptKey(passphrase, salt, SCRYPT), iv)
  c.setAAD(Buffer.from(publicKey, 'hex'))
  const data = Buffer.concat([c.update(Buffer.from(secretKey, 'hex')), c.final()])
  return { kdf: 'scrypt', ...SCRYPT, salt: salt.toString('hex'), cipher: 'aes-256-gcm', iv: iv.toString('hex'), data: data.toString('hex'), tag: c.getAuthTag().toString('hex') }
}

// The sealed member, checked before a passphrase is asked for and before
// scrypt runs: the cost of opening a key file is ours to choose, not the file's.
function checkSealed (s, file) {
  const ok = s && s.kdf === 'scrypt' && s.cipher === 'aes-256-gcm' &&
    /^[0-9a-f]{64}$/.test(s.salt) && /^[0-9a-f]{24}$/.test(s.iv) && HEX64.test(s.data) && /^[0-9a-f]{32}$/.test(s.tag)
  if (!ok) throw new BadKeyError(`${file}: its sealed secret key is not in a form this version reads`)
  if (s.N !== SCRYPT.N || s.r !== SCRYPT.r || s.p !== SCRYPT.p) {
    const got = ['N', 'r', 'p'].map(k => `${k} = ${String(JSON.stringify(s[k]) ?? 'missing').slice(0, 20)}`).join(', ')
    throw new BadKeyError(`${file}: its sealed secret key asks for scrypt ${got}; this version opens only N = ${SCRYPT.N}, r = ${SCRYPT.r}, p = ${SCRYPT.p} (what keygen writes)`)
  }
}

async function unseal (s, publicKey, passphrase, file) {
  const d = crypto.createDecipheriv('aes-256-gcm', await scryptKey(passphrase, Buffer.from(s.salt, 'hex'), SCRYPT), Buffer.from(s.iv, 'hex'))
  d.setAAD(Buffer.from(publicKey, 'hex'))
  d.setAuthTag(Buffer.from(s.tag, 'hex'))
  try {
    return Buffer.concat([d.update(Buffer.from(s.data, 'hex')), d.final()]).toString('hex')
  } catch {
    throw new BadKeyError(`${file}: wrong passphrase (or a damaged key file)`)
  }
}

/**
 * Read a secret key file; a sealed one is opened with `passphrase`, or
 * ROTREE_PASSPHRASE, or what the terminal gives.
 * @param {string} file @param {{ passphrase?: string, askPassphrase?: (prompt: string) => Promise<string> }} [o]
 * @returns {Promise<{ secretKey: string, publicKey: string, warning?: string }>}
 */
export async function readKeyFile (file, { passphrase, askPassphrase = askTerminal } = {}) {
  let text, st
  try {
    [text, st] = await Promise.all([fs.readFile(file, 'utf8'), fs.stat(file)])
  } catch (err) {
    throw new BadKeyError(`cannot read key file ${file}: ${err.code || err.message}`, { cause: err })
  }
  let j
  try { j = JSON.parse(text) } catch { throw new BadKeyError(`${file} is not a rotree key file (not JSON)`) }
  if (j?.type !== TYPE || !HEX64.test(j.publicKey) || !(HEX64.test(j.secretKey) || (j.secretKey === undefined && j.sealed))) {
    throw new BadKeyError(`${file} is not a rotree secret key file`)
  }
  let secretKey = j.secretKey
  if (secretKey === undefined) {
    checkSealed(j.sealed, file)
    const pass = passphrase ?? process.env.ROTREE_PASSPHRASE ?? await askPassphrase(`passphrase for ${file}: `)
    secretKey = await unseal(j.sealed, j.publicKey, pass, file)
  }
  if (publicKeyOf(secretKey) !== j.publicKey) throw new BadKeyError(`${file}: public key does not match the secret key`)
  const warning = st.mode & 0o077 ? `${file} is readable by other users (mode ${(st.mode & 0o777).toString(8)}); chmod 600 it` : undefined
  return { secretKey, publicKey: j.publicKey, warning }
}

/**
 * Several secret key files, read one after another (each may ask for its
 * passphrase); `warn` gets each file's mode warning.
 * @param {string[]} [files] @param {(message: string) => void} [warn]
 */
export async function readKeyFiles (files = [], warn = () => {}) {
  const keys = []
  for (const f of files) {
    const k = await readKeyFile(f)
    if (k.warning) warn(k.warning)
    keys.push(k)
  }
  return keys
}

/**
 * A public key argument: 64 hex digits, a file holding them (as `keygen`
 * prints the key: `rotree keygen A.key > A.pub`), or a secret key file (its
 * public half; a sealed one needs no passphrase for that).
 * @param {string} arg @param {string} [what] for messages
 * @returns {Promise<string>}
 */
export async function readPublicKey (arg, what = 'key') {
  const s = String(arg).trim()
  if (HEX64.test(s.toLowerCase())) return usableKey(s.toLowerCase(), what, s)
  let text
  try { text = await fs.readFile(s, 'utf8') } catch (err) {
    throw new BadKeyError(`${what} ${s}: neither 64 hex digits nor a readable file (${err.code || err.message})`, { cause: err })
  }
  const t = text.trim().toLowerCase()
  if (HEX64.test(t)) return usableKey(t, what, s)
  let j = null
  try { j = JSON.parse(text) } catch {}
  if (j?.type === TYPE && HEX64.test(j.publicKey)) return usableKey(j.publicKey, what, s)
  throw new BadKeyError(`${what} ${s}: the file holds no public key (expected the 64 hex digits keygen prints)`)
}

/** FORMAT.md §1.4: a small-order or non-canonical key is no key (anyone could sign under it). */
function usableKey (hex, what, given) {
  const weak = weakKeyReason(hex)
  if (weak) throw new BadKeyError(`${what} ${given} ${weak}: not a key to publish under or to trust`)
  return hex
}

/** Read a passphrase from the terminal without echo (twice with `confirm`). */
export async function askTerminal (prompt, { confirm = false } = {}) {
  const first = await readHidden(prompt)
  if (confirm && await readHidden('again: ') !== first) throw new BadKeyError('the two passphrases differ')
  return first
}

async function readHidden (prompt) {
  const { openSync, writeSync } = await import('node:fs')
  const tty = await import('node:tty')
  let fd
  try { fd = openSync('/dev/tty', 'r+') } catch {
    throw new BadKeyError('this key file is sealed with a passphrase: set ROTREE_PASSPHRASE (no terminal to ask on)')
  }
  const input = new tty.ReadStream(fd) // closes fd when destroyed
  writeSync(fd, prompt)
  input.setRawMode(true)
  try {
    return await new Promise((resolve, reject) => {
      let s = ''
      input.on('data', buf => {
        for (const ch of buf.toString('utf8')) {
          if (ch === '\r' || ch === '\n') { writeSync(fd, '\n'); resolve(s); return }
          if (ch === '\u0003') { writeSync(fd, '\n'); reject(new BadKeyError('interrupted')); return }
          if (ch === '\u007f' || ch === '\b') s = s.slice(0, -1)
          else s += ch
        }
      })
    })
  } finally {
    input.setRawMode(false)
    input.destroy()
  }
}
