/**
 * Push against real S3 servers through the CLI: the first seed's state end to end, every delete
 * guard, the catalog guard, concurrent writers with and without conditional writes, and saved
 * plans.
 */
import { assert, assertEquals } from "../harness/assert.ts";
import { commonFlags, runCli, runCliJson, spawnCli } from "../harness/cli.ts";
import {
  bucketKeys,
  remoteIndexKeys,
  seedBucketWithIndex,
  sha256Hex,
  writeCacheFiles,
  writeExtensionSidecar,
} from "../harness/datastore.ts";
import { contentOf, datastoreRels } from "../harness/seed.ts";
import { SERVER_KINDS, startServer } from "../harness/servers.ts";
import { startFaultProxy, throughProxy } from "../harness/fault_proxy.ts";
import { S3SyncService } from "../../js/extension/service.ts";

type Summary = {
  upload: number;
  download: number;
  delete: number;
  missing: number;
  blocked: { code: string; message: string }[];
};

for (const kind of SERVER_KINDS) {
  Deno.test(`seed 1 on ${kind}: a mixed layout uploads the new work, deletes nothing, exits 3 with mixed-layout`, async () => {
    const server = await startServer(kind);
    const store = await server.bucket("seed-one", { prefix: "swamp" });
    const cache = await Deno.makeTempDir({ prefix: "s3sync-seed1-" });
    try {
      const live = datastoreRels(7431);
      await seedBucketWithIndex(store, live, "ns");
      // The bug's layout: the bulk pull wrote every object to the cache root...
      await writeCacheFiles(cache, live.map((rel) => [rel, contentOf(rel)]));
      // ...while 348 new files of local run history sit where push looks.
      const fresh = datastoreRels(348, "new-");
      await writeCacheFiles(cache, fresh.map((rel) => [`ns/${rel}`, contentOf(rel)]));
      // More than 200 dirty paths, the extension's overflow flag set: its full walk would now
      // delete every index entry missing under <cache>/ns/, i.e. all 7,431.
      await writeExtensionSidecar(cache, {
        dirtyPaths: live.slice(0, 250).map((rel) => `ns/${rel}`),
        dirtyPathsOverflowed: true,
        bulkInvalidated: true,
      });

      const run = await runCliJson([
        "push",
        ...commonFlags(server, "seed-one", cache, { prefix: "swamp", namespace: "ns" }),
        "--yes",
      ]);
      const summary = run.json.summary as Summary;
      assertEquals(run.code, 3, run.stderr);
      assertEquals(summary.upload, 348);
      assertEquals(summary.delete, 0);
      assert(
        summary.blocked.some((b) => b.code === "mixed-layout"),
        JSON.stringify(summary.blocked),
      );
      const keys = await bucketKeys(store, "ns/");
      for (const rel of live) assert(keys.includes(`ns/${rel}`), `ns/${rel} was deleted`);
      for (const rel of fresh) assert(keys.includes(`ns/${rel}`), `ns/${rel} was not uploaded`);
      assertEquals((await remoteIndexKeys(store, "ns")).length, 7431 + 348);
    } finally {
      store.destroy();
      await server.stop();
      await Deno.remove(cache, { recursive: true });
    }
  });
}

