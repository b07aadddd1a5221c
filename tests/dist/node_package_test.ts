/**
 * The Node package as a user gets it: `npm pack` of npm/ (built by scripts/build_npm.sh),
 * installed offline from the tarball into an empty project outside the repo, and a plain Node
 * script (tests/dist/node_plan.mjs) that imports it by name and plans: path mapping, a rebuild
 * from a listing, a pull plan.
 *
 * @module
 */
import { assert, assertEquals } from "../harness/assert.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

async function run(
  command: string,
  args: string[],
  cwd: string,
): Promise<{ stdout: string; stderr: string }> {
  const out = await new Deno.Command(command, { args, cwd, stdout: "piped", stderr: "piped" })
    .output();
  const stdout = new TextDecoder().decode(out.stdout);
  const stderr = new TextDecoder().decode(out.stderr);
  assertEquals(out.code, 0, `${command} ${args.join(" ")} failed:\n${stdout}\n${stderr}`);
  return { stdout, stderr };
}

Deno.test("the packed Node package plans from a plain Node script", async () => {
  const work = await Deno.makeTempDir({ prefix: "s3sync-npm-" });
  try {
    await run("bash", ["scripts/build_npm.sh"], ROOT);
    const packed = await run(
      "npm",
      ["pack", "--json", "--pack-destination", work],
      `${ROOT}npm`,
    );
    const [info] = JSON.parse(packed.stdout);
    const files = info.files.map((f: { path: string }) => f.path).sort();
    assertEquals(files, ["README.md", "core.d.ts", "core.js", "package.json"]);
    const manifest = JSON.parse(await Deno.readTextFile(`${ROOT}npm/package.json`));
    assertEquals(info.version, manifest.version);

    await Deno.mkdir(`${work}/app`);
    await Deno.writeTextFile(
      `${work}/app/package.json`,
      JSON.stringify({ private: true, type: "module" }),
    );
    await run(
      "npm",
      ["install", `../${info.filename}`, "--offline", "--no-audit", "--no-fund"],
      `${work}/app`,
    );
    await Deno.copyFile(`${ROOT}tests/dist/node_plan.mjs`, `${work}/app/plan.mjs`);
    const planned = await run("node", ["plan.mjs"], `${work}/app`);
    const result = JSON.parse(planned.stdout);
    assert(/^v(\d+)\./.test(result.node) && Number(result.node.slice(1).split(".")[0]) >= 20);
    assertEquals(result.kept, 2);
    assertEquals(result.downloads, ["prod/data/b/raw"]);
  } finally {
    await Deno.remove(work, { recursive: true });
  }
});
