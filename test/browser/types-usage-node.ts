// Checked by `tsc --noEmit --module nodenext` (test/browser/types.test.js), never
// run: under Node's conditions the same package types createReadStream() as a
// stream.Readable, without needing @types/node.
import { openTree, type Tree, type NodeReadable } from 'rotree-client'

export async function usage (key: string, sink: { write (b: Uint8Array): boolean, end (): void }): Promise<void> {
  const tree: Tree = await openTree(`http://127.0.0.1:8080/#${key}`, { stateDir: null })
  const s: NodeReadable = tree.createReadStream('/big.iso', { start: 0, end: 99 })
  s.on('error', (err: Error) => { void err.message })
  s.pipe(sink)
  for await (const chunk of tree.createReadStream('/a.txt')) { const n: number = chunk.byteLength; void n }
  // @ts-expect-error: a Node stream is not a WHATWG ReadableStream
  tree.createReadStream('/a.txt').getReader()
  tree.close()
}
