// rotree keygen
import { BadPathError } from 'rotree-client/errors'
import { writeKeyFile, askTerminal } from '../../builder/keys.js'

export default {
  usage: 'keygen KEYFILE [--passphrase]',
  summary: 'write a new secret key (mode 0600); print the public key last (rotree keygen A.key > A.pub)',
  positionals: [1, 1],
  options: {
    force: { type: 'boolean', help: 'overwrite an existing key file' },
    passphrase: { type: 'boolean', help: 'seal the secret key with a passphrase (scrypt + AES-256-GCM), from $ROTREE_PASSPHRASE or asked on the terminal' }
  },
  async run ([file], v, io) {
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
