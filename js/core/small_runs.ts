/**
 * The machines of the rarer runs: rebuild, contamination, resolve, migrate, repair, doctor,
 * the index read, the shard-set write, the move to shards, the datastore lock, a push's
 * conditions and the catalog export.
 *
 * @module
 */
import * as wasm from "./wasm.ts";
import { core } from "./errors.ts";
import type {
  CatalogExportAction,
  CatalogExportEvent,
  CatalogExportRequest,
  CatalogExportResult,
  ConditionsAction,
  ConditionsEvent,
  ConditionsKnown,
  ConditionsRequest,
  ConditionsResult,
  ContaminationAction,
  ContaminationEvent,
  ContaminationSummary,
  DoctorAction,
  DoctorEvent,
  DoctorFindings,
  IndexReadAction,
  IndexReadEvent,
  IndexReadRequest,
  IndexReadResult,
  LockAction,
  LockEvent,
  LockRequest,
  LockResult,
  MigrateAction,
  MigrateEvent,
  MigrateRequest,
  MigrateResult,
  RebuildAction,
  RebuildEvent,
  RebuildRequest,
  RebuildResult,
  RepairAction,
  RepairEvent,
  RepairRequest,
  RepairResult,
  ResolveAction,
  ResolveEvent,
  ResolveRequest,
  ResolveResult,
  ShardMoveAction,
  ShardMoveEvent,
  ShardMoveResult,
  ShardWriteAction,
  ShardWriteEvent,
  ShardWriteRequest,
  ShardWriteResult,
} from "./wasm.ts";
import type { Planner } from "./planner.ts";
import { CoreRun, type NoReplies } from "./run.ts";

/**
 * A rebuild of the remote index from a listing as the core's state machine: a sync's rebuild of
 * a missing index, or `rebuild-index`'s. The rebuilt index becomes the planner's.
 */
export class RebuildRun extends CoreRun<RebuildAction, RebuildEvent, NoReplies, RebuildResult> {
  /** A run driving `planner` for `request`, at `now`. */
  constructor(planner: Planner, request: RebuildRequest, now: Date) {
    super(core(() => new wasm.RebuildRun(request, now.toISOString())), planner);
  }
}

/**
 * Repairing namespace contamination as the core's state machine (list, HEAD, read and publish
 * the index, delete).
 */
