/**
 * Two caches editing one bucket through the CLI, on moto over loopback: every way a write was
 * lost before the base (issue 13's cases 1, 2, 6, 8 and 9), each asserted on the bucket and the
 * caches, and the conflict path end to end (kept aside, reported, resolved either way).
 */
import { assert, assertEquals } from "../harness/assert.ts";
import { commonFlags, runCli, runCliJson } from "../harness/cli.ts";
import { startFaultProxy, throughProxy } from "../harness/fault_proxy.ts";
import { type S3Server, startServer } from "../harness/servers.ts";

const decoder = new TextDecoder();
const encoder = new TextEncoder();

/** Two caches on one bucket, and a way to run the CLI as either. */
async function twoCaches(server: S3Server, bucket: string, namespace = "prod") {
  const store = await server.bucket(bucket);
  const parent = await Deno.makeTempDir({ prefix: "s3sync-two-way-" });
  const caches = { a: `${parent}/a`, b: `${parent}/b` };
  // `--yes` is a flag of push only: any other command refuses it (exit 2).
  const run = (who: "a" | "b", ...args: string[]) =>
    runCliJson([
      ...args,
      ...commonFlags(server, bucket, caches[who], { namespace }),
      ...(args[0] === "push" ? ["--yes"] : []),
    ]);
  const write = async (who: "a" | "b", rel: string, text: string) => {
    const path = `${caches[who]}/${namespace}/${rel}`;
    await Deno.mkdir(path.slice(0, path.lastIndexOf("/")), { recursive: true });
    await Deno.writeTextFile(path, text);
  };
  const read = (who: "a" | "b", rel: string) =>
    Deno.readTextFile(`${caches[who]}/${namespace}/${rel}`);
  const remote = async (rel: string) =>
    decoder.decode((await store.getObject(`${namespace}/${rel}`)).data);
  const remoteIndex = async () =>
    JSON.parse(decoder.decode((await store.getObject(`${namespace}/.datastore-index.json`)).data));
  return {
    store,
    caches,
    run,
    write,
    read,
    remote,
    remoteIndex,
    close: () => Deno.remove(parent, { recursive: true }),
  };
}

/** The `blocked` codes of a CLI JSON result. */
function blockedCodes(json: Record<string, unknown>): string[] {
  const blocked = (json.blocked ?? (json.summary as { blocked?: unknown })?.blocked ?? []) as {
    code: string;
  }[];
  return blocked.map((b) => b.code);
}

Deno.test("case 1: a stale copy never overwrites a newer version another cache pushed", async () => {
  const server = await startServer("moto");
  const t = await twoCaches(server, "case-one");
  try {
    await t.write("a", "logs/shared.log", "v1");
    assertEquals((await t.run("a", "push")).code, 0);
    assertEquals((await t.run("b", "pull")).code, 0);
    await t.write("b", "logs/shared.log", "v2, from B");
    assertEquals((await t.run("b", "push")).code, 0);
    // A never touched the file; it adds other work and pushes.
    await t.write("a", "logs/other.log", "A's other work");
    const pushed = await t.run("a", "push");
    assertEquals(pushed.code, 0, pushed.stderr);
    assertEquals(await t.remote("logs/shared.log"), "v2, from B");
    assertEquals(await t.remote("logs/other.log"), "A's other work");
    // And A's next pull brings B's version.
    assertEquals((await t.run("a", "pull")).code, 0);
    assertEquals(await t.read("a", "logs/shared.log"), "v2, from B");
  } finally {
    await t.close();
    await server.stop();
  }
});

