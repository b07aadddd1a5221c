/**
 * Builds what a command runs against from its flags: the S3 store, the cache, the binding, the
 * limits, progress and log output, and an abort signal wired to SIGINT and SIGTERM.
 *
 * @module
 */
import { DenoCacheFs } from "../io/cache_fs.ts";
import type { SyncContext } from "../exec/context.ts";
import { Planner } from "../core/mod.ts";
import { SyncError } from "../core/errors.ts";
import { printable } from "../core/printable.ts";
import { progressPrinter } from "../exec/progress.ts";
import { S3Store } from "../io/s3.ts";
import { requestTimeout } from "../io/trace.ts";
import type { FlagValues } from "./spec.ts";
import {
  bucketName,
  endpointUrl,
  flag,
  nonEmptyText,
  nonNegative,
  positiveInt,
  positiveNumber,
  text,
} from "./values.ts";

/** A context and how to let go of it. */
export interface Setup {
  /** What the command runs against. */
  ctx: SyncContext;
  /** Removes the signal handlers and closes the store's connections. */
  dispose(): void;
}

/**
 * Checks the flags shared by every command, then builds the context. Sends no request.
 *
 * @param values the parsed flags
 * @throws SyncError `usage` for a bad number, an empty namespace or an endpoint without a
 *   scheme; the core's code for a bad namespace or prefix; `invalid-bucket-name` for a bucket
 *   name no server can hold
 */
export function setUp(values: FlagValues): Setup {
  const json = flag(values, "json");
  const namespace = nonEmptyText(values, "namespace", "a solo (un-namespaced) datastore");
  const prefix = text(values, "prefix");
  const concurrency = positiveInt(values, "concurrency");
  const listPageSize = positiveInt(values, "page-size");
  const timeout = positiveNumber(values, "timeout");
  const maxIndexEntries = positiveInt(values, "max-index-entries");
  const lockWait = flag(values, "no-lock") ? undefined : nonNegative(values, "lock-wait") ?? 60;
  // Validate the binding before any request: a bad namespace is a usage error, not a fault.
  new Planner(namespace, prefix, maxIndexEntries).free();
  const bucket = bucketName(values);
  const endpoint = endpointUrl(values);
  const store = new S3Store({
    bucket,
    prefix,
    region: text(values, "region"),
    endpoint,
    forcePathStyle: flag(values, "force-path-style"),
    // The flag wins; without it, SWAMP_S3_REQUEST_TIMEOUT_MS as the extension reads it.
    timeoutMs: timeout === undefined
      ? requestTimeout(undefined, (line) => console.error(`s3sync: warning: ${printable(line)}`))
      : timeout * 1000,
  });
  const controller = new AbortController();
  const onSignal = () =>
    controller.abort(
      new SyncError(
        "aborted",
        "interrupted: what finished stays (downloads in place, uploads in the bucket, indexed " +
          "only once a push publishes); run the same command again to finish",
      ),
    );
  Deno.addSignalListener("SIGINT", onSignal);
  Deno.addSignalListener("SIGTERM", onSignal);
  const ctx: SyncContext = {
    store,
    cache: new DenoCacheFs(text(values, "cache") ?? "."),
    namespace,
    prefix,
    concurrency,
    listPageSize,
    signal: controller.signal,
    onProgress: json ? undefined : progressPrinter(),
    log: json ? undefined : (line) => console.error(`s3sync: ${printable(line)}`),
    // SWAMP_S3_SYNC_TRACE timings go to stderr: stdout may carry --json.
    traceSink: (line) => console.error(line),
    lock: lockWait === undefined ? false : { maxWaitMs: lockWait * 1000 },
    maxIndexEntries,
  };
  return {
    ctx,
    dispose() {
      Deno.removeSignalListener("SIGINT", onSignal);
      Deno.removeSignalListener("SIGTERM", onSignal);
      store.destroy();
    },
  };
}
