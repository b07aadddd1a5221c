/**
 * The CLI's command line: each command takes its own flags plus the common ones; an unknown or
 * misplaced flag is a usage error (exit 2) naming the flag and the command, raised before any
 * request; `--help` per command; the one table of exit codes. `main()` runs in process against
 * an endpoint that is a listening socket nobody should connect to.
 */
import { EXIT, main } from "../../js/cli.ts";
import { exitCodeOfError, exitCodeOfRun } from "../../js/cli/exit_codes.ts";
import { assert, assertEquals } from "../harness/assert.ts";

interface Run {
  code: number;
  stdout: string;
  stderr: string;
  /** Whether anything connected to the endpoint while the command ran. */
  contacted: boolean;
}

/** Runs `main(args)` with console output captured, the endpoint a socket that only watches. */
async function run(args: string[]): Promise<Run> {
  Deno.env.set("AWS_ACCESS_KEY_ID", "test");
  Deno.env.set("AWS_SECRET_ACCESS_KEY", "test");
  Deno.env.set("AWS_REGION", "us-east-1");
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  let contacted = false;
  const accepting = listener.accept().then((conn) => {
    contacted = true;
    conn.close();
  }, () => {});
  const stdout: string[] = [];
  const stderr: string[] = [];
  const { log, error } = console;
  console.log = (...parts: unknown[]) => stdout.push(parts.join(" "));
  console.error = (...parts: unknown[]) => stderr.push(parts.join(" "));
  let code: number;
  try {
    code = await main([
      ...args,
      "--endpoint",
      `http://127.0.0.1:${listener.addr.port}`,
      "--force-path-style",
    ]);
  } finally {
    console.log = log;
    console.error = error;
    listener.close();
    await accepting;
  }
  return { code, stdout: stdout.join("\n"), stderr: stderr.join("\n"), contacted };
}

const BOUND = ["--bucket", "b", "--cache", "/tmp/s3sync-never-written"];

Deno.test("a flag of another command is a usage error naming the flag and the command, before any request", async () => {
  const cases: [string[], string, string][] = [
    [["pull", "--apply"], "--apply", "pull"],
    [["doctor", "--yes"], "--yes", "doctor"],
    [["plan", "--yes"], "--yes", "plan"],
    [["plan", "--dry-run"], "--dry-run", "plan"],
    [["push", "--out", "plan.json"], "--out", "push"],
    [["push", "--apply"], "--apply", "push"],
    [["rebuild-index", "--keep", "mine"], "--keep", "rebuild-index"],
    [["repair", "--force"], "--force", "repair"],
    [["migrate", "--delete-missing"], "--delete-missing", "migrate"],
    [["mark-deleted", "--metadata-only", "ns/a"], "--metadata-only", "mark-deleted"],
    [["resolve", "--keep", "mine", "--yes"], "--yes", "resolve"],
    [["lock", "status", "--force"], "--force", "lock status"],
    [["lock", "release", "--force", "N", "--apply"], "--apply", "lock release"],
  ];
  for (const [args, flagName, command] of cases) {
    const result = await run([...args, ...BOUND]);
    assertEquals(result.code, EXIT.usage, `${args.join(" ")}: ${result.stderr}`);
    assert(!result.contacted, `${args.join(" ")} sent a request`);
    assert(
      result.stderr.includes(`${flagName} is not a flag of ${command}`),
      `${args.join(" ")}: ${result.stderr}`,
    );
    // The command's own usage follows, not the overview.
    assert(result.stderr.includes(`usage: s3sync ${command}`), result.stderr);
  }
});

Deno.test("an unknown flag or a stray argument is a usage error, in JSON too with --json", async () => {
  const unknown = await run(["pull", "--frobnicate", ...BOUND]);
  assertEquals(unknown.code, EXIT.usage);
  assert(!unknown.contacted);
  assert(unknown.stderr.includes("unknown flag --frobnicate for pull"), unknown.stderr);
  const short = await run(["doctor", "-x", ...BOUND]);
  assertEquals(short.code, EXIT.usage);
  assert(short.stderr.includes("unknown flag -x for doctor"), short.stderr);
  const json = await run(["push", "--apply", "--json", ...BOUND]);
  assertEquals(json.code, EXIT.usage);
  assertEquals(JSON.parse(json.stdout), {
    command: "push",
    error: {
      code: "usage",
      message: "--apply is not a flag of push (it belongs to rebuild-index, repair, migrate)",
    },
  });
  // `push ns/file` would push everything, not that file: refused rather than ignored.
  const stray = await run(["push", "ns/logs/a.log", "--yes", ...BOUND]);
  assertEquals(stray.code, EXIT.usage);
  assert(!stray.contacted);
  assert(stray.stderr.includes(`push takes no arguments, not "ns/logs/a.log"`), stray.stderr);
  const valueMissing = await run(["plan", ...BOUND, "--out"]);
  assertEquals(valueMissing.code, EXIT.usage);
  assert(!valueMissing.contacted);
});

