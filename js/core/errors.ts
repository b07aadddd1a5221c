/**
 * The one error type of the shim. Every failure a caller can act on carries a stable `code`
 * (the same codes the Rust core uses, plus the shim's own I/O codes) and a lowercase, specific
 * message. Core errors arrive from WASM as plain `Error`s with a `code` property and are
 * wrapped here, at one point.
 *
 * @module
 */

import { isSyncErrorCode, type SyncErrorCode } from "./codes.ts";
import { classifyStoreFailure, isStoreFailureCode, type StoreTarget } from "./store_errors.ts";

export type { SyncErrorCode } from "./codes.ts";

/** An error with a stable machine-readable code. */
export class SyncError extends Error {
  /** Stable code, e.g. `index-corrupt`, `path-dot-segment`, `download-failed`. */
  readonly code: SyncErrorCode;
  /** Extra structured detail for `--json` output (per-file failures, reports). */
  readonly details?: unknown;

  /**
   * @param code stable code
   * @param message lowercase, specific message
   * @param options `cause` and structured `details`
   */
  constructor(
    code: SyncErrorCode,
    message: string,
    options: { cause?: unknown; details?: unknown } = {},
  ) {
    super(message, { cause: options.cause });
    this.name = "SyncError";
    this.code = code;
    this.details = options.details;
  }
}

/**
 * The error a cancelled operation rejects with: a {@link SyncError} with code `aborted` whose
 * `name` is `AbortError`, the name swamp core (and `fetch`, and the extension) use for it.
 *
 * @param reason the signal's reason, kept as the cause
 */
export function abortError(reason?: unknown): SyncError {
  // An abort that says why (the CLI's on SIGINT/SIGTERM says what stays) keeps its words.
  const message = reason instanceof SyncError && reason.code === "aborted"
    ? reason.message
    : "the operation was aborted";
  const error = new SyncError("aborted", message, { cause: reason });
  error.name = "AbortError";
  return error;
}

/** True when `error` is a cancellation (ours, the platform's, or the SDK's). */
export function isAbort(error: unknown): boolean {
  return error instanceof Error && (error.name === "AbortError" ||
    (error instanceof SyncError && error.code === "aborted"));
}

/**
 * Wraps anything thrown by the WASM core into a {@link SyncError}, keeping its code.
 *
 * @param error what the core threw
 * @returns the same failure as a `SyncError`
 */
export function fromCore(error: unknown): SyncError {
  if (error instanceof SyncError) return error;
  if (error instanceof Error) {
    const code = (error as Error & { code?: unknown }).code;
    // A code neither side declared would be a drift between the core and `codes.ts` (a test
    // checks they agree): it still fails, as `core-error`, never as an unknown code.
    return new SyncError(isSyncErrorCode(code) ? code : "core-error", error.message, {
      cause: error,
    });
  }
  return new SyncError("core-error", String(error));
}

/**
 * Calls into the core, turning its errors into {@link SyncError}s.
 *
 * @param call the core call
 * @returns what the call returns
 */
export function core<T>(call: () => T): T {
  try {
    return call();
  } catch (error) {
    throw fromCore(error);
  }
}

/**
 * The functions `names` of `module`, each called through {@link core}: the same signatures and
 * generated docs, a core error arriving as a {@link SyncError}. This is how the core's free
 * functions reach the shim without a hand-written wrapper each (loro-wasm's `decorateMethods`).
 */
export function throughCore<
  M extends { [K in N]: (...args: never[]) => unknown },
  N extends keyof M,
>(module: M, names: readonly N[]): Pick<M, N> {
  const out = {} as Pick<M, N>;
  for (const name of names) {
    const call = module[name] as unknown as (...args: unknown[]) => unknown;
    out[name] = ((...args: unknown[]) => core(() => call(...args))) as unknown as M[N];
  }
  return out;
}

/**
 * The class `base` the core exports, with its constructor, every method and every getter called
 * through {@link core}: the generated class itself (signatures, docs, `using`), a core error
 * arriving as a {@link SyncError}. `instanceof` holds for both, so the core accepts an instance
 * wherever it takes the class.
 */
// deno-lint-ignore no-explicit-any
export function throughCoreClass<C extends new (...args: any[]) => object>(base: C): C {
  const wrapped = class extends base {
    // `super` inside `try` is legal and runs on every path that returns; the rule does not see
    // it there. Every path that does not call it throws.
    // deno-lint-ignore no-explicit-any constructor-super
    constructor(...args: any[]) {
      try {
        super(...args);
      } catch (error) {
        throw fromCore(error);
      }
    }
  };
  for (const name of Object.getOwnPropertyNames(base.prototype)) {
    const own = Object.getOwnPropertyDescriptor(base.prototype, name)!;
    if (name === "constructor" || name === "free") continue;
    const through = (fn: (...args: unknown[]) => unknown) =>
      function (this: unknown, ...args: unknown[]) {
        return core(() => fn.apply(this, args));
      };
    Object.defineProperty(
      wrapped.prototype,
      name,
      own.get ? { ...own, get: through(own.get) } : { ...own, value: through(own.value) },
    );
  }
  Object.defineProperty(wrapped, "name", { value: base.name });
  return wrapped;
}

/** A short description of any thrown value, for messages and logs. */
export function describe(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as Error & { code?: unknown }).code;
    return typeof code === "string" && !error.message.includes(code)
      ? `${code}: ${error.message}`
      : `${error.name === "Error" ? "" : error.name + ": "}${error.message}`;
  }
  return String(error);
}

/**
 * The store failure (bad credentials, no such bucket, access denied, the endpoint out of
 * reach...) `error` is, as a {@link SyncError} saying what to do; undefined when it is none.
 * A `SyncError` that already carries such a code is returned as it is.
 *
 * @param error what a request threw
 * @param target the bucket and endpoint, for the message
 */
export function storeFailure(error: unknown, target: StoreTarget = {}): SyncError | undefined {
  if (error instanceof SyncError) return isStoreFailureCode(error.code) ? error : undefined;
  const failure = classifyStoreFailure(error, target);
  return failure && new SyncError(failure.code, failure.message, { cause: error });
}

/**
 * The error for a failed read or write of the store: a `SyncError` passes through, a store
 * failure gets its own code, anything else is `s3-error` with `context` before its description.
 *
 * @param context what was being done, e.g. `cannot read the remote index K`
 */
export function asStoreError(error: unknown, context: string): SyncError {
  if (error instanceof SyncError) return error;
  return storeFailure(error) ??
    new SyncError("s3-error", `${context}: ${describe(error)}`, { cause: error });
}

/**
 * Gives any failure that escaped the engine a stable code: `SyncError`s pass through, a store
 * failure gets its own code, anything else (an SDK or transport error that outlived its
 * retries) becomes `s3-error`.
 *
 * @param what the operation, for the message
 */
export function asSyncError(error: unknown, what: string): SyncError {
  return asStoreError(error, `${what} failed`);
}
