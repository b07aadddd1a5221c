/**
 * Symlinked folders inside the cache, through the CLI against moto: pull, repair, push and
 * doctor never write, move or read through one. Each cache sits in a fenced parent folder next
 * to the folder the link points at, so anything written outside the cache shows, and the
 * outside files are compared byte for byte.
 */
import { assert, assertEquals } from "../harness/assert.ts";
import { commonFlags, runCli, runCliJson } from "../harness/cli.ts";
import { bucketKeys, seedBucketWithIndex, sha256Hex } from "../harness/datastore.ts";
import { contentOf, datastoreRels, listTree } from "../harness/seed.ts";
import { type S3Server, startServer } from "../harness/servers.ts";

const encoder = new TextEncoder();

/** A cache and an `outside` folder in an otherwise empty parent, with a snapshot of both. */
async function fenced(): Promise<{
  parent: string;
  cache: string;
  outside: string;
  /** Every file outside the cache with its SHA-256, by parent-relative path. */
  outsideState(): Promise<Map<string, string>>;
}> {
  const parent = await Deno.makeTempDir({ prefix: "s3sync-symlinks-" });
  const outside = `${parent}/outside`;
  await Deno.mkdir(outside);
  await Deno.writeTextFile(`${outside}/keep.txt`, "bytes that live outside the cache\n");
  return {
    parent,
    cache: `${parent}/cache`,
    outside,
    outsideState: async () => {
      // listTree never follows links, so the cache's links show as entries of the cache.
      const out = new Map<string, string>();
      for (const name of (await listTree(parent)).filter((p) => !p.startsWith("cache/"))) {
        out.set(name, await sha256Hex(await Deno.readFile(`${parent}/${name}`)));
      }
      return out;
    },
  };
}

/** The namespace used throughout, and its rels: 12 of the 72 are under `logs/`. */
const NS = "prod";
const RELS = datastoreRels(72);
const LOG_RELS = RELS.filter((rel) => rel.startsWith("logs/"));

async function withServer(
  bucket: string,
  body: (server: S3Server, store: Awaited<ReturnType<S3Server["bucket"]>>) => Promise<void>,
): Promise<void> {
  const server = await startServer("moto");
  const store = await server.bucket(bucket, { prefix: "team" });
  try {
    await body(server, store);
  } finally {
    store.destroy();
    await server.stop();
  }
}

Deno.test("pull with cache/prod/logs -> ../../outside writes nothing outside, reports symlink-in-path, exits 3", async () => {
  await withServer("symlink-pull", async (server, store) => {
    const { parent, cache, outside, outsideState } = await fenced();
    try {
      await seedBucketWithIndex(store, RELS, NS, 0, { sha256: true });
      // A file outside with the name of a remote log: the pull must not overwrite it.
      const clash = LOG_RELS[0].slice("logs/".length);
      await Deno.writeTextFile(`${outside}/${clash}`, "precious, not from the bucket\n");
      await Deno.mkdir(`${cache}/${NS}`, { recursive: true });
      await Deno.symlink("../../outside", `${cache}/${NS}/logs`);
      const before = await outsideState();

      const run = await runCliJson([
        "pull",
        ...commonFlags(server, "symlink-pull", cache, { prefix: "team", namespace: NS }),
      ]);
      assertEquals(run.code, 3, `${run.stdout}\n${run.stderr}`);
      const summary = run.json.summary as { blocked: { code: string; message: string }[] };
      const blocked = summary.blocked.find((b) => b.code === "symlink-in-path");
      assert(blocked, JSON.stringify(summary.blocked));
      assert(blocked.message.includes(`${NS}/logs`), blocked.message);
      const failures = (run.json.report as { failures: { item: string; code: string }[] })
        .failures;
      assertEquals(failures.map((f) => f.item).sort(), [...LOG_RELS].sort());
      assert(failures.every((f) => f.code === "symlink-in-path"), JSON.stringify(failures));

      assertEquals(await outsideState(), before, "nothing outside the cache changed");
      // The rest of the run went on: every file not under the link arrived byte for byte.
      for (const rel of RELS.filter((r) => !r.startsWith("logs/"))) {
        assertEquals(await Deno.readFile(`${cache}/${NS}/${rel}`), contentOf(rel), rel);
      }
      assert((await Deno.lstat(`${cache}/${NS}/logs`)).isSymlink, "the link is left alone");
      // The sidecar does not vouch for a cache that misses files: the next pull tries again.
      const again = await runCliJson([
        "pull",
        ...commonFlags(server, "symlink-pull", cache, { prefix: "team", namespace: NS }),
      ]);
      assertEquals(again.code, 3, again.stderr);
      assertEquals(await outsideState(), before, "nothing outside changed on the second run");
    } finally {
      await Deno.remove(parent, { recursive: true });
    }
  });
});

