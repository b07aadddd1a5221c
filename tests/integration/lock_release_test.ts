/**
 * Releasing the datastore lock deletes it as it was just read: `If-Match` its ETag. A lock
 * another writer took between that read and the delete stays. On moto, which honours `If-Match`
 * on DELETE (s3s-fs ignores it, the window the extension's client always has), through the
 * real SDK.
 */
import { assert, assertEquals } from "../harness/assert.ts";
import { startServer } from "../harness/servers.ts";
import { S3Store } from "../../js/io/s3.ts";
import { acquireLock, forceRelease, inspectLock } from "../../js/exec/lock.ts";

const KEY = ".datastore.lock";

Deno.test("on moto, a lock taken by another writer between the release's read and its delete stays", async () => {
  const server = await startServer("moto");
  const admin = await server.bucket("locks");
  const store = new S3Store(server.storeOptions("locks"));
  const theirs = new TextEncoder().encode(
    JSON.stringify({
      holder: "them",
      hostname: "elsewhere",
      pid: 7,
      acquiredAt: new Date().toISOString(),
      ttlMs: 60_000,
      nonce: "their-nonce",
    }),
  );
  try {
    for (const release of ["release", "forceRelease"] as const) {
      const said: string[] = [];
      const held = await acquireLock(store, {
        manualHeartbeat: true,
        log: (line) => said.push(line),
      });
      const deleteIfMatch = store.deleteObjectIfMatch.bind(store);
      store.deleteObjectIfMatch = async (key, etag, signal) => {
        await admin.putObject(KEY, theirs);
        return await deleteIfMatch(key, etag, signal);
      };
      if (release === "release") {
        await held.release();
        assert(said.some((line) => line.includes("no longer ours")), said.join("\n"));
      } else assertEquals(await forceRelease(store, held.nonce), false, "not released");
      store.deleteObjectIfMatch = deleteIfMatch;
      const now = await inspectLock(store, KEY);
      assertEquals(now?.body?.nonce, "their-nonce", release);
      await admin.deleteObject(KEY);
    }
  } finally {
    store.destroy();
    await server.stop();
  }
});
