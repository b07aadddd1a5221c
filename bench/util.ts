/**
 * Small helpers shared by the benchmark scripts: statistics, process memory, child processes.
 *
 * @module
 */

/** Median of a non-empty list. */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** Rounds to `digits` decimals (keeps results.json readable). */
export function round(value: number, digits = 1): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

/** Bytes in a MiB. */
export const MIB = 1024 * 1024;

/** Runs V8's collector when the process was started with `--expose-gc` (else does nothing). */
export function gc(): void {
  (globalThis as { gc?: () => void }).gc?.();
}

function statusKb(field: "VmHWM" | "VmRSS"): number {
  const status = Deno.readTextFileSync("/proc/self/status");
  const match = status.match(new RegExp(`^${field}:\\s+(\\d+) kB`, "m"));
  return match ? Number(match[1]) * 1024 : NaN;
}

/** Resident set size of this process now, in bytes (Linux). */
export function rssNow(): number {
  return statusKb("VmRSS");
}

/** Peak resident set size since the last {@link resetPeakRss}, in bytes (Linux `VmHWM`). */
export function peakRss(): number {
  return statusKb("VmHWM");
}

/**
 * Resets the kernel's peak-RSS mark to the current RSS (`/proc/self/clear_refs` `5`, Linux ≥ 4.0),
 * so {@link peakRss} then covers only what runs after this call.
 */
export function resetPeakRss(): void {
  Deno.writeTextFileSync("/proc/self/clear_refs", "5");
}

/**
 * Runs a Deno script in a fresh process and parses the one JSON object it prints last on
 * stdout. A fresh process per measurement keeps one size's heap and WASM memory (which never
 * shrinks) out of another's numbers.
 *
 * @param script path of the script
 * @param args its arguments
 * @param v8Flags V8 flags, e.g. `--expose-gc`
 */
export async function runDenoJson<T>(
  script: string,
  args: string[],
  v8Flags: string[],
): Promise<T> {
  const command = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-all",
      "--quiet",
      ...(v8Flags.length ? [`--v8-flags=${v8Flags.join(",")}`] : []),
      script,
      ...args,
    ],
    stdout: "piped",
    stderr: "inherit",
  });
  const out = await command.output();
  const text = new TextDecoder().decode(out.stdout).trim();
  if (!out.success) throw new Error(`${script} ${args.join(" ")} exited ${out.code}`);
  const last = text.split("\n").pop() ?? "";
  return JSON.parse(last) as T;
}

/** Reads `--name value` from `Deno.args`. */
export function flag(name: string): string | undefined {
  const at = Deno.args.indexOf(`--${name}`);
  return at >= 0 ? Deno.args[at + 1] : undefined;
}
