/**
 * The human report of a `migrate`.
 *
 * @module
 */
import type { MigrateConflict } from "../../core/mod.ts";
import type { MigrateOutcome } from "../outcome.ts";
import { count } from "./count.ts";

/** The plan, what was done (or that nothing changed), the conflicts, the failures. */
export function migrateLines(
  { report, apply, namespace, removeOriginals }: MigrateOutcome,
): string[] {
  const s = report.plan.summary;
  const lines = [
    `Migrate plan: ${count(s.soloObjects)} solo-layout objects; ${
      count(s.toCopy)
    } to copy into ${namespace}/, ` +
    `${count(s.verified)} already copied and verified, ${count(s.conflicts)} conflict${
      s.conflicts === 1 ? "" : "s"
    }; ${count(s.passedOver)} other keys left alone (other namespaces, bookkeeping).`,
  ];
  if (!apply) {
    lines.push(
      "Nothing changed. Run with --apply to copy (and later --remove-originals to remove verified originals).",
    );
  } else {
    lines.push(
      `Copied ${count(report.copied)}, verified ${count(report.verified)}, indexed ${
        count(report.indexed)
      } in ${namespace}/; ` +
        `removed ${count(report.removed)} originals; ${report.failures.length} failed.`,
    );
    if (!removeOriginals) {
      lines.push(
        "The originals are kept. Once you have checked the copies: --apply --remove-originals.",
      );
    }
    lines.push("Then move the cache: `s3sync repair --apply --namespace " + namespace + "`.");
  }
  lines.push(...conflictLines(report.conflicts));
  for (const f of report.failures.slice(0, 20)) lines.push(`  failed ${f.item}: ${f.message}`);
  return lines;
}

/** The conflicts of a migrate, each named, and how a person resolves them. */
function conflictLines(conflicts: MigrateConflict[]): string[] {
  if (conflicts.length === 0) return [];
  const [first, ...rest] = conflicts;
  const lines = [
    `${count(conflicts.length)} conflict${
      conflicts.length === 1 ? "" : "s"
    } kept: ${first.message}.`,
    ...rest.slice(0, 19).map((c) => `  conflict: ${c.message}.`),
  ];
  if (rest.length > 19) lines.push(`  … and ${count(rest.length - 19)} more (see --json).`);
  lines.push(
    "Nothing was overwritten and these originals stay. Resolve each by hand: keep the " +
      "namespaced object (then delete the solo original) or put the solo bytes there on " +
      "purpose; then run migrate again.",
  );
  return lines;
}
