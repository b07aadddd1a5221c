/**
 * The knobs read from the environment as the extension reads them: `SWAMP_S3_REQUEST_TIMEOUT_MS`
 * (whole ms from 1 s to 10 min, winning over the configured value; anything else ignored and
 * named once) and `SWAMP_S3_SYNC_TRACE` (on for any value but empty, `0` and `false`).
 */
import { assertEquals } from "../harness/assert.ts";
import {
  envRequestTimeout,
  PhaseClock,
  requestTimeout,
  syncTraceEnabled,
} from "../../js/io/trace.ts";

function withEnv(name: string, value: string | undefined, body: () => void): void {
  const before = Deno.env.get(name);
  if (value === undefined) Deno.env.delete(name);
  else Deno.env.set(name, value);
  try {
    body();
  } finally {
    if (before === undefined) Deno.env.delete(name);
    else Deno.env.set(name, before);
  }
}

Deno.test("SWAMP_S3_REQUEST_TIMEOUT_MS: a valid value wins over the configured one", () => {
  withEnv("SWAMP_S3_REQUEST_TIMEOUT_MS", "120000", () => {
    assertEquals(envRequestTimeout(), { kind: "set", ms: 120000 });
    assertEquals(requestTimeout(5000, () => {}), 120000);
  });
  withEnv("SWAMP_S3_REQUEST_TIMEOUT_MS", undefined, () => {
    assertEquals(envRequestTimeout(), { kind: "unset" });
    assertEquals(requestTimeout(5000, () => {}), 5000);
    assertEquals(requestTimeout(undefined, () => {}), undefined);
  });
});

Deno.test("SWAMP_S3_REQUEST_TIMEOUT_MS: out of range, fractional or not a number is ignored and said once", () => {
  const said: string[] = [];
  for (const raw of ["999", "600001", "1500.5", "abc", "-1"]) {
    withEnv("SWAMP_S3_REQUEST_TIMEOUT_MS", raw, () => {
      assertEquals(envRequestTimeout(), { kind: "invalid", raw });
      assertEquals(requestTimeout(7000, (line) => said.push(line)), 7000);
    });
  }
  // One warning per process, not one per call (the service asks on every sync).
  assertEquals(said.length, 1);
  assertEquals(
    said[0],
    'SWAMP_S3_REQUEST_TIMEOUT_MS="999" ignored: expected whole ms from 1000 to 600000',
  );
  withEnv("SWAMP_S3_REQUEST_TIMEOUT_MS", "1000", () => {
    assertEquals(envRequestTimeout(), { kind: "set", ms: 1000 });
  });
  withEnv("SWAMP_S3_REQUEST_TIMEOUT_MS", "600000", () => {
    assertEquals(envRequestTimeout(), { kind: "set", ms: 600000 });
  });
});

Deno.test("SWAMP_S3_SYNC_TRACE: on for any value but empty, 0 and false; a phase prints once, when it ends", () => {
  for (
    const [raw, on] of [["1", true], ["yes", true], ["0", false], ["FALSE", false], ["", false]]
  ) {
    withEnv(
      "SWAMP_S3_SYNC_TRACE",
      raw as string,
      () => assertEquals(syncTraceEnabled(), on, raw as string),
    );
  }
  withEnv("SWAMP_S3_SYNC_TRACE", undefined, () => assertEquals(syncTraceEnabled(), false));

  const lines: string[] = [];
  withEnv("SWAMP_S3_SYNC_TRACE", "1", () => {
    using clock = new PhaseClock("pull", (line) => lines.push(line));
    clock.enter("walk");
    clock.note("toPull=3");
    clock.enter("transfer");
    assertEquals(lines.length, 1);
  });
  assertEquals(lines.length, 2);
  assertEquals(/^\[s3-sync\] pull\.walk \d+ms toPull=3$/.test(lines[0]), true, lines[0]);
  assertEquals(/^\[s3-sync\] pull\.transfer \d+ms$/.test(lines[1]), true, lines[1]);

  const silent: string[] = [];
  withEnv("SWAMP_S3_SYNC_TRACE", undefined, () => {
    using clock = new PhaseClock("push", (line) => silent.push(line));
    clock.enter("walk");
  });
  assertEquals(silent, []);
});
