/**
 * What the CLI tells a person while and after it works (issue 17): `pull --verify` brings back
 * files deleted here (the fast path's message names it), `plan` names the missing files, a wait
 * for the datastore lock says who holds it, and a push against an endpoint that keeps failing
 * stops early and says what it did not attempt.
 */
import { assert, assertEquals } from "../harness/assert.ts";
import { commonFlags, runCli, runCliJson } from "../harness/cli.ts";
import { contentOf, datastoreRels, putAll } from "../harness/seed.ts";
import { startServer } from "../harness/servers.ts";
import { startFaultProxy, throughProxy } from "../harness/fault_proxy.ts";

Deno.test("after local deletes, pull says nothing to do and names --verify, which brings them back", async () => {
  const server = await startServer("s3s-fs");
  const store = await server.bucket("verify");
  const cache = await Deno.makeTempDir({ prefix: "s3sync-fb-" });
  const flags = commonFlags(server, "verify", cache);
  try {
    const rels = datastoreRels(5);
    await putAll(store, rels.map((rel) => [rel, contentOf(rel)]));
    assertEquals((await runCli(["pull", ...flags])).code, 0);
    await Deno.remove(`${cache}/${rels[0]}`);
    const fast = await runCli(["pull", ...flags]);
    assertEquals(fast.code, 0, fast.stderr);
    assert(fast.stdout.includes("`s3sync pull --verify` checks every file"), fast.stdout);
    const verified = await runCliJson(["pull", "--verify", ...flags]);
    assertEquals(verified.code, 0, verified.stderr);
    assertEquals((verified.json.summary as { download: number }).download, 1);
    assertEquals(await Deno.readFile(`${cache}/${rels[0]}`), contentOf(rels[0]));
  } finally {
    store.destroy();
    await server.stop();
    await Deno.remove(cache, { recursive: true });
  }
});

Deno.test("plan names the missing files: 20 in the human report, all in --json", async () => {
  const server = await startServer("s3s-fs");
  const store = await server.bucket("missing");
  const cache = await Deno.makeTempDir({ prefix: "s3sync-fb-" });
  const flags = commonFlags(server, "missing", cache);
  try {
    const rels = datastoreRels(30);
    await putAll(store, rels.map((rel) => [rel, contentOf(rel)]));
    assertEquals((await runCli(["pull", ...flags])).code, 0);
    const gone = rels.slice(0, 25);
    for (const rel of gone) await Deno.remove(`${cache}/${rel}`);
    const human = await runCli(["plan", ...flags]);
    assertEquals(human.code, 0, human.stderr);
    const named = human.stdout.split("\n").filter((l) => l.trim().startsWith("missing "));
    assertEquals(named.length, 20, human.stdout);
    assert(human.stdout.includes("... and 5 more missing"), human.stdout);
    const json = await runCliJson(["plan", ...flags]);
    const plan = json.json.plan as { missing: string[] };
    assertEquals([...plan.missing].sort(), [...gone].sort());
  } finally {
    store.destroy();
    await server.stop();
    await Deno.remove(cache, { recursive: true });
  }
});

Deno.test("waiting for a live lock says who holds it, then lock-timeout names the holder (exit 1)", async () => {
  const server = await startServer("s3s-fs");
  const store = await server.bucket("locked");
  const cache = await Deno.makeTempDir({ prefix: "s3sync-fb-" });
  const flags = commonFlags(server, "locked", cache);
  try {
    const body = {
      holder: "alice@build-7",
      hostname: "build-7",
      pid: 4242,
      acquiredAt: new Date().toISOString(),
      ttlMs: 600_000,
      nonce: "held-by-alice",
    };
    await store.putObject(".datastore.lock", new TextEncoder().encode(JSON.stringify(body)));
    await Deno.mkdir(`${cache}/data`, { recursive: true });
    await Deno.writeTextFile(`${cache}/data/new.json`, "{}");
    const pushed = await runCli(["push", "--lock-wait", "2", ...flags]);
    assertEquals(pushed.code, 1, pushed.stderr);
    assert(
      pushed.stderr.includes("is held by alice@build-7 (host build-7, pid 4242)"),
      pushed.stderr,
    );
    assert(pushed.stderr.includes("waiting up to 2 s for it"), pushed.stderr);
    assert(pushed.stderr.includes("lock-timeout"), pushed.stderr);
  } finally {
    store.destroy();
    await server.stop();
    await Deno.remove(cache, { recursive: true });
  }
});

