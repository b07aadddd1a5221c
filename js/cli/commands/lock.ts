/**
 * `lock status` and `lock release --force NONCE`.
 *
 * @module
 */
import { lockKeyFor } from "../../core/mod.ts";
import { describeLock, forceRelease, inspectLock, lockReadable } from "../../exec/lock.ts";
import { EXIT } from "../exit_codes.ts";
import type { LockReleaseOutcome, LockStatusOutcome } from "../outcome.ts";
import type { CommandInput } from "./run.ts";

/** Runs `lock status`: who holds the lock, since when, whether it is stale. */
export async function runLockStatus({ ctx }: CommandInput): Promise<LockStatusOutcome> {
  const current = await inspectLock(ctx.store, lockKeyFor(ctx.namespace), ctx.signal);
  if (!current) return { kind: "lock status", code: EXIT.ok, found: null };
  const state = describeLock(current);
  return {
    kind: "lock status",
    code: EXIT.ok,
    found: {
      body: current.body,
      state: state.state === "held" || state.state === "stale" ? state.state : "other",
      ageMs: state.state === "stale" || state.state === "held" ? state.ageMs : undefined,
      expiresInMs: state.state === "held" ? state.expiresInMs : undefined,
      ttlCapped: state.state === "stale" || state.state === "held" ? state.ttlCapped : undefined,
      unreadable: !lockReadable(current.raw),
    },
  };
}

/** Runs `lock release --force NONCE` (both checked while parsing). */
export async function runLockRelease({ ctx, args }: CommandInput): Promise<LockReleaseOutcome> {
  const released = await forceRelease(ctx.store, args[0], lockKeyFor(ctx.namespace));
  return { kind: "lock release", code: released ? EXIT.ok : EXIT.attention, released };
}
