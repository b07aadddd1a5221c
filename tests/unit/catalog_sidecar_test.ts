/**
 * The catalog export remembers its hash in the sidecar, and `markDirty` records tombstones
 * there: the two rewrites of one cache must not drop each other's change. On the in-memory
 * cache and client, with the export paused between its re-read of the sidecar and its write.
 */
import { S3SyncService } from "../../js/extension/service.ts";
import { readSidecar } from "../../js/ops/journal.ts";
import { SIDECAR } from "../../js/exec/context.ts";
import { sha256Hex } from "../../js/io/hash.ts";
import { MemoryCache } from "../harness/memory_cache.ts";
import { MemoryClient } from "../harness/memory_client.ts";
import { assert, assertEquals } from "../harness/assert.ts";

Deno.test("a tombstone recorded while a catalog export rewrites the sidecar is kept beside the export's hash", async () => {
  const cache = new MemoryCache();
  const service = new S3SyncService(new MemoryClient(), cache.root, { cache });
  const rows = [{ name: "ours" }];

  // The export reads the sidecar twice: its hash check, then the copy it rewrites. Hold the
  // second read's answer until the tombstone has had every chance to land.
  const read = cache.readFile.bind(cache);
  let sidecarReads = 0;
  let release!: () => void;
  const gate = new Promise<void>((resolve) => release = resolve);
  let paused!: () => void;
  const pausedAt = new Promise<void>((resolve) => paused = resolve);
  cache.readFile = async (path: string) => {
    const bytes = await read(path);
    if (path === SIDECAR && ++sidecarReads === 2) {
      paused();
      await gate;
    }
    return bytes;
  };

  const exported = service.exportCatalog("prod", rows);
  await pausedAt;
  const marked = service.markDirty({ namespace: "prod", relPath: "prod/models/gone.yaml" });
  // Unqueued, the tombstone's rewrite finishes here and the export then writes over it.
  await Promise.race([marked, new Promise((resolve) => setTimeout(resolve, 100))]);
  release();
  await Promise.all([exported, marked]);

  const sidecar = await readSidecar(cache);
  assert(sidecar !== undefined, "the sidecar was written");
  const state = JSON.parse(new TextDecoder().decode(sidecar));
  assertEquals(state.s3syncTombstones ?? [], ["prod/models/gone.yaml"]);
  const body = new TextEncoder().encode(JSON.stringify(rows));
  assertEquals(state.lastCatalogHash, await sha256Hex(body));
});

Deno.test("a catalog export whose hash cannot be remembered is still exported, and says so", async () => {
  const cache = new MemoryCache();
  const client = new MemoryClient();
  const told: string[] = [];
  const service = new S3SyncService(client, cache.root, {
    cache,
    log: (line) => told.push(line),
  });
  cache.writeAtomic = () => Promise.reject(new Error("disk full"));
  await service.exportCatalog("prod", [{ name: "ours" }]);
  const body = new TextEncoder().encode(JSON.stringify([{ name: "ours" }]));
  assertEquals((await client.getObject("prod/.catalog-export.json")).data, body);
  assert(told.some((line) => line.includes("was not remembered")), told.join("\n"));
  assertEquals(await readSidecar(cache), undefined);
});
