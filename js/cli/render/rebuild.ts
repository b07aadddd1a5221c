/**
 * The human report of a `rebuild-index`.
 *
 * @module
 */
import type { RebuildReport } from "../../core.ts";
import type { RebuildOutcome } from "../outcome.ts";

/** Lines describing a rebuild's report: counts, then each unsafe key and collision. */
function reportLines(rebuilt: RebuildReport): string[] {
  return [
    `Rebuild from a listing: ${rebuilt.objectsSeen} objects seen, ${rebuilt.kept} kept (${rebuilt.bytesKept} bytes); ` +
    `skipped ${rebuilt.skippedInternal} internal, ${rebuilt.skippedForeign} in other namespaces' folders, ` +
    `${rebuilt.skippedOutsideNamespace} outside the namespace, ${rebuilt.skippedUnsafe} unsafe, ` +
    `${rebuilt.skippedFolderMarkers} folder markers (empty keys ending in /, nothing to sync).`,
    ...rebuilt.unsafeExamples.map((u) => `  unsafe key ${JSON.stringify(u.key)} [${u.code}]`),
    ...rebuilt.collisions.map((c) => `  collision (${c.kind}): ${c.paths.join(", ")}`),
  ];
}

/** The rebuild, the index as found, what happened to it, and unsafe keys left out (v1). */
export function rebuildLines(outcome: RebuildOutcome): string[] {
  return outcome.layout === "v1" ? v1Lines(outcome) : v2Lines(outcome);
}

function v1Lines({ report, existing, step, key }: RebuildOutcome): string[] {
  const lines = [...reportLines(report), `The remote index ${key} is ${existing}.`];
  lines.push(
    step === "dry-run"
      ? "Dry run: nothing written. Re-run with --apply to publish this index."
      : step === "kept-existing"
      ? "Not published: the remote index exists and parses. Pass --force to replace it."
      : step === "published"
      ? `Published the rebuilt index (${report.kept} entries) to ${key}.`
      : "Not published: the remote index changed while rebuilding. Run the command again.",
  );
  if (report.skippedUnsafe > 0) {
    lines.push(
      `attention [unsafe-keys]: ${report.skippedUnsafe} bucket keys cannot be cache paths and were not indexed (listed above); rename them in the bucket`,
    );
  }
  return lines;
}

function v2Lines({ report, existing, step, key, commitSeq, problem }: RebuildOutcome): string[] {
  const seq = commitSeq ?? 0;
  return [
    ...reportLines(report),
    `The v2 shard index under ${key} (commitSeq ${seq}) is ${existing}` +
    (problem ? `: ${problem}.` : "."),
    step === "dry-run"
      ? "Dry run: nothing written. Re-run with --apply to publish these shards."
      : step === "kept-existing"
      ? "Not published: the shard index exists and reads. Pass --force to replace it."
      : step === "published"
      ? `Published the rebuilt shards (${report.kept} entries) and ${key} at commitSeq ${seq + 1}.`
      : "Not published: the shard index changed while rebuilding. Run the command again.",
  ];
}
