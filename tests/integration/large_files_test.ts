/**
 * Large files and slow links (issue 17): bodies stream between the bucket and the cache (never
 * held whole), uploads above a threshold go in parts (each retried on its own, an unfinished
 * upload aborted), a request fails only when no bytes move for the stall timeout (code
 * `timeout`, saying so), and progress counts bytes inside a file as they move.
 */
import { ListMultipartUploadsCommand } from "@aws-sdk/client-s3";
import { createHash } from "node:crypto";
import { DenoCacheFs } from "../../js/io/cache_fs.ts";
import type { Progress } from "../../js/io/engine.ts";
import { pull } from "../../js/ops/pull.ts";
import { push } from "../../js/ops/push.ts";
import { S3Store, type S3StoreOptions } from "../../js/io/s3.ts";
import { assert, assertEquals } from "../harness/assert.ts";
import { commonFlags, runCliJson } from "../harness/cli.ts";
import { startFaultProxy, throughProxy } from "../harness/fault_proxy.ts";
import { type S3Server, startServer } from "../harness/servers.ts";

const MiB = 1024 * 1024;
const REL = "data/aws/ec2/vpc/m-1/state/1/raw";
const FAST_RETRY = { attempts: 3, baseDelayMs: 10, factor: 2, jitter: 0 };

/** `size` deterministic, incompressible-looking bytes. */
function bytesOf(size: number, seed = 1): Uint8Array {
  const out = new Uint8Array(size);
  let x = seed * 2654435761 >>> 0;
  for (let i = 0; i < size; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = x & 0xff;
  }
  return out;
}

function sha(data: Uint8Array): string {
  return createHash("sha256").update(data).digest("hex");
}

/** A cache folder holding `data` at {@link REL}. */
async function cacheWith(data: Uint8Array): Promise<string> {
  const cache = await Deno.makeTempDir({ prefix: "s3sync-large-" });
  await Deno.mkdir(`${cache}/data/aws/ec2/vpc/m-1/state/1`, { recursive: true });
  await Deno.writeFile(`${cache}/${REL}`, data);
  return cache;
}

/** An adapter whose whole-body calls refuse the payload: only streaming can move it. */
class StreamOnly extends S3Store {
  override getObject(key: string, signal?: AbortSignal) {
    if (key.endsWith(REL)) throw new Error(`whole-body GET of ${key}`);
    return super.getObject(key, signal);
  }
  override putObject(key: string, body: Uint8Array, signal?: AbortSignal) {
    if (key.endsWith(REL)) throw new Error(`whole-body PUT of ${key}`);
    return super.putObject(key, body, signal);
  }
}

async function bucketOn(server: S3Server, name: string, options: Partial<S3StoreOptions> = {}) {
  (await server.bucket(name)).destroy();
  return server.storeOptions(name, options);
}

Deno.test("s3s-fs: a push and a pull stream the file's body (no whole-body request), bytes intact", async () => {
  const server = await startServer("s3s-fs");
  const data = bytesOf(12 * MiB);
  const source = await cacheWith(data);
  const target = await Deno.makeTempDir({ prefix: "s3sync-large-" });
  const store = new StreamOnly(await bucketOn(server, "stream"));
  try {
    const pushed = await push({ store, cache: new DenoCacheFs(source), lock: false });
    assertEquals(pushed.failures, []);
    assertEquals(pushed.uploaded, 1);
    const pulled = await pull({ store, cache: new DenoCacheFs(target), lock: false });
    assertEquals(pulled.failures, []);
    assertEquals(pulled.downloaded, 1);
    assertEquals(sha(await Deno.readFile(`${target}/${REL}`)), sha(data));
  } finally {
    store.destroy();
    await server.stop();
    await Deno.remove(source, { recursive: true });
    await Deno.remove(target, { recursive: true });
  }
});

for (const kind of ["moto", "s3s-fs"] as const) {
  Deno.test(`${kind}: a file above the multipart threshold goes in parts and comes back whole`, async () => {
    const server = await startServer(kind);
    const data = bytesOf(12 * MiB, 2);
    const source = await cacheWith(data);
    const target = await Deno.makeTempDir({ prefix: "s3sync-large-" });
    const store = new S3Store(
      await bucketOn(server, "parts", { multipartThresholdBytes: 5 * MiB, partSizeBytes: 5 * MiB }),
    );
    try {
      const pushed = await push({ store, cache: new DenoCacheFs(source), lock: false });
      assertEquals(pushed.failures, []);
      // A multipart object's ETag is the parts' digest with their count: 5 + 5 + 2 MiB.
      const head = await store.headObject(REL);
      assert(head.etag?.endsWith('-3"'), `etag ${head.etag}`);
      assertEquals(head.size, data.length);
      const pulled = await pull({ store, cache: new DenoCacheFs(target), lock: false });
      assertEquals(pulled.failures, []);
      assertEquals(sha(await Deno.readFile(`${target}/${REL}`)), sha(data));
    } finally {
      store.destroy();
      await server.stop();
      await Deno.remove(source, { recursive: true });
      await Deno.remove(target, { recursive: true });
    }
  });
}

