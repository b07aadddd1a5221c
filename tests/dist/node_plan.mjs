// A plain Node script using the packed `@s3sync/core` the way a Node user would: path mapping,
// a rebuild from a listing, and a pull plan against a cache listing. Run by
// tests/dist/node_package_test.ts from a folder where the tarball is installed; prints one JSON
// line the test checks besides the assertions here.
import assert from "node:assert/strict";
import {
  encodeLocalListing,
  listingPage,
  mapRel,
  Planner,
  relFromRemoteKey,
  SyncError,
} from "@s3sync/core";

const mapped = mapRel("data/a.yaml", "prod", "swamp");
assert.deepEqual(mapped, {
  rel: "data/a.yaml",
  indexKey: "data/a.yaml",
  remoteKey: "prod/data/a.yaml",
  cachePath: "prod/data/a.yaml",
});
assert.equal(relFromRemoteKey("prod/data/a.yaml", "prod"), "data/a.yaml");
assert.throws(
  () => mapRel("../etc/passwd", "prod"),
  (error) => error instanceof SyncError && error.code === "path-dot-segment",
);

const planner = new Planner("prod", "swamp");
try {
  planner.beginRebuild(new Date("2025-01-01T00:00:00Z"));
  planner.addListingPage(...listingPage([
    { key: "prod/data/a.yaml", size: 3, etag: '"a"' },
    { key: "prod/data/b/raw", size: 5, etag: '"b"' },
    { key: "prod/.datastore-index.json", size: 10 },
    { key: "dev/data/c.yaml", size: 1 },
    { key: "prod/data/../evil", size: 1 },
  ]));
  const rebuilt = planner.finishRebuild();
  assert.equal(rebuilt.kept, 2);
  assert.equal(rebuilt.skippedInternal, 1);
  assert.equal(rebuilt.skippedOutsideNamespace, 1);
  assert.deepEqual(rebuilt.unsafeExamples, [{
    key: "prod/data/../evil",
    code: "path-dot-segment",
  }]);

  // The cache already holds a.yaml at the bucket's size: only b/raw comes down.
  const plan = planner.planPull(encodeLocalListing([{ path: "prod/data/a.yaml", size: 3 }]));
  const downloads = plan.downloads.map((d) => d.cachePath);
  assert.deepEqual(downloads, ["prod/data/b/raw"]);
  const index = JSON.parse(new TextDecoder().decode(planner.indexJson(false)));
  assert.deepEqual(Object.keys(index.entries).sort(), ["data/a.yaml", "data/b/raw"]);
  console.log(JSON.stringify({ node: process.version, kept: rebuilt.kept, downloads }));
} finally {
  planner.free();
}
