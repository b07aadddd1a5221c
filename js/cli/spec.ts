/**
 * What the command line accepts: the common flags, and for each command its own flags, its
 * arguments and the checks that need no request. The single source for parsing and for help.
 *
 * @module
 */
import { SyncError } from "../core/errors.ts";

/** One flag: its type, the name of its value in help, and one line of help. */
export interface FlagSpec {
  /** `string` flags take a value; `boolean` flags do not. */
  type: "string" | "boolean";
  /** Placeholder of the value in help (string flags). */
  value?: string;
  /** One line of help. */
  help: string;
}

/** Parsed flag values, by flag name. */
export type FlagValues = Readonly<Record<string, string | boolean | undefined>>;

/** One command (or `lock` sub-command) of the CLI. */
export interface CommandSpec {
  /** The words that name it, e.g. `push` or `lock release`. */
  name: string;
  /** Its synopsis after the name, e.g. `REL...`. */
  synopsis: string;
  /** What it does, for help (may span lines). */
  summary: string;
  /** Its own flags, beyond the common ones. */
  flags: Readonly<Record<string, FlagSpec>>;
  /** Most arguments (after the name) it takes. */
  maxArgs: number;
  /** Whether `--cache` is required. */
  needsCache: boolean;
  /** Checks of flags and arguments that need no request; throws a usage error. */
  check?: (values: FlagValues, args: string[]) => void;
}

/** Flags every command takes. */
export const COMMON_FLAGS: Readonly<Record<string, FlagSpec>> = {
  bucket: { type: "string", value: "B", help: "bucket name (required)" },
  cache: {
    type: "string",
    value: "DIR",
    help: "cache folder, e.g. ~/.swamp/repos/<repoId> (required)",
  },
  prefix: { type: "string", value: "P", help: "key prefix inside the bucket" },
  namespace: {
    type: "string",
    value: "NS",
    help: "bind to a namespace: remote {prefix}/{NS}/..., local {cache}/{NS}/...",
  },
  endpoint: {
    type: "string",
    value: "URL",
    help: "S3-compatible endpoint (credentials come from the standard AWS chain)",
  },
  region: { type: "string", value: "R", help: "region (default: AWS_REGION, else us-east-1)" },
  "force-path-style": {
    type: "boolean",
    help: "path-style addressing (most S3-compatible servers need it)",
  },
  concurrency: {
    type: "string",
    value: "N",
    help: "transfers in flight (default: pull 50; push, migrate 25)",
  },
  "page-size": { type: "string", value: "N", help: "keys per listing request (default 1000)" },
  timeout: {
    type: "string",
    value: "S",
    help:
      "give up a request after S seconds without data (default 30, or SWAMP_S3_REQUEST_TIMEOUT_MS in ms; a slow link may take longer)",
  },
  "max-index-entries": {
    type: "string",
    value: "N",
    help: "load an index of at most N entries (default 1000000; a longer one is index-too-large)",
  },
  json: { type: "boolean", help: "print one JSON object on stdout" },
  "no-lock": {
    type: "boolean",
    help: "do not take the datastore lock around publishing (single-writer buckets only)",
  },
  "lock-wait": {
    type: "string",
    value: "S",
    help: "wait at most S seconds for the datastore lock (default 60)",
  },
  help: { type: "boolean", help: "print the usage of the command and exit (also -h)" },
};

/** Flags taken only without a command (`s3sync --version`), listed in the overview. */
export const TOP_LEVEL_FLAGS: Readonly<Record<string, FlagSpec>> = {
  version: { type: "boolean", help: "print the version and exit" },
};

/** Throws the usage error `message`: reported with the command's usage, exit 2. */
export function usageError(message: string): never {
  throw new SyncError("usage", message);
}

/** The planning flags `plan` and `push` share: they change which deletes the plan holds. */
const PLANNING_FLAGS: Record<string, FlagSpec> = {
  "delete-missing": {
    type: "boolean",
    help: "also delete files absent locally without a tombstone (guards still apply)",
  },
  "max-deletes": { type: "string", value: "N", help: "allow up to N deletes (default 500)" },
  "max-delete-percent": {
    type: "string",
    value: "P",
    help: "allow deletes up to P% of the index (default 25, above 10 deletes)",
  },
  "allow-catalog-shrink": {
    type: "boolean",
    help: "let .catalog-export.json replace a much larger remote copy",
  },
};

const APPLY_REBUILD: FlagSpec = {
  type: "boolean",
  help: "publish the rebuilt index (create-only; a corrupt index is replaced)",
};

