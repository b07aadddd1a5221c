/**
 * The extension-compatible distributed lock, held only around publishing the index.
 *
 * Same object, body and rules as the extension's writers (`.datastore.lock` under the prefix,
 * created with `If-None-Match: *`, `{holder, hostname, pid, acquiredAt, ttlMs, nonce}`, a lease
 * refreshed every third of its length, stale once `LastModified + ttlMs` has passed). Holding it
 * while we publish is what stops the extension's unconditional index write from dropping our
 * entries. Every decision comes from the core (`lockAssess`, `lockWaitDecision`); this file does
 * the requests, with the clock and the sleeping injectable so tests can slow time down.
 *
 * @module
 */
import {
  bookkeepingNames,
  lockAssess,
  lockBody,
  lockDefaults,
  lockHeartbeatMs,
  lockReadable as coreLockReadable,
  lockWaitDecision,
} from "../core/functions.ts";
import { DEFAULT_RETRY, withRetry } from "../io/engine.ts";
import { describe, SyncError } from "../core/errors.ts";
import { printable } from "../core/printable.ts";
import { hasExtras, isNotFound, type ObjectStore, type ObjectStoreClient } from "../io/store.ts";
import { annotate, ATTR, inSpan, type Span } from "../io/trace.ts";

/** The solo lock's key, relative to the prefix (the core's name, as in the extension). */
export const LOCK_KEY: string = bookkeepingNames().soloLockKey;

/** The lock's defaults (the extension's), from the core. */
const DEFAULTS: { ttlMs: number; retryMs: number; maxWaitMs: number } = lockDefaults();

/** True when the lock object `current` carries our acquisition's `nonce` (the core decides). */
function isOurs(current: { raw: Uint8Array } | null, nonce: string): boolean {
  return current !== null &&
    lockAssess(current.raw, undefined, nonce, 0).state === "ours";
}

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

