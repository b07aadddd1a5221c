/**
 * The human reports of `resolve` and `mark-deleted`.
 *
 * @module
 */
import type { MarkDeletedOutcome, ResolveOutcome } from "../outcome.ts";

/** What was kept, put back or removed, failures, then what is blocked. */
export function resolveLines({ keep, report, failures, blocked }: ResolveOutcome): string[] {
  const lines: string[] = [];
  if (keep === "mine") {
    lines.push(
      `Resolve: ${report.restored.length} of your versions put back; pushed ${
        report.pushed?.uploaded ?? 0
      } files.`,
    );
  } else {
    lines.push(
      `Resolve: kept the bucket's version; ${report.removed.length} conflict copies removed.`,
    );
  }
  for (const copy of report.removed) lines.push(`  removed ${copy}`);
  for (const f of failures.slice(0, 20)) lines.push(`  failed ${f.item}: ${f.message}`);
  for (const b of blocked) lines.push(`attention [${b.code}]: ${b.message}`);
  return lines;
}

/** The tombstones recorded and what the next push does with them. */
export function markDeletedLines({ recorded }: MarkDeletedOutcome): string[] {
  return [
    `Recorded ${recorded.length} tombstones: ${recorded.join(", ")}.`,
    "The next push deletes their remote objects if the files are absent then (see `s3sync plan`).",
  ];
}
