/**
 * Sharing a bucket with the extension's writers: our CLI and protocol-following extension
 * writers push disjoint files into one namespace at once; with our lock nothing is lost, without
 * it entries are. A killed holder's lock is taken over after its lease.
 */
import { assert, assertEquals } from "../harness/assert.ts";
import { commonFlags, runCli, spawnCli } from "../harness/cli.ts";
import { remoteIndexKeys, writeCacheFiles } from "../harness/datastore.ts";
import { extensionPush } from "../harness/extension_writer.ts";
import { contentOf, datastoreRels } from "../harness/seed.ts";
import { type S3Server, startServer } from "../harness/servers.ts";
import { type FaultProxy, startFaultProxy, throughProxy } from "../harness/fault_proxy.ts";

/** The extension writers' pause between reading and writing the index, in both variants. */
const THINK_MS = 400;

/**
 * Every writer talks to moto through a proxy that forwards conditional writes one at a time:
 * moto's own check-and-store is not atomic (two concurrent creates of the lock could both
 * succeed), S3's is, and the lock relies on it.
 */
async function mixedRound(
  server: S3Server,
  proxy: FaultProxy,
  round: number,
  ourLock: boolean,
): Promise<{ expected: number; indexed: number }> {
  const bucket = `mixed-${ourLock ? "lock" : "nolock"}-${round}`;
  const store = await server.bucket(bucket, { endpoint: proxy.endpoint });
  const via = throughProxy(server, proxy);
  const caches: string[] = [];
  try {
    const expected: string[] = [];
    const runs: Promise<unknown>[] = [];
    for (let p = 0; p < 4; p++) {
      const cache = await Deno.makeTempDir({ prefix: `s3sync-mixed-${p}-` });
      caches.push(cache);
      const ours = datastoreRels(15, `ours${p}-`);
      expected.push(...ours);
      await writeCacheFiles(cache, ours.map((rel) => [`ns/${rel}`, contentOf(rel)]));
    }
    for (const cache of caches) {
      runs.push(
        spawnCli([
          "push",
          ...commonFlags(via, bucket, cache, { namespace: "ns" }),
          "--yes",
          ...(ourLock ? [] : ["--no-lock"]),
        ]).output().then((out) => {
          if (out.code !== 0) throw new Error(new TextDecoder().decode(out.stderr));
        }),
      );
    }
    for (let p = 0; p < 4; p++) {
      const theirs = datastoreRels(15, `ext${p}-`);
      expected.push(...theirs);
      // Every writer pauses between reading and writing the index, locked or not: the lock is
      // tested on the same window in which the unlocked control loses entries.
      runs.push(extensionPush(store, "ns", theirs, 100, THINK_MS));
    }
    await Promise.all(runs);
    const indexed = await remoteIndexKeys(store, "ns");
    return {
      expected: expected.length,
      indexed: indexed.filter((k) => expected.includes(k)).length,
    };
  } finally {
    store.destroy();
    for (const cache of caches) await Deno.remove(cache, { recursive: true });
  }
}

Deno.test("our CLI and extension-protocol writers, 4 each, 10 rounds: the index holds every file", async () => {
  const server = await startServer("moto");
  const proxy = startFaultProxy(server.endpoint, { seed: 0, serializeConditionalWrites: true });
  let held = 0;
  let total = 0;
  try {
    for (let round = 0; round < 10; round++) {
      const { expected, indexed } = await mixedRound(server, proxy, round, true);
      assertEquals(indexed, expected, `round ${round}`);
      held += indexed;
      total += expected;
    }
    console.log(
      `with our lock (${THINK_MS} ms pause): ${held} of ${total} entries indexed over 10 rounds`,
    );
  } finally {
    await proxy.stop();
    await server.stop();
  }
});

Deno.test("the same mix with our lock switched off loses entries (the test can fail)", async () => {
  const server = await startServer("moto");
  const proxy = startFaultProxy(server.endpoint, { seed: 0, serializeConditionalWrites: true });
  try {
    let lost = 0;
    let rounds = 0;
    for (; rounds < 6 && lost === 0; rounds++) {
      const { expected, indexed } = await mixedRound(server, proxy, rounds, false);
      lost += expected - indexed;
    }
    console.log(
      `without our lock (${THINK_MS} ms pause): ${lost} entries lost within ${rounds} rounds`,
    );
    assert(lost > 0, "expected lost entries without the lock");
  } finally {
    await proxy.stop();
    await server.stop();
  }
});

Deno.test("a killed holder's lock is taken over after its lease, and the takeover is reported", async () => {
  const server = await startServer("s3s-fs");
  const store = await server.bucket("stale-lock");
  const cache = await Deno.makeTempDir({ prefix: "s3sync-stale-" });
  try {
    // What a holder killed mid-publish leaves: its lock, with a 2 s lease nobody refreshes.
    await store.putObject(
      ".datastore.lock",
      new TextEncoder().encode(JSON.stringify({
        holder: "gone@elsewhere",
        hostname: "elsewhere",
        pid: 4242,
        acquiredAt: new Date().toISOString(),
        ttlMs: 2000,
        nonce: "dead-nonce",
      })),
    );
    const status = await runCli(["lock", "status", ...commonFlags(server, "stale-lock", cache)]);
    assert(
      status.stdout.includes("gone@elsewhere") && status.stdout.includes("dead-nonce"),
      status.stdout,
    );
    await writeCacheFiles(cache, [["logs/a.log", new Uint8Array([1])]]);
    const pushed = await runCli(["push", ...commonFlags(server, "stale-lock", cache), "--yes"]);
    assertEquals(pushed.code, 0, pushed.stderr);
    assert(
      pushed.stderr.includes("took over a stale datastore lock held by gone@elsewhere"),
      pushed.stderr,
    );
    assertEquals(
      (await store.headObject(".datastore.lock")).exists,
      false,
      "released after the publish",
    );
    assertEquals(await remoteIndexKeys(store), ["logs/a.log"]);
  } finally {
    store.destroy();
    await server.stop();
    await Deno.remove(cache, { recursive: true });
  }
});

