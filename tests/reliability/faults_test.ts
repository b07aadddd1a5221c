/**
 * Pull, push, rebuild and repair through a fault-injecting proxy at 10 % and 30 % fault rates,
 * with every invariant checked after every run; then the network heals and a re-run converges.
 * `RELIABILITY_SCALE=N` multiplies the runs; `RELIABILITY_SEED=S` replays one.
 */
import { type CacheStore, DenoCacheFs } from "../../js/io/cache_fs.ts";
import type { SyncContext } from "../../js/exec/context.ts";
import { markDirty } from "../../js/ops/dirty.ts";
import { SyncError } from "../../js/core/errors.ts";
import { pull } from "../../js/ops/pull.ts";
import { push } from "../../js/ops/push.ts";
import { repair } from "../../js/ops/repair.ts";
import { S3Store } from "../../js/io/s3.ts";
import { assert, assertEquals, assertRejects } from "../harness/assert.ts";
import { seedBucketWithIndex, writeCacheFiles } from "../harness/datastore.ts";
import { type FaultPlan, startFaultProxy } from "../harness/fault_proxy.ts";
import {
  auditCache,
  auditIndex,
  checkCacheMatchesRemote,
  checkIndexSound,
  checkNoDeletes,
} from "../harness/invariants.ts";
import { seeds } from "../harness/scale.ts";
import { contentOf, datastoreRels, putAll } from "../harness/seed.ts";
import { type S3Server, startServer } from "../harness/servers.ts";

/** Fast retries: the faults are dense, the clock is not what is under test. */
const RETRY = { attempts: 3, baseDelayMs: 20, factor: 3, jitter: 0.25 };

function plan(seed: number, rate: number): FaultPlan {
  return {
    seed,
    errorRate: rate * 0.4,
    ambiguousRate: rate * 0.2,
    resetRate: rate * 0.15,
    truncateRate: rate * 0.15,
    latencyRate: rate * 0.1,
    latencyMs: 50,
  };
}

interface Rig {
  server: S3Server;
  direct: S3Store;
  faulty: S3Store;
  proxy: ReturnType<typeof startFaultProxy>;
  cache: string;
  ctx: SyncContext;
  close(): Promise<void>;
}

async function rig(server: S3Server, bucket: string, faults: FaultPlan): Promise<Rig> {
  const direct = await server.bucket(bucket);
  const proxy = startFaultProxy(server.endpoint, faults);
  const faulty = new S3Store({
    ...server.storeOptions(bucket),
    endpoint: proxy.endpoint,
    requestTimeoutMs: 5_000,
  });
  const cache = await Deno.makeTempDir({ prefix: "s3sync-fault-" });
  return {
    server,
    direct,
    faulty,
    proxy,
    cache,
    ctx: {
      store: faulty,
      cache: new DenoCacheFs(cache),
      namespace: "ns",
      retry: RETRY,
      concurrency: 16,
    },
    async close() {
      direct.destroy();
      faulty.destroy();
      await proxy.stop();
      await Deno.remove(cache, { recursive: true });
    },
  };
}

/**
 * What the campaign injected and what its invariant checks compared, summed over the runs:
 * index entries that had to be held and were found, objects the index names and were present
 * with their size, cache files that had to match their object and did. Printed at the end.
 */
const totals = {
  runs: 0,
  faults: 0,
  requests: 0,
  entriesExpected: 0,
  entriesFound: 0,
  objectsNamed: 0,
  objectsPresent: 0,
  filesExpected: 0,
  filesFound: 0,
};
function tally(r: Rig, label: string): void {
  const faults = Object.values(r.proxy.stats.injected).reduce((a, b) => a + b, 0);
  totals.runs++;
  totals.requests += r.proxy.stats.requests;
  totals.faults += faults;
  console.log(
    `${label}: ${r.proxy.stats.requests} requests, ${faults} faults ${
      JSON.stringify(r.proxy.stats.injected)
    }`,
  );
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((v, i) => v === b[i]);
}

/** `checkIndexSound`, with what it compares counted into the totals first. */
async function indexSound(r: Rig, mustHold: string[]): Promise<string[]> {
  const audit = await auditIndex(r.direct, "ns", mustHold);
  totals.entriesExpected += audit.expected;
  totals.entriesFound += audit.found;
  totals.objectsNamed += audit.named;
  totals.objectsPresent += audit.present;
  return await checkIndexSound(r.direct, "ns", mustHold);
}

/**
 * `checkCacheMatchesRemote` (every file of the tree is its object's bytes), with what it
 * compares counted into the totals first; `mustHave` are rels that must also be there.
 */
