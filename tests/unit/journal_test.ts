/**
 * The tombstone journal (js/ops/journal.ts) on the in-memory cache, through the real WASM build: what
 * a reader sees, how a push or pull takes the journal, and what a crash can leave behind.
 */
import { DirtyRecorder, journalLine, sidecarFoldJournal } from "../../js/core/mod.ts";
import { markDirty } from "../../js/ops/dirty.ts";
import {
  appendTombstone as appendNow,
  exclusive,
  readSidecar,
  rewriteSidecar,
} from "../../js/ops/journal.ts";
import { JOURNAL, JOURNAL_TAKEN, LOCAL_INDEX, SIDECAR } from "../../js/exec/context.ts";
import type { SyncContext } from "../../js/exec/context.ts";
import { SyncError } from "../../js/core/errors.ts";
import { pull } from "../../js/ops/pull.ts";
import { push } from "../../js/ops/push.ts";
import { MemoryCache } from "../harness/memory_cache.ts";
import { MemoryClient } from "../harness/memory_client.ts";
import { assert, assertEquals, assertRejects } from "../harness/assert.ts";

const decoder = new TextDecoder();

/** A journal append as `markDirty` makes it: in the cache's queue. */
function appendTombstone(cache: MemoryCache, tombstone: string): Promise<void> {
  return exclusive(cache, () => appendNow(cache, tombstone));
}

/** The sidecar after `markDirty` of each path in turn, from `sidecar`. */
function markedSidecar(sidecar: Uint8Array | undefined, ...paths: string[]): Uint8Array {
  using recorder = new DirtyRecorder();
  for (const path of paths) sidecar = recorder.record(sidecar, path);
  return sidecar!;
}

/** The tombstones a sidecar's bytes record. */
function tombstones(bytes: Uint8Array | undefined): string[] {
  if (bytes === undefined) return [];
  return JSON.parse(decoder.decode(bytes)).s3syncTombstones ?? [];
}

