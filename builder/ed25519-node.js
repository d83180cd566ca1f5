// The publisher signs with the reader's Node implementation (node:crypto).
export { generateKeyPair, publicKeyOf, sign } from 'rotree-client/crypto'
