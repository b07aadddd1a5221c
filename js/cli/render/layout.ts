/**
 * The human reports of `doctor` and `repair`.
 *
 * @module
 */
import { EXIT } from "../exit_codes.ts";
import type { DoctorOutcome, RepairOutcome } from "../outcome.ts";
import type { ServerProbe } from "../../ops/push.ts";
import { count } from "./count.ts";

/** `healthy`, or each problem with its code; then what the server honours, when probed. */
export function doctorLines({ problems, notes, server }: DoctorOutcome): string[] {
  const lines = problems.length === 0 ? ["Doctor: healthy."] : [
    `Doctor: ${problems.length} problems.`,
    ...problems.map((p) => `  [${p.code}] ${p.message}`),
  ];
  lines.push(...notes.map((n) => `  note [${n.code}] ${n.message}`));
  if (server) lines.push(...serverLines(server));
  return lines;
}

/** What the server honours of conditional requests, and the window a HEAD compare leaves. */
function serverLines(server: ServerProbe): string[] {
  const trip = `${server.headRoundTripMs} ms`;
  if (!server.writes) {
    return [`Server: ignores conditional writes (a HEAD round trip takes ${trip} here).`];
  }
  return [
    server.deletes
      ? "Server: honours conditional writes and deletes (If-None-Match, If-Match): a concurrent writer's version is never overwritten or deleted."
      : "Server: honours conditional writes (If-None-Match, If-Match on PUT) but ignores If-Match on DELETE: " +
        `a delete is checked by a HEAD just before it, so another writer replacing that object within about one round trip (${trip} here) could lose it; see docs/reliability.md.`,
  ];
}

/** The repair plan, then (applied) what was done, refused or left, and what to run next. */
export function repairLines(
  { code, report, apply, refused, blocked }: RepairOutcome,
): string[] {
  const p = report.plan;
  const lines = [
    `Repair plan: ${
      count(p.summary.moveIntoNamespace)
    } root-level files moved into the namespace folder (the only copy), ` +
    `${count(p.summary.removeRedundant)} removed as byte-identical to the kept copy, ` +
    `${count(p.summary.backup)} moved to .s3sync-repair/backup/ (${
      p.summary.unproven
        ? `${count(p.summary.backup - p.summary.unproven)} differ from the kept copy, ${
          count(p.summary.unproven)
        } could not be proven equal: the index records no hash`
        : "a different copy is kept"
    })` +
    (p.removeTrees.length
      ? `; then the root-level trees ${p.removeTrees.join(", ")} are removed`
      : "") +
    ".",
    ...p.moveIntoNamespace.slice(0, 20).map((m) => `  move ${m.from} -> ${m.to} (the only copy)`),
    ...(p.moveIntoNamespace.length > 20
      ? [`  ... and ${count(p.moveIntoNamespace.length - 20)} more moves`]
      : []),
    ...p.backup.slice(0, 20).map((m) => `  back up ${m.from} -> ${m.to}`),
    ...(p.backup.length > 20 ? [`  ... and ${count(p.backup.length - 20)} more backups`] : []),
  ];
  if (!apply) {
    lines.push(
      "Nothing changed. Run `s3sync repair --apply` to carry it out (the bucket is never written).",
    );
    for (const r of refused) lines.push(`  refused ${r.item}: ${r.message}`);
    return lines;
  }
  if (report.resumed) lines.push("An interrupted repair was rolled forward.");
  const h = report.hydration;
  if (h) {
    lines.push(
      `Hydrated the namespace folder: ${
        count(h.downloaded)
      } downloaded, ${h.failures.length} failed (local files were never overwritten); ` +
        `${
          count(report.dedupedBackups)
        } backups proven identical to their downloaded copy removed.`,
    );
  }
  for (const r of refused.slice(0, 20)) lines.push(`  refused ${r.item}: ${r.message}`);
  const refusedTrees = new Set(report.refused.map((r) => r.item));
  for (const tree of report.leftTrees.filter((t) => !refusedTrees.has(t))) {
    lines.push(`  left ${tree}/: new files appeared in it; run \`s3sync repair --apply\` again`);
  }
  if (blocked) lines.push(`attention [${blocked.code}]: ${blocked.message}`);
  if (code === EXIT.ok) {
    lines.push(
      "Repaired. `s3sync doctor` should now be clean; `s3sync push` uploads the local work.",
    );
  }
  return lines;
}
