/**
 * `resolve` and `mark-deleted`: the two commands that record a person's decision about
 * particular files.
 *
 * @module
 */
import { markDirty } from "../../ops/dirty.ts";
import { SyncError } from "../../core/errors.ts";
import { type Keep, resolve } from "../../ops/resolve.ts";
import { EXIT, exitCodeOfRun } from "../exit_codes.ts";
import type { Blocked, MarkDeletedOutcome, ResolveOutcome } from "../outcome.ts";
import { text } from "../values.ts";
import type { CommandInput } from "./run.ts";

/** Runs `resolve --keep mine|theirs [REL...]` (the flag was checked while parsing). */
export async function runResolve({ ctx, values, args }: CommandInput): Promise<ResolveOutcome> {
  const keep = text(values, "keep") as Keep;
  const report = await resolve(ctx, keep, args);
  const blocked: Blocked[] = [];
  if (report.stillInConflict.length > 0) {
    blocked.push({
      code: "conflict",
      message: `${report.stillInConflict.length} files changed in the bucket again meanwhile (${
        report.stillInConflict.slice(0, 5).join(", ")
      }); your copies are kept: run the same resolve again`,
    });
  }
  if (report.unknown.length > 0) {
    blocked.push({
      code: "no-conflict-copy",
      message: `${report.unknown.length} files have no conflict copy in .s3sync-conflicts/ (${
        report.unknown.slice(0, 5).join(", ")
      }): nothing to resolve there`,
    });
  }
  const failures = report.pushed?.failures ?? [];
  const code = exitCodeOfRun(failures.length > 0, blocked.length > 0);
  return { kind: "resolve", code, keep, report, failures, blocked };
}

/** Runs `mark-deleted REL...`: one tombstone each, or a `not-evidence` error. */
export async function runMarkDeleted({ ctx, args }: CommandInput): Promise<MarkDeletedOutcome> {
  const recorded: string[] = [];
  for (const path of args) {
    const { tombstone } = await markDirty(ctx.cache, ctx.namespace, path);
    if (tombstone === undefined) {
      throw new SyncError(
        "not-evidence",
        `${
          JSON.stringify(path)
        } is not a datastore path inside the bound tree, so it cannot mark a delete`,
      );
    }
    recorded.push(tombstone);
  }
  return { kind: "mark-deleted", code: EXIT.ok, recorded };
}