async function cacheMatches(r: Rig, mustHave: string[] = []): Promise<number> {
  const audit = await auditCache(r.cache, r.direct, "ns", mustHave);
  totals.filesExpected += audit.expected;
  totals.filesFound += audit.found;
  return await checkCacheMatchesRemote(r.cache, r.direct, "ns", new Set());
}

for (const rate of [0.1, 0.3]) {
  Deno.test(`pull under ${rate * 100} % faults keeps every invariant and converges once healed`, async () => {
    const server = await startServer("moto");
    try {
      for (const seed of seeds(1000 + rate * 100, 2)) {
        const r = await rig(server, `pull-${seed}`, plan(seed, rate));
        try {
          const rels = datastoreRels(150);
          await seedBucketWithIndex(r.direct, rels, "ns");
          let failed = 0;
          try {
            failed = (await pull(r.ctx)).failures.length;
          } catch (error) {
            // Index reads failing past the retries abort the pull with a code, writing nothing.
            assert(error instanceof SyncError, `seed ${seed}: ${error}`);
          }
          // The cache started empty: a failed download must have left no file at all.
          const written = await cacheMatches(r);
          assert(written + failed <= rels.length, `seed ${seed}`);
          await indexSound(r, rels);
          tally(r, `pull ${rate * 100} % seed ${seed}`);
          r.proxy.setPlan({ seed });
          const healed = await pull(r.ctx);
          assertEquals(healed.failures, [], `seed ${seed}`);
          assertEquals(await cacheMatches(r, rels), rels.length);
        } finally {
          await r.close();
        }
      }
    } finally {
      await server.stop();
    }
  });

  Deno.test(`push under ${rate * 100} % faults never loses an entry nor names an absent object`, async () => {
    const server = await startServer("moto");
    try {
      for (const seed of seeds(2000 + rate * 100, 2)) {
        const r = await rig(server, `push-${seed}`, { seed });
        try {
          const rels = datastoreRels(120);
          await seedBucketWithIndex(r.direct, rels, "ns");
          await pull(r.ctx);
          const fresh = datastoreRels(80, `fresh${seed}-`);
          await writeCacheFiles(r.cache, fresh.map((rel) => [`ns/${rel}`, contentOf(rel)]));
          const doomed = rels.slice(0, 8);
          for (const rel of doomed) {
            await Deno.remove(`${r.cache}/ns/${rel}`);
            await markDirty(r.ctx.cache, "ns", `ns/${rel}`);
          }
          r.proxy.setPlan(plan(seed, rate));
          let outcome = "completed";
          try {
            const report = await push(r.ctx);
            if (report.failures.length) outcome = `${report.failures.length} failures`;
          } catch (error) {
            assert(error instanceof SyncError, `seed ${seed}: ${error}`);
            outcome = (error as SyncError).code;
          }
          // Whatever happened: nothing the index names is absent, nothing kept was dropped.
          const kept = rels.filter((rel) => !doomed.includes(rel));
          const indexed = await indexSound(r, kept);
          tally(r, `push ${rate * 100} % seed ${seed} (${outcome})`);
          r.proxy.setPlan({ seed });
          const healed = await push(r.ctx);
          assertEquals(healed.failures, [], `seed ${seed} (${outcome})`);
          const final = await indexSound(r, [...kept, ...fresh]);
          for (const rel of doomed) assert(!final.includes(rel), `${rel} still indexed`);
          assert(indexed.length > 0);
        } finally {
          await r.close();
        }
      }
    } finally {
      await server.stop();
    }
  });
}

Deno.test("a listing that fails on page 2 aborts the rebuild and publishes nothing", async () => {
  const server = await startServer("moto");
  const r = await rig(server, "rebuild-page", { seed: 7, failListPage: 2 });
  try {
    const rels = datastoreRels(120);
    await putAll(r.direct, rels.map((rel) => [`ns/${rel}`, contentOf(rel)]));
    const error = await assertRejects(() => pull({ ...r.ctx, listPageSize: 50 }), SyncError);
    assertEquals((error as SyncError).code, "listing-failed");
    assertEquals((await r.direct.headObject("ns/.datastore-index.json")).exists, false);
    assertEquals(await cacheMatches(r), 0);
    r.proxy.setPlan({ seed: 7 });
    const healed = await pull({ ...r.ctx, listPageSize: 50 });
    assertEquals(healed.rebuilt?.kept, 120);
    await indexSound(r, rels);
    tally(r, "rebuild, listing page 2 failing");
  } finally {
    await r.close();
    await server.stop();
  }
});

