/** Text from the bucket shown to a person: nothing in it can drive the terminal or forge a line. */
import { printable } from "../../js/core/printable.ts";
import { assertEquals } from "../harness/assert.ts";

Deno.test("control characters, DEL, C1 and bidi overrides are escaped; the rest is kept", () => {
  assertEquals(printable("ok@host"), "ok@host");
  assertEquals(printable("\x1b[2Jgone\x07"), "\\u{1b}[2Jgone\\u{07}");
  assertEquals(printable("a\nforged line"), "a\\u{0a}forged line");
  assertEquals(printable("tab\there\r"), "tab\\u{09}here\\u{0d}");
  assertEquals(printable("\x7f\x9b"), "\\u{7f}\\u{9b}");
  assertEquals(printable("abc\u202edcba"), "abc\\u{202e}dcba");
  assertEquals(printable("données ✓ 日本"), "données ✓ 日本");
});

Deno.test("a message of our own keeps its newlines when asked, and nothing else", () => {
  assertEquals(printable("line one\nline two\x1b", true), "line one\nline two\\u{1b}");
});
