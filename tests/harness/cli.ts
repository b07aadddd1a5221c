/**
 * Runs `bin/s3sync` as a child process against a test server, the way a person or a script
 * would: real process, real exit code, stdout and stderr captured.
 *
 * `S3SYNC_BIN` names another build of the same CLI to run instead: `scripts/test.sh` reruns
 * the CLI tests with the artifacts of `npm run dist` (the compiled binary, or the one-file
 * bundle where no compile runtime is at hand).
 *
 * @module
 */
import { type S3Server, TEST_CREDENTIALS } from "./servers.ts";

const BIN = Deno.env.get("S3SYNC_BIN") ?? new URL("../../bin/s3sync", import.meta.url).pathname;

/** What a CLI run produced. */
export interface CliResult {
  /** Exit code. */
  code: number;
  /** Standard output. */
  stdout: string;
  /** Standard error. */
  stderr: string;
}

/** Environment for the CLI: test credentials, no colour. */
export function cliEnv(): Record<string, string> {
  return {
    AWS_ACCESS_KEY_ID: TEST_CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: TEST_CREDENTIALS.secretAccessKey,
    AWS_REGION: "us-east-1",
    NO_COLOR: "1",
  };
}

/** The common flags for a bucket on `server`. */
export function commonFlags(
  server: S3Server,
  bucket: string,
  cache: string,
  extra: { prefix?: string; namespace?: string } = {},
): string[] {
  return [
    "--bucket",
    bucket,
    "--cache",
    cache,
    "--endpoint",
    server.endpoint,
    "--force-path-style",
    ...(extra.prefix ? ["--prefix", extra.prefix] : []),
    ...(extra.namespace ? ["--namespace", extra.namespace] : []),
  ];
}

/**
 * Starts the CLI; the caller waits for or kills it.
 *
 * @param env variables set over {@link cliEnv} (a wrong secret, say)
 */
export function spawnCli(args: string[], env: Record<string, string> = {}): Deno.ChildProcess {
  return new Deno.Command(BIN, {
    args,
    env: { ...cliEnv(), ...env },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
}

/** Runs the CLI to completion (`env` as {@link spawnCli} takes it). */
export async function runCli(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  const out = await spawnCli(args, env).output();
  const decoder = new TextDecoder();
  return {
    code: out.code,
    stdout: decoder.decode(out.stdout),
    stderr: decoder.decode(out.stderr),
  };
}

/** Runs the CLI with `--json` and parses its one JSON object. */
export async function runCliJson(
  args: string[],
  env: Record<string, string> = {},
): Promise<CliResult & { json: Record<string, unknown> }> {
  const result = await runCli([...args, "--json"], env);
  let json: Record<string, unknown>;
  try {
    json = JSON.parse(result.stdout);
  } catch {
    throw new Error(
      `not one JSON object on stdout (exit ${result.code}):\n${result.stdout}\n${result.stderr}`,
    );
  }
  return { ...result, json };
}
