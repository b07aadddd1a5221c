/**
 * Turns what a command produced into what is printed: the human lines, or the one JSON object
 * of `--json` (whose shape scripts rely on), and an error in either form.
 *
 * @module
 */
import { printable } from "../core/printable.ts";
import type { Outcome } from "./outcome.ts";
import { doctorLines, repairLines } from "./render/layout.ts";
import { lockReleaseLines, lockStatusLines } from "./render/lock.ts";
import { migrateLines } from "./render/migrate.ts";
import { pullLines } from "./render/pull.ts";
import { pushLines } from "./render/push.ts";
import { rebuildLines } from "./render/rebuild.ts";
import { markDeletedLines, resolveLines } from "./render/resolve.ts";

export { describePlan } from "./render/push.ts";

/** The human report of `outcome`, one line each (for stdout). */
export function humanLines(outcome: Outcome): string[] {
  switch (outcome.kind) {
    case "pull":
      return pullLines(outcome);
    case "push":
      return pushLines(outcome);
    case "rebuild-index":
      return rebuildLines(outcome);
    case "migrate":
      return migrateLines(outcome);
    case "lock status":
      return lockStatusLines(outcome);
    case "lock release":
      return lockReleaseLines(outcome);
    case "doctor":
      return doctorLines(outcome);
    case "repair":
      return repairLines(outcome);
    case "mark-deleted":
      return markDeletedLines(outcome);
    case "resolve":
      return resolveLines(outcome);
  }
}

/** The fields of the `--json` object for `outcome` (the caller adds `command`). */
export function jsonFields(outcome: Outcome): Record<string, unknown> {
  switch (outcome.kind) {
    case "pull": {
      const { report, blocked } = outcome;
      const summary = {
        upload: 0,
        download: report.downloaded,
        delete: 0,
        missing: report.notFound.length,
        blocked,
      };
      return { summary, warnings: report.warnings ?? [], report };
    }
    case "push": {
      const { report } = outcome;
      const plan = report.plan;
      const summary = {
        upload: report.dryRun ? plan.summary.upload : report.uploaded,
        download: 0,
        delete: report.dryRun ? plan.summary.delete : report.deleted,
        missing: plan.summary.missing,
        blocked: plan.blocked,
      };
      return {
        summary,
        warnings: report.warnings ?? [],
        report: { ...report, plan: undefined },
        plan,
      };
    }
    case "rebuild-index": {
      const { report, layout, existing, step } = outcome;
      return { report, layout, existing, published: step === "published" };
    }
    case "migrate":
      return { ...outcome.report };
    case "lock status": {
      const { found } = outcome;
      if (!found) return { lock: null };
      return { lock: found.body ?? null, ageMs: found.ageMs, stale: found.state === "stale" };
    }
    case "lock release":
      return { released: outcome.released };
    case "doctor":
      return outcome.server
        ? { problems: outcome.problems, notes: outcome.notes, server: outcome.server }
        : { problems: outcome.problems, notes: outcome.notes };
    case "repair": {
      const { report, apply, refused } = outcome;
      if (!apply) return { plan: report.plan, applied: false, refused: report.refused };
      return {
        plan: report.plan,
        applied: true,
        resumed: report.resumed,
        hydration: report.hydration,
        leftTrees: report.leftTrees,
        refused,
      };
    }
    case "mark-deleted":
      return { recorded: outcome.recorded };
    case "resolve": {
      const { keep, report, failures, blocked } = outcome;
      return {
        keep,
        restored: report.restored,
        pushed: report.pushed?.uploaded ?? 0,
        removed: report.removed,
        stillInConflict: report.stillInConflict,
        unknown: report.unknown,
        failures,
        blocked,
      };
    }
  }
}

/**
 * Prints `outcome`: one JSON object on stdout with `--json`, else the human lines.
 *
 * @param command the command word as typed (`lock` for its actions), first in the JSON
 */
export function printOutcome(command: string, outcome: Outcome, json: boolean): void {
  if (json) console.log(JSON.stringify({ command, ...jsonFields(outcome) }));
  else for (const line of humanLines(outcome)) console.log(printable(line));
}

/**
 * Prints an error: `{command, error: {code, message}}` on stdout with `--json`, else one line
 * on stderr, followed by `usage` for a usage error.
 */
export function printError(
  command: string | undefined,
  error: { code: string; message: string },
  json: boolean,
  usage?: string,
): void {
  if (json) {
    console.log(JSON.stringify({ command, error }));
  } else {
    console.error(`s3sync: error [${error.code}]: ${printable(error.message, true)}`);
    if (error.code === "usage" && usage) console.error(`\n${usage}`);
  }
}
