/**
 * `s3sync`: the command-line front door. Parses flags, builds the adapters, runs one command,
 * prints a human report (or one JSON object with `--json`) and exits with the contract's code:
 * 0 done, 1 failed, 2 usage, 3 a guard withheld something or a problem needs a person.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { DenoCacheFs, isSymlinkRefusal } from "./cache_fs.ts";
import type { ItemFailure } from "./engine.ts";
import { lockKeyFor, Planner } from "./core.ts";
import type { SyncContext } from "./context.ts";
import { describeLock, forceRelease, inspectLock } from "./lock.ts";
import { describe, SyncError } from "./errors.ts";
import { pull, type PullReport } from "./pull.ts";
import { publishUnderLock, rebuildIndex, underPublishLock } from "./remote_index.ts";
import { resolve } from "./resolve.ts";
import { S3Store } from "./s3.ts";
import { markDirty } from "./dirty.ts";
import { doctor, repair } from "./repair.ts";
import { migrateRemote } from "./migrate.ts";
import { push, type SavedPlan } from "./push.ts";
import { findShardIndex, publishRebuiltShards, type ShardIndexFound } from "./shards.ts";
import type { MigrateConflict, PushPlan } from "./core.ts";
import { progressPrinter } from "./progress.ts";

/** Exit codes of the CLI contract. */
export const EXIT = { ok: 0, failed: 1, usage: 2, attention: 3 } as const;

const USAGE = `usage: s3sync <command> --bucket B --cache DIR [options]

commands:
  pull                 download what the remote index names into the cache
  plan                 show what a push would do (uploads, deletes and their evidence, guards)
  push                 upload new work, delete on evidence only, publish the index
  mark-deleted REL...  record that these files (or folders) were deleted on purpose
  resolve --keep mine|theirs [REL...]
                       settle files changed here and in the bucket (all with a conflict copy
                       when no REL is named): mine puts your kept copy back and pushes it,
                       theirs keeps the bucket's and drops your copy
  rebuild-index        list the bucket and rebuild the index (dry run; --apply publishes)
  doctor               find layout problems (exit 3 when there are any)
  lock status          show who holds the datastore lock, since when, and whether it is stale
  lock release --force NONCE  delete a stuck lock, only if it still carries NONCE
  repair               plan the layout repair (--apply carries it out; never writes the bucket)
  migrate              copy a solo-layout bucket into --namespace server-side (--apply; only to
                       absent keys: an existing different object is a conflict, kept, exit 3;
                       originals whose copies are verified and indexed are removed only with
                       --remove-originals)

common options:
  --bucket B           bucket name (required)
  --cache DIR          cache folder, e.g. ~/.swamp/repos/<repoId> (required)
  --prefix P           key prefix inside the bucket
  --namespace NS       bind to a namespace: remote {prefix}/{NS}/..., local {cache}/{NS}/...
  --endpoint URL       S3-compatible endpoint (credentials come from the standard AWS chain)
  --region R           region (default: AWS_REGION, else us-east-1)
  --force-path-style   path-style addressing (most S3-compatible servers need it)
  --concurrency N      transfers in flight (default 50)
  --page-size N        keys per listing request (default 1000)
  --json               print one JSON object on stdout
  --no-lock            do not take the datastore lock around publishing (single-writer buckets only)
  --lock-wait S        wait at most S seconds for the datastore lock (default 60)

pull options:
  --metadata-only      lazy hydration: leave data/**/raw bytes remote
plan / push options:
  --dry-run            (push) plan only, change nothing
  --yes                confirm deletes without asking (required for deletes without a terminal)
  --delete-missing     also delete files absent locally without a tombstone (guards still apply)
  --max-deletes N      allow up to N deletes (default 500)
  --max-delete-percent P  allow deletes up to P% of the index (default 25, above 10 deletes)
  --allow-catalog-shrink  let .catalog-export.json replace a much larger remote copy
  --out FILE           (plan) save the plan for \`push --plan FILE\`
  --plan FILE          (push) apply a saved plan, only if nothing changed since
  --allow-unconditional  publish even if the server ignores conditional writes (single writer only)
rebuild-index options:
  --apply              publish the rebuilt index (create-only; a corrupt index is replaced)
  --force              with --apply, replace an index that exists and parses

exit codes: 0 done, 1 failed, 2 usage, 3 a guard withheld something or a problem needs a person
`;

/** What one command produced. */
interface Outcome {
  code: number;
  json: Record<string, unknown>;
  lines: string[];
}

function usageError(message: string): never {
  throw new SyncError("usage", message);
}

