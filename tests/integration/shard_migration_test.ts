/**
 * Moving the index to the v2 shard-first layout writes nothing unconditionally: each shard over
 * the copy a HEAD finds, the monolith `If-Match` the copy the shards were cut from, the meta
 * last over the copy a HEAD finds (the v1 mirror's). A v1 push that lands while the shards are written makes the migration
 * publish nothing (`publish-conflict`); run again, it carries that push's file. On s3s-fs and
 * moto, through the real SDK.
 */
import { assert, assertEquals, assertRejects } from "../harness/assert.ts";
import { startServer } from "../harness/servers.ts";
import { writeCacheFiles } from "../harness/datastore.ts";
import { S3Store } from "../../js/io/s3.ts";
import { DenoCacheFs } from "../../js/io/cache_fs.ts";
import { Planner } from "../../js/core/mod.ts";
import { SyncError } from "../../js/core/errors.ts";
import { migrateToShards } from "../../js/ops/shards.ts";
import { push } from "../../js/ops/push.ts";
import { pull } from "../../js/ops/pull.ts";

const encode = (text: string) => new TextEncoder().encode(text);

for (const kind of ["s3s-fs", "moto"] as const) {
  Deno.test(`on ${kind}, a v1 push during the move to shards makes it publish nothing, and the next move carries that push`, async () => {
    const server = await startServer(kind);
    const admin = await server.bucket("shards");
    const a = await Deno.makeTempDir({ prefix: "s3sync-shards-a-" });
    const b = await Deno.makeTempDir({ prefix: "s3sync-shards-b-" });
    const fresh = await Deno.makeTempDir({ prefix: "s3sync-shards-c-" });
    const store = new S3Store(server.storeOptions("shards"));
    const migrate = async (s: S3Store) => {
      const planner = new Planner(undefined, undefined);
      try {
        return await migrateToShards(
          { store: s, cache: new DenoCacheFs(a), log: () => {} },
          planner,
        );
      } finally {
        planner.free();
      }
    };
    try {
      await writeCacheFiles(a, [["logs/a.log", encode("a")], ["logs/x.log", encode("x")]]);
      await writeCacheFiles(b, [["logs/b.log", encode("b")]]);
      assertEquals((await push({ store, cache: new DenoCacheFs(a), log: () => {} })).uploaded, 2);
      await pull({ store, cache: new DenoCacheFs(b), log: () => {} });

      // B pushes (v1) while the first shard is written.
      const racing = new S3Store(server.storeOptions("shards"));
      const putIfMatch = racing.putObjectIfMatch.bind(racing);
      let raced = false;
      racing.putObjectIfMatch = async (key, body, etag, signal) => {
        if (!raced && key.startsWith("_index/") && !key.endsWith("_meta.json")) {
          raced = true;
          const report = await push({ store, cache: new DenoCacheFs(b), log: () => {} });
          assertEquals(report.uploaded, 1);
        }
        return await putIfMatch(key, body, etag, signal);
      };
      const error = await assertRejects(() => migrate(racing), SyncError);
      assertEquals((error as SyncError).code, "publish-conflict", (error as Error).message);
      racing.destroy();
      assert(raced);
      // No v2 meta: at most the v1 mirror's, which v1 pushes write.
      const mirror = await admin.headObject("_index/_meta.json");
      if (mirror.exists) {
        const meta = JSON.parse(
          new TextDecoder().decode((await admin.getObject("_index/_meta.json")).data),
        );
        assertEquals(meta.version, 1, "no v2 meta");
      }
      const monolith = JSON.parse(
        new TextDecoder().decode((await admin.getObject(".datastore-index.json")).data),
      );
      assert(monolith.entries["logs/b.log"], "B's push stays in the monolith");

      // Again, with nobody in the way: the leftover shards are replaced, B's file is in v2.
      const moved = await migrate(store);
      assertEquals(moved.version, 2);
      const meta = JSON.parse(
        new TextDecoder().decode((await admin.getObject("_index/_meta.json")).data),
      );
      assertEquals(meta.version, 2);
      const report = await pull({ store, cache: new DenoCacheFs(fresh), log: () => {} });
      assertEquals(report.downloaded, 3);
      assertEquals(await Deno.readTextFile(`${fresh}/logs/b.log`), "b");
      // A second move reports the set it finds.
      assertEquals((await migrate(store)).commitSeq, meta.commitSeq);
    } finally {
      store.destroy();
      await server.stop();
      for (const dir of [a, b, fresh]) await Deno.remove(dir, { recursive: true });
    }
  });
}
