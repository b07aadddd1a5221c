/**
 * kill -9 of `repair --apply` at seeded points: every re-run converges to the state an
 * uninterrupted repair reaches, with nothing lost and the bucket untouched.
 * `RELIABILITY_SCALE=N` multiplies the kills.
 *
 * Repair has two phases: it moves files on the local disk (no request is sent), then hydrates
 * the namespace folder from the bucket. Kills are placed at a counted step, not after a
 * wall-clock delay (which could land during Deno's start-up or after the run ended):
 *
 * - in the moves phase, at the k-th rename or unlink in the root-level data trees, seen through
 *   the file system's change notifications; meanwhile the loopback proxy holds the run's first
 *   hydration request, so the run cannot finish before the kill lands. (The kill lands at step
 *   k or a few steps later: notifications arrive after the step.)
 * - in the hydration phase, at its k-th S3 request, before it is forwarded or right after it is
 *   answered, as the pull and push crash tests do (tests/reliability/crash_test.ts).
 *
 * Each kill is asserted to have landed: the process died of SIGKILL and its journal still says
 * "running".
 */
import { assert, assertEquals } from "../harness/assert.ts";
import { commonFlags, runCli, spawnCli } from "../harness/cli.ts";
import {
  bucketState,
  seedBucketWithIndex,
  treeHashes,
  writeCacheFiles,
} from "../harness/datastore.ts";
import { type FaultProxy, startFaultProxy, throughProxy } from "../harness/fault_proxy.ts";
import { prng } from "../harness/prng.ts";
import { SCALE } from "../harness/scale.ts";
import { contentOf, datastoreRels } from "../harness/seed.ts";
import { type S3Server, startServer } from "../harness/servers.ts";

const ROOT_TREES = ["data", "outputs", "definitions-evaluated", "workflow-runs", "logs"];
const JOURNAL = ".s3sync-repair/journal.json";
/** Bookkeeping carries timestamps; the payload, the backups and the layout must match. */
const BOOKKEEPING = [JOURNAL, ".datastore-index.json", ".datastore-sync-state.json"];

/**
 * The first seed's broken cache: root-level copies of 90 % of the remote files (every 17th
 * stale), root-only local work, and new files under ns/.
 */
async function brokenCache(cache: string, live: string[]): Promise<void> {
  const copied = live.slice(0, Math.floor(live.length * 0.9));
  const stale = new Set(copied.filter((_, i) => i % 17 === 0));
  await writeCacheFiles(cache, copied.map((rel) => [rel, contentOf(rel, stale.has(rel) ? 1 : 0)]));
  const localOnly = datastoreRels(40, "local-");
  await writeCacheFiles(cache, localOnly.map((rel) => [rel, contentOf(rel)]));
  const fresh = datastoreRels(30, "fresh-");
  await writeCacheFiles(cache, fresh.map((rel) => [`ns/${rel}`, contentOf(rel)]));
}

const copyTree = (from: string, to: string) =>
  new Deno.Command("cp", { args: ["-a", `${from}/.`, to] }).output();

const payload = async (cache: string) => {
  const tree = await treeHashes(cache);
  for (const path of BOOKKEEPING) tree.delete(path);
  return new Map([...tree].filter(([p]) => !p.split("/").pop()!.startsWith(".s3sync-tmp-")));
};

const journalStatus = async (cache: string): Promise<string | undefined> => {
  try {
    return JSON.parse(await Deno.readTextFile(`${cache}/${JOURNAL}`)).status;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return undefined;
    throw error;
  }
};

/**
 * Counts the moves phase's steps (renames and unlinks under the root-level data trees) as the
 * file system reports them, calling `onStep(count)` for each.
 */
function watchSteps(cache: string, onStep: (count: number) => void): { stop(): Promise<void> } {
  const watcher = Deno.watchFs(ROOT_TREES.map((tree) => `${cache}/${tree}`), { recursive: true });
  let steps = 0;
  const done = (async () => {
    for await (const event of watcher) {
      if (event.kind === "rename" || event.kind === "remove") onStep(++steps);
    }
  })();
  return {
    async stop() {
      watcher.close();
      await done;
    },
  };
}

