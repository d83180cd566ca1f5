// A keyring opened with a post-quantum hybrid identity (AGE-SECRET-KEY-PQ-1…):
// age-encryption's Decrypter, loaded only when such an identity is used.
export { Decrypter } from 'age-encryption'
