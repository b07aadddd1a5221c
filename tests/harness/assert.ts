/**
 * The few assertions the Deno tests use, on `node:assert` (JSR's `@std/assert` is out of reach
 * on these machines). Typed so TypeScript narrows after `assert`.
 *
 * @module
 */
import nodeAssert from "node:assert/strict";

/** Fails unless `condition` is truthy. */
export function assert(condition: unknown, message?: string): asserts condition {
  nodeAssert.ok(condition, message);
}

/** Fails unless `actual` deep-equals `expected`. */
export function assertEquals<T>(actual: T, expected: T, message?: string): void {
  nodeAssert.deepStrictEqual(actual, expected, message);
}

/**
 * Fails unless `fn` rejects (with an instance of `type`, when given); returns the error.
 *
 * @param fn the call expected to fail
 * @param type expected error class
 */
export async function assertRejects(
  fn: () => Promise<unknown>,
  // deno-lint-ignore no-explicit-any
  type?: new (...args: any[]) => Error,
): Promise<Error> {
  try {
    await fn();
  } catch (error) {
    if (type) nodeAssert.ok(error instanceof type, `expected ${type.name}, got ${error}`);
    return error as Error;
  }
  throw new nodeAssert.AssertionError({ message: "expected the call to reject" });
}

/** Fails unless `fn` throws; returns the error. */
export function assertThrows(fn: () => unknown): Error {
  try {
    fn();
  } catch (error) {
    return error as Error;
  }
  throw new nodeAssert.AssertionError({ message: "expected the call to throw" });
}
