/**
 * The CLI's messages for the common mistakes (issue 17): each says what happened and what to do,
 * with its own stable code and the exit code of the contract. A wrong secret, a bucket that does
 * not exist or whose name no server accepts, access denied, an endpoint nobody listens on, and
 * the usage errors of `--endpoint` without a scheme, an empty `--namespace` and `--json`
 * without a command.
 */
import { VERSION } from "../../js/version.ts";
import { assert, assertEquals } from "../harness/assert.ts";
import { commonFlags, runCli, runCliJson } from "../harness/cli.ts";
import { contentOf, datastoreRels, putAll } from "../harness/seed.ts";
import { startServer } from "../harness/servers.ts";

/** The `{code, message}` of a `--json` error. */
function errorOf(json: Record<string, unknown>): { code: string; message: string } {
  return json.error as { code: string; message: string };
}

/** An endpoint where nothing listens (a port taken and let go). */
function closedEndpoint(): string {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return `http://127.0.0.1:${port}`;
}

Deno.test("a wrong secret or access key is bad-credentials (exit 1), on the GET and on the HEAD of a later pull", async () => {
  const server = await startServer("s3s-fs");
  const store = await server.bucket("creds");
  const cache = await Deno.makeTempDir({ prefix: "s3sync-msg-" });
  const flags = commonFlags(server, "creds", cache);
  try {
    await putAll(store, datastoreRels(3).map((rel) => [rel, contentOf(rel)]));
    // A fresh cache: the first request is a GET, whose answer names the error.
    const fresh = await runCliJson(["pull", ...flags], { AWS_SECRET_ACCESS_KEY: "wrong" });
    assertEquals(fresh.code, 1, fresh.stderr);
    assertEquals(errorOf(fresh.json).code, "bad-credentials");
    assert(errorOf(fresh.json).message.includes("rejected the credentials"), fresh.stdout);
    assert(errorOf(fresh.json).message.includes("AWS_SECRET_ACCESS_KEY"), fresh.stdout);
    assertEquals((await runCli(["pull", ...flags])).code, 0);
    // A pulled cache: the first request is a HEAD, whose 403 has no body to name it.
    const human = await runCli(["pull", ...flags], { AWS_SECRET_ACCESS_KEY: "wrong" });
    assertEquals(human.code, 1, human.stderr);
    assert(human.stderr.includes("error [bad-credentials]:"), human.stderr);
    assert(!human.stderr.includes("UnknownError"), human.stderr);
    const key = await runCliJson(["pull", ...flags], { AWS_ACCESS_KEY_ID: "nobody" });
    assertEquals(key.code, 1, key.stderr);
    assertEquals(errorOf(key.json).code, "bad-credentials");
  } finally {
    store.destroy();
    await server.stop();
    await Deno.remove(cache, { recursive: true });
  }
});

for (const kind of ["moto", "s3s-fs"] as const) {
  Deno.test(`${kind}: a bucket that does not exist is no-such-bucket (exit 1), never narrated as a missing index`, async () => {
    const server = await startServer(kind);
    const cache = await Deno.makeTempDir({ prefix: "s3sync-msg-" });
    try {
      const flags = commonFlags(server, "never-created", cache);
      const human = await runCli(["pull", ...flags]);
      assertEquals(human.code, 1, human.stderr);
      assert(
        human.stderr.includes("error [no-such-bucket]: bucket never-created does not exist"),
        human.stderr,
      );
      assert(human.stderr.includes("check --bucket"), human.stderr);
      assert(!human.stderr.includes("remote index missing"), human.stderr);
      const plan = await runCliJson(["plan", ...flags]);
      assertEquals(plan.code, 1, plan.stderr);
      assertEquals(errorOf(plan.json).code, "no-such-bucket");
    } finally {
      await server.stop();
      await Deno.remove(cache, { recursive: true });
    }
  });
}

