/**
 * The service loads wherever swamp core loads an extension: core bundles the extension's
 * module with `deno bundle --no-lock --node-modules-dir=none` and no config (no import map),
 * then imports the bundle from `.swamp/datastore-bundles/<hash>/`. This test does the same
 * with a module that imports `js/extension/service.ts`, runs the bundle from an unrelated folder, and
 * checks that the WASM core loaded and a push and a pull went through.
 *
 * @module
 */
import { assert, assertEquals } from "../harness/assert.ts";

const SERVICE = new URL("../../js/extension/service.ts", import.meta.url).href;
const MEMORY_CLIENT = new URL("../harness/memory_client.ts", import.meta.url).href;

/** The extension-shaped module swamp would bundle: it drives the service once and reports. */
function entrySource(): string {
  return `
import { S3SyncService } from "${SERVICE}";
import { MemoryClient } from "${MEMORY_CLIENT}";

const [writer, reader] = Deno.args;
const client = new MemoryClient();
await Deno.mkdir(writer + "/prod/logs", { recursive: true });
await Deno.writeTextFile(writer + "/prod/logs/run.log", "from the bundle");
const pushing = new S3SyncService(client, writer);
await pushing.markDirty({ relPath: "prod/logs/run.log" });
const pushed = await pushing.pushChanged({ namespace: "prod" });
const pulled = await new S3SyncService(client, reader).pullChanged({ namespace: "prod" });
const text = await Deno.readTextFile(reader + "/prod/logs/run.log");
console.log(JSON.stringify({ pushed, pulled, text, keys: [...client.objects.keys()].sort() }));
`;
}

Deno.test("a deno bundle of a module importing the service runs from another folder", async () => {
  const work = await Deno.makeTempDir({ prefix: "s3sync-bundle-" });
  try {
    await Deno.writeTextFile(`${work}/extension.ts`, entrySource());
    // As swamp core does it: no lock file, no node_modules, no config, cwd outside the repo.
    const bundled = await new Deno.Command(Deno.execPath(), {
      args: [
        "bundle",
        "--no-lock",
        "--node-modules-dir=none",
        "--no-config",
        "--quiet",
        "-o",
        `${work}/bundle/extension.js`,
        `${work}/extension.ts`,
      ],
      cwd: work,
      stdout: "piped",
      stderr: "piped",
    }).output();
    assertEquals(bundled.code, 0, new TextDecoder().decode(bundled.stderr));

    // Import it from a folder where nothing sits beside it: no .wasm, no pkg/, no node_modules.
    const elsewhere = `${work}/.swamp/datastore-bundles/0123abcd`;
    await Deno.mkdir(elsewhere, { recursive: true });
    await Deno.rename(`${work}/bundle/extension.js`, `${elsewhere}/extension.js`);
    const siblings = [];
    for await (const entry of Deno.readDir(elsewhere)) siblings.push(entry.name);
    assertEquals(siblings, ["extension.js"]);

    const run = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--no-lock",
        "--node-modules-dir=none",
        "--no-config",
        "--allow-read",
        "--allow-write",
        "--allow-env",
        "--allow-sys",
        `${elsewhere}/extension.js`,
        `${work}/writer`,
        `${work}/reader`,
      ],
      cwd: elsewhere,
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stderr = new TextDecoder().decode(run.stderr);
    assertEquals(run.code, 0, stderr);
    const report = JSON.parse(new TextDecoder().decode(run.stdout));
    assertEquals(report.pushed, 1);
    assertEquals(report.pulled, 1);
    assertEquals(report.text, "from the bundle");
    assert(report.keys.includes("prod/logs/run.log"), JSON.stringify(report.keys));
    assert(report.keys.includes("prod/.datastore-index.json"), JSON.stringify(report.keys));
  } finally {
    await Deno.remove(work, { recursive: true });
  }
});
