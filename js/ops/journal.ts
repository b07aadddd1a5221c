/**
 * The tombstone journal beside the sidecar. `markDirty` through the service appends one line per
 * tombstone here instead of rewriting the whole sidecar (which cost O(n) per call with n
 * tombstones pending); whoever reads the sidecar reads it with the journal folded in
 * ({@link readSidecar}), and the push, which forgets the tombstones it acted on, takes the
 * journal as it rewrites the sidecar ({@link rewriteSidecar}) so a line it folded can never be
 * folded again after its tombstone was consumed.
 *
 * Line format, folding and the rules for torn or malformed lines are the core's
 * (`src/state/sync_state.rs`).
 *
 * @module
 */
import type { CacheStore } from "../io/cache_fs.ts";
import { journalLine, sidecarFoldJournal } from "../core/mod.ts";
import { JOURNAL, JOURNAL_TAKEN, SIDECAR } from "../exec/context.ts";
import { SyncError } from "../core/errors.ts";

/**
 * Appends, `markDirty` rewrites and a sync's closing rewrite of one cache, in this process, one at
 * a time: an append that had opened the journal before a take moved it would otherwise land in
 * the taken file after the take read it, and be dropped with it; two rewrites that read the same
 * sidecar would each write it without the other's tombstone.
 */
const queues = new Map<string, Promise<unknown>>();

/**
 * Runs `run` once every earlier run queued for the same cache has settled (see `queues`).
 *
 * @param cache the cache folder
 * @param run the work: a read-modify-write of the sidecar, or of the journal
 */
export function exclusive<T>(cache: CacheStore, run: () => Promise<T>): Promise<T> {
  const before = queues.get(cache.root) ?? Promise.resolve();
  const turn = before.then(run, run);
  const settled = turn.then(() => {}, () => {});
  queues.set(cache.root, settled);
  void settled.then(() => {
    if (queues.get(cache.root) === settled) queues.delete(cache.root);
  });
  return turn;
}

/**
 * Rewrites the sidecar file with `update` applied to it as it is now (undefined: nothing to
 * write), in the cache's queue ({@link exclusive}) so a `markDirty` landing meanwhile is not
 * overwritten. For fields a run keeps for the next one (a server's verdict, the last catalog
 * export's hash): best effort, a failure is handed to `failed` and costs the next run a probe
 * or an upload. The journal is not touched (it holds tombstones only).
 *
 * @param cache the cache folder
 * @param update the sidecar's new bytes from its current ones (undefined when absent)
 * @param failed told of a read or write that failed
 */
export async function updateSidecar(
  cache: CacheStore,
  update: (sidecarNow: Uint8Array | undefined) => Uint8Array | undefined,
  failed: (error: unknown) => void,
): Promise<void> {
  try {
    await exclusive(cache, async () => {
      const written = update((await cache.readFile(SIDECAR)) ?? undefined);
      if (written) await cache.writeAtomic(SIDECAR, written, { flush: false });
    });
  } catch (error) {
    failed(error);
  }
}

/**
 * Records a tombstone (already normalised by the core) in the journal. Call it inside the cache's
 * queued section ({@link exclusive}), as `markDirty` does: an append racing a take could land in
 * the taken file after it was read.
 *
 * @param cache the cache folder
 * @param tombstone the cache-relative path the core returned from `normalizeTombstone`
 */
export function appendTombstone(cache: CacheStore, tombstone: string): Promise<void> {
  return cache.append(JOURNAL, journalLine(tombstone));
}

/**
 * The sidecar as the syncs must see it: the file with the journal folded in.
 *
 * @param cache the cache folder
 * @param path the sidecar's name (the core's machines name it in their read actions)
 * @returns the folded bytes, or undefined when neither exists
 */
export async function readSidecar(
  cache: CacheStore,
  path: string = SIDECAR,
): Promise<Uint8Array | undefined> {
  return folded(await readSidecarAndJournal(cache, path));
}

/** The sidecar's and the journal's bytes as they are now (see {@link readSidecar}). */
async function readSidecarAndJournal(
  cache: CacheStore,
  path: string,
): Promise<{ sidecar: Uint8Array | undefined; journal: Uint8Array | null }> {
  const sidecar = (await cache.readFile(path)) ?? undefined;
  // Only a regular file counts (the same test a take uses): a link planted at the journal's
  // name would otherwise be read on every sync and never taken, its lines coming back forever.
  if ((await cache.stat(JOURNAL)) === null) return { sidecar, journal: null };
  return { sidecar, journal: await cache.readFile(JOURNAL) };
}

/** The sidecar with the journal folded in. */
function folded(read: { sidecar: Uint8Array | undefined; journal: Uint8Array | null }) {
  return read.journal === null ? read.sidecar : sidecarFoldJournal(read.sidecar, read.journal);
}

/**
 * For a run that may rewrite the sidecar at its end (the push, a pull that vouches for the
 * cache): reads the sidecar as the syncs see it now (the journal folded in), lets `decide` turn
 * that into the bytes to write (undefined: nothing to write), and writes them, all in one queued
 * section (see {@link exclusive}): a `markDirty` of this process waits for the write instead of
 * landing between the read and the write, where the write would drop it.
 *
 * The journal is taken only when a sidecar is written (it then holds the journal's lines, which
 * must not be folded in again: a push consumed some of them), so a run that writes none never
 * moves it. Whether the write landed is checked on disk, not inferred from an error (a write can
 * fail after its rename): landed, the taken file is dropped, and lines another process appended
 * after the read (and a torn last line the fold skipped) go back to the journal; not landed,
 * every taken line goes back. A journal that another process took, replaced or removed since the
 * read fails the run with `lock-lost` before anything is written.
 *
 * @param cache the cache folder
 * @param decide the run's decision from the sidecar as it is now; it may throw (nothing is
 *   taken or written then)
 * @param path the sidecar's name
 * @param log where to say that putting lines back failed
 * @returns the bytes written, or undefined when `decide` wrote none
 */
