/**
 * The modules of `js/` form layers: no module imports itself back through others. A cycle
 * (even through `import type`) means two modules each need the other's job, so neither can be
 * read or changed alone.
 */
import { dirname, join, relative, resolve } from "node:path";
import { assertEquals } from "../harness/assert.ts";

const JS = resolve(import.meta.dirname!, "../../js");

/** Every `.ts` file under `folder`, absolute. */
async function sources(folder: string): Promise<string[]> {
  const out: string[] = [];
  for await (const entry of Deno.readDir(folder)) {
    const path = join(folder, entry.name);
    if (entry.isDirectory) out.push(...await sources(path));
    else if (entry.isFile && entry.name.endsWith(".ts")) out.push(path);
  }
  return out;
}

/** The relative `.ts` modules `file` imports or re-exports (values and types alike). */
async function importsOf(file: string): Promise<string[]> {
  const text = await Deno.readTextFile(file);
  const specifiers = [...text.matchAll(/\bfrom\s+"(\.{1,2}\/[^"]+\.ts)"/g)].map((m) => m[1]);
  return specifiers.map((s) => resolve(dirname(file), s));
}

/** Each cycle once, as the chain of modules relative to `js/`, closing on its first. */
function findCycles(graph: Map<string, string[]>): string[][] {
  const cycles: string[][] = [];
  const done = new Set<string>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const visit = (node: string) => {
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (onStack.has(next)) cycles.push([...stack.slice(stack.indexOf(next)), next]);
      else if (!done.has(next)) visit(next);
    }
    stack.pop();
    onStack.delete(node);
    done.add(node);
  };
  for (const node of [...graph.keys()].sort()) if (!done.has(node)) visit(node);
  return cycles;
}

Deno.test("findCycles sees a two-module cycle and a longer one, and none in a chain", () => {
  assertEquals(findCycles(new Map([["a", ["b"]], ["b", ["a"]]])), [["a", "b", "a"]]);
  assertEquals(
    findCycles(new Map([["a", ["b"]], ["b", ["c"]], ["c", ["a"]], ["d", ["a"]]])),
    [["a", "b", "c", "a"]],
  );
  assertEquals(findCycles(new Map([["a", ["b"]], ["b", ["c"]], ["c", []]])), []);
});

Deno.test("js/ has no import cycles", async () => {
  const files = await sources(JS);
  const graph = new Map<string, string[]>();
  for (const file of files) {
    graph.set(
      relative(JS, file),
      (await importsOf(file)).filter((f) => f.startsWith(JS + "/")).map((f) => relative(JS, f)),
    );
  }
  // The graph was read: the check below is about real modules, not an empty folder.
  assertEquals(graph.has("core/mod.ts") && graph.has("ops/pull.ts"), true);
  assertEquals(findCycles(graph).map((c) => c.join(" -> ")), []);
});

/**
 * The folders of `js/`, lowest first: a module may import its own folder, a lower one, or a
 * top-level leaf (`version.ts`), never a higher one. `wire` writes the buffers a walk and a
 * listing cross the boundary in; `core` wraps the WASM core and names
 * errors; `io` holds the adapters (bucket, cache folder, hashing) and their execution policy;
 * `exec` what every run executes with (the context, transfers, the lock); `ops` each
 * operation's executor; `extension` and `cli` the two front ends, which never import each other.
 */
const LAYERS = ["wire", "core", "io", "exec", "ops", "extension", "cli"];

/** The imports that break the folder order (`from -> to`, relative to `js/`). */
function layerBreaks(graph: Map<string, string[]>): string[] {
  const rank = (path: string) => {
    const folder = path.includes("/") ? path.slice(0, path.indexOf("/")) : "";
    return folder === "" ? -1 : LAYERS.indexOf(folder);
  };
  const breaks: string[] = [];
  for (const [from, tos] of graph) {
    for (const to of tos) {
      const [a, b] = [rank(from), rank(to)];
      const fronts = LAYERS.indexOf("extension");
      const sideways = a >= fronts && b >= fronts && a !== b;
      // A top-level module (mod.ts, cli.ts) may import anything; a folder may import a
      // top-level leaf only (version.ts imports nothing).
      const upward = a !== -1 && (b > a || (b === -1 && (graph.get(to) ?? []).length > 0));
      if (sideways || upward) breaks.push(`${from} -> ${to}`);
    }
  }
  return breaks.sort();
}

Deno.test("layerBreaks sees an upward import, a sideways one between front ends, and allows the rest", () => {
  const graph = new Map([
    ["io/s3.ts", ["core/errors.ts", "ops/pull.ts"]],
    ["cli/main.ts", ["extension/service.ts", "ops/pull.ts", "version.ts"]],
    ["ops/pull.ts", ["io/s3.ts", "ops/push.ts"]],
    ["version.ts", []],
  ]);
  assertEquals(layerBreaks(graph), [
    "cli/main.ts -> extension/service.ts",
    "io/s3.ts -> ops/pull.ts",
  ]);
});

Deno.test("js/ folders import only their own, a lower one, or a top-level leaf", async () => {
  const graph = new Map<string, string[]>();
  for (const file of await sources(JS)) {
    graph.set(
      relative(JS, file),
      (await importsOf(file)).filter((f) => f.startsWith(JS + "/")).map((f) => relative(JS, f)),
    );
  }
  const folders = new Set(
    [...graph.keys()].map((p) => p.split("/")[0]).filter((f) => !f.endsWith(".ts")),
  );
  assertEquals([...folders].sort(), [...LAYERS].sort(), "every folder has its place in the order");
  assertEquals(layerBreaks(graph), []);
});
