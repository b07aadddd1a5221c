/**
 * The extension-compatible distributed lock, held only around publishing the index.
 *
 * Same object, body and rules as the extension's writers (`.datastore.lock` under the prefix,
 * created with `If-None-Match: *`, `{holder, hostname, pid, acquiredAt, ttlMs, nonce}`, a lease
 * refreshed every third of its length, stale once `LastModified + ttlMs` has passed). Holding it
 * while we publish is what stops the extension's unconditional index write from dropping our
 * entries. Every decision comes from the core's `LockRun` (what to write, on what condition,
 * when to wait, retry, take over or give up, what to say); this file does the requests it asks
 * for, with the clock and the sleeping injectable so tests can slow time down.
 *
 * @module
 */
import {
  bookkeepingNames,
  lockAssess,
  lockDefaults,
  lockHeartbeatMs,
  lockReadable as coreLockReadable,
} from "../core/functions.ts";
import { LockRun } from "../core/small_runs.ts";
import type { LockEvent, LockRequest, LockResult, PutCondition } from "../core/wasm.ts";
import { DEFAULT_RETRY, withRetry } from "../io/engine.ts";
import { describe, SyncError } from "../core/errors.ts";
import { hasExtras, isNotFound, type ObjectStore, type ObjectStoreClient } from "../io/store.ts";
import { annotate, ATTR, inSpan, type Span } from "../io/trace.ts";
import { drive } from "./drive.ts";

/** The solo lock's key, relative to the prefix (the core's name, as in the extension). */
export const LOCK_KEY: string = bookkeepingNames().soloLockKey;

/** The lock's defaults (the extension's), from the core. */
const DEFAULTS: { ttlMs: number; retryMs: number; maxWaitMs: number } = lockDefaults();

/**
 * The body of a lock object, and how the core reads the current one: generated from the Rust
 * types (`src/state/lock.rs`) into `pkg/s3sync_core.d.ts`, never copied here.
 */
export type { LockBody, LockState } from "../core/wasm.ts";
import type { LockBody, LockState } from "../core/wasm.ts";

/** Settings of the lock. */
export interface LockOptions {
  /** Lock key (default `.datastore.lock`). */
  key?: string;
  /** Lease length (default 30 s). */
  ttlMs?: number;
  /** Wait between attempts while held (default 1 s). */
  retryMs?: number;
  /** Longest wait before giving up with `lock-timeout` (default 60 s). */
  maxWaitMs?: number;
  /** The clock, epoch ms (tests slow it down). */
  clock?: () => number;
  /** Sleeping (tests advance a fake clock instead). */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Do not start the heartbeat timer; the caller calls `beat()` (tests). */
  manualHeartbeat?: boolean;
  /** Narration (takeovers are reported here). */
  log?: (line: string) => void;
  /** Aborts the wait. */
  signal?: AbortSignal;
}

/** A held lock. */
export interface LockHandle {
  /** Our acquisition's nonce. */
  readonly nonce: string;
  /** Set when the lease was lost (someone else's nonce appeared): stop publishing. */
  readonly lost: AbortSignal;
  /** The stale holder we took over from, if any. */
  readonly tookOverFrom?: string;
  /** Refreshes the lease now (the timer calls this every third of the lease). */
  beat(): Promise<void>;
  /** Stops the heartbeat and deletes the lock if it is still ours. */
  release(): Promise<void>;
}

function defaultSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => {
      clearTimeout(timer);
      reject(signal.reason);
    }, { once: true });
  });
}

function identity(): { holder: string; hostname: string; pid: number } {
  let hostname = "unknown";
  try {
    hostname = Deno.hostname();
  } catch {
    // no --allow-sys: keep "unknown"
  }
  const user = Deno.env.get("USER") ?? Deno.env.get("USERNAME") ?? "unknown";
  return { holder: `${user}@${hostname}`, hostname, pid: Deno.pid };
}

/** Reads the lock object: its bytes, LastModified and ETag; null when there is none. */
async function readLock(
  store: ObjectStoreClient,
  key: string,
  signal?: AbortSignal,
): Promise<{ raw: Uint8Array; lastModified?: Date; etag?: string } | null> {
  const head = await store.headObject(key, signal);
  if (!head.exists) return null;
  try {
    const raw = (await store.getObject(key, signal)).data;
    return { raw, lastModified: head.lastModified, etag: head.etag };
  } catch (error) {
    if (isNotFound(error)) return null;
    throw error;
  }
}

