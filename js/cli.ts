/**
 * `s3sync`: the command-line entry point (`bin/s3sync` runs this file). The work is in
 * `cli/`: `main.ts` parses and dispatches, `commands/` run, `render.ts` prints.
 *
 * @module
 */
import { main } from "./cli/main.ts";

export { main } from "./cli/main.ts";
export { EXIT } from "./cli/exit_codes.ts";
export { describePlan } from "./cli/render.ts";

if (import.meta.main) {
  Deno.exit(await main(Deno.args));
}