Deno.test("a push whose uploads keep failing stops after 10 in a row and says what it did not attempt", async () => {
  // moto: s3s-fs checks the signed Host, which the proxy changes.
  const server = await startServer("moto");
  const store = await server.bucket("failing");
  const proxy = startFaultProxy(server.endpoint, { seed: 7 });
  const cache = await Deno.makeTempDir({ prefix: "s3sync-fb-" });
  const flags = commonFlags(throughProxy(server, proxy), "failing", cache);
  try {
    // An index first, so the push's reads succeed; then every PUT of a data file fails (not the
    // conditional-write probe in the control folder, which goes before the first upload: this
    // test is about the uploads' breaker).
    await Deno.mkdir(`${cache}/data`, { recursive: true });
    await Deno.writeTextFile(`${cache}/data/first.json`, "{}");
    const seeded = await runCli(["push", ...flags]);
    assertEquals(seeded.code, 0, seeded.stderr);
    for (let i = 0; i < 40; i++) await Deno.writeTextFile(`${cache}/data/f${i}.json`, `${i}`);
    proxy.setPlan({
      seed: 7,
      failRequests: {
        match: (method, target) => method === "PUT" && target.startsWith("/failing/data/"),
        times: Infinity,
      },
    });
    const putsBefore = proxy.stats.byMethod.PUT ?? 0;
    const pushed = await runCli(["push", "--concurrency", "1", ...flags]);
    assertEquals(pushed.code, 1, pushed.stderr);
    assert(
      pushed.stdout.includes("40 failed (30 of them not attempted: the endpoint kept failing)"),
      pushed.stdout,
    );
    assert(
      pushed.stdout.includes("not attempted: the 10 requests before it failed"),
      pushed.stdout,
    );
    // Ten uploads tried (each with its retries), none of the thirty after them.
    const puts = (proxy.stats.byMethod.PUT ?? 0) - putsBefore;
    assert(puts < 20 * 10, `${puts} PUTs`);
    proxy.setPlan({ seed: 7 });
    const human = await runCli(["push", "--concurrency", "1", ...flags]);
    assertEquals(human.code, 0, human.stderr);
    // Healed, the next push sends all of them.
    assert(human.stdout.includes("40 uploaded"), human.stdout);
  } finally {
    store.destroy();
    await proxy.stop();
    await server.stop();
    await Deno.remove(cache, { recursive: true });
  }
});

Deno.test("a namespace typo (Prod for prod) warns that nothing is stored there and names prod", async () => {
  const server = await startServer("s3s-fs");
  const store = await server.bucket("typo");
  const cache = await Deno.makeTempDir({ prefix: "s3sync-fb-" });
  try {
    const rels = datastoreRels(3);
    await putAll(store, rels.map((rel) => [`prod/${rel}`, contentOf(rel)]));
    await Deno.mkdir(`${cache}/Prod/data`, { recursive: true });
    await Deno.writeTextFile(`${cache}/Prod/data/local.json`, "{}");
    const flags = commonFlags(server, "typo", cache, { namespace: "Prod" });
    const planned = await runCli(["plan", ...flags]);
    assertEquals(planned.code, 0, planned.stderr);
    assert(
      planned.stderr.includes(
        "warning: nothing is stored under namespace Prod yet (a new datastore?); names are case-sensitive: did you mean --namespace prod?",
      ),
      planned.stderr,
    );
    const pulled = await runCliJson(["pull", ...flags]);
    assertEquals(pulled.code, 0, pulled.stderr);
    const rebuilt = (pulled.json.report as { rebuilt: { hint: string } }).rebuilt;
    assert(rebuilt.hint.includes("did you mean --namespace prod?"), JSON.stringify(rebuilt));
    // A real namespace with data gets no warning.
    const right = await runCli([
      "pull",
      ...commonFlags(server, "typo", cache, { namespace: "prod" }),
    ]);
    assert(!right.stderr.includes("warning: nothing is stored"), right.stderr);
  } finally {
    store.destroy();
    await server.stop();
    await Deno.remove(cache, { recursive: true });
  }
});

Deno.test("rebuild-index on a bucket whose index exists never says the index is missing", async () => {
  const server = await startServer("s3s-fs");
  const store = await server.bucket("present");
  const cache = await Deno.makeTempDir({ prefix: "s3sync-fb-" });
  const flags = commonFlags(server, "present", cache);
  try {
    const rels = datastoreRels(3);
    await putAll(store, rels.map((rel) => [rel, contentOf(rel)]));
    assertEquals((await runCli(["pull", ...flags])).code, 0); // publishes a rebuilt index
    const rebuilt = await runCli(["rebuild-index", ...flags]);
    assertEquals(rebuilt.code, 0, rebuilt.stderr);
    assert(!rebuilt.stderr.includes("remote index missing"), rebuilt.stderr);
    assert(rebuilt.stderr.includes("rebuilding the index from a listing"), rebuilt.stderr);
  } finally {
    store.destroy();
    await server.stop();
    await Deno.remove(cache, { recursive: true });
  }
});
