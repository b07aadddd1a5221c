/**
 * `doctor --probe-server`: what the server honours of conditional requests, said where users
 * look, with the probe object gone afterwards; a server that ignores conditional writes is a
 * problem (exit 3) naming what push will do about it.
 */
import { assert, assertEquals } from "../harness/assert.ts";
import { commonFlags, runCli, runCliJson } from "../harness/cli.ts";
import { bucketKeys } from "../harness/datastore.ts";
import { startFaultProxy, throughProxy } from "../harness/fault_proxy.ts";
import { SERVER_KINDS, startServer } from "../harness/servers.ts";

interface ServerProbe {
  writes: boolean;
  deletes: boolean;
  headRoundTripMs: number;
}

for (const kind of SERVER_KINDS) {
  Deno.test(`on ${kind}, doctor --probe-server says which conditions hold and leaves no probe behind`, async () => {
    const server = await startServer(kind);
    const store = await server.bucket("probe");
    const cache = await Deno.makeTempDir({ prefix: "s3sync-probe-" });
    const flags = commonFlags(server, "probe", cache, { namespace: "ns" });
    try {
      const plain = await runCliJson(["doctor", ...flags]);
      assertEquals(plain.code, 0, plain.stderr);
      assertEquals(plain.json.server, undefined, "doctor probes only when asked");

      const probed = await runCliJson(["doctor", "--probe-server", ...flags]);
      assertEquals(probed.code, 0, probed.stderr);
      const found = probed.json.server as ServerProbe;
      assertEquals(found.writes, true);
      // s3s-fs ignores If-Match on DELETE (docs/reliability.md); moto honours it.
      assertEquals(found.deletes, kind === "moto");
      assert(
        found.headRoundTripMs >= 0 && found.headRoundTripMs < 10_000,
        `${found.headRoundTripMs}`,
      );
      assertEquals(await bucketKeys(store), [], "the probe objects are removed");

      const text = await runCli(["doctor", "--probe-server", ...flags]);
      assertEquals(text.code, 0, text.stderr);
      assert(text.stdout.includes("Doctor: healthy."), text.stdout);
      assert(
        kind === "moto"
          ? text.stdout.includes("honours conditional writes and deletes")
          : /ignores If-Match on DELETE: a delete is checked by a HEAD just before it.*ms here/
            .test(text.stdout),
        text.stdout,
      );
    } finally {
      store.destroy();
      await server.stop();
      await Deno.remove(cache, { recursive: true });
    }
  });
}

Deno.test("doctor --probe-server through a proxy that drops every condition: conditional-writes-unsupported, exit 3", async () => {
  const server = await startServer("moto");
  const store = await server.bucket("no-conditions");
  const proxy = startFaultProxy(server.endpoint, { seed: 1, dropConditions: true });
  const cache = await Deno.makeTempDir({ prefix: "s3sync-probe-" });
  const flags = commonFlags(throughProxy(server, proxy), "no-conditions", cache, {
    namespace: "ns",
  });
  try {
    const probed = await runCliJson(["doctor", "--probe-server", ...flags]);
    assertEquals(probed.code, 3, probed.stderr);
    assertEquals((probed.json.server as ServerProbe).writes, false);
    const problems = probed.json.problems as { code: string; message: string }[];
    assertEquals(problems.map((p) => p.code), ["conditional-writes-unsupported"]);
    assert(problems[0].message.includes("--allow-unconditional"), problems[0].message);
    assert((proxy.stats.injected["condition-dropped"] ?? 0) > 0, "the proxy dropped conditions");
    assertEquals(await bucketKeys(store), [], "the probe objects are removed");

    // What the doctor warned of is what push does: it refuses before writing anything.
    await Deno.mkdir(`${cache}/ns/data`, { recursive: true });
    await Deno.writeTextFile(`${cache}/ns/data/a.yaml`, "a: 1\n");
    const push = await runCliJson(["push", "--yes", ...flags]);
    assertEquals(push.code, 1, push.stderr);
    assertEquals((push.json.error as { code: string }).code, "conditional-writes-unsupported");
    assertEquals(await bucketKeys(store), []);
  } finally {
    store.destroy();
    await proxy.stop();
    await server.stop();
    await Deno.remove(cache, { recursive: true });
  }
});
