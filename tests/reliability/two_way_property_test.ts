/**
 * The three-way rule as a property: for random interleavings of edits, pushes and pulls on two
 * caches sharing one bucket (moto on loopback, the real engine), no write that was ever made
 * or pushed disappears from the bucket, both caches and both caches' conflict folders, unless
 * a later write was made on top of it (an edit of a cache that held it).
 *
 * Every version's bytes are unique and remember the version they were written over, so
 * "superseded" is exact: a version is lost only when nothing descends from it and no copy of it
 * is anywhere. Edits set a fresh, increasing mtime, so a change is always visible to stat (the
 * CLI's contract; the service's `markDirty` covers writers that cannot promise that).
 */
import { DenoCacheFs } from "../../js/io/cache_fs.ts";
import type { SyncContext } from "../../js/exec/context.ts";
import { pull } from "../../js/ops/pull.ts";
import { push } from "../../js/ops/push.ts";
import type { S3Store } from "../../js/io/s3.ts";
import { assert, assertEquals } from "../harness/assert.ts";
import { prng } from "../harness/prng.ts";
import { seeds } from "../harness/scale.ts";
import { startServer } from "../harness/servers.ts";

const FILES = ["logs/a.log", "logs/b.log"];
const CACHES = ["A", "B"] as const;
const STEPS = 12;
const decoder = new TextDecoder();

type Op =
  | { kind: "edit"; cache: number; file: string }
  | { kind: "push" | "pull"; cache: number };

/** Everything found anywhere: the bucket, the caches' files, their conflict folders. */
async function everywhere(store: S3Store, roots: string[]): Promise<Set<string>> {
  const found = new Set<string>();
  for (const key of (await store.listAllObjects("ns/logs/")).map((o) => o.key)) {
    found.add(decoder.decode((await store.getObject(key)).data));
  }
  const walk = async (folder: string) => {
    try {
      for await (const entry of Deno.readDir(folder)) {
        const path = `${folder}/${entry.name}`;
        if (entry.isDirectory) await walk(path);
        else if (entry.isFile) found.add(await Deno.readTextFile(path));
      }
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    }
  };
  for (const root of roots) {
    await walk(`${root}/ns/logs`);
    await walk(`${root}/.s3sync-conflicts`);
  }
  return found;
}

Deno.test("two caches, random interleavings: no write is ever lost (versions kept in the bucket, a cache or a conflict folder)", async () => {
  const server = await startServer("moto");
  let runs = 0;
  let steps = 0;
  let conflictsSeen = 0;
  const runSeeds = seeds(1300, 24);
  try {
    for (const seed of runSeeds) {
      const random = prng(seed);
      const bucket = `two-way-${seed}`;
      const store = await server.bucket(bucket);
      const parent = await Deno.makeTempDir({ prefix: "s3sync-prop-" });
      const roots = CACHES.map((c) => `${parent}/${c}`);
      const contexts: SyncContext[] = roots.map((root) => ({
        store,
        cache: new DenoCacheFs(root),
        namespace: "ns",
        concurrency: 4,
      }));
      /** Each version, by its bytes: the version it was written over (null: a new file). */
      const parentOf = new Map<string, string | null>();
      let clock = Date.UTC(2026, 7, 1);
      const trace: string[] = [];
      try {
        // A clone's first step is a pull (it writes the base every later run compares with).
        for (const ctx of contexts) await pull(ctx);
        for (let step = 0; step < STEPS; step++) {
          const roll = random();
          const cache = Math.floor(random() * CACHES.length);
          const op: Op = roll < 0.45
            ? { kind: "edit", cache, file: FILES[Math.floor(random() * FILES.length)] }
            : { kind: roll < 0.75 ? "push" : "pull", cache };
          const ctx = contexts[op.cache];
          if (op.kind === "edit") {
            const path = `${roots[op.cache]}/ns/${op.file}`;
            let before: string | null = null;
            try {
              before = await Deno.readTextFile(path);
            } catch (error) {
              if (!(error instanceof Deno.errors.NotFound)) throw error;
            }
            // Unique bytes; the padding makes some edits keep the size of what they replace.
            const version = `${CACHES[op.cache]}:${op.file}:${seed}.${step}` +
              ".".repeat(Math.floor(random() * 3));
            parentOf.set(version, before);
            await Deno.mkdir(`${roots[op.cache]}/ns/logs`, { recursive: true });
            await Deno.writeTextFile(path, version);
            clock += 1000;
            await Deno.utime(path, new Date(clock), new Date(clock));
            trace.push(`${CACHES[op.cache]} edit ${op.file}`);
          } else if (op.kind === "push") {
            const report = await push(ctx, { confirmDeletes: () => Promise.resolve(false) });
            assertEquals(report.failures, [], `seed ${seed}: ${trace.join(" → ")}`);
            conflictsSeen += report.plan.conflicts.length;
            trace.push(`${CACHES[op.cache]} push`);
          } else {
            const report = await pull(ctx);
            assertEquals(report.failures, [], `seed ${seed}: ${trace.join(" → ")}`);
            conflictsSeen += report.keptAside?.length ?? 0;
            trace.push(`${CACHES[op.cache]} pull`);
          }
          steps++;
          const found = await everywhere(store, roots);
          const superseded = new Set([...parentOf.values()].filter((p) => p !== null));
          const lost = [...parentOf.keys()].filter((v) => !found.has(v) && !superseded.has(v));
          assertEquals(lost, [], `seed ${seed}, after ${trace.join(" → ")}`);
        }
        runs++;
      } finally {
        await Deno.remove(parent, { recursive: true });
      }
    }
  } finally {
    await server.stop();
  }
  console.log(`two-way property: ${runs} runs, ${steps} steps, ${conflictsSeen} conflicts met`);
  assert(runs === runSeeds.length, `${runs} of ${runSeeds.length} runs finished`);
  assert(conflictsSeen > 0 || runSeeds.length < 5, "the interleavings reached conflicts");
});
