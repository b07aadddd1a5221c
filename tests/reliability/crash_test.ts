/**
 * kill -9 of the CLI at seeded points during pull and push: the re-run converges to the state an
 * uninterrupted run reaches, with nothing lost. (Repair's kill schedule lives in
 * tests/integration/repair_test.ts.) `RELIABILITY_SCALE=N` multiplies the kills.
 *
 * The CLI talks to moto through the loopback proxy of tests/harness/fault_proxy.ts, which kills
 * it when its k-th request arrives (before forwarding it) or right after answering it. A seeded k
 * in [1, N), where N is what an uninterrupted run sends, makes every kill land mid-run on any
 * machine; kills timed by a wall-clock delay missed the run on a fast machine.
 */
import { assert, assertEquals } from "../harness/assert.ts";
import { commonFlags, runCli, spawnCli } from "../harness/cli.ts";
import {
  bucketState,
  seedBucketWithIndex,
  treeHashes,
  writeCacheFiles,
} from "../harness/datastore.ts";
import { type FaultProxy, startFaultProxy, throughProxy } from "../harness/fault_proxy.ts";
import { checkCacheMatchesRemote, checkIndexSound } from "../harness/invariants.ts";
import { SCALE } from "../harness/scale.ts";
import { contentOf, datastoreRels } from "../harness/seed.ts";
import { prng } from "../harness/prng.ts";
import { type S3Server, startServer } from "../harness/servers.ts";

/** Runs the CLI to the end through `proxy` and says how many requests it sent. */
async function requestsOfFullRun(args: string[], proxy: FaultProxy): Promise<number> {
  const before = proxy.stats.requests;
  const run = await runCli(args);
  assertEquals(run.code, 0, `uninterrupted run: ${run.stderr}`);
  return proxy.stats.requests - before;
}

/** A kill point: the k-th request of the run, before it is forwarded or after it is answered. */
interface KillPoint {
  nth: number;
  when: "before" | "after";
}

/** A seeded kill point strictly inside a run of `requests` requests. */
function killPoint(random: () => number, requests: number): KillPoint {
  return {
    nth: 1 + Math.floor(random() * (requests - 1)),
    when: random() < 0.5 ? "before" : "after",
  };
}

/** Runs the CLI through `proxy` and SIGKILLs it at `point`; true when it was still running. */
async function killAt(args: string[], proxy: FaultProxy, point: KillPoint): Promise<boolean> {
  // Armed in the same tick as the spawn: the proxy cannot see a request of the child before.
  const child = spawnCli(args);
  let finished = false;
  let killed = false;
  proxy.tripAt(point.nth, point.when, () => {
    if (finished) return;
    try {
      child.kill("SIGKILL");
      killed = true;
    } catch {
      // it exited between its last request and this moment: not a kill that landed
    }
  });
  await child.status;
  finished = true;
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
  const server = await startServer("moto");
  const proxy = startFaultProxy(server.endpoint, { seed: 0 });
  const store = await server.bucket("crash-pull");
  try {
    const rels = datastoreRels(400);
    await seedBucketWithIndex(store, rels, "ns");
    const pullVia = (target: S3Server, cache: string) => [
      "pull",
      ...commonFlags(target, "crash-pull", cache, { namespace: "ns" }),
      "--concurrency",
      "8",
    ];
    const calibration = await Deno.makeTempDir({ prefix: "s3sync-crash-pull-calibration-" });
    const requests = await requestsOfFullRun(
      pullVia(throughProxy(server, proxy), calibration),
      proxy,
    );
    await Deno.remove(calibration, { recursive: true });

    const random = prng(4242);
    let kills = 0;
    for (let run = 0; run < 15 * SCALE; run++) {
      const cache = await Deno.makeTempDir({ prefix: `s3sync-crash-pull-${run}-` });
      const point = killPoint(random, requests);
      if (await killAt(pullVia(throughProxy(server, proxy), cache), proxy, point)) kills++;
      await checkCacheMatchesRemote(cache, store, "ns", new Set());
      const rerun = await runCli(pullVia(server, cache));
      assertEquals(rerun.code, 0, `run ${run} (killed ${JSON.stringify(point)}): ${rerun.stderr}`);
      assertEquals(
        await checkCacheMatchesRemote(cache, store, "ns", new Set()),
        rels.length,
        `run ${run}`,
      );
      await Deno.remove(cache, { recursive: true });
    }
    console.log(`pull: ${kills} of ${15 * SCALE} kills landed mid-run (${requests} requests/run)`);
    assertEquals(kills, 15 * SCALE, "every kill lands mid-run");
  } finally {
    store.destroy();
    await proxy.stop();
    await server.stop();
  }
});

