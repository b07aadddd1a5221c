/**
 * `pull`: hydrates the cache, and names everything it could not bring as blocked.
 *
 * @module
 */
import { isSymlinkRefusal } from "../../io/cache_fs.ts";
import { pull, type PullReport } from "../../ops/pull.ts";
import { exitCodeOfRun } from "../exit_codes.ts";
import type { Blocked, PullOutcome } from "../outcome.ts";
import { flag, nonNegative } from "../values.ts";
import type { CommandInput } from "./run.ts";
import { realFailures, symlinkRefusals } from "./refusals.ts";

/** Runs `pull`. */
export async function runPull({ ctx, values }: CommandInput): Promise<PullOutcome> {
  const maxMissingInARow = nonNegative(values, "max-missing");
  const report = await pull({ ...ctx, maxMissingInARow }, {
    metadataOnly: flag(values, "metadata-only"),
    verify: flag(values, "verify"),
  });
  const blocked = blockedOfPull(report);
  const code = exitCodeOfRun(realFailures(report.failures).length > 0, blocked.length > 0);
  return { kind: "pull", code, report, blocked };
}

/**
 * What a pull left for a person: its conflict and what else the core named (a mixed layout,
 * unsafe keys, refused entries), then folders refused at a symlink.
 */
function blockedOfPull(report: PullReport): Blocked[] {
  const blocked: Blocked[] = [...(report.conflict ? [report.conflict] : []), ...report.attention];
  const linked = report.failures.filter(isSymlinkRefusal);
  if (linked.length > 0) blocked.push(symlinkRefusals(linked));
  return blocked;
}
