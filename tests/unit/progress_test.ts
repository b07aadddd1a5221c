/**
 * The progress line: on a terminal it is redrawn at most about ten times a second (a redraw per
 * file wrote ~300 KB for 6,000 files), the last state always shows, and failures are counted.
 */
import { progressPrinter } from "../../js/exec/progress.ts";
import { assert, assertEquals } from "../harness/assert.ts";

/** A terminal that records what was written. */
function terminal(): { writes: string[]; isTerminal(): boolean; writeSync(b: Uint8Array): number } {
  const writes: string[] = [];
  return {
    writes,
    isTerminal: () => true,
    writeSync(b: Uint8Array) {
      writes.push(new TextDecoder().decode(b));
      return b.length;
    },
  };
}

Deno.test("on a terminal, 6,000 updates within a second redraw about ten times, and the last one shows", () => {
  const tty = terminal();
  let now = 0;
  const print = progressPrinter(tty, () => now);
  for (let done = 1; done <= 6000; done++) {
    now = done / 6; // 6,000 updates over one second
    print({
      phase: "download",
      done,
      failed: 0,
      total: 6000,
      bytes: done * 1024,
      inFlightBytes: 0,
    });
  }
  assert(tty.writes.length <= 12, `${tty.writes.length} redraws`);
  assert(tty.writes.at(-1)!.includes("download: 6000/6000 files"), tty.writes.at(-1));
  assert(tty.writes.at(-1)!.endsWith("\n"));
});

Deno.test("failed items are counted in the line", () => {
  const tty = terminal();
  const print = progressPrinter(tty, () => 0);
  print({ phase: "upload", done: 3000, failed: 2400, total: 3000, bytes: 0, inFlightBytes: 0 });
  assertEquals(tty.writes.length, 1);
  assert(tty.writes[0].includes("3000/3000 files (2400 failed)"), tty.writes[0]);
});