function positiveInt(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) {
    usageError(`${flag} takes a whole number ≥ 1, not ${JSON.stringify(value)}`);
  }
  return n;
}

/**
 * Runs the CLI with `args`; returns the exit code (printing as it goes).
 *
 * @param args command-line arguments (without the program name)
 */
export async function main(args: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args,
      allowPositionals: true,
      strict: true,
      options: {
        bucket: { type: "string" },
        cache: { type: "string" },
        prefix: { type: "string" },
        namespace: { type: "string" },
        endpoint: { type: "string" },
        region: { type: "string" },
        "force-path-style": { type: "boolean" },
        concurrency: { type: "string" },
        "page-size": { type: "string" },
        json: { type: "boolean" },
        "metadata-only": { type: "boolean" },
        "dry-run": { type: "boolean" },
        yes: { type: "boolean" },
        "delete-missing": { type: "boolean" },
        "max-deletes": { type: "string" },
        "max-delete-percent": { type: "string" },
        "allow-catalog-shrink": { type: "boolean" },
        "allow-unconditional": { type: "boolean" },
        out: { type: "string" },
        plan: { type: "string" },
        "no-lock": { type: "boolean" },
        "remove-originals": { type: "boolean" },
        "lock-wait": { type: "string" },
        apply: { type: "boolean" },
        force: { type: "boolean" },
        keep: { type: "string" },
        help: { type: "boolean", short: "h" },
      },
    });
  } catch (error) {
    console.error(`s3sync: ${(error as Error).message}\n\n${USAGE}`);
    return EXIT.usage;
  }
  const { values, positionals } = parsed;
  if (values.help || positionals.length === 0) {
    (values.help ? console.log : console.error)(USAGE);
    return values.help ? EXIT.ok : EXIT.usage;
  }
  const json = values.json ?? false;
  const command = positionals[0];
  let store: S3Store | undefined;
  try {
    if (!COMMANDS.includes(command)) {
      usageError(`unknown command ${JSON.stringify(command)}`);
    }
    if (!values.bucket) usageError("--bucket is required");
    if (!values.cache && command !== "lock" && command !== "migrate") {
      usageError("--cache is required");
    }
    // Validate the binding before any request: a bad namespace is a usage error, not a fault.
    new Planner(values.namespace, values.prefix).free();
    store = new S3Store({
      bucket: values.bucket,
      prefix: values.prefix,
      region: values.region,
      endpoint: values.endpoint,
      forcePathStyle: values["force-path-style"],
    });
    const controller = new AbortController();
    const onSignal = () => controller.abort(new SyncError("aborted", "interrupted"));
    Deno.addSignalListener("SIGINT", onSignal);
    Deno.addSignalListener("SIGTERM", onSignal);
    const ctx: SyncContext = {
      store,
      cache: new DenoCacheFs(values.cache ?? "."),
      namespace: values.namespace,
      prefix: values.prefix,
      concurrency: positiveInt(values.concurrency, "--concurrency"),
      listPageSize: positiveInt(values["page-size"], "--page-size"),
      signal: controller.signal,
      onProgress: json ? undefined : progressPrinter(),
      log: json ? undefined : (line) => console.error(`s3sync: ${line}`),
      lock: values["no-lock"] ? false : {
        maxWaitMs: (nonNegative(values["lock-wait"], "--lock-wait") ?? 60) * 1000,
      },
    };
    let outcome: Outcome;
    try {
      switch (command) {
        case "pull":
          outcome = await runPull(ctx, values["metadata-only"] ?? false);
          break;
        case "rebuild-index":
          outcome = await runRebuild(ctx, values.apply ?? false, values.force ?? false);
          break;
        case "migrate":
          outcome = await runMigrate(
            ctx,
            values.apply ?? false,
            values["remove-originals"] ?? false,
          );
          break;
        case "lock":
          outcome = await runLock(ctx, positionals.slice(1), values.force ?? false);
          break;
        case "doctor":
          outcome = await runDoctor(ctx);
          break;
        case "repair":
          outcome = await runRepair(ctx, values.apply ?? false);
          break;
        case "mark-deleted":
          outcome = await runMarkDeleted(ctx, positionals.slice(1));
          break;
        case "resolve":
          outcome = await runResolve(ctx, values.keep, positionals.slice(1));
          break;
        default:
          outcome = await runPush(ctx, command === "plan", {
            dryRun: values["dry-run"] ?? false,
            yes: values.yes ?? false,
            interactive: !json && Deno.stdin.isTerminal() && Deno.stderr.isTerminal(),
            deleteMissing: values["delete-missing"] ?? false,
            maxDeletes: nonNegative(values["max-deletes"], "--max-deletes"),
            maxDeletePercent: percent(values["max-delete-percent"]),
            allowCatalogShrink: values["allow-catalog-shrink"] ?? false,
            allowUnconditional: values["allow-unconditional"] ?? false,
            out: values.out,
            planFile: values.plan,
          });
      }
    } finally {
      Deno.removeSignalListener("SIGINT", onSignal);
      Deno.removeSignalListener("SIGTERM", onSignal);
    }
    if (json) console.log(JSON.stringify({ command, ...outcome.json }));
    else for (const line of outcome.lines) console.log(line);
    return outcome.code;
  } catch (error) {
    const code = error instanceof SyncError ? error.code : "failed";
    const message = error instanceof SyncError ? error.message : describe(error);
    if (json) {
      console.log(JSON.stringify({ command, error: { code, message } }));
    } else {
      console.error(`s3sync: error [${code}]: ${message}`);
      if (code === "usage") console.error(`\n${USAGE}`);
    }
    // A write refused at a symlinked folder stopped the command before it could go on: it
    // needs a person, as the refusals collected during a run do.
    if (code === "plan-stale" || code === "symlink-in-path" || code === "migrate-v2-unsupported") {
      return EXIT.attention;
    }
    return code === "usage" || code === "not-evidence" || isPathCode(code)
      ? EXIT.usage
      : EXIT.failed;
  } finally {
    store?.destroy();
  }
}

