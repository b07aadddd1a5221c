/**
 * What an operator sees of a run: OpenTelemetry spans, `SWAMP_S3_SYNC_TRACE` phase timings, and
 * the `SWAMP_S3_REQUEST_TIMEOUT_MS` knob, as the extension offers them, so a swamp dashboard or a
 * debugging session reads this service the way it reads the extension.
 *
 * Spans go through `@opentelemetry/api` under the extension's tracer name. Without a registered
 * `TracerProvider` (the default) no span is started at all ({@link tracingActive}, one check per
 * sync, phase or request), so tracing off adds no wrapper around the work; with one, attributes
 * are built only for spans that record.
 * Swamp registers its provider on the API's process-wide global, which every copy of the API of
 * the same major version shares: spans appear in swamp's traces without any wiring here.
 *
 * Nothing in this module decides anything about a sync; it only observes.
 *
 * @module
 */
// Swamp core bundles the extension with no config (`deno bundle --no-config`), so a bare
// specifier mapped in deno.json would not resolve there: this one import names the package
// inline, and the rest of js/ takes the API's types from here.
import {
  type Attributes,
  type Context,
  context,
  INVALID_SPAN_CONTEXT,
  type Span,
  SpanStatusCode,
  trace,
  type Tracer,
  // deno-lint-ignore no-import-prefix
} from "npm:@opentelemetry/api@1.9.0";
import { VERSION } from "../version.ts";

export type { Attributes, Span };

/** The tracer name: the extension's, so dashboards that group by it see both services alike. */
export const TRACER_NAME = "@swamp/s3-datastore";

/** Attribute names (OpenTelemetry's semantic conventions where one exists, else the extension's). */
export const ATTR = {
  rpcSystem: "rpc.system",
  rpcService: "rpc.service",
  rpcMethod: "rpc.method",
  bucket: "aws.s3.bucket",
  key: "aws.s3.key",
  requestId: "aws.request_id",
  httpStatus: "http.response.status_code",
  errorType: "error.type",
  lockKey: "lock.key",
  lockTimeoutMs: "lock.timeout_ms",
  lockTtlMs: "lock.ttl_ms",
  lockWaitMs: "lock.wait_duration_ms",
  lockContended: "lock.contended",
  lockHolder: "lock.holder",
  namespace: "datastore.namespace",
  filesPulled: "datastore.files_pulled",
  filesPushed: "datastore.files_pushed",
  filesDeleted: "datastore.files_deleted",
  fastPathHit: "datastore.fast_path_hit",
  file: "datastore.file",
  entries: "datastore.entries",
  shardsWritten: "datastore.shards_written",
  phase: "datastore.phase",
  namespaces: "datastore.namespaces",
  dryRun: "datastore.dry_run",
} as const;

/** The environment variable that turns phase timings on (any value but empty, `0`, `false`). */
export const SYNC_TRACE_ENV = "SWAMP_S3_SYNC_TRACE";
/** The environment variable that sets the per-request timeout (ms; wins over the option). */
export const REQUEST_TIMEOUT_ENV = "SWAMP_S3_REQUEST_TIMEOUT_MS";
/** The range a request timeout may take, in ms (the extension's: 1 s to 10 min). */
export const REQUEST_TIMEOUT_RANGE = { min: 1_000, max: 600_000 } as const;

/** The tracer every span of this package comes from. */
export function tracer(): Tracer {
  return trace.getTracer(TRACER_NAME, VERSION);
}

/**
 * False when no tracer provider is registered, so nothing would record: the API's global
 * provider is then a proxy with no delegate. (A global provider of another shape, say another
 * copy of the API, counts as registered: spans are then started and the SDK decides.)
 */
export function tracingActive(): boolean {
  const provider = trace.getTracerProvider() as {
    getDelegateTracer?: (name: string, version?: string) => Tracer | undefined;
  };
  if (typeof provider.getDelegateTracer !== "function") return true;
  return provider.getDelegateTracer(TRACER_NAME, VERSION) !== undefined;
}

/** The span handed to work when tracing is off: records nothing, costs nothing to end. */
const NOT_RECORDING: Span = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);

/** Reads an environment variable; `undefined` when unset or when `--allow-env` was not given. */
function env(name: string): string | undefined {
  try {
    return Deno.env.get(name);
  } catch {
    // No env permission: the knob is simply not set, as in the extension.
    return undefined;
  }
}

/** True when `SWAMP_S3_SYNC_TRACE` asks for phase timings. */
export function syncTraceEnabled(): boolean {
  const value = env(SYNC_TRACE_ENV);
  return !!value && value !== "0" && value.toLowerCase() !== "false";
}

/** What `SWAMP_S3_REQUEST_TIMEOUT_MS` says, read and checked. */
export type EnvTimeout =
  | { kind: "unset" }
  | { kind: "set"; ms: number }
  | { kind: "invalid"; raw: string };

