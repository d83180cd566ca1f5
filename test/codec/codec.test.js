// FORMAT.md §12.6: both codec implementations (Node's zlib, the browser's
// DecompressionStream, which Node also has) decode exactly the recorded size
// and refuse bombs, junk after the stream, short and corrupt streams with
// ROTREE_BAD_FORMAT.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { deflateRawSync } from 'node:zlib'
import * as nodeCodec from 'rotree-client/codec'
// the browser's codec, tested in Node beside node:zlib's (a unit test of that file)
import * as webCodec from '../../client-js/src/format/codec-web.js'

const bad = err => { assert.equal(err.code, 'ROTREE_BAD_FORMAT', err.message); return true }

// a blob of 84,000 bytes and one of 4,200 (Node inflates the first on the
// thread pool, the second on the calling thread)
for (const [size, repeat] of [['large', 2000], ['small', 100]]) {
  const text = new TextEncoder().encode('verified bytes, compressed when it pays. '.repeat(repeat))
  const packed = new Uint8Array(deflateRawSync(text))
  for (const [name, c] of [['node', nodeCodec], ['web', webCodec]]) {
    test(`${name}, ${size} blob: round trip, and 'none' hands the bytes back`, async () => {
      assert.deepEqual(await c.decodeBlob(packed, 'deflate-raw', text.length), text)
      assert.equal(await c.decodeBlob(text, 'none', text.length), text)
    })

    test(`${name}, ${size} blob: a bomb is cut off at the recorded size`, async () => {
      const bomb = new Uint8Array(deflateRawSync(new Uint8Array(64 << 20)))
      assert.ok(bomb.length < 128 << 10)
      await assert.rejects(c.decodeBlob(bomb, 'deflate-raw', 1 << 20), bad)
      await assert.rejects(c.decodeBlob(packed, 'deflate-raw', text.length - 1), bad)
    })

    test(`${name}, ${size} blob: short output, junk after the stream, a corrupt or truncated stream, an unknown codec`, async () => {
      await assert.rejects(c.decodeBlob(packed, 'deflate-raw', text.length + 1), bad)
      // Junk after the stream: the Compression Streams standard makes it an error, and
      // Chromium throws; Node's own DecompressionStream (where this test runs the web
      // codec) ignores it, so only the Node codec is held to it here.
      const junk = new Uint8Array([...packed, 1, 2, 3])
      if (name === 'node') await assert.rejects(c.decodeBlob(junk, 'deflate-raw', text.length), bad)
      const corrupt = packed.slice(); corrupt[0] ^= 0xff; corrupt[5] ^= 0x55
      await assert.rejects(c.decodeBlob(corrupt, 'deflate-raw', text.length), bad)
      await assert.rejects(c.decodeBlob(packed.subarray(0, packed.length >> 1), 'deflate-raw', text.length), bad)
      await assert.rejects(c.decodeBlob(packed, 'zstd', text.length), bad)
    })
  }
}

test('packBlob: a large blob whose first 8 KiB do not compress is stored raw without deflating the rest; smaller ones are tried whole', async () => {
  const { packBlob, decodeBlobSync, SAMPLE, SAMPLE_FROM } = nodeCodec
  const { randomBytes } = await import('node:crypto')
  const noisyStart = Buffer.concat([randomBytes(SAMPLE), Buffer.alloc(SAMPLE_FROM * 2)]) // compressible overall
  assert.equal(packBlob(noisyStart).codec, 'none', 'the sample decides')
  const small = Buffer.concat([randomBytes(SAMPLE), Buffer.alloc(SAMPLE_FROM - SAMPLE - 1)])
  assert.equal(packBlob(small).codec, 'deflate-raw', 'below SAMPLE_FROM the whole blob is tried')
  const text = Buffer.from('the same line again and again\n'.repeat(4000))
  const p = packBlob(text)
  assert.equal(p.codec, 'deflate-raw')
  assert.deepEqual(Buffer.from(decodeBlobSync(p.stored, p.codec, text.length)), text)
  assert.equal(packBlob(randomBytes(SAMPLE_FROM * 4)).codec, 'none')
})