Deno.test("guards on moto: an emptied namespace folder, the delete cap, and deletes within the caps", async () => {
  const server = await startServer("moto");
  const store = await server.bucket("guards");
  const cache = await Deno.makeTempDir({ prefix: "s3sync-guards-" });
  const flags = commonFlags(server, "guards", cache, { namespace: "ns" });
  try {
    const rels = datastoreRels(100);
    await seedBucketWithIndex(store, rels, "ns");
    assertEquals((await runCli(["pull", ...flags])).code, 0);

    // Emptied namespace folder: even --delete-missing deletes nothing.
    await Deno.rename(`${cache}/ns`, `${cache}/ns-aside`);
    const emptied = await runCliJson(["push", ...flags, "--delete-missing", "--yes"]);
    assertEquals(emptied.code, 3);
    assertEquals((emptied.json.summary as Summary).delete, 0);
    assert(
      (emptied.json.summary as Summary).blocked.some((b) => b.code === "namespace-tree-missing"),
    );
    assertEquals(
      (await bucketKeys(store, "ns/data/")).length,
      rels.filter((r) => r.startsWith("data/")).length,
    );
    await Deno.rename(`${cache}/ns-aside`, `${cache}/ns`);

    // 60 % deleted on purpose (tombstones) trips the cap.
    const doomed = rels.slice(0, 60);
    for (const rel of doomed) await Deno.remove(`${cache}/ns/${rel}`);
    const marked = await runCli(["mark-deleted", ...flags, ...doomed.map((r) => `ns/${r}`)]);
    assertEquals(marked.code, 0, marked.stderr);
    const capped = await runCliJson(["push", ...flags, "--yes"]);
    assertEquals(capped.code, 3);
    assertEquals((capped.json.summary as Summary).delete, 0);
    assert((capped.json.summary as Summary).blocked.some((b) => b.code === "delete-cap"));
    assertEquals((await remoteIndexKeys(store, "ns")).length, 100);

    // Within raised caps the tombstoned deletes happen, and only those.
    const allowed = await runCliJson(["push", ...flags, "--yes", "--max-delete-percent", "70"]);
    assertEquals(allowed.code, 0, allowed.stderr);
    assertEquals((allowed.json.summary as Summary).delete, 60);
    const remaining = await remoteIndexKeys(store, "ns");
    assertEquals(remaining, rels.slice(60).sort());
    const objects = await bucketKeys(store, "ns/");
    for (const rel of doomed) assert(!objects.includes(`ns/${rel}`), `ns/${rel} still exists`);
    for (const rel of rels.slice(60)) assert(objects.includes(`ns/${rel}`), `ns/${rel} lost`);

    // Without a terminal and without --yes, deletes wait for confirmation (exit 3).
    const more = rels.slice(60, 62);
    for (const rel of more) await Deno.remove(`${cache}/ns/${rel}`);
    await runCli(["mark-deleted", ...flags, ...more]);
    const unconfirmed = await runCliJson(["push", ...flags]);
    assertEquals(unconfirmed.code, 3);
    assert(
      (unconfirmed.json.summary as Summary).blocked.some((b) => b.code === "confirmation-required"),
    );
    assertEquals((await remoteIndexKeys(store, "ns")).length, 40);
  } finally {
    store.destroy();
    await server.stop();
    await Deno.remove(cache, { recursive: true });
  }
});

Deno.test("an unreadable sidecar withholds --delete-missing until a full pull rewrites it", async () => {
  const server = await startServer("moto");
  const store = await server.bucket("sidecar");
  const cache = await Deno.makeTempDir({ prefix: "s3sync-sidecar-" });
  const flags = commonFlags(server, "sidecar", cache, { namespace: "ns" });
  try {
    const rels = datastoreRels(20);
    await seedBucketWithIndex(store, rels, "ns");
    assertEquals((await runCli(["pull", ...flags])).code, 0);
    // A torn or foreign sidecar could hide a metadata-only pull: absence then proves nothing.
    await Deno.writeTextFile(`${cache}/.datastore-sync-state.json`, '{"version": 2, "lazyPu');
    await Deno.remove(`${cache}/ns/${rels[0]}`);
    const doctor = await runCliJson(["doctor", ...flags]);
    assertEquals(doctor.code, 3, doctor.stderr);
    const problems = doctor.json.problems as { code: string }[];
    assert(problems.some((p) => p.code === "sidecar-unreadable"), doctor.stdout);
    const held = await runCliJson(["push", ...flags, "--delete-missing", "--yes"]);
    assertEquals(held.code, 3, held.stderr);
    const summary = held.json.summary as Summary;
    assertEquals(summary.delete, 0);
    assert(summary.blocked.some((b) => b.code === "sidecar-unreadable"), held.stdout);
    assert((await bucketKeys(store, "ns/")).includes(`ns/${rels[0]}`));
    assertEquals((await remoteIndexKeys(store, "ns")).length, 20);
    // The push rewrote the sidecar, carrying the doubt forward: the next push still withholds.
    const again = await runCliJson(["push", ...flags, "--delete-missing", "--yes"]);
    assertEquals(again.code, 3, again.stderr);
    assertEquals((again.json.summary as Summary).delete, 0);
    assert(
      (again.json.summary as Summary).blocked.some((b) => b.code === "lazy-hydration"),
      again.stdout,
    );
    assert((await bucketKeys(store, "ns/")).includes(`ns/${rels[0]}`));

    // A full pull restores the file and the sidecar; the next push has nothing to do.
    assertEquals((await runCli(["pull", ...flags])).code, 0);
    assert(await Deno.stat(`${cache}/ns/${rels[0]}`).then(() => true, () => false));
    const after = await runCliJson(["push", ...flags, "--delete-missing", "--yes"]);
    assertEquals(after.code, 0, after.stderr);
    assertEquals((after.json.summary as Summary).delete, 0);
    assertEquals((after.json.summary as Summary).blocked, []);
    assertEquals((await runCli(["doctor", ...flags])).code, 0);
  } finally {
    store.destroy();
    await server.stop();
    await Deno.remove(cache, { recursive: true });
  }
});

