/**
 * Which function runs which command.
 *
 * @module
 */
import { runDoctor, runRepair } from "./layout.ts";
import { runLockRelease, runLockStatus } from "./lock.ts";
import { runMigrate } from "./migrate.ts";
import { runPull } from "./pull.ts";
import { runPlan, runPush } from "./push.ts";
import { runRebuildIndex } from "./rebuild_index.ts";
import { runMarkDeleted, runResolve } from "./resolve.ts";
import type { Command } from "./run.ts";

export type { Command, CommandInput } from "./run.ts";

/** The runner of each command, by its name in `spec.ts`. */
export const RUNNERS: Readonly<Record<string, Command>> = {
  "pull": runPull,
  "plan": runPlan,
  "push": runPush,
  "mark-deleted": runMarkDeleted,
  "resolve": runResolve,
  "rebuild-index": runRebuildIndex,
  "doctor": runDoctor,
  "lock status": runLockStatus,
  "lock release": runLockRelease,
  "repair": runRepair,
  "migrate": runMigrate,
};
