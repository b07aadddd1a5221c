/**
 * The catalog export's upload is conditional on the copy its HEAD saw, like every write to the
 * bucket: another writer's copy put there in between stays and the call fails with `conflict`,
 * and a retried write whose first answer was lost is success. On s3s-fs and moto, through the
 * real SDK.
 */
import { assertEquals, assertRejects } from "../harness/assert.ts";
import { startServer } from "../harness/servers.ts";
import { S3Store } from "../../js/io/s3.ts";
import { SyncError } from "../../js/core/errors.ts";
import { exportCatalog } from "../../js/extension/catalog.ts";

const encode = (text: string) => new TextEncoder().encode(text);
const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
const KEY = "prod/.catalog-export.json";

for (const kind of ["s3s-fs", "moto"] as const) {
  Deno.test(`on ${kind}, a catalog export another writer replaced or created after the HEAD stays, and the call fails with conflict`, async () => {
    const server = await startServer(kind);
    await server.bucket("catalog");
    const store = new S3Store(server.storeOptions("catalog"));
    const other = new S3Store(server.storeOptions("catalog"));
    try {
      // Created after our HEAD found nothing: our create-only write loses.
      const head = store.headObject.bind(store);
      let race: (() => Promise<unknown>) | undefined = () =>
        other.putObject(KEY, encode('["theirs, first"]'));
      store.headObject = async (key, signal) => {
        const seen = await head(key, signal);
        await race?.();
        race = undefined;
        return seen;
      };
      const created = await assertRejects(
        () => exportCatalog(store, "prod", encode('["ours"]')),
        SyncError,
      );
      assertEquals((created as SyncError).code, "conflict");
      assertEquals(decode((await other.getObject(KEY)).data), '["theirs, first"]');

      // Replaced after our HEAD saw it: our If-Match write loses.
      race = () => other.putObject(KEY, encode('["theirs, second"]'));
      const replaced = await assertRejects(
        () => exportCatalog(store, "prod", encode('["ours, again"]')),
        SyncError,
      );
      assertEquals((replaced as SyncError).code, "conflict");
      assertEquals(decode((await other.getObject(KEY)).data), '["theirs, second"]');

      // Nobody in between: it replaces the copy it saw.
      assertEquals(await exportCatalog(store, "prod", encode('["ours, at last"]')), true);
      assertEquals(decode((await other.getObject(KEY)).data), '["ours, at last"]');
    } finally {
      store.destroy();
      other.destroy();
      await server.stop();
    }
  });

  Deno.test(`on ${kind}, a catalog export whose first write landed but whose answer was lost is success on the retry`, async () => {
    const server = await startServer(kind);
    await server.bucket("catalog");
    const store = new S3Store(server.storeOptions("catalog"));
    try {
      await store.putObject(KEY, encode('["before"]'));
      const put = store.putObjectIfMatch.bind(store);
      let lose = true;
      store.putObjectIfMatch = async (key, body, etag, signal) => {
        const sent = await put(key, body, etag, signal);
        if (lose) {
          lose = false;
          throw Object.assign(new Error("socket hang up"), { code: "ECONNRESET" });
        }
        return sent;
      };
      const retry = { attempts: 3, baseDelayMs: 1, factor: 1, jitter: 0 };
      assertEquals(
        await exportCatalog(store, "prod", encode('["after"]'), { retry }),
        true,
      );
      assertEquals(decode((await store.getObject(KEY)).data), '["after"]');
    } finally {
      store.destroy();
      await server.stop();
    }
  });
}