Deno.test("a walk error withholds every delete, even with --delete-missing", async () => {
  const server = await startServer("moto");
  const r = await rig(server, "walk-error", { seed: 9 });
  try {
    const rels = datastoreRels(40);
    await seedBucketWithIndex(r.direct, rels, "ns");
    await pull(r.ctx);
    for (const rel of rels.slice(0, 10)) await Deno.remove(`${r.cache}/ns/${rel}`);
    const real = r.ctx.cache;
    const erring: CacheStore = {
      root: real.root,
      walk: async (signal) => ({
        ...(await real.walk(signal)),
        errors: ["ns/data: permission denied (injected)"],
      }),
      readFile: (p) => real.readFile(p),
      writeAtomic: (p, d) => real.writeAtomic(p, d),
      append: (p, d) => real.append(p, d),
      stat: (p) => real.stat(p),
      remove: (p) => real.remove(p),
      ensureDir: (p) => real.ensureDir(p),
      moveNew: (f, t) => real.moveNew(f, t),
      removeEmptyTree: (p) => real.removeEmptyTree(p),
      topLevel: () => real.topLevel(),
    };
    const report = await push({ ...r.ctx, cache: erring }, { deleteMissing: true });
    assert(report.plan.blocked.some((b) => b.code === "walk-error"));
    checkNoDeletes(r.proxy.stats.byMethod.DELETE ?? 0, "a walk error");
    await indexSound(r, rels);
    tally(r, "walk error");
  } finally {
    await r.close();
    await server.stop();
  }
});

Deno.test("repair under 30 % faults loses nothing and converges once healed", async () => {
  const server = await startServer("moto");
  try {
    for (const seed of seeds(3000, 1)) {
      const r = await rig(server, `repair-${seed}`, { seed });
      try {
        const rels = datastoreRels(100);
        await seedBucketWithIndex(r.direct, rels, "ns", 0, { sha256: true });
        await writeCacheFiles(
          r.cache,
          rels.slice(0, 60).map((rel) => [rel, contentOf(rel, rel.length % 3 === 0 ? 1 : 0)]),
        );
        await writeCacheFiles(
          r.cache,
          datastoreRels(10, "mine-").map((rel) => [rel, contentOf(rel)]),
        );
        r.proxy.setPlan(plan(seed, 0.3));
        try {
          await repair(r.ctx, true);
        } catch (error) {
          assert(error instanceof SyncError, `seed ${seed}: ${error}`);
        }
        tally(r, `repair 30 % seed ${seed}`);
        r.proxy.setPlan({ seed });
        const healed = await repair(r.ctx, true);
        assertEquals(healed.hydration?.failures ?? [], []);
        // The local-only files (no object to compare with): each must be in the namespace
        // folder with its own bytes.
        for (const rel of datastoreRels(10, "mine-")) {
          totals.filesExpected++;
          const data = await Deno.readFile(`${r.cache}/ns/${rel}`).catch(() => null);
          if (data && sameBytes(data, contentOf(rel))) totals.filesFound++;
          assertEquals(data, contentOf(rel), rel);
        }
        // The hydrated files: every indexed rel is in the namespace folder with its object's bytes.
        const hydrated = await auditCache(r.cache, r.direct, "ns", rels);
        totals.filesExpected += rels.length;
        totals.filesFound += rels.filter((rel) => !hydrated.wrong.includes(rel)).length;
        assertEquals(hydrated.wrong.filter((p) => rels.includes(p)), [], "hydrated files");
        await indexSound(r, rels);
        checkNoDeletes(r.proxy.stats.byMethod.DELETE ?? 0, "a repair (it never writes the bucket)");
      } finally {
        await r.close();
      }
    }
  } finally {
    await server.stop();
  }
});

Deno.test("fault campaign figures", () => {
  const t = totals;
  const lost = (t.entriesExpected - t.entriesFound) + (t.filesExpected - t.filesFound);
  console.log(
    `fault runs: ${t.runs}, requests: ${t.requests}, faults injected: ${t.faults}; ` +
      `index entries expected ${t.entriesExpected}, found ${t.entriesFound}; ` +
      `objects named by the index ${t.objectsNamed}, present ${t.objectsPresent}; ` +
      `cache files expected ${t.filesExpected}, found byte-identical ${t.filesFound}; ` +
      `data lost: ${lost}`,
  );
  assert(t.runs > 0 && t.faults > 0, "the campaign injected faults");
  assert(t.entriesExpected > 0 && t.filesExpected > 0, "the checks compared something");
  assertEquals(lost, 0, "nothing lost");
  assertEquals(t.objectsPresent, t.objectsNamed, "the index named no absent object");
});
