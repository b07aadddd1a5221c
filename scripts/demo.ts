/**
 * The main job, narrated for a newcomer: an embedded S3 server holding a namespaced swamp
 * datastore in the state of the second seed bug (data, but no index), and a pull that rebuilds
 * the index, publishes it and hydrates the cache under `<cache>/<namespace>/` (the first seed
 * bug's fix), then a second pull that costs one request; a push with a previewed, evidenced
 * delete; the first bug's broken cache pushed without losing a byte; and its repair.
 *
 * @module
 */
import { DenoCacheFs } from "../js/io/cache_fs.ts";
import { describePlan } from "../js/cli.ts";
import { markDirty } from "../js/ops/dirty.ts";
import { pull } from "../js/ops/pull.ts";
import { push } from "../js/ops/push.ts";
import { doctor, repair } from "../js/ops/repair.ts";
import { contentOf, datastoreRels, listTree, putAll } from "../tests/harness/seed.ts";
import { startServer } from "../tests/harness/servers.ts";

const root = new URL("../.demo/", import.meta.url).pathname;
const encoder = new TextEncoder();
const bold = (s: string) =>
  Deno.env.get("NO_COLOR") || !Deno.stdout.isTerminal() ? s : `\x1b[1m${s}\x1b[0m`;
const say = (s = "") => console.log(s);
const step = (n: number, s: string) => say(`\n${bold(`${n}. ${s}`)}`);

