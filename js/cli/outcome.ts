/**
 * What each command produced, as data: the reports of the library calls, what is blocked, and
 * the exit code. The commands build these; `render.ts` turns them into lines or JSON.
 *
 * @module
 */
import type { ItemFailure } from "../io/engine.ts";
import type { ExistingIndex, Problem, RebuildReport, RebuildStep } from "../core/mod.ts";
import type { LockBody } from "../exec/lock.ts";
import type { MigrateReport } from "../ops/migrate.ts";
import type { PullReport } from "../ops/pull.ts";
import type { PushReport, ServerProbe } from "../ops/push.ts";
import type { Note, RepairReport } from "../ops/repair.ts";
import type { Keep, ResolveReport } from "../ops/resolve.ts";
import type { ExitCode } from "./exit_codes.ts";

/** Something withheld or refused that a person must see (exit 3), by stable code. */
export interface Blocked {
  /** Stable code, e.g. `mixed-layout`. */
  code: string;
  /** What and which command fixes it. */
  message: string;
}

/** `pull`. */
export interface PullOutcome {
  kind: "pull";
  code: ExitCode;
  report: PullReport;
  blocked: Blocked[];
}

/** `plan` and `push`. */
export interface PushOutcome {
  kind: "push";
  code: ExitCode;
  report: PushReport;
  /** Where `plan --out` saved the plan. */
  savedTo?: string;
}

/** `rebuild-index`. */
export interface RebuildOutcome {
  kind: "rebuild-index";
  code: ExitCode;
  report: RebuildReport;
  /** `v1`: the monolith index; `v2`: the shards and `_index/_meta.json`. */
  layout: "v1" | "v2";
  /** The index as found before the rebuild. */
  existing: ExistingIndex;
  /** What became of the rebuild (the core's `RebuildRun` decides). */
  step: RebuildStep;
  /** The index key (v1) or the meta's key (v2). */
  key: string;
  /** v2: the `commitSeq` found (the published meta records the next). */
  commitSeq?: number;
  /** v2: why the shard index is corrupt. */
  problem?: string;
}

/** `migrate`. */
export interface MigrateOutcome {
  kind: "migrate";
  code: ExitCode;
  report: MigrateReport;
  /** Whether `--apply` was given. */
  apply: boolean;
  namespace?: string;
  removeOriginals: boolean;
}

/** `lock status`. */
export interface LockStatusOutcome {
  kind: "lock status";
  code: ExitCode;
  /** Null when no lock object exists. */
  found: null | {
    body?: LockBody;
    state: "held" | "stale" | "other";
    ageMs?: number;
    expiresInMs?: number;
    /** The body asks for a lease over an hour: an hour is what every reader honours. */
    ttlCapped?: boolean;
    /** The body is no lock: only `lock release --force unreadable` removes it. */
    unreadable?: boolean;
  };
}

/** `lock release`. */
export interface LockReleaseOutcome {
  kind: "lock release";
  code: ExitCode;
  released: boolean;
}

/** `doctor`. */
export interface DoctorOutcome {
  kind: "doctor";
  code: ExitCode;
  problems: Problem[];
  /** Facts worth knowing that are not problems (they never change the exit code). */
  notes: Note[];
  /** What the server honours of conditional requests (`--probe-server` only). */
  server?: ServerProbe;
}

/** `repair`. */
export interface RepairOutcome {
  kind: "repair";
  code: ExitCode;
  report: RepairReport;
  /** Whether `--apply` was given. */
  apply: boolean;
  /** Refused steps of the repair and of its hydration (the files stayed where they were). */
  refused: ItemFailure[];
  /** The symlink refusals as one blocked entry, when there are any (applied runs). */
  blocked?: Blocked;
}

/** `mark-deleted`. */
export interface MarkDeletedOutcome {
  kind: "mark-deleted";
  code: ExitCode;
  recorded: string[];
}

/** `resolve`. */
export interface ResolveOutcome {
  kind: "resolve";
  code: ExitCode;
  keep: Keep;
  report: ResolveReport;
  failures: ItemFailure[];
  blocked: Blocked[];
}

/** What any command produced. */
export type Outcome =
  | PullOutcome
  | PushOutcome
  | RebuildOutcome
  | MigrateOutcome
  | LockStatusOutcome
  | LockReleaseOutcome
  | DoctorOutcome
  | RepairOutcome
  | MarkDeletedOutcome
  | ResolveOutcome;
