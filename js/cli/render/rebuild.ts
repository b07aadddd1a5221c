/**
 * The human report of a `rebuild-index`.
 *
 * @module
 */
import type { RebuildReport, RebuildStep } from "../../core/mod.ts";
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
  return [
    ...reportLines(report),
    `The remote index ${key} is ${existing}.`,
    stepLine(step, {
      dryRun: "Re-run with --apply to publish this index.",
      kept: "the remote index exists and parses",
      published: `Published the rebuilt index (${report.kept} entries) to ${key}.`,
      changed: "the remote index changed while rebuilding",
    }),
    ...unsafeLines(report),
  ];
}

function v2Lines({ report, existing, step, key, commitSeq, problem }: RebuildOutcome): string[] {
  const seq = commitSeq ?? 0;
  return [
    ...reportLines(report),
    `The v2 shard index under ${key} (commitSeq ${seq}) is ${existing}` +
    (problem ? `: ${problem}.` : "."),
    stepLine(step, {
      dryRun: "Re-run with --apply to publish these shards.",
      kept: "the shard index exists and reads",
      published: `Published the rebuilt shards (${report.kept} entries) and ${key} at commitSeq ${
        seq + 1
      }.`,
      changed: "the shard index changed while rebuilding",
    }),
    ...unsafeLines(report),
  ];
}

/** The line saying what became of the rebuild, in the words of its layout. */
function stepLine(
  step: RebuildStep,
  words: { dryRun: string; kept: string; published: string; changed: string },
): string {
  switch (step) {
    case "dry-run":
      return `Dry run: nothing written. ${words.dryRun}`;
    case "kept-existing":
      return `Not published: ${words.kept}. Pass --force to replace it.`;
    case "published":
      return words.published;
    case "lost-race":
      return `Not published: ${words.changed}. Run the command again.`;
    case "adopted-peer":
    case "unpublished":
      // A sync's outcomes; `rebuild-index` never ends so, but says so if it ever did.
      return `Not published (${step}).`;
  }
}

/** Objects left out of the index stay in the bucket where no pull finds them: say so. */
function unsafeLines(report: RebuildReport): string[] {
  return report.skippedUnsafe > 0
    ? [
      `attention [unsafe-keys]: ${report.skippedUnsafe} bucket keys cannot be cache paths and were not indexed (listed above); rename them in the bucket`,
    ]
    : [];
}
