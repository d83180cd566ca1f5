// rotree keygen
import fs from 'node:fs/promises'
import { constants } from 'node:fs'
import { BadPathError, UsageError } from 'rotree-client/errors'
import { writeKeyFile, askTerminal } from '../../builder/keys.js'

export default {
  usage: 'keygen KEYFILE [--passphrase] | keygen --reader FILE [--pq]',
  summary: 'write a new secret key (mode 0600); print the public key last (rotree keygen A.key > A.pub). --reader: an age identity to read private trees with; prints its age1… recipient last',
  positionals: [0, 1],
  options: {
    force: { type: 'boolean', help: 'overwrite an existing key file' },
    passphrase: { type: 'boolean', help: 'seal the secret key with a passphrase (scrypt + AES-256-GCM), from $ROTREE_PASSPHRASE or asked on the terminal' },
    reader: { type: 'string', arg: 'FILE', help: 'write a reader identity (an age identity file, as age-keygen writes it) instead of a signing key' },
    pq: { type: 'boolean', help: 'with --reader: a post-quantum hybrid identity (age1pq1…; its keyring stanza is about 1.2 KB, an X25519 one 100 bytes)' }
  },
  async run (args, v, io) {
    if (v.reader !== undefined) {
      if (args.length) throw new UsageError('keygen --reader FILE takes no KEYFILE')
      if (v.passphrase) throw new UsageError('--passphrase seals a signing key; an identity file is protected by its mode (0600), as age-keygen leaves it')
      return readerKey(v.reader, v, io)
    }
    if (v.pq) throw new UsageError('--pq goes with --reader')
    if (args.length !== 1) throw new UsageError('KEYFILE is missing (or --reader FILE for a reader identity)')
    const [file] = args
    const passphrase = v.passphrase ? process.env.ROTREE_PASSPHRASE ?? await askTerminal(`passphrase for ${file}: `, { confirm: true }) : undefined
    const { publicKey } = await writeKeyFile(file, { force: v.force, passphrase }).catch(err => {
      // not a usage mistake: one coded line, no usage text (an existing key is never replaced by accident)
      if (err.code === 'EEXIST') throw new BadPathError(`${file} exists and is kept (a key is never overwritten unless you give --force)`, { details: { path: file } })
      throw err
    })
    io.stderr.write(`wrote ${passphrase !== undefined ? 'sealed ' : ''}secret key to ${file}; the public key is:\n`)
    io.stdout.write(publicKey + '\n')
  }
}

// an age identity file (age-keygen's layout: the `age -d -i FILE` tool reads it as it is)
async function readerKey (file, v, io) {
  // age-encryption: age's own identity encoding and its recipient (loaded only here)
  const age = await import('age-encryption')
  const identity = v.pq ? await age.generateHybridIdentity() : await age.generateX25519Identity()
  const recipient = await age.identityToRecipient(identity)
  const text = `# created: ${new Date().toISOString().slice(0, 19)}Z\n# public key: ${recipient}\n${identity}\n`
  const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_NOFOLLOW | (v.force ? constants.O_TRUNC : constants.O_EXCL)
  let fh
  try { fh = await fs.open(file, flags, 0o600) } catch (err) {
    if (err.code === 'EEXIST') throw new BadPathError(`${file} exists and is kept (an identity is never overwritten unless you give --force)`, { details: { path: file } })
    throw err
  }
  try {
    await fh.chmod(0o600)
    await fh.writeFile(text)
    await fh.sync()
  } finally { await fh.close() }
  io.stderr.write(`wrote reader identity to ${file}; give the publisher its recipient:\n`)
  io.stdout.write(recipient + '\n')
}
