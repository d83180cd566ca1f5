// rotree keygen
import { UsageError } from 'rotree-client/errors'
import { writeKeyFile } from '../../builder/keys.js'

export default {
  usage: 'keygen KEYFILE',
  summary: 'write a new secret key (mode 0600); print the public key last',
  positionals: [1, 1],
  options: { force: { type: 'boolean', help: 'overwrite an existing key file' } },
  async run ([file], v, io) {
    const { publicKey } = await writeKeyFile(file, { force: v.force }).catch(err => {
      if (err.code === 'EEXIST') throw new UsageError(`${file} exists; use --force to overwrite it`)
      throw err
    })
    io.stderr.write(`wrote secret key to ${file}; the public key is:\n`)
    io.stdout.write(publicKey + '\n')
  }
}
