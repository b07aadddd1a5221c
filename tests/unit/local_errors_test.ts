/**
 * Local file-system failures get their own codes and name the path (issue 17): a full disk, a
 * read-only or unwritable cache, a file where a folder is needed. Driven with the errors the
 * runtime throws (the CLI test covers `ENOTDIR` end to end; a full disk and a read-only mount
 * cannot be made in a test running as root).
 */
import { SyncError } from "../../js/core/errors.ts";
import { localFailure } from "../../js/io/local_errors.ts";
import { exitCodeOfError } from "../../js/cli/exit_codes.ts";
import { assert, assertEquals } from "../harness/assert.ts";

function coded(code: string, message: string): Error {
  return Object.assign(new Error(message), { code });
}

Deno.test("ENOSPC, EROFS, EACCES and ENOTDIR each have their code, the path and what to do", () => {
  const cases: [Error, string, number][] = [
    [coded("ENOSPC", "No space left on device (os error 28)"), "disk-full", 1],
    [new Error("Read-only file system (os error 30)"), "cache-not-writable", 1],
    [new Deno.errors.PermissionDenied("Permission denied (os error 13)"), "cache-not-writable", 1],
    [new Deno.errors.NotADirectory("Not a directory (os error 20)"), "cache-not-a-folder", 2],
  ];
  for (const [error, code, exit] of cases) {
    const failure = localFailure(error, "/cache/ns/data/x");
    assert(failure instanceof SyncError, error.message);
    assertEquals(failure.code, code, error.message);
    assert(failure.message.includes("/cache/ns/data/x"), failure.message);
    assertEquals(exitCodeOfError(failure.code), exit);
  }
  assert(localFailure(new Error("read-only file system"), "/c")!.message.includes("writable"));
  assertEquals(localFailure(new Deno.errors.NotFound("gone"), "/c"), undefined);
  assertEquals(localFailure(new SyncError("aborted", "x"), "/c"), undefined);
});
