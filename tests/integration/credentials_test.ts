/**
 * A push learns of a bad credential while it walks, as the extension's credential preflight
 * does, instead of after walking the whole cache: when the first walk is still running after a
 * moment, a HEAD of the index goes beside it. On s3s-fs, which checks signatures.
 */
import { assert, assertEquals } from "../harness/assert.ts";
import { startServer, TEST_CREDENTIALS } from "../harness/servers.ts";
import { writeCacheFiles } from "../harness/datastore.ts";
import { contentOf, datastoreRels } from "../harness/seed.ts";
import { DenoCacheFs, type WalkResult } from "../../js/io/cache_fs.ts";
import { S3Store } from "../../js/io/s3.ts";
import { push } from "../../js/ops/push.ts";
import { SyncError } from "../../js/core/errors.ts";

/**
 * A cache whose walk waits `delayMs` first (when null, 20 s: longer than any check takes, and
 * short enough that a push without the check ends the test instead of hanging it), stopping at
 * its signal.
 */
class SlowWalk extends DenoCacheFs {
  aborted = false;
  constructor(root: string, readonly delayMs: number | null) {
    super(root);
  }
  override async walk(signal?: AbortSignal): Promise<WalkResult> {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(resolve, this.delayMs ?? 20_000);
      signal?.addEventListener("abort", () => {
        this.aborted = true;
        clearTimeout(timer);
        reject(signal.reason);
      }, { once: true });
    });
    return await super.walk(signal);
  }
}

/** Records the keys of `store`'s HEADs. */
function headsOf(store: S3Store): string[] {
  const heads: string[] = [];
  const head = store.headObject.bind(store);
  store.headObject = (key, signal) => {
    heads.push(key);
    return head(key, signal);
  };
  return heads;
}

Deno.test("on s3s-fs, a push with a wrong secret fails with bad-credentials while its walk is still running, and stops the walk", async () => {
  const server = await startServer("s3s-fs");
  const good = await server.bucket("creds");
  const bad = new S3Store(server.storeOptions("creds", {
    credentials: { ...TEST_CREDENTIALS, secretAccessKey: "wrong" },
  }));
  const root = await Deno.makeTempDir({ prefix: "s3sync-creds-" });
  try {
    await writeCacheFiles(root, [["data/a.yaml", new TextEncoder().encode("a")]]);
    // A verified push seals the cache: the next push walks before any request.
    assertEquals(
      (await push({ store: good, cache: new DenoCacheFs(root), log: () => {} })).uploaded,
      1,
    );
    await writeCacheFiles(root, [["data/b.yaml", new TextEncoder().encode("b")]]);
    // A walk that does not end in time on its own: only the check can stop it.
    const cache = new SlowWalk(root, null);
    let thrown: unknown;
    try {
      await push({ store: bad, cache, credentialCheckAfterMs: 50, log: () => {} });
    } catch (error) {
      thrown = error;
    }
    assert(thrown instanceof SyncError, `no SyncError: ${thrown}`);
    assertEquals(thrown.code, "bad-credentials");
    assert(cache.aborted, "the walk was left running");
    // Only the check went out (its HEAD, and the GET that reads the error's name, since a HEAD's
    // answer has no body): the push stopped before its index read.
    assertEquals(bad.requests, 2);
  } finally {
    good.destroy();
    bad.destroy();
    await server.stop();
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("on s3s-fs, a long first walk gets one credential check per store, a quick one none; the push is unchanged", async () => {
  const server = await startServer("s3s-fs");
  const store = await server.bucket("creds-ok");
  const root = await Deno.makeTempDir({ prefix: "s3sync-creds-ok-" });
  try {
    const rels = datastoreRels(3);
    await writeCacheFiles(root, rels.map((rel) => [rel, contentOf(rel)]));
    // The first push reads the index before it walks: that read is its credential check.
    assertEquals((await push({ store, cache: new DenoCacheFs(root), log: () => {} })).uploaded, 3);

    // Sealed, the next push walks first; a walk still running after 50 ms gets a check beside it.
    const checked = new S3Store(server.storeOptions("creds-ok"));
    const heads = headsOf(checked);
    const slow = new SlowWalk(root, 300);
    try {
      await writeCacheFiles(root, [["data/b.yaml", new TextEncoder().encode("b")]]);
      const first = await push({
        store: checked,
        cache: slow,
        credentialCheckAfterMs: 50,
        log: () => {},
      });
      assertEquals(first.uploaded, 1);
      assertEquals(heads.filter((key) => key === ".datastore-index.json").length, 1);

      // The same store again: its credentials were proven in this process, so no check.
      await writeCacheFiles(root, [["data/c.yaml", new TextEncoder().encode("c")]]);
      heads.length = 0;
      const second = await push({
        store: checked,
        cache: slow,
        credentialCheckAfterMs: 50,
        log: () => {},
      });
      assertEquals(second.uploaded, 1);
      assertEquals(heads.filter((key) => key === ".datastore-index.json"), []);
    } finally {
      checked.destroy();
    }

    // A fresh store whose walk ends in time (the default wait): no check, and a sealed cache
    // sends nothing at all.
    const fresh = new S3Store(server.storeOptions("creds-ok"));
    try {
      const sealed = await push({ store: fresh, cache: new DenoCacheFs(root), log: () => {} });
      assertEquals(sealed.uploaded, 0);
      assertEquals(fresh.requests, 0);
    } finally {
      fresh.destroy();
    }
  } finally {
    store.destroy();
    await server.stop();
    await Deno.remove(root, { recursive: true });
  }
});