Deno.test("repair --apply with a symlinked .s3sync-repair moves nothing outside and loses nothing", async () => {
  await withServer("symlink-repair", async (server, store) => {
    const { parent, cache, outsideState } = await fenced();
    try {
      const rels = RELS.slice(0, 12);
      await seedBucketWithIndex(store, rels, NS, 0, { sha256: true });
      // Root-level copies that differ from the remote ones: the plan backs them up.
      const differing = rels.slice(0, 4);
      const local = new Map(
        differing.map((rel) => [rel, encoder.encode(`local edit of ${rel}\n`)]),
      );
      for (const [rel, data] of local) {
        await Deno.mkdir(`${cache}/${rel}`.replace(/\/[^/]*$/, ""), { recursive: true });
        await Deno.writeFile(`${cache}/${rel}`, data);
      }
      await Deno.symlink("../outside", `${cache}/.s3sync-repair`);
      const before = await outsideState();
      const flags = commonFlags(server, "symlink-repair", cache, {
        prefix: "team",
        namespace: NS,
      });

      const dry = await runCliJson(["repair", ...flags]);
      assertEquals(dry.code, 3, dry.stderr);
      assertEquals(await outsideState(), before, "a dry repair writes nothing");
      const planned = (dry.json.plan as { backup: { from: string }[] }).backup.map((m) => m.from);
      assertEquals(planned.sort(), [...differing].sort(), "the plan backs up the root copies");

      const applied = await runCliJson(["repair", ...flags, "--apply"]);
      assertEquals(applied.code, 3, `${applied.stdout}\n${applied.stderr}`);
      const refused = applied.json.refused as { item: string; code: string }[];
      assert(refused.length > 0, JSON.stringify(applied.json));
      assert(refused.every((r) => r.code === "symlink-in-path"), JSON.stringify(refused));
      for (const rel of differing) {
        assert(refused.some((r) => r.item === rel), `${rel} refused: ${JSON.stringify(refused)}`);
      }

      assertEquals(await outsideState(), before, "nothing moved or written outside the cache");
      // Nothing lost: each refused backup is still where it was, byte for byte.
      for (const [rel, data] of local) assertEquals(await Deno.readFile(`${cache}/${rel}`), data);
      // The rest ran: the namespace folder was hydrated.
      for (const rel of rels) {
        assertEquals(await Deno.readFile(`${cache}/${NS}/${rel}`), contentOf(rel), rel);
      }
      assert((await Deno.lstat(`${cache}/.s3sync-repair`)).isSymlink, "the link is left alone");
    } finally {
      await Deno.remove(parent, { recursive: true });
    }
  });
});

Deno.test("push with a symlinked folder uploads nothing from outside, deletes nothing, exits 3", async () => {
  await withServer("symlink-push", async (server, store) => {
    const { parent, cache, outside, outsideState } = await fenced();
    try {
      await seedBucketWithIndex(store, RELS, NS, 0, { sha256: true });
      const flags = commonFlags(server, "symlink-push", cache, { prefix: "team", namespace: NS });
      const pulled = await runCliJson(["pull", ...flags]);
      assertEquals(pulled.code, 0, pulled.stderr);
      // The synced logs folder is replaced by a link to a folder of other files.
      await Deno.remove(`${cache}/${NS}/logs`, { recursive: true });
      await Deno.writeTextFile(`${outside}/secret.log`, "must never reach the bucket\n");
      await Deno.symlink("../../outside", `${cache}/${NS}/logs`);
      // Local work beside the link still goes up.
      const work = "data/aws/ec2/vpc/m-new/state/0/raw";
      await Deno.mkdir(`${cache}/${NS}/data/aws/ec2/vpc/m-new/state/0`, { recursive: true });
      await Deno.writeTextFile(`${cache}/${NS}/${work}`, "new local work\n");
      const before = await outsideState();
      const keysBefore = await bucketKeys(store, `${NS}/logs/`);
      assertEquals(keysBefore.length, LOG_RELS.length);

      const pushed = await runCliJson(["push", ...flags, "--delete-missing", "--yes"]);
      assertEquals(pushed.code, 3, `${pushed.stdout}\n${pushed.stderr}`);
      const summary = pushed.json.summary as {
        upload: number;
        delete: number;
        blocked: { code: string }[];
      };
      assert(
        summary.blocked.some((b) => b.code === "symlink-in-path"),
        JSON.stringify(summary.blocked),
      );
      assertEquals(summary.delete, 0, "no delete while the walk is incomplete");
      assertEquals(await bucketKeys(store, `${NS}/logs/`), keysBefore, "logs kept, none added");
      assert(
        (await bucketKeys(store, NS)).includes(`${NS}/${work}`),
        "the rest of the push ran",
      );
      for (const key of await bucketKeys(store)) {
        assert(!key.includes("secret") && !key.includes("keep.txt"), `uploaded ${key}`);
      }
      assertEquals(await outsideState(), before, "nothing outside the cache changed");
    } finally {
      await Deno.remove(parent, { recursive: true });
    }
  });
});