interface Calibration {
  /** Requests a run sends before its first move (reading the remote index). */
  before: number;
  /** Steps of the moves phase. */
  steps: number;
  /** Requests of a whole run. */
  requests: number;
}

interface KillPoint {
  phase: "moves" | "hydration";
  /** The k-th step (moves) or the k-th request of the hydration (hydration). */
  nth: number;
  /** hydration only: before the request is forwarded or after it is answered. */
  when?: "before" | "after";
}

/** Runs repair through `proxy` and SIGKILLs it at `point`; what it saw. */
async function killAt(
  args: string[],
  cache: string,
  proxy: FaultProxy,
  calibration: Calibration,
  point: KillPoint,
): Promise<{ killed: boolean; signal: string | null; stepsSeen: number; forwarded: number }> {
  const forwardedNow = () => Object.values(proxy.stats.byMethod).reduce((a, b) => a + b, 0);
  const startForwarded = forwardedNow();
  let stepsSeen = 0;
  let killed = false;
  let finished = false;
  let forwardedAtKill = -1;
  // Armed before the spawn: nothing of the child can pass before.
  const release = point.phase === "moves" ? proxy.holdAt(calibration.before + 1) : undefined;
  const proc: { child?: Deno.ChildProcess } = {};
  const kill = () => {
    if (finished || killed || !proc.child) return;
    forwardedAtKill = forwardedNow() - startForwarded;
    try {
      proc.child.kill("SIGKILL");
      killed = true;
    } catch {
      // it exited meanwhile: not a kill that landed
    }
  };
  const watcher = watchSteps(cache, (count) => {
    stepsSeen = count;
    if (point.phase === "moves" && count === point.nth) kill();
    // The moves phase sends no request: counted from its first step, the n-th request is the
    // hydration's n-th, however many requests the run sent before its moves.
    if (point.phase === "hydration" && count === 1) proxy.tripAt(point.nth, point.when!, kill);
  });
  const child = proc.child = spawnCli(args);
  const status = await child.status;
  finished = true;
  release?.(false);
  await child.stdout.cancel();
  await child.stderr.cancel();
  await new Promise((r) => setTimeout(r, 100)); // the notifications of its last steps
  await watcher.stop();
  return { killed, signal: status.signal, stepsSeen, forwarded: forwardedAtKill };
}

