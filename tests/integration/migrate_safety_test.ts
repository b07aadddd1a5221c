/**
 * The two ways `migrate` lost data (issue 13, findings 3 and 4), against moto:
 *
 * - a namespaced object newer than its solo original was overwritten by the old solo copy, while
 *   the namespace's index kept the newer size (peers' pulls failed, the writer saw nothing to
 *   re-upload) — now a `conflict`: both kept, reported in the dry run and the run, exit 3;
 * - with no solo index, the copies were indexed nowhere and `--remove-originals` removed the
 *   originals anyway — now the copies are indexed from a listing of them, and an original goes
 *   only once its copy is in the namespace's index.
 */
import { assert, assertEquals } from "../harness/assert.ts";
import { commonFlags, runCli, runCliJson } from "../harness/cli.ts";
import { bucketKeys, sha256Hex } from "../harness/datastore.ts";
import { listTree } from "../harness/seed.ts";
import { startServer } from "../harness/servers.ts";
import { S3Store } from "../../js/io/s3.ts";
import { DenoCacheFs } from "../../js/io/cache_fs.ts";
import { Planner } from "../../js/core/mod.ts";
import { migrateToShards } from "../../js/ops/shards.ts";
import { migrateRemote } from "../../js/ops/migrate.ts";

const encoder = new TextEncoder();

/** Puts `files` (rel → text) under `under` and, unless `index` is false, an index naming them. */
async function seedLayout(
  store: S3Store,
  under: string,
  files: Record<string, string>,
  index = true,
): Promise<void> {
  const entries: Record<string, unknown> = {};
  for (const [rel, text] of Object.entries(files)) {
    const data = encoder.encode(text);
    await store.putObject(`${under}${rel}`, data);
    entries[rel] = {
      key: rel,
      size: data.length,
      lastModified: "2026-08-01T12:00:00.000Z",
      sha256: await sha256Hex(data),
    };
  }
  if (!index) return;
  const body = JSON.stringify({ version: 1, lastPulled: "2026-08-07T10:00:00.000Z", entries });
  await store.putObject(`${under}.datastore-index.json`, encoder.encode(body));
}

async function indexEntries(
  store: S3Store,
  under: string,
): Promise<Record<string, { size: number }>> {
  const { data } = await store.getObject(`${under}.datastore-index.json`);
  return JSON.parse(new TextDecoder().decode(data)).entries;
}

async function text(store: S3Store, key: string): Promise<string> {
  return new TextDecoder().decode((await store.getObject(key)).data);
}

interface Conflict {
  code: string;
  rel: string;
  to: string;
}

