/**
 * The baseline of the plan benchmark: pull and push plans in plain TypeScript, written the way
 * the extension plans today (`JSON.parse` of the whole index, a loop over its entries, `Map`
 * look-ups of the walk). It exists only to be measured against the WASM core; nothing in `js/`
 * uses it.
 *
 * It matches `src/runs/pull/plan.rs` and `src/runs/push/plan.rs` on the benchmark's inputs (`bench/dataset.ts`): no
 * hashes, no tombstones, no unsafe or colliding paths. It deliberately leaves out what the core
 * does beyond the extension (path validation, collision refusal, layout survey, delete guards),
 * so the comparison is the core's full plan against the extension's plain diff.
 *
 * @module
 */
import type { LocalFile, Transfer, Upload } from "../js/core/mod.ts";

/** One entry of the remote index as `JSON.parse` gives it. */
export interface IndexEntryJson {
  /** The rel again (the map key). */
  key?: string;
  /** Size in bytes. */
  size: number;
  /** Remote last-modified time. */
  lastModified?: string;
  /** Local mtime when the file last matched. */
  localMtime?: string;
  /** SHA-256 of the content. */
  sha256?: string;
}

/** The remote index as `JSON.parse` gives it. */
export interface IndexJson {
  /** Format version. */
  version?: number;
  /** Entries by rel. */
  entries: Record<string, IndexEntryJson>;
}

/** The baseline's pull plan: the fields the benchmark compares with the core's. */
export interface BaselinePullPlan {
  /** Objects to download. */
  downloads: Transfer[];
  /** `localMtime` values to record. */
  mtimeUpdates: { rel: string; localMtime: string }[];
  /** Counts. */
  summary: { download: number; downloadBytes: number; upToDate: number };
}

/** The baseline's push plan: the fields the benchmark compares with the core's. */
export interface BaselinePushPlan {
  /** Uploads with their reasons. */
  uploads: Upload[];
  /** Index entries absent locally (no tombstones: never deleted). */
  missing: string[];
  /** Counts. */
  summary: { upload: number; uploadBytes: number; unchanged: number; missing: number };
}

/** Bookkeeping names that never sync (the extension's exact-name list). */
const INTERNAL = new Set([
  ".datastore-index.json",
  ".push-queue.json",
  ".datastore.lock",
  ".datastore-sync-state.json",
]);

const decoder = new TextDecoder();

/** Called after each phase (`parse`, `walk`, `diff`), for phase timings and memory probes. */
export type PhaseMark = (phase: "parse" | "walk" | "diff") => void;

function parseIndex(bytes: Uint8Array): IndexJson {
  return JSON.parse(decoder.decode(bytes)) as IndexJson;
}

/** The walk's payload files by rel: those under `<ns>/`, bookkeeping left out. */
function payloadByRel(files: LocalFile[], namespace: string): Map<string, LocalFile> {
  const prefix = namespace ? `${namespace}/` : "";
  const out = new Map<string, LocalFile>();
  for (const file of files) {
    if (!file.path.startsWith(prefix)) continue;
    const rel = file.path.slice(prefix.length);
    if (!INTERNAL.has(rel)) out.set(rel, file);
  }
  return out;
}

/**
 * Pull: download every entry whose local file is absent or differs in size; for a file of the
 * right size, record its mtime when the index's `localMtime` differs.
 *
 * @param indexBytes the remote index as fetched
 * @param files the cache walk
 * @param namespace bound namespace ("" for solo)
 * @param mark called after each phase
 */
export function baselinePlanPull(
  indexBytes: Uint8Array,
  files: LocalFile[],
  namespace: string,
  mark: PhaseMark = () => {},
): BaselinePullPlan {
  const index = parseIndex(indexBytes);
  mark("parse");
  const local = payloadByRel(files, namespace);
  mark("walk");
  const prefix = namespace ? `${namespace}/` : "";
  const plan: BaselinePullPlan = {
    downloads: [],
    mtimeUpdates: [],
    summary: { download: 0, downloadBytes: 0, upToDate: 0 },
  };
  for (const [rel, entry] of Object.entries(index.entries)) {
    if (INTERNAL.has(rel)) continue;
    const file = local.get(rel);
    if (file && file.size === entry.size) {
      plan.summary.upToDate++;
      if (file.mtimeMs !== undefined) {
        const recorded = entry.localMtime ? Date.parse(entry.localMtime) : undefined;
        if (recorded !== file.mtimeMs) {
          plan.mtimeUpdates.push({ rel, localMtime: new Date(file.mtimeMs).toISOString() });
        }
      }
      continue;
    }
    const key = prefix + rel;
    plan.downloads.push({ rel, remoteKey: key, cachePath: key, size: entry.size });
    plan.summary.downloadBytes += entry.size;
  }
  plan.summary.download = plan.downloads.length;
  mark("diff");
  return plan;
}

/**
 * Push: upload a file with no entry, a different size, or (no hash recorded) a moved mtime;
 * report entries absent locally as missing.
 *
 * @param indexBytes the remote index as fetched
 * @param files the cache walk
 * @param namespace bound namespace ("" for solo)
 * @param mark called after each phase
 */
export function baselinePlanPush(
  indexBytes: Uint8Array,
  files: LocalFile[],
  namespace: string,
  mark: PhaseMark = () => {},
): BaselinePushPlan {
  const index = parseIndex(indexBytes);
  mark("parse");
  const local = payloadByRel(files, namespace);
  mark("walk");
  const prefix = namespace ? `${namespace}/` : "";
  const plan: BaselinePushPlan = {
    uploads: [],
    missing: [],
    summary: { upload: 0, uploadBytes: 0, unchanged: 0, missing: 0 },
  };
  for (const [rel, file] of local) {
    const entry = Object.hasOwn(index.entries, rel) ? index.entries[rel] : undefined;
    let reason: Upload["reason"] | undefined;
    if (!entry) reason = "new";
    else if (entry.size !== file.size) reason = "size-changed";
    else {
      const recorded = entry.localMtime ? Date.parse(entry.localMtime) : undefined;
      // Same mtime as recorded, or nothing recorded to compare: unchanged (as the core and the
      // extension decide when the entry has no hash, which the benchmark's never have).
      if (recorded === undefined || recorded === file.mtimeMs) {
        plan.summary.unchanged++;
        continue;
      }
      reason = "mtime-changed";
    }
    const key = prefix + rel;
    const expected = entry ? { size: entry.size, sha256: entry.sha256 ?? null } : null;
    plan.uploads.push({ rel, remoteKey: key, cachePath: key, size: file.size, reason, expected });
    plan.summary.uploadBytes += file.size;
  }
  for (const rel of Object.keys(index.entries)) {
    if (!INTERNAL.has(rel) && !local.has(rel)) plan.missing.push(rel);
  }
  plan.summary.upload = plan.uploads.length;
  plan.summary.missing = plan.missing.length;
  mark("diff");
  return plan;
}
