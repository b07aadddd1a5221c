/**
 * The library API (`@s3sync/core/lib`): the sync operations the CLI runs, with the adapters
 * they run on. Each operation takes a {@link SyncContext} (the bucket side, the cache side, the
 * binding) and plans through the WASM core; the planning functions themselves are in
 * `@s3sync/core/core`, and the extension's drop-in sync service is `@s3sync/core`.
 *
 * ```ts
 * import { DenoCacheFs, pull, S3Store } from "@s3sync/core/lib";
 *
 * const report = await pull({
 *   store: new S3Store({ bucket: "my-bucket", prefix: "swamp" }),
 *   cache: new DenoCacheFs("/home/me/.swamp/repos/abc"),
 *   namespace: "prod",
 *   prefix: "swamp",
 * });
 * ```
 *
 * @module
 */
export type { SyncContext } from "./exec/context.ts";
export { LOCAL_INDEX, SIDECAR } from "./exec/context.ts";
export { type CacheStore, DenoCacheFs, type FileStat, type WalkResult } from "./io/cache_fs.ts";
export { S3Store, type S3StoreOptions } from "./io/s3.ts";
export type { HeadResult, ObjectStore, ObjectStoreClient } from "./io/store.ts";
export { pull, type PullReport, type PullRequest } from "./ops/pull.ts";
export { push, type PushReport, type PushRequest, type SavedPlan } from "./ops/push.ts";
export { type Keep, resolve, type ResolveReport } from "./ops/resolve.ts";
export { doctor, repair, type RepairReport } from "./ops/repair.ts";
export { migrateRemote, type MigrateReport } from "./ops/migrate.ts";
export type { Progress, RetryPolicy } from "./io/engine.ts";
export type { LockOptions } from "./exec/lock.ts";
export { progressPrinter } from "./exec/progress.ts";
export { SyncError, type SyncErrorCode } from "./core/errors.ts";
export { VERSION } from "./version.ts";