for (const kind of SERVER_KINDS) {
  Deno.test(`on ${kind}, a push with nothing to upload to a bucket without an index publishes the rebuilt one, create-only`, async () => {
    const server = await startServer(kind);
    const store = await server.bucket("no-index");
    const cache = await Deno.makeTempDir({ prefix: "s3sync-no-index-" });
    const flags = commonFlags(server, "no-index", cache, { namespace: "ns" });
    try {
      const rels = datastoreRels(20);
      for (const rel of rels) await store.putObject(`ns/${rel}`, contentOf(rel));
      await writeCacheFiles(cache, rels.map((rel) => [`ns/${rel}`, contentOf(rel)]));
      const run = await runCliJson(["push", ...flags, "--yes"]);
      assertEquals(run.code, 0, run.stderr);
      assertEquals((run.json.summary as Summary).upload, 0);
      assertEquals(await remoteIndexKeys(store, "ns"), [...rels].sort());
      // Its objects were never rewritten: the rebuilt index only names them.
      for (const rel of rels) {
        assertEquals((await store.getObject(`ns/${rel}`)).data, contentOf(rel), rel);
      }
    } finally {
      store.destroy();
      await server.stop();
      await Deno.remove(cache, { recursive: true });
    }
  });
}

Deno.test("an emptied catalog export is held back over a remote one with 1,000 rows", async () => {
  const server = await startServer("moto");
  const store = await server.bucket("catalog");
  const cache = await Deno.makeTempDir({ prefix: "s3sync-catalog-" });
  const flags = commonFlags(server, "catalog", cache, { namespace: "ns" });
  try {
    const rows = Array.from(
      { length: 1000 },
      (_, i) => ({ relPath: `data/a/b/m-${i}/state/1/raw`, size: i }),
    );
    const catalog = new TextEncoder().encode(JSON.stringify(rows, null, 2) + "\n");
    await writeCacheFiles(cache, [["ns/.catalog-export.json", catalog], [
      "ns/logs/a.log",
      new Uint8Array([1]),
    ]]);
    assertEquals((await runCli(["push", ...flags, "--yes"])).code, 0);
    await Deno.writeTextFile(`${cache}/ns/.catalog-export.json`, "[]\n");
    const run = await runCliJson(["push", ...flags, "--yes"]);
    assertEquals(run.code, 3);
    assert((run.json.summary as Summary).blocked.some((b) => b.code === "catalog-shrink"));
    assertEquals((await store.getObject("ns/.catalog-export.json")).data, catalog);
  } finally {
    store.destroy();
    await server.stop();
    await Deno.remove(cache, { recursive: true });
  }
});

/**
 * Four CLI pushes of disjoint files at once, through the loopback proxy, which holds each one's
 * first read of the remote index until all four have asked: they provably start from the same
 * index, so every publish but the first races (rather than overlapping by timing luck).
 */
async function concurrentPushes(
  conditional: boolean,
): Promise<{ expected: number; indexed: number }> {
  const server = await startServer("moto");
  const proxy = startFaultProxy(server.endpoint, { seed: 0 });
  const store = await server.bucket("writers");
  const caches: string[] = [];
  try {
    await seedBucketWithIndex(store, datastoreRels(20), "ns");
    const runs = [];
    let expected = 20;
    for (let p = 0; p < 4; p++) {
      const cache = await Deno.makeTempDir({ prefix: `s3sync-writer-${p}-` });
      caches.push(cache);
      const files = datastoreRels(40, `w${p}-`);
      expected += files.length;
      await writeCacheFiles(cache, files.map((rel) => [`ns/${rel}`, contentOf(rel)]));
    }
    const indexKey = "/writers/ns/.datastore-index.json";
    proxy.barrier(
      caches.length,
      (method, target) => method === "GET" && target.split("?")[0] === indexKey,
    );
    for (const cache of caches) {
      runs.push(
        spawnCli([
          "push",
          ...commonFlags(throughProxy(server, proxy), "writers", cache, { namespace: "ns" }),
          "--yes",
          ...(conditional ? [] : ["--allow-unconditional"]),
        ]).output(),
      );
    }
    const outputs = await Promise.all(runs);
    for (const out of outputs) assertEquals(out.code, 0, new TextDecoder().decode(out.stderr));
    assertEquals(proxy.stats.injected["barrier-filled"], 1, "all four read the same index");
    return { expected, indexed: (await remoteIndexKeys(store, "ns")).length };
  } finally {
    store.destroy();
    await proxy.stop();
    await server.stop();
    for (const cache of caches) await Deno.remove(cache, { recursive: true });
  }
}