const COMMANDS = [
  "pull",
  "plan",
  "push",
  "mark-deleted",
  "resolve",
  "rebuild-index",
  "doctor",
  "repair",
  "lock",
  "migrate",
];

function nonNegative(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) {
    usageError(`${flag} takes a whole number ≥ 0, not ${JSON.stringify(value)}`);
  }
  return n;
}

function percent(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0 || n > 100) {
    usageError(`--max-delete-percent takes a number from 0 to 100, not ${JSON.stringify(value)}`);
  }
  return n;
}

function isPathCode(code: string): boolean {
  return code.startsWith("namespace-") || code.startsWith("path-");
}

function blockedOfPull(report: PullReport): { code: string; message: string }[] {
  const blocked: { code: string; message: string }[] = [];
  if (report.conflict) blocked.push(report.conflict);
  const layout = report.plan?.layout;
  if (layout && layout.rootLayoutTrees.length > 0) {
    blocked.push({
      code: "mixed-layout",
      message: `${layout.rootLayoutFiles} files sit in root-level data trees (${
        layout.rootLayoutTrees.join(", ")
      }) beside the namespace folder; run \`s3sync doctor\` to see them`,
    });
  }
  if (report.rebuilt && report.rebuilt.skippedUnsafe > 0) {
    const examples = report.rebuilt.unsafeExamples.slice(0, 5)
      .map((u) => `${JSON.stringify(u.key)} (${u.code})`).join(", ");
    blocked.push({
      code: "unsafe-keys",
      message:
        `${report.rebuilt.skippedUnsafe} bucket keys cannot be safe cache paths and were not indexed: ${examples}; rename them in the bucket`,
    });
  }
  const linked = report.failures.filter(isSymlinkRefusal);
  if (linked.length > 0) blocked.push(symlinkRefusals(linked));
  if (report.plan && report.plan.refused.length > 0) {
    const codes = [...new Set(report.plan.refused.map((r) => r.code))].join(", ");
    blocked.push({
      code: "refused-entries",
      message: `${report.plan.refused.length} index entries were not downloaded (${codes}): ${
        report.plan.refused.slice(0, 5).map((r) => JSON.stringify(r.rel)).join(", ")
      }`,
    });
  }
  return blocked;
}

/**
 * The blocked entry for writes refused because a folder in their path is a symlink: a
 * refusal that needs a person (exit 3), not a failure (exit 1).
 */
function symlinkRefusals(refused: ItemFailure[]): { code: string; message: string } {
  const links = [
    ...new Set(refused.map((r) => /: (\S+) is a symlink/.exec(r.message)?.[1] ?? r.item)),
  ];
  return {
    code: "symlink-in-path",
    message:
      `${refused.length} files were not written or moved because a folder in their path is a symlink (${
        links.slice(0, 5).join(", ")
      }); nothing is written through one. Replace it with a real folder (see \`s3sync doctor\`), then run the command again`,
  };
}

/** Failures that are not symlink refusals (those are reported as blocked, exit 3). */
function realFailures(failures: ItemFailure[]): ItemFailure[] {
  return failures.filter((f) => !isSymlinkRefusal(f));
}

