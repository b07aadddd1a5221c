/**
 * Typed wrapper over the WASM core in `pkg/`. Every call goes through {@link core}, so core
 * errors surface as {@link SyncError}s with their stable codes. No planning happens here: these
 * functions only encode inputs, call the core, and decode its answers.
 *
 * @module
 */

export { SyncError } from "./errors.ts";
export type { GuardCode, ProblemCode, RefusalCode, SyncErrorCode } from "./codes.ts";

/**
 * The types that cross the boundary, generated from the Rust types (`#[derive(Tsify)]`) into
 * `pkg/s3sync_core.d.ts` by `scripts/build.sh` and re-exported wholesale: none is copied here by
 * hand, so they cannot drift from what the core sends (`tests/unit/boundary_types_test.ts`).
 * Their docs are the Rust doc comments. The values below that share a name with a generated
 * class or function (`Planner`, `mapRel`, …) take precedence: they route core errors.
 */
export type * from "./wasm.ts";
export {
  encodeLocalListing,
  encodeRemotePage,
  hashColumns,
  listingPage,
  walkChanges,
} from "../wire/encode.ts";
export type { ListedObject, LocalFile } from "../wire/encode.ts";
export { BOOKKEEPING, Planner, sidecarToWrite } from "./planner.ts";
export { f64Bytes, PushRun } from "./push_run.ts";
export { PullRun } from "./pull_run.ts";
export {
  CatalogExportRun,
  ConditionsRun,
  ContaminationRun,
  DoctorRun,
  IndexReadRun,
  LockRun,
  MigrateRun,
  RebuildRun,
  RepairRun,
  ResolveRun,
  ShardMoveRun,
  ShardWriteRun,
} from "./small_runs.ts";
export {
  afterLostRace,
  bindUnnamed,
  callOutcome,
  classifyCachePath,
  codeLists,
  DirtyRecorder,
  findCollisions,
  findContamination,
  journalLine,
  judgeAside,
  judgeExisting,
  judgeLostCondition,
  lockKeyFor,
  mapCallerPath,
  mapRel,
  migrateListing,
  partitionKey,
  planMigrate,
  relFromRemoteKey,
  scopeForModels,
  sidecarFoldJournal,
  sidecarLazyPullActive,
  sidecarUnreadable,
  sidecarWithCatalogHash,
  sidecarWithServerVerdict,
  versionAtKey,
} from "./functions.ts";
