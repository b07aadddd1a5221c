/**
 * A contamination repair removes a foreign copy only while it is the version the listing proved
 * identical to its home copy: `If-Match` its listed ETag. A copy another writer replaced in
 * between stays and is reported `changed-since-listing`. On s3s-fs and moto, through the real SDK.
 */
import { assertEquals } from "../harness/assert.ts";
import { startServer } from "../harness/servers.ts";
import { S3Store } from "../../js/io/s3.ts";
import { DenoCacheFs } from "../../js/io/cache_fs.ts";
import { repairContamination } from "../../js/ops/contamination.ts";

const encode = (text: string) => new TextEncoder().encode(text);

for (
  const [kind, late] of [["s3s-fs", false], ["moto", false], ["moto", true]] as const
) {
  const when = late ? "between its HEAD and its DELETE" : "after the listing";
  Deno.test(`on ${kind}, a foreign copy replaced ${when} is kept and reported, a proven one goes`, async () => {
    const server = await startServer(kind);
    const admin = await server.bucket("contaminated");
    const cache = await Deno.makeTempDir({ prefix: "s3sync-contaminated-" });
    const store = new S3Store(server.storeOptions("contaminated"));
    try {
      for (
        const [key, text] of [
          ["dev/.namespace.json", "{}"],
          ["prod/.namespace.json", "{}"],
          ["dev/logs/a.log", "same a"],
          ["prod/dev/logs/a.log", "same a"],
          ["dev/logs/b.log", "same b"],
          ["prod/dev/logs/b.log", "same b"],
        ]
      ) await admin.putObject(key, encode(text));
      // Another writer replaces one proven copy after the listing: before the HEAD that
      // precedes its delete, or (moto, which honours If-Match on DELETE; s3s-fs ignores it,
      // the window the extension's client always has) between that HEAD and the DELETE.
      const replace = async (key: string) => {
        if (key === "prod/dev/logs/b.log") await admin.putObject(key, encode("theirs, new"));
      };
      if (late) {
        const deleteIfMatch = store.deleteObjectIfMatch.bind(store);
        store.deleteObjectIfMatch = async (key, etag, signal) => {
          await replace(key);
          return await deleteIfMatch(key, etag, signal);
        };
      } else {
        // Once the copies are judged (the bound index is read next), not at a HEAD that
        // proves them where the listing has no ETags.
        let judged = false;
        const get = store.getObject.bind(store);
        store.getObject = (key, signal) => {
          if (key === "prod/.datastore-index.json") judged = true;
          return get(key, signal);
        };
        const head = store.headObject.bind(store);
        store.headObject = async (key, signal) => {
          if (judged) await replace(key);
          return await head(key, signal);
        };
      }
      const summary = await repairContamination(
        { store, cache: new DenoCacheFs(cache), namespace: "prod", log: () => {} },
        false,
      );
      assertEquals(summary.totalForeignObjects, 2);
      assertEquals(summary.deleted, 1);
      assertEquals(summary.kept, [{ key: "prod/dev/logs/b.log", reason: "changed-since-listing" }]);
      assertEquals((await admin.headObject("prod/dev/logs/a.log")).exists, false);
      assertEquals(
        new TextDecoder().decode((await admin.getObject("prod/dev/logs/b.log")).data),
        "theirs, new",
      );
    } finally {
      store.destroy();
      await server.stop();
      await Deno.remove(cache, { recursive: true });
    }
  });
}
