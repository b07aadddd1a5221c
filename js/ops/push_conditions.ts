/**
 * Conditional requests of a push: what the server honours (probed once per store on a probe
 * object, remembered in the sidecar for the next run), and from it how this push's object
 * writes and deletes are made conditional. Apart from the executor because the same probe
 * answers `doctor --probe-server`, and because every step that writes asks the same question.
 *
 * @module
 */
import {
  Planner,
  type ServerVerdict,
  serverVerdictRecalled,
  sidecarWithServerVerdict,
} from "../core/mod.ts";
import { SIDECAR, type SyncContext } from "../exec/context.ts";
import { DEFAULT_RETRY, withRetry } from "../io/engine.ts";
import { describe, SyncError } from "../core/errors.ts";
import { exclusive } from "./journal.ts";
import { hasExtras, type ObjectStore } from "../io/store.ts";
import type { PushRequest } from "./push_types.ts";

/** What a server honours of conditional requests (see {@link objectConditions}). */
export interface ConditionalSupport {
  /** `If-None-Match: *` and `If-Match` on PUT. */
  writes: boolean;
  /** `If-Match` on DELETE (S3 since 2025-09; some S3-compatible servers ignore it). */
  deletes: boolean;
}

const probedWrites = new WeakMap<object, boolean>();
const probedDeletes = new WeakMap<object, boolean>();

/** An ETag no object has. */
const NOT_THE_ETAG = '"s3sync-not-the-etag"';

/**
 * Runs `trial` once per store (the answer memoised in `memo`) on a fresh probe object in the
 * internal control folder (`controlFolder`, from the core), removed afterwards whatever happened.
 */
async function probeOnce(
  memo: WeakMap<object, boolean>,
  store: ObjectStore,
  controlFolder: string,
  signal: AbortSignal | undefined,
  trial: (key: string, body: Uint8Array) => Promise<boolean>,
): Promise<boolean> {
  const known = memo.get(store);
  if (known !== undefined) return known;
  const key = `${controlFolder}s3sync-probe-${crypto.randomUUID()}`;
  let works = false;
  try {
    works = await trial(key, new TextEncoder().encode("s3sync conditional-write probe\n"));
  } finally {
    await store.deleteObject(key, signal).catch(() => {});
  }
  memo.set(store, works);
  return works;
}

/**
 * Checks once per store that the server honours conditional writes (`If-None-Match: *` and
 * `If-Match` on PUT): a create-only write over a probe object and a write `If-Match` an ETag it
 * does not have must both fail.
 */
export function conditionalWritesWork(
  store: ObjectStore,
  controlFolder: string,
  signal?: AbortSignal,
): Promise<boolean> {
  return probeOnce(probedWrites, store, controlFolder, signal, async (key, body) => {
    const created = await store.putObjectIfMatch(key, body, null, signal);
    const again = await store.putObjectIfMatch(key, body, null, signal);
    const wrongMatch = await store.putObjectIfMatch(key, body, NOT_THE_ETAG, signal);
    return created !== null && again === null && wrongMatch === null;
  });
}

/**
 * Checks once per store that the server honours `If-Match` on DELETE (S3 does since 2025-09;
 * s3s-fs ignores it): a delete of a probe object `If-Match` an ETag it does not have must leave
 * it in place. Asked only by a push that deletes.
 */
export function conditionalDeletesWork(
  store: ObjectStore,
  controlFolder: string,
  signal?: AbortSignal,
): Promise<boolean> {
  return probeOnce(probedDeletes, store, controlFolder, signal, async (key, body) => {
    await store.putObject(key, body, signal);
    const refused = !(await store.deleteObjectIfMatch(key, NOT_THE_ETAG, signal));
    return refused && (await store.headObject(key, signal)).exists;
  });
}

/** What `doctor --probe-server` learned of the server (see {@link probeServer}). */
export interface ServerProbe extends ConditionalSupport {
  /** Median of three HEAD round trips, in ms: the window a HEAD compare leaves is about one. */
  headRoundTripMs: number;
}

/**
 * Probes, now, what the bound store's server honours of conditional requests, as a push would
 * (one probe object in the internal control folder, removed afterwards), and times a HEAD round
 * trip: where a condition is not honoured, a HEAD compare just before the request stands in for
 * it and leaves about that long for another writer to slip in. `null` when the store is the
 * extension's client, which cannot send `If-Match` (its creates go create-only, the rest rests on
 * the HEAD compare).
 */