Deno.test("bad values of the command's own flags are usage errors before any request", async () => {
  for (
    const args of [
      ["push", "--max-deletes", "x"],
      ["plan", "--max-delete-percent", "101"],
      ["pull", "--concurrency", "0"],
      ["doctor", "--lock-wait", "soon"],
      ["resolve", "--keep", "both"],
      ["migrate", "--remove-originals"],
      ["lock", "release", "NONCE"],
      ["lock", "steal"],
      ["mark-deleted"],
      ["pull", "--namespace", "../x"],
    ]
  ) {
    const result = await run([...args, ...BOUND]);
    assertEquals(result.code, EXIT.usage, `${args.join(" ")}: ${result.stderr}`);
    assert(!result.contacted, `${args.join(" ")} sent a request`);
  }
});

Deno.test("--help prints the command's usage with its own flags and exits 0; --help alone the overview", async () => {
  const push = await run(["push", "--help"]);
  assertEquals(push.code, EXIT.ok);
  assert(!push.contacted);
  for (const flagName of ["--dry-run", "--yes", "--plan FILE", "--max-deletes N", "--bucket B"]) {
    assert(push.stdout.includes(flagName), `push --help lacks ${flagName}:\n${push.stdout}`);
  }
  assert(!push.stdout.includes("--apply"), push.stdout);
  assert(!push.stdout.includes("--metadata-only"), push.stdout);
  const rebuild = await run(["rebuild-index", "-h"]);
  assertEquals(rebuild.code, EXIT.ok);
  assert(rebuild.stdout.includes("--force"), rebuild.stdout);
  assert(!rebuild.stdout.includes("--yes"), rebuild.stdout);
  const lock = await run(["lock", "--help"]);
  assertEquals(lock.code, EXIT.ok);
  assert(lock.stdout.includes("usage: s3sync lock status"), lock.stdout);
  assert(lock.stdout.includes("usage: s3sync lock release --force NONCE"), lock.stdout);
  const overview = await run(["--help"]);
  assertEquals(overview.code, EXIT.ok);
  for (const command of ["pull", "plan", "push", "mark-deleted", "resolve", "rebuild-index"]) {
    assert(overview.stdout.includes(`\n  ${command}`), `overview lacks ${command}`);
  }
  for (const command of ["doctor", "lock status", "lock release", "repair", "migrate"]) {
    assert(overview.stdout.includes(`\n  ${command}`), `overview lacks ${command}`);
  }
  const nothing = await run([]);
  assertEquals(nothing.code, EXIT.usage);
  assert(nothing.stderr.includes("usage: s3sync <command>"), nothing.stderr);
});

Deno.test("every flag the README documents for a command passes the flag check", async () => {
  // Each is then stopped by a usage error of its own (a missing --cache), so nothing runs.
  const documented: string[][] = [
    ["pull", "--metadata-only"],
    ["plan", "--out", "f", "--delete-missing", "--max-deletes", "1", "--max-delete-percent", "5"],
    ["plan", "--allow-catalog-shrink"],
    ["push", "--dry-run", "--yes", "--delete-missing", "--max-deletes", "1"],
    ["push", "--max-delete-percent", "5", "--allow-catalog-shrink", "--plan", "f"],
    ["push", "--allow-unconditional"],
    ["mark-deleted", "ns/a", "ns/b"],
    ["resolve", "--keep", "mine", "ns/a"],
    ["rebuild-index", "--apply", "--force"],
    ["doctor"],
    ["repair", "--apply"],
  ];
  const common = [
    "--bucket",
    "b",
    "--prefix",
    "p",
    "--namespace",
    "ns",
    "--region",
    "r",
    "--concurrency",
    "2",
    "--page-size",
    "10",
    "--no-lock",
    "--lock-wait",
    "1",
    "--json",
  ];
  for (const args of documented) {
    const result = await run([...args, ...common]);
    assertEquals(result.code, EXIT.usage, `${args.join(" ")}: ${result.stdout}`);
    assertEquals(
      JSON.parse(result.stdout).error,
      { code: "usage", message: "--cache is required" },
      args.join(" "),
    );
  }
  // migrate and lock need no --cache: stopped here by a missing --bucket instead.
  for (
    const args of [
      ["migrate", "--apply", "--remove-originals", "--namespace", "ns"],
      ["lock", "status"],
      ["lock", "release", "--force", "NONCE"],
    ]
  ) {
    const result = await run([...args, "--json"]);
    assertEquals(
      JSON.parse(result.stdout).error,
      { code: "usage", message: "--bucket is required" },
      args.join(" "),
    );
  }
});

Deno.test("one table maps error codes to exit codes, as the contract always did", () => {
  const expected: [string, number][] = [
    ["usage", 2],
    ["not-evidence", 2],
    ["path-dot-segment", 2],
    ["path-too-long", 2],
    ["namespace-not-one-segment", 2],
    ["namespace-mismatch", 2],
    ["plan-stale", 3],
    ["symlink-in-path", 3],
    ["migrate-v2-unsupported", 3],
    ["index-corrupt", 1],
    ["s3-error", 1],
    ["lock-timeout", 1],
    ["aborted", 1],
    ["failed", 1],
  ];
  for (const [code, exit] of expected) assertEquals(exitCodeOfError(code), exit, code);
  assertEquals(exitCodeOfRun(true, true), EXIT.failed);
  assertEquals(exitCodeOfRun(false, true), EXIT.attention);
  assertEquals(exitCodeOfRun(false, false), EXIT.ok);
});
