/**
 * A writer that follows the extension's documented protocol (datastore-formats.md, "The
 * distributed lock"): take the layout's global lock key as swamp core does (`.locks/<ns>.lock`
 * for a namespaced repo) with a create-only write (taking over a lock whose
 * `LastModified + ttlMs` has passed), upload its files, read the index, add its entries, write
 * the index UNCONDITIONALLY, release the lock if it still holds its nonce. Written for this
 * project from that description; it is the peer our lock must interoperate with.
 *
 * @module
 */
import type { S3Store } from "../../js/io/s3.ts";
import { isNotFound } from "../../js/io/s3.ts";
import { withRetry } from "../../js/io/engine.ts";
import { contentOf } from "./seed.ts";

/** The extension retries its requests too (3 attempts on timeouts, 5xx, 429, transport). */
const retry = <T>(call: () => Promise<T>) =>
  withRetry(call, { attempts: 3, baseDelayMs: 100, factor: 3, jitter: 0.25 });

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * Pushes `rels` into namespace `ns` the extension's way.
 *
 * @param retryMs wait between lock attempts (the extension waits 1 s; tests may go faster)
 * @param thinkMs pause between reading and writing the index
 */
export async function extensionPush(
  store: S3Store,
  ns: string,
  rels: string[],
  retryMs = 1000,
  thinkMs = 0,
): Promise<void> {
  const nonce = crypto.randomUUID();
  const body = encoder.encode(JSON.stringify(
    {
      holder: "ext@test",
      hostname: "test",
      pid: 1,
      acquiredAt: new Date().toISOString(),
      ttlMs: 30_000,
      nonce,
    },
    null,
    2,
  ));
  const lockKey = `.locks/${ns}.lock`;
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (await retry(() => store.putObjectConditional(lockKey, body))) break;
    const head = await retry(() => store.headObject(lockKey));
    if (head.exists && head.lastModified && Date.now() - head.lastModified.getTime() > 30_000) {
      await store.deleteObject(lockKey);
      continue;
    }
    if (Date.now() > deadline) throw new Error("extension writer: lock wait timed out");
    await new Promise((r) => setTimeout(r, retryMs * (0.5 + Math.random())));
  }
  try {
    for (const rel of rels) await retry(() => store.putObject(`${ns}/${rel}`, contentOf(rel)));
    const key = `${ns}/.datastore-index.json`;
    let index: { version: number; lastPulled?: string; entries: Record<string, unknown> };
    try {
      index = JSON.parse(decoder.decode((await retry(() => store.getObject(key))).data));
    } catch (error) {
      if (!isNotFound(error)) throw error;
      index = { version: 1, entries: {} };
    }
    // A writer that takes a moment between reading and writing the index (a slow client, a
    // big index): the window in which an unlocked writer's publish is silently overwritten.
    if (thinkMs > 0) await new Promise((r) => setTimeout(r, thinkMs));
    for (const rel of rels) {
      index.entries[rel] = {
        key: rel,
        size: contentOf(rel).length,
        lastModified: new Date().toISOString(),
      };
    }
    await retry(() => store.putObject(key, encoder.encode(JSON.stringify(index))));
  } finally {
    const current = await store.getObject(lockKey).catch(() => null);
    if (current && JSON.parse(decoder.decode(current.data)).nonce === nonce) {
      await store.deleteObject(lockKey);
    }
  }
}
