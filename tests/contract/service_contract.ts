/**
 * The sync service's contract, run against any client with the extension's methods: an
 * in-memory one (unit level) and the adapter on a real S3 server (moto).
 *
 * @module
 */
import { S3SyncService } from "../../js/extension/service.ts";
import type { ObjectStoreClient } from "../../js/io/s3.ts";
import { SyncError } from "../../js/core/errors.ts";
import { assert, assertEquals, assertRejects } from "../harness/assert.ts";
import { contentOf, datastoreRels, listTree } from "../harness/seed.ts";
import { writeCacheFiles } from "../harness/datastore.ts";
import { JOURNAL, JOURNAL_TAKEN } from "../../js/exec/context.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** A fresh client per test, and how to read what it holds. */
export interface ContractTarget {
  /** A name for test titles. */
  name: string;
  /** A fresh, empty bucket behind a client with the extension's methods. */
  client(): Promise<
    { client: ObjectStoreClient; keys(): Promise<string[]>; close(): Promise<void> }
  >;
}

async function seed(client: ObjectStoreClient, ns: string, rels: string[]): Promise<void> {
  const entries: Record<string, unknown> = {};
  for (const rel of rels) {
    await client.putObject(`${ns}/${rel}`, contentOf(rel));
    entries[rel] = {
      key: rel,
      size: contentOf(rel).length,
      lastModified: "2026-08-01T12:00:00.000Z",
    };
  }
  await client.putObject(
    `${ns}/.datastore-index.json`,
    encoder.encode(JSON.stringify({ version: 1, entries })),
  );
}

async function indexKeys(client: ObjectStoreClient, ns: string): Promise<string[]> {
  const { data } = await client.getObject(`${ns}/.datastore-index.json`);
  return Object.keys(JSON.parse(decoder.decode(data)).entries).sort();
}

