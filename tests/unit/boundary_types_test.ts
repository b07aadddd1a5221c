/**
 * The types that cross the WASM boundary are generated from the Rust types into
 * `pkg/s3sync_core.d.ts` (`#[derive(Tsify)]`), never copied into `js/` by hand, and what the
 * core really sends has exactly the generated shapes: every key declared, every required key
 * present, `null` only where the declaration says so. A Rust field added, renamed or made
 * optional without its declaration following fails here.
 *
 * @module
 */
import {
  CatalogExportRun,
  classifyCachePath,
  codeLists,
  ConditionsRun,
  ContaminationRun,
  DoctorRun,
  encodeLocalListing,
  encodeRemotePage,
  findCollisions,
  findContamination,
  IndexReadRun,
  listingPage,
  LockRun,
  mapRel,
  migrateListing,
  MigrateRun,
  planMigrate,
  Planner,
  RebuildRun,
  RepairRun,
  ResolveRun,
  ShardMoveRun,
  ShardWriteRun,
} from "../../js/core/mod.ts";
import { isSyncErrorCode } from "../../js/core/codes.ts";
import * as wasm from "../../js/core/wasm.ts";
import { assert, assertEquals } from "../harness/assert.ts";

const encoder = new TextEncoder();
const GENERATED = new URL("../../pkg/s3sync_core.d.ts", import.meta.url);
const JS = new URL("../../js/", import.meta.url);

/** What wasm-bindgen itself declares beside the generated types (the module's loader). */
const LOADER_TYPES = new Set(["InitInput", "InitOutput", "SyncInitInput"]);
/** Code types the declarations import from `js/core/codes.ts` (checked by `codes_test.ts`). */
const CODE_TYPES = new Set(["GuardCode", "ProblemCode", "RefusalCode", "SyncErrorCode"]);

type Field = { type: string; optional: boolean };
type Declaration =
  | { kind: "interface"; extends?: string; fields: Map<string, Field> }
  | { kind: "alias"; type: string };

/** The interfaces and type aliases of the generated declarations, by name. */
function declarations(text: string): Map<string, Declaration> {
  const bare = text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "");
  const out = new Map<string, Declaration>();
  for (const m of bare.matchAll(/export interface (\w+)(?: extends (\w+))? \{([^}]*)\}/g)) {
    if (LOADER_TYPES.has(m[1])) continue;
    const fields = new Map<string, Field>();
    for (const line of m[3].split("\n")) {
      const f = line.match(/^\s*(\w+)(\?)?: (.+);\s*$/);
      if (f) fields.set(f[1], { type: f[3], optional: f[2] === "?" });
    }
    out.set(m[1], { kind: "interface", extends: m[2], fields });
  }
  for (const m of bare.matchAll(/^export type (\w+) = (.+);\s*$/gm)) {
    if (!LOADER_TYPES.has(m[1])) out.set(m[1], { kind: "alias", type: m[2] });
  }
  return out;
}

/** Splits `text` at `sep` where it is not inside brackets, braces or quotes. */
function splitTop(text: string, sep: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let quoted = false;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') quoted = !quoted;
    else if (!quoted && "([{<".includes(c)) depth++;
    else if (!quoted && ")]}>".includes(c)) depth--;
    else if (!quoted && depth === 0 && c === sep) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts.map((p) => p.trim()).filter((p) => p.length > 0);
}

/** The fields of an inline object type (`{ kind: "tombstone"; path: string }`). */
function inlineFields(text: string): Map<string, Field> {
  const fields = new Map<string, Field>();
  for (const part of splitTop(text.slice(1, -1), ";")) {
    const f = part.match(/^(\w+)(\?)?: (.+)$/);
    if (f) fields.set(f[1], { type: f[3], optional: f[2] === "?" });
  }
  return fields;
}

/** Checks values against the generated declarations; returns the mismatches found. */
class ShapeChecker {
  constructor(private readonly decls: Map<string, Declaration>) {}