/** Reads `SWAMP_S3_REQUEST_TIMEOUT_MS`: a whole number of ms within {@link REQUEST_TIMEOUT_RANGE}. */
export function envRequestTimeout(): EnvTimeout {
  const raw = env(REQUEST_TIMEOUT_ENV);
  if (raw === undefined || raw.trim() === "") return { kind: "unset" };
  const ms = Number(raw.trim());
  if (
    !Number.isInteger(ms) || ms < REQUEST_TIMEOUT_RANGE.min || ms > REQUEST_TIMEOUT_RANGE.max
  ) {
    return { kind: "invalid", raw };
  }
  return { kind: "set", ms };
}

/**
 * The request timeout a run uses: the environment's when valid (as in the extension, it wins, so
 * an operator can change it without touching the configuration), else `configured`. An invalid
 * value is ignored, as the extension ignores it, but said once through `warn`.
 */
export function requestTimeout(
  configured: number | undefined,
  warn: (line: string) => void,
): number | undefined {
  const fromEnv = envRequestTimeout();
  if (fromEnv.kind === "set") return fromEnv.ms;
  if (fromEnv.kind === "invalid" && !warnedInvalidTimeout) {
    warnedInvalidTimeout = true;
    warn(
      `${REQUEST_TIMEOUT_ENV}=${JSON.stringify(fromEnv.raw)} ignored: expected whole ms from ` +
        `${REQUEST_TIMEOUT_RANGE.min} to ${REQUEST_TIMEOUT_RANGE.max}`,
    );
  }
  return configured;
}
let warnedInvalidTimeout = false;

/** Marks `span` failed with `error`, as the extension's spans do. */
export function recordFailure(span: Span, error: unknown): void {
  if (!span.isRecording()) return;
  const message = error instanceof Error ? error.message : String(error);
  span.setStatus({ code: SpanStatusCode.ERROR, message });
  span.recordException(error instanceof Error ? error : new Error(message));
  const code = (error as { code?: unknown } | null)?.code;
  span.setAttribute(
    ATTR.errorType,
    typeof code === "string" ? code : error instanceof Error ? error.name : "Error",
  );
}

/**
 * Runs `work` inside an active span named `name`: children started meanwhile (the phases, each
 * S3 request) nest under it where the host installed a context manager. The span ends when
 * `work` settles; a throw marks it failed and is rethrown unchanged.
 */
export async function inSpan<T>(
  name: string,
  attributes: Attributes,
  work: (span: Span) => Promise<T>,
): Promise<T> {
  if (!tracingActive()) return await work(NOT_RECORDING);
  return await tracer().startActiveSpan(name, { attributes }, async (span) => {
    try {
      return await work(span);
    } catch (error) {
      recordFailure(span, error);
      throw error;
    } finally {
      span.end();
    }
  });
}

/** Sets attributes on `span` only when it records (nothing is built when tracing is off). */
export function annotate(span: Span, attributes: () => Attributes): void {
  if (span.isRecording()) span.setAttributes(attributes());
}

/**
 * The phases of one run, one at a time: each step of a run's machine is a phase, timed from the
 * moment the run asks for it to the moment it asks for the next. Each phase is a span (a child of
 * the span active when the run began) and, with `SWAMP_S3_SYNC_TRACE`, one line
 * `[s3-sync] <run>.<phase> <ms>ms [detail]`: two timestamps per phase, never one per file.
 */
export class PhaseClock implements Disposable {
  readonly #run: string;
  readonly #parent: Context;
  readonly #print: ((line: string) => void) | undefined;
  readonly #spans: boolean;
  #current: { name: string; span: Span; started: number; detail?: string } | undefined;

  /**
   * @param run the run's name (`pull`, `push`, ...), the prefix of every phase
   * @param sink where timing lines go (default `console.debug`, as the extension's); only used
   *   when `SWAMP_S3_SYNC_TRACE` is on
   */
  constructor(run: string, sink?: (line: string) => void) {
    this.#run = run;
    this.#spans = tracingActive();
    this.#parent = context.active();
    this.#print = syncTraceEnabled() ? (sink ?? ((line) => console.debug(line))) : undefined;
  }

  /** Ends the phase in progress, if any, and starts `phase`. */
  enter(phase: string): void {
    this.#end();
    if (!this.#spans && !this.#print) return;
    const name = `${this.#run}.${phase}`;
    const span = this.#spans
      ? tracer().startSpan(
        `s3-datastore ${name}`,
        { attributes: { [ATTR.phase]: name } },
        this.#parent,
      )
      : NOT_RECORDING;
    this.#current = { name, span, started: performance.now() };
  }

  /** A short detail for the phase in progress (counts), printed with its timing. */
  note(detail: string): void {
    if (this.#current) this.#current.detail = detail;
  }

  /** Ends the phase in progress as failed by `error`. */
  fail(error: unknown): void {
    if (this.#current) recordFailure(this.#current.span, error);
    this.#end();
  }

  /** Ends the phase in progress. */
  [Symbol.dispose](): void {
    this.#end();
  }

  #end(): void {
    const phase = this.#current;
    if (!phase) return;
    this.#current = undefined;
    phase.span.end();
    if (this.#print) {
      const ms = Math.round(performance.now() - phase.started);
      this.#print(`[s3-sync] ${phase.name} ${ms}ms${phase.detail ? ` ${phase.detail}` : ""}`);
    }
  }
}
