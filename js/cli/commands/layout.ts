/**
 * `doctor` and `repair`: the cache's layout, checked and fixed (the bucket is never written).
 *
 * @module
 */
import { isSymlinkRefusal } from "../../io/cache_fs.ts";
import { probeServer } from "../../ops/push.ts";
import { doctor, repair } from "../../ops/repair.ts";
import { EXIT, exitCodeOfRun } from "../exit_codes.ts";
import type { DoctorOutcome, RepairOutcome } from "../outcome.ts";
import { flag } from "../values.ts";
import type { CommandInput } from "./run.ts";
import { realFailures, symlinkRefusals } from "./refusals.ts";

/**
 * Runs `doctor`: exit 3 when there is any problem. With `--probe-server` it also asks the
 * server what it honours of conditional requests (one probe object in the control folder,
 * removed afterwards); a server that ignores conditional writes is a problem, since push then
 * refuses to write without `--allow-unconditional`.
 */
export async function runDoctor({ ctx, values }: CommandInput): Promise<DoctorOutcome> {
  const { problems, notes } = await doctor(ctx);
  const server = flag(values, "probe-server") ? await probeServer(ctx) ?? undefined : undefined;
  if (server && !server.writes) {
    problems.push({
      code: "conditional-writes-unsupported",
      message:
        "this server ignores conditional writes (If-None-Match / If-Match on PUT), so push refuses to write: " +
        "a concurrent writer's objects could be silently overwritten. Use a server that honours them, or " +
        "`s3sync push --allow-unconditional` when you are the only writer",
    });
  }
  const code = problems.length ? EXIT.attention : EXIT.ok;
  return { kind: "doctor", code, problems, notes, server };
}

/** Runs `repair [--apply]`. */
export async function runRepair({ ctx, values }: CommandInput): Promise<RepairOutcome> {
  const apply = flag(values, "apply");
  const report = await repair(ctx, apply);
  if (!apply) {
    // The journal could not be read through a symlinked repair folder: the backups would be
    // refused too, so the person hears of it before applying.
    const code = report.refused.length ? EXIT.attention : EXIT.ok;
    return { kind: "repair", code, report, apply, refused: report.refused };
  }
  const h = report.hydration;
  // Refused steps of the repair and of its hydration: the files stayed where they were.
  const refused = [...report.refused, ...(h?.failures.filter(isSymlinkRefusal) ?? [])];
  const code = exitCodeOfRun(
    realFailures(h?.failures ?? []).length > 0,
    report.leftTrees.length > 0 || refused.length > 0,
  );
  const blocked = refused.length > 0 ? symlinkRefusals(refused) : undefined;
  return { kind: "repair", code, report, apply, refused, blocked };
}
