/**
 * The tombstone journal (js/journal.ts) on the in-memory cache, through the real WASM build: what
 * a reader sees, how a push or pull takes the journal, and what a crash can leave behind.
 */
import { sidecarFoldJournal, sidecarMarkDirty } from "../../js/core.ts";
import {
  appendTombstone,
  dropTakenJournal,
  giveBackJournal,
  readSidecar,
  takeJournal,
} from "../../js/journal.ts";
import { JOURNAL, JOURNAL_TAKEN, SIDECAR } from "../../js/context.ts";
import type { SyncContext } from "../../js/context.ts";
import { SyncError } from "../../js/errors.ts";
import { pull } from "../../js/pull.ts";
import { push } from "../../js/push.ts";
import { MemoryCache } from "../harness/memory_cache.ts";
import { MemoryClient } from "../harness/memory_client.ts";
import { assert, assertEquals, assertRejects } from "../harness/assert.ts";

const decoder = new TextDecoder();

/** The tombstones a sidecar's bytes record. */
function tombstones(bytes: Uint8Array | undefined): string[] {
  if (bytes === undefined) return [];
  return JSON.parse(decoder.decode(bytes)).s3syncTombstones ?? [];
}

Deno.test("a reader sees the journalled tombstones folded into the sidecar", async () => {
  const cache = new MemoryCache();
  await cache.writeAtomic(SIDECAR, sidecarMarkDirty(undefined, "ns/a"));
  await appendTombstone(cache, "ns/b");
  await appendTombstone(cache, "ns/c/d");
  assertEquals(tombstones(await readSidecar(cache)), ["ns/a", "ns/b", "ns/c/d"]);
  // The file itself is untouched by the appends.
  assertEquals(tombstones((await cache.readFile(SIDECAR))!), ["ns/a"]);
});

Deno.test("appends that race one another all land", async () => {
  const cache = new MemoryCache();
  const names = Array.from({ length: 50 }, (_, i) => `ns/f-${i}`);
  await Promise.all(names.map((n) => appendTombstone(cache, n)));
  assertEquals(tombstones(await readSidecar(cache)).sort(), names.sort());
});

Deno.test("a taken journal is folded once: dropped after the write, never read again", async () => {
  const cache = new MemoryCache();
  await appendTombstone(cache, "ns/a");
  const taken = await takeJournal(cache);
  assert(taken.moved);
  assertEquals(await cache.readFile(JOURNAL), null);
  // Appends while the sidecar is being written start a new journal.
  await appendTombstone(cache, "ns/b");
  const written = sidecarFoldJournal(undefined, taken.bytes)!;
  await cache.writeAtomic(SIDECAR, written);
  await dropTakenJournal(cache, taken);
  assertEquals(await cache.readFile(JOURNAL_TAKEN), null);
  assertEquals(tombstones(await readSidecar(cache)), ["ns/a", "ns/b"]);
});

Deno.test("a taken journal is given back when the sidecar could not be written", async () => {
  const cache = new MemoryCache();
  await appendTombstone(cache, "ns/a");
  const taken = await takeJournal(cache);
  await appendTombstone(cache, "ns/b");
  await giveBackJournal(cache, taken);
  assertEquals(await cache.readFile(JOURNAL_TAKEN), null);
  assertEquals(tombstones(await readSidecar(cache)).sort(), ["ns/a", "ns/b"]);
});

Deno.test("a taken journal left by a crash is removed unread at the next take", async () => {
  const cache = new MemoryCache();
  // Its tombstone may have been consumed by the push that crashed: folding it again would
  // revive used-up delete evidence.
  await cache.append(JOURNAL_TAKEN, new TextEncoder().encode('\n"ns/consumed"\n'));
  await appendTombstone(cache, "ns/new");
  assertEquals(tombstones(await readSidecar(cache)), ["ns/new"]);
  const taken = await takeJournal(cache);
  assertEquals(tombstones(sidecarFoldJournal(undefined, taken.bytes)), ["ns/new"]);
});

Deno.test("no journal: a take moves nothing and readers see the sidecar as it is", async () => {
  const cache = new MemoryCache();
  assertEquals(await readSidecar(cache), undefined);
  const taken = await takeJournal(cache);
  assertEquals(taken.moved, false);
  assertEquals(taken.bytes.length, 0);
  await giveBackJournal(cache, taken);
  assertEquals(await cache.readFile(JOURNAL), null);
});

/** A cache whose sidecar cannot be written (a full disk at the wrong moment). */
class SidecarUnwritable extends MemoryCache {
  override writeAtomic(path: string, data: Uint8Array) {
    if (path === SIDECAR) {
      return Promise.reject(new SyncError("cache-not-writable", `cannot write ${path}: disk full`));
    }
    return super.writeAtomic(path, data);
  }
}

Deno.test("a push whose sidecar write fails gives the taken journal back", async () => {
  const client = new MemoryClient();
  const cache = new SidecarUnwritable().seed({ "data/a.json": "{}" });
  await appendTombstone(cache, "data/gone.json");
  const ctx: SyncContext = { store: client, cache, lock: false };
  const error = await assertRejects(() => push(ctx), SyncError);
  assertEquals((error as SyncError).code, "cache-not-writable");
  assert(client.objects.has("data/a.json"), "the push itself landed");
  assertEquals(await cache.readFile(JOURNAL_TAKEN), null);
  assertEquals(tombstones(await readSidecar(cache)), ["data/gone.json"]);
});

/** A cache that records every move, to see whether a run took the journal. */
class MoveRecording extends MemoryCache {
  readonly moves: string[] = [];
  override moveNew(from: string, to: string): Promise<boolean> {
    this.moves.push(from);
    return super.moveNew(from, to);
  }
}

Deno.test("a pull that writes no sidecar (scoped) never takes the journal", async () => {
  // A pull holding the journal while a push consumed tombstones would give them back after.
  const client = new MemoryClient();
  const seedCache = new MemoryCache().seed({ "data/a.json": "{}", "logs/b.log": "b" });
  await push({ store: client, cache: seedCache, lock: false });
  const cache = new MoveRecording();
  await pull({ store: client, cache, lock: false });
  await appendTombstone(cache, "data/gone.json");
  const before = await cache.readFile(JOURNAL);
  cache.moves.length = 0;
  await pull({ store: client, cache, lock: false }, { scope: ["logs"] });
  assert(!cache.moves.includes(JOURNAL), `moved: ${cache.moves}`);
  assertEquals(await cache.readFile(JOURNAL), before);
  // Nor does a no-op pull (it writes nothing); the push takes it and writes the sidecar.
  await pull({ store: client, cache, lock: false });
  assertEquals(await cache.readFile(JOURNAL), before);
  await push({ store: client, cache, lock: false });
  assert(cache.moves.includes(JOURNAL));
  assertEquals(await cache.readFile(JOURNAL), null);
  assertEquals(await cache.readFile(JOURNAL_TAKEN), null);
});