Deno.test("a reader sees the journalled tombstones folded into the sidecar", async () => {
  const cache = new MemoryCache();
  await cache.writeAtomic(SIDECAR, markedSidecar(undefined, "ns/a"));
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

Deno.test("a rewrite folds the journal in once: taken with the write, never read again", async () => {
  const cache = new MemoryCache();
  await appendTombstone(cache, "ns/a");
  const written = await rewriteSidecar(cache, (now) => now);
  assertEquals(tombstones(written), ["ns/a"]);
  assertEquals(await cache.readFile(JOURNAL), null);
  assertEquals(await cache.readFile(JOURNAL_TAKEN), null);
  // Later appends start a new journal.
  await appendTombstone(cache, "ns/b");
  assertEquals(tombstones(await cache.readFile(SIDECAR) ?? undefined), ["ns/a"]);
  assertEquals(tombstones(await readSidecar(cache)), ["ns/a", "ns/b"]);
});

Deno.test("lines another process appends after the read go back to the journal", async () => {
  const cache = new MemoryCache();
  await appendTombstone(cache, "ns/a");
  // Straight to the cache, past this process's queue, while the run decides.
  const written = await rewriteSidecar(cache, (now) => {
    void cache.append(JOURNAL, journalLine("ns/late"));
    return now;
  });
  assertEquals(tombstones(written), ["ns/a"]);
  assertEquals(await cache.readFile(JOURNAL_TAKEN), null);
  assertEquals(tombstones(sidecarFoldJournal(undefined, (await cache.readFile(JOURNAL))!)), [
    "ns/late",
  ]);
  assertEquals(tombstones(await readSidecar(cache)), ["ns/a", "ns/late"]);
});

Deno.test("a run that writes no sidecar never moves the journal", async () => {
  const cache = new MoveRecording();
  await appendTombstone(cache, "ns/a");
  const before = await cache.readFile(JOURNAL);
  let seen: Uint8Array | undefined;
  assertEquals(await rewriteSidecar(cache, (now) => (seen = now, undefined)), undefined);
  assertEquals(tombstones(seen), ["ns/a"], "the decision saw the journal folded in");
  // Nor does a decision that throws.
  await assertRejects(() =>
    rewriteSidecar(cache, () => {
      throw new Error("machine out of order");
    })
  );
  assertEquals(cache.moves, [], "nothing was moved");
  assertEquals(await cache.readFile(JOURNAL), before);
  assertEquals(await cache.readFile(SIDECAR), null);
  assertEquals(await cache.readFile(JOURNAL_TAKEN), null);
});

Deno.test("a line torn at the read goes back whole once its writer finished it", async () => {
  const cache = new MemoryCache();
  await appendTombstone(cache, "ns/a");
  // Another process is mid-append when the run reads: the line is cut after `"ns/to`.
  const line = journalLine("ns/torn");
  await cache.append(JOURNAL, line.subarray(0, 6));
  const written = await rewriteSidecar(cache, (now) => {
    void cache.append(JOURNAL, line.subarray(6));
    return now;
  });
  assertEquals(tombstones(written), ["ns/a"], "a torn line is not folded");
  assertEquals(await cache.readFile(JOURNAL_TAKEN), null);
  assertEquals(tombstones(await readSidecar(cache)), ["ns/a", "ns/torn"]);
});

Deno.test("a journal another process took, replaced or removed meanwhile fails the run, writing nothing", async () => {
  for (
    const [what, meddle] of [
      ["replaced", (cache: MemoryCache) => {
        void cache.remove(JOURNAL);
        void cache.append(JOURNAL, journalLine("ns/fresh"));
      }],
      ["removed", (cache: MemoryCache) => void cache.remove(JOURNAL)],
    ] as const
  ) {
    const cache = new MemoryCache();
    await appendTombstone(cache, "ns/a");
    const error = await assertRejects(
      () => rewriteSidecar(cache, (now) => (meddle(cache), now)),
      SyncError,
    );
    assertEquals((error as SyncError).code, "lock-lost", what);
    assertEquals(await cache.readFile(SIDECAR), null, `${what}: no sidecar written`);
    assertEquals(await cache.readFile(JOURNAL_TAKEN), null, what);
    const left = tombstones(await readSidecar(cache));
    assertEquals(left, what === "replaced" ? ["ns/fresh"] : [], `${what}: the journal as found`);
  }
});

Deno.test("a write that fails after a late append gives every line back", async () => {
  const cache = new SidecarUnwritable();
  await appendTombstone(cache, "ns/a");
  await assertRejects(() =>
    rewriteSidecar(cache, (now) => {
      void cache.append(JOURNAL, journalLine("ns/late"));
      return now;
    })
  );
  assertEquals(await cache.readFile(JOURNAL_TAKEN), null);
  assertEquals(tombstones(await readSidecar(cache)), ["ns/a", "ns/late"]);
});

Deno.test("a taken journal left by a crash is removed unread at the next rewrite", async () => {
  const cache = new MemoryCache();
  // Its tombstone may have been consumed by the push that crashed: folding it again would
  // revive used-up delete evidence.
  await cache.append(JOURNAL_TAKEN, new TextEncoder().encode('\n"ns/consumed"\n'));
  await appendTombstone(cache, "ns/new");
  assertEquals(tombstones(await readSidecar(cache)), ["ns/new"]);
  assertEquals(tombstones(await rewriteSidecar(cache, (now) => now)), ["ns/new"]);
  assertEquals(await cache.readFile(JOURNAL_TAKEN), null);
});

Deno.test("no journal: a rewrite creates none and readers see the sidecar as it is", async () => {
  const cache = new MemoryCache();
  assertEquals(await readSidecar(cache), undefined);
  const bytes = markedSidecar(undefined, "ns/a");
  assertEquals(await rewriteSidecar(cache, () => bytes), bytes);
  assertEquals(await cache.readFile(JOURNAL), null);
  assertEquals(await cache.readFile(JOURNAL_TAKEN), null);
  assertEquals(await readSidecar(cache), bytes);
});

/**
 * A cache that starts a `markDirty` (without waiting for it) when a run, having written its local
 * index, reads the sidecar for its last rewrite: swamp core's call arriving mid-rewrite.
 */
class MarkedDuringRewrite extends MemoryCache {
  marked: Promise<unknown> | undefined;
  #armed = false;
  override writeAtomic(path: string, data: Uint8Array) {
    if (path === LOCAL_INDEX) this.#armed = true;
    return super.writeAtomic(path, data);
  }
  override readFile(path: string): Promise<Uint8Array | null> {
    if (this.#armed && path === SIDECAR) {
      this.#armed = false;
      this.marked = markDirty(this, undefined, "data/deleted-meanwhile.json", { flush: false });
    }
    return super.readFile(path);
  }
}

Deno.test("a markDirty during a push's closing rewrite waits for it and is kept", async () => {
  const client = new MemoryClient();
  const cache = new MarkedDuringRewrite().seed({ "data/a.json": "{}" });
  let clock = Date.parse("2026-12-01T00:00:00.000Z");
  const now = () => new Date(clock += 60_000);
  await push({ store: client, cache, lock: false, now });
  await cache.marked;
  const firstRecord = JSON.parse(decoder.decode((await cache.readFile(SIDECAR))!));
  await cache.writeAtomic("data/b.json", new TextEncoder().encode("{}"));
  await push({ store: client, cache, lock: false, now });
  assert(cache.marked !== undefined, "the markDirty ran during the push");
  await cache.marked;
  const sidecar = JSON.parse(decoder.decode((await cache.readFile(SIDECAR))!));
  // On top of the second push's record (not the first's, which it would have read had it run
  // before the push's write), with its own tombstone.
  assert(sidecar.lastVerifiedAt > firstRecord.lastVerifiedAt, JSON.stringify(sidecar));
  assertEquals(sidecar.s3syncTombstones, ["data/deleted-meanwhile.json"]);
  assertEquals(sidecar.localDirty, true);
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

Deno.test("a tombstone meant for the journal is written to the sidecar when a sync settled it first", async () => {
  // The service chooses the journal from its last stat of a sidecar that asks for a walk of
  // everything; a push's closing rewrite queued before the call makes the sidecar clean again,
  // and a line only in the journal would be missed by the extension, which reads the sidecar.
  const cache = new MemoryCache();
  const walking = markedSidecar(undefined, ...Array.from({ length: 201 }, (_, i) => `ns/p-${i}`));
  const stat = await cache.writeAtomic(SIDECAR, walking);
  const settled = rewriteSidecar(cache, () => new TextEncoder().encode(SETTLED));
  const marked = markDirty(cache, "ns", "ns/x", { flush: false, journalWhile: stat });
  await Promise.all([settled, marked]);
  assertEquals(await cache.readFile(JOURNAL), null, "nothing journalled");
  const sidecar = JSON.parse(decoder.decode((await cache.readFile(SIDECAR))!));
  assertEquals(sidecar.dirtyPaths, ["ns/x"]);
  assertEquals(sidecar.s3syncTombstones, ["ns/x"]);
  // While the sidecar is as the caller left it, the tombstone is one line in the journal.
  const now = (await cache.stat(SIDECAR))!;
  await markDirty(cache, "ns", "ns/y", { flush: false, journalWhile: now });
  assertEquals(tombstones(sidecarFoldJournal(undefined, (await cache.readFile(JOURNAL))!)), [
    "ns/y",
  ]);
});

/** A clean, verified sidecar, as a sync's closing rewrite leaves it. */
const SETTLED = JSON.stringify({
  version: 2,
  remoteIndexETag: "e",
  lastVerifiedAt: "2026-12-01T00:00:00.000Z",
  localDirty: false,
  dirtyPaths: [],
  bulkInvalidated: false,
  lazyPullActive: false,
});
