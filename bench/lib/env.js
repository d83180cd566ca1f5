// Imported first by the bench's entry points, for its side effect: the
// commands a figure times run as on a user's machine, not with this one's
// NODE_EXTRA_CA_CERTS, which names the whole system certificate bundle and
// makes every Node process parse it at start-up (`node -e 0`: 0.12-0.13 s
// with it, 0.07-0.08 s without, 2026-11-27). `rotree build` and `rotree get`
// are timed from their start, so it charged each of them ~50 ms. A figure
// over TLS still trusts its own certificate: bench/lib/clients.js sets
// NODE_EXTRA_CA_CERTS to it for the commands that need it.
delete process.env.NODE_EXTRA_CA_CERTS
