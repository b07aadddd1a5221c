/**
 * `s3sync`'s front door: parses the command line, sets up the context, runs one command,
 * prints its outcome (human lines, or one JSON object with `--json`) and returns the contract's
 * exit code: 0 done, 1 failed, 2 usage, 3 a guard withheld something or a problem needs a person.
 *
 * @module
 */
import { bindUnnamed } from "../core/mod.ts";
import { describe, SyncError } from "../core/errors.ts";
import { RUNNERS } from "./commands/index.ts";
import { EXIT, exitCodeOfError } from "./exit_codes.ts";
import { commandHelp, overview } from "./help.ts";
import { parseCommandLine, scan } from "./parse.ts";
import { deleteConfirmer } from "./prompt.ts";
import { printError, printOutcome } from "./render.ts";
import { type Setup, setUp } from "./setup.ts";
import { COMMANDS } from "./spec.ts";
import { flag } from "./values.ts";
import { VERSION } from "../version.ts";

/** The usage printed with a usage error: the command's own when the word names one. */
function usageFor(word: string | undefined): string {
  const specs = COMMANDS.filter((c) => c.name.split(" ")[0] === word);
  return specs.length > 0 ? commandHelp(specs) : overview();
}

/**
 * Runs the CLI with `args`; returns the exit code (printing as it goes).
 *
 * @param args command-line arguments (without the program name)
 */
export async function main(args: string[]): Promise<number> {
  const { word, json } = scan(args);
  let setup: Setup | undefined;
  try {
    const line = parseCommandLine(args);
    // Under `--json` a script gets one JSON object, whatever it asked for.
    if (line.kind === "version") {
      console.log(
        json ? JSON.stringify({ command: "version", version: VERSION }) : `s3sync ${VERSION}`,
      );
      return EXIT.ok;
    }
    if (line.kind === "overview") {
      if (!line.asked && json) {
        printError(undefined, { code: "usage", message: "no command given" }, json);
        return EXIT.usage;
      }
      if (json) console.log(JSON.stringify({ command: "help", usage: overview() }));
      else (line.asked ? console.log : console.error)(overview());
      return line.asked ? EXIT.ok : EXIT.usage;
    }
    if (line.kind === "help") {
      const usage = commandHelp(line.specs);
      const names = line.specs.map((spec) => spec.name);
      console.log(json ? JSON.stringify({ command: "help", commands: names, usage }) : usage);
      return EXIT.ok;
    }
    setup = setUp(line.values);
    if (line.spec.needsCache && setup.ctx.namespace === undefined) {
      // No `--namespace`: a cache that holds the namespaced layout is refused (the core names
      // the namespace to pass) rather than read as a solo one.
      bindUnnamed(await setup.ctx.cache.topLevel(), "cli");
    }
    const outcome = await RUNNERS[line.spec.name]({
      ctx: setup.ctx,
      values: line.values,
      args: line.args,
      confirmDeletes: deleteConfirmer(flag(line.values, "json")),
    });
    printOutcome(word!, outcome, json);
    return outcome.code;
  } catch (error) {
    const code = error instanceof SyncError ? error.code : "failed";
    const message = error instanceof SyncError ? error.message : describe(error);
    printError(word, { code, message }, json, usageFor(word));
    return exitCodeOfError(code);
  } finally {
    setup?.dispose();
  }
}
