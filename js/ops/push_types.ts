/**
 * What a push is asked and what it answers: the request, a saved plan, the report, and the
 * prepared push a two-phase push carries from its uploads to its commit. Kept apart from the
 * entry points (`push.ts`) so that the executor and its helpers share these shapes without
 * importing the module that imports them.
 *
 * @module
 */
import type { Planner, PushOptions, PushPlan, PushRun, Verdict } from "../core/mod.ts";
import type { ItemFailure } from "../io/engine.ts";
import type { LoadedIndex } from "./remote_index.ts";

/** Options of a push. */
export interface PushRequest extends
  Omit<
    PushOptions,
    "walkErrors" | "listingErrors" | "lazyPullActive" | "sidecarUnreadable" | "symlinkedFolders"
  > {
  /** Plan only: nothing is uploaded, deleted or published. */
  dryRun?: boolean;
  /**
   * With `dryRun`: the caller only counts what would go, so a sealed cache may answer "nothing"
   * after its walk, with no request (the core's `preview`).
   */
  preview?: boolean;
  /**
   * Asked before any delete; deletes go only when it resolves true. Absent means deletes are
   * confirmed (the library default; the CLI always passes one).
   */
  confirmDeletes?: (plan: PushPlan) => Promise<boolean>;
  /** The plan must equal this one (a saved `plan --out`), else the push stops with `plan-stale`. */
  expect?: SavedPlan;
  /**
   * Publish even when the server ignores conditional writes (lost updates become possible).
   * Off by default; see the README.
   */
  allowUnconditional?: boolean;
}

/** A plan saved by `s3sync plan --out`, applied by `s3sync push --plan`. */
export interface SavedPlan {
  /** Format marker. */
  kind: "s3sync-push-plan";
  /** ETag of the remote index the plan was computed from (null: no index). */
  remoteIndexEtag: string | null;
  /** SHA-256 of the cache walk the plan was computed from. */
  listingDigest: string;
  /** The plan. */
  plan: PushPlan;
}

/** What a push did. */
export interface PushReport {
  /** The final plan. */
  plan: PushPlan;
  /** True for `--dry-run` / `plan`. */
  dryRun: boolean;
  /** Files uploaded. */
  uploaded: number;
  /** Bytes uploaded. */
  bytes: number;
  /** Objects deleted. */
  deleted: number;
  /** Per-file failures. */
  failures: ItemFailure[];
  /** True when the index was published. */
  published: boolean;
  /** Publish races lost and re-merged. */
  conflicts: number;
  /**
   * Index shard files written or removed: on a v1 repo the per-partition mirror beside the
   * monolith (one per partition the push touched, which the extension's scoped pulls read), on a
   * v2 repo the changed shards of each commit attempt. Each is a request besides the uploads.
   */
  shardsWritten: number;
  /** ETag of the index read (for saving a plan). */
  remoteIndexEtag: string | null;
  /** Digest of the cache walk (for saving a plan). */
  listingDigest: string;
  /**
   * What a person must know even when nothing was withheld (the core's `pushWarnings`): a mixed
   * layout, files missing but not deleted, refused entries. Told through the service's logger
   * and printed by the CLI as warnings; never a failure.
   */
  warnings: Verdict[];
}

/**
 * A push whose uploads are done and whose index commit is still to come (the two-phase push
 * swamp core runs: uploads outside its global lock, the commit under it). It owns a planner
 * holding the recorded changes and the core's run; {@link commitPreparedPush} or
 * {@link discardPreparedPush} frees them.
 */
export interface PreparedPush {
  /** The planner with the plan and the recorded uploads. */
  planner: Planner;
  /** The core's push machine, paused after the uploads. */
  run: PushRun;
  /** What the prepare did. */
  report: PushReport;
  /** The index as read at prepare time (a v2 commit needs its ETags). */
  loaded?: LoadedIndex;
  /** The request. */
  request: PushRequest;
  /**
   * Uploads the prepare left for the commit (replacements, with a store that has no `If-Match`:
   * they wait for the commit's lock).
   */
  deferred: number;
}
