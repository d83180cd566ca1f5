// What opening a private root needs (keyring.js: X25519, ChaCha20-Poly1305,
// HKDF from @noble; root-wrap.js), loaded in Node by the first private root a
// reader opens: a public tree's reader never loads them (docs/BENCHMARKS.md
// P3t, notes). The browser bundle takes ciphers-web.js, which imports them
// at once: a bundle holds them either way, and esbuild's wrapper for a lazy
// module costs bytes.
export const ciphers = async () => {
  const [{ openKeyring }, { unwrapRoot }] = await Promise.all([import('./keyring.js'), import('./root-wrap.js')])
  return { openKeyring, unwrapRoot }
}