Deno.test("case 2: a pull never overwrites an unpushed edit; changed on both sides, ours is kept aside and resolve settles it either way", async () => {
  const server = await startServer("moto");
  const t = await twoCaches(server, "case-two");
  try {
    await t.write("a", "logs/mine.log", "base");
    await t.write("a", "logs/both.log", "base");
    await t.write("a", "logs/again.log", "base");
    assertEquals((await t.run("a", "push")).code, 0);
    assertEquals((await t.run("b", "pull")).code, 0);
    // B changes two files remotely; A edits three (one only A touched) at other sizes.
    await t.write("b", "logs/both.log", "B's version, pushed first");
    await t.write("b", "logs/again.log", "B's other version");
    assertEquals((await t.run("b", "push")).code, 0);
    await t.write("a", "logs/mine.log", "A's unpushed edit");
    await t.write("a", "logs/both.log", "A's version, later");
    await t.write("a", "logs/again.log", "A's second version");

    const pulled = await t.run("a", "pull");
    assertEquals(pulled.code, 3, pulled.stdout);
    assertEquals(blockedCodes(pulled.json), ["conflict"]);
    // Only A touched mine.log: kept for the push. The two conflicts: B's in place, A's aside.
    assertEquals(await t.read("a", "logs/mine.log"), "A's unpushed edit");
    assertEquals(await t.read("a", "logs/both.log"), "B's version, pushed first");
    assertEquals(await t.read("a", "logs/again.log"), "B's other version");
    const copies = [];
    for await (const e of Deno.readDir(`${t.caches.a}/.s3sync-conflicts/prod/logs`)) {
      copies.push(e.name);
    }
    assertEquals(copies.length, 2, copies.join(", "));
    const message = (pulled.json.summary as { blocked: { message: string }[] }).blocked[0].message;
    assert(message.includes("s3sync resolve --keep mine"), message);

    // Keep mine for both.log: A's version goes back and into the bucket; its copy goes.
    const mine = await t.run("a", "resolve", "--keep", "mine", "logs/both.log");
    assertEquals(mine.code, 0, mine.stdout + mine.stderr);
    assertEquals(await t.remote("logs/both.log"), "A's version, later");
    assertEquals(await t.read("a", "logs/both.log"), "A's version, later");
    // The push resolve ran also sent A's unpushed edit (the README says so).
    assertEquals(await t.remote("logs/mine.log"), "A's unpushed edit");
    // Keep theirs for again.log: the bucket keeps B's, A's copy is dropped.
    const theirs = await t.run("a", "resolve", "--keep", "theirs", "logs/again.log");
    assertEquals(theirs.code, 0, theirs.stdout + theirs.stderr);
    assertEquals(await t.remote("logs/again.log"), "B's other version");
    const left = [];
    for await (const e of Deno.readDir(`${t.caches.a}/.s3sync-conflicts/prod/logs`)) {
      left.push(e.name);
    }
    assertEquals(left, []);
    // Nothing of the conflict folder ever reached the bucket, and B now pulls A's choice.
    const keys = (await t.store.listAllObjects()).map((o) => o.key);
    assert(!keys.some((k) => k.includes("conflict")), keys.join(", "));
    assertEquals((await t.run("b", "pull")).code, 0);
    assertEquals(await t.read("b", "logs/both.log"), "A's version, later");
    // Asking to resolve a file with no copy says so (exit 3), and changes nothing.
    const none = await t.run("a", "resolve", "--keep", "mine", "logs/mine.log");
    assertEquals(none.code, 3);
    assertEquals(blockedCodes(none.json), ["no-conflict-copy"]);
  } finally {
    await t.close();
    await server.stop();
  }
});

Deno.test("case 6: one transient 404 on a download neither prunes the shared index nor loses the file", async () => {
  const server = await startServer("moto");
  const t = await twoCaches(server, "case-six");
  const proxy = startFaultProxy(server.endpoint, {
    seed: 1,
    transientNotFound: ["/prod/logs/flaky.log"],
  });
  try {
    await t.write("a", "logs/flaky.log", "still here");
    await t.write("a", "logs/steady.log", "steady");
    assertEquals((await t.run("a", "push")).code, 0);
    const pulled = await runCliJson([
      "pull",
      ...commonFlags(throughProxy(server, proxy), "case-six", t.caches.b, { namespace: "prod" }),
    ]);
    assertEquals(pulled.code, 0, pulled.stdout + pulled.stderr);
    assertEquals(proxy.stats.injected["transient-404"], 1, "the fault was injected");
    assertEquals(await t.read("b", "logs/flaky.log"), "still here");
    const index = await t.remoteIndex();
    assert(index.entries["logs/flaky.log"], "the shared index keeps the entry");
  } finally {
    await proxy.stop();
    await t.close();
    await server.stop();
  }
});

Deno.test("case 9: local names no key may carry are reported by plan and push (exit 3), never skipped silently", async () => {
  const server = await startServer("moto");
  const t = await twoCaches(server, "case-nine");
  try {
    for (const name of ["aux.log", "back\\slash.log", "tab\there.log", "C:drive.log"]) {
      await t.write("a", `logs/${name}`, name);
    }
    // A path over S3's 1,024-byte key limit (each name within the file system's 255).
    await t.write("a", `logs/${Array(5).fill("d".repeat(220)).join("/")}/deep.log`, "deep");
    await t.write("a", "logs/fine.log", "fine");
    for (const command of ["plan", "push"]) {
      const result = await t.run("a", command);
      assertEquals(result.code, 3, `${command}: ${result.stdout}`);
      assertEquals(blockedCodes(result.json), ["unsafe-local-paths"], command);
      const message = (result.json.summary as { blocked: { message: string }[] }).blocked[0]
        .message;
      assert(message.startsWith("5 local files were not uploaded"), message);
    }
    assertEquals(await t.remote("logs/fine.log"), "fine");
    const keys = (await t.store.listAllObjects()).map((o) => o.key).filter((k) =>
      !k.includes("_index") && !k.endsWith(".json") && !k.includes("_control")
    );
    assertEquals(keys, ["prod/logs/fine.log"]);
  } finally {
    await t.close();
    await server.stop();
  }
});