Deno.test("an invalid bucket name is invalid-bucket-name (exit 2): `--bucket b` before any request, Bad_Name from the server", async () => {
  const server = await startServer("s3s-fs");
  const cache = await Deno.makeTempDir({ prefix: "s3sync-msg-" });
  try {
    const short = await runCliJson([
      "pull",
      "--bucket",
      "b",
      "--cache",
      cache,
      "--endpoint",
      closedEndpoint(),
    ]);
    assertEquals(short.code, 2, short.stderr);
    assertEquals(errorOf(short.json).code, "invalid-bucket-name");
    assert(errorOf(short.json).message.includes("3 to 63"), short.stdout);
    const served = await runCli(["pull", ...commonFlags(server, "Bad_Name", cache)]);
    assertEquals(served.code, 2, served.stderr);
    assert(served.stderr.includes("error [invalid-bucket-name]:"), served.stderr);
    assert(served.stderr.includes("check --bucket"), served.stderr);
  } finally {
    await server.stop();
    await Deno.remove(cache, { recursive: true });
  }
});

Deno.test("a 403 AccessDenied is access-denied (exit 1) and names the permissions needed", async () => {
  const body = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>AccessDenied</Code>` +
    `<Message>Access Denied</Message></Error>`;
  // A server that refuses everything, as a bucket policy denying these credentials does.
  const denying = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    () => new Response(body, { status: 403, headers: { "content-type": "application/xml" } }),
  );
  const cache = await Deno.makeTempDir({ prefix: "s3sync-msg-" });
  try {
    const endpoint = `http://127.0.0.1:${denying.addr.port}`;
    const flags = [
      "--bucket",
      "locked",
      "--cache",
      cache,
      "--endpoint",
      endpoint,
      "--force-path-style",
    ];
    const result = await runCliJson(["pull", ...flags]);
    assertEquals(result.code, 1, result.stderr);
    assertEquals(errorOf(result.json).code, "access-denied");
    assert(errorOf(result.json).message.includes("s3:GetObject"), result.stdout);
  } finally {
    await denying.shutdown();
    await Deno.remove(cache, { recursive: true });
  }
});

Deno.test("an endpoint nobody listens on is endpoint-unreachable (exit 1), naming the address", async () => {
  const cache = await Deno.makeTempDir({ prefix: "s3sync-msg-" });
  try {
    const endpoint = closedEndpoint();
    const flags = [
      "--bucket",
      "real-bucket",
      "--cache",
      cache,
      "--endpoint",
      endpoint,
      "--force-path-style",
    ];
    const human = await runCli(["pull", ...flags]);
    assertEquals(human.code, 1, human.stderr);
    assert(human.stderr.includes("error [endpoint-unreachable]: cannot reach"), human.stderr);
    assert(human.stderr.includes(`ECONNREFUSED ${new URL(endpoint).host}`), human.stderr);
    assert(human.stderr.includes("check --endpoint"), human.stderr);
  } finally {
    await Deno.remove(cache, { recursive: true });
  }
});

Deno.test('usage errors: --endpoint without a scheme, --namespace "", --json without a command; --help gives each default', async () => {
  const base = ["--bucket", "real-bucket", "--cache", "/tmp/s3sync-never-written"];
  const scheme = await runCli(["pull", ...base, "--endpoint", "127.0.0.1:9000"]);
  assertEquals(scheme.code, 2, scheme.stderr);
  assert(
    scheme.stderr.includes(
      'error [usage]: --endpoint "127.0.0.1:9000" has no scheme: add http:// or https://',
    ),
    scheme.stderr,
  );
  const empty = await runCliJson(["pull", ...base, "--namespace", ""]);
  assertEquals(empty.code, 2, empty.stderr);
  assertEquals(errorOf(empty.json).code, "usage");
  assert(errorOf(empty.json).message.includes("--namespace is empty"), empty.stdout);
  const bare = await runCliJson(["--frobnicate"]);
  assertEquals(bare.code, 2, bare.stderr);
  assertEquals(errorOf(bare.json).code, "usage");
  const help = await runCli(["push", "--help"]);
  assertEquals(help.code, 0);
  assert(help.stdout.includes("(default: pull 50; push, migrate 25)"), help.stdout);
});

