/**
 * A push's object writes and deletes, each conditional on the version the plan read (see
 * `object_condition` in the core): the uploads, with the HEAD the core judges when the ETag
 * recorded is refused, and the deletes that go only while the bucket holds the version decided
 * against. Apart from the executor: this is the one place a push touches payload objects.
 *
 * @module
 */
import { sha256Hex } from "../io/hash.ts";
import {
  type Delete,
  judgeExisting,
  judgeLostCondition,
  type ObjectFacts,
  type Upload,
  type Uploaded,
} from "../core/mod.ts";
import type { SyncContext } from "../exec/context.ts";
import { DEFAULT_RETRY, runPool, withRetry } from "../io/engine.ts";
import { SyncError } from "../core/errors.ts";
import { hasExtras, type HeadResult, type WriteCondition } from "../io/store.ts";
import { hashFile, uploadFile } from "../exec/transfer.ts";
import type { ConditionalSupport } from "./push_conditions.ts";
import type { PushReport } from "./push_types.ts";

/** What a HEAD said, as the core's facts. */
function factsOf(head: HeadResult): ObjectFacts {
  return { exists: head.exists, size: head.size, etag: head.etag, sha256: head.sha256 };
}

/**
 * After a write lost its condition: true when the object holds exactly these bytes (an earlier
 * attempt landed and only its answer was lost, or a killed push uploaded it unindexed), as the
 * core judges from a HEAD (and, where the object records no hash, from its content).
 */
export async function ownBytesLanded(
  ctx: Pick<SyncContext, "store" | "retry" | "signal">,
  key: string,
  ours: { sha256: string; size: number },
): Promise<boolean> {
  const retry = ctx.retry ?? DEFAULT_RETRY;
  const head = await withRetry(() => ctx.store.headObject(key, ctx.signal), retry, ctx.signal);
  let verdict = judgeLostCondition(ours.sha256, ours.size, factsOf(head));
  if (verdict.verdict === "readContent") {
    const { data } = await withRetry(() => ctx.store.getObject(key, ctx.signal), retry, ctx.signal);
    const facts = { ...factsOf(head), size: data.length, sha256: await sha256Hex(data) };
    verdict = judgeLostCondition(ours.sha256, ours.size, facts);
  }
  return verdict.verdict === "settled";
}

/**
 * The condition of one upload, as the core judges it (see `object_condition`): create-only for a
 * new key; for a replacement, a HEAD judged against the version the plan read (read and hashed
 * when the object records no hash but has our size), then `If-Match` the ETag seen, or
 * create-only when the object is gone. `"settled"`: the bucket already holds these bytes;
 * `"conflict"`: another writer's version is there. Without If-Match (the extension's client)
 * the HEAD just taken is all there is: the write then goes unconditionally.
 */
async function writeCondition(
  ctx: SyncContext,
  u: Upload,
  ours: { sha256: string; size: number },
  conditions: ConditionalSupport,
): Promise<WriteCondition | "settled" | "conflict"> {
  if (u.expected === null) return null;
  const retry = ctx.retry ?? DEFAULT_RETRY;
  const head = await withRetry(
    () => ctx.store.headObject(u.remoteKey, ctx.signal),
    retry,
    ctx.signal,
  );
  let verdict = judgeExisting(u.expected, ours, factsOf(head));
  if (verdict.verdict === "readContent") {
    const { data } = await withRetry(
      () => ctx.store.getObject(u.remoteKey, ctx.signal),
      retry,
      ctx.signal,
    );
    const facts = { ...factsOf(head), size: data.length, sha256: await sha256Hex(data) };
    verdict = judgeExisting(u.expected, ours, facts);
  }
  switch (verdict.verdict) {
    case "proceed":
      return conditions.writes ? verdict.ifMatch ?? undefined : undefined;
    case "create":
      return null;
    case "settled":
      return "settled";
    default:
      return "conflict";
  }
}

/**
 * Deletes the object of `d` only while the bucket holds the version the delete was decided
 * against: the core judges a HEAD, and the DELETE then goes `If-Match` the ETag seen where the
 * server honours it. Returns false when another version is there (a conflict; nothing deleted);
 * true when deleted, or already gone.
 */