  check(value: unknown, type: string, at: string): string[] {
    type = type.trim();
    const alternatives = splitTop(type, "|");
    if (alternatives.length > 1) {
      const results = alternatives.map((t) => this.check(value, t, at));
      return results.some((r) => r.length === 0) ? [] : [`${at}: ${show(value)} is not ${type}`];
    }
    if (type.startsWith("(") && type.endsWith(")")) return this.check(value, type.slice(1, -1), at);
    if (type === "null") return value === null ? [] : [`${at}: ${show(value)} is not null`];
    if (type === "Uint8Array") {
      return value instanceof Uint8Array ? [] : [`${at}: ${show(value)} is not a Uint8Array`];
    }
    if (["string", "number", "boolean"].includes(type)) {
      const actual: string = typeof value;
      return actual === type ? [] : [`${at}: ${show(value)} is not a ${type}`];
    }
    if (type.startsWith('"')) {
      return value === JSON.parse(type) ? [] : [`${at}: ${show(value)} is not ${type}`];
    }
    if (type.endsWith("[]")) {
      if (!Array.isArray(value)) return [`${at}: ${show(value)} is not an array`];
      return value.flatMap((v, i) => this.check(v, type.slice(0, -2), `${at}[${i}]`));
    }
    if (type.startsWith("{")) return this.object(value, inlineFields(type), at);
    const record = type.match(/^Record<string, (.+)>$/);
    if (record) {
      if (typeof value !== "object" || value === null || Array.isArray(value)) {
        return [`${at}: ${show(value)} is not an object`];
      }
      return Object.entries(value).flatMap(([k, v]) => this.check(v, record[1], `${at}.${k}`));
    }
    if (CODE_TYPES.has(type)) {
      return isSyncErrorCode(value) ? [] : [`${at}: ${show(value)} is no stable code`];
    }
    const decl = this.decls.get(type);
    if (!decl) return [`${at}: no declaration of ${type}`];
    if (decl.kind === "alias") return this.check(value, decl.type, at);
    return this.object(value, this.fieldsOf(type), at);
  }

  /** The fields of an interface, with those of the one it extends. */
  fieldsOf(name: string): Map<string, Field> {
    const decl = this.decls.get(name);
    if (!decl || decl.kind !== "interface") throw new Error(`${name} is not a generated interface`);
    return new Map([...(decl.extends ? this.fieldsOf(decl.extends) : []), ...decl.fields]);
  }

  private object(value: unknown, fields: Map<string, Field>, at: string): string[] {
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      return [`${at}: ${show(value)} is not an object`];
    }
    const record = value as Record<string, unknown>;
    const errors = Object.keys(record)
      .filter((k) => !fields.has(k))
      .map((k) => `${at}.${k}: sent but not declared`);
    for (const [key, field] of fields) {
      if (!(key in record)) {
        if (!field.optional) errors.push(`${at}.${key}: declared but not sent`);
        continue;
      }
      errors.push(...this.check(record[key], field.type, `${at}.${key}`));
    }
    return errors;
  }
}

function show(value: unknown): string {
  return value === undefined ? "undefined" : JSON.stringify(value)?.slice(0, 80) ?? String(value);
}

/** Type and value declarations (not re-exports) in one TypeScript source. */
function declaredNames(source: string): string[] {
  return [
    ...source.matchAll(/^\s*(?:export\s+)?(?:interface|type|class|enum)\s+(\w+)\b(?!\s*[,}])/gm),
  ]
    .map((m) => m[1]);
}

async function* sources(dir: URL): AsyncGenerator<[string, string]> {
  for await (const entry of Deno.readDir(dir)) {
    if (entry.isDirectory) yield* sources(new URL(`${entry.name}/`, dir));
    else if (entry.name.endsWith(".ts")) {
      const url = new URL(entry.name, dir);
      yield [url.pathname, await Deno.readTextFile(url)];
    }
  }
}

const decls = declarations(await Deno.readTextFile(GENERATED));

Deno.test("the boundary types are generated into pkg/, and js/ copies none of them", async () => {
  // Not vacuous: the plans, reports and options the shim uses are all among the generated ones.
  for (
    const name of [
      "PullPlan",
      "PushPlan",
      "PullApplied",
      "RepairPlan",
      "RebuildReport",
      "ResolvePlan",
      "MigratePlan",
      "ContaminationReport",
      "Evidence",
      "Verdict",
      "Problem",
      "PullOptions",
      "PushOptions",
      "Uploaded",
      "LockState",
      "LockBody",
    ]
  ) assert(decls.has(name), `${name} is not generated`);
  const copies: string[] = [];
  for await (const [path, source] of sources(JS)) {
    for (const name of declaredNames(source)) {
      if (decls.has(name)) copies.push(`${path.slice(path.indexOf("/js/") + 1)}: ${name}`);
    }
  }
  assertEquals(copies, [], "boundary types declared by hand instead of re-exported");
});

