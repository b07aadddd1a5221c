/**
 * Conditional requests of a push: the steps of the core's `ConditionsRun`, which decides what
 * the server honours (probed once per store on a probe object, remembered in the sidecar for the
 * next run) and from it how this push's object writes and deletes are made conditional. Apart
 * from the executor because the same run answers `doctor --probe-server`, and because every step
 * that writes asks the same question.
 *
 * @module
 */
import {
  type ConditionalSupport,
  type ConditionsRequest,
  ConditionsRun,
  Planner,
  type ServerVerdict,
  sidecarWithServerVerdict,
} from "../core/mod.ts";
import type { SyncContext } from "../exec/context.ts";
import { DEFAULT_RETRY, withRetry } from "../io/engine.ts";
import { describe, SyncError } from "../core/errors.ts";
import { updateSidecar } from "./journal.ts";
import { readSidecarFile } from "../exec/verbs.ts";
import { hasExtras } from "../io/store.ts";
import { drive } from "../exec/drive.ts";
import type { PushRequest } from "./push_types.ts";

export type { ConditionalSupport } from "../core/mod.ts";

/**
 * What this process knows of each store (probed, or recalled from a sidecar): facts the core's
 * `ConditionsRun` takes as known.
 */
const probed = new WeakMap<object, { writes?: boolean; deletes?: boolean }>();

/**
 * Drives the core's `ConditionsRun` (see `src/runs/conditions/machine.rs`): the core decides
 * what to probe, judges the probe, trusts or refuses and says what to remember; this makes the
 * requests, each trial retried whole under a fresh key.
 */
async function decideConditions(
  ctx: SyncContext,
  planner: Planner,
  request: Omit<ConditionsRequest, "knownWrites" | "knownDeletes">,
): Promise<ConditionalSupport | null> {
  const store = ctx.store;
  const known = probed.get(store) ?? {};
  const retry = ctx.retry ?? DEFAULT_RETRY;
  using run = new ConditionsRun(
    planner,
    { ...request, knownWrites: known.writes, knownDeletes: known.deletes },
    ctx.now?.() ?? new Date(),
  );
  // A trial on a fresh probe object, removed afterwards whatever happened.
  const trial = <T>(keyPrefix: string, attempt: (key: string) => Promise<T>) =>
    withRetry(
      async () => {
        const key = `${keyPrefix}${crypto.randomUUID()}`;
        try {
          return await attempt(key);
        } finally {
          await store.deleteObject(key, ctx.signal).catch(() => {});
        }
      },
      retry,
      ctx.signal,
    );
  try {
    await drive(run, {
      readSidecar: readSidecarFile(ctx.cache),
      probeWrites: async ({ keyPrefix, body, notTheEtag }, send) => {
        if (!hasExtras(store)) throw new SyncError("core-error", "no conditional client to probe");
        const bytes = new TextEncoder().encode(body);
        const landed = await trial(keyPrefix, async (key) => ({
          created: await store.putObjectIfMatch(key, bytes, null, ctx.signal) !== null,
          again: await store.putObjectIfMatch(key, bytes, null, ctx.signal) !== null,
          wrongMatch: await store.putObjectIfMatch(key, bytes, notTheEtag, ctx.signal) !== null,
        }));
        send({ event: "writesProbed", ...landed });
      },
      probeDeletes: async ({ keyPrefix, body, notTheEtag }, send) => {
        if (!hasExtras(store)) throw new SyncError("core-error", "no conditional client to probe");
        const seen = await trial(keyPrefix, async (key) => {
          await store.putObject(key, new TextEncoder().encode(body), ctx.signal);
          const refused = !(await store.deleteObjectIfMatch(key, notTheEtag, ctx.signal));
          return { refused, exists: (await store.headObject(key, ctx.signal)).exists };
        });
        send({ event: "deletesProbed", ...seen });
      },
      remember: async ({ verdict }, send) => {
        await rememberServer(ctx, verdict);
        send({ event: "remembered" });
      },
    }, { stopAt: ["done"] });
  } finally {
    // What the run learned outlives it, a refusal or a failed request included: the next push
    // of this process neither probes again what is known nor asks a server known to ignore
    // conditional writes.
    const known = run.known;
    probed.set(store, { writes: known.writes ?? undefined, deletes: known.deletes ?? undefined });
  }
  return run.result().support;
}

/** What `doctor --probe-server` learned of the server (see {@link probeServer}). */
export interface ServerProbe extends ConditionalSupport {
  /** Median of three HEAD round trips, in ms: the window a HEAD compare leaves is about one. */
  headRoundTripMs: number;
}

/**
 * Probes what the bound store's server honours of conditional requests, as a push would (the
 * core's `ConditionsRun`, asked by `doctor`: both kinds, never refused), and times a HEAD round
 * trip: where a condition is not honoured, a HEAD compare just before the request stands in for
 * it and leaves about that long for another writer to slip in. `null` when the store is the
 * extension's client, which cannot send `If-Match` (its creates go create-only, the rest rests on
 * the HEAD compare).
 */
export async function probeServer(ctx: SyncContext): Promise<ServerProbe | null> {
  using planner = new Planner(ctx.namespace, ctx.prefix, ctx.maxIndexEntries);
  const support = await decideConditions(ctx, planner, {
    purpose: "doctor",
    conditionalClient: hasExtras(ctx.store),
  });
  if (support === null) return null;
  const rounds: number[] = [];
  for (let i = 0; i < 3; i++) {
    const started = performance.now();
    await ctx.store.headObject(planner.remoteIndexKey, ctx.signal);
    rounds.push(performance.now() - started);
  }
  rounds.sort((a, b) => a - b);
  return { ...support, headRoundTripMs: Math.round(rounds[1] * 100) / 100 };
}

/**
 * How this push's object writes and deletes are made conditional, decided by the core's
 * `ConditionsRun` before the first conditional request: `null` when the user waived conditions
 * (`allowUnconditional`), else what the server honours (deletes asked only when `deleting`),
 * from what an earlier run remembered or a probe. With the extension's client (no `If-Match`),
 * creates still go create-only and the rest rests on a HEAD compare just before.
 *
 * @throws SyncError `conditional-writes-unsupported` when the server ignores conditional writes:
 *   nothing was written
 */
export async function objectConditions(
  ctx: SyncContext,
  planner: Planner,
  request: PushRequest,
  deleting: boolean,
): Promise<ConditionalSupport | null> {
  return await decideConditions(ctx, planner, {
    purpose: "push",
    conditionalClient: hasExtras(ctx.store),
    allowUnconditional: request.allowUnconditional,
    deleting,
    store: hasExtras(ctx.store) ? ctx.store.identity : undefined,
  });
}

/**
 * Keeps what the probe learned in the sidecar for the next run (see `server_verdict.rs`), in the
 * cache's queue so a `markDirty` meanwhile is not overwritten. Best effort: a failed write only
 * costs the next run a probe.
 */
export async function rememberServer(ctx: SyncContext, verdict: ServerVerdict): Promise<void> {
  await updateSidecar(ctx.cache, (sidecar) => {
    const written = sidecarWithServerVerdict(sidecar, verdict);
    // A cache with no sidecar yet (its first push) keeps the verdict once the push wrote one.
    if (!written && sidecar === undefined) unremembered.set(ctx.cache, verdict);
    return written;
  }, (error) =>
    ctx.log?.(
      `what the server honours was not remembered (${describe(error)}): the next push probes again`,
    ));
}

/** Verdicts probed on a cache that had no sidecar yet, by cache: kept after the push's write. */
export const unremembered = new WeakMap<object, ServerVerdict>();
