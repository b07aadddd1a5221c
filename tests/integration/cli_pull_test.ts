/**
 * The CLI's pull: killed half way it leaves no partial file under a final name and the next run
 * completes; the JSON contract; usage errors; rebuild-index dry and applied.
 */
import { assert, assertEquals } from "../harness/assert.ts";
import { commonFlags, runCli, runCliJson, spawnCli } from "../harness/cli.ts";
import { remoteIndexKeys, seedBucketWithIndex } from "../harness/datastore.ts";
import { contentOf, datastoreRels, listTree, putAll } from "../harness/seed.ts";
import { startServer } from "../harness/servers.ts";

async function countFiles(root: string): Promise<number> {
  return (await listTree(root)).filter((f) => f.startsWith("ns/")).length;
}

Deno.test("kill -9 during a CLI pull leaves no partial file under a final name; the re-run completes", async () => {
  const server = await startServer("s3s-fs");
  const store = await server.bucket("kill-pull");
  const cache = await Deno.makeTempDir({ prefix: "s3sync-kill-" });
  const flags = commonFlags(server, "kill-pull", cache, { namespace: "ns" });
  try {
    const rels = datastoreRels(1500);
    await putAll(store, rels.map((rel) => [`ns/${rel}`, contentOf(rel)]));
    const child = spawnCli(["pull", ...flags, "--concurrency", "4"]);
    for (let i = 0; i < 600 && (await countFiles(cache)) < 100; i++) {
      await new Promise((r) => setTimeout(r, 20));
    }
    child.kill("SIGKILL");
    const status = await child.status;
    await child.stdout.cancel();
    await child.stderr.cancel();
    assert(!status.success, "the pull was killed before it finished");
    const partial = (await listTree(cache)).filter((f) => f.startsWith("ns/"));
    assert(
      partial.length >= 100 && partial.length < rels.length,
      `${partial.length} files after the kill`,
    );
    for (const file of partial) {
      if (file.split("/").pop()!.startsWith(".s3sync-tmp-")) continue; // never a final name
      assertEquals(await Deno.readFile(`${cache}/${file}`), contentOf(file.slice(3)), file);
    }
    const rerun = await runCliJson(["pull", ...flags]);
    assertEquals(rerun.code, 0, rerun.stderr);
    const finals = (await listTree(cache))
      .filter((f) => f.startsWith("ns/") && !f.split("/").pop()!.startsWith(".s3sync-tmp-"));
    assertEquals(finals.sort(), rels.map((r) => `ns/${r}`).sort());
    assertEquals(await remoteIndexKeys(store, "ns"), [...rels].sort());
  } finally {
    store.destroy();
    await server.stop();
    await Deno.remove(cache, { recursive: true });
  }
});

Deno.test("pull --json prints the contract's summary; a second run is a no-op", async () => {
  const server = await startServer("moto");
  const store = await server.bucket("json-pull");
  const cache = await Deno.makeTempDir({ prefix: "s3sync-json-" });
  const flags = commonFlags(server, "json-pull", cache);
  try {
    const rels = datastoreRels(30);
    await putAll(store, rels.map((rel) => [rel, contentOf(rel)]));
    const first = await runCliJson(["pull", ...flags]);
    assertEquals(first.code, 0, first.stderr);
    assertEquals(first.json.summary, {
      upload: 0,
      download: 30,
      delete: 0,
      missing: 0,
      blocked: [],
    });
    const second = await runCliJson(["pull", ...flags]);
    assertEquals((second.json.summary as { download: number }).download, 0);
    assertEquals((second.json.report as { noop: boolean }).noop, true);
  } finally {
    store.destroy();
    await server.stop();
    await Deno.remove(cache, { recursive: true });
  }
});

Deno.test("usage errors exit 2 with a clear message and send nothing", async () => {
  const noBucket = await runCli(["pull", "--cache", "/tmp/never"]);
  assertEquals(noBucket.code, 2);
  assert(noBucket.stderr.includes("--bucket is required"), noBucket.stderr);
  const badNamespace = await runCliJson([
    "pull",
    "--bucket",
    "b",
    "--cache",
    "/tmp/never",
    "--namespace",
    "../x",
  ]);
  assertEquals(badNamespace.code, 2);
  assertEquals((badNamespace.json.error as { code: string }).code, "path-dot-segment");
  const unknown = await runCli(["frobnicate"]);
  assertEquals(unknown.code, 2);
  const badFlag = await runCli(["pull", "--bucket", "b", "--cache", "c", "--max-deletes", "-1"]);
  assertEquals(badFlag.code, 2);
});

