/**
 * Turns the command line into one command, its flags and its arguments. Every flag is checked
 * against the command's own set plus the common flags: an unknown flag, or one that belongs to
 * another command, is a usage error naming both, raised before anything is built or sent.
 *
 * @module
 */
import { parseArgs } from "node:util";
import {
  COMMAND_WORDS,
  commandNamed,
  COMMANDS,
  type CommandSpec,
  commandsTaking,
  COMMON_FLAGS,
  type FlagSpec,
  type FlagValues,
  TOP_LEVEL_FLAGS,
  usageError,
} from "./spec.ts";

/** What the command line asks for. */
export type CommandLine =
  /** `--version` without a command. */
  | { kind: "version" }
  /** The overview: `--help` without a command (`asked`), or no command at all. */
  | { kind: "overview"; asked: boolean }
  /** `<command> --help`: the usage of these commands (both for `lock --help`). */
  | { kind: "help"; specs: CommandSpec[] }
  /** Run `spec` with these flags and arguments. */
  | { kind: "run"; spec: CommandSpec; values: FlagValues; args: string[] };

/** The first look at the command line: enough to report an error in the right form. */
export interface Scan {
  /** The command word (`pull`, `lock`, ...) as typed, if any. */
  word?: string;
  /** Whether `--json` was given. */
  json: boolean;
}

type Options = Record<string, { type: "string" | "boolean"; short?: string }>;

function optionsOf(flags: Readonly<Record<string, FlagSpec>>): Options {
  const options: Options = {};
  for (const [name, spec] of Object.entries(flags)) options[name] = { type: spec.type };
  if (options.help) options.help.short = "h";
  return options;
}

/** Every flag any command takes: lets the first pass read values of misplaced flags right. */
function allOptions(): Options {
  return optionsOf(
    Object.assign({}, TOP_LEVEL_FLAGS, COMMON_FLAGS, ...COMMANDS.map((c) => c.flags)),
  );
}

function loosely(args: string[]) {
  return parseArgs({
    args,
    allowPositionals: true,
    strict: false,
    tokens: true,
    options: allOptions(),
  });
}

/**
 * The command word and `--json`, read without judging anything.
 *
 * @param args command-line arguments (without the program name)
 */
export function scan(args: string[]): Scan {
  const { values, positionals } = loosely(args);
  return { word: positionals[0], json: values.json === true };
}

/**
 * Parses `args` into what to do.
 *
 * @param args command-line arguments (without the program name)
 * @throws SyncError `usage` for an unknown command, an unknown or misplaced flag, a flag
 *   without its value, or arguments the command does not take
 */
export function parseCommandLine(args: string[]): CommandLine {
  const { values, positionals, tokens } = loosely(args);
  const help = values.help === true;
  const [word, ...rest] = positionals;
  if (word === undefined) {
    return values.version === true && !help
      ? { kind: "version" }
      : { kind: "overview", asked: help };
  }
  if (!COMMAND_WORDS.includes(word)) usageError(`unknown command ${JSON.stringify(word)}`);
  let spec: CommandSpec | undefined;
  let commandArgs = rest;
  if (word === "lock") {
    spec = commandNamed(`lock ${rest[0]}`);
    if (!spec) {
      if (help) return { kind: "help", specs: COMMANDS.filter((c) => c.name.startsWith("lock ")) };
      usageError("lock takes `status` or `release --force NONCE`");
    }
    commandArgs = rest.slice(1);
  } else {
    spec = commandNamed(word)!;
  }
  if (help) return { kind: "help", specs: [spec] };
  for (const token of tokens) {
    if (token.kind !== "option") continue;
    if (Object.hasOwn(COMMON_FLAGS, token.name) || Object.hasOwn(spec.flags, token.name)) continue;
    const owners = commandsTaking(token.name);
    usageError(
      owners.length === 0
        ? `unknown flag ${token.rawName} for ${spec.name}`
        : `${token.rawName} is not a flag of ${spec.name} (it belongs to ${owners.join(", ")})`,
    );
  }
  // Now strictly, with this command's flags only: a string flag without its value, or a value
  // given to a switch, is caught here.
  let parsed: FlagValues;
  try {
    parsed = parseArgs({
      args,
      allowPositionals: true,
      strict: true,
      options: optionsOf({ ...COMMON_FLAGS, ...spec.flags }),
    }).values;
  } catch (error) {
    usageError(`${spec.name}: ${(error as Error).message}`);
  }
  if (commandArgs.length > spec.maxArgs) {
    const extra = commandArgs.slice(spec.maxArgs).map((a) => JSON.stringify(a)).join(" ");
    usageError(
      spec.maxArgs === 0
        ? `${spec.name} takes no arguments, not ${extra}`
        : `${spec.name} takes at most ${spec.maxArgs} argument, not also ${extra}`,
    );
  }
  if (!parsed.bucket) usageError("--bucket is required");
  if (spec.needsCache && !parsed.cache) usageError("--cache is required");
  spec.check?.(parsed, commandArgs);
  return { kind: "run", spec, values: parsed, args: commandArgs };
}