Deno.test("doctor reports each symlinked folder with symlink-in-path and a fix", async () => {
  await withServer("symlink-doctor", async (server, store) => {
    const { parent, cache, outsideState } = await fenced();
    try {
      await seedBucketWithIndex(store, RELS, NS, 0, { sha256: true });
      const flags = commonFlags(server, "symlink-doctor", cache, {
        prefix: "team",
        namespace: NS,
      });
      assertEquals((await runCliJson(["pull", ...flags])).code, 0);
      await Deno.remove(`${cache}/${NS}/logs`, { recursive: true });
      await Deno.symlink("../../outside", `${cache}/${NS}/logs`);
      await Deno.symlink("../outside", `${cache}/.s3sync-repair`);
      const before = await outsideState();

      const doc = await runCliJson(["doctor", ...flags]);
      assertEquals(doc.code, 3, doc.stderr);
      const problems = doc.json.problems as { code: string; message: string }[];
      const symlinked = problems.filter((p) => p.code === "symlink-in-path");
      assertEquals(symlinked.length, 2, JSON.stringify(problems));
      assert(symlinked.some((p) => p.message.includes(`${NS}/logs`)), JSON.stringify(symlinked));
      assert(
        symlinked.some((p) => p.message.includes(".s3sync-repair")),
        JSON.stringify(symlinked),
      );
      assert(symlinked.every((p) => p.message.includes("real folder")), JSON.stringify(symlinked));
      assertEquals(await outsideState(), before);
    } finally {
      await Deno.remove(parent, { recursive: true });
    }
  });
});

Deno.test("a symlinked file is never pushed, and push (every time) and doctor say so", async () => {
  await withServer("symlink-file", async (server, store) => {
    const { parent, cache, outside, outsideState } = await fenced();
    try {
      const flags = commonFlags(server, "symlink-file", cache, { prefix: "team", namespace: NS });
      await Deno.mkdir(`${cache}/${NS}/logs`, { recursive: true });
      await Deno.writeTextFile(`${cache}/${NS}/logs/real.log`, "real");
      await Deno.symlink(`${outside}/keep.txt`, `${cache}/${NS}/logs/linked.log`);
      const before = await outsideState();
      for (let round = 0; round < 2; round++) {
        // The second push would end on the seal; the link keeps it on the normal path.
        const pushed = await runCli(["push", "--yes", ...flags]);
        assertEquals(pushed.code, 0, pushed.stderr);
        assert(
          pushed.stderr.includes(
            `symlinked file not pushed (links are never followed): ${NS}/logs/linked.log`,
          ),
          pushed.stderr,
        );
      }
      assertEquals(await bucketKeys(store, `${NS}/logs/`), [`${NS}/logs/real.log`]);
      const doc = await runCliJson(["doctor", ...flags]);
      assertEquals(doc.code, 3, doc.stdout);
      const problems = doc.json.problems as { code: string; message: string }[];
      const linked = problems.filter((p) => p.code === "symlinked-file");
      assertEquals(linked.length, 1, JSON.stringify(problems));
      assert(linked[0].message.includes(`${NS}/logs/linked.log`), linked[0].message);
      assertEquals(await outsideState(), before);
    } finally {
      await Deno.remove(parent, { recursive: true });
    }
  });
});
