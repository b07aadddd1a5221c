/**
 * What the AWS SDK client of `S3Store` is set up with besides its settings: a logger that keeps
 * it quiet, and the middleware that traces each request as a span. Apart from the store
 * (`s3.ts`) because neither touches an object: they watch every request the same way.
 *
 * @module
 */
import type { S3Client } from "@aws-sdk/client-s3";
import { ATTR, recordFailure, tracer, tracingActive } from "./trace.ts";

/** A logger that keeps the SDK quiet (see the constructor). */
export const QUIET_LOGGER = {
  trace: () => {},
  debug: () => {},
  info: () => {},
  warn: () => {},
  error: () => {},
};

/**
 * One span per S3 request (`S3 getObject`, `S3 putObject`, ...; each attempt is its own, since
 * the engine, not the SDK, retries), with the extension's attributes: the system, the method, the
 * bucket, the key as the datastore names it (without the prefix), the HTTP status and the request
 * id, and on failure the error's name. A no-op when no tracer provider is registered.
 */
export function traceRequests(client: S3Client, bucket: string, prefix: string): void {
  client.middlewareStack.add((next, handlerContext) => (args) => {
    // Tracing off: the request goes straight on, with no span and no extra await.
    return tracingActive() ? traced(next, handlerContext, args) : next(args);
  }, { step: "initialize", name: "s3syncTrace" });

  async function traced<Out extends { output: unknown }>(
    next: (args: never) => Promise<Out>,
    handlerContext: unknown,
    args: { input: unknown },
  ): Promise<Out> {
    const command = String((handlerContext as { commandName?: string }).commandName ?? "");
    const method = command.replace(/Command$/, "").replace(/^./, (c) => c.toLowerCase());
    const span = tracer().startSpan(`S3 ${method}`);
    if (span.isRecording()) {
      const key = (args.input as { Key?: unknown }).Key;
      span.setAttributes({
        [ATTR.rpcSystem]: "aws-api",
        [ATTR.rpcService]: "S3",
        [ATTR.rpcMethod]: method,
        [ATTR.bucket]: bucket,
      });
      if (typeof key === "string") {
        span.setAttribute(
          ATTR.key,
          prefix && key.startsWith(`${prefix}/`) ? key.slice(prefix.length + 1) : key,
        );
      }
    }
    try {
      const out = await next(args as never);
      if (span.isRecording()) {
        const meta = (out.output as { $metadata?: { httpStatusCode?: number; requestId?: string } })
          .$metadata;
        if (meta?.httpStatusCode !== undefined) {
          span.setAttribute(ATTR.httpStatus, meta.httpStatusCode);
        }
        if (meta?.requestId) span.setAttribute(ATTR.requestId, meta.requestId);
      }
      return out;
    } catch (error) {
      if (span.isRecording()) {
        const meta = (error as { $metadata?: { httpStatusCode?: number; requestId?: string } })
          .$metadata;
        if (meta?.httpStatusCode !== undefined) {
          span.setAttribute(ATTR.httpStatus, meta.httpStatusCode);
        }
        if (meta?.requestId) span.setAttribute(ATTR.requestId, meta.requestId);
      }
      recordFailure(span, error);
      throw error;
    } finally {
      span.end();
    }
  }
}