export async function deleteIfUnchanged(
  ctx: SyncContext,
  d: Delete,
  conditions: ConditionalSupport | null,
): Promise<boolean> {
  const retry = ctx.retry ?? DEFAULT_RETRY;
  const store = ctx.store;
  if (conditions === null) {
    await withRetry(() => store.deleteObject(d.remoteKey, ctx.signal), retry, ctx.signal);
    return true;
  }
  // The ETag recorded with the version: `If-Match` it, no HEAD first; a refusal (another
  // version there, or none) is judged from the HEAD below.
  const recorded = d.expected.etag;
  if (conditions.deletes && recorded && hasExtras(store)) {
    const deleted = await withRetry(
      () => store.deleteObjectIfMatch(d.remoteKey, recorded, ctx.signal),
      retry,
      ctx.signal,
    );
    if (deleted) return true;
  }
  const head = await withRetry(() => store.headObject(d.remoteKey, ctx.signal), retry, ctx.signal);
  const verdict = judgeExisting(d.expected, undefined, factsOf(head));
  if (verdict.verdict === "settled") return true;
  if (verdict.verdict !== "proceed") return false;
  const etag = verdict.ifMatch;
  if (conditions.deletes && etag !== null && hasExtras(store)) {
    return await withRetry(
      () => store.deleteObjectIfMatch(d.remoteKey, etag, ctx.signal),
      retry,
      ctx.signal,
    );
  }
  await withRetry(() => store.deleteObject(d.remoteKey, ctx.signal), retry, ctx.signal);
  return true;
}

/**
 * Uploads the plan's files, each conditional on what the plan read (see `object_condition` in
 * the core): a new key create-only; a replacement after a HEAD the core judges, `If-Match` the
 * ETag seen. Returns what landed, and the rels that found another writer's version (failures go
 * into the report).
 */
export async function upload(
  ctx: SyncContext,
  report: PushReport,
  uploads: Upload[],
  conditions: ConditionalSupport | null,
): Promise<{ uploaded: Uploaded[]; lost: string[] }> {
  const uploaded: Uploaded[] = [];
  const lost: string[] = [];
  report.failures.push(
    ...(await runPool(uploads, {
      concurrency: ctx.concurrency ?? 25,
      signal: ctx.signal,
      phase: "upload",
      onProgress: ctx.onProgress,
      name: (u) => u.rel,
      failureCode: "upload-failed",
      sizeOf: (u) => u.size,
    }, async (u, onBytes) => {
      // Hashed first (streamed), then sent from the file: the recorded SHA-256 is the bytes
      // sent as long as the file did not change in between, which its stat then tells.
      const before = await ctx.cache.stat(u.cachePath);
      const hashed = await hashFile(ctx.cache, u.cachePath);
      if (before === null || hashed === null) {
        throw new SyncError("upload-failed", "the file vanished after the walk");
      }
      const send = (condition: WriteCondition) =>
        uploadFile(ctx, u.remoteKey, u.cachePath, hashed.size, {
          condition,
          sha256: hashed.sha256,
        }, onBytes);
      // The entry records the ETag of the version it names: `If-Match` it, no HEAD first. The
      // server refuses a stale one, and the HEAD below then judges what is there.
      const recorded = conditions?.writes ? u.expected?.etag ?? undefined : undefined;
      let sent = recorded === undefined ? null : await send(recorded);
      if (sent === null) {
        const condition = conditions === null
          ? undefined
          : await writeCondition(ctx, u, hashed, conditions);
        if (condition === "conflict") {
          lost.push(u.rel);
          return;
        }
        if (condition !== "settled") {
          sent = await send(condition);
          if (sent === null && !(await ownBytesLanded(ctx, u.remoteKey, hashed))) {
            lost.push(u.rel);
            return;
          }
        }
      }
      const after = await ctx.cache.stat(u.cachePath);
      if (
        after === null || after.size !== hashed.size || after.size !== before.size ||
        after.mtimeMs !== before.mtimeMs
      ) {
        throw new SyncError(
          "upload-failed",
          "the file changed while it was uploaded; it is not indexed, push again",
        );
      }
      uploaded.push({
        rel: u.rel,
        size: hashed.size,
        mtimeMs: after.mtimeMs,
        sha256: hashed.sha256,
        etag: sent?.etag,
      });
      report.bytes += hashed.size;
    })),
  );
  report.uploaded += uploaded.length;
  return { uploaded, lost };
}