export class ContaminationRun
  extends CoreRun<ContaminationAction, ContaminationEvent, NoReplies, ContaminationSummary> {
  #bodyOf: () => Uint8Array;

  /**
   * A run for the bound `namespace`; a dry run only reports. `maxIndexEntries`: the most entries
   * the bound index may name (default 1,000,000).
   */
  constructor(
    namespace: string,
    prefix: string | undefined,
    dryRun: boolean,
    maxIndexEntries?: number,
  ) {
    const inner = core(() =>
      new wasm.ContaminationRun(namespace, prefix || undefined, dryRun, maxIndexEntries)
    );
    super(inner);
    this.#bodyOf = () => inner.body();
  }

  /** The bytes a `publish` action writes. */
  body(): Uint8Array {
    return core(this.#bodyOf);
  }
}

/** `resolve` as the core's state machine (pull, walk, restore copies, push, remove copies). */
export class ResolveRun extends CoreRun<ResolveAction, ResolveEvent, NoReplies, ResolveResult> {
  /** A run in the layout `planner` binds, for `request`. */
  constructor(planner: Planner, request: ResolveRequest) {
    super(core(() => new wasm.ResolveRun(planner, request)));
  }
}

/**
 * The remote side of a solo → namespaced migrate as the core's state machine (read, list, HEAD,
 * copy, publish, delete). It holds its own index sessions.
 */
export class MigrateRun extends CoreRun<MigrateAction, MigrateEvent, NoReplies, MigrateResult> {
  #bodyOf: () => Uint8Array;

  /** A run migrating into `namespace` (`prefix` only for the key length limit), at `now`. */
  constructor(namespace: string, prefix: string | undefined, request: MigrateRequest, now: Date) {
    const inner = core(() =>
      new wasm.MigrateRun(namespace, prefix || undefined, request, now.toISOString())
    );
    super(inner);
    this.#bodyOf = () => inner.body();
  }

  /** The bytes a `publish` action writes. */
  body(): Uint8Array {
    return core(this.#bodyOf);
  }
}

/**
 * The layout repair as the core's state machine (read the journal, load the index, walk, hash,
 * apply steps to the cache, hydrate).
 */
export class RepairRun extends CoreRun<RepairAction, RepairEvent, NoReplies, RepairResult> {
  /** A run over `planner` (which will hold the index) for `request`, started at `now`. */
  constructor(planner: Planner, request: RepairRequest, now: Date) {
    super(core(() => new wasm.RepairRun(request, now.toISOString())), planner);
  }
}

/**
 * `doctor` as the core's state machine (read the index, walk, stat our temporary files, read
 * the sidecar): what is wrong with the cache, and what is worth knowing.
 */
export class DoctorRun extends CoreRun<DoctorAction, DoctorEvent, NoReplies, DoctorFindings> {
  /** A run over `planner`, whose session will hold the index. */
  constructor(planner: Planner) {
    super(core(() => new wasm.DoctorRun()), planner);
  }
}

/**
 * Reading the bound tree's index as the core's state machine: the v2 shard set, else the
 * monolith, else a rebuild, loaded into (or, for a push's re-merge, rebased onto) the planner.
 */
export class IndexReadRun
  extends CoreRun<IndexReadAction, IndexReadEvent, NoReplies, IndexReadResult> {
  /** A read into `planner` for `request`. */
  constructor(planner: Planner, request: IndexReadRequest) {
    super(core(() => new wasm.IndexReadRun(request)), planner);
  }
}

/**
 * What the server honours of conditional requests as the core's state machine: how a push's
 * writes and deletes are made conditional, or what `doctor --probe-server` reports.
 */
export class ConditionsRun
  extends CoreRun<ConditionsAction, ConditionsEvent, NoReplies, ConditionsResult> {
  readonly #inner: wasm.ConditionsRun;

  /** A run naming its probe objects from `planner`'s binding, for `request`, at `now`. */
  constructor(planner: Planner, request: ConditionsRequest, now: Date) {
    const inner = core(() => new wasm.ConditionsRun(request, now.getTime()));
    super(inner, planner);
    this.#inner = inner;
  }

  /** What is known of the server so far, a refusal or a failed request included. */
  get known(): ConditionsKnown {
    return core(() => this.#inner.known);
  }
}

/**
 * One upload of a namespace's catalog export as the core's state machine: skipped, held back,
 * written on the copy a HEAD saw, or a conflict.
 */
export class CatalogExportRun
  extends CoreRun<CatalogExportAction, CatalogExportEvent, NoReplies, CatalogExportResult> {
  /** A run for `request`. */
  constructor(request: CatalogExportRequest) {
    super(core(() => new wasm.CatalogExportRun(request)));
  }
}

/**
 * Moving the bound tree's index to the v2 shard-first layout as the core's state machine: on
 * v2 already, moved, or lost to another move.
 */
export class ShardMoveRun
  extends CoreRun<ShardMoveAction, ShardMoveEvent, NoReplies, ShardMoveResult> {
  /** A move at `now` (recorded in the monolith marked as moved). */
  constructor(now: Date) {
    super(core(() => new wasm.ShardMoveRun(now)));
  }
}

/**
 * Writing the planner's index cut into shards as the core's state machine: the v1 mirror of
 * what the recorded push touched, or a v2 set (a migration's, a rebuild's) with every write
 * conditional on the copy read, the meta last.
 */
export class ShardWriteRun
  extends CoreRun<ShardWriteAction, ShardWriteEvent, NoReplies, ShardWriteResult> {
  /** A run over `planner`'s index for `request`. */
  constructor(planner: Planner, request: ShardWriteRequest) {
    super(core(() => new wasm.ShardWriteRun(request)), planner);
  }
}

/**
 * The datastore lock as the core's state machine: taking it (waiting for a live holder, taking
 * over a stale one), refreshing its lease, releasing it.
 */
export class LockRun extends CoreRun<LockAction, LockEvent, NoReplies, LockResult> {
  /** A run for `request`. */
  constructor(request: LockRequest) {
    super(core(() => new wasm.LockRun(request)));
  }
}