export async function probeServer(ctx: SyncContext): Promise<ServerProbe | null> {
  if (!hasExtras(ctx.store)) return null;
  const store = ctx.store;
  using planner = new Planner(ctx.namespace, ctx.prefix, ctx.maxIndexEntries);
  const retry = ctx.retry ?? DEFAULT_RETRY;
  const probe = (check: typeof conditionalWritesWork) =>
    withRetry(() => check(store, planner.controlFolder, ctx.signal), retry, ctx.signal);
  const writes = await probe(conditionalWritesWork);
  const deletes = await probe(conditionalDeletesWork);
  const rounds: number[] = [];
  for (let i = 0; i < 3; i++) {
    const started = performance.now();
    await store.headObject(planner.remoteIndexKey, ctx.signal);
    rounds.push(performance.now() - started);
  }
  rounds.sort((a, b) => a - b);
  return { writes, deletes, headRoundTripMs: Math.round(rounds[1] * 100) / 100 };
}

/**
 * How this push's object writes and deletes are made conditional (see `object_condition` in the
 * core), decided before the first conditional request: `null` when the user waived conditions
 * (`allowUnconditional`), else what the server honours (deletes probed only when `deleting`).
 * With the extension's client (no `If-Match`), creates still go create-only and the rest rests
 * on a HEAD compare just before. A server that ignores conditional writes is refused before
 * anything is written.
 */
export async function objectConditions(
  ctx: SyncContext,
  planner: Planner,
  request: PushRequest,
  deleting: boolean,
): Promise<ConditionalSupport | null> {
  if (request.allowUnconditional) return null;
  if (!hasExtras(ctx.store)) return { writes: false, deletes: false };
  const store = ctx.store;
  const retry = ctx.retry ?? DEFAULT_RETRY;
  // What an earlier run (another process: swamp runs each command in its own) learned of this
  // server spares the probe's four requests; the core says whether to trust it.
  const nowMs = (ctx.now?.() ?? new Date()).getTime();
  const recalled = store.identity === undefined ? undefined : serverVerdictRecalled(
    (await ctx.cache.readFile(SIDECAR)) ?? undefined,
    store.identity,
    nowMs,
  );
  if (recalled) {
    probedWrites.set(store, true);
    if (typeof recalled.deletes === "boolean") probedDeletes.set(store, recalled.deletes);
  }
  const probe = (check: typeof conditionalWritesWork) =>
    withRetry(() => check(store, planner.controlFolder, ctx.signal), retry, ctx.signal);
  if (!(await probe(conditionalWritesWork))) {
    throw new SyncError(
      "conditional-writes-unsupported",
      "this server ignores conditional writes, so a concurrent writer's objects and index entries could be silently overwritten; " +
        "nothing was written. Re-run with --allow-unconditional when you are the only writer",
    );
  }
  const deletes = deleting ? await probe(conditionalDeletesWork) : null;
  const learned = !recalled || (deletes !== null && typeof recalled.deletes !== "boolean");
  if (store.identity !== undefined && learned) {
    await rememberServer(ctx, {
      store: store.identity,
      writes: true,
      deletes: deletes ?? recalled?.deletes ?? null,
      probedAtMs: recalled && deletes !== null ? recalled.probedAtMs : nowMs,
    });
  }
  return { writes: true, deletes: deletes ?? false };
}

/**
 * Keeps what the probe learned in the sidecar for the next run (see `server_verdict.rs`), in the
 * cache's queue so a `markDirty` meanwhile is not overwritten. Best effort: a failed write only
 * costs the next run a probe.
 */
export async function rememberServer(ctx: SyncContext, verdict: ServerVerdict): Promise<void> {
  try {
    await exclusive(ctx.cache, async () => {
      const sidecar = (await ctx.cache.readFile(SIDECAR)) ?? undefined;
      const written = sidecarWithServerVerdict(sidecar, verdict);
      if (written) await ctx.cache.writeAtomic(SIDECAR, written, { flush: false });
      // A cache with no sidecar yet (its first push) keeps the verdict once the push wrote one.
      else if (sidecar === undefined) unremembered.set(ctx.cache, verdict);
    });
  } catch (error) {
    ctx.log?.(
      `what the server honours was not remembered (${describe(error)}): the next push probes again`,
    );
  }
}

/** Verdicts probed on a cache that had no sidecar yet, by cache: kept after the push's write. */
export const unremembered = new WeakMap<object, ServerVerdict>();