Deno.test("case 8: paths no file system holds are refused at rebuild and at push, and doctor names the real fix", async () => {
  const server = await startServer("moto");
  const t = await twoCaches(server, "case-eight");
  try {
    // Objects another tool wrote: a file where another key needs a folder, and a name over
    // 255 bytes. No index yet.
    const long = `prod/logs/${"n".repeat(300)}.log`;
    for (const key of ["prod/logs/x", "prod/logs/x/y.log", long, "prod/logs/ok.log"]) {
      await t.store.putObject(key, encoder.encode(key.slice(-8)));
    }
    const rebuilt = await t.run("a", "rebuild-index", "--apply");
    assertEquals(rebuilt.code, 3, rebuilt.stdout);
    const refused = JSON.stringify(rebuilt.json);
    for (const code of ["path-conflict", "path-segment-too-long"]) {
      assert(refused.includes(code), `${code} in ${refused}`);
    }
    const index = await t.remoteIndex();
    assertEquals(Object.keys(index.entries), ["logs/ok.log"]);
    // A pull then fetches what a cache can hold, and fails on nothing.
    const pulled = await t.run("a", "pull");
    assertEquals(pulled.code, 0, pulled.stdout);
    assertEquals(await t.read("a", "logs/ok.log"), "s/ok.log");

    // A local folder where the index holds a file is not uploaded beside it.
    await t.store.putObject(
      "prod/.datastore-index.json",
      encoder.encode(JSON.stringify({
        version: 1,
        entries: {
          ...index.entries,
          "logs/x": { key: "logs/x", size: 8, lastModified: "2026-08-01T12:00:00.000Z" },
        },
      })),
    );
    await t.write("b", "logs/x/mine.log", "a folder here");
    const pushed = await t.run("b", "push");
    assertEquals(pushed.code, 3, pushed.stdout);
    assertEquals(blockedCodes(pushed.json), ["path-conflict"]);
    const after = await t.remoteIndex();
    assert(!after.entries["logs/x/mine.log"], "not indexed beside logs/x");

    // The doctor of a cache under an index naming both says what works, not "run pull".
    await t.store.putObject(
      "prod/.datastore-index.json",
      encoder.encode(JSON.stringify({
        version: 1,
        entries: {
          "logs/x": { key: "logs/x", size: 8, lastModified: "2026-08-01T12:00:00.000Z" },
          "logs/x/y.log": {
            key: "logs/x/y.log",
            size: 8,
            lastModified: "2026-08-01T12:00:00.000Z",
          },
        },
      })),
    );
    const doctor = await runCli([
      "doctor",
      ...commonFlags(server, "case-eight", t.caches.a, { namespace: "prod" }),
    ]);
    assertEquals(doctor.code, 3, doctor.stdout + doctor.stderr);
    const text = doctor.stdout + doctor.stderr;
    assert(text.includes("index-path-conflict"), text);
    assert(text.includes("rebuild-index --apply --force"), text);
    assert(!/index-drift/.test(text), text);
  } finally {
    await t.close();
    await server.stop();
  }
});

Deno.test("a file rewritten here with the same bytes is no conflict when the bucket moves on (swamp's catalog export)", async () => {
  // Swamp core rewrites `.catalog-export.json` in every cache before every push, most often
  // with the same bytes: only its mtime moves. That is no edit; a pull must take the bucket's
  // newer version without keeping a copy or calling it a conflict, whether or not this cache
  // pushed (and so re-hashed the file) in between.
  const server = await startServer("moto");
  const t = await twoCaches(server, "same-bytes");
  try {
    await t.write("a", ".catalog-export.json", '[{"row":1}]\n');
    await t.write("a", "logs/other.log", "other");
    assertEquals((await t.run("a", "push")).code, 0);
    assertEquals((await t.run("b", "pull")).code, 0);
    for (const pushesBetween of [true, false]) {
      // B rewrites both files with the bytes it has; the clock moves on between.
      await new Promise((r) => setTimeout(r, 20));
      await t.write("b", ".catalog-export.json", await t.read("b", ".catalog-export.json"));
      await t.write("b", "logs/other.log", await t.read("b", "logs/other.log"));
      if (pushesBetween) {
        const pushed = await t.run("b", "push");
        assertEquals(pushed.code, 0, pushed.stdout);
        assertEquals(pushed.json.summary && (pushed.json.summary as { upload: number }).upload, 0);
      }
      // A's cache moves the bucket on.
      const rows = `[{"row":1},{"row":${pushesBetween ? 2 : 3}}]\n`;
      await t.write("a", ".catalog-export.json", rows);
      assertEquals((await t.run("a", "push")).code, 0);
      const pulled = await t.run("b", "pull");
      assertEquals(pulled.code, 0, pulled.stdout + pulled.stderr);
      assertEquals(await t.read("b", ".catalog-export.json"), rows);
      const aside = await Deno.stat(`${t.caches.b}/.s3sync-conflicts`).then(
        () => true,
        () => false,
      );
      assertEquals(aside, false, "nothing of B's was kept aside");
    }
  } finally {
    await t.close();
    await server.stop();
  }
});

