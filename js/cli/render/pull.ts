/**
 * The human report of a `pull`.
 *
 * @module
 */
import { isSymlinkRefusal } from "../../io/cache_fs.ts";
import type { PullOutcome } from "../outcome.ts";

/** ` (N of them not attempted)` when the downloads stopped after failures in a row. */
function notAttempted(failures: { code: string }[]): string {
  const skipped = failures.filter((f) => f.code === "not-attempted").length;
  return skipped ? ` (${skipped} of them not attempted: the endpoint kept failing)` : "";
}

/** One summary line, the rebuild if there was one, failures, then what is blocked. */
export function pullLines({ report, blocked }: PullOutcome): string[] {
  const lines: string[] = [];
  if (report.noop) {
    lines.push(
      "Pull: nothing to do (the remote index is unchanged since the last verified pull; " +
        "`s3sync pull --verify` checks every file).",
    );
  } else {
    lines.push(
      `Pull: ${report.downloaded} downloaded (${report.bytes} bytes), ${
        report.plan?.summary.upToDate ?? 0
      } already current, ` +
        `${
          report.plan?.summary.lazy ?? 0
        } left remote, ${report.notFound.length} gone remotely (pruned), ` +
        `${report.failures.length} failed${notAttempted(report.failures)}.`,
    );
    if (report.rebuilt) {
      const r = report.rebuilt;
      lines.push(
        `Index rebuilt from a listing: ${r.kept} of ${r.objectsSeen} objects kept; skipped ${r.skippedInternal} internal, ` +
          `${
            r.skippedForeign + r.skippedOutsideNamespace
          } of other namespaces, ${r.skippedUnsafe} unsafe, ${r.skippedFolderMarkers} folder markers` +
          (r.published
            ? "; published."
            : r.adoptedPeerIndex
            ? "; another writer's index adopted."
            : "."),
      );
    }
  }
  for (const f of report.failures.slice(0, 20)) {
    lines.push(`  ${isSymlinkRefusal(f) ? "refused" : "failed"} ${f.item}: ${f.message}`);
  }
  if (report.failures.length > 20) {
    lines.push(`  ... and ${report.failures.length - 20} more failures`);
  }
  for (const b of blocked) lines.push(`attention [${b.code}]: ${b.message}`);
  // The rest of what a person must know (entries pruned); what needs a person is said above.
  const said = new Set(blocked.map((b) => b.code));
  for (const w of report.warnings ?? []) {
    if (!said.has(w.code)) lines.push(`warning [${w.code}]: ${w.message}`);
  }
  return lines;
}