Deno.test("four processes pushing disjoint files at once: the index holds every file", async () => {
  const { expected, indexed } = await concurrentPushes(true);
  console.log(`conditional writes on: ${indexed} of ${expected} files indexed`);
  assertEquals(indexed, expected);
});

Deno.test("the same race with conditional writes switched off loses entries: the last writer's index wins", async () => {
  // The control for the test above: it shows what the conditional publish prevents.
  const { expected, indexed } = await concurrentPushes(false);
  console.log(`conditional writes off: ${indexed} of ${expected} files indexed`);
  assertEquals(indexed, 20 + 40, `of ${expected}, only the seed and one writer's files remain`);
});

Deno.test("push --plan refuses a saved plan once the bucket changed", async () => {
  const server = await startServer("s3s-fs");
  const store = await server.bucket("saved-plan");
  const cache = await Deno.makeTempDir({ prefix: "s3sync-plan-" });
  const other = await Deno.makeTempDir({ prefix: "s3sync-plan-other-" });
  const flags = commonFlags(server, "saved-plan", cache);
  try {
    await seedBucketWithIndex(store, datastoreRels(10));
    assertEquals((await runCli(["pull", ...flags])).code, 0);
    await writeCacheFiles(cache, [["logs/mine.log", new Uint8Array([1, 2, 3])]]);
    const planFile = `${cache}-plan.json`;
    const planned = await runCli(["plan", ...flags, "--out", planFile]);
    assertEquals(planned.code, 0, planned.stderr);
    assert(
      planned.stdout.includes("Plan: 1 to upload, 0 to delete, 0 missing (not deleted)."),
      planned.stdout,
    );

    // Someone else pushes in between.
    await writeCacheFiles(other, [["logs/theirs.log", new Uint8Array([9])]]);
    assertEquals(
      (await runCli(["push", ...commonFlags(server, "saved-plan", other), "--yes"])).code,
      0,
    );

    const stale = await runCli(["push", ...flags, "--plan", planFile, "--yes"]);
    assertEquals(stale.code, 3, stale.stderr);
    assert(stale.stderr.includes("plan-stale"), stale.stderr);
    assert(!(await remoteIndexKeys(store)).includes("logs/mine.log"));

    // A fresh plan applies.
    assertEquals((await runCli(["plan", ...flags, "--out", planFile])).code, 0);
    assertEquals((await runCli(["push", ...flags, "--plan", planFile, "--yes"])).code, 0);
    assert((await remoteIndexKeys(store)).includes("logs/mine.log"));
    await Deno.remove(planFile);
  } finally {
    store.destroy();
    await server.stop();
    await Deno.remove(cache, { recursive: true });
    await Deno.remove(other, { recursive: true });
  }
});

/**
 * Two CLI processes push their own edit of the same file at the same moment: the proxy holds
 * each one's read of the remote index until both have asked, so both plan from the same
 * version. Conditional writes reach moto one at a time (`serializeConditionalWrites`: moto
 * checks a condition and stores in two steps; S3 decides atomically). One push wins; the other
 * finds the bucket moved (a `conflict`, exit 3) and keeps its edit, which its next pull sets
 * aside. Nothing is lost and the index names the bytes the bucket holds, every round.
 */