Deno.test("rebuild-index is dry by default, publishes with --apply, and replaces only a corrupt index", async () => {
  const server = await startServer("moto");
  const store = await server.bucket("rebuild-cli");
  const cache = await Deno.makeTempDir({ prefix: "s3sync-rebuild-" });
  const flags = commonFlags(server, "rebuild-cli", cache, { namespace: "ns" });
  try {
    const rels = datastoreRels(25);
    await putAll(store, rels.map((rel) => [`ns/${rel}`, contentOf(rel)]));
    await putAll(store, [["ns/data/bad\\name/x/y/raw", new Uint8Array([1])]]);
    const dry = await runCliJson(["rebuild-index", ...flags]);
    // A key left out of the index is a problem for a person (exit 3), as a pull's rebuild says.
    assertEquals(dry.code, 3, dry.stderr);
    assertEquals((dry.json.report as { kept: number; skippedUnsafe: number }).kept, 25);
    assertEquals((dry.json.report as { skippedUnsafe: number }).skippedUnsafe, 1);
    assertEquals((await store.headObject("ns/.datastore-index.json")).exists, false);
    const human = await runCli(["rebuild-index", ...flags]);
    assert(human.stdout.includes("attention [unsafe-keys]: 1 bucket keys"), human.stdout);
    // Renamed away by a person: the rest of this test runs on a clean listing.
    await store.deleteObject("ns/data/bad\\name/x/y/raw");

    assertEquals((await runCli(["rebuild-index", ...flags, "--apply"])).code, 0);
    assertEquals(await remoteIndexKeys(store, "ns"), [...rels].sort());

    const again = await runCli(["rebuild-index", ...flags, "--apply"]);
    assertEquals(again.code, 3, "a valid index is not replaced without --force");

    await store.putObject("ns/.datastore-index.json", new TextEncoder().encode("{not json"));
    const pullCorrupt = await runCliJson(["pull", ...flags]);
    assertEquals(pullCorrupt.code, 1);
    assertEquals((pullCorrupt.json.error as { code: string }).code, "index-corrupt");
    assertEquals((await runCli(["rebuild-index", ...flags, "--apply"])).code, 0);
    assertEquals(await remoteIndexKeys(store, "ns"), [...rels].sort());
  } finally {
    store.destroy();
    await server.stop();
    await Deno.remove(cache, { recursive: true });
  }
});

Deno.test("without --namespace the CLI refuses a namespaced cache and a bucket read with too short a prefix, writing nothing", async () => {
  const server = await startServer("moto");
  const store = await server.bucket("unnamed");
  const cache = await Deno.makeTempDir({ prefix: "s3sync-unnamed-" });
  const fresh = await Deno.makeTempDir({ prefix: "s3sync-unnamed-fresh-" });
  try {
    const rels = datastoreRels(5);
    await putAll(store, rels.map((rel) => [`swamp/prod/${rel}`, contentOf(rel)]));
    const named = commonFlags(server, "unnamed", cache, { prefix: "swamp", namespace: "prod" });
    assertEquals((await runCliJson(["pull", ...named])).code, 0);
    await Deno.writeTextFile(`${cache}/prod/.namespace.json`, '{"namespace":"prod"}');
    const keysBefore = (await store.listAllObjects("")).map((o) => o.key).sort();
    // A namespaced cache, no --namespace: refused before any request, naming what to pass.
    for (const command of ["pull", "push", "plan", "doctor"]) {
      const unnamed = commonFlags(server, "unnamed", cache, { prefix: "swamp" });
      const result = await runCliJson([command, ...unnamed]);
      assertEquals(result.code, 2, `${command}: ${result.stderr}`);
      const error = result.json.error as { code: string; message: string };
      assertEquals(error.code, "namespace-required", command);
      assert(error.message.includes("--namespace prod"), error.message);
    }
    // A fresh cache and no prefix: the listing holds `swamp/prod/.datastore-index.json`, another
    // datastore's index, and the rebuild stops instead of indexing it as data.
    const bare = await runCliJson(["pull", ...commonFlags(server, "unnamed", fresh)]);
    assertEquals(bare.code, 2, bare.stderr);
    const error = bare.json.error as { code: string; message: string };
    assertEquals(error.code, "nested-datastore");
    assert(error.message.includes("swamp/prod/.datastore-index.json"), error.message);
    assertEquals((await store.listAllObjects("")).map((o) => o.key).sort(), keysBefore);
    assertEquals(await listTree(fresh), []);
  } finally {
    store.destroy();
    await server.stop();
    await Deno.remove(cache, { recursive: true });
    await Deno.remove(fresh, { recursive: true });
  }
});

