// The package entry `rotree/gateway`: exports only, no code (docs/GATEWAY.md
// has the file-by-file map). gateway() is the middleware, createGatewayServer()
// the same under a bare node:http server, as `rotree gateway` runs it.
export { gateway, Gateway } from './gateway.js'
export { createGatewayServer, MAX_HEADER_BYTES } from './server.js'
export { openDiskCache, DiskCache } from './disk-cache.js'
export { statusOf } from './http-status.js'
export { SANDBOX_POLICY } from './sandbox.js'