Deno.test("two CLI pushes of one file at the same moment: one lands, the other is a conflict, nothing lost", async () => {
  const server = await startServer("moto");
  const proxy = startFaultProxy(server.endpoint, { seed: 0, serializeConditionalWrites: true });
  const store = await server.bucket("same-file");
  const parent = await Deno.makeTempDir({ prefix: "s3sync-same-file-" });
  const decoder = new TextDecoder();
  try {
    const rel = "data/m/1/raw";
    await seedBucketWithIndex(store, [rel], "ns");
    for (let round = 0; round < 3; round++) {
      const caches = [`${parent}/r${round}-a`, `${parent}/r${round}-b`];
      const edits = caches.map((_, i) => `round ${round}, writer ${i}${"!".repeat(i)}`);
      for (const [i, cache] of caches.entries()) {
        const pulled = await runCli([
          "pull",
          ...commonFlags(server, "same-file", cache, { namespace: "ns" }),
        ]);
        assertEquals(pulled.code, 0, pulled.stderr);
        await Deno.writeTextFile(`${cache}/ns/${rel}`, edits[i]);
      }
      proxy.barrier(
        2,
        (method, target) =>
          method === "GET" && target.split("?")[0] === "/same-file/ns/.datastore-index.json",
      );
      const outputs = await Promise.all(caches.map((cache) =>
        spawnCli([
          "push",
          "--yes",
          ...commonFlags(throughProxy(server, proxy), "same-file", cache, { namespace: "ns" }),
        ]).output()
      ));
      const codes = outputs.map((o) => o.code).sort();
      assertEquals(codes, [0, 3], outputs.map((o) => decoder.decode(o.stdout)).join("\n"));
      const winner = outputs.findIndex((o) => o.code === 0);
      const loser = 1 - winner;
      assert(decoder.decode(outputs[loser].stdout).includes("conflict"));
      // The bucket holds the winner's bytes, and the index says so.
      const object = decoder.decode((await store.getObject(`ns/${rel}`)).data);
      assertEquals(object, edits[winner]);
      const index = JSON.parse(
        decoder.decode((await store.getObject("ns/.datastore-index.json")).data),
      );
      assertEquals(index.entries[rel].size, new TextEncoder().encode(edits[winner]).length);
      assertEquals(
        index.entries[rel].sha256,
        await sha256Hex(new TextEncoder().encode(edits[winner])),
      );
      // The loser still holds its edit; its next pull brings the winner's and keeps its own aside.
      assertEquals(await Deno.readTextFile(`${caches[loser]}/ns/${rel}`), edits[loser]);
      const pulled = await runCli([
        "pull",
        ...commonFlags(server, "same-file", caches[loser], { namespace: "ns" }),
      ]);
      assertEquals(pulled.code, 3, pulled.stdout);
      assertEquals(await Deno.readTextFile(`${caches[loser]}/ns/${rel}`), edits[winner]);
      const kept = [];
      for await (const e of Deno.readDir(`${caches[loser]}/.s3sync-conflicts/ns/data/m/1`)) {
        kept.push(
          await Deno.readTextFile(`${caches[loser]}/.s3sync-conflicts/ns/data/m/1/${e.name}`),
        );
      }
      assertEquals(kept, [edits[loser]]);
      assertEquals(proxy.stats.injected["barrier-filled"], round + 1, "both read the same index");
    }
  } finally {
    store.destroy();
    await proxy.stop();
    await server.stop();
    await Deno.remove(parent, { recursive: true });
  }
});

for (const signal of ["SIGTERM", "SIGINT"] as const) {
  Deno.test(`${signal} ends a push stuck on an unanswered request within seconds, saying what stays; the re-run finishes`, async () => {
    const server = await startServer("moto");
    const proxy = startFaultProxy(server.endpoint, { seed: 0 });
    const store = await server.bucket("stuck");
    const cache = await Deno.makeTempDir({ prefix: "s3sync-stuck-" });
    const decoder = new TextDecoder();
    try {
      await seedBucketWithIndex(store, datastoreRels(5), "ns");
      const fresh = datastoreRels(20, "stuck-");
      await writeCacheFiles(cache, fresh.map((rel) => [`ns/${rel}`, contentOf(rel)]));
      const flags = commonFlags(throughProxy(server, proxy), "stuck", cache, { namespace: "ns" });
      // The 8th request (an upload, past the index read and the probe) is never answered.
      const release = proxy.holdAt(8);
      const child = spawnCli(["push", "--yes", "--concurrency", "1", ...flags]);
      while ((proxy.stats.injected["held"] ?? 0) === 0) {
        await new Promise((r) => setTimeout(r, 50));
      }
      const sent = Date.now();
      child.kill(signal);
      const ended = await Promise.race([
        child.output(),
        new Promise<null>((r) => setTimeout(() => r(null), 20_000)),
      ]);
      release(false);
      assert(ended !== null, `${signal} did not end the push within 20 s`);
      const elapsed = Date.now() - sent;
      console.log(`${signal}: the push ended ${elapsed} ms after the signal, exit ${ended.code}`);
      assertEquals(ended.code, 1);
      const said = decoder.decode(ended.stdout) + decoder.decode(ended.stderr);
      assert(said.includes("interrupted"), said);
      // What landed stays; the same command finishes the job.
      const again = await runCli(["push", "--yes", ...flags]);
      assertEquals(again.code, 0, again.stdout + again.stderr);
      assertEquals((await remoteIndexKeys(store, "ns")).length, 25);
    } finally {
      store.destroy();
      await proxy.stop();
      await server.stop();
      await Deno.remove(cache, { recursive: true });
    }
  });
}

