/**
 * The lock with a slowed clock: no sleeping, time advances only when the test says so.
 */
import { acquireLock, forceRelease, inspectLock, LOCK_KEY } from "../../js/exec/lock.ts";
import { SyncError } from "../../js/core/errors.ts";
import { assert, assertEquals, assertRejects } from "../harness/assert.ts";
import { MemoryClient } from "../harness/memory_client.ts";

/** A fake clock whose sleep advances time and runs what is due. */
function fakeTime(start = 1_800_000_000_000) {
  let now = start;
  // Work due at a fake time (empty here: heartbeats are driven by the waiter's sleep).
  const due: { at: number; run: () => Promise<void> }[] = [];
  return {
    clock: () => now,
    async advance(ms: number) {
      const end = now + ms;
      for (;;) {
        due.sort((a, b) => a.at - b.at);
        const next = due[0];
        if (!next || next.at > end) break;
        due.shift();
        now = next.at;
        await next.run();
      }
      now = end;
    },
  };
}

Deno.test("a live holder's heartbeat is never stolen, however long a waiter waits", async () => {
  const time = fakeTime();
  const client = new MemoryClient(time.clock);
  const holder = await acquireLock(client, {
    ttlMs: 30_000,
    clock: time.clock,
    manualHeartbeat: true,
  });
  // The holder refreshes every 10 s of fake time, as its timer would.
  let beats = 0;
  const heartbeat = async () => {
    await holder.beat();
    beats++;
  };
  let nextBeat = time.clock() + 10_000;
  const waiter = acquireLock(client, {
    ttlMs: 30_000,
    maxWaitMs: 10 * 60_000,
    retryMs: 1_000,
    clock: time.clock,
    manualHeartbeat: true,
    sleep: async (ms) => {
      const end = time.clock() + ms;
      while (nextBeat <= end) {
        await time.advance(nextBeat - time.clock());
        await heartbeat();
        nextBeat += 10_000;
      }
      await time.advance(end - time.clock());
    },
  });
  const error = await assertRejects(() => waiter, SyncError);
  assertEquals((error as SyncError).code, "lock-timeout");
  assert(beats >= 59, `the holder beat ${beats} times over ten fake minutes`);
  assert(!holder.lost.aborted, "the holder kept its lease");
  assertEquals((await inspectLock(client))?.body?.nonce, holder.nonce);
  await holder.release();
  assertEquals(await inspectLock(client), null);
});

Deno.test("a crashed holder's lock is taken over after its lease, and the takeover is reported", async () => {
  const time = fakeTime();
  const client = new MemoryClient(time.clock);
  const crashed = await acquireLock(client, {
    ttlMs: 30_000,
    clock: time.clock,
    manualHeartbeat: true,
  });
  // The holder dies: no more heartbeats, no release.
  const logs: string[] = [];
  const taker = await acquireLock(client, {
    ttlMs: 30_000,
    clock: time.clock,
    manualHeartbeat: true,
    log: (line) => logs.push(line),
    sleep: (ms) => time.advance(ms),
  });
  assert(time.clock() - 1_800_000_000_000 > 30_000, "waited out the lease");
  assert(taker.tookOverFrom !== undefined);
  assert(logs.some((l) => l.includes("took over a stale datastore lock")), logs.join("\n"));
  assertEquals((await inspectLock(client))?.body?.nonce, taker.nonce);
  // The crashed holder, were it to wake up, finds it has lost the lease.
  await crashed.beat();
  assert(crashed.lost.aborted);
  await crashed.release();
  assertEquals(
    (await inspectLock(client))?.body?.nonce,
    taker.nonce,
    "release leaves another's lock alone",
  );
  await taker.release();
});

Deno.test("the wait gives up with the holder's host, pid and nonce; force release needs the nonce", async () => {
  const time = fakeTime();
  const client = new MemoryClient(time.clock);
  const holder = await acquireLock(client, { clock: time.clock, manualHeartbeat: true });
  let elapsed = 0;
  const error = await assertRejects(() =>
    acquireLock(client, {
      clock: time.clock,
      maxWaitMs: 5_000,
      manualHeartbeat: true,
      sleep: (ms) => {
        elapsed += ms;
        return time.advance(ms);
      },
    }), SyncError);
  assertEquals((error as SyncError).code, "lock-timeout");
  assert(error.message.includes(holder.nonce) && error.message.includes("pid"), error.message);
  assertEquals(elapsed, 5_000);
  assertEquals(await forceRelease(client, "not-the-nonce"), false);
  assertEquals(await forceRelease(client, holder.nonce), true);
  assertEquals(client.objects.has(LOCK_KEY), false);
});