/** Reads the lock object: body (if readable), LastModified, ETag; null when there is none. */
export async function inspectLock(
  store: ObjectStoreClient,
  key = LOCK_KEY,
  signal?: AbortSignal,
): Promise<{ body?: LockBody; raw: Uint8Array; lastModified?: Date; etag?: string } | null> {
  const head = await store.headObject(key, signal);
  if (!head.exists) return null;
  let raw: Uint8Array;
  try {
    raw = (await store.getObject(key, signal)).data;
  } catch (error) {
    if (isNotFound(error)) return null;
    throw error;
  }
  let body: LockBody | undefined;
  try {
    body = JSON.parse(new TextDecoder().decode(raw));
  } catch {
    body = undefined;
  }
  return { body, raw, lastModified: head.lastModified, etag: head.etag };
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
  const sleep = options.sleep ?? defaultSleep;
  const nonce = crypto.randomUUID();
  const me = identity();
  const bodyNow = () =>
    lockBody(me.holder, me.hostname, me.pid, new Date(clock()).toISOString(), ttlMs, nonce);
  const started = clock();
  let tookOverFrom: string | undefined;
  // Set after deleting a stale lock (clients without If-Match): the create that follows is
  // the takeover.
  let deletedStale: string | undefined;
  let toldWaiting = false;
  for (;;) {
    options.signal?.throwIfAborted();
    const retry = <T>(call: () => Promise<T>) => withRetry(call, DEFAULT_RETRY, options.signal);
    if (await retry(() => store.putObjectConditional(key, bodyNow(), options.signal))) {
      tookOverFrom = deletedStale;
      break;
    }
    deletedStale = undefined;
    const current = await retry(() => inspectLock(store, key, options.signal));
    const state: LockState = lockAssess(
      current?.raw,
      current?.lastModified?.getTime(),
      nonce,
      clock(),
    );
    if (state.state === "free") continue;
    if (state.state === "ours") break;
    if (state.state === "stale") {
      // Take over atomically where we can: overwrite only the stale object we looked at, so of
      // two takers exactly one wins.
      if (hasExtras(store) && current?.etag) {
        const etag = current.etag;
        if (
          (await retry(() => store.putObjectIfMatch(key, bodyNow(), etag, options.signal))) !== null
        ) {
          tookOverFrom = state.holder;
          break;
        }
      } else {
        // Without If-Match (the extension's client) a second taker that saw the same stale lock
        // can delete the first taker's fresh one: the extension has the same window. This
        // project's S3Store takes over with If-Match above instead.
        // Not retried, for the reason given at release.
        await store.deleteObject(key, options.signal);
        deletedStale = state.holder;
      }
      continue;
    }
    const decision = lockWaitDecision(
      started,
      clock(),
      options.maxWaitMs ?? DEFAULTS.maxWaitMs,
      options.retryMs ?? DEFAULTS.retryMs,
    );
    if (decision.action === "retry" && !toldWaiting && state.state === "held") {
      // Say so once: a wait with no word looks like a hang until the timeout.
      toldWaiting = true;
      options.log?.(
        `the datastore lock ${key} is held by ${printable(state.holder)}${
          state.hostname ? ` (host ${printable(state.hostname)}, pid ${state.pid})` : ""
        }, taken ${Math.round(state.ageMs / 1000)} s ago: waiting up to ${
          Math.round((options.maxWaitMs ?? DEFAULTS.maxWaitMs) / 1000)
        } s for it`,
      );
    }
    if (decision.action === "giveUp") {
      const b = current?.body;
      throw new SyncError(
        "lock-timeout",
        `the datastore lock ${key} is held by ${printable(state.holder)}${
          b ? ` (host ${printable(b.hostname)}, pid ${b.pid}, nonce ${printable(b.nonce)})` : ""
        }, ` +
          `taken ${Math.round(state.ageMs / 1000)} s ago; waited ${
            Math.round((clock() - started) / 1000)
          } s. ` +
          `If that process is gone, the lock turns stale after its lease; to clear it now: \`s3sync lock release --force ${
            b?.nonce ?? "<nonce>"
          }\``,
      );
    }
    await sleep(decision.delayMs, options.signal);
  }
  if (tookOverFrom) options.log?.(`took over a stale datastore lock held by ${tookOverFrom}`);
  annotate(span, () => ({
    [ATTR.lockWaitMs]: clock() - started,
    [ATTR.lockContended]: toldWaiting || tookOverFrom !== undefined,
    [ATTR.lockHolder]: me.holder,
  }));

  const lost = new AbortController();
  const beat = async () => {
    if (lost.signal.aborted) return;
    const current = await inspectLock(store, key);
    if (current === null || !isOurs(current, nonce)) {
      lost.abort(
        new SyncError(
          "lock-lost",
          `the datastore lock ${key} was taken by ${
            printable(current?.body?.holder ?? "someone else")
          }`,
        ),
      );
      return;
    }
    const fresh = bodyNow();
    if (hasExtras(store) && current.etag) {
      if ((await store.putObjectIfMatch(key, fresh, current.etag)) === null) {
        lost.abort(
          new SyncError("lock-lost", `the datastore lock ${key} changed hands during a refresh`),
        );
      }
    } else {
      await store.putObject(key, fresh);
    }
  };
  const interval = lockHeartbeatMs(ttlMs);
  const timer = options.manualHeartbeat ? undefined : setInterval(() => {
    beat().catch((error) => options.log?.(`lock heartbeat failed: ${describe(error)}`));
  }, interval);
  return {
    nonce,
    lost: lost.signal,
    tookOverFrom,
    beat,
    release: () =>
      inSpan("s3-datastore lock release", { [ATTR.lockKey]: key }, async () => {
        if (timer !== undefined) clearInterval(timer);
        try {
          const current = await withRetry(() => inspectLock(store, key));
          // One attempt, never retried: a DELETE that reached the server but whose answer was
          // lost would, retried, delete the lock the next writer took meanwhile, and two writers
          // would then hold it at once (an extension writer publishes unconditionally under it).
          // A delete that failed leaves our lock to turn stale after its lease.
          if (!isOurs(current, nonce) || !(await deleteAsRead(store, key, current!.etag))) {
            options.log?.(`the datastore lock was no longer ours at release; left it alone`);
          }
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
 * Deletes the lock only if it still carries `nonce` (for people clearing a stuck lock).
 *
 * @returns true when it was deleted
 */
export async function forceRelease(
  store: ObjectStoreClient,
  nonce: string,
  key = LOCK_KEY,
): Promise<boolean> {
  const current = await inspectLock(store, key);
  if (current !== null && nonce === UNREADABLE_LOCK && !lockReadable(current.raw)) {
    // No nonce can be named for a body that is no lock: the one read goes, and only it (a
    // lock taken meanwhile has another ETag) where the store can make the delete conditional.
    return await deleteAsRead(store, key, current.etag);
  }
  if (!isOurs(current, nonce)) return false;
  return await deleteAsRead(store, key, current!.etag);
}

/**
 * Deletes the lock at `key` as it was just read: `If-Match` its ETag where the store has that,
 * so a lock another writer took between the read and the delete stays (a server that ignores
 * the condition, or the extension's client, leaves that short window open).
 */
async function deleteAsRead(
  store: ObjectStore | ObjectStoreClient,
  key: string,
  etag: string | undefined,
): Promise<boolean> {
  if (hasExtras(store) && etag) return await store.deleteObjectIfMatch(key, etag);
  await store.deleteObject(key);
  return true;
}

/** Whether a lock object's body reads as a lock (the core decides). */
export function lockReadable(raw: Uint8Array): boolean {
  return coreLockReadable(raw);
}

/** What `lock release --force` takes for a lock object whose body is no lock. */
export const UNREADABLE_LOCK = "unreadable";

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