Deno.test("an upload whose body the server read but never answered times out and is retried with a fresh body: the push completes", async () => {
  const server = await startServer("moto");
  const proxy = startFaultProxy(server.endpoint, { seed: 0 });
  const store = await server.bucket("unanswered");
  const cache = await Deno.makeTempDir({ prefix: "s3sync-unanswered-" });
  try {
    await seedBucketWithIndex(store, datastoreRels(5), "ns");
    const fresh = datastoreRels(20, "late-");
    await writeCacheFiles(cache, fresh.map((rel) => [`ns/${rel}`, contentOf(rel)]));
    const flags = commonFlags(throughProxy(server, proxy), "unanswered", cache, {
      namespace: "ns",
    });
    // The 8th request (an upload) is read whole and never answered; the stall timeout (2 s)
    // must give it up, and the retry must send the bytes again.
    const release = proxy.holdAt(8);
    const pushed = await runCli([
      "push",
      "--yes",
      "--concurrency",
      "1",
      "--timeout",
      "2",
      ...flags,
    ]);
    release(false);
    assertEquals(proxy.stats.injected["held"], 1, "the request was held");
    assertEquals(pushed.code, 0, pushed.stdout + pushed.stderr);
    assertEquals((await remoteIndexKeys(store, "ns")).length, 25);
    for (const rel of fresh) {
      assertEquals((await store.getObject(`ns/${rel}`)).data, contentOf(rel));
    }
  } finally {
    store.destroy();
    await proxy.stop();
    await server.stop();
    await Deno.remove(cache, { recursive: true });
  }
});

for (const kind of SERVER_KINDS) {
  Deno.test(`on ${kind}, a push with nothing to do sends no request, and a same-size rewrite that kept its mtime still goes up`, async () => {
    const server = await startServer(kind);
    const proxy = startFaultProxy(server.endpoint, { seed: 0 });
    const store = await server.bucket("sealed");
    const cache = await Deno.makeTempDir({ prefix: "s3sync-sealed-" });
    try {
      const rels = datastoreRels(30);
      await writeCacheFiles(cache, rels.map((rel) => [`ns/${rel}`, contentOf(rel)]));
      // s3s-fs checks the Host header the signature covers, which the proxy rewrites: there the
      // requests go straight, uncounted.
      const counted = kind === "moto";
      const target = counted ? throughProxy(server, proxy) : server;
      const flags = commonFlags(target, "sealed", cache, { namespace: "ns" });
      const first = await runCliJson(["push", "--yes", ...flags]);
      assertEquals(first.code, 0, first.stdout + first.stderr);
      const sealOf = async () =>
        JSON.parse(await Deno.readTextFile(`${cache}/.datastore-sync-state.json`))
          .s3syncSeal as { digest: string; walkedAtMs: number };
      const sealed = await sealOf();
      // Right after: files written within the racy window of the seal's walk (a change time Deno
      // cut to its second: 1.1 s beside an mtime with a fraction) cannot be vouched for by it;
      // they are hashed (no request) and hold the bytes synced. Whether any is depends on where
      // the second fell, so the test reads the stats the rule reads.
      const racy = (await Promise.all(rels.map((rel) => Deno.stat(`${cache}/ns/${rel}`)))).some(
        (info) => {
          const mtime = info.mtime!.getTime();
          const ctime = info.ctime!.getTime();
          const fine = mtime % 1000 !== 0;
          return mtime >= sealed.walkedAtMs - (fine ? 100 : 2000) ||
            ctime >= sealed.walkedAtMs - (fine && ctime % 1000 === 0 ? 1100 : fine ? 100 : 2000);
        },
      );
      const before = proxy.stats.requests;
      const noop = await runCliJson(["push", "--yes", ...flags]);
      assertEquals(noop.code, 0, noop.stderr);
      // Verified, that walk became the seal's: the next push hashes only what is still recent.
      // With nothing racy the seal held as it was, and nothing was written.
      const refreshed = await sealOf();
      assertEquals(refreshed.digest, sealed.digest);
      const moved = refreshed.walkedAtMs > sealed.walkedAtMs;
      assertEquals(moved, racy, JSON.stringify({ sealed, refreshed, racy }));
      if (counted) {
        assertEquals(
          proxy.stats.requests - before,
          0,
          `a no-op push sends nothing: ${noop.stderr}`,
        );
      }
      assertEquals((noop.json.summary as Summary).upload, 0);
      // Same size, its mtime put back (as `touch -r` or `cp -p` do): only the change time tells.
      const path = `${cache}/ns/${rels[3]}`;
      const stat = await Deno.stat(path);
      const edited = contentOf(rels[3]).map((b) => b ^ 1);
      await Deno.writeFile(path, edited);
      await Deno.utime(path, stat.atime!, stat.mtime!);
      const pushed = await runCliJson(["push", "--yes", ...flags]);
      assertEquals(pushed.code, 0, pushed.stderr);
      assertEquals((pushed.json.summary as Summary).upload, 1);
      assertEquals((await store.getObject(`ns/${rels[3]}`)).data, edited);
    } finally {
      store.destroy();
      await proxy.stop();
      await server.stop();
      await Deno.remove(cache, { recursive: true });
    }
  });
}

