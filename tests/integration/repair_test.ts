/**
 * Doctor and repair against a real S3 server: the first seed's broken cache repaired with
 * nothing lost and the bucket untouched; push afterwards uploads the local work and deletes
 * nothing. (Repair killed mid-run: tests/reliability/repair_kill_test.ts.)
 */
import { assert, assertEquals } from "../harness/assert.ts";
import { commonFlags, runCliJson } from "../harness/cli.ts";
import {
  bucketState,
  remoteIndexKeys,
  seedBucketWithIndex,
  sha256Hex,
  treeHashes,
  writeCacheFiles,
} from "../harness/datastore.ts";
import { contentOf, datastoreRels } from "../harness/seed.ts";
import { startServer } from "../harness/servers.ts";

const DATA_TREES = [
  "data",
  "outputs",
  "definitions-evaluated",
  "workflow-runs",
  "workflows-evaluated",
  "logs",
];

/**
 * The first seed's cache: root-level copies of most remote files (some stale), root-only local
 * work, and new files under ns/. Returns the content hashes of every local-only file.
 */
async function brokenCache(
  cache: string,
  live: string[],
  extraLocal: number,
  fresh: number,
): Promise<Set<string>> {
  const copied = live.slice(0, Math.floor(live.length * 0.9));
  const stale = new Set(copied.filter((_, i) => i % 17 === 0));
  await writeCacheFiles(cache, copied.map((rel) => [rel, contentOf(rel, stale.has(rel) ? 1 : 0)]));
  const localOnly = datastoreRels(extraLocal, "local-");
  await writeCacheFiles(cache, localOnly.map((rel) => [rel, contentOf(rel)]));
  const freshRels = datastoreRels(fresh, "fresh-");
  await writeCacheFiles(cache, freshRels.map((rel) => [`ns/${rel}`, contentOf(rel)]));
  const before = await treeHashes(cache);
  return new Set(before.values());
}

Deno.test("seed 1: doctor finds the mixed layout, repair --apply fixes it with nothing lost, push then deletes nothing", async () => {
  const server = await startServer("s3s-fs");
  const store = await server.bucket("repair-seed", { prefix: "swamp" });
  const cache = await Deno.makeTempDir({ prefix: "s3sync-repair-" });
  const flags = commonFlags(server, "repair-seed", cache, { prefix: "swamp", namespace: "ns" });
  try {
    const live = datastoreRels(7431);
    await seedBucketWithIndex(store, live, "ns", 0, { sha256: true });
    const localHashes = await brokenCache(cache, live, 100, 348);
    const bucketBefore = await bucketState(store);

    const doc = await runCliJson(["doctor", ...flags]);
    assertEquals(doc.code, 3, doc.stderr);
    const problems = doc.json.problems as { code: string; message: string }[];
    assert(problems.some((p) => p.code === "mixed-layout"), JSON.stringify(problems));
    assert(
      problems.every((p) => !p.message.includes("namespace migrate")),
      "never recommends a dead end",
    );

    const treeBefore = await treeHashes(cache);
    const dry = await runCliJson(["repair", ...flags]);
    assertEquals(dry.code, 0, dry.stderr);
    assertEquals(await treeHashes(cache), treeBefore, "a dry repair changes nothing");

    const applied = await runCliJson(["repair", ...flags, "--apply"]);
    assertEquals(applied.code, 0, applied.stderr);
    const rootEntries: string[] = [];
    for await (const e of Deno.readDir(cache)) rootEntries.push(e.name);
    for (const tree of DATA_TREES) {
      assert(!rootEntries.includes(tree), `${tree}/ is still at the root`);
    }

    // Nothing lost: every byte sequence the cache held is in ns/, the backup, or the bucket.
    const after = await treeHashes(cache);
    const kept = new Set(
      [...after.entries()].filter(([p]) =>
        p.startsWith("ns/") || p.startsWith(".s3sync-repair/backup/")
      ).map(([, h]) => h),
    );
    const remoteHashes = new Set(await Promise.all(live.map((rel) => sha256Hex(contentOf(rel)))));
    for (const hash of localHashes) {
      assert(kept.has(hash) || remoteHashes.has(hash), `lost content ${hash}`);
    }
    assertEquals(await bucketState(store), bucketBefore, "repair never writes the bucket");

    const healthy = await runCliJson(["doctor", ...flags]);
    assertEquals(healthy.code, 0, JSON.stringify(healthy.json));

    const pushed = await runCliJson(["push", ...flags, "--yes"]);
    assertEquals(pushed.code, 0, pushed.stderr);
    const summary = pushed.json.summary as { upload: number; delete: number };
    assertEquals(summary.delete, 0);
    assertEquals(summary.upload, 348 + 100);
    assertEquals((await remoteIndexKeys(store, "ns")).length, 7431 + 348 + 100);
  } finally {
    store.destroy();
    await server.stop();
    await Deno.remove(cache, { recursive: true });
  }
});
