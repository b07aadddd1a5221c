/**
 * The synthetic datastore the plan benchmarks run on: raw index bytes (the remote copy's compact
 * JSON) and a cache walk, built once per size. Same shape and proportions as
 * `benches/planner.rs`, so native and WASM numbers describe the same work.
 *
 * @module
 */
import type { LocalFile } from "../js/core/mod.ts";

/** Namespace every benchmark binds (namespaced mode is the one the seed bugs hit). */
export const NAMESPACE = "prod";

/** 2026-08-01T12:00:00Z in epoch ms: the base of every recorded `localMtime`. */
const BASE_MTIME_MS = 1_785_585_600_000;

/** The inputs of one plan benchmark. */
export interface PlanInputs {
  /** Index entries. */
  entries: number;
  /** The remote index as fetched: compact JSON bytes. */
  indexBytes: Uint8Array;
  /** The cache walk, as `DenoCacheFs.walk` returns it (in its order). */
  files: LocalFile[];
}

/**
 * The `i`-th rel, shaped like swamp's data trees (the rule of `datastoreRels` in
 * `tests/harness/seed.ts`, with the index as the unique part).
 */
export function benchRel(i: number): string {
  switch (i % 6) {
    case 0:
    case 1:
      return `data/aws/ec2/vpc/m-${i}/state/${i % 3}/raw`;
    case 2:
      return `workflow-runs/wr-${Math.floor(i / 12)}/workflow-run-${i}.yaml`;
    case 3:
      return `outputs/aws/s3/bucket/o-${i}/result/1/raw`;
    case 4:
      return `definitions-evaluated/aws/iam/role/d-${i}/def.yaml`;
    default:
      return `logs/run-${i}.log`;
  }
}

function sizeOf(i: number): number {
  return 100 + (i * 7_919) % 4_000;
}

/**
 * Builds the index bytes and the walk for `n` entries. By `i % 100`: 2 % of the entries are
 * absent locally, 3 % differ in size, 3 % have a moved mtime, the rest are identical; `n / 25`
 * new files sit in the cache, plus the root's index and sidecar.
 *
 * @param n index entries
 */
export function buildInputs(n: number): PlanInputs {
  // Parts joined once: a 10^6-entry index is about 190 MB of JSON, and repeated `+=` on a
  // string that size would copy it many times.
  const parts: string[] = [];
  const files: LocalFile[] = [];
  for (let i = 0; i < n; i++) {
    const rel = benchRel(i);
    const size = sizeOf(i);
    const mtime = BASE_MTIME_MS + (i % 86_400) * 1_000;
    parts.push(
      `${JSON.stringify(rel)}:{"key":${JSON.stringify(rel)},"size":${size},` +
        `"lastModified":"2026-08-01T12:00:00.000Z","localMtime":"${
          new Date(mtime).toISOString()
        }"}`,
    );
    const path = `${NAMESPACE}/${rel}`;
    const state = i % 100;
    if (state < 2) continue;
    if (state < 5) files.push({ path, size: size + 1, mtimeMs: mtime + 5_000 });
    else if (state < 8) files.push({ path, size, mtimeMs: mtime + 1_000 });
    else files.push({ path, size, mtimeMs: mtime });
  }
  for (let j = 0; j < Math.floor(n / 25); j++) {
    files.push({
      path: `${NAMESPACE}/data/aws/ec2/vpc/new-${j}/state/0/raw`,
      size: sizeOf(j),
      mtimeMs: BASE_MTIME_MS,
    });
  }
  files.push({ path: ".datastore-index.json", size: 1_000, mtimeMs: BASE_MTIME_MS });
  files.push({ path: ".datastore-sync-state.json", size: 200, mtimeMs: BASE_MTIME_MS });
  // In the order `DenoCacheFs.walk` lists a cache: byte order of the paths (all ASCII here,
  // where the default string order is the byte order).
  files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const json = `{"version":1,"lastPulled":"2026-08-07T10:00:00.000Z","entries":{${
    parts.join(",")
  }}}`;
  return { entries: n, indexBytes: new TextEncoder().encode(json), files };
}
