/**
 * `s3sync`: the command-line front door. Parses flags, builds the adapters, runs one command,
 * prints a human report (or one JSON object with `--json`) and exits with the contract's code:
 * 0 done, 1 failed, 2 usage, 3 a guard withheld something or a problem needs a person.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { DenoCacheFs } from "./cache_fs.ts";
import { Planner } from "./core.ts";
import { publishConditionally, type SyncContext } from "./context.ts";
import { describe, SyncError } from "./errors.ts";
import { pull, type PullReport, rebuildIndex } from "./pull.ts";
import { S3Store } from "./s3.ts";
import { progressPrinter } from "./progress.ts";

/** Exit codes of the CLI contract. */
export const EXIT = { ok: 0, failed: 1, usage: 2, attention: 3 } as const;

const USAGE = `usage: s3sync <command> --bucket B --cache DIR [options]

commands:
  pull                 download what the remote index names into the cache
  rebuild-index        list the bucket and rebuild the index (dry run; --apply publishes)

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

pull options:
  --metadata-only      lazy hydration: leave data/**/raw bytes remote
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
        apply: { type: "boolean" },
        force: { type: "boolean" },
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
    if (!["pull", "rebuild-index"].includes(command)) {
      usageError(`unknown command ${JSON.stringify(command)}`);
    }
    if (!values.bucket) usageError("--bucket is required");
    if (!values.cache) usageError("--cache is required");
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
      cache: new DenoCacheFs(values.cache),
      namespace: values.namespace,
      prefix: values.prefix,
      concurrency: positiveInt(values.concurrency, "--concurrency"),
      listPageSize: positiveInt(values["page-size"], "--page-size"),
      signal: controller.signal,
      onProgress: json ? undefined : progressPrinter(),
      log: json ? undefined : (line) => console.error(`s3sync: ${line}`),
    };
    let outcome: Outcome;
    try {
      outcome = command === "pull"
        ? await runPull(ctx, values["metadata-only"] ?? false)
        : await runRebuild(ctx, values.apply ?? false, values.force ?? false);
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
    return code === "usage" || isPathCode(code) ? EXIT.usage : EXIT.failed;
  } finally {
    store?.destroy();
  }
}

function isPathCode(code: string): boolean {
  return code.startsWith("namespace-") || code.startsWith("path-");
}

function blockedOfPull(report: PullReport): { code: string; message: string }[] {
  const blocked: { code: string; message: string }[] = [];
  const layout = report.plan?.layout;
  if (layout && layout.rootLayoutTrees.length > 0) {
    blocked.push({
      code: "mixed-layout",
      message: `${layout.rootLayoutFiles} files sit in root-level data trees (${
        layout.rootLayoutTrees.join(", ")
      }) beside the namespace folder; run \`s3sync doctor\` to see them`,
    });
  }
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
  for (const f of report.failures.slice(0, 20)) lines.push(`  failed ${f.item}: ${f.message}`);
  if (report.failures.length > 20) {
    lines.push(`  ... and ${report.failures.length - 20} more failures`);
  }
  for (const b of blocked) lines.push(`attention [${b.code}]: ${b.message}`);
  const code = report.failures.length > 0
    ? EXIT.failed
    : blocked.length > 0
    ? EXIT.attention
    : EXIT.ok;
  return { code, json: { summary, report }, lines };
}

async function runRebuild(ctx: SyncContext, apply: boolean, force: boolean): Promise<Outcome> {
  const planner = new Planner(ctx.namespace, ctx.prefix);
  try {
    const head = await ctx.store.headObject(planner.remoteIndexKey, ctx.signal);
    let existing: "absent" | "valid" | "corrupt" = "absent";
    if (head.exists) {
      const current = await ctx.store.getObject(planner.remoteIndexKey, ctx.signal);
      try {
        new Planner(ctx.namespace, ctx.prefix).loadIndex(current.data);
        existing = "valid";
      } catch {
        existing = "corrupt";
      }
    }
    const { rebuilt } = await rebuildIndex(ctx, planner, false);
    const lines = [
      `Rebuild from a listing: ${rebuilt.objectsSeen} objects seen, ${rebuilt.kept} kept (${rebuilt.bytesKept} bytes); ` +
      `skipped ${rebuilt.skippedInternal} internal, ${rebuilt.skippedForeign} in other namespaces' folders, ` +
      `${rebuilt.skippedOutsideNamespace} outside the namespace, ${rebuilt.skippedUnsafe} unsafe.`,
      ...rebuilt.unsafeExamples.map((u) => `  unsafe key ${JSON.stringify(u.key)} [${u.code}]`),
      ...rebuilt.collisions.map((c) => `  collision (${c.kind}): ${c.paths.join(", ")}`),
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
      const put = await publishConditionally(
        ctx.store,
        planner.remoteIndexKey,
        body,
        etag,
        ctx.signal,
      );
      published = put !== null;
      lines.push(
        published
          ? `Published the rebuilt index (${rebuilt.kept} entries) to ${planner.remoteIndexKey}.`
          : "Not published: the remote index changed while rebuilding. Run the command again.",
      );
      if (!published) code = EXIT.attention;
    }
    return { code, json: { report: rebuilt, existing, published }, lines };
  } finally {
    planner.free();
  }
}

if (import.meta.main) {
  Deno.exit(await main(Deno.args));
}
