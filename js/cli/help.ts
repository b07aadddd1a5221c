/**
 * The usage texts, made from the command table: the overview (`s3sync --help`) and each
 * command's own (`s3sync push --help`).
 *
 * @module
 */
import {
  COMMANDS,
  type CommandSpec,
  COMMON_FLAGS,
  type FlagSpec,
  TOP_LEVEL_FLAGS,
} from "./spec.ts";

const EXIT_LINE =
  "exit codes: 0 done, 1 failed, 2 usage, 3 a guard withheld something or a problem needs a person";

/** `--name VALUE` padded, then its help. */
function flagLines(flags: Readonly<Record<string, FlagSpec>>): string[] {
  return Object.entries(flags).map(([name, spec]) => {
    const head = `  --${name}${spec.value ? ` ${spec.value}` : ""}`;
    return head.length < 23 ? `${head.padEnd(23)}${spec.help}` : `${head}  ${spec.help}`;
  });
}

/** The command's name and synopsis, as typed. */
function invocation(spec: CommandSpec): string {
  return spec.synopsis ? `${spec.name} ${spec.synopsis}` : spec.name;
}

/** The overview: every command in one line or a few, the common flags, the exit codes. */
export function overview(): string {
  const commands = COMMANDS.flatMap((spec) => {
    const head = `  ${invocation(spec)}`;
    const [first, ...more] = spec.summary.split("\n");
    const body = more.map((line) => `${"".padEnd(23)}${line}`);
    return head.length < 23
      ? [`${head.padEnd(23)}${first}`, ...body]
      : [head, `${"".padEnd(23)}${first}`, ...body];
  });
  return [
    "usage: s3sync <command> --bucket B --cache DIR [options]",
    "",
    "commands:",
    ...commands,
    "",
    "common options:",
    ...flagLines(COMMON_FLAGS),
    "",
    "without a command:",
    ...flagLines(TOP_LEVEL_FLAGS),
    "",
    "`s3sync <command> --help` lists the options of one command.",
    "",
    EXIT_LINE,
    "",
  ].join("\n");
}

/** The usage of `specs` (one command, or both `lock` actions) with their own and common flags. */
export function commandHelp(specs: CommandSpec[]): string {
  const lines: string[] = [];
  for (const spec of specs) {
    const required = spec.needsCache ? "--bucket B --cache DIR" : "--bucket B";
    lines.push(`usage: s3sync ${invocation(spec)} ${required} [options]`, "");
    lines.push(...spec.summary.split("\n").map((line) => `  ${line}`), "");
    if (Object.keys(spec.flags).length > 0) {
      lines.push(`${spec.name} options:`, ...flagLines(spec.flags), "");
    }
  }
  // `--cache` is required only by the commands that read or write the cache.
  const common = specs.some((spec) => spec.needsCache) ? COMMON_FLAGS : {
    ...COMMON_FLAGS,
    cache: { ...COMMON_FLAGS.cache, help: "cache folder (not used by this command)" },
  };
  lines.push("common options:", ...flagLines(common), "", EXIT_LINE, "");
  return lines.join("\n");
}
