/**
 * One version everywhere a user can see one: the crate, the Deno package, the npm scripts'
 * package, the Node package, the constant the CLI prints, and `s3sync --version` itself.
 *
 * @module
 */
import { VERSION } from "../../js/version.ts";
import { assert, assertEquals } from "../harness/assert.ts";
import { runCli } from "../harness/cli.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

async function jsonVersion(path: string): Promise<string> {
  return JSON.parse(await Deno.readTextFile(`${ROOT}${path}`)).version;
}

Deno.test("Cargo.toml, deno.json, package.json, npm/package.json and the CLI agree", async () => {
  const cargo = await Deno.readTextFile(`${ROOT}Cargo.toml`);
  const crate = cargo.match(/^\[package\][^[]*?^version = "([^"]+)"/m)?.[1];
  assert(crate, "no version in Cargo.toml's [package]");
  assert(/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/.test(crate), `${crate} is not semver`);
  assertEquals(
    {
      "deno.json": await jsonVersion("deno.json"),
      "package.json": await jsonVersion("package.json"),
      "npm/package.json": await jsonVersion("npm/package.json"),
      "js/version.ts": VERSION,
    },
    {
      "deno.json": crate,
      "package.json": crate,
      "npm/package.json": crate,
      "js/version.ts": crate,
    },
  );
});

Deno.test("s3sync --version prints the version and exits 0", async () => {
  const result = await runCli(["--version"]);
  assertEquals(result.code, 0, result.stderr);
  assertEquals(result.stdout, `s3sync ${VERSION}\n`);
  assertEquals(result.stderr, "");
});

Deno.test("--version after a command is a usage error, as any flag the command does not take", async () => {
  const result = await runCli(["pull", "--version"]);
  assertEquals(result.code, 2);
  assert(result.stderr.includes("unknown flag --version for pull"), result.stderr);
});
