/**
 * The tombstone journal beside the sidecar. `markDirty` through the service appends one line per
 * tombstone here instead of rewriting the whole sidecar (which cost O(n) per call with n
 * tombstones pending); whoever reads the sidecar reads it with the journal folded in
 * ({@link readSidecar}), and the push, which forgets the tombstones it acted on, takes the
 * journal before it rewrites the sidecar ({@link takeJournal}) so a line it folded can never be
 * folded again after its tombstone was consumed.
 *
 * Line format, folding and the rules for torn or malformed lines are the core's
 * (`src/sync_state.rs`).
 *
 * @module
 */
import type { CacheStore } from "./cache_fs.ts";
import { journalLine, sidecarFoldJournal } from "./core.ts";
import { JOURNAL, JOURNAL_TAKEN, SIDECAR } from "./context.ts";

/**
 * Appends, takes and `markDirty` rewrites of one cache, in this process, one at a time: an
 * append that had opened the journal before a take moved it would otherwise land in the taken
 * file after the take read it, and be dropped with it; two rewrites that read the same sidecar
 * would each write it without the other's tombstone.
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
 * Records a tombstone (already normalised by the core) in the journal.
 *
 * @param cache the cache folder
 * @param tombstone the cache-relative path the core returned from `normalizeTombstone`
 */
export function appendTombstone(cache: CacheStore, tombstone: string): Promise<void> {
  return exclusive(cache, () => cache.append(JOURNAL, journalLine(tombstone)));
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
  const sidecar = (await cache.readFile(path)) ?? undefined;
  // Only a regular file counts (the same test a take uses): a link planted at the journal's
  // name would otherwise be read on every sync and never taken, its lines coming back forever.
  if ((await cache.stat(JOURNAL)) === null) return sidecar;
  const journal = await cache.readFile(JOURNAL);
  return journal === null ? sidecar : sidecarFoldJournal(sidecar, journal);
}

/**
 * For a run about to rewrite the sidecar (the push at its end, a pull that vouches for the
 * cache): takes the journal and reads the sidecar as it is now, the taken lines folded in. The
 * run decides what to write from this, not from its first read, so what others recorded
 * meanwhile is kept. Settle the take with {@link settleTaken} on every path that follows.
 *
 * @param cache the cache folder
 * @param path the sidecar's name
 */
export async function takeForRewrite(
  cache: CacheStore,
  path: string = SIDECAR,
): Promise<{ taken: TakenJournal; sidecarNow: Uint8Array | undefined }> {
  const taken = await takeJournal(cache);
  try {
    const raw = (await cache.readFile(path)) ?? undefined;
    return { taken, sidecarNow: taken.moved ? sidecarFoldJournal(raw, taken.bytes) : raw };
  } catch (error) {
    await settleTaken(cache, taken, undefined, path);
    throw error;
  }
}

/**
 * Ends a take: when the sidecar on disk is `written` (the bytes the run meant to write, which
 * hold the taken lines), the taken file is dropped; otherwise (no sidecar written, or a write
 * that failed before its rename) the lines go back to the journal. Compared with the disk, not
 * inferred from the error, since a write can fail after its rename. Never throws: a failure here
 * must not hide the run's own error; it is logged (the lines then stay in the taken file, which
 * the next take removes unread, so a delete is withheld, never made).
 *
 * @param cache the cache folder
 * @param taken what {@link takeJournal} returned
 * @param written the sidecar bytes the run wrote or tried to write, if any
 * @param path the sidecar's name
 * @param log where to say that a give-back failed
 */
export async function settleTaken(
  cache: CacheStore,
  taken: TakenJournal,
  written: Uint8Array | undefined,
  path: string = SIDECAR,
  log?: (line: string) => void,
): Promise<void> {
  if (!taken.moved) return;
  try {
    const onDisk = written === undefined ? null : await cache.readFile(path);
    if (onDisk !== null && sameBytes(onDisk, written!)) await dropTakenJournal(cache, taken);
    else await giveBackJournal(cache, taken);
  } catch (error) {
    log?.(
      `could not put the tombstone journal back (${String(error)}); its deletes are withheld ` +
        `until the paths are marked again`,
    );
  }
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((byte, i) => byte === b[i]);
}

/** A journal moved aside by {@link takeJournal}, with what it held. */
export interface TakenJournal {
  /** The journal's bytes when taken (empty when there was none). */
  readonly bytes: Uint8Array;
  /** Whether a journal was moved aside (and must be dropped or given back). */
  readonly moved: boolean;
}

/**
 * Moves the journal aside and reads it, for a push about to rewrite the sidecar: its lines are
 * folded into what the push writes, and new appends start a new journal meanwhile. A taken
 * journal left by a run that crashed is removed first and never folded: its lines may be
 * tombstones a push already consumed, and folding one again would revive delete evidence that
 * was used up (losing one withholds a delete, the safe way round).
 *
 * @param cache the cache folder
 */
export function takeJournal(cache: CacheStore): Promise<TakenJournal> {
  return exclusive(cache, async () => {
    // One stat in the common case (no journal: every no-op pull passes here).
    if ((await cache.stat(JOURNAL)) === null) return { bytes: new Uint8Array(), moved: false };
    await cache.remove(JOURNAL_TAKEN);
    if (!(await cache.moveNew(JOURNAL, JOURNAL_TAKEN).catch(absentIsFalse))) {
      return { bytes: new Uint8Array(), moved: false };
    }
    return { bytes: (await cache.readFile(JOURNAL_TAKEN)) ?? new Uint8Array(), moved: true };
  });
}

/**
 * After the sidecar holding a taken journal's lines was written: drops the taken file.
 *
 * @param cache the cache folder
 * @param taken what {@link takeJournal} returned
 */
export async function dropTakenJournal(cache: CacheStore, taken: TakenJournal): Promise<void> {
  if (taken.moved) await cache.remove(JOURNAL_TAKEN);
}

/**
 * When the sidecar could not be written: appends the taken lines back to the journal, so the
 * tombstones stay recorded for the next push.
 *
 * @param cache the cache folder
 * @param taken what {@link takeJournal} returned
 */
export async function giveBackJournal(cache: CacheStore, taken: TakenJournal): Promise<void> {
  if (!taken.moved) return;
  // Appended as they were: every line starts with a newline, so a torn one cannot join the
  // next (see `journal_line` in the core).
  if (taken.bytes.length > 0) await exclusive(cache, () => cache.append(JOURNAL, taken.bytes));
  await cache.remove(JOURNAL_TAKEN);
}

/** `moveNew` of an absent journal: nothing to take. */
function absentIsFalse(error: unknown): boolean {
  if (error instanceof Deno.errors.NotFound) return false;
  if ((error as { code?: string })?.code === "ENOENT") return false;
  throw error;
}