/** Every command, in the order help lists them. */
export const COMMANDS: readonly CommandSpec[] = [
  {
    name: "pull",
    synopsis: "",
    summary: "download what the remote index names into the cache",
    flags: {
      "metadata-only": { type: "boolean", help: "lazy hydration: leave data/**/raw bytes remote" },
      verify: {
        type: "boolean",
        help: "skip the fast path: walk and compare every file (brings back files deleted here)",
      },
      "max-missing": {
        type: "string",
        value: "N",
        help:
          "stop after N objects the index names are missing in a row (default 100; 0 reads every entry)",
      },
    },
    maxArgs: 0,
    needsCache: true,
  },
  {
    name: "plan",
    synopsis: "",
    summary: "show what a push would do (uploads, deletes and their evidence, guards)",
    flags: {
      ...PLANNING_FLAGS,
      out: { type: "string", value: "FILE", help: "save the plan for `push --plan FILE`" },
    },
    maxArgs: 0,
    needsCache: true,
  },
  {
    name: "push",
    synopsis: "",
    summary: "upload new work, delete on evidence only, publish the index",
    flags: {
      "dry-run": { type: "boolean", help: "plan only, change nothing" },
      yes: {
        type: "boolean",
        help: "confirm deletes without asking (required for deletes without a terminal)",
      },
      ...PLANNING_FLAGS,
      plan: {
        type: "string",
        value: "FILE",
        help: "apply a saved plan (`plan --out FILE`), only if nothing changed since",
      },
      "allow-unconditional": {
        type: "boolean",
        help: "publish even if the server ignores conditional writes (single writer only)",
      },
    },
    maxArgs: 0,
    needsCache: true,
  },
  {
    name: "mark-deleted",
    synopsis: "REL...",
    summary: "record that these files (or folders) were deleted on purpose",
    flags: {},
    maxArgs: Infinity,
    needsCache: true,
    check: (_values, args) => {
      if (args.length === 0) usageError("mark-deleted needs at least one path");
    },
  },
  {
    name: "resolve",
    synopsis: "--keep mine|theirs [REL...]",
    summary: "settle files changed here and in the bucket (all with a conflict copy when no\n" +
      "REL is named): mine puts your kept copy back and pushes it, theirs keeps the\n" +
      "bucket's and drops your copy",
    flags: {
      keep: { type: "string", value: "mine|theirs", help: "which version to keep (required)" },
    },
    maxArgs: Infinity,
    needsCache: true,
    check: (values) => {
      if (values.keep !== "mine" && values.keep !== "theirs") {
        usageError("resolve needs --keep mine or --keep theirs");
      }
    },
  },
  {
    name: "rebuild-index",
    synopsis: "",
    summary: "list the bucket and rebuild the index (dry run; --apply publishes)",
    flags: {
      apply: APPLY_REBUILD,
      force: { type: "boolean", help: "with --apply, replace an index that exists and parses" },
    },
    maxArgs: 0,
    needsCache: true,
  },
  {
    name: "doctor",
    synopsis: "[--probe-server]",
    summary: "find layout problems (exit 3 when there are any)",
    flags: {
      "probe-server": {
        type: "boolean",
        help:
          "also ask the server which conditional requests it honours (writes and removes one probe object in the control folder)",
      },
    },
    maxArgs: 0,
    needsCache: true,
  },
  {
    name: "lock status",
    synopsis: "",
    summary: "show who holds the datastore lock, since when, and whether it is stale",
    flags: {},
    maxArgs: 0,
    needsCache: false,
  },
  {
    name: "lock release",
    synopsis: "--force NONCE",
    summary: "delete a stuck lock, only if it still carries NONCE",
    flags: { force: { type: "boolean", help: "required: release a lock another run holds" } },
    maxArgs: 1,
    needsCache: false,
    check: (values, args) => {
      if (!values.force || args.length === 0) {
        usageError("lock release needs --force and the lock's NONCE (see `s3sync lock status`)");
      }
    },
  },
  {
    name: "repair",
    synopsis: "",
    summary: "plan the layout repair (--apply carries it out; never writes the bucket)",
    flags: { apply: { type: "boolean", help: "carry the repair out" } },
    maxArgs: 0,
    needsCache: true,
  },
  {
    name: "migrate",
    synopsis: "",
    summary: "copy a solo-layout bucket into --namespace server-side (--apply; only to\n" +
      "absent keys: an existing different object is a conflict, kept, exit 3;\n" +
      "originals whose copies are verified and indexed are removed only with\n" +
      "--remove-originals)",
    flags: {
      apply: { type: "boolean", help: "copy, verify and index (a dry run without it)" },
      "remove-originals": {
        type: "boolean",
        help: "with --apply, remove the solo originals whose copies are verified and indexed",
      },
    },
    maxArgs: 0,
    needsCache: false,
    check: (values) => {
      if (values["remove-originals"] && !values.apply) {
        usageError("--remove-originals needs --apply");
      }
    },
  },
];

/** The command named `name` (`lock release` for the lock's actions), if there is one. */
export function commandNamed(name: string): CommandSpec | undefined {
  return COMMANDS.find((c) => c.name === name);
}

/** The command words: `pull`, ..., `lock`, `migrate`. */
export const COMMAND_WORDS: readonly string[] = [
  ...new Set(COMMANDS.map((c) => c.name.split(" ")[0])),
];

/** The commands that take the flag `name` (for a message about a misplaced flag). */
export function commandsTaking(name: string): string[] {
  return COMMANDS.filter((c) => Object.hasOwn(c.flags, name)).map((c) => c.name);
}