Deno.test(`kill -9 during push at ${15 * SCALE} seeded points: every re-run converges, nothing lost`, async () => {
  const server = await startServer("moto");
  const proxy = startFaultProxy(server.endpoint, { seed: 0 });
  const template = await Deno.makeTempDir({ prefix: "s3sync-crash-push-template-" });
  try {
    const rels = datastoreRels(150);
    const fresh = datastoreRels(300, "fresh-");
    const doomed = rels.slice(0, 10);
    const kept = rels.filter((r) => !doomed.includes(r));
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
    // The tombstones this test is about: a mark-deleted that failed would leave the doomed
    // files merely missing, and the test would check nothing about deletes.
    const marked = await runCli([
      "mark-deleted",
      ...commonFlags(server, "crash-push-template", template, { namespace: "ns" }),
      ...doomed.map((r) => `ns/${r}`),
    ]);
    assertEquals(marked.code, 0, marked.stderr);

    /** A bucket with the template's objects and index bytes (so the ETag its sidecar recorded)
     * and a copy of the template cache. Killed lock holders are the lock tests' subject; here
     * the lock would only add a stale wait to some re-runs, hence `--no-lock`. */
    const prepare = async (bucket: string) => {
      const store = await server.bucket(bucket);
      await seedBucketWithIndex(store, rels, "ns");
      const cache = await Deno.makeTempDir({ prefix: `s3sync-${bucket}-` });
      await copyTree(template, cache);
      const pushVia = (target: S3Server) => [
        "push",
        ...commonFlags(target, bucket, cache, { namespace: "ns" }),
        "--yes",
        "--no-lock",
      ];
      const cleanup = async () => {
        store.destroy();
        await Deno.remove(cache, { recursive: true });
      };
      return { store, cache, pushVia, cleanup };
    };

    const calibration = await prepare("crash-push-calibration");
    const requests = await requestsOfFullRun(
      calibration.pushVia(throughProxy(server, proxy)),
      proxy,
    );
    const expected = (await checkIndexSound(calibration.store, "ns", [...kept, ...fresh])).sort();
    await calibration.cleanup();

    const random = prng(777);
    let kills = 0;
    for (let run = 0; run < 15 * SCALE; run++) {
      const { store, cache, pushVia, cleanup } = await prepare(`crash-push-${run}`);
      try {
        const point = killPoint(random, requests);
        if (await killAt(pushVia(throughProxy(server, proxy)), proxy, point)) kills++;
        await checkIndexSound(store, "ns", kept);
        const rerun = await runCli(pushVia(server));
        assertEquals(
          rerun.code,
          0,
          `run ${run} (killed ${JSON.stringify(point)}): ${rerun.stderr}`,
        );
        const indexed = await checkIndexSound(store, "ns", [...kept, ...fresh]);
        for (const rel of doomed) {
          assert(!indexed.includes(rel), `run ${run}: ${rel} still indexed`);
        }
        const keys = (await bucketState(store)).map((line) => line.split(" ")[0]);
        for (const rel of fresh) assert(keys.includes(`ns/${rel}`), `run ${run}: ns/${rel} lost`);
        assertEquals(indexed.sort(), expected, `run ${run} converged elsewhere`);
        assertEquals(payloadOnly(await treeHashes(cache)).size, kept.length + fresh.length);
      } finally {
        await cleanup();
      }
    }
    console.log(`push: ${kills} of ${15 * SCALE} kills landed mid-run (${requests} requests/run)`);
    assertEquals(kills, 15 * SCALE, "every kill lands mid-run");
  } finally {
    await proxy.stop();
    await server.stop();
    await Deno.remove(template, { recursive: true });
  }
});
