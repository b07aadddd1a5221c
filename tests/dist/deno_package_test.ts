/**
 * The Deno package as a user gets it: exactly the files `deno publish` would upload, copied to a
 * folder outside the repository, imported by name (`@s3sync/core`, `@s3sync/core/lib`,
 * `@s3sync/core/core`) from a separate project that links it in place of the registry. That
 * project constructs `S3SyncService` and pulls from a real server on loopback.
 *
 * @module
 */
import { assert, assertEquals } from "../harness/assert.ts";
import { contentOf, datastoreRels, putAll } from "../harness/seed.ts";
import { startServer, TEST_CREDENTIALS } from "../harness/servers.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

/** What `deno publish --dry-run` says it would upload, as paths relative to the repo. */
async function publishedFiles(): Promise<{ files: string[]; output: string }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["publish", "--dry-run", "--allow-dirty"],
    cwd: ROOT,
    env: { NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const output = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  assertEquals(out.code, 0, output);
  const files = [...output.matchAll(/^\s*file:\/\/(\S+) \([^)]*\)$/gm)]
    .map((m) => decodeURIComponent(m[1]))
    .map((path) => {
      assert(path.startsWith(ROOT), `${path} is outside the repository`);
      return path.slice(ROOT.length);
    });
  return { files, output };
}

/** The user's project: it imports the package by name only and prints what its pull did. */
const APP_SOURCE = `
import { S3SyncService } from "@s3sync/core";
import { mapRel } from "@s3sync/core/core";
import { S3Store, VERSION } from "@s3sync/core/lib";

const [endpoint, bucket, cache] = Deno.args;
const store = new S3Store({
  bucket,
  endpoint,
  region: "us-east-1",
  forcePathStyle: true,
  credentials: {
    accessKeyId: Deno.env.get("TEST_KEY")!,
    secretAccessKey: Deno.env.get("TEST_SECRET")!,
  },
});
try {
  const service = new S3SyncService(store, cache);
  const pulled = await service.pullChanged({ namespace: "prod" });
  const again = await service.pullChanged({ namespace: "prod" });
  const mapped = mapRel("data/a.yaml", "prod", "swamp");
  console.log(JSON.stringify({ pulled, again, mapped, version: VERSION }));
} finally {
  store.destroy();
}
`;

Deno.test("the published package, imported by name from another project, pulls from a server", async () => {
  const { files, output } = await publishedFiles();
  assert(!/warning/i.test(output), `the dry run warned:\n${output}`);
  for (
    const needed of ["pkg/s3sync_core.js", "pkg/s3sync_core_wasm.js", "js/extension/service.ts"]
  ) {
    assert(files.includes(needed), `${needed} is not published`);
  }
  for (const file of files) {
    assert(!/^(tests|src|target|node_modules|bench|fuzz)\//.test(file), `${file} is published`);
  }

  const server = await startServer("s3s-fs");
  const bucket = await server.bucket("package");
  const work = await Deno.makeTempDir({ prefix: "s3sync-package-" });
  try {
    // The package: the published files and nothing else (no src/, no node_modules/).
    for (const file of [...files, "deno.json"]) {
      const target = `${work}/package/${file}`;
      await Deno.mkdir(target.slice(0, target.lastIndexOf("/")), { recursive: true });
      await Deno.copyFile(`${ROOT}${file}`, target);
    }
    // The user's project, as `deno add jsr:@s3sync/core` writes it, with `links` standing in
    // for the registry (JSR is not reachable from the tests).
    await Deno.mkdir(`${work}/app`);
    await Deno.writeTextFile(
      `${work}/app/deno.json`,
      JSON.stringify({
        imports: { "@s3sync/core": "jsr:@s3sync/core@^0.1.0" },
        links: ["../package"],
      }),
    );
    await Deno.writeTextFile(`${work}/app/main.ts`, APP_SOURCE);

    const rels = datastoreRels(12);
    await putAll(bucket, rels.map((rel) => [`prod/${rel}`, contentOf(rel)]));
    const cache = `${work}/cache`;
    const run = await new Deno.Command(Deno.execPath(), {
      args: ["run", "--allow-all", "main.ts", server.endpoint, "package", cache],
      cwd: `${work}/app`,
      env: {
        TEST_KEY: TEST_CREDENTIALS.accessKeyId,
        TEST_SECRET: TEST_CREDENTIALS.secretAccessKey,
        NO_COLOR: "1",
      },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stderr = new TextDecoder().decode(run.stderr);
    assertEquals(run.code, 0, stderr);
    const result = JSON.parse(new TextDecoder().decode(run.stdout));
    assertEquals(result.pulled, rels.length, stderr);
    assertEquals(result.again, 0);
    assertEquals(result.mapped.remoteKey, "prod/data/a.yaml");
    const deno = JSON.parse(await Deno.readTextFile(`${ROOT}deno.json`));
    assertEquals(result.version, deno.version);
    for (const rel of rels) {
      assertEquals(await Deno.readFile(`${cache}/prod/${rel}`), contentOf(rel), rel);
    }
  } finally {
    bucket.destroy();
    await server.stop();
    await Deno.remove(work, { recursive: true });
  }
});
