/**
 * Progress on stderr: a live line on a terminal, plain lines otherwise (logs, CI), no colour
 * when `NO_COLOR` is set.
 *
 * @module
 */
import type { Progress } from "../io/engine.ts";

/** Fewest milliseconds between two redraws of the live line (about ten a second). */
const REDRAW_MS = 100;

/**
 * A progress callback that prints to stderr.
 *
 * @param stream where to print (default stderr)
 * @param clock milliseconds now (tests pass a fake one)
 */
export function progressPrinter(
  stream: { isTerminal(): boolean; writeSync(b: Uint8Array): number } = Deno.stderr,
  clock: () => number = () => performance.now(),
): (p: Progress) => void {
  const encoder = new TextEncoder();
  const tty = stream.isTerminal();
  const color = tty && !Deno.env.get("NO_COLOR");
  let lastPlain = 0;
  let lastDrawn = -Infinity;
  return (p) => {
    if (p.total === 0) return;
    const text = `${p.phase}: ${p.done}/${p.total} files` +
      (p.failed ? ` (${p.failed} failed)` : "") +
      `, ${((p.bytes + p.inFlightBytes) / 1024).toFixed(0)} KiB` +
      (p.totalBytes ? ` of ${(p.totalBytes / 1024).toFixed(0)} KiB` : "");
    if (tty) {
      const last = p.done === p.total;
      // A redraw per file is ~50 bytes each: 6,000 files wrote ~300 KB to the terminal.
      // Throttled, except for the last line, which must always show.
      if (!last && clock() - lastDrawn < REDRAW_MS) return;
      lastDrawn = clock();
      const line = color ? `\x1b[2K\r\x1b[36m${text}\x1b[0m` : `\r${text}`;
      stream.writeSync(encoder.encode(last ? `${line}\n` : line));
    } else if (p.done === p.total || p.done - lastPlain >= Math.max(100, p.total / 10)) {
      lastPlain = p.done;
      stream.writeSync(encoder.encode(`${text}\n`));
    }
  };
}
