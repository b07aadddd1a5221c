/**
 * Joining a stream's chunks into one buffer: small bodies (an index, a marker, a control file)
 * are read whole, while file bodies stream to disk (see `transfer.ts`).
 *
 * @module
 */

/** Reads `chunks` to the end and returns them joined, copied once into a buffer of the exact size. */
export async function collectChunks(chunks: AsyncIterable<Uint8Array>): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  let length = 0;
  for await (const chunk of chunks) {
    parts.push(chunk);
    length += chunk.length;
  }
  const out = new Uint8Array(length);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}