async function runPull(ctx: SyncContext, metadataOnly: boolean): Promise<Outcome> {
  const report = await pull(ctx, { metadataOnly });
  const blocked = blockedOfPull(report);
  const summary = {
    upload: 0,
    download: report.downloaded,
    delete: 0,
    missing: report.notFound.length,
    blocked,
  };
  const lines: string[] = [];
  if (report.noop) {
    lines.push("Pull: nothing to do (the remote index is unchanged since the last verified pull).");
  } else {
    lines.push(
      `Pull: ${report.downloaded} downloaded (${report.bytes} bytes), ${
        report.plan?.summary.upToDate ?? 0
      } already current, ` +
        `${
          report.plan?.summary.lazy ?? 0
        } left remote, ${report.notFound.length} gone remotely (pruned), ` +
        `${report.failures.length} failed.`,
    );
    if (report.rebuilt) {
      const r = report.rebuilt;
      lines.push(
        `Index rebuilt from a listing: ${r.kept} of ${r.objectsSeen} objects kept; skipped ${r.skippedInternal} internal, ` +
          `${
            r.skippedForeign + r.skippedOutsideNamespace
          } of other namespaces, ${r.skippedUnsafe} unsafe` +
          (r.published
            ? "; published."
            : r.adoptedPeerIndex
            ? "; another writer's index adopted."
            : "."),
      );
    }
  }
  for (const f of report.failures.slice(0, 20)) {
    lines.push(`  ${isSymlinkRefusal(f) ? "refused" : "failed"} ${f.item}: ${f.message}`);
  }
  if (report.failures.length > 20) {
    lines.push(`  ... and ${report.failures.length - 20} more failures`);
  }
  for (const b of blocked) lines.push(`attention [${b.code}]: ${b.message}`);
  const code = realFailures(report.failures).length > 0
    ? EXIT.failed
    : blocked.length > 0
    ? EXIT.attention
    : EXIT.ok;
  return { code, json: { summary, report }, lines };
}

async function runRebuild(ctx: SyncContext, apply: boolean, force: boolean): Promise<Outcome> {
  using planner = new Planner(ctx.namespace, ctx.prefix);
  // A repo whose `_meta.json` says version 2 reads only its shards: a rebuilt monolith
  // would be ignored there, so the shards and the meta are what gets rebuilt.
  const shardIndex = await findShardIndex(ctx, planner.listingPrefix);
  if (shardIndex) return await runRebuildShards(ctx, planner, apply, force, shardIndex);
  const head = await ctx.store.headObject(planner.remoteIndexKey, ctx.signal);
  let existing: "absent" | "valid" | "corrupt" = "absent";
  if (head.exists) {
    const current = await ctx.store.getObject(planner.remoteIndexKey, ctx.signal);
    try {
      using check = new Planner(ctx.namespace, ctx.prefix);
      check.loadIndex(current.data);
      existing = "valid";
    } catch {
      existing = "corrupt";
    }
  }
  const { rebuilt } = await rebuildIndex(ctx, planner, false);
  const lines = [
    ...rebuildLines(rebuilt),
    `The remote index ${planner.remoteIndexKey} is ${existing}.`,
  ];
  let published = false;
  let code: number = EXIT.ok;
  if (!apply) {
    lines.push("Dry run: nothing written. Re-run with --apply to publish this index.");
  } else if (existing === "valid" && !force) {
    lines.push("Not published: the remote index exists and parses. Pass --force to replace it.");
    code = EXIT.attention;
  } else {
    const body = planner.indexJson(false);
    const etag = existing === "absent" ? null : head.etag ?? null;
    const put = await publishUnderLock(ctx, planner.remoteIndexKey, body, etag, {
      retry: false,
    });
    published = put !== null;
    lines.push(
      published
        ? `Published the rebuilt index (${rebuilt.kept} entries) to ${planner.remoteIndexKey}.`
        : "Not published: the remote index changed while rebuilding. Run the command again.",
    );
    if (!published) code = EXIT.attention;
  }
  // Objects left out of the index stay in the bucket where no pull will find them: a person
  // must hear of it, as a pull that rebuilt says so too.
  if (rebuilt.skippedUnsafe > 0) {
    lines.push(
      `attention [unsafe-keys]: ${rebuilt.skippedUnsafe} bucket keys cannot be cache paths and were not indexed (listed above); rename them in the bucket`,
    );
    code = EXIT.attention;
  }
  return { code, json: { report: rebuilt, layout: "v1", existing, published }, lines };
}