/**
 * Reads the lock object for a person (`lock status`): its bytes, LastModified, ETag, and its
 * body as JSON when it parses (shown as it is; what it means is {@link describeLock}'s).
 */
export async function inspectLock(
  store: ObjectStoreClient,
  key = LOCK_KEY,
  signal?: AbortSignal,
): Promise<{ body?: LockBody; raw: Uint8Array; lastModified?: Date; etag?: string } | null> {
  const current = await readLock(store, key, signal);
  if (current === null) return null;
  let body: LockBody | undefined;
  try {
    body = JSON.parse(new TextDecoder().decode(current.raw));
  } catch {
    body = undefined;
  }
  return { ...current, body };
}

/**
 * Takes the lock, waiting while a live holder has it and taking over a stale one.
 *
 * @throws SyncError `lock-timeout` naming the holder when the wait runs out
 */
export async function acquireLock(
  store: ObjectStore | ObjectStoreClient,
  options: LockOptions = {},
): Promise<LockHandle> {
  const key = options.key ?? LOCK_KEY;
  const ttlMs = options.ttlMs ?? DEFAULTS.ttlMs;
  return await inSpan("s3-datastore lock acquire", {
    [ATTR.lockKey]: key,
    [ATTR.lockTtlMs]: ttlMs,
    [ATTR.lockTimeoutMs]: options.maxWaitMs ?? DEFAULTS.maxWaitMs,
  }, (span) => acquireTraced(store, options, key, ttlMs, span));
}

/** {@link acquireLock}, reporting the wait on `span`. */
async function acquireTraced(
  store: ObjectStore | ObjectStoreClient,
  options: LockOptions,
  key: string,
  ttlMs: number,
  span: Span,
): Promise<LockHandle> {
  const clock = options.clock ?? Date.now;
  const ifMatch = hasExtras(store);
  const holder = { ...identity(), nonce: crypto.randomUUID() };
  const io = { store, clock, sleep: options.sleep ?? defaultSleep, log: options.log };
  const taken = await runLock({
    mode: "acquire",
    key,
    holder,
    ttlMs,
    retryMs: options.retryMs,
    maxWaitMs: options.maxWaitMs,
    nowMs: clock(),
    ifMatch,
  }, { ...io, signal: options.signal });
  annotate(span, () => ({
    [ATTR.lockWaitMs]: taken.waitedMs,
    [ATTR.lockContended]: taken.contended,
    [ATTR.lockHolder]: holder.holder,
  }));

  const lost = new AbortController();
  // The heartbeat and the release run without the caller's signal: an aborted publish still
  // releases the lock it held.
  const beat = async () => {
    if (lost.signal.aborted) return;
    const refreshed = await runLock({ mode: "refresh", key, holder, ttlMs, ifMatch }, io);
    if (refreshed.lost) lost.abort(new SyncError("lock-lost", refreshed.lost));
  };
  const interval = lockHeartbeatMs(ttlMs);
  const timer = options.manualHeartbeat ? undefined : setInterval(() => {
    beat().catch((error) => options.log?.(`lock heartbeat failed: ${describe(error)}`));
  }, interval);
  return {
    nonce: holder.nonce,
    lost: lost.signal,
    tookOverFrom: taken.tookOverFrom ?? undefined,
    beat,
    release: () =>
      inSpan("s3-datastore lock release", { [ATTR.lockKey]: key }, async () => {
        if (timer !== undefined) clearInterval(timer);
        try {
          await runLock({ mode: "release", key, nonce: holder.nonce, ifMatch }, io);
        } catch (error) {
          options.log?.(
            `releasing the datastore lock failed: ${
              describe(error)
            }; it turns stale after ${ttlMs} ms`,
          );
        }
      }),
  };
}

/** What the lock's steps do their I/O with. */
interface LockIo {
  store: ObjectStore | ObjectStoreClient;
  clock: () => number;
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  log?: (line: string) => void;
  signal?: AbortSignal;
}

/**
 * Runs the core's lock run for `request` to its end, saying its notes.
 *
 * @returns what it did
 */
async function runLock(request: LockRequest, io: LockIo): Promise<LockResult> {
  using run = new LockRun(request);
  await drive(run, lockSteps(io), {
    stopAt: ["done"],
    onStep: () => io.signal?.throwIfAborted(),
  });
  const result = run.result();
  for (const note of result.notes) io.log?.(note);
  return result;
}

