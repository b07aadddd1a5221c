/**
 * Progress on stderr: a live line on a terminal, plain lines otherwise (logs, CI), no colour
 * when `NO_COLOR` is set.
 *
 * @module
 */
import type { Progress } from "./engine.ts";

/**
 * A progress callback that prints to stderr.
 *
 * @param stream where to print (default stderr)
 */
export function progressPrinter(
  stream: { isTerminal(): boolean; writeSync(b: Uint8Array): number } = Deno.stderr,
): (p: Progress) => void {
  const encoder = new TextEncoder();
  const tty = stream.isTerminal();
  const color = tty && !Deno.env.get("NO_COLOR");
  let lastPlain = 0;
  return (p) => {
    if (p.total === 0) return;
    const text = `${p.phase}: ${p.done}/${p.total} files, ${(p.bytes / 1024).toFixed(0)} KiB`;
    if (tty) {
      const line = color ? `\x1b[2K\r\x1b[36m${text}\x1b[0m` : `\r${text}`;
      stream.writeSync(encoder.encode(p.done === p.total ? `${line}\n` : line));
    } else if (p.done === p.total || p.done - lastPlain >= Math.max(100, p.total / 10)) {
      lastPlain = p.done;
      stream.writeSync(encoder.encode(`${text}\n`));
    }
  };
}