/** Lines describing a rebuild's report. */
function rebuildLines(rebuilt: Awaited<ReturnType<typeof rebuildIndex>>["rebuilt"]): string[] {
  return [
    `Rebuild from a listing: ${rebuilt.objectsSeen} objects seen, ${rebuilt.kept} kept (${rebuilt.bytesKept} bytes); ` +
    `skipped ${rebuilt.skippedInternal} internal, ${rebuilt.skippedForeign} in other namespaces' folders, ` +
    `${rebuilt.skippedOutsideNamespace} outside the namespace, ${rebuilt.skippedUnsafe} unsafe.`,
    ...rebuilt.unsafeExamples.map((u) => `  unsafe key ${JSON.stringify(u.key)} [${u.code}]`),
    ...rebuilt.collisions.map((c) => `  collision (${c.kind}): ${c.paths.join(", ")}`),
  ];
}

/** `rebuild-index` on a v2 repo: rebuilds the shards and `_meta.json` (commitSeq + 1). */
async function runRebuildShards(
  ctx: SyncContext,
  planner: Planner,
  apply: boolean,
  force: boolean,
  found: ShardIndexFound,
): Promise<Outcome> {
  const { rebuilt } = await rebuildIndex(ctx, planner, false);
  const metaKey = `${planner.listingPrefix}_index/_meta.json`;
  const lines = [
    ...rebuildLines(rebuilt),
    `The v2 shard index under ${metaKey} (commitSeq ${found.commitSeq}) is ${found.state}` +
    (found.problem ? `: ${found.problem}.` : "."),
  ];
  let published = false;
  let code: number = EXIT.ok;
  if (!apply) {
    lines.push("Dry run: nothing written. Re-run with --apply to publish these shards.");
  } else if (found.state === "valid" && !force) {
    lines.push("Not published: the shard index exists and reads. Pass --force to replace it.");
    code = EXIT.attention;
  } else {
    published = await underPublishLock(ctx, () => publishRebuiltShards(ctx, planner, found));
    lines.push(
      published
        ? `Published the rebuilt shards (${rebuilt.kept} entries) and ${metaKey} at commitSeq ${
          found.commitSeq + 1
        }.`
        : "Not published: the shard index changed while rebuilding. Run the command again.",
    );
    if (!published) code = EXIT.attention;
  }
  return {
    code,
    json: { report: rebuilt, layout: "v2", existing: found.state, published },
    lines,
  };
}

interface PushFlags {
  dryRun: boolean;
  yes: boolean;
  interactive: boolean;
  deleteMissing: boolean;
  maxDeletes?: number;
  maxDeletePercent?: number;
  allowCatalogShrink: boolean;
  allowUnconditional: boolean;
  out?: string;
  planFile?: string;
}

const count = (n: number) => n.toLocaleString("en-US");

/** The plan as a person reads it: one summary line, then the deletes and the guards. */
export function describePlan(plan: PushPlan, limit = 20): string[] {
  const s = plan.summary;
  const lines = [
    `Plan: ${count(s.upload)} to upload, ${count(s.delete)} to delete, ${
      count(s.missing)
    } missing (not deleted)` +
    (s.withheldDeletes ? `, ${count(s.withheldDeletes)} deletes withheld` : "") +
    (s.heldBack ? `, ${count(s.heldBack)} held back` : "") + ".",
  ];
  for (const u of plan.uploads.slice(0, limit)) {
    lines.push(`  upload ${u.rel} (${u.reason}, ${u.size} bytes)`);
  }
  if (plan.uploads.length > limit) {
    lines.push(`  ... and ${count(plan.uploads.length - limit)} more uploads`);
  }
  for (const d of plan.deletes.slice(0, limit)) {
    const why = d.evidence.kind === "tombstone"
      ? `tombstone ${d.evidence.path}`
      : "--delete-missing";
    lines.push(`  delete ${d.rel} (evidence: ${why})`);
  }
  if (plan.deletes.length > limit) {
    lines.push(`  ... and ${count(plan.deletes.length - limit)} more deletes`);
  }
  // Older saved plans (`push --plan`) carry no `refused`.
  const refused = plan.refused ?? [];
  if (refused.length > 0) {
    lines.push(
      `  ${count(refused.length)} index entries have keys that cannot be safe cache paths; ` +
        `skipped and kept in the index (run \`s3sync doctor\`): ${
          refused.slice(0, 5).map((r) => `${JSON.stringify(r.rel)} [${r.code}]`).join(", ")
        }`,
    );
  }
  for (const b of plan.blocked) lines.push(`guard [${b.code}]: ${b.message}`);
  return lines;
}