for (const kind of ["moto", "s3s-fs"] as const) {
  Deno.test(`on ${kind}, swamp's latest pointer changed in both caches merges to the higher version, both ways round`, async () => {
    const server = await startServer(kind);
    const t = await twoCaches(server, "pointers");
    const log = "data/command/m1/log";
    const aside = () => Deno.stat(`${t.caches.b}/.s3sync-conflicts`).then(() => true, () => false);
    try {
      await t.write("a", `${log}/1/raw`, "one");
      await t.write("a", `${log}/latest`, "1");
      assertEquals((await t.run("a", "push")).code, 0);
      assertEquals((await t.run("b", "pull")).code, 0);

      // The bucket's pointer is higher: it comes down, nothing of B's pointer is kept aside.
      await t.write("a", `${log}/2/raw`, "two");
      await t.write("a", `${log}/3/raw`, "three");
      await t.write("a", `${log}/latest`, "3");
      assertEquals((await t.run("a", "push")).code, 0);
      await t.write("b", `${log}/latest`, "2");
      const took = await t.run("b", "pull");
      assertEquals(took.code, 0, took.stdout + took.stderr);
      assertEquals(await t.read("b", `${log}/latest`), "3");
      assertEquals(await aside(), false, "no conflict copy");

      // B's pointer is higher (it wrote a version the bucket lacks): it stays, and B's next
      // push takes it up over A's, conditional on the version B's pull saw.
      await t.write("a", `${log}/4/raw`, "four");
      await t.write("a", `${log}/latest`, "4");
      assertEquals((await t.run("a", "push")).code, 0);
      await t.write("b", `${log}/5/raw`, "five");
      await t.write("b", `${log}/latest`, "5");
      const kept = await t.run("b", "pull");
      assertEquals(kept.code, 0, kept.stdout + kept.stderr);
      assertEquals(await t.read("b", `${log}/latest`), "5", JSON.stringify(kept.json));
      assertEquals(await t.read("b", `${log}/4/raw`), "four");
      assertEquals(await aside(), false, "no conflict copy");
      const pushed = await t.run("b", "push");
      assertEquals(pushed.code, 0, pushed.stdout + pushed.stderr);
      assertEquals(await t.remote(`${log}/latest`), "5");
      assertEquals(await t.remote(`${log}/5/raw`), "five");
      const caught = await t.run("a", "pull");
      assertEquals(caught.code, 0, caught.stdout + caught.stderr);
      assertEquals(await t.read("a", `${log}/latest`), "5");
    } finally {
      await t.close();
      await server.stop();
    }
  });
}