Deno.test("migrate keeps a newer namespaced object: a conflict in the dry run and the run, exit 3, original kept", async () => {
  const server = await startServer("moto");
  const store = await server.bucket("migrate-conflict");
  const cache = await Deno.makeTempDir({ prefix: "s3sync-migrate-conflict-" });
  const peer = await Deno.makeTempDir({ prefix: "s3sync-migrate-peer-" });
  try {
    const oldSolo = "old solo v1\n"; // 12 B
    const newer = "newer namespaced copy, written after the split\n".slice(0, 46); // 46 B
    assertEquals([oldSolo.length, newer.length], [12, 46]);
    await seedLayout(store, "", { "logs/x.log": oldSolo, "logs/y.log": "only solo\n" });
    await seedLayout(store, "prod/", { "logs/x.log": newer });
    const ns = commonFlags(server, "migrate-conflict", cache, { namespace: "prod" });

    // The dry run tells the truth: one to copy, one conflict.
    const dry = await runCliJson(["migrate", ...ns]);
    assertEquals(dry.code, 3, `a conflict needs a person: ${dry.stdout}${dry.stderr}`);
    const dryPlan = dry.json.plan as { summary: { toCopy: number }; conflicts: Conflict[] };
    assertEquals(dryPlan.summary.toCopy, 1);
    assertEquals(
      dryPlan.conflicts.map((c) => [c.code, c.rel, c.to]),
      [["conflict", "logs/x.log", "prod/logs/x.log"]],
    );
    const dryHuman = await runCli(["migrate", ...ns]);
    assertEquals(dryHuman.code, 3);
    assert(
      dryHuman.stdout.includes("1 conflict") && dryHuman.stdout.includes("prod/logs/x.log"),
      `the human dry run names the conflict:\n${dryHuman.stdout}`,
    );

    const applied = await runCliJson(["migrate", ...ns, "--apply"]);
    assertEquals(applied.code, 3, `${applied.stdout}${applied.stderr}`);
    assertEquals(applied.json.copied, 1);
    assertEquals(
      (applied.json.conflicts as Conflict[]).map((c) => [c.code, c.rel]),
      [["conflict", "logs/x.log"]],
    );
    assertEquals(await text(store, "prod/logs/x.log"), newer, "the newer object is kept");
    assertEquals(await text(store, "prod/logs/y.log"), "only solo\n");
    const nsIndex = await indexEntries(store, "prod/");
    assertEquals(nsIndex["logs/x.log"].size, 46);
    assertEquals(nsIndex["logs/y.log"].size, "only solo\n".length);

    const human = await runCli(["migrate", ...ns, "--apply", "--remove-originals"]);
    assertEquals(human.code, 3, `${human.stdout}${human.stderr}`);
    assert(
      human.stdout.includes("1 conflict kept: prod/logs/x.log differs from the solo copy"),
      `the run names the conflict:\n${human.stdout}`,
    );
    assertEquals(await text(store, "logs/x.log"), oldSolo, "a conflicting original is kept");
    assertEquals(await bucketKeys(store, "logs/y.log"), [], "a verified, indexed original goes");
    assert("logs/x.log" in await indexEntries(store, ""), "the solo index still names it");

    // A peer's pull of the namespace gets both files, at the sizes the index names.
    const pulled = await runCliJson([
      "pull",
      ...commonFlags(server, "migrate-conflict", peer, {
        namespace: "prod",
      }),
    ]);
    assertEquals(pulled.code, 0, `${pulled.stdout}${pulled.stderr}`);
    assertEquals(await Deno.readTextFile(`${peer}/prod/logs/x.log`), newer);
    assertEquals(await Deno.readTextFile(`${peer}/prod/logs/y.log`), "only solo\n");
  } finally {
    store.destroy();
    await server.stop();
    await Deno.remove(cache, { recursive: true });
    await Deno.remove(peer, { recursive: true });
  }
});

Deno.test("migrate --remove-originals with no solo index indexes the copies first; a pull brings them down", async () => {
  const server = await startServer("moto");
  const store = await server.bucket("migrate-noindex");
  const cache = await Deno.makeTempDir({ prefix: "s3sync-migrate-noindex-" });
  const peer = await Deno.makeTempDir({ prefix: "s3sync-migrate-noindex-peer-" });
  try {
    const files = {
      "logs/run-1.log": "first run\n",
      "data/aws/ec2/vpc/m-1/state/1/raw": "state of m-1\n",
    };
    await seedLayout(store, "", files, false);
    const ns = commonFlags(server, "migrate-noindex", cache, { namespace: "prod" });

    const applied = await runCliJson(["migrate", ...ns, "--apply", "--remove-originals"]);
    assertEquals(applied.code, 0, `${applied.stdout}${applied.stderr}`);
    assertEquals(applied.json.indexed, 2, "the copies are indexed from their listing");
    assertEquals(applied.json.removed, 2);
    assertEquals(
      Object.keys(await indexEntries(store, "prod/")).sort(),
      Object.keys(files).sort(),
    );
    assertEquals(await bucketKeys(store, "logs/"), []);
    assertEquals(await bucketKeys(store, "data/"), []);

    const pulled = await runCliJson([
      "pull",
      ...commonFlags(server, "migrate-noindex", peer, {
        namespace: "prod",
      }),
    ]);
    assertEquals(pulled.code, 0, `${pulled.stdout}${pulled.stderr}`);
    assertEquals(
      (await listTree(peer)).filter((p) => p.startsWith("prod/") && !p.includes("/.")).sort(),
      Object.keys(files).map((rel) => `prod/${rel}`).sort(),
    );
    for (const [rel, body] of Object.entries(files)) {
      assertEquals(await Deno.readTextFile(`${peer}/prod/${rel}`), body);
    }
  } finally {
    store.destroy();
    await server.stop();
    await Deno.remove(cache, { recursive: true });
    await Deno.remove(peer, { recursive: true });
  }
});