/** The requests a lock run asks for. Whether one may be retried is the core's call. */
function lockSteps({ store, clock, sleep, log, signal }: LockIo) {
  const attempt = <T>(retry: boolean, call: () => Promise<T>) =>
    retry ? withRetry(call, DEFAULT_RETRY, signal) : call();
  return {
    put: async (
      { key, body, condition, retry }: {
        key: string;
        body: Uint8Array;
        condition: PutCondition;
        retry: boolean;
      },
      send: (event: { event: "put"; landed: boolean }) => void,
    ) => {
      send({
        event: "put",
        landed: await attempt(retry, () => writeLock(store, key, body, condition, signal)),
      });
    },
    inspect: async (
      { key, retry }: { key: string; retry: boolean },
      send: (event: LockEvent) => void,
    ) => {
      const current = await attempt(retry, () => readLock(store, key, signal));
      send({
        event: "inspected",
        body: current?.raw,
        lastModifiedMs: current?.lastModified?.getTime(),
        etag: current?.etag,
        nowMs: clock(),
      });
    },
    delete: async (
      { key, ifMatch }: { key: string; ifMatch?: string },
      send: (event: { event: "deleted"; deleted: boolean }) => void,
    ) => {
      send({ event: "deleted", deleted: await deleteLock(store, key, ifMatch) });
    },
    sleep: async (
      { ms, say }: { ms: number; say?: string },
      send: (event: { event: "slept"; nowMs: number }) => void,
    ) => {
      if (say) log?.(say);
      await sleep(ms, signal);
      send({ event: "slept", nowMs: clock() });
    },
  };
}

/** Writes the lock object under `condition`; false when the condition was refused. */
async function writeLock(
  store: ObjectStore | ObjectStoreClient,
  key: string,
  body: Uint8Array,
  condition: PutCondition,
  signal?: AbortSignal,
): Promise<boolean> {
  switch (condition.kind) {
    case "absent":
      return await store.putObjectConditional(key, body, signal);
    case "match":
      // The core asks for If-Match only of a store that has it (`ifMatch` in the request).
      if (!hasExtras(store)) throw new Error("an If-Match write asked of a store without it");
      return (await store.putObjectIfMatch(key, body, condition.etag, signal)) !== null;
    case "any":
      await store.putObject(key, body, signal);
      return true;
  }
}

/**
 * Deletes the lock object, `If-Match` when the core gives an ETag (only to a store that has it).
 * One attempt: the core never retries a lock's DELETE.
 */
async function deleteLock(
  store: ObjectStore | ObjectStoreClient,
  key: string,
  ifMatch: string | undefined,
): Promise<boolean> {
  if (ifMatch !== undefined && hasExtras(store)) {
    return await store.deleteObjectIfMatch(key, ifMatch);
  }
  await store.deleteObject(key);
  return true;
}

/**
 * Runs `fn` while holding the lock; always releases (success, failure, abort).
 *
 * @param fn receives a signal that aborts when the lease is lost
 */
export async function withLock<T>(
  store: ObjectStore | ObjectStoreClient,
  options: LockOptions,
  fn: (lost: AbortSignal) => Promise<T>,
): Promise<T> {
  return await inSpan(
    "s3-datastore lock withLock",
    { [ATTR.lockKey]: options.key ?? LOCK_KEY },
    async () => {
      const handle = await acquireLock(store, options);
      try {
        return await fn(handle.lost);
      } finally {
        await handle.release();
      }
    },
  );
}

/**
 * Deletes the lock only if it still carries `nonce`, or, named `unreadable`, if its body is no
 * lock (for people clearing a stuck lock; the core decides).
 *
 * @returns true when it was deleted
 */
export async function forceRelease(
  store: ObjectStoreClient,
  nonce: string,
  key = LOCK_KEY,
): Promise<boolean> {
  const io = { store, clock: Date.now, sleep: defaultSleep };
  return (await runLock({ mode: "forceRelease", key, nonce, ifMatch: hasExtras(store) }, io))
    .released;
}

/** Whether a lock object's body reads as a lock (the core decides). */
export function lockReadable(raw: Uint8Array): boolean {
  return coreLockReadable(raw);
}

/**
 * The core's reading of a lock object for a person (`lock status`): who holds it, for how long,
 * and whether it is stale. Nobody's nonce is ours here.
 */
export function describeLock(
  current: { raw: Uint8Array; lastModified?: Date },
  now = Date.now(),
): LockState {
  return lockAssess(current.raw, current.lastModified?.getTime(), "", now);
}