Deno.test("moto: each part is retried on its own; a part that keeps failing aborts the upload", async () => {
  const server = await startServer("moto");
  const options = await bucketOn(server, "part-faults", {
    multipartThresholdBytes: 5 * MiB,
    partSizeBytes: 5 * MiB,
  });
  const isPart = (method: string, target: string) =>
    method === "PUT" && target.includes("partNumber=");
  const proxy = startFaultProxy(server.endpoint, {
    seed: 1,
    serializeConditionalWrites: true,
    failRequests: { match: isPart, times: 1 },
  });
  const store = new S3Store({ ...options, endpoint: proxy.endpoint });
  const direct = new S3Store(options);
  const data = bytesOf(12 * MiB, 3);
  const source = await cacheWith(data);
  try {
    const pushed = await push({
      store,
      cache: new DenoCacheFs(source),
      lock: false,
      retry: FAST_RETRY,
    });
    assertEquals(pushed.failures, []);
    assertEquals(proxy.stats.injected["fail-request"], 3, JSON.stringify(proxy.stats));
    assert((await direct.headObject(REL)).etag?.endsWith('-3"'));

    // Part 2 now fails every time: the push reports the file, and no upload is left open.
    proxy.setPlan({
      seed: 1,
      serializeConditionalWrites: true,
      failRequests: { match: (m, t) => isPart(m, t) && t.includes("partNumber=2"), times: 1e9 },
    });
    await Deno.writeFile(`${source}/${REL}`, bytesOf(12 * MiB, 4));
    const failed = await push({
      store,
      cache: new DenoCacheFs(source),
      lock: false,
      retry: FAST_RETRY,
    });
    assertEquals(failed.failures.map((f) => f.item), [REL]);
    assert((proxy.stats.byMethod.DELETE ?? 0) >= 1, JSON.stringify(proxy.stats));
    const open = await direct.client.send(
      new ListMultipartUploadsCommand({ Bucket: "part-faults" }),
    );
    assertEquals(open.Uploads ?? [], []);
    // The object is still the first push's.
    assert((await direct.headObject(REL)).etag?.endsWith('-3"'));
  } finally {
    store.destroy();
    direct.destroy();
    await proxy.stop();
    await server.stop();
    await Deno.remove(source, { recursive: true });
  }
});

Deno.test("moto: a body that stalls fails with timeout, saying so; one that moves slowly past the timeout completes, with progress inside the file", async () => {
  const server = await startServer("moto");
  const options = await bucketOn(server, "stall");
  const data = bytesOf(2 * MiB, 5);
  const seeded = new S3Store(options);
  await seeded.putObject(REL, data);
  seeded.destroy();
  const proxy = startFaultProxy(server.endpoint, { seed: 1, stallBodyAfterBytes: 64 * 1024 });
  const store = new S3Store({ ...options, endpoint: proxy.endpoint, timeoutMs: 700 });
  const stalled = await Deno.makeTempDir({ prefix: "s3sync-large-" });
  const slow = await Deno.makeTempDir({ prefix: "s3sync-large-" });
  try {
    const report = await pull({
      store,
      cache: new DenoCacheFs(stalled),
      lock: false,
      retry: FAST_RETRY,
    });
    assertEquals(report.failures.length, 1);
    assertEquals(report.failures[0].code, "timeout");
    assert(
      report.failures[0].message.includes("timed out after 0.7 s without data"),
      report.failures[0].message,
    );
    assertEquals(proxy.stats.injected.stall, 3);

    // 2 MiB at 1 MiB/s: two seconds in all, never 0.7 s without a byte.
    proxy.setPlan({ seed: 1, throttleBytesPerSecond: MiB });
    const seen: Progress[] = [];
    const started = Date.now();
    const ok = await pull({
      store,
      cache: new DenoCacheFs(slow),
      lock: false,
      retry: { ...FAST_RETRY, attempts: 1 },
      onProgress: (p) => seen.push(p),
    });
    assertEquals(ok.failures, []);
    assert(Date.now() - started > 1_500, "the throttle did not slow the pull");
    assertEquals(sha(await Deno.readFile(`${slow}/${REL}`)), sha(data));
    const inside = seen.filter((p) =>
      p.phase === "download" && p.done === 0 && p.inFlightBytes > 0
    );
    assert(inside.length >= 3, `progress inside the file: ${JSON.stringify(seen)}`);
    assert(inside.every((p) => p.totalBytes === data.length && p.inFlightBytes <= data.length));
    const last = seen.at(-1)!;
    assertEquals([last.done, last.bytes, last.inFlightBytes], [1, data.length, 0]);
  } finally {
    store.destroy();
    await proxy.stop();
    await server.stop();
    await Deno.remove(stalled, { recursive: true });
    await Deno.remove(slow, { recursive: true });
  }
});

Deno.test("CLI: --timeout sets the stall timeout; a stalled pull exits 1 with code timeout and says it timed out", async () => {
  const server = await startServer("moto");
  const options = await bucketOn(server, "stall-cli");
  const seeded = new S3Store(options);
  await seeded.putObject(REL, bytesOf(MiB, 6));
  seeded.destroy();
  const proxy = startFaultProxy(server.endpoint, { seed: 1, stallBodyAfterBytes: 64 * 1024 });
  const cache = await Deno.makeTempDir({ prefix: "s3sync-large-" });
  try {
    const flags = commonFlags(throughProxy(server, proxy), "stall-cli", cache);
    const run = await runCliJson(["pull", ...flags, "--no-lock", "--timeout", "0.5"]);
    assertEquals(run.code, 1, run.stderr);
    const text = JSON.stringify(run.json);
    assert(text.includes('"timeout"'), text);
    assert(text.includes("timed out after 0.5 s without data"), text);
    const usage = await runCliJson(["pull", ...flags, "--timeout", "soon"]);
    assertEquals(usage.code, 2, usage.stderr);
  } finally {
    await proxy.stop();
    await server.stop();
    await Deno.remove(cache, { recursive: true });
  }
});
