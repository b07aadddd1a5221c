/**
 * Text from the bucket (a lock's holder, a key, a server's message) shown to a person: control
 * characters, DEL, C1 controls and bidirectional overrides are escaped (`\u{1b}`), so a hostile
 * string can neither drive the terminal (`\e[2J` clears it, `\a` rings) nor forge a line of
 * output (a newline) or reorder what is shown. Everything else is kept as is. The rule is the
 * core's (`src/bytes/printable.rs`), which escapes the messages it writes itself the same way.
 *
 * @module
 */
import * as wasm from "./wasm.ts";

/**
 * `text` with every character that could drive a terminal or forge output escaped.
 *
 * @param keepNewlines keep `\n` (a message of several lines of our own)
 */
export function printable(text: string, keepNewlines = false): string {
  return wasm.printable(text, keepNewlines);
}