Deno.test("on moto, a peer's file this cache never pulled is no missing file: no warning, the push seals, the next push sends nothing and the pull still brings it", async () => {
  const server = await startServer("moto");
  const proxy = startFaultProxy(server.endpoint, { seed: 0 });
  const store = await server.bucket("not-pulled");
  const cacheA = await Deno.makeTempDir({ prefix: "s3sync-not-pulled-a-" });
  const cacheB = await Deno.makeTempDir({ prefix: "s3sync-not-pulled-b-" });
  try {
    const target = throughProxy(server, proxy);
    const flagsA = commonFlags(target, "not-pulled", cacheA, { namespace: "ns" });
    const flagsB = commonFlags(target, "not-pulled", cacheB, { namespace: "ns" });
    const rels = datastoreRels(6);
    await writeCacheFiles(cacheA, rels.map((rel) => [`ns/${rel}`, contentOf(rel)]));
    assertEquals((await runCliJson(["push", "--yes", ...flagsA])).code, 0);
    assertEquals((await runCliJson(["pull", ...flagsB])).code, 0);
    // A adds a file B never pulls (as a scoped pull of another model leaves it).
    const peer = "data/peer/new.yaml";
    await writeCacheFiles(cacheA, [[`ns/${peer}`, contentOf(peer)]]);
    assertEquals((await runCliJson(["push", "--yes", ...flagsA])).code, 0);
    // B edits its own file and pushes: the peer's file is not pulled here, not missing.
    await Deno.writeFile(`${cacheB}/ns/${rels[0]}`, new TextEncoder().encode("edited by B"));
    const pushed = await runCliJson(["push", "--yes", ...flagsB]);
    assertEquals(pushed.code, 0, pushed.stderr);
    const summary = pushed.json.summary as Summary;
    assertEquals(summary.upload, 1);
    assertEquals(summary.missing, 0, "a file never held here is not missing");
    assertEquals((pushed.json.plan as { notPulled: string[] }).notPulled, [peer]);
    const warnings = pushed.json.warnings as { code: string }[];
    assertEquals(warnings.map((w) => w.code), [], JSON.stringify(warnings));
    // Everything B changed is in the bucket: its next push sends nothing.
    const before = proxy.stats.requests;
    const noop = await runCliJson(["push", "--yes", ...flagsB]);
    assertEquals(noop.code, 0, noop.stderr);
    assertEquals(proxy.stats.requests - before, 0, `a sealed push sends nothing: ${noop.stderr}`);
    // But B is not in line with the bucket: its pull does the work and brings the file.
    const pulled = await runCliJson(["pull", ...flagsB]);
    assertEquals(pulled.code, 0, pulled.stderr);
    assertEquals(await Deno.readFile(`${cacheB}/ns/${peer}`), contentOf(peer));
  } finally {
    store.destroy();
    await proxy.stop();
    await server.stop();
    await Deno.remove(cacheA, { recursive: true });
    await Deno.remove(cacheB, { recursive: true });
  }
});

Deno.test("on moto, a replacement of a version this cache pushed goes If-Match its recorded ETag with no HEAD; a stale one is caught", async () => {
  const server = await startServer("moto");
  const proxy = startFaultProxy(server.endpoint, { seed: 0 });
  const store = await server.bucket("recorded-etag");
  const cache = await Deno.makeTempDir({ prefix: "s3sync-recorded-etag-" });
  try {
    const rels = datastoreRels(6);
    await writeCacheFiles(cache, rels.map((rel) => [`ns/${rel}`, contentOf(rel)]));
    const flags = commonFlags(throughProxy(server, proxy), "recorded-etag", cache, {
      namespace: "ns",
    });
    const first = await runCliJson(["push", "--yes", ...flags]);
    assertEquals(first.code, 0, first.stderr);
    const index = JSON.parse(
      new TextDecoder().decode((await store.getObject("ns/.datastore-index.json")).data),
    );
    const etag = (await store.headObject(`ns/${rels[0]}`)).etag;
    assertEquals(index.entries[rels[0]].s3syncEtag, etag, "the ETag the PUT answered");

    // A push of one new file: the HEADs every push sends (the lock, the probe), none of them
    // of an object it writes (a new key goes create-only).
    const headsOf = async (args: string[]) => {
      const before = proxy.stats.byMethod["HEAD"] ?? 0;
      const run = await runCliJson(args);
      assertEquals(run.code, 0, run.stderr);
      return { run, heads: (proxy.stats.byMethod["HEAD"] ?? 0) - before };
    };
    await writeCacheFiles(cache, [["ns/logs/new.log", new TextEncoder().encode("new")]]);
    const baseline = await headsOf(["push", "--yes", ...flags]);
    // Two files edited: replaced with no HEAD of either object.
    for (const rel of rels.slice(0, 2)) {
      await Deno.writeFile(`${cache}/ns/${rel}`, new TextEncoder().encode(`${rel}, edited`));
    }
    const edited = await headsOf(["push", "--yes", ...flags]);
    assertEquals((edited.run.json.summary as Summary).upload, 2);
    assertEquals(edited.heads, baseline.heads, "no HEAD before the replacements");

    // Another writer replaced an object without publishing an index: the recorded ETag is
    // stale, the server refuses it, the HEAD finds another version, nothing is overwritten.
    await store.putObject(`ns/${rels[2]}`, new TextEncoder().encode("theirs"));
    await Deno.writeFile(`${cache}/ns/${rels[2]}`, new TextEncoder().encode("mine"));
    const stale = await runCliJson(["push", "--yes", ...flags]);
    assert(stale.code !== 0, "a conflict is reported");
    assertEquals(
      new TextDecoder().decode((await store.getObject(`ns/${rels[2]}`)).data),
      "theirs",
    );
    assertEquals(await Deno.readTextFile(`${cache}/ns/${rels[2]}`), "mine");
  } finally {
    store.destroy();
    await proxy.stop();
    await server.stop();
    await Deno.remove(cache, { recursive: true });
  }
});

