// FORMAT.md §1.4 and §12.2: which 32-byte strings a reader takes as an
// ed25519 public key. Every key a reader reads (an address, a trust
// document's role lists, a key argument) passes here first.
//
// A key is 32 bytes: the little-endian y coordinate in bits 0…254 and the
// sign of x in bit 255 (RFC 8032 §5.1.2). Two kinds of strings are refused:
//
//   non-canonical   y ≥ p = 2^255 − 19: a second spelling of the point y − p,
//                   which verifiers decode differently (RFC 8032 refuses it,
//                   ZIP-215 accepts it)
//   small order     the eight points of order 1, 2, 4 or 8 (y ∈ {1, p − 1, 0,
//                   and the two order-8 y values}, either sign). Under such a
//                   key the verification equation [S]B = R + [k]A holds for
//                   signatures anyone can make (S = 0, R = −[k]A is again a
//                   small-order point), in OpenSSL and @noble alike: `01…00`
//                   "signs" every message. Two spellings of one such point
//                   would also count twice towards a threshold.
//
// Keys made by a key generator are never either (a uniformly random scalar
// times the base point has prime order), so this refuses nothing real.

// y of the small-order points, as 64 hex of the 32-byte little-endian y (top bit clear)
const SMALL_ORDER_Y = new Set([
  '0100000000000000000000000000000000000000000000000000000000000000', // the identity (order 1)
  'ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f', // y = p − 1 (order 2)
  '0000000000000000000000000000000000000000000000000000000000000000', // y = 0 (order 4)
  '26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05', // order 8
  'c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a' // order 8
])
const P_HIGH = 'ff'.repeat(30) + '7f' // bytes 1…31 of p (= 0xed, 0xff × 30, 0x7f)

/**
 * Why a 64-lowercase-hex string is not an ed25519 public key a reader
 * accepts, or null when it is one.
 * @param {string} hex 64 lowercase hex digits (checked by the caller)
 * @returns {string|null}
 */
export function weakKeyReason (hex) {
  const top = parseInt(hex.slice(62), 16) & 0x7f
  const y = hex.slice(0, 62) + top.toString(16).padStart(2, '0')
  if (y.slice(2) === P_HIGH && parseInt(y.slice(0, 2), 16) >= 0xed) return 'is not canonical (y ≥ 2^255 − 19)'
  if (SMALL_ORDER_Y.has(y)) return 'is a point of small order, under which anyone can sign'
  return null
}