// deno-lint-ignore no-control-regex -- finding raw control characters is the point
const RAW_CONTROL = /[\x00-\x08\x0b-\x1f\x7f]/;

Deno.test("a lock whose holder carries terminal escapes is shown escaped by lock status and the lock-timeout error", async () => {
  const server = await startServer("s3s-fs");
  const store = await server.bucket("hostile-lock");
  const cache = await Deno.makeTempDir({ prefix: "s3sync-hostile-lock-" });
  try {
    await store.putObject(
      ".datastore.lock",
      new TextEncoder().encode(JSON.stringify({
        holder: "evil\x1b[2J\x07\nforged: Released the datastore lock.",
        hostname: "host\x1b]0;title\x07",
        pid: 1,
        acquiredAt: new Date().toISOString(),
        ttlMs: 600_000,
        nonce: "n\x1b[31m",
      })),
    );
    const flags = commonFlags(server, "hostile-lock", cache);
    const status = await runCli(["lock", "status", ...flags]);
    assertEquals(status.code, 0, status.stderr);
    for (const out of [status.stdout, status.stderr]) {
      assert(
        !RAW_CONTROL.test(out),
        `raw control characters: ${JSON.stringify(out)}`,
      );
    }
    assert(status.stdout.includes("evil\\u{1b}[2J\\u{07}\\u{0a}forged"), status.stdout);
    assertEquals(
      status.stdout.split("\n").filter((l) => l.startsWith("forged")).length,
      0,
      "no forged line",
    );
    await writeCacheFiles(cache, [["logs/a.log", new Uint8Array([1])]]);
    const pushed = await runCli(["push", ...flags, "--yes", "--lock-wait", "1"]);
    assert(pushed.code !== 0, pushed.stderr);
    assert(pushed.stderr.includes("lock-timeout"), pushed.stderr);
    assert(!RAW_CONTROL.test(pushed.stderr), JSON.stringify(pushed.stderr));
  } finally {
    store.destroy();
    await server.stop();
    await Deno.remove(cache, { recursive: true });
  }
});

Deno.test("a lock asking for a lease of 2^64 - 1 ms is held an hour at most and said so; an unreadable one is released with --force unreadable", async () => {
  const server = await startServer("moto");
  const store = await server.bucket("odd-locks");
  const cache = await Deno.makeTempDir({ prefix: "s3sync-odd-locks-" });
  try {
    const flags = commonFlags(server, "odd-locks", cache);
    await store.putObject(
      ".datastore.lock",
      new TextEncoder().encode(
        `{"holder":"greedy@host","hostname":"host","pid":1,"acquiredAt":"${
          new Date().toISOString()
        }","ttlMs":18446744073709551615,"nonce":"greedy"}`,
      ),
    );
    const capped = await runCli(["lock", "status", ...flags]);
    assertEquals(capped.code, 0, capped.stderr);
    assert(capped.stdout.includes("[lock-ttl-capped]"), capped.stdout);
    const live = capped.stdout.match(/live for (\d+) s more/);
    assert(live && Number(live[1]) <= 3600, capped.stdout);

    // A body that is no lock: no nonce to name, so `unreadable` releases it, and only then.
    await store.putObject(".datastore.lock", new TextEncoder().encode("\u0000 not json"));
    const unreadable = await runCli(["lock", "status", ...flags]);
    assert(unreadable.stdout.includes("--force unreadable"), unreadable.stdout);
    const wrong = await runCli(["lock", "release", "--force", "some-nonce", ...flags]);
    assertEquals(wrong.code, 3, wrong.stdout);
    assert((await store.headObject(".datastore.lock")).exists);
    const released = await runCli(["lock", "release", "--force", "unreadable", ...flags]);
    assertEquals(released.code, 0, released.stdout + released.stderr);
    assertEquals((await store.headObject(".datastore.lock")).exists, false);
    // `unreadable` never releases a readable lock.
    await store.putObject(
      ".datastore.lock",
      new TextEncoder().encode(JSON.stringify({
        holder: "a@b",
        hostname: "b",
        pid: 2,
        acquiredAt: new Date().toISOString(),
        ttlMs: 30_000,
        nonce: "real",
      })),
    );
    const refused = await runCli(["lock", "release", "--force", "unreadable", ...flags]);
    assertEquals(refused.code, 3, refused.stdout);
    assert((await store.headObject(".datastore.lock")).exists);
  } finally {
    store.destroy();
    await server.stop();
    await Deno.remove(cache, { recursive: true });
  }
});