await Deno.remove(root, { recursive: true }).catch(() => {});
const cachePath = `${root}cache`;
step(1, "Start an embedded S3 server");
const server = await startServer("s3s-fs", { dataDir: `${root}s3`, keepData: true });
say(`   s3s-fs is listening on ${server.endpoint} (data in .demo/s3/).`);
const store = await server.bucket("swamp-demo", { prefix: "team/repo" });
try {
  step(2, "Seed a namespaced datastore the way the second bug report found it");
  const rels = datastoreRels(300);
  await putAll(store, rels.map((rel) => [`prod/${rel}`, contentOf(rel)]));
  await putAll(store, [
    [".datastore.lock", encoder.encode("{}")],
    ["prod/_index/_meta.json", encoder.encode('{"version":1,"partitions":[]}')],
    ["prod/data/aws/ec2/vpc/m-0/.lock", encoder.encode("{}")],
    ["staging/.namespace.json", encoder.encode('{"namespace":"staging"}')],
    ["staging/data/aws/ec2/vpc/m-9/state/1/raw", encoder.encode("another repo's data")],
  ]);
  say(
    `   s3://swamp-demo/team/repo/prod/ holds ${rels.length} datastore files (data/, workflow-runs/,`,
  );
  say("   outputs/, ...) plus bookkeeping (_index/, .lock files), and there is NO");
  say("   .datastore-index.json. Today's extension would hydrate 0 files here and report success.");
  say("   Next to it, staging/ belongs to another repo.");

  step(3, "Pull with namespace 'prod' into an empty cache");
  say(`   s3sync pull --bucket swamp-demo --prefix team/repo --namespace prod --cache .demo/cache`);
  const first = await pull({
    store,
    cache: new DenoCacheFs(cachePath),
    namespace: "prod",
    prefix: "team/repo",
    log: (line) => say(`   · ${line}`),
  });
  const r = first.rebuilt!;
  say(`   The index was missing (404), so the core rebuilt it from a paginated listing:`);
  say(
    `     ${r.objectsSeen} objects listed under prod/, ${r.kept} kept, ${r.skippedInternal} internal files skipped,`,
  );
  say(`     ${r.skippedUnsafe} unsafe keys refused; published create-only: ${r.published}.`);
  say(
    `   Downloaded ${first.downloaded} files (${first.bytes} bytes), ${first.failures.length} failures.`,
  );

  step(4, "Look at the cache");
  const files = await listTree(cachePath);
  const atRoot = files.filter((f) => !f.startsWith("prod/"));
  say(
    `   ${files.length - atRoot.length} files under .demo/cache/prod/, e.g. ${
      files.find((f) => f.startsWith("prod/data/"))
    }`,
  );
  say(`   At the cache root only bookkeeping: ${atRoot.join(", ")}`);
  say("   (The first bug report's pull wrote every file to the cache root instead, which wedged");
  say("   pushes and set up a whole-datastore delete. Here one path model maps all three names.)");
  const indexBytes = (await store.getObject("prod/.datastore-index.json")).data;
  say(
    `   The bucket now has prod/.datastore-index.json (${indexBytes.length} bytes, ${r.kept} entries),`,
  );
  say("   so every other peer takes the fast, indexed path from now on.");

  step(5, "Pull again: nothing changed");
  const before = store.requests;
  const second = await pull({
    store,
    cache: new DenoCacheFs(cachePath),
    namespace: "prod",
    prefix: "team/repo",
  });
  say(
    `   noop: ${second.noop}, requests sent: ${
      store.requests - before
    } (a HEAD of the index, compared with`,
  );
  say("   the ETag recorded in .datastore-sync-state.json; nothing walked, nothing listed).");

  step(6, "Local work: two new files, one deleted on purpose");
  const ctx = { store, cache: new DenoCacheFs(cachePath), namespace: "prod", prefix: "team/repo" };
  await Deno.writeTextFile(`${cachePath}/prod/logs/run-demo-1.log`, "a new run\n");
  await Deno.writeTextFile(`${cachePath}/prod/logs/run-demo-2.log`, "another run\n");
  await Deno.remove(`${cachePath}/prod/logs/run-5.log`);
  await markDirty(ctx.cache, "prod", "prod/logs/run-5.log");
  say(
    '   swamp calls markDirty("prod/logs/run-5.log") when it deletes a file: that tombstone is the',
  );
  say("   evidence a remote delete needs. Preview first (s3sync plan):");
  const preview = await push(ctx, { dryRun: true });
  for (const line of describePlan(preview.plan)) say(`     ${line}`);
  const pushed = await push(ctx, {});
  say(
    `   Pushed: ${pushed.uploaded} uploaded, ${pushed.deleted} deleted; the index was published with If-Match,`,
  );
  say(
    "   so a concurrent writer's entries are never overwritten (a lost race re-reads and re-merges).",
  );

  step(7, "Reproduce the first bug report's broken cache, and push it");
  for await (const entry of Deno.readDir(`${cachePath}/prod`)) {
    if (entry.isDirectory && entry.name !== "logs") {
      await Deno.rename(`${cachePath}/prod/${entry.name}`, `${cachePath}/${entry.name}`);
    }
  }
  await Deno.writeTextFile(`${cachePath}/prod/logs/run-demo-3.log`, "work done while wedged\n");
  say(
    "   The buggy pull left data/, outputs/, workflow-runs/, ... at the cache ROOT; only logs/ and a",
  );
  say(
    "   new run log are under prod/. With >200 dirty paths the extension's next full-walk push would",
  );
  say("   delete every indexed file missing under prod/: nearly the whole datastore. Here:");
  const wedged = await push(ctx, { dryRun: true });
  for (const line of describePlan(wedged.plan, 3)) say(`     ${line}`);
  const safe = await push(ctx, {});
  const remaining = (await store.listAllObjects("prod/")).length;
  say(
    `   Pushed: ${safe.uploaded} uploaded (new work is never stranded), ${safe.deleted} deleted.`,
  );
  say(`   The bucket still holds ${remaining} objects under prod/. Absence is not deletion.`);

  step(8, "Doctor and repair: one safe command instead of the bug report's manual recovery");
  const { problems } = await doctor(ctx);
  for (const p of problems) {
    say(`   doctor: [${p.code}] ${p.message.slice(0, 150)}${p.message.length > 150 ? "..." : ""}`);
  }
  const dry = await repair(ctx, false);
  const s = dry.plan.summary;
  say(
    `   repair plan: ${s.moveIntoNamespace} moved into prod/ (proven identical to the remote copy, or the`,
  );
  say(
    `   only copy), ${s.removeRedundant} removed as duplicates, ${s.backup} set aside in .s3sync-repair/backup/.`,
  );
  const fixed = await repair(ctx, true);
  say(
    `   repair --apply: done; ${fixed.hydration?.downloaded ?? 0} files hydrated download-only,`,
  );
  say(
    `   then ${fixed.dedupedBackups} backups proven byte-identical to them removed. The bucket was not written.`,
  );
  say(
    `   doctor now: ${
      (await doctor(ctx)).problems.length === 0 ? "healthy" : "still has problems"
    }.`,
  );
  const after = await push(ctx, {});
  say(
    `   push: ${after.uploaded} uploaded, ${after.deleted} deleted, ${after.plan.blocked.length} guards fired.`,
  );

  say(
    `\n${
      bold("Done.")
    } The bucket is kept in .demo/s3 and the cache in .demo/cache for you to look at.`,
  );
  say(
    "Next: README.md shows the CLI against a real bucket, the library API, and the extension hook.",
  );
} finally {
  store.destroy();
  await server.stop();
}
