/**
 * SHA-256 of file contents, as the index records it (lowercase hex).
 *
 * @module
 */

/**
 * Lowercase hex SHA-256 of `data`.
 *
 * @param data the bytes
 */
export async function sha256Hex(data: Uint8Array): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", data as BufferSource));
  return Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
}