Deno.test("migrate refuses a namespace on the sharded (v2) index: nothing copied or removed", async () => {
  const server = await startServer("moto");
  const store = await server.bucket("migrate-v2");
  const cache = await Deno.makeTempDir({ prefix: "s3sync-migrate-v2-" });
  try {
    await seedLayout(store, "", { "logs/a.log": "solo a\n" });
    await seedLayout(store, "prod/", { "logs/b.log": "namespaced b\n" });
    // The namespace moved to shards (what the service's migrateMonolithToShards does).
    const planner = new Planner("prod", undefined);
    try {
      await migrateToShards({ store, cache: new DenoCacheFs(cache), namespace: "prod" }, planner);
    } finally {
      planner.free();
    }
    const before = await bucketKeys(store, "");
    const result = await runCliJson([
      "migrate",
      ...commonFlags(server, "migrate-v2", cache, { namespace: "prod" }),
      "--apply",
      "--remove-originals",
    ]);
    assertEquals(result.code, 3, `${result.stdout}${result.stderr}`);
    assertEquals((result.json.error as { code: string }).code, "migrate-v2-unsupported");
    assertEquals(await bucketKeys(store, ""), before, "the bucket is exactly as it was");
  } finally {
    await Deno.remove(cache, { recursive: true });
    await server.stop();
  }
});

Deno.test("migrate --remove-originals keeps an original rewritten after its copy: a conflict failure, the new bytes stay", async () => {
  const server = await startServer("moto");
  const store = await server.bucket("migrate-late-write");
  const cache = await Deno.makeTempDir({ prefix: "s3sync-migrate-late-" });
  try {
    await seedLayout(store, "", { "logs/a.log": "solo a\n", "logs/b.log": "solo b\n" });
    // Another writer rewrites logs/b.log once the copies are made, before the originals go.
    const migrating = new S3Store(server.storeOptions("migrate-late-write"));
    const head = migrating.headObject.bind(migrating);
    let copied = false;
    const copy = migrating.copyObject.bind(migrating);
    migrating.copyObject = async (from, to, signal) => {
      await copy(from, to, signal);
      copied = true;
    };
    migrating.headObject = async (key, signal) => {
      if (copied && key === "logs/b.log") await store.putObject(key, encoder.encode("newer b\n"));
      return await head(key, signal);
    };
    const report = await migrateRemote(
      { store: migrating, cache: new DenoCacheFs(cache), namespace: "prod", log: () => {} },
      { apply: true, removeOriginals: true },
    );
    migrating.destroy();
    assertEquals(report.failures.map((f) => [f.item, f.code]), [["logs/b.log", "conflict"]]);
    assertEquals(await text(store, "logs/b.log"), "newer b\n");
    assertEquals(await text(store, "prod/logs/b.log"), "solo b\n");
    assertEquals((await store.headObject("logs/a.log")).exists, false, "the unchanged one went");
  } finally {
    await server.stop();
    await Deno.remove(cache, { recursive: true });
  }
});

Deno.test("migrate publishes each index under the lock its layout's writers take: the namespace's, then the solo one", async () => {
  const server = await startServer("moto");
  const store = await server.bucket("migrate-locks");
  const cache = await Deno.makeTempDir({ prefix: "s3sync-migrate-locks-" });
  try {
    await seedLayout(store, "", { "logs/a.log": "solo a\n" });
    const migrating = new S3Store(server.storeOptions("migrate-locks"));
    const locks = [".locks/prod.lock", ".datastore.lock"];
    const heldAt: [string, string[]][] = [];
    const put = migrating.putObjectIfMatch.bind(migrating);
    migrating.putObjectIfMatch = async (key, body, etag, signal) => {
      if (key.endsWith(".datastore-index.json")) {
        const held = [];
        for (const lock of locks) if ((await store.headObject(lock)).exists) held.push(lock);
        heldAt.push([key, held]);
      }
      return await put(key, body, etag, signal);
    };
    const report = await migrateRemote(
      { store: migrating, cache: new DenoCacheFs(cache), namespace: "prod", log: () => {} },
      { apply: true, removeOriginals: true },
    );
    migrating.destroy();
    assertEquals(report.failures, []);
    assertEquals(heldAt, [
      ["prod/.datastore-index.json", [".locks/prod.lock"]],
      [".datastore-index.json", [".datastore.lock"]],
    ]);
    for (const lock of locks) assertEquals((await store.headObject(lock)).exists, false);
  } finally {
    await server.stop();
    await Deno.remove(cache, { recursive: true });
  }
});
