/**
 * The entry limit on the index (issue 40): an index naming more entries than
 * `--max-index-entries` / `maxIndexEntries` is refused with `index-too-large` before anything is
 * downloaded or written, through the CLI (exit 3) and the service; raised to the index's size,
 * the same pull goes through. On s3s-fs.
 */
import { assert, assertEquals } from "../harness/assert.ts";
import { startServer } from "../harness/servers.ts";
import { writeCacheFiles } from "../harness/datastore.ts";
import { contentOf, datastoreRels } from "../harness/seed.ts";
import { commonFlags, runCliJson } from "../harness/cli.ts";
import { S3SyncService } from "../../js/extension/service.ts";
import { SyncError } from "../../js/core/errors.ts";

/** The files under `root`, relative, sorted (bookkeeping included). */
async function filesUnder(root: string): Promise<string[]> {
  const found: string[] = [];
  const walk = async (dir: string, rel: string) => {
    for await (const entry of Deno.readDir(dir)) {
      const path = rel ? `${rel}/${entry.name}` : entry.name;
      if (entry.isDirectory) await walk(`${dir}/${entry.name}`, path);
      else found.push(path);
    }
  };
  await walk(root, "");
  return found.sort();
}

Deno.test("an index past --max-index-entries stops a pull with index-too-large (exit 3), nothing written; at its size the pull goes through", async () => {
  const server = await startServer("s3s-fs");
  const store = await server.bucket("limit-cli");
  const work = await Deno.makeTempDir({ prefix: "s3sync-limit-" });
  try {
    const rels = datastoreRels(5);
    await writeCacheFiles(`${work}/seed`, rels.map((rel) => [rel, contentOf(rel)]));
    const seeded = await runCliJson(["push", ...commonFlags(server, "limit-cli", `${work}/seed`)]);
    assertEquals(seeded.code, 0, seeded.stderr);

    const cache = `${work}/clone`;
    await Deno.mkdir(cache);
    const refused = await runCliJson([
      "pull",
      ...commonFlags(server, "limit-cli", cache),
      "--max-index-entries",
      "4",
    ]);
    assertEquals(refused.code, 3, refused.stderr);
    assertEquals((refused.json.error as { code: string }).code, "index-too-large");
    const message = (refused.json.error as { message: string }).message;
    assert(message.includes("more than 4 entries"), message);
    assert(message.includes("--max-index-entries"), message);
    assertEquals(await filesUnder(cache), [], "nothing downloaded, no local index written");

    const pulled = await runCliJson([
      "pull",
      ...commonFlags(server, "limit-cli", cache),
      "--max-index-entries",
      "5",
    ]);
    assertEquals(pulled.code, 0, pulled.stderr);
    for (const rel of rels) {
      assertEquals(await Deno.readFile(`${cache}/${rel}`), contentOf(rel), rel);
    }

    const bad = await runCliJson([
      "pull",
      ...commonFlags(server, "limit-cli", cache),
      "--max-index-entries",
      "0",
    ]);
    assertEquals(bad.code, 2, "a limit of 0 is a usage error");
  } finally {
    store.destroy();
    await server.stop();
    await Deno.remove(work, { recursive: true });
  }
});

Deno.test("the service refuses an index past maxIndexEntries with index-too-large, and reads it at its size", async () => {
  const server = await startServer("s3s-fs");
  const store = await server.bucket("limit-service");
  const work = await Deno.makeTempDir({ prefix: "s3sync-limit-" });
  try {
    const rels = datastoreRels(3);
    await writeCacheFiles(`${work}/seed`, rels.map((rel) => [rel, contentOf(rel)]));
    await new S3SyncService(store, `${work}/seed`, { log: () => {} }).pushChanged();

    const cache = `${work}/clone`;
    const tight = new S3SyncService(store, cache, { log: () => {}, maxIndexEntries: 2 });
    let thrown: unknown;
    try {
      await tight.pullChanged();
    } catch (error) {
      thrown = error;
    }
    assert(thrown instanceof SyncError, String(thrown));
    assertEquals(thrown.code, "index-too-large");
    const loose = new S3SyncService(store, cache, { log: () => {}, maxIndexEntries: 3 });
    assertEquals(await loose.pullChanged(), 3);
  } finally {
    store.destroy();
    await server.stop();
    await Deno.remove(work, { recursive: true });
  }
});
