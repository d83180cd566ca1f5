// Preloaded (node --import) into a child that must make no network call:
// every way Node opens a connection or looks up a name throws instead, so a
// command that tries fails loudly (test/cli/verify-offline.test.js).
import net from 'node:net'
import tls from 'node:tls'
import http from 'node:http'
import https from 'node:https'
import dns from 'node:dns'

const refuse = what => function () { throw Object.assign(new Error(`no network in this process (${what})`), { code: 'ENETUNREACH' }) }
for (const [mod, names, what] of [[net, ['connect', 'createConnection'], 'net'], [tls, ['connect'], 'tls'], [http, ['request', 'get'], 'http'], [https, ['request', 'get'], 'https'], [dns, ['lookup', 'resolve'], 'dns']]) {
  for (const n of names) mod[n] = refuse(`${what}.${n}`)
}
net.Socket.prototype.connect = refuse('net.Socket.connect')
globalThis.fetch = refuse('fetch')
