/**
 * SHA-256 of file contents, as the index records it (lowercase hex).
 *
 * @module
 */
import { createHash } from "node:crypto";

/**
 * Lowercase hex SHA-256 of `data`.
 *
 * @param data the bytes
 */
export async function sha256Hex(data: Uint8Array): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", data as BufferSource));
  return Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * SHA-256 and length of bytes that arrive in chunks (a file read as a stream): memory stays
 * one chunk whatever the size.
 *
 * @param chunks the bytes
 */
export async function sha256OfChunks(
  chunks: AsyncIterable<Uint8Array>,
): Promise<{ sha256: string; size: number }> {
  const digest = createHash("sha256");
  let size = 0;
  for await (const chunk of chunks) {
    digest.update(chunk);
    size += chunk.length;
  }
  return { sha256: digest.digest("hex"), size };
}
