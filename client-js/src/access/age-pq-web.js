// The browser build reads X25519 identities (AGE-SECRET-KEY-1…) only: age's
// post-quantum code (ML-KEM) would double the bundle for a reader that can
// use an X25519 identity, or the Node reader and the gateway.
import { UsageError } from '../errors.js'

export class Decrypter {
  constructor () {
    throw new UsageError('a post-quantum identity (AGE-SECRET-KEY-PQ-1…) is read by the Node reader and the gateway; in the browser, read with an X25519 identity (AGE-SECRET-KEY-1…)')
  }
}