async function askYesNo(question: string): Promise<boolean> {
  await Deno.stderr.write(new TextEncoder().encode(`${question} [y/N] `));
  const buffer = new Uint8Array(64);
  const n = await Deno.stdin.read(buffer);
  const answer = new TextDecoder().decode(buffer.subarray(0, n ?? 0)).trim().toLowerCase();
  return answer === "y" || answer === "yes";
}

async function runPush(ctx: SyncContext, planOnly: boolean, flags: PushFlags): Promise<Outcome> {
  let expect: SavedPlan | undefined;
  if (flags.planFile) {
    try {
      expect = JSON.parse(await Deno.readTextFile(flags.planFile));
    } catch (error) {
      usageError(`cannot read the plan ${flags.planFile}: ${describe(error)}`);
    }
    if (expect?.kind !== "s3sync-push-plan") {
      usageError(`${flags.planFile} is not a saved s3sync plan`);
    }
  }
  const report = await push(ctx, {
    dryRun: planOnly || flags.dryRun,
    deleteMissing: flags.deleteMissing,
    maxDeletes: flags.maxDeletes,
    maxDeletePercent: flags.maxDeletePercent,
    allowCatalogShrink: flags.allowCatalogShrink,
    allowUnconditional: flags.allowUnconditional,
    expect,
    confirmDeletes: async (plan) => {
      if (flags.yes) return true;
      if (!flags.interactive) return false;
      for (const line of describePlan(plan)) console.error(line);
      return await askYesNo(`Delete ${count(plan.deletes.length)} remote objects?`);
    },
  });
  const plan = report.plan;
  if (planOnly && flags.out) {
    const saved: SavedPlan = {
      kind: "s3sync-push-plan",
      remoteIndexEtag: report.remoteIndexEtag,
      listingDigest: report.listingDigest,
      plan,
    };
    await Deno.writeTextFile(flags.out, JSON.stringify(saved, null, 2) + "\n");
  }
  const summary = {
    upload: report.dryRun ? plan.summary.upload : report.uploaded,
    download: 0,
    delete: report.dryRun ? plan.summary.delete : report.deleted,
    missing: plan.summary.missing,
    blocked: plan.blocked,
  };
  const lines = describePlan(plan);
  if (report.dryRun) {
    lines.push(
      planOnly && flags.out ? `Saved the plan to ${flags.out}.` : "Dry run: nothing changed.",
    );
  } else {
    lines.push(
      `Push: ${count(report.uploaded)} uploaded (${report.bytes} bytes), ${
        count(report.deleted)
      } deleted, ` +
        `index ${report.published ? "published" : "unchanged"}${
          report.conflicts ? ` after ${report.conflicts} re-merges` : ""
        }, ` +
        `${report.failures.length} failed.`,
    );
  }
  for (const f of report.failures.slice(0, 20)) lines.push(`  failed ${f.item}: ${f.message}`);
  const code = report.failures.length > 0
    ? EXIT.failed
    : plan.blocked.length > 0
    ? EXIT.attention
    : EXIT.ok;
  return { code, json: { summary, report: { ...report, plan: undefined }, plan }, lines };
}

async function runMigrate(
  ctx: SyncContext,
  apply: boolean,
  removeOriginals: boolean,
): Promise<Outcome> {
  if (removeOriginals && !apply) usageError("--remove-originals needs --apply");
  const report = await migrateRemote(ctx, { apply, removeOriginals });
  const s = report.plan.summary;
  const lines = [
    `Migrate plan: ${count(s.soloObjects)} solo-layout objects; ${
      count(s.toCopy)
    } to copy into ${ctx.namespace}/, ` +
    `${count(s.verified)} already copied and verified, ${count(s.conflicts)} conflict${
      s.conflicts === 1 ? "" : "s"
    }; ${count(s.passedOver)} other keys left alone (other namespaces, bookkeeping).`,
  ];
  if (!apply) {
    lines.push(
      "Nothing changed. Run with --apply to copy (and later --remove-originals to remove verified originals).",
    );
  } else {
    lines.push(
      `Copied ${count(report.copied)}, verified ${count(report.verified)}, indexed ${
        count(report.indexed)
      } in ${ctx.namespace}/; ` +
        `removed ${count(report.removed)} originals; ${report.failures.length} failed.`,
    );
    if (!removeOriginals) {
      lines.push(
        "The originals are kept. Once you have checked the copies: --apply --remove-originals.",
      );
    }
    lines.push("Then move the cache: `s3sync repair --apply --namespace " + ctx.namespace + "`.");
  }
  lines.push(...conflictLines(report.conflicts));
  for (const f of report.failures.slice(0, 20)) lines.push(`  failed ${f.item}: ${f.message}`);
  const code = report.failures.length
    ? EXIT.failed
    : report.conflicts.length
    ? EXIT.attention
    : EXIT.ok;
  return { code, json: { ...report }, lines };
}

