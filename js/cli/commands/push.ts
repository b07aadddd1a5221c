/**
 * `plan` and `push`: one planning path; `plan` (and `push --dry-run`) stop before any change,
 * `plan --out` saves the plan, `push --plan` applies a saved one only if nothing changed.
 *
 * @module
 */
import { describe } from "../../core/errors.ts";
import { push, type SavedPlan } from "../../ops/push.ts";
import { exitCodeOfRun } from "../exit_codes.ts";
import type { PushOutcome } from "../outcome.ts";
import { usageError } from "../spec.ts";
import { flag, nonNegative, percent, text } from "../values.ts";
import type { CommandInput } from "./run.ts";

/** Runs `plan`. */
export function runPlan(input: CommandInput): Promise<PushOutcome> {
  return planOrPush(input, true);
}

/** Runs `push`. */
export function runPush(input: CommandInput): Promise<PushOutcome> {
  return planOrPush(input, false);
}

async function planOrPush(
  { ctx, values, confirmDeletes }: CommandInput,
  planOnly: boolean,
): Promise<PushOutcome> {
  const maxDeletes = nonNegative(values, "max-deletes");
  const maxDeletePercent = percent(values, "max-delete-percent");
  const planFile = text(values, "plan");
  const out = planOnly ? text(values, "out") : undefined;
  const yes = flag(values, "yes");
  let expect: SavedPlan | undefined;
  if (planFile) {
    try {
      expect = JSON.parse(await Deno.readTextFile(planFile));
    } catch (error) {
      usageError(`cannot read the plan ${planFile}: ${describe(error)}`);
    }
    if (expect?.kind !== "s3sync-push-plan") {
      usageError(`${planFile} is not a saved s3sync plan`);
    }
  }
  const report = await push(ctx, {
    dryRun: planOnly || flag(values, "dry-run"),
    deleteMissing: flag(values, "delete-missing"),
    maxDeletes,
    maxDeletePercent,
    allowCatalogShrink: flag(values, "allow-catalog-shrink"),
    allowUnconditional: flag(values, "allow-unconditional"),
    expect,
    confirmDeletes: (plan) => yes ? Promise.resolve(true) : confirmDeletes(plan),
  });
  const plan = report.plan;
  if (out) {
    const saved: SavedPlan = {
      kind: "s3sync-push-plan",
      remoteIndexEtag: report.remoteIndexEtag,
      listingDigest: report.listingDigest,
      plan,
    };
    await Deno.writeTextFile(out, JSON.stringify(saved, null, 2) + "\n");
  }
  const code = exitCodeOfRun(report.failures.length > 0, plan.blocked.length > 0);
  return { kind: "push", code, report, savedTo: out };
}