Deno.test("under --json, --version and --help print one JSON object; a command that needs no cache says so in its help", async () => {
  const version = await runCli(["--version", "--json"]);
  assertEquals(version.code, 0, version.stderr);
  assertEquals(JSON.parse(version.stdout), { command: "version", version: VERSION });
  const help = await runCli(["push", "--help", "--json"]);
  assertEquals(help.code, 0, help.stderr);
  const parsed = JSON.parse(help.stdout);
  assertEquals([parsed.command, parsed.commands], ["help", ["push"]]);
  assert(parsed.usage.startsWith("usage: s3sync push --bucket B --cache DIR"), parsed.usage);
  const overview = JSON.parse((await runCli(["--help", "--json"])).stdout);
  assert(overview.usage.includes("commands:"), overview.usage);
  // `lock` and `migrate` take no cache: their usage line and option list agree.
  for (const command of ["lock", "migrate"]) {
    const text = (await runCli([command, "--help"])).stdout;
    assert(!text.includes("--cache DIR ["), text);
    assert(text.includes("cache folder (not used by this command)"), text);
    assert(!/--cache DIR +cache folder.*\(required\)/.test(text), text);
  }
  assert((await runCli(["push", "--help"])).stdout.includes("(required)"));
});

Deno.test("folder markers (zero-byte keys ending in /, as the S3 console makes) are skipped and counted: pull exits 0", async () => {
  const server = await startServer("moto");
  const store = await server.bucket("console-folders");
  const cache = await Deno.makeTempDir({ prefix: "s3sync-msg-" });
  const flags = commonFlags(server, "console-folders", cache, { namespace: "ns" });
  try {
    const rels = datastoreRels(5);
    const markers = ["ns/", "ns/workflow-runs/", "ns/data/"];
    await putAll(store, [
      ...rels.map((rel): [string, Uint8Array] => [`ns/${rel}`, contentOf(rel)]),
      ...markers.map((key): [string, Uint8Array] => [key, new Uint8Array()]),
    ]);
    const dry = await runCliJson(["rebuild-index", ...flags]);
    assertEquals(dry.code, 0, dry.stdout);
    const report = dry.json.report as { skippedFolderMarkers: number; skippedUnsafe: number };
    assertEquals(report.skippedFolderMarkers, markers.length);
    assertEquals(report.skippedUnsafe, 0);
    const pulled = await runCli(["pull", ...flags]);
    assertEquals(pulled.code, 0, pulled.stdout + pulled.stderr);
    assert(pulled.stdout.includes("0 unsafe, 3 folder markers"), pulled.stdout);
    assert(!pulled.stdout.includes("unsafe-keys"), pulled.stdout);
  } finally {
    store.destroy();
    await server.stop();
    await Deno.remove(cache, { recursive: true });
  }
});

Deno.test("a cache path that is a file is cache-not-a-folder (exit 2) naming it, for plan and pull alike (never `push failed`)", async () => {
  const file = await Deno.makeTempFile({ prefix: "s3sync-msg-" });
  try {
    for (const command of ["plan", "pull"]) {
      const args = [command, "--bucket", "real-bucket", "--cache", file];
      const human = await runCli([...args, "--endpoint", closedEndpoint(), "--force-path-style"]);
      assertEquals(human.code, 2, human.stderr);
      assert(
        human.stderr.includes(
          `error [cache-not-a-folder]: ${file} is a file where a folder is needed`,
        ),
        human.stderr,
      );
      assert(!human.stderr.includes("push failed"), human.stderr);
    }
  } finally {
    await Deno.remove(file);
  }
});
