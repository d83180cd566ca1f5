// X25519 (RFC 7748) from @noble/curves' Montgomery ladder alone. Importing
// `x25519` from @noble/curves/ed25519.js would also bring the Edwards curve
// (its fixed-base tables speed up getPublicKey), ~12 KB of the browser
// bundle for one scalar multiplication per keyring open.
import { montgomery } from '@noble/curves/abstract/montgomery.js'
import { pow } from '@noble/curves/abstract/modular.js'

const P = 2n ** 255n - 19n

export const x25519 = montgomery({
  P,
  type: 'x25519',
  powPminus2: x => pow(x, P - 2n, P),
  adjustScalarBytes: b => { b[0] &= 248; b[31] &= 127; b[31] |= 64; return b }
})
