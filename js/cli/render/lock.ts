/**
 * The human reports of `lock status` and `lock release`.
 *
 * @module
 */
import { printable } from "../../core/printable.ts";
import type { LockReleaseOutcome, LockStatusOutcome } from "../outcome.ts";

/** Who holds the lock and since when, and whether it is live or stale. */
export function lockStatusLines({ found }: LockStatusOutcome): string[] {
  if (!found) return ["No datastore lock is held."];
  const b = found.body;
  return [
    b && !found.unreadable
      ? `Held by ${printable(String(b.holder))} (host ${
        printable(String(b.hostname))
      }, pid ${b.pid}, nonce ${printable(String(b.nonce))}), taken ${
        printable(String(b.acquiredAt))
      }.`
      : "A lock object exists but its body is unreadable.",
    found.unreadable
      ? "Its body is no lock, so no nonce can be named: `s3sync lock release --force unreadable` removes it."
      : "",
    found.ttlCapped
      ? "Its body asks for a lease over an hour [lock-ttl-capped]: every reader holds it for an hour at most."
      : "",
    found.state === "held"
      ? `Last refreshed ${Math.round((found.ageMs ?? 0) / 1000)} s ago: live for ${
        Math.round((found.expiresInMs ?? 0) / 1000)
      } s more unless refreshed.`
      : found.state === "stale"
      ? `Last refreshed ${
        Math.round((found.ageMs ?? 0) / 1000)
      } s ago: STALE, the next writer takes it over.`
      : "",
  ].filter((line) => line !== "");
}

/** Whether the lock was released. */
export function lockReleaseLines({ released }: LockReleaseOutcome): string[] {
  return [
    released
      ? "Released the datastore lock."
      : "Not released: the lock is gone or carries another nonce.",
  ];
}