Deno.test("temporary files a killed run left are reported by doctor (a problem once an hour old, a note before) and removed by the next walk (a push) once an hour old", async () => {
  const server = await startServer("s3s-fs");
  const store = await server.bucket("leftover-temps");
  const cache = await Deno.makeTempDir({ prefix: "s3sync-leftover-" });
  try {
    const rels = datastoreRels(4);
    await putAll(store, rels.map((rel) => [`ns/${rel}`, contentOf(rel)]));
    const flags = commonFlags(server, "leftover-temps", cache, { namespace: "ns" });
    assertEquals((await runCliJson(["pull", ...flags])).code, 0);
    // What a killed pull leaves: a staged file never renamed; one old, one fresh.
    const folder = `${cache}/ns/${rels[0].slice(0, rels[0].lastIndexOf("/"))}`;
    const old = `${folder}/.s3sync-tmp-killed`;
    const fresh = `${folder}/.s3sync-tmp-running`;
    await Deno.writeTextFile(old, "half a file");
    await Deno.writeTextFile(fresh, "being written");
    const twoHoursAgo = new Date(Date.now() - 2 * 3_600_000);
    await Deno.utime(old, twoHoursAgo, twoHoursAgo);
    // Only the hour-old one is a problem; the fresh one (a live run's, for all doctor knows)
    // is a note and never changes the exit code.
    const doctor = await runCliJson(["doctor", ...flags]);
    assertEquals(doctor.code, 3, doctor.stdout);
    const problems = doctor.json.problems as { code: string; message: string }[];
    assertEquals(problems.map((p) => p.code), ["leftover-temp-files"]);
    assert(problems[0].message.startsWith("1 temporary files"), problems[0].message);
    assert(problems[0].message.includes(".s3sync-tmp-killed"), problems[0].message);
    const notes = doctor.json.notes as { code: string; message: string }[];
    assertEquals(notes.map((n) => n.code), ["recent-temp-files"]);
    assert(notes[0].message.includes(".s3sync-tmp-running"), notes[0].message);
    // A no-op pull sends one HEAD and walks nothing; the next push walks the cache.
    assertEquals((await runCli(["push", ...flags, "--yes"])).code, 0);
    const left = [...Deno.readDirSync(folder)].map((e) => e.name).filter((n) =>
      n.startsWith(".s3sync-tmp-")
    );
    assertEquals(left, [".s3sync-tmp-running"], "the old one removed, the fresh one left");
    // What is left is a note only: a re-run right after a kill leaves the cache healthy.
    const after = await runCliJson(["doctor", ...flags]);
    assertEquals(after.code, 0, after.stdout);
    assertEquals((after.json.notes as { code: string }[]).map((n) => n.code), [
      "recent-temp-files",
    ]);
    const text = await runCli(["doctor", ...flags]);
    assertEquals(text.code, 0, text.stdout);
    assert(text.stdout.includes("Doctor: healthy."), text.stdout);
    assert(text.stdout.includes("note [recent-temp-files]"), text.stdout);
  } finally {
    store.destroy();
    await server.stop();
    await Deno.remove(cache, { recursive: true });
  }
});

Deno.test("on moto, an index whose objects are not there stops the pull past --max-missing, prunes only what it confirmed, and 0 reads every entry", async () => {
  const server = await startServer("moto");
  const store = await server.bucket("missing-breaker");
  const cache = await Deno.makeTempDir({ prefix: "s3sync-missing-breaker-" });
  try {
    const rels = datastoreRels(80);
    // The index names 80 objects; the bucket holds none of them (a hostile index, a wrong
    // prefix, a lifecycle rule that removed them).
    await seedBucketWithIndex(store, rels, "ns");
    for (const rel of rels) await store.deleteObject(`ns/${rel}`);
    const flags = commonFlags(server, "missing-breaker", cache, { namespace: "ns" });

    const stopped = await runCliJson([
      "pull",
      ...flags,
      "--max-missing",
      "5",
      "--concurrency",
      "1",
    ]);
    assertEquals(stopped.code, 1, stopped.stdout + stopped.stderr);
    const report = stopped.json.report as {
      notFound: string[];
      failures: { item: string; code: string; message: string }[];
    };
    // Five confirmed and pruned; the sixth trips the breaker, and the pool stops after the
    // failures in a row that follow: the rest is never read.
    assertEquals(report.notFound.length, 5, JSON.stringify(report.notFound));
    const codes = new Set(report.failures.map((f) => f.code));
    assertEquals([...codes].sort(), ["not-attempted", "objects-missing"]);
    const tripped = report.failures.find((f) => f.code === "objects-missing")!;
    assert(tripped.message.includes("--max-missing 0"), tripped.message);
    assertEquals(report.notFound.length + report.failures.length, rels.length);
    assertEquals((await remoteIndexKeys(store, "ns")).length, rels.length - 5, "only those pruned");

    const all = await runCliJson(["pull", ...flags, "--max-missing", "0"]);
    assertEquals(all.code, 0, all.stdout + all.stderr);
    assertEquals((all.json.report as { notFound: string[] }).notFound.length, rels.length - 5);
    assertEquals(await remoteIndexKeys(store, "ns"), []);

    const usage = await runCli(["pull", ...flags, "--max-missing", "-1"]);
    assertEquals(usage.code, 2, usage.stderr);
  } finally {
    store.destroy();
    await server.stop();
    await Deno.remove(cache, { recursive: true });
  }
});
