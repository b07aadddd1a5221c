/**
 * What a command is given to run: the adapters and binding, its flags and arguments, and the
 * way to ask a person to confirm deletes.
 *
 * @module
 */
import type { PushPlan } from "../../core/mod.ts";
import type { SyncContext } from "../../exec/context.ts";
import type { FlagValues } from "../spec.ts";
import type { Outcome } from "../outcome.ts";

/** The input of one command. */
export interface CommandInput {
  /** Adapters and binding. */
  ctx: SyncContext;
  /** Its flags, already checked against the command's set. */
  values: FlagValues;
  /** Its arguments after the command words. */
  args: string[];
  /** Asks whether to delete what `plan` deletes (false when nobody can be asked). */
  confirmDeletes: (plan: PushPlan) => Promise<boolean>;
}

/** One command: does the work, returns what happened. */
export type Command = (input: CommandInput) => Promise<Outcome>;
