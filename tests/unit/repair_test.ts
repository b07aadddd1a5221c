/**
 * Repair against an in-memory cache and bucket: every file operation goes through the
 * `CacheStore` interface (none reaches the disk behind it), with the first seed's mixed layout
 * fixed and nothing lost.
 */
import type { SyncContext } from "../../js/exec/context.ts";
import { sha256Hex } from "../../js/io/hash.ts";
import { repair } from "../../js/ops/repair.ts";
import { assert, assertEquals } from "../harness/assert.ts";
import { MemoryCache } from "../harness/memory_cache.ts";
import { MemoryClient } from "../harness/memory_client.ts";

const encoder = new TextEncoder();
const SAME = "data/aws/ec2/vpc/m-0/state/0/raw";
const DIFFERS = "logs/run-5.log";
const REMOTE_ONLY = "outputs/aws/s3/bucket/o-3/result/1/raw";
const LOCAL_ONLY = "workflow-runs/wr-0/workflow-run-2.yaml";

/** A bucket holding `ns/`'s three files and their index, as the extension writes them. */
async function bucket(): Promise<MemoryClient> {
  const client = new MemoryClient();
  const entries: Record<string, unknown> = {};
  for (const rel of [SAME, DIFFERS, REMOTE_ONLY]) {
    const body = encoder.encode(`remote ${rel}\n`);
    await client.putObject(`ns/${rel}`, body);
    // The extension records the hash on every upload: what proves a local copy redundant.
    entries[rel] = {
      key: rel,
      size: body.length,
      lastModified: "2026-08-01T12:00:00.000Z",
      sha256: await sha256Hex(body),
    };
  }
  await client.putObject(
    "ns/.datastore-index.json",
    encoder.encode(JSON.stringify({ version: 1, lastPulled: "2026-08-07T10:00:00.000Z", entries })),
  );
  return client;
}

function bucketSnapshot(client: MemoryClient): string[] {
  return [...client.objects.entries()].map(([k, o]) => `${k} ${o.etag}`).sort();
}

Deno.test("repair on an in-memory cache: root-level copies moved, removed or backed up, the namespace hydrated, the bucket untouched", async () => {
  const client = await bucket();
  const cache = new MemoryCache().seed({
    [SAME]: `remote ${SAME}\n`,
    [`ns/${SAME}`]: `remote ${SAME}\n`,
    [DIFFERS]: "edited here\n",
    [LOCAL_ONLY]: "only here\n",
    "ns/logs/fresh.log": "new under ns\n",
  });
  const ctx: SyncContext = { store: client, cache, namespace: "ns", lock: false };
  const before = cache.snapshot();
  const bucketBefore = bucketSnapshot(client);

  const dry = await repair(ctx, false);
  assertEquals(dry.applied, false);
  assertEquals(dry.plan.summary, {
    moveIntoNamespace: 1,
    removeRedundant: 1,
    backup: 1,
    unproven: 0,
  });
  assertEquals(cache.snapshot(), before, "a dry repair changes nothing");

  const report = await repair(ctx, true);
  assertEquals(report.applied, true);
  assertEquals(report.refused, []);
  assertEquals(report.leftTrees, []);
  assertEquals(report.hydration?.failures, []);
  const after = cache.snapshot();
  const backup = Object.keys(after).filter((p) => p.startsWith(".s3sync-repair/backup/"));
  assertEquals(backup.map((p) => after[p]), ["edited here\n"], "the differing copy is kept");
  assertEquals(after[`ns/${LOCAL_ONLY}`], "only here\n", "the only copy moved into ns/");
  assertEquals(after[`ns/${SAME}`], `remote ${SAME}\n`);
  assertEquals(after[`ns/${DIFFERS}`], `remote ${DIFFERS}\n`);
  assertEquals(after[`ns/${REMOTE_ONLY}`], `remote ${REMOTE_ONLY}\n`);
  assertEquals(after["ns/logs/fresh.log"], "new under ns\n");
  const rootLevel = Object.keys(after).filter((p) =>
    !p.startsWith("ns/") && !p.startsWith(".s3sync-repair/") && !p.startsWith(".datastore")
  );
  assertEquals(rootLevel, [], "no data left at the root");
  for (const tree of ["data", "logs", "workflow-runs"]) {
    assert(!cache.folders.has(tree), `${tree}/ was not removed`);
  }
  assertEquals(bucketSnapshot(client), bucketBefore, "repair never writes the bucket");
});