Deno.test("the core's wrapper (js/core/mod.ts and the files it re-exports) declares only the encoders' own inputs", async () => {
  const files = [
    "core/mod.ts",
    "wire/encode.ts",
    "core/planner.ts",
    "core/push_run.ts",
    "core/pull_run.ts",
    "core/small_runs.ts",
    "core/functions.ts",
  ];
  const names: string[] = [];
  for (const file of files) {
    names.push(...declaredNames(await Deno.readTextFile(new URL(file, JS))));
  }
  // The wrapper classes over the WASM session and the run machines are the module's point.
  const own = names.filter((n) =>
    ![
      "Planner",
      "PullRun",
      "PushRun",
      "RebuildRun",
      "RepairRun",
      "MigrateRun",
      "ResolveRun",
      "ContaminationRun",
      "ShardWriteRun",
      "LockRun",
      "DoctorRun",
      "IndexReadRun",
      "ConditionsRun",
      "ShardMoveRun",
      "CatalogExportRun",
      "DirtyRecorder",
    ]
      .includes(n)
  );
  assertEquals(own.sort(), ["ListedObject", "LocalFile"]);
});

Deno.test("the shape checker rejects a missing, an extra and a mistyped field", () => {
  const checker = new ShapeChecker(decls);
  const names = { rel: "a", indexKey: "a", remoteKey: "a", cachePath: "a" };
  assertEquals(checker.check(names, "FileNames", "names"), []);
  const { cachePath: _, ...missing } = names;
  assertEquals(checker.check(missing, "FileNames", "names"), [
    "names.cachePath: declared but not sent",
  ]);
  assertEquals(checker.check({ ...names, extra: 1 }, "FileNames", "names"), [
    "names.extra: sent but not declared",
  ]);
  assertEquals(checker.check({ ...names, rel: null }, "FileNames", "names"), [
    "names.rel: null is not a string",
  ]);
  assertEquals(checker.check({ kind: "deleteMissing", path: "x" }, "Evidence", "e").length, 1);
});

/** An index of `rels` (each `size` bytes), as the extension writes it. */
function index(entries: Record<string, number>): Uint8Array {
  const out: Record<string, unknown> = {};
  for (const [rel, size] of Object.entries(entries)) {
    out[rel] = { key: rel, size, lastModified: "2026-08-01T12:00:00.000Z" };
  }
  return encoder.encode(
    JSON.stringify({ version: 1, lastPulled: "2026-08-07T10:00:00Z", entries: out }),
  );
}