Deno.test("on s3s-fs, swamp core's preview of a sealed cache costs no request, and a write since is counted and not sent", async () => {
  const server = await startServer("s3s-fs");
  const store = await server.bucket("preview");
  const cache = await Deno.makeTempDir({ prefix: "s3sync-preview-" });
  try {
    const rels = datastoreRels(8);
    await writeCacheFiles(cache, rels.map((rel) => [`ns/${rel}`, contentOf(rel)]));
    const service = new S3SyncService(store, cache, { log: () => {} });
    assertEquals(await service.pushChanged({ namespace: "ns" }), rels.length);
    // `datastore sync --push` without `--yes`: the preview, then (counting 0) the push.
    const before = store.requests;
    const preview = await service.previewPush({ namespace: "ns" });
    assertEquals(preview.total, 0);
    assertEquals(await service.pushChanged({ namespace: "ns" }), 0);
    assertEquals(store.requests - before, 0, "preview and push both end on the seal");
    // A write since breaks the seal: the preview reads the index and counts it, sends nothing.
    await Deno.writeFile(`${cache}/ns/${rels[2]}`, new TextEncoder().encode("edited"));
    const counted = await service.previewPush({ namespace: "ns" });
    assertEquals({ total: counted.total, changed: counted.changed }, { total: 1, changed: 1 });
    assertEquals((await store.getObject(`ns/${rels[2]}`)).data, contentOf(rels[2]));
    assertEquals(await service.pushChanged({ namespace: "ns" }), 1);
  } finally {
    store.destroy();
    await server.stop();
    await Deno.remove(cache, { recursive: true });
  }
});

Deno.test("on s3s-fs, swamp core's rewrite and mark of the catalog export before a push costs no request when its bytes are the same", async () => {
  const server = await startServer("s3s-fs");
  const store = await server.bucket("export-seal");
  const cache = await Deno.makeTempDir({ prefix: "s3sync-export-seal-" });
  try {
    const rels = datastoreRels(6);
    const rows = new TextEncoder().encode(JSON.stringify([{ id: 1 }]));
    await writeCacheFiles(cache, [
      ...rels.map((rel): [string, Uint8Array] => [`ns/${rel}`, contentOf(rel)]),
      ["ns/.catalog-export.json", rows],
    ]);
    const service = new S3SyncService(store, cache, { log: () => {} });
    assertEquals(await service.pushChanged({ namespace: "ns" }), rels.length + 1);
    // What core does before each push of a namespaced clone: rewrite the export, mark it.
    const exportAgain = async (bytes: Uint8Array) => {
      await Deno.writeFile(`${cache}/ns/.catalog-export.json`, bytes);
      await service.markDirty({ relPath: "ns/.catalog-export.json" });
    };
    await exportAgain(rows);
    const before = store.requests;
    assertEquals(await service.pushChanged({ namespace: "ns" }), 0);
    assertEquals(store.requests - before, 0, "the export is hashed, not re-read from the bucket");
    // New rows go up.
    const more = new TextEncoder().encode(JSON.stringify([{ id: 1 }, { id: 2 }]));
    await exportAgain(more);
    assertEquals(await service.pushChanged({ namespace: "ns" }), 1);
    assertEquals((await store.getObject("ns/.catalog-export.json")).data, more);
  } finally {
    store.destroy();
    await server.stop();
    await Deno.remove(cache, { recursive: true });
  }
});
