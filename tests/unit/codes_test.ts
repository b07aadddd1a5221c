/**
 * The shim's code lists (`js/core/codes.ts`) are exactly the core's, kind by kind, and every code the
 * core can throw is one a `SyncError` may carry.
 */
import {
  CORE_ERROR_CODES,
  GUARD_CODES,
  isSyncErrorCode,
  PROBLEM_CODES,
  REFUSAL_CODES,
  SHIM_CODES,
} from "../../js/core/codes.ts";
import { codeLists, Planner } from "../../js/core/mod.ts";
import { SyncError } from "../../js/core/errors.ts";
import { assert, assertEquals } from "../harness/assert.ts";

Deno.test("the shim's code lists are the core's, kind by kind", () => {
  const lists = codeLists();
  const sorted = (list: readonly string[]) => [...list].sort();
  assertEquals(sorted(GUARD_CODES), lists.guard);
  assertEquals(sorted(PROBLEM_CODES), lists.problem);
  assertEquals(sorted(REFUSAL_CODES), lists.refusal);
  assertEquals(sorted(CORE_ERROR_CODES), lists.error);
  // The shim's own codes are not also the core's under another meaning.
  const core = new Set([...lists.guard, ...lists.problem, ...lists.refusal, ...lists.error]);
  const overlap = SHIM_CODES.filter((c) => core.has(c));
  assertEquals(overlap, []);
});

Deno.test("a core error keeps its code; an undeclared code is never passed through", () => {
  let thrown: unknown;
  try {
    new Planner("../escape");
  } catch (error) {
    thrown = error;
  }
  assert(thrown instanceof SyncError, String(thrown));
  assertEquals(thrown.code, "path-dot-segment");
  assert(isSyncErrorCode("conflict"));
  assert(!isSyncErrorCode("no-such-code"));
  assert(!isSyncErrorCode(42));
});
