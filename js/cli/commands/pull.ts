/**
 * `pull`: hydrates the cache, and names everything it could not bring as blocked.
 *
 * @module
 */
import { isSymlinkRefusal } from "../../cache_fs.ts";
import { pull, type PullReport } from "../../pull.ts";
import { exitCodeOfRun } from "../exit_codes.ts";
import type { Blocked, PullOutcome } from "../outcome.ts";
import { flag } from "../values.ts";
import type { CommandInput } from "./run.ts";
import { realFailures, symlinkRefusals } from "./refusals.ts";

/** Runs `pull`. */
export async function runPull({ ctx, values }: CommandInput): Promise<PullOutcome> {
  const report = await pull(ctx, { metadataOnly: flag(values, "metadata-only") });
  const blocked = blockedOfPull(report);
  const code = exitCodeOfRun(realFailures(report.failures).length > 0, blocked.length > 0);
  return { kind: "pull", code, report, blocked };
}

/** What a pull left for a person: a conflict, a mixed layout, unsafe keys, refusals. */
function blockedOfPull(report: PullReport): Blocked[] {
  const blocked: Blocked[] = [];
  if (report.conflict) blocked.push(report.conflict);
  const layout = report.plan?.layout;
  if (layout && layout.rootLayoutTrees.length > 0) {
    blocked.push({
      code: "mixed-layout",
      message: `${layout.rootLayoutFiles} files sit in root-level data trees (${
        layout.rootLayoutTrees.join(", ")
      }) beside the namespace folder; run \`s3sync doctor\` to see them`,
    });
  }
  if (report.rebuilt && report.rebuilt.skippedUnsafe > 0) {
    const examples = report.rebuilt.unsafeExamples.slice(0, 5)
      .map((u) => `${JSON.stringify(u.key)} (${u.code})`).join(", ");
    blocked.push({
      code: "unsafe-keys",
      message:
        `${report.rebuilt.skippedUnsafe} bucket keys cannot be safe cache paths and were not indexed: ${examples}; rename them in the bucket`,
    });
  }
  const linked = report.failures.filter(isSymlinkRefusal);
  if (linked.length > 0) blocked.push(symlinkRefusals(linked));
  if (report.plan && report.plan.refused.length > 0) {
    const codes = [...new Set(report.plan.refused.map((r) => r.code))].join(", ");
    blocked.push({
      code: "refused-entries",
      message: `${report.plan.refused.length} index entries were not downloaded (${codes}): ${
        report.plan.refused.slice(0, 5).map((r) => JSON.stringify(r.rel)).join(", ")
      }`,
    });
  }
  return blocked;
}
