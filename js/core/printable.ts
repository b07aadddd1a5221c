/**
 * Text from the bucket (a lock's holder, a key, a server's message) shown to a person: control
 * characters, DEL, C1 controls and bidirectional overrides are escaped (`\u{1b}`), so a hostile
 * string can neither drive the terminal (`\e[2J` clears it, `\a` rings) nor forge a line of
 * output (a newline) or reorder what is shown. Everything else is kept as is.
 *
 * @module
 */

// C0 controls, DEL, C1 controls, and the bidi embeddings, overrides and isolates.
// deno-lint-ignore no-control-regex -- matching control characters is the point
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/gu;

/**
 * `text` with every character that could drive a terminal or forge output escaped.
 *
 * @param keepNewlines keep `\n` (a message of several lines of our own)
 */
export function printable(text: string, keepNewlines = false): string {
  return text.replace(
    UNPRINTABLE,
    (c) =>
      keepNewlines && c === "\n" ? c : `\\u{${c.codePointAt(0)!.toString(16).padStart(2, "0")}}`,
  );
}