/** The conflicts of a migrate, each named, and how a person resolves them. */
function conflictLines(conflicts: MigrateConflict[]): string[] {
  if (conflicts.length === 0) return [];
  const [first, ...rest] = conflicts;
  const lines = [
    `${count(conflicts.length)} conflict${
      conflicts.length === 1 ? "" : "s"
    } kept: ${first.message}.`,
    ...rest.slice(0, 19).map((c) => `  conflict: ${c.message}.`),
  ];
  if (rest.length > 19) lines.push(`  … and ${count(rest.length - 19)} more (see --json).`);
  lines.push(
    "Nothing was overwritten and these originals stay. Resolve each by hand: keep the " +
      "namespaced object (then delete the solo original) or put the solo bytes there on " +
      "purpose; then run migrate again.",
  );
  return lines;
}

async function runLock(ctx: SyncContext, args: string[], force: boolean): Promise<Outcome> {
  const [action, nonce] = args;
  if (action === "status") {
    const current = await inspectLock(ctx.store, lockKeyFor(ctx.namespace), ctx.signal);
    if (!current) {
      return { code: EXIT.ok, json: { lock: null }, lines: ["No datastore lock is held."] };
    }
    const state = describeLock(current);
    const stale = state.state === "stale";
    const ageMs = state.state === "stale" || state.state === "held" ? state.ageMs : undefined;
    const b = current.body;
    return {
      code: EXIT.ok,
      json: { lock: b ?? null, ageMs, stale },
      lines: [
        b
          ? `Held by ${b.holder} (host ${b.hostname}, pid ${b.pid}, nonce ${b.nonce}), taken ${b.acquiredAt}.`
          : "A lock object exists but its body is unreadable.",
        state.state === "held"
          ? `Last refreshed ${Math.round(state.ageMs / 1000)} s ago: live for ${
            Math.round(state.expiresInMs / 1000)
          } s more unless refreshed.`
          : state.state === "stale"
          ? `Last refreshed ${
            Math.round(state.ageMs / 1000)
          } s ago: STALE, the next writer takes it over.`
          : "",
      ].filter((line) => line !== ""),
    };
  }
  if (action === "release") {
    if (!force || !nonce) {
      usageError("lock release needs --force and the lock's NONCE (see `s3sync lock status`)");
    }
    const released = await forceRelease(ctx.store, nonce, lockKeyFor(ctx.namespace));
    return {
      code: released ? EXIT.ok : EXIT.attention,
      json: { released },
      lines: [
        released
          ? "Released the datastore lock."
          : "Not released: the lock is gone or carries another nonce.",
      ],
    };
  }
  usageError("lock takes `status` or `release --force NONCE`");
}

async function runDoctor(ctx: SyncContext): Promise<Outcome> {
  const problems = await doctor(ctx);
  const lines = problems.length === 0 ? ["Doctor: healthy."] : [
    `Doctor: ${problems.length} problems.`,
    ...problems.map((p) => `  [${p.code}] ${p.message}`),
  ];
  return { code: problems.length ? EXIT.attention : EXIT.ok, json: { problems }, lines };
}

