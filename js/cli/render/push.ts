/**
 * The human report of a `plan` or `push`, and the plan as a person reads it (also shown before
 * asking to confirm deletes).
 *
 * @module
 */
import type { PushPlan } from "../../core/mod.ts";
import type { PushOutcome } from "../outcome.ts";
import { count } from "./count.ts";

/** The plan as a person reads it: one summary line, then the deletes and the guards. */
export function describePlan(plan: PushPlan, limit = 20): string[] {
  const s = plan.summary;
  const lines = [
    `Plan: ${count(s.upload)} to upload, ${count(s.delete)} to delete, ${
      count(s.missing)
    } missing (not deleted)` +
    (s.withheldDeletes ? `, ${count(s.withheldDeletes)} deletes withheld` : "") +
    (s.heldBack ? `, ${count(s.heldBack)} held back` : "") +
    // Older saved plans (`push --plan`) carry no `notPulled`.
    (s.notPulled ? `, ${count(s.notPulled)} not pulled here` : "") + ".",
  ];
  for (const u of plan.uploads.slice(0, limit)) {
    lines.push(`  upload ${u.rel} (${u.reason}, ${u.size} bytes)`);
  }
  if (plan.uploads.length > limit) {
    lines.push(`  ... and ${count(plan.uploads.length - limit)} more uploads`);
  }
  for (const d of plan.deletes.slice(0, limit)) {
    const why = d.evidence.kind === "tombstone"
      ? `tombstone ${d.evidence.path}`
      : "--delete-missing";
    lines.push(`  delete ${d.rel} (evidence: ${why})`);
  }
  if (plan.deletes.length > limit) {
    lines.push(`  ... and ${count(plan.deletes.length - limit)} more deletes`);
  }
  // Indexed files absent here without evidence: named, since a person must decide (restore,
  // pull, or delete with a tombstone); the JSON lists all of them.
  for (const rel of plan.missing.slice(0, limit)) lines.push(`  missing ${rel} (not deleted)`);
  if (plan.missing.length > limit) {
    lines.push(`  ... and ${count(plan.missing.length - limit)} more missing`);
  }
  // Older saved plans (`push --plan`) carry no `refused`.
  const refused = plan.refused ?? [];
  if (refused.length > 0) {
    lines.push(
      `  ${count(refused.length)} index entries have keys that cannot be safe cache paths; ` +
        `skipped and kept in the index (run \`s3sync doctor\`): ${
          refused.slice(0, 5).map((r) => `${JSON.stringify(r.rel)} [${r.code}]`).join(", ")
        }`,
    );
  }
  for (const b of plan.blocked) lines.push(`guard [${b.code}]: ${b.message}`);
  return lines;
}

/** ` (N of them not attempted)` when a pool stopped after failures in a row. */
function notAttempted(failures: { code: string }[]): string {
  const skipped = failures.filter((f) => f.code === "not-attempted").length;
  return skipped ? ` (${count(skipped)} of them not attempted: the endpoint kept failing)` : "";
}

/** The plan, then what the push did (or that nothing changed), then its failures. */
export function pushLines({ report, savedTo }: PushOutcome): string[] {
  const lines = describePlan(report.plan);
  if (report.dryRun) {
    lines.push(savedTo ? `Saved the plan to ${savedTo}.` : "Dry run: nothing changed.");
  } else {
    lines.push(
      `Push: ${count(report.uploaded)} uploaded (${report.bytes} bytes), ${
        count(report.deleted)
      } deleted, ` +
        `index ${report.published ? "published" : "unchanged"}${
          report.conflicts ? ` after ${report.conflicts} re-merges` : ""
        }${report.shardsWritten ? ` (${count(report.shardsWritten)} index shard files)` : ""}, ` +
        `${report.failures.length} failed${notAttempted(report.failures)}.`,
    );
  }
  for (const f of report.failures.slice(0, 20)) lines.push(`  failed ${f.item}: ${f.message}`);
  // What a person must know even when nothing was withheld; refused entries are in the plan.
  for (const w of report.warnings ?? []) {
    if (w.code !== "refused-entries") lines.push(`warning [${w.code}]: ${w.message}`);
  }
  return lines;
}
