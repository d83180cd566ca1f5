// rotree keygen
import { BadPathError } from 'rotree-client/errors'
import { writeKeyFile } from '../../builder/keys.js'

export default {
  usage: 'keygen KEYFILE',
  summary: 'write a new secret key (mode 0600); print the public key last',
  positionals: [1, 1],
  options: { force: { type: 'boolean', help: 'overwrite an existing key file' } },
  async run ([file], v, io) {
    const { publicKey } = await writeKeyFile(file, { force: v.force }).catch(err => {
      // not a usage mistake: one coded line, no usage text (an existing key is never replaced by accident)
      if (err.code === 'EEXIST') throw new BadPathError(`${file} exists and is kept (a key is never overwritten unless you give --force)`, { details: { path: file } })
      throw err
    })
    io.stderr.write(`wrote secret key to ${file}; the public key is:\n`)
    io.stdout.write(publicKey + '\n')
  }
}