async function runRepair(ctx: SyncContext, apply: boolean): Promise<Outcome> {
  const report = await repair(ctx, apply);
  const p = report.plan;
  const lines = [
    `Repair plan: ${
      count(p.summary.moveIntoNamespace)
    } root-level files moved into the namespace folder (the only copy), ` +
    `${count(p.summary.removeRedundant)} removed as byte-identical to the kept copy, ` +
    `${count(p.summary.backup)} moved to .s3sync-repair/backup/ (a different copy is kept)` +
    (p.removeTrees.length
      ? `; then the root-level trees ${p.removeTrees.join(", ")} are removed`
      : "") +
    ".",
    ...p.backup.slice(0, 20).map((m) => `  back up ${m.from} -> ${m.to}`),
    ...(p.backup.length > 20 ? [`  ... and ${count(p.backup.length - 20)} more backups`] : []),
  ];
  if (!apply) {
    lines.push(
      "Nothing changed. Run `s3sync repair --apply` to carry it out (the bucket is never written).",
    );
    // The journal could not be read through a symlinked repair folder: the backups would be
    // refused too, so the person hears of it before applying.
    for (const r of report.refused) lines.push(`  refused ${r.item}: ${r.message}`);
    return {
      code: report.refused.length ? EXIT.attention : EXIT.ok,
      json: { plan: p, applied: false, refused: report.refused },
      lines,
    };
  }
  if (report.resumed) lines.push("An interrupted repair was rolled forward.");
  const h = report.hydration;
  if (h) {
    lines.push(
      `Hydrated the namespace folder: ${
        count(h.downloaded)
      } downloaded, ${h.failures.length} failed (local files were never overwritten); ` +
        `${
          count(report.dedupedBackups)
        } backups proven identical to their downloaded copy removed.`,
    );
  }
  // Refused steps of the repair and of its hydration: the files stayed where they were.
  const refused = [...report.refused, ...(h?.failures.filter(isSymlinkRefusal) ?? [])];
  for (const r of refused.slice(0, 20)) lines.push(`  refused ${r.item}: ${r.message}`);
  const refusedTrees = new Set(report.refused.map((r) => r.item));
  for (const tree of report.leftTrees.filter((t) => !refusedTrees.has(t))) {
    lines.push(`  left ${tree}/: new files appeared in it; run \`s3sync repair --apply\` again`);
  }
  if (refused.length > 0) {
    const blocked = symlinkRefusals(refused);
    lines.push(`attention [${blocked.code}]: ${blocked.message}`);
  }
  const failed = realFailures(h?.failures ?? []).length > 0;
  const code = failed
    ? EXIT.failed
    : report.leftTrees.length || refused.length
    ? EXIT.attention
    : EXIT.ok;
  if (code === EXIT.ok) {
    lines.push(
      "Repaired. `s3sync doctor` should now be clean; `s3sync push` uploads the local work.",
    );
  }
  return {
    code,
    json: {
      plan: p,
      applied: true,
      resumed: report.resumed,
      hydration: h,
      leftTrees: report.leftTrees,
      refused,
    },
    lines,
  };
}

async function runMarkDeleted(ctx: SyncContext, paths: string[]): Promise<Outcome> {
  if (paths.length === 0) usageError("mark-deleted needs at least one path");
  const recorded: string[] = [];
  for (const path of paths) {
    const tombstone = await markDirty(ctx.cache, ctx.namespace, path);
    if (tombstone === undefined) {
      throw new SyncError(
        "not-evidence",
        `${
          JSON.stringify(path)
        } is not a datastore path inside the bound tree, so it cannot mark a delete`,
      );
    }
    recorded.push(tombstone);
  }
  return {
    code: EXIT.ok,
    json: { recorded },
    lines: [
      `Recorded ${recorded.length} tombstones: ${recorded.join(", ")}.`,
      "The next push deletes their remote objects if the files are absent then (see `s3sync plan`).",
    ],
  };
}

async function runResolve(
  ctx: SyncContext,
  keep: string | undefined,
  rels: string[],
): Promise<Outcome> {
  if (keep !== "mine" && keep !== "theirs") {
    usageError("resolve needs --keep mine or --keep theirs");
  }
  const report = await resolve(ctx, keep, rels);
  const lines: string[] = [];
  if (keep === "mine") {
    lines.push(
      `Resolve: ${report.restored.length} of your versions put back; pushed ${
        report.pushed?.uploaded ?? 0
      } files.`,
    );
  } else {
    lines.push(
      `Resolve: kept the bucket's version; ${report.removed.length} conflict copies removed.`,
    );
  }
  for (const copy of report.removed) lines.push(`  removed ${copy}`);
  const blocked: { code: string; message: string }[] = [];
  if (report.stillInConflict.length > 0) {
    blocked.push({
      code: "conflict",
      message: `${report.stillInConflict.length} files changed in the bucket again meanwhile (${
        report.stillInConflict.slice(0, 5).join(", ")
      }); your copies are kept: run the same resolve again`,
    });
  }
  if (report.unknown.length > 0) {
    blocked.push({
      code: "no-conflict-copy",
      message: `${report.unknown.length} files have no conflict copy in .s3sync-conflicts/ (${
        report.unknown.slice(0, 5).join(", ")
      }): nothing to resolve there`,
    });
  }
  const failures = report.pushed?.failures ?? [];
  for (const f of failures.slice(0, 20)) lines.push(`  failed ${f.item}: ${f.message}`);
  for (const b of blocked) lines.push(`attention [${b.code}]: ${b.message}`);
  return {
    code: failures.length > 0 ? EXIT.failed : blocked.length > 0 ? EXIT.attention : EXIT.ok,
    json: {
      keep,
      restored: report.restored,
      pushed: report.pushed?.uploaded ?? 0,
      removed: report.removed,
      stillInConflict: report.stillInConflict,
      unknown: report.unknown,
      failures,
      blocked,
    },
    lines,
  };
}

if (import.meta.main) {
  Deno.exit(await main(Deno.args));
}
