/**
 * The service's spans: each call runs in one named as the extension names its own, with the
 * namespace and what a push did as attributes. Apart from the service (`service.ts`) so that the
 * span names and attributes read in one place.
 *
 * @module
 */
import type { PushReport } from "../ops/push.ts";
import { annotate, ATTR, type Attributes, inSpan, type Span } from "../io/trace.ts";

/** Runs `work` in the span `s3-datastore <name>` (the extension's span names). */
export function traced<T>(name: string, attributes: Attributes, work: (span: Span) => Promise<T>) {
  return inSpan(`s3-datastore ${name}`, attributes, work);
}

/** The namespace attribute, when bound to one. */
export function namespaceAttr(namespace: string | undefined): Attributes {
  return namespace === undefined ? {} : { [ATTR.namespace]: namespace };
}

/** What a push did, on its span. */
export function annotatePush(span: Span, namespace: string | undefined, report: PushReport): void {
  annotate(span, () => ({
    ...namespaceAttr(namespace),
    [ATTR.filesPushed]: report.uploaded,
    [ATTR.filesDeleted]: report.deleted,
    [ATTR.shardsWritten]: report.shardsWritten,
  }));
}