export function rewriteSidecar(
  cache: CacheStore,
  decide: (sidecarNow: Uint8Array | undefined) => Uint8Array | undefined,
  path: string = SIDECAR,
  log?: (line: string) => void,
): Promise<Uint8Array | undefined> {
  return exclusive(cache, async () => {
    const read = await readSidecarAndJournal(cache, path);
    const journal = read.journal;
    const bytes = decide(folded(read));
    if (bytes === undefined) return undefined;
    const taken = journal === null ? NOTHING_TAKEN : await takeNow(cache);
    if (journal !== null && !(taken.moved && startsWith(taken.bytes, journal))) {
      // Another process took, replaced or removed the journal since the read (only a second
      // writer ignoring swamp core's lock can): the sidecar decided from it may hold lines that
      // process already acted on. Nothing is written; whatever was taken goes back whole.
      await settleTaken(cache, taken, undefined, path, 0, log);
      throw new SyncError(
        "lock-lost",
        "another process changed the tombstone journal during this run; nothing was recorded " +
          "in the cache and no tombstone was lost: run it again",
      );
    }
    try {
      await cache.writeAtomic(path, bytes);
    } finally {
      // The sidecar holds the journal's complete lines as read; a torn last line was skipped by
      // the fold, so it goes back with whatever followed it.
      await settleTaken(cache, taken, bytes, path, completeLines(journal), log);
    }
    return bytes;
  });
}

/** No journal was taken. */
const NOTHING_TAKEN: TakenJournal = { bytes: new Uint8Array(), moved: false };

/**
 * Ends a take inside the queued section: when the sidecar on disk is `written`, the lines it
 * holds (the first `folded` bytes of the taken file) are done with and only what was appended
 * after them goes back; otherwise all of it goes back. The taken file is removed either way.
 * Never throws: a failure here must not hide the run's own error; it is logged (the lines then
 * stay in the taken file, which the next take removes unread, so a delete is withheld, never
 * made).
 */
async function settleTaken(
  cache: CacheStore,
  taken: TakenJournal,
  written: Uint8Array | undefined,
  path: string,
  folded: number,
  log?: (line: string) => void,
): Promise<void> {
  if (!taken.moved) return;
  try {
    const onDisk = written === undefined ? null : await cache.readFile(path);
    const landed = onDisk !== null && sameBytes(onDisk, written!);
    // The journal only grows, so what another process appended after the read is the tail
    // past the bytes that were read (and folded into what was written).
    const back = landed ? taken.bytes.subarray(Math.min(folded, taken.bytes.length)) : taken.bytes;
    // Appended as they were: every line starts with a newline, so a torn one cannot join the
    // next (see `journal_line` in the core).
    if (back.length > 0) await cache.append(JOURNAL, back);
    await cache.remove(JOURNAL_TAKEN);
  } catch (error) {
    log?.(
      `could not put the tombstone journal back (${String(error)}); its deletes are withheld ` +
        `until the paths are marked again`,
    );
  }
}

/** The length of `journal`'s complete lines (up to and with its last newline); 0 for none. */
function completeLines(journal: Uint8Array | null): number {
  return journal === null ? 0 : journal.lastIndexOf(0x0a) + 1;
}

/** True when `bytes` begins with `prefix`. */
function startsWith(bytes: Uint8Array, prefix: Uint8Array): boolean {
  return bytes.length >= prefix.length && sameBytes(bytes.subarray(0, prefix.length), prefix);
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((byte, i) => byte === b[i]);
}

/** A journal moved aside, with what it held. */
interface TakenJournal {
  /** The journal's bytes when taken (empty when there was none). */
  readonly bytes: Uint8Array;
  /** Whether a journal was moved aside (and must be settled). */
  readonly moved: boolean;
}

/**
 * Moves the journal aside and reads it, inside the cache's queued section: new appends start a
 * new journal meanwhile. A taken journal left by a run that crashed is removed first and never
 * folded: its lines may be tombstones a push already consumed, and folding one again would
 * revive delete evidence that was used up (losing one withholds a delete, the safe way round).
 */
async function takeNow(cache: CacheStore): Promise<TakenJournal> {
  if ((await cache.stat(JOURNAL)) === null) return NOTHING_TAKEN;
  await cache.remove(JOURNAL_TAKEN);
  if (!(await cache.moveNew(JOURNAL, JOURNAL_TAKEN).catch(absentIsFalse))) return NOTHING_TAKEN;
  return { bytes: (await cache.readFile(JOURNAL_TAKEN)) ?? new Uint8Array(), moved: true };
}

/** `moveNew` of an absent journal: nothing to take. */
function absentIsFalse(error: unknown): boolean {
  if (error instanceof Deno.errors.NotFound) return false;
  if ((error as { code?: string })?.code === "ENOENT") return false;
  throw error;
}
