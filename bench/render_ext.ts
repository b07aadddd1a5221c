/**
 * Renders the committed side-by-side run beside the extension's service (`bench/ext_local.json`)
 * into `bench/EXT_LOCAL.md`, with issue 38's verdicts, without the rest of `npm run bench`: that
 * run is made locally (the extension's code is AGPL and stays out of this repository), and its
 * figures are readable as soon as they are committed. `npm run bench` renders the same section
 * into `bench/RESULTS.md`.
 *
 * Usage: `deno run -A bench/render_ext.ts`.
 *
 * @module
 */
import { type ExtLocalRun, extSection, extTargets, table } from "./render.ts";

const here = (path: string) => new URL(path, import.meta.url).pathname;

async function main(): Promise<void> {
  const local = JSON.parse(await Deno.readTextFile(here("./ext_local.json"))) as ExtLocalRun;
  const verdicts = extTargets(local);
  const md = [
    "# The extension's benchmark, side by side",
    "",
    "Written by `deno run -A bench/render_ext.ts` from `bench/ext_local.json` (a local run beside",
    "the extension's own service; see `bench/ext_shape_bench.ts` for the scenarios).",
    "",
    table(
      ["target", "measured", "met"],
      verdicts.map((v) => [v.target, v.measured, v.met ? "yes" : "**no**"]),
    ),
    "",
    extSection(undefined, local),
  ].join("\n");
  await Deno.writeTextFile(here("./EXT_LOCAL.md"), md);
  console.error("[render-ext] wrote bench/EXT_LOCAL.md");
}

if (import.meta.main) await main();