/** Registers the contract's tests for `target`. */
export function serviceContract(target: ContractTarget): void {
  const test = (
    name: string,
    body: (
      client: ObjectStoreClient,
      cache: string,
      keys: () => Promise<string[]>,
    ) => Promise<void>,
  ) =>
    Deno.test(`service contract on ${target.name}: ${name}`, async () => {
      const { client, keys, close } = await target.client();
      const cache = await Deno.makeTempDir({ prefix: "s3sync-contract-" });
      try {
        await body(client, cache, keys);
      } finally {
        await close();
        await Deno.remove(cache, { recursive: true });
      }
    });

  test("pull then push of an unchanged cache uploads nothing", async (client, cache) => {
    const rels = datastoreRels(12);
    await seed(client, "ns", rels);
    const service = new S3SyncService(client, cache);
    assertEquals(await service.pullChanged({ namespace: "ns" }), 12);
    assertEquals(await service.pushChanged({ namespace: "ns" }), 0);
    assertEquals(await service.pullChanged({ namespace: "ns" }), 0);
  });

  test(
    "a file deleted after markDirty({relPath}) is deleted remotely, and only it",
    async (client, cache, keys) => {
      const rels = datastoreRels(12);
      await seed(client, "ns", rels);
      const service = new S3SyncService(client, cache);
      await service.pullChanged({ namespace: "ns" });
      await Deno.remove(`${cache}/ns/${rels[3]}`);
      await Deno.remove(`${cache}/ns/${rels[4]}`); // absent without evidence: kept remotely
      await service.markDirty({ relPath: `ns/${rels[3]}`, namespace: "ns" });
      assertEquals(await service.pushChanged({ namespace: "ns" }), 1);
      const remaining = await keys();
      assert(!remaining.includes(`ns/${rels[3]}`));
      assert(remaining.includes(`ns/${rels[4]}`));
      assertEquals(await indexKeys(client, "ns"), rels.filter((r) => r !== rels[3]).sort());
    },
  );

  test(
    "markDirty keeps another writer's rewrite of the sidecar, even one its stat cannot tell apart",
    async (client, cache) => {
      const service = new S3SyncService(client, cache);
      const sidecarPath = `${cache}/.datastore-sync-state.json`;
      await service.markDirty({ relPath: "logs/ours-1.log" });
      await service.markDirty({ relPath: "logs/ours-2.log" });
      // Another writer swaps one of our paths for its own of the same length and puts the old
      // mtime back: same size, same mtime, different bytes.
      const before = await Deno.stat(sidecarPath);
      const text = decoder.decode(await Deno.readFile(sidecarPath));
      const theirs = text.replaceAll("logs/ours-2.log", "logs/them-2.log");
      assertEquals(theirs.length, text.length);
      await Deno.writeTextFile(sidecarPath, theirs);
      await Deno.utime(sidecarPath, before.atime ?? new Date(), before.mtime ?? new Date());
      await service.markDirty({ relPath: "logs/ours-3.log" });
      const sidecar = JSON.parse(decoder.decode(await Deno.readFile(sidecarPath)));
      assertEquals(sidecar.s3syncTombstones, [
        "logs/ours-1.log",
        "logs/them-2.log",
        "logs/ours-3.log",
      ]);
      assertEquals(sidecar.dirtyPaths, sidecar.s3syncTombstones);
    },
  );

  test(
    "tombstones past the extension's cap go to the journal; the push deletes them and consumes it",
    async (client, cache, keys) => {
      const rels = datastoreRels(12);
      await seed(client, "ns", rels);
      const service = new S3SyncService(client, cache);
      await service.pullChanged({ namespace: "ns" });
      const sidecarPath = `${cache}/.datastore-sync-state.json`;
      // Up to the extension's cap of 200 dirty paths each call rewrites the sidecar, as the
      // extension does (these name files that were never there: evidence for nothing).
      for (let i = 0; i < 200; i++) await service.markDirty({ relPath: `ns/logs/none-${i}.log` });
      let sidecar = JSON.parse(decoder.decode(await Deno.readFile(sidecarPath)));
      assertEquals(sidecar.dirtyPaths.length, 200);
      assertEquals(sidecar.bulkInvalidated, false);
      assertEquals(await listTree(cache).then((t) => t.includes(JOURNAL)), false);
      // The 201st flips it to a walk of everything; from then on tombstones are appended.
      await service.markDirty({ relPath: "ns/logs/none-200.log" });
      sidecar = JSON.parse(decoder.decode(await Deno.readFile(sidecarPath)));
      assertEquals(sidecar.bulkInvalidated, true);
      const flipped = await Deno.readFile(sidecarPath);
      const gone = rels.slice(0, 5);
      for (const rel of gone) {
        await service.markDirty({ relPath: `ns/${rel}` });
        await Deno.remove(`${cache}/ns/${rel}`);
      }
      assertEquals(await Deno.readFile(sidecarPath), flipped, "the sidecar is left alone");
      const lines = (await Deno.readTextFile(`${cache}/${JOURNAL}`)).split("\n").filter(Boolean);
      assertEquals(lines.map((l) => JSON.parse(l)), gone.map((r) => `ns/${r}`));
      assertEquals(await service.pushChanged({ namespace: "ns" }), gone.length);
      const remaining = await keys();
      for (const rel of gone) assert(!remaining.includes(`ns/${rel}`), rel);
      for (const rel of rels.slice(gone.length)) assert(remaining.includes(`ns/${rel}`), rel);
      assert(!remaining.some((k) => k.includes(JOURNAL)), "the journal never travels");
      const tree = await listTree(cache);
      assert(!tree.includes(JOURNAL) && !tree.includes(JOURNAL_TAKEN), "consumed by the push");
      sidecar = JSON.parse(decoder.decode(await Deno.readFile(sidecarPath)));
      for (const rel of gone) assert(!(sidecar.s3syncTombstones ?? []).includes(`ns/${rel}`), rel);
      assertEquals(sidecar.localDirty, false);
      // Clean: the next pull brings nothing back and the next push deletes nothing more.
      assertEquals(await service.pullChanged({ namespace: "ns" }), 0);
      assertEquals(await service.pushChanged({ namespace: "ns" }), 0);
      assertEquals((await keys()).length, remaining.length);
    },
  );

  test(
    "a pull between markDirty and push keeps the journalled deletes; the push consumes them",
    async (client, cache, keys) => {
      const rels = datastoreRels(12);
      await seed(client, "ns", rels);
      const service = new S3SyncService(client, cache);
      await service.pullChanged({ namespace: "ns" });
      const gone = rels.slice(2, 5);
      for (const rel of gone) {
        await service.markDirty({ relPath: `ns/${rel}` });
        await Deno.remove(`${cache}/ns/${rel}`);
      }
      // The pull reads the journalled tombstones (the deletes are local changes: nothing comes
      // back) and, since unpushed changes keep it from vouching for the cache, writes no
      // sidecar and gives the journal back whole.
      assertEquals(await service.pullChanged({ namespace: "ns" }), 0);
      let tree = await listTree(cache);
      for (const rel of gone) assert(!tree.includes(`ns/${rel}`), `${rel} came back`);
      assert(!tree.includes(JOURNAL_TAKEN));
      assertEquals(await service.pushChanged({ namespace: "ns" }), gone.length);
      const remaining = await keys();
      for (const rel of gone) assert(!remaining.includes(`ns/${rel}`), rel);
      tree = await listTree(cache);
      assert(!tree.includes(JOURNAL) && !tree.includes(JOURNAL_TAKEN), "consumed by the push");
      // Now clean: a pull writes the sidecar, and the one after it is a no-op.
      assertEquals(await service.pullChanged({ namespace: "ns" }), 0);
      assertEquals(await service.pullChanged({ namespace: "ns" }), 0);
    },
  );

  test("no deletes while lazy hydration is active", async (client, cache, keys) => {
    const rels = datastoreRels(12);
    await seed(client, "ns", rels);
    const service = new S3SyncService(client, cache);
    await service.pullChanged({ namespace: "ns", metadataOnly: true });
    const present = rels.find((r) => !r.endsWith("/raw"))!;
    await Deno.remove(`${cache}/ns/${present}`);
    await service.markDirty({ relPath: `ns/${present}` });
    const error = await assertRejects(() => service.pushChanged({ namespace: "ns" }), SyncError);
    assertEquals((error as SyncError).code, "lazy-hydration");
    assert((await keys()).includes(`ns/${present}`));
    // The remedy the message names: a full pull, which does not bring the deleted file back
    // (its delete is not pushed yet), after which the delete goes.
    await service.pullChanged({ namespace: "ns" });
    assert(!(await listTree(cache)).includes(`ns/${present}`), "not brought back");
    assertEquals(await service.pushChanged({ namespace: "ns" }), 1);
    assert(!(await keys()).includes(`ns/${present}`));
  });

  test(
    "after a metadata-only pull, pushing new work succeeds and deletes nothing",
    async (client, cache, keys) => {
      const rels = datastoreRels(12);
      await seed(client, "ns", rels);
      const service = new S3SyncService(client, cache);
      await service.pullChanged({ namespace: "ns", metadataOnly: true });
      const left = rels.filter((r) => r.endsWith("/raw"));
      assert(left.length > 0, "the seed has raw files for the lazy pull to leave remote");
      await writeCacheFiles(cache, [["ns/logs/lazy.log", encoder.encode("new work")]]);
      assertEquals(await service.pushChanged({ namespace: "ns" }), 1);
      const after = await keys();
      assert(after.includes("ns/logs/lazy.log"));
      for (const rel of rels) assert(after.includes(`ns/${rel}`), `${rel} kept`);
      assertEquals(await indexKeys(client, "ns"), [...rels, "logs/lazy.log"].sort());
    },
  );

  test("a second namespace on the same instance throws", async (client, cache) => {
    await seed(client, "ns", datastoreRels(3));
    const service = new S3SyncService(client, cache);
    await service.pullChanged({ namespace: "ns" });
    const error = await assertRejects(() => service.pullChanged({ namespace: "other" }), SyncError);
    assertEquals((error as SyncError).code, "namespace-mismatch");
    assert(error.message.includes("Namespace mismatch"));
  });

  test(
    "calls without a namespace on a namespaced cache act on its namespace, never on the root",
    async (client, cache, keys) => {
      // Swamp core's access-token mint: markDirty() and pushChanged() with no namespace, in a
      // new process, on the cache it created for its namespace (marker included).
      const rels = datastoreRels(6);
      await seed(client, "team-a", rels);
      await new S3SyncService(client, cache).pullChanged({ namespace: "team-a" });
      await writeCacheFiles(cache, [
        ["team-a/.namespace.json", encoder.encode('{"namespace":"team-a"}')],
        ["team-a/auto-definitions/token/t1.yaml", encoder.encode("token: 1")],
      ]);
      const localIndexBefore = await Deno.readTextFile(`${cache}/.datastore-index.json`);
      const service = new S3SyncService(client, cache);
      await service.markDirty();
      assertEquals(await service.pushChanged(), 1);
      const after = await keys();
      assert(after.includes("team-a/auto-definitions/token/t1.yaml"), "pushed into the namespace");
      assert(!after.includes(".datastore-index.json"), "no root index published");
      assertEquals(
        await indexKeys(client, "team-a"),
        [...rels, "auto-definitions/token/t1.yaml"].sort(),
      );
      const localIndex = JSON.parse(await Deno.readTextFile(`${cache}/.datastore-index.json`));
      for (const rel of rels) assert(localIndex.entries[rel], `${rel} still in the local index`);
      assert(localIndexBefore.length > 0);
      // The same instance keeps acting on the namespace, named or not.
      assertEquals(await service.pullChanged({ namespace: "team-a" }), 0);
      assertEquals(await service.pullChanged(), 0);
    },
  );

  test(
    "a call without a namespace on a cache holding several namespaces is refused, writing nothing",
    async (client, cache, keys) => {
      await seed(client, "team-a", datastoreRels(3));
      await writeCacheFiles(cache, [
        ["team-a/.namespace.json", encoder.encode("{}")],
        ["team-b/.namespace.json", encoder.encode("{}")],
        ["team-a/data/new.yaml", encoder.encode("new")],
      ]);
      const before = await keys();
      const service = new S3SyncService(client, cache);
      const error = await assertRejects(() => service.pushChanged(), SyncError);
      assertEquals((error as SyncError).code, "namespace-required");
      assert(error.message.includes("team-a, team-b"), error.message);
      assertEquals(await keys(), before);
      // Named, the same instance works.
      assertEquals(await service.pushChanged({ namespace: "team-a" }), 1);
    },
  );

  test(
    "the catalog export swamp regenerates never conflicts: pulls take the bucket's, a shrink is held back with a warning",
    async (client, cache, keys) => {
      const rels = datastoreRels(4);
      await seed(client, "team-a", rels);
      const other = await Deno.makeTempDir({ prefix: "s3sync-contract-other-" });
      try {
        const rows = (n: number) =>
          encoder.encode(
            JSON.stringify(Array.from({ length: n }, (_, i) => ({ id: `m-${i}` })), null, 2) +
              "\n",
          );
        const a = new S3SyncService(client, cache);
        const b = new S3SyncService(client, other);
        await a.pullChanged({ namespace: "team-a" });
        await b.pullChanged({ namespace: "team-a" });
        // Both machines regenerate the export before pushing; A pushes first.
        await writeCacheFiles(cache, [["team-a/.catalog-export.json", rows(30)]]);
        await writeCacheFiles(other, [["team-a/.catalog-export.json", rows(31)]]);
        assertEquals(await a.pushChanged({ namespace: "team-a" }), 1);
        // B's push finds A's export in the bucket: B's is superseded, no conflict, no error.
        assertEquals(await b.pushChanged({ namespace: "team-a" }), 0);
        const { data } = await client.getObject("team-a/.catalog-export.json");
        assertEquals(data, rows(30));
        // B's pull takes the bucket's export in place of its own, with no conflict copy.
        assertEquals(await b.pullChanged({ namespace: "team-a" }), 1);
        assertEquals(await Deno.readFile(`${other}/team-a/.catalog-export.json`), rows(30));
        assert(!(await listTree(other)).some((f) => f.startsWith(".s3sync-conflicts/")));
        // A clone whose catalog is still empty exports `[]`: held back, told, not thrown.
        const told: string[] = [];
        const c = new S3SyncService(client, other, { log: (line) => told.push(line) });
        await writeCacheFiles(other, [["team-a/.catalog-export.json", encoder.encode("[]\n")]]);
        assertEquals(await c.pushChanged({ namespace: "team-a" }), 0);
        assert(told.some((line) => line.includes("[catalog-shrink]")), told.join("\n"));
        assertEquals((await client.getObject("team-a/.catalog-export.json")).data, rows(30));
        assert((await keys()).includes("team-a/.catalog-export.json"));
      } finally {
        await Deno.remove(other, { recursive: true });
      }
    },
  );

  test("hydrateFile of a namespaced rel lands under <cache>/<ns>/", async (client, cache) => {
    const rels = datastoreRels(6);
    await seed(client, "ns", rels);
    const service = new S3SyncService(client, cache);
    await service.pullChanged({ namespace: "ns", metadataOnly: true });
    const lazy = rels.find((r) => r.endsWith("/raw"))!;
    assertEquals(await service.hydrateFile(`ns/${lazy}`), true);
    assertEquals(await Deno.readFile(`${cache}/ns/${lazy}`), contentOf(lazy));
    assert(
      !(await listTree(cache)).some((f) => f.startsWith("data/")),
      "nothing at the cache root",
    );
    assertEquals(await service.hydrateFile("ns/data/none/x/y/raw"), false);
  });

  test(
    "hydrateFile never fills a namespaced file from a root object of the same name (it may be another namespace's)",
    async (client, cache, keys) => {
      const rels = datastoreRels(6);
      const lazy = rels.find((r) => r.endsWith("/raw"))!;
      // An object at the root under the same rel: the extension's bug #1250 could have put it
      // there, but so could a namespace whose name the rel begins with. Nothing names it ours.
      await client.putObject(lazy, contentOf(lazy));
      const service = new S3SyncService(client, cache);
      assertEquals(await service.hydrateFile(`ns/${lazy}`, { namespace: "ns" }), false);
      assert(!(await listTree(cache)).some((f) => f.endsWith(lazy)), "nothing written");
      assertEquals(await keys(), [lazy]);
    },
  );

  test(
    "hydrateFile never replaces a file that is there: one written before the call, or while it downloads",
    async (client, cache) => {
      const rels = datastoreRels(6);
      await seed(client, "ns", rels);
      const service = new S3SyncService(client, cache);
      await service.pullChanged({ namespace: "ns", metadataOnly: true });
      const [first, second] = rels.filter((r) => r.endsWith("/raw"));
      assert(first && second, "the seed has two lazy files");
      // Written here before swamp asked: local work, kept; the call says the file is there.
      const mine = encoder.encode("local work\n");
      await writeCacheFiles(cache, [[`ns/${first}`, mine]]);
      assertEquals(await service.hydrateFile(`ns/${first}`), true);
      assertEquals(await Deno.readFile(`${cache}/ns/${first}`), mine);
      // Written here while the object downloads (another swamp command): kept too.
      const racing = new Proxy(client, {
        get(target, name, receiver) {
          const value = Reflect.get(target, name, receiver);
          if (typeof value !== "function") return value;
          if (name !== "getObject" && name !== "getObjectStream") return value.bind(target);
          return async (key: string, ...rest: unknown[]) => {
            const got = await value.call(target, key, ...rest);
            if (key === `ns/${second}`) {
              await writeCacheFiles(cache, [[`ns/${second}`, mine]]);
            }
            return got;
          };
        },
      });
      const during = new S3SyncService(racing, cache);
      assertEquals(await during.hydrateFile(`ns/${second}`), true);
      assertEquals(await Deno.readFile(`${cache}/ns/${second}`), mine);
      assert(
        !(await listTree(cache)).some((f) => f.includes(".s3sync-tmp") || f.includes(".tmp")),
        "no temporary file left",
      );
    },
  );

  test("previewPush returns the plan pushChanged then executes", async (client, cache, keys) => {
    const rels = datastoreRels(12);
    await seed(client, "ns", rels);
    const service = new S3SyncService(client, cache);
    await service.pullChanged({ namespace: "ns" });
    await writeCacheFiles(cache, [["ns/logs/new.log", encoder.encode("new")]]);
    await Deno.remove(`${cache}/ns/${rels[1]}`);
    await service.markDirty({ relPath: `ns/${rels[1]}` });
    const preview = await service.previewPush({ namespace: "ns" });
    // Core's PushPreviewSummary fields, which `sync --push` prints before asking.
    assertEquals(
      {
        total: preview.total,
        new: preview.new,
        changed: preview.changed,
        deleted: preview.deleted,
      },
      { total: 2, new: 1, changed: 0, deleted: 1 },
    );
    assertEquals(preview.plan.uploads.map((u) => u.rel), ["logs/new.log"]);
    assertEquals(preview.plan.deletes.map((d) => d.rel), [rels[1]]);
    assertEquals(await service.pushChanged({ namespace: "ns" }), preview.total);
    const after = await keys();
    assert(after.includes("ns/logs/new.log") && !after.includes(`ns/${rels[1]}`));
  });

  test(
    "a mixed layout uploads the namespace tree and throws mixed-layout without deleting",
    async (client, cache, keys) => {
      const rels = datastoreRels(12);
      await seed(client, "ns", rels);
      await writeCacheFiles(cache, rels.map((rel) => [rel, contentOf(rel)]));
      await writeCacheFiles(cache, [["ns/logs/fresh.log", encoder.encode("fresh")]]);
      for (const rel of rels.slice(0, 5)) {
        await new S3SyncService(client, cache).markDirty({
          relPath: `ns/${rel}`,
        });
      }
      const service = new S3SyncService(client, cache);
      const error = await assertRejects(() => service.pushChanged({ namespace: "ns" }), SyncError);
      assertEquals((error as SyncError).code, "mixed-layout");
      const after = await keys();
      assert(after.includes("ns/logs/fresh.log"), "the namespace tree was uploaded");
      for (const rel of rels) assert(after.includes(`ns/${rel}`), `ns/${rel} was deleted`);
    },
  );

  test(
    "a cache in the extension's formats is picked up without re-downloading or re-uploading",
    async (client, cache) => {
      const rels = datastoreRels(10);
      await seed(client, "ns", rels);
      // What the extension leaves: files under ns/, its pretty local index with localMtime and
      // sha256 at the cache root, and a v2 sidecar with dirty paths.
      await writeCacheFiles(cache, rels.map((rel) => [`ns/${rel}`, contentOf(rel)]));
      const entries: Record<string, unknown> = {};
      for (const rel of rels) {
        const stat = await Deno.stat(`${cache}/ns/${rel}`);
        entries[rel] = {
          key: rel,
          size: stat.size,
          lastModified: "2026-08-01T12:00:00.000Z",
          localMtime: stat.mtime!.toISOString(),
        };
      }
      await Deno.writeTextFile(
        `${cache}/.datastore-index.json`,
        JSON.stringify({ version: 1, lastPulled: "2026-08-07T10:00:00.000Z", entries }, null, 2),
      );
      const head = await client.headObject("ns/.datastore-index.json");
      await Deno.writeTextFile(
        `${cache}/.datastore-sync-state.json`,
        JSON.stringify(
          {
            version: 2,
            remoteIndexETag: head.etag!.replaceAll('"', ""),
            lastVerifiedAt: new Date().toISOString(),
            localDirty: true,
            dirtyPaths: [`ns/${rels[0]}`],
            bulkInvalidated: false,
            lazyPullActive: false,
          },
          null,
          2,
        ),
      );
      const service = new S3SyncService(client, cache);
      assertEquals(await service.pullChanged({ namespace: "ns" }), 0);
      assertEquals(await service.pushChanged({ namespace: "ns" }), 0);
      assertEquals((await listTree(cache)).filter((f) => f.startsWith("ns/")).length, 10);
    },
  );
}