Deno.test(`repair --apply killed at ${20 * SCALE} counted steps: every kill lands, every re-run converges`, async () => {
  const server: S3Server = await startServer("moto");
  const proxy = startFaultProxy(server.endpoint, { seed: 0 });
  const store = await server.bucket("repair-kill");
  const template = await Deno.makeTempDir({ prefix: "s3sync-repair-template-" });
  const reference = await Deno.makeTempDir({ prefix: "s3sync-repair-reference-" });
  try {
    const live = datastoreRels(600);
    await seedBucketWithIndex(store, live, "ns", 0, { sha256: true });
    await brokenCache(template, live);
    const localHashes = new Set((await treeHashes(template)).values());
    const bucketBefore = await bucketState(store);
    const repairVia = (target: S3Server, cache: string) => [
      "repair",
      ...commonFlags(target, "repair-kill", cache, { namespace: "ns" }),
      "--apply",
    ];

    // Calibration: uninterrupted runs through the proxy, their steps and requests counted. Two
    // runs, and the one with fewer requests kept: a request retried in one run (a loaded
    // server's 5xx) would otherwise place a kill past the end of a run that needed no retry.
    const calibrate = async (): Promise<Calibration> => {
      await Deno.remove(reference, { recursive: true }).catch(() => {});
      await copyTree(template, reference);
      const start = proxy.stats.requests;
      let before = -1;
      let steps = 0;
      const watcher = watchSteps(reference, (count) => {
        if (count === 1) before = proxy.stats.requests - start;
        steps = count;
      });
      const uninterrupted = await runCli(repairVia(throughProxy(server, proxy), reference));
      assertEquals(uninterrupted.code, 0, uninterrupted.stderr);
      await new Promise((r) => setTimeout(r, 200)); // the last notifications
      await watcher.stop();
      return { before, steps, requests: proxy.stats.requests - start };
    };
    const first = await calibrate();
    const second = await calibrate();
    console.log(`calibration runs: ${JSON.stringify(first)}, ${JSON.stringify(second)}`);
    // A late first-move notification can only inflate `before`: the smaller is the true count.
    const calibration = {
      ...(first.requests <= second.requests ? first : second),
      before: Math.min(first.before, second.before),
    };
    assert(
      calibration.before > 0 && calibration.steps > 100 &&
        calibration.requests > calibration.before + 10,
      JSON.stringify(calibration),
    );
    const expected = await payload(reference);

    const random = prng(20261129);
    const landed = { moves: 0, hydration: 0 };
    const misses: string[] = [];
    const lag: number[] = [];
    const runs = 20 * SCALE;
    for (let run = 0; run < runs; run++) {
      const cache = await Deno.makeTempDir({ prefix: `s3sync-repair-kill-${run}-` });
      try {
        await copyTree(template, cache);
        // Half the kills in each phase, strictly inside it.
        const point: KillPoint = run % 2 === 0
          ? { phase: "moves", nth: 1 + Math.floor(random() * (calibration.steps - 1)) }
          : {
            phase: "hydration",
            nth: 1 + Math.floor(random() * (calibration.requests - calibration.before - 1)),
            when: random() < 0.5 ? "before" : "after",
          };
        const what = `run ${run} (kill at ${JSON.stringify(point)})`;
        const seen = await killAt(
          repairVia(throughProxy(server, proxy), cache),
          cache,
          proxy,
          calibration,
          point,
        );
        // Landed: the run died of the kill before it could finish, its journal still running.
        const journal = await journalStatus(cache);
        if (seen.killed && seen.signal === "SIGKILL" && journal === "running") {
          landed[point.phase]++;
        } else {
          misses.push(`${what}: did not land (${JSON.stringify({ ...seen, journal })})`);
          console.log(misses.at(-1));
        }
        if (point.phase === "moves") {
          // Killed in the moves phase: the proxy had forwarded none of the hydration's requests.
          assertEquals(seen.forwarded, calibration.before, `${what}: ${JSON.stringify(seen)}`);
          lag.push(seen.stepsSeen - point.nth);
        }

        const rerun = await runCli(repairVia(server, cache));
        assertEquals(rerun.code, 0, `${what}: ${rerun.stderr}`);
        const finals = await payload(cache);
        assertEquals(finals, expected, `${what} ended elsewhere`);
        const kept = new Set(finals.values());
        for (const hash of localHashes) assert(kept.has(hash), `${what}: lost content ${hash}`);
        const doc = await runCli([
          "doctor",
          ...commonFlags(server, "repair-kill", cache, { namespace: "ns" }),
        ]);
        assertEquals(doc.code, 0, `${what}: ${doc.stdout}`);
      } finally {
        await Deno.remove(cache, { recursive: true });
      }
    }
    console.log(
      `repair: ${landed.moves + landed.hydration} of ${runs} kills landed mid-run ` +
        `(${landed.moves} at the k-th of ${calibration.steps} move steps, notified up to ` +
        `${
          Math.max(...lag)
        } steps late; ${landed.hydration} at the k-th of ${calibration.requests} requests)`,
    );
    assertEquals(
      landed,
      { moves: runs / 2, hydration: runs / 2 },
      `every kill landed mid-run; ${misses.join("; ")}`,
    );
    assertEquals(await bucketState(store), bucketBefore, "repair never writes the bucket");
  } finally {
    store.destroy();
    await proxy.stop();
    await server.stop();
    await Deno.remove(template, { recursive: true });
    await Deno.remove(reference, { recursive: true });
  }
});