Deno.test("a delete pushed from one cache reaches the other on evidence: unchanged copies are removed, an edited one is kept", async () => {
  const server = await startServer("moto");
  const t = await twoCaches(server, "delete-reaches");
  try {
    await t.write("a", "data/m/1/raw", "v1");
    await t.write("a", "data/m/1/metadata.yaml", "meta");
    await t.write("a", "logs/edited.log", "base");
    await t.write("a", "logs/keep.log", "keep");
    assertEquals((await t.run("a", "push")).code, 0);
    assertEquals((await t.run("b", "pull")).code, 0);
    await Deno.remove(`${t.caches.a}/prod/data/m/1`, { recursive: true });
    await Deno.remove(`${t.caches.a}/prod/logs/edited.log`);
    const marked = await t.run("a", "mark-deleted", "data/m/1", "logs/edited.log");
    assertEquals(marked.code, 0, marked.stderr);
    const deleted = await t.run("a", "push");
    assertEquals(deleted.code, 0, deleted.stdout + deleted.stderr);
    // B edited one of the deleted files meanwhile: that one outlives the delete.
    await t.write("b", "logs/edited.log", "edited on b");
    const pulled = await t.run("b", "pull");
    assertEquals(pulled.code, 0, pulled.stdout + pulled.stderr);
    const removed = ((pulled.json.report as { removed?: string[] }).removed ?? []).sort();
    assertEquals(removed, ["data/m/1/metadata.yaml", "data/m/1/raw"]);
    // The emptied version folder goes too (swamp reads versions from folders).
    let folderLeft = true;
    try {
      await Deno.stat(`${t.caches.b}/prod/data/m/1`);
    } catch {
      folderLeft = false;
    }
    assert(!folderLeft, "the emptied version folder was removed");
    assertEquals(await t.read("b", "logs/edited.log"), "edited on b");
    assertEquals(await t.read("b", "logs/keep.log"), "keep");
    // B's next push uploads its edit (as a new file) and brings back nothing it removed.
    const pushed = await t.run("b", "push");
    assertEquals(pushed.code, 0, pushed.stdout + pushed.stderr);
    assertEquals(await t.remote("logs/edited.log"), "edited on b");
    const index = await t.remoteIndex();
    assert(!index.entries["data/m/1/raw"], "not uploaded again");
  } finally {
    await t.close();
    await server.stop();
  }
});

Deno.test("another cache swaps a file for a folder, and back: the pull lands the bucket's shape and keeps ours aside", async () => {
  const server = await startServer("moto");
  const t = await twoCaches(server, "swap-shape");
  try {
    await t.write("a", "logs/swap", "a file");
    await t.write("a", "logs/dir/one.log", "one");
    // A file that stays, so the deletes below are not an emptied tree (`namespace-tree-missing`).
    await t.write("a", "logs/keep.log", "keep");
    assertEquals((await t.run("a", "push")).code, 0);
    assertEquals((await t.run("b", "pull")).code, 0);
    // A replaces the file with a folder and the folder with a file (deletes first, on evidence).
    await Deno.remove(`${t.caches.a}/prod/logs/swap`);
    await Deno.remove(`${t.caches.a}/prod/logs/dir`, { recursive: true });
    const marked = await t.run("a", "mark-deleted", "logs/swap", "logs/dir/one.log");
    assertEquals(marked.code, 0, marked.stderr);
    const deleted = await t.run("a", "push");
    assertEquals(deleted.code, 0, deleted.stdout + deleted.stderr);
    await t.write("a", "logs/swap/inner.log", "now a folder");
    await t.write("a", "logs/dir", "now a file");
    assertEquals((await t.run("a", "push")).code, 0);
    // As a peer that records no deletions (the extension) leaves the index: B has no evidence
    // that its copies were deleted, so they are in the way and kept aside.
    const index = await t.remoteIndex();
    assert(index.s3syncDeleted?.["logs/swap"], "our push recorded the delete");
    delete index.s3syncDeleted;
    await t.store.putObject(
      "prod/.datastore-index.json",
      new TextEncoder().encode(JSON.stringify(index)),
    );

    // B pulls: the bucket's shape lands, B's old copies are kept aside, and it says so.
    const pulled = await t.run("b", "pull");
    assertEquals(pulled.code, 3, pulled.stdout + pulled.stderr);
    assertEquals(blockedCodes(pulled.json), ["conflict"]);
    assertEquals(await t.read("b", "logs/swap/inner.log"), "now a folder");
    assertEquals(await t.read("b", "logs/dir"), "now a file");
    const kept: string[] = [];
    for await (const e of Deno.readDir(`${t.caches.b}/.s3sync-conflicts/prod/logs`)) {
      kept.push(e.name);
    }
    const texts = [];
    for (const name of kept) {
      const path = `${t.caches.b}/.s3sync-conflicts/prod/logs/${name}`;
      if ((await Deno.stat(path)).isFile) texts.push(await Deno.readTextFile(path));
      else {
        for await (const inner of Deno.readDir(path)) {
          texts.push(await Deno.readTextFile(`${path}/${inner.name}`));
        }
      }
    }
    assertEquals(texts.sort(), ["a file", "one"]);
    // Settled: the next pull and push have nothing to do.
    const again = await t.run("b", "pull");
    assertEquals(again.code, 0, again.stdout + again.stderr);
    const pushed = await t.run("b", "push");
    assertEquals(pushed.code, 0, pushed.stdout + pushed.stderr);
    assertEquals(await t.remote("logs/swap/inner.log"), "now a folder");
    assertEquals(await t.remote("logs/dir"), "now a file");
  } finally {
    await t.close();
    await server.stop();
  }
});
