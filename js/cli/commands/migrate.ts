/**
 * `migrate [--apply] [--remove-originals]`: the bucket side of a solo → namespaced move.
 *
 * @module
 */
import { migrateRemote } from "../../ops/migrate.ts";
import { exitCodeOfRun } from "../exit_codes.ts";
import type { MigrateOutcome } from "../outcome.ts";
import { flag } from "../values.ts";
import type { CommandInput } from "./run.ts";

/** Runs `migrate` (`--remove-originals` without `--apply` was refused while parsing). */
export async function runMigrate({ ctx, values }: CommandInput): Promise<MigrateOutcome> {
  const apply = flag(values, "apply");
  const removeOriginals = flag(values, "remove-originals");
  const report = await migrateRemote(ctx, { apply, removeOriginals });
  const code = exitCodeOfRun(report.failures.length > 0, report.conflicts.length > 0);
  return { kind: "migrate", code, report, apply, namespace: ctx.namespace, removeOriginals };
}
