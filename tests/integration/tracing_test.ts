/**
 * What an operator sees, as with the extension: OpenTelemetry spans under the tracer
 * `@swamp/s3-datastore` (each sync, each phase of its run, each S3 request, the lock), the
 * `SWAMP_S3_SYNC_TRACE` phase timings, and `SWAMP_S3_REQUEST_TIMEOUT_MS`.
 *
 * The spans are read with OpenTelemetry's own SDK (an in-memory exporter and the async-hooks
 * context manager, registered as a host such as swamp registers its own), against s3s-fs and
 * moto on loopback.
 */
import { context, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { assert, assertEquals } from "../harness/assert.ts";
import { commonFlags, runCli, runCliJson, spawnCli } from "../harness/cli.ts";
import { writeCacheFiles } from "../harness/datastore.ts";
import { startFaultProxy, throughProxy } from "../harness/fault_proxy.ts";
import { contentOf, datastoreRels } from "../harness/seed.ts";
import { startServer } from "../harness/servers.ts";
import { S3SyncService } from "../../js/extension/service.ts";
import { TRACER_NAME } from "../../js/io/trace.ts";

/** Registers an in-memory tracer provider for the duration of `body`. */
async function withRecordedSpans(
  body: (spans: () => ReadableSpan[]) => Promise<void>,
): Promise<void> {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  trace.setGlobalTracerProvider(provider);
  try {
    await body(() => exporter.getFinishedSpans());
  } finally {
    trace.disable();
    context.disable();
    await provider.shutdown();
  }
}

/** The span's parent id (the SDK renamed the field between major versions). */
function parentOf(span: ReadableSpan): string | undefined {
  const s = span as unknown as {
    parentSpanContext?: { spanId: string };
    parentSpanId?: string;
  };
  return s.parentSpanContext?.spanId ?? s.parentSpanId;
}

/** True when `span` sits, at any depth, under `ancestor`. */
function descendsFrom(span: ReadableSpan, ancestor: ReadableSpan, all: ReadableSpan[]): boolean {
  const byId = new Map(all.map((s) => [s.spanContext().spanId, s]));
  let parent = parentOf(span);
  for (let depth = 0; parent !== undefined && depth < 20; depth++) {
    if (parent === ancestor.spanContext().spanId) return true;
    parent = byId.get(parent) ? parentOf(byId.get(parent)!) : undefined;
  }
  return false;
}

Deno.test("on s3s-fs, a push and a pull through the service emit the extension's spans: the sync, its phases, each S3 request, the lock", async () => {
  const server = await startServer("s3s-fs");
  const store = await server.bucket("traced");
  const pusher = await Deno.makeTempDir({ prefix: "s3sync-trace-push-" });
  const puller = await Deno.makeTempDir({ prefix: "s3sync-trace-pull-" });
  try {
    await withRecordedSpans(async (spans) => {
      const rels = datastoreRels(3);
      await writeCacheFiles(pusher, rels.map((rel) => [rel, contentOf(rel)]));
      const service = new S3SyncService(store, pusher, { lock: {}, log: () => {} });
      assertEquals(await service.pushChanged(), 3);

      const all = spans();
      for (const span of all) assertEquals(span.instrumentationScope.name, TRACER_NAME);
      const pushes = all.filter((s) => s.name === "s3-datastore push");
      assertEquals(pushes.length, 1);
      const push = pushes[0];
      assertEquals(push.attributes["datastore.files_pushed"], 3);
      assertEquals(push.attributes["datastore.files_deleted"], 0);

      // One span per upload, keyed as the datastore names the object, under the push.
      const puts = all.filter((s) => s.name === "S3 putObject");
      const keys = new Set(puts.map((s) => s.attributes["aws.s3.key"]));
      for (const rel of rels) assert(keys.has(rel), `no putObject span for ${rel}`);
      // Besides them, the conditional-write probe's, whose refused condition is an error span.
      const probes = puts.filter((s) => !rels.includes(String(s.attributes["aws.s3.key"])));
      assert(probes.some((s) => s.attributes["http.response.status_code"] === 412));
      for (const put of puts.filter((s) => rels.includes(String(s.attributes["aws.s3.key"])))) {
        assertEquals(put.attributes["rpc.system"], "aws-api");
        assertEquals(put.attributes["rpc.service"], "S3");
        assertEquals(put.attributes["rpc.method"], "putObject");
        assertEquals(put.attributes["aws.s3.bucket"], "traced");
        assertEquals(put.attributes["http.response.status_code"], 200);
        assert(descendsFrom(put, push, all), "a putObject span is not under the push");
      }
      // The phases of the run, each a child of the push, the uploads inside theirs.
      const upload = all.find((s) => s.name === "s3-datastore push.upload");
      assert(upload, `no upload phase among ${all.map((s) => s.name).join(", ")}`);
      assertEquals(parentOf(upload), push.spanContext().spanId);
      assertEquals(upload.attributes["datastore.phase"], "push.upload");
      for (const phase of ["push.walk", "push.loadIndex", "push.publish"]) {
        assert(all.some((s) => s.name === `s3-datastore ${phase}`), `no ${phase} span`);
      }
      // The lock around the publish.
      const acquire = all.find((s) => s.name === "s3-datastore lock acquire");
      assert(acquire, "no lock acquire span");
      assertEquals(acquire.attributes["lock.key"], ".datastore.lock");
      assertEquals(acquire.attributes["lock.contended"], false);
      assert(all.some((s) => s.name === "s3-datastore lock release"), "no lock release span");

      // A pull on a fresh cache: its own span, the files it brought, and the index read.
      const before = spans().length;
      const reader = new S3SyncService(store, puller, { log: () => {} });
      assertEquals(await reader.pullChanged(), 3);
      const pulled = spans().slice(before);
      const pull = pulled.find((s) => s.name === "s3-datastore pull");
      assert(pull, "no pull span");
      assertEquals(pull.attributes["datastore.files_pulled"], 3);
      assertEquals(pull.attributes["datastore.fast_path_hit"], false);
      const gets = pulled.filter((s) => s.name === "S3 getObject");
      assert(gets.some((s) => s.attributes["aws.s3.key"] === ".datastore-index.json"));
      for (const rel of rels) assert(gets.some((s) => s.attributes["aws.s3.key"] === rel), rel);

      // Nothing changed: the next pull is the fast path, one HEAD.
      const again = spans().length;
      assertEquals(await new S3SyncService(store, puller, { log: () => {} }).pullChanged(), 0);
      const noop = spans().slice(again);
      assertEquals(
        noop.find((s) => s.name === "s3-datastore pull")?.attributes["datastore.fast_path_hit"],
        true,
      );
      assertEquals(noop.filter((s) => s.name.startsWith("S3 ")).map((s) => s.name), [
        "S3 headObject",
      ]);
    });
  } finally {
    store.destroy();
    await server.stop();
    await Deno.remove(pusher, { recursive: true });
    await Deno.remove(puller, { recursive: true });
  }
});

Deno.test("on moto, a failed request and a failed sync are marked on their spans with the error's type", async () => {
  const server = await startServer("moto");
  const store = await server.bucket("traced-failures");
  const cache = await Deno.makeTempDir({ prefix: "s3sync-trace-fail-" });
  try {
    await withRecordedSpans(async (spans) => {
      // Nothing in the bucket: the index read is a 404 (the pull then rebuilds from a listing).
      await new S3SyncService(store, cache, { log: () => {} }).pullChanged();
      const read = spans().find((s) => s.attributes["aws.s3.key"] === ".datastore-index.json");
      assert(read, `no index read among ${spans().map((s) => s.name).join(", ")}`);
      assertEquals(read.attributes["http.response.status_code"], 404);
      assertEquals(read.attributes["error.type"], "NoSuchKey");
      assertEquals(read.status.code, 2 /* SpanStatusCode.ERROR */);
      assert(spans().some((s) => s.name === "S3 listObjectsV2"), "no listing span");

      // A sync that fails (a namespace mismatch on a bound service) marks its span with the code.
      const service = new S3SyncService(store, cache, { log: () => {} });
      await service.pullChanged({ namespace: "a" });
      let thrown: unknown;
      try {
        await service.pullChanged({ namespace: "b" });
      } catch (error) {
        thrown = error;
      }
      assert(thrown, "the mismatch did not throw");
      const failed = spans().filter((s) => s.name === "s3-datastore pull").at(-1);
      assertEquals(failed?.status.code, 2);
      assertEquals(failed?.attributes["error.type"], "namespace-mismatch");
    });
  } finally {
    store.destroy();
    await server.stop();
    await Deno.remove(cache, { recursive: true });
  }
});

Deno.test("on moto, SWAMP_S3_SYNC_TRACE prints one timing line per phase on stderr; --json stays one object on stdout", async () => {
  const server = await startServer("moto");
  const store = await server.bucket("trace-lines");
  const cache = await Deno.makeTempDir({ prefix: "s3sync-trace-lines-" });
  try {
    const rels = datastoreRels(4);
    await writeCacheFiles(cache, rels.map((rel) => [rel, contentOf(rel)]));
    const flags = commonFlags(server, "trace-lines", cache);
    const pushed = await runCliJson(["push", ...flags, "--yes"], { SWAMP_S3_SYNC_TRACE: "1" });
    assertEquals(pushed.code, 0, pushed.stderr);
    const lines = pushed.stderr.split("\n").filter((line) => line.startsWith("[s3-sync] "));
    const upload = lines.find((line) => line.startsWith("[s3-sync] push.upload "));
    assert(upload, pushed.stderr);
    assert(/^\[s3-sync\] push\.upload \d+ms pushed=4$/.test(upload), upload);
    for (const phase of ["push.walk", "push.loadIndex", "push.publish"]) {
      assert(lines.some((line) => line.startsWith(`[s3-sync] ${phase} `)), `${phase}: ${lines}`);
    }
    // Phases, not files: a handful of lines whatever the cache holds.
    assert(lines.length < 20, lines.join("\n"));

    const pulled = await runCli(["pull", ...flags], { SWAMP_S3_SYNC_TRACE: "1" });
    assertEquals(pulled.code, 0, pulled.stderr);
    assert(/\[s3-sync\] pull\.headIndex \d+ms/.test(pulled.stderr), pulled.stderr);
    assert(!pulled.stdout.includes("[s3-sync]"), pulled.stdout);

    // Off by default, and with `0`.
    for (const env of [{}, { SWAMP_S3_SYNC_TRACE: "0" }] as Record<string, string>[]) {
      const quiet = await runCli(["pull", ...flags], env);
      assertEquals(quiet.code, 0, quiet.stderr);
      assert(!quiet.stderr.includes("[s3-sync]"), quiet.stderr);
    }
  } finally {
    store.destroy();
    await server.stop();
    await Deno.remove(cache, { recursive: true });
  }
});

Deno.test("on moto, SWAMP_S3_REQUEST_TIMEOUT_MS bounds a request that gets no answer; an invalid value is named and ignored", async () => {
  const server = await startServer("moto");
  const proxy = startFaultProxy(server.endpoint, { seed: 0 });
  const store = await server.bucket("trace-timeout");
  const cache = await Deno.makeTempDir({ prefix: "s3sync-trace-timeout-" });
  try {
    const rels = datastoreRels(2);
    await writeCacheFiles(cache, rels.map((rel) => [rel, contentOf(rel)]));
    const flags = commonFlags(throughProxy(server, proxy), "trace-timeout", cache);
    assertEquals((await runCli(["push", ...flags, "--yes"])).code, 0);

    // The pull's first request (the index HEAD) is held and never answered. With a 1 s timeout
    // the attempt is given up and retried; at the default (30 s) it would still be waiting when
    // the test's own deadline below ends the CLI.
    proxy.holdAt(1);
    const child = spawnCli(["pull", ...flags], { SWAMP_S3_REQUEST_TIMEOUT_MS: "1000" });
    const deadline = setTimeout(() => child.kill("SIGKILL"), 20_000);
    const out = await child.output();
    clearTimeout(deadline);
    const stderr = new TextDecoder().decode(out.stderr);
    assertEquals(out.code, 0, `pull under a held request (killed at the deadline?):\n${stderr}`);
    assertEquals(proxy.stats.injected["held"], 1);

    const invalid = await runCli(["pull", ...flags], { SWAMP_S3_REQUEST_TIMEOUT_MS: "abc" });
    assertEquals(invalid.code, 0, invalid.stderr);
    assert(
      invalid.stderr.includes('SWAMP_S3_REQUEST_TIMEOUT_MS="abc" ignored'),
      invalid.stderr,
    );
  } finally {
    store.destroy();
    await proxy.stop();
    await server.stop();
    await Deno.remove(cache, { recursive: true });
  }
});
