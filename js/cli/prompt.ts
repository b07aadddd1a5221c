/**
 * Asking a person on the terminal to confirm deletes.
 *
 * @module
 */
import type { PushPlan } from "../core/mod.ts";
import { printable } from "../core/printable.ts";
import { count } from "./render/count.ts";
import { describePlan } from "./render/push.ts";

async function askYesNo(question: string): Promise<boolean> {
  await Deno.stderr.write(new TextEncoder().encode(`${question} [y/N] `));
  const buffer = new Uint8Array(64);
  const n = await Deno.stdin.read(buffer);
  const answer = new TextDecoder().decode(buffer.subarray(0, n ?? 0)).trim().toLowerCase();
  return answer === "y" || answer === "yes";
}

/**
 * How deletes get confirmed without `--yes`: on a terminal (and not `--json`), the plan is shown
 * and the person asked; otherwise nobody can be asked, so the deletes are withheld.
 *
 * @param json whether `--json` was given
 */
export function deleteConfirmer(json: boolean): (plan: PushPlan) => Promise<boolean> {
  const interactive = !json && Deno.stdin.isTerminal() && Deno.stderr.isTerminal();
  return async (plan) => {
    if (!interactive) return false;
    for (const line of describePlan(plan)) console.error(printable(line));
    return await askYesNo(`Delete ${count(plan.deletes.length)} remote objects?`);
  };
}
