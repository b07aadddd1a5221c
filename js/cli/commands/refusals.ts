/**
 * Writes refused at a symlinked folder: a refusal that needs a person (exit 3), not a failure
 * (exit 1). Shared by the commands that write the cache.
 *
 * @module
 */
import { isSymlinkRefusal } from "../../io/cache_fs.ts";
import type { ItemFailure } from "../../io/engine.ts";
import type { Blocked } from "../outcome.ts";

/** The blocked entry for writes refused because a folder in their path is a symlink. */
export function symlinkRefusals(refused: ItemFailure[]): Blocked {
  const links = [
    ...new Set(refused.map((r) => /: (\S+) is a symlink/.exec(r.message)?.[1] ?? r.item)),
  ];
  return {
    code: "symlink-in-path",
    message:
      `${refused.length} files were not written or moved because a folder in their path is a symlink (${
        links.slice(0, 5).join(", ")
      }); nothing is written through one. Replace it with a real folder (see \`s3sync doctor\`), then run the command again`,
  };
}

/** Failures that are not symlink refusals (those are reported as blocked, exit 3). */
export function realFailures(failures: ItemFailure[]): ItemFailure[] {
  return failures.filter((f) => !isSymlinkRefusal(f));
}