Deno.test("what the core really sends has exactly the generated shapes", () => {
  const checker = new ShapeChecker(decls);
  const errors: string[] = [];
  const expect = (value: unknown, type: string, at: string) => {
    errors.push(...checker.check(value, type, at));
  };
  const NOW = new Date("2026-08-08T00:00:00Z");

  expect(mapRel("data/a.yaml", "ns", "p"), "FileNames", "mapRel");
  expect(classifyCachePath("ns/data/a.yaml", "ns"), "CachePlace", "classifyCachePath");
  expect(classifyCachePath("../x", "ns"), "CachePlace", "classifyCachePath(unsafe)");
  const collisions = findCollisions(["data/A", "data/a", "data/a/b"]);
  assert(collisions.length > 0);
  expect(collisions, "Collision[]", "findCollisions");
  expect(codeLists(), "CodeLists", "codeLists");

  const entries = {
    "data/down.yaml": 4,
    "data/same.yaml": 4,
    "data/gone.yaml": 4,
    "data/dropped.yaml": 4,
    "../unsafe.yaml": 4,
  };
  {
    using planner = new Planner("ns", "p");
    expect(planner.loadIndex(index(entries)), "IndexLoaded", "loadIndex");
    expect(planner.loadBase(index(entries)), "BaseLoad", "loadBase");
    const walk = [
      { path: "ns/data/same.yaml", size: 4, mtimeMs: 1 },
      { path: "ns/data/new.yaml", size: 9, mtimeMs: 2 },
      { path: "data/root.yaml", size: 3, mtimeMs: 3 },
    ];
    const pull = planner.planPull(encodeLocalListing(walk), { scope: [] });
    assert(pull.downloads.length > 0 && pull.refused.length > 0);
    expect(pull, "PullPlan", "planPull");
    const applied = planner.applyPull(
      encodeLocalListing([{ path: "ns/data/down.yaml", size: 5, mtimeMs: 9 }]),
      ["data/gone.yaml"],
      [{ rel: "data/down.yaml", copy: ".s3sync-conflicts/ns/data/down.yaml" }],
    );
    assert(applied.conflict !== null);
    expect(applied, "PullApplied", "applyPull");
    expect(planner.planRepair(encodeLocalListing(walk), new Map()), "RepairPlan", "planRepair");
    expect(
      planner.planBackupDedupe(encodeLocalListing(walk), new Map()),
      "BackupDedupe",
      "planBackupDedupe",
    );
    const copy = planner.conflictCopyPath("ns/data/same.yaml", "ab".repeat(32));
    expect(
      planner.planResolve("mine", [], encodeLocalListing([{ path: copy, size: 4, mtimeMs: 5 }])),
      "ResolvePlan",
      "planResolve",
    );
  }
  {
    // A resolve run keeping mine: one copy restored, the push published, the copy removed.
    using planner = new Planner("ns", "p");
    using run = new ResolveRun(planner, { keep: "mine", rels: [] });
    const copy = planner.conflictCopyPath("ns/data/a.yaml", "ab".repeat(32));
    const actions = [];
    for (let action = run.poll(); action.action !== "done"; action = run.poll()) {
      actions.push(action);
      if (action.action === "pull") run.handle({ event: "pulled", failed: [] });
      else if (action.action === "walk") {
        const listing = encodeLocalListing([{ path: copy, size: 4, mtimeMs: 5 }]);
        run.handle({ event: "walk", listing });
      } else if (action.action === "restore") {
        run.handle({ event: "restored", rels: action.files.map((f) => f.rel) });
      } else if (action.action === "push") {
        run.handle({ event: "pushed", conflicts: [], failed: [], published: true, uploaded: 1 });
      } else if (action.action === "removeCopies") {
        run.handle({ event: "removed", removed: action.paths });
      }
    }
    assertEquals(actions.map((a) => a.action), ["pull", "walk", "restore", "push", "removeCopies"]);
    actions.forEach((action, i) => expect(action, "ResolveAction", `ResolveRun.poll[${i}]`));
    const result = run.result();
    assertEquals([result.restored.length, result.removed], [1, [copy]]);
    expect(result, "ResolveResult", "ResolveRun.result");
  }
  {
    using planner = new Planner("ns", "p");
    planner.loadIndex(index(entries));
    const walk = encodeLocalListing([
      { path: "ns/data/same.yaml", size: 5, mtimeMs: 1 },
      { path: "ns/data/new.yaml", size: 9, mtimeMs: 2 },
    ]);
    const tombstone = planner.normalizeTombstone("ns/data/gone.yaml")!;
    const push = planner.planPush(walk, [tombstone], new Map(), { deleteMissing: true });
    assert(push.uploads.length > 0 && push.deletes.length > 1, JSON.stringify(push));
    expect(push, "PushPlan", "planPush");
    const capped = planner.planPush(walk, [tombstone], new Map(), {
      deleteMissing: true,
      maxDeletes: 1,
    });
    assert(capped.withheld.length > 0 && capped.blocked.length > 0);
    expect(capped, "PushPlan", "planPush(capped)");
  }
  {
    // A rebuild-index run over a listing with an unsafe key and a collision, every action
    // and the outcome checked against the generated declarations.
    using planner = new Planner("ns", "p");
    using run = new RebuildRun(planner, { mode: "asked", apply: true, force: false }, NOW);
    const actions = [];
    for (let action = run.poll(); action.action !== "done"; action = run.poll()) {
      actions.push(action);
      if (action.action === "get") run.handle({ event: "got" });
      else if (action.action === "list") {
        const [page, unencodable] = listingPage([
          { key: "ns/data/a.yaml", size: 1, etag: '"e"', lastModified: NOW },
          { key: "ns/data/A.yaml", size: 1 },
          { key: "ns/data/./x", size: 1 },
          { key: "other/data/b.yaml", size: 2 },
        ]);
        run.handle({ event: "page", page, unencodable });
        run.handle({ event: "listed" });
      } else if (action.action === "publish") run.handle({ event: "published", published: false });
      else throw new Error(`unexpected ${action.action}`);
    }
    assertEquals(actions.map((a) => a.action), ["get", "list", "publish"]);
    actions.forEach((action, i) => expect(action, "RebuildAction", `RebuildRun.poll[${i}]`));
    const outcome = run.result();
    assert(outcome.report.unsafeExamples.length > 0 && outcome.report.collisions.length > 0);
    assertEquals([outcome.step, outcome.existing, outcome.needsAttention], [
      "lost-race",
      "absent",
      true,
    ]);
    expect(outcome, "RebuildResult", "RebuildRun.result");
  }
  {
    // A migration's shard-set write: HEADs, shard writes, the marked monolith, the meta; every
    // action and the result checked against the generated declarations.
    using planner = new Planner("ns", "p");
    planner.loadIndex(index({ "data/aws/ec2/m-1/state/1/raw": 4, "logs/run.log": 2 }));
    using run = new ShardWriteRun(planner, {
      commitSeq: 1,
      markMonolith: { etag: '"m"', nowIso: NOW.toISOString() },
    });
    const actions = [];
    for (let action = run.poll(); action.action !== "done"; action = run.poll()) {
      actions.push(action);
      if (action.action === "head") {
        run.handle({
          event: "heads",
          heads: action.keys.map((key) => ({
            key,
            exists: key.endsWith("logs.json"),
            etag: '"l"',
          })),
        });
      } else run.handle({ event: "put", landed: true });
    }
    assertEquals(actions.map((a) => a.action), ["head", "put", "put", "head", "put"]);
    actions.forEach((action, i) => expect(action, "ShardWriteAction", `ShardWriteRun.poll[${i}]`));
    const outcome = run.result();
    assertEquals(outcome.partitions, ["data--aws--ec2--m-1", "logs"]);
    expect(outcome, "ShardWriteResult", "ShardWriteRun.result");
  }
  {
    // A repair run over a root-level only copy, its journal behind a refused path and its
    // tree still occupied: every action and the result checked against the declarations.
    using planner = new Planner("ns", "p");
    planner.loadIndex(index({ "data/a.yaml": 4 }));
    using run = new RepairRun(planner, { apply: true }, NOW);
    const actions = [];
    let walks = 0;
    for (let action = run.poll(); action.action !== "done"; action = run.poll()) {
      actions.push(action);
      if (action.action === "readJournal") {
        run.handle({ event: "journal", refused: "a symlinked folder" });
      } else if (action.action === "loadIndex") run.handle({ event: "index" });
      else if (action.action === "walk") {
        const files = walks++ === 0 ? [{ path: "data/a.yaml", size: 4, mtimeMs: 1 }] : [];
        run.handle({ event: "walk", listing: encodeLocalListing(files), walkErrors: [] });
      } else if (action.action === "hash") {
        run.handle({
          event: "hashes",
          paths: action.paths,
          values: action.paths.map(() => "0".repeat(64)),
        });
      } else if (action.action === "apply") {
        run.handle({
          event: "applied",
          results: action.steps.map((step) =>
            step.step === "removeTree" ? { result: "occupied" } : { result: "done" }
          ),
        });
      } else if (action.action === "hydrate") {
        run.handle({ event: "hydrated", failures: 0, nowIso: NOW.toISOString() });
      }
    }
    assertEquals(actions.map((a) => a.action), [
      "readJournal",
      "loadIndex",
      "walk",
      "apply",
      "hydrate",
      "walk",
    ]);
    actions.forEach((action, i) => expect(action, "RepairAction", `RepairRun.poll[${i}]`));
    const result = run.result();
    assertEquals([result.refused.length, result.leftTrees, result.complete], [1, ["data"], false]);
    expect(result, "RepairResult", "RepairRun.result");
  }
  const listed = [
    { key: "data/solo.yaml", size: 3, etag: '"aa"' },
    { key: "ns/data/other.yaml", size: 3, etag: '"aa"' },
    { key: "ns/data/solo.yaml", size: 4, etag: '"bb"' },
    { key: "ns/dev/data/x.yaml", size: 3, etag: '"cc"' },
    { key: "dev/.namespace.json", size: 2 },
    { key: "dev/data/x.yaml", size: 3, etag: '"cc"' },
  ];
  {
    // A migrate run: one object copied, then found verified and indexed, its publish lost.
    // Every action checked against the declarations.
    using run = new MigrateRun("ns", "p", { apply: true, removeOriginals: true }, NOW);
    const actions = [];
    const original = { key: "data/new.yaml", size: 3, etag: '"n"' };
    const listings = [[original], [original, { ...original, key: "ns/data/new.yaml" }]];
    for (;;) {
      const action = run.poll();
      actions.push(action);
      if (action.action === "get") run.handle({ event: "got" });
      else if (action.action === "listAll") {
        run.handle({ event: "listing", listing: migrateListing(listings.shift()!) });
      } else if (action.action === "head") {
        run.handle({
          event: "heads",
          heads: action.keys.map((key) => ({ key, exists: true, size: 3 })),
        });
      } else if (action.action === "copy") {
        run.handle({ event: "copied", copied: action.items.length });
      } else if (action.action === "publish") {
        assert(run.body().length > 0);
        let thrown: unknown;
        try {
          run.handle({ event: "published", published: false });
        } catch (error) {
          thrown = error;
        }
        assertEquals((thrown as { code?: string }).code, "publish-conflict");
        break;
      } else throw new Error(`unexpected ${action.action}`);
    }
    assertEquals(actions.map((a) => a.action), [
      "get",
      "get",
      "get",
      "listAll",
      "copy",
      "get",
      "listAll",
      "publish",
    ]);
    actions.forEach((action, i) => expect(action, "MigrateAction", `MigrateRun.poll[${i}]`));
  }
  {
    using run = new MigrateRun("ns", "p", {}, NOW);
    run.poll();
    run.handle({ event: "got" });
    run.poll();
    run.handle({ event: "got" });
    run.poll();
    run.handle({ event: "got" });
    run.poll();
    run.handle({ event: "listing", listing: migrateListing(listed) });
    assertEquals(run.poll().action, "done");
    expect(run.result(), "MigrateResult", "MigrateRun.result");
  }
  const migrate = planMigrate("ns", "p", listed, {}, NOW);
  assert(migrate.conflicts.length > 0, JSON.stringify(migrate));
  expect(migrate, "MigratePlan", "planMigrate");
  expect(findContamination("ns", encodeRemotePage(listed)), "ContaminationReport", "contamination");
  {
    // A contamination run over a duplicate without listed ETags: HEADs prove it, the index
    // entry goes first, then the object.
    using run = new ContaminationRun("ns", "p", false);
    const objects = [
      { key: "dev/.namespace.json", size: 2 },
      { key: "dev/data/x.yaml", size: 3 },
      { key: "ns/dev/data/x.yaml", size: 3 },
    ];
    const index = encoder.encode('{"version":1,"entries":{"dev/data/x.yaml":{"size":3}}}');
    const actions = [];
    for (let action = run.poll(); action.action !== "done"; action = run.poll()) {
      actions.push(action);
      if (action.action === "listAll") {
        run.handle({ event: "listing", listing: migrateListing(objects) });
      } else if (action.action === "head") {
        run.handle({
          event: "heads",
          heads: action.keys.map((key) => ({ key, exists: true, size: 3, etag: '"c"' })),
        });
      } else if (action.action === "get") {
        run.handle({ event: "got", bytes: index, etag: '"i"' });
      } else if (action.action === "publish") {
        run.handle({ event: "published", published: run.body().length > 0 });
      } else if (action.action === "delete") {
        run.handle({ event: "deleted", deleted: action.objects.length, changed: [] });
      }
    }
    assertEquals(actions.map((a) => a.action), [
      "listAll",
      "head",
      "get",
      "publish",
      "delete",
    ]);
    actions.forEach((action, i) =>
      expect(action, "ContaminationAction", `ContaminationRun.poll[${i}]`)
    );
    const summary = run.result();
    assertEquals([summary.deleted, summary.kept], [1, []]);
    expect(summary, "ContaminationSummary", "ContaminationRun.result");
  }
  expect(wasm.lockAssess(undefined, undefined, "n", 5), "LockState", "lockAssess(free)");
  expect(
    wasm.lockAssess(encoder.encode('{"holder":"a@b","nonce":"x"}'), 0, "n", 5),
    "LockState",
    "lockAssess(held)",
  );
  {
    // A doctor over a namespaced cache with a root-level file, a symlinked folder, an old and
    // a new temporary file and an unreadable sidecar: every action and the result checked.
    using planner = new Planner("ns", "p");
    using run = new DoctorRun(planner);
    const walk = [{ path: "ns/data/a.yaml", size: 1, mtimeMs: 1 }, {
      path: "data/root.yaml",
      size: 1,
      mtimeMs: 1,
    }];
    const actions = [];
    for (let action = run.poll(); action.action !== "done"; action = run.poll()) {
      actions.push(action);
      if (action.action === "loadIndex") {
        run.handle({ event: "indexUnreadable", code: "index-corrupt", message: "not JSON" });
      } else if (action.action === "walk") {
        run.handle({
          event: "walk",
          listing: encodeLocalListing(walk),
          walkErrors: [],
          symlinkedFiles: ["ns/l.log"],
          symlinkedFolders: ["ns/logs"],
          tempFiles: ["ns/.s3sync-tmp-1", "ns/.s3sync-tmp-2"],
        });
      } else if (action.action === "statTemps") {
        run.handle({ event: "temps", mtimes: [0, null], nowMs: 10 * 3_600_000 });
      } else run.handle({ event: "sidecar", bytes: encoder.encode("{") });
    }
    assertEquals(actions.map((a) => a.action), ["loadIndex", "walk", "statTemps", "readSidecar"]);
    actions.forEach((action, i) => expect(action, "DoctorAction", `DoctorRun.poll[${i}]`));
    const findings = run.result();
    assert(findings.problems.length >= 4 && findings.notes.length === 1);
    expect(findings, "DoctorFindings", "DoctorRun.result");
  }
  {
    // A wait for a live holder, a takeover of the stale lock: every action and the result
    // checked against the generated declarations.
    using run = new LockRun({
      mode: "acquire",
      key: ".datastore.lock",
      holder: { holder: "me@h", hostname: "h", pid: 1, nonce: "n" },
      retryMs: 10,
      maxWaitMs: 1000,
      nowMs: 0,
      ifMatch: true,
    });
    const other = encoder.encode(
      '{"holder":"a@b","hostname":"b","pid":2,"acquiredAt":"x","ttlMs":100,"nonce":"x"}',
    );
    const actions = [];
    let now = 0;
    for (let action = run.poll(); action.action !== "done"; action = run.poll()) {
      actions.push(action);
      if (action.action === "put") {
        run.handle({ event: "put", landed: action.condition.kind === "match" });
      } else if (action.action === "inspect") {
        run.handle({ event: "inspected", body: other, lastModifiedMs: 0, etag: '"e"', nowMs: now });
      } else if (action.action === "sleep") {
        now += 200;
        run.handle({ event: "slept", nowMs: now });
      } else run.handle({ event: "deleted", deleted: true });
    }
    assertEquals(actions.map((a) => a.action), [
      "put",
      "inspect",
      "sleep",
      "put",
      "inspect",
      "put",
    ]);
    actions.forEach((action, i) => expect(action, "LockAction", `LockRun.poll[${i}]`));
    const outcome = run.result();
    assertEquals([outcome.held, outcome.tookOverFrom], [true, "a@b"]);
    expect(outcome, "LockResult", "LockRun.result");
  }
  {
    // A v2 read: the meta, two shards: every action and the result checked.
    using planner = new Planner("ns", "p");
    using run = new IndexReadRun(planner, { purpose: "load" });
    const actions = [];
    for (let action = run.poll(); action.action !== "done"; action = run.poll()) {
      actions.push(action);
      if (action.action === "get") {
        const meta = '{"version":2,"partitions":["a","b"],"commitSeq":3}';
        run.handle({ event: "got", bytes: encoder.encode(meta), etag: '"m"' });
      } else if (action.action === "getShards") {
        for (const { partition } of action.shards) {
          const shard =
            `{"version":1,"entries":{"data/${partition}.yaml":{"key":"data/${partition}.yaml","size":1}}}`;
          run.handle({ event: "shard", partition, bytes: encoder.encode(shard), etag: '"s"' });
        }
        run.handle({ event: "shardsRead", failed: 0 });
      } else throw new Error(`unexpected ${action.action}`);
    }
    assertEquals(actions.map((a) => a.action), ["get", "getShards"]);
    actions.forEach((action, i) => expect(action, "IndexReadAction", `IndexReadRun.poll[${i}]`));
    const read = run.result();
    assertEquals([read.origin, read.shards?.commitSeq, planner.indexLength], ["shards", 3, 2]);
    expect(read, "IndexReadResult", "IndexReadRun.result");
  }
  {
    // A push's conditions on S3, nothing remembered: every action and the result checked.
    using planner = new Planner("ns", "p");
    const sidecar = '{"version":2,"remoteIndexETag":"e","localDirty":false,"dirtyPaths":[]}';
    using run = new ConditionsRun(planner, {
      purpose: "push",
      conditionalClient: true,
      deleting: true,
      store: "http://127.0.0.1:1/b/p",
    }, new Date(1_800_000_000_000));
    const actions = [];
    for (let action = run.poll(); action.action !== "done"; action = run.poll()) {
      actions.push(action);
      if (action.action === "readSidecar") {
        run.handle({ event: "sidecar", bytes: encoder.encode(sidecar) });
      } else if (action.action === "probeWrites") {
        run.handle({ event: "writesProbed", created: true, again: false, wrongMatch: false });
      } else if (action.action === "probeDeletes") {
        run.handle({ event: "deletesProbed", refused: true, exists: true });
      } else if (action.action === "remember") {
        assertEquals([action.verdict.deletes, action.verdict.probedAtMs], [
          true,
          1_800_000_000_000,
        ]);
        run.handle({ event: "remembered" });
      } else throw new Error(`unexpected ${JSON.stringify(action)}`);
    }
    assertEquals(
      actions.map((a) => a.action),
      ["readSidecar", "probeWrites", "probeDeletes", "remember"],
    );
    actions.forEach((action, i) => expect(action, "ConditionsAction", `ConditionsRun.poll[${i}]`));
    const decided = run.result();
    assertEquals(decided.support, { writes: true, deletes: true });
    expect(decided, "ConditionsResult", "ConditionsRun.result");
  }
  {
    // A v1 repo moved to shards: every action and the result checked.
    using run = new ShardMoveRun(new Date(1_800_000_000_000));
    const actions = [];
    for (let action = run.poll(); action.action !== "done"; action = run.poll()) {
      actions.push(action);
      if (action.action === "readShards") run.handle({ event: "shardsRead" });
      else if (action.action === "loadIndex") {
        run.handle({ event: "loaded", monolith: true, etag: '"m"' });
      } else if (action.action === "writeShards") {
        assertEquals(action.markMonolith?.etag, '"m"');
        run.handle({ event: "written", published: true, partitions: ["a"] });
      } else throw new Error(`unexpected ${JSON.stringify(action)}`);
    }
    assertEquals(actions.map((a) => a.action), ["readShards", "loadIndex", "writeShards"]);
    actions.forEach((action, i) => expect(action, "ShardMoveAction", `ShardMoveRun.poll[${i}]`));
    const moved = run.result();
    assertEquals([moved.version, moved.commitSeq, moved.moved], [2, 1, true]);
    expect(moved, "ShardMoveResult", "ShardMoveRun.result");
  }
  {
    // A replaced catalog export whose answer was lost: every action and the result checked.
    using run = new CatalogExportRun({
      namespace: "prod",
      size: 10,
      sha256: "a".repeat(64),
      conditionalClient: true,
      remember: true,
    });
    const actions = [];
    for (let action = run.poll(); action.action !== "done"; action = run.poll()) {
      actions.push(action);
      if (action.action === "readSidecar") run.handle({ event: "sidecar" });
      else if (action.action === "head") {
        run.handle({ event: "head", exists: true, size: 9, etag: '"t"' });
      } else if (action.action === "put") {
        assertEquals(action.condition, { kind: "match", etag: '"t"' });
        run.handle({ event: "put", written: false });
      } else if (action.action === "verifyOwn") run.handle({ event: "verified", ours: true });
      else if (action.action === "remember") run.handle({ event: "remembered" });
      else throw new Error(`unexpected ${JSON.stringify(action)}`);
    }
    assertEquals(
      actions.map((a) => a.action),
      ["readSidecar", "head", "put", "verifyOwn", "remember"],
    );
    actions.forEach((action, i) =>
      expect(action, "CatalogExportAction", `CatalogExportRun.poll[${i}]`)
    );
    const exported = run.result();
    assertEquals(exported.uploaded, true);
    expect(exported, "CatalogExportResult", "CatalogExportRun.result");
  }
  assertEquals(errors, []);
});
