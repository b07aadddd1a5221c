/**
 * kill -9 of the CLI at seeded random points during pull and push: the re-run converges to the
 * state an uninterrupted run reaches, with nothing lost. (Repair's kill schedule lives in
 * tests/integration/repair_test.ts.) `RELIABILITY_SCALE=N` multiplies the kills.
 */
import { assert, assertEquals } from "../harness/assert.ts";
import { commonFlags, runCli, spawnCli } from "../harness/cli.ts";
import {
  bucketState,
  seedBucketWithIndex,
  treeHashes,
  writeCacheFiles,
} from "../harness/datastore.ts";
import { checkCacheMatchesRemote, checkIndexSound } from "../harness/invariants.ts";
import { SCALE } from "../harness/scale.ts";
import { contentOf, datastoreRels } from "../harness/seed.ts";
import { prng } from "../harness/prng.ts";
import { startServer } from "../harness/servers.ts";

async function killAfter(args: string[], delayMs: number): Promise<boolean> {
  const child = spawnCli(args);
  let finished = false;
  child.status.then(() => finished = true);
  await new Promise((r) => setTimeout(r, delayMs));
  const killed = !finished;
  if (killed) child.kill("SIGKILL");
  await child.status;
  await child.stdout.cancel();
  await child.stderr.cancel();
  return killed;
}

const copyTree = (from: string, to: string) =>
  new Deno.Command("cp", { args: ["-a", `${from}/.`, to] }).output();
const payloadOnly = (tree: Map<string, string>) =>
  new Map(
    [...tree].filter(([p]) =>
      p.startsWith("ns/") && !p.split("/").pop()!.startsWith(".s3sync-tmp-")
    ),
  );

Deno.test(`kill -9 during pull at ${15 * SCALE} seeded points: every re-run converges`, async () => {
  const server = await startServer("s3s-fs");
  const store = await server.bucket("crash-pull");
  try {
    const rels = datastoreRels(400);
    await seedBucketWithIndex(store, rels, "ns");
    const random = prng(4242);
    let kills = 0;
    for (let run = 0; run < 15 * SCALE; run++) {
      const cache = await Deno.makeTempDir({ prefix: `s3sync-crash-pull-${run}-` });
      const flags = commonFlags(server, "crash-pull", cache, { namespace: "ns" });
      const delay = Math.floor(250 + random() * 1500);
      if (await killAfter(["pull", ...flags, "--concurrency", "8"], delay)) kills++;
      await checkCacheMatchesRemote(cache, store, "ns", new Set());
      const rerun = await runCli(["pull", ...flags]);
      assertEquals(rerun.code, 0, `run ${run} (kill after ${delay} ms): ${rerun.stderr}`);
      assertEquals(
        await checkCacheMatchesRemote(cache, store, "ns", new Set()),
        rels.length,
        `run ${run}`,
      );
      await Deno.remove(cache, { recursive: true });
    }
    console.log(`pull: ${kills} kills landed mid-run`);
    assert(kills >= 10 * SCALE, `only ${kills} kills landed mid-run`);
  } finally {
    store.destroy();
    await server.stop();
  }
});

Deno.test(`kill -9 during push at ${15 * SCALE} seeded points: every re-run converges, nothing lost`, async () => {
  const server = await startServer("s3s-fs");
  const template = await Deno.makeTempDir({ prefix: "s3sync-crash-push-template-" });
  try {
    const rels = datastoreRels(150);
    const fresh = datastoreRels(300, "fresh-");
    const doomed = rels.slice(0, 10);
    // The template: a cache pulled from the seeded bucket, then new work and tombstoned deletes.
    const seedStore = await server.bucket("crash-push-template");
    await seedBucketWithIndex(seedStore, rels, "ns");
    assertEquals(
      (await runCli([
        "pull",
        ...commonFlags(server, "crash-push-template", template, { namespace: "ns" }),
      ])).code,
      0,
    );
    seedStore.destroy();
    await writeCacheFiles(template, fresh.map((rel) => [`ns/${rel}`, contentOf(rel)]));
    for (const rel of doomed) await Deno.remove(`${template}/ns/${rel}`);
    await runCli([
      "mark-deleted",
      ...commonFlags(server, "x", template, { namespace: "ns" }),
      ...doomed.map((r) => `ns/${r}`),
    ]);

    const random = prng(777);
    let kills = 0;
    let expected: string[] | undefined;
    for (let run = 0; run < 15 * SCALE; run++) {
      const bucket = `crash-push-${run}`;
      const store = await server.bucket(bucket);
      const cache = await Deno.makeTempDir({ prefix: `s3sync-crash-push-${run}-` });
      try {
        // The same objects and index bytes as the template's bucket, so the same index ETag the
        // template's sidecar recorded.
        await seedBucketWithIndex(store, rels, "ns");
        await copyTree(template, cache);
        // Killed holders of the lock are covered by the lock tests; here the lock would only
        // add a 30 s stale wait to some re-runs.
        const flags = [
          ...commonFlags(server, bucket, cache, { namespace: "ns" }),
          "--yes",
          "--no-lock",
        ];
        // The CLI needs ~300 ms to start; the push itself ~1 s: aim inside it.
        const delay = Math.floor(150 + random() * 650);
        if (await killAfter(["push", ...flags], delay)) kills++;
        const kept = rels.filter((r) => !doomed.includes(r));
        await checkIndexSound(store, "ns", kept);
        const rerun = await runCli(["push", ...flags]);
        assertEquals(rerun.code, 0, `run ${run} (kill after ${delay} ms): ${rerun.stderr}`);
        const indexed = await checkIndexSound(store, "ns", [...kept, ...fresh]);
        for (const rel of doomed) {
          assert(!indexed.includes(rel), `run ${run}: ${rel} still indexed`);
        }
        const keys = (await bucketState(store)).map((line) => line.split(" ")[0]);
        for (const rel of fresh) assert(keys.includes(`ns/${rel}`), `run ${run}: ns/${rel} lost`);
        const now = indexed.sort();
        expected ??= now;
        assertEquals(now, expected, `run ${run} converged elsewhere`);
        assertEquals(payloadOnly(await treeHashes(cache)).size, kept.length + fresh.length);
      } finally {
        store.destroy();
        await Deno.remove(cache, { recursive: true });
      }
    }
    console.log(`push: ${kills} kills landed mid-run`);
    assert(kills >= 10 * SCALE, `only ${kills} kills landed mid-run`);
  } finally {
    await server.stop();
    await Deno.remove(template, { recursive: true });
  }
});
