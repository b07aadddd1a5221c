/**
 * Every export of the WASM module, called through the real build with hostile input: each one
 * returns or throws an `Error` carrying a stable `code`, never a trap (a Rust panic crosses as
 * `WebAssembly.RuntimeError: unreachable` and poisons the instance). A new export without a case
 * here fails the coverage test, so none is added untested.
 */
import * as wasm from "../../js/core/wasm.ts";
import { assert, assertEquals, assertThrows } from "../harness/assert.ts";

const encoder = new TextEncoder();
/** Bytes no format accepts: invalid UTF-8, NULs, separators, a truncated JSON document. */
const JUNK = new Uint8Array([0xff, 0xfe, 0x00, 0x0a, 0x1e, 0x1f, 0x7b, 0x22, 0x76, 0xc3]);
const DEEP = encoder.encode("[".repeat(100_000));
const EVIL = "../../etc/passwd\u0000\\C:aux";
const HUGE = "x".repeat(70_000);

/** `value` as whatever an export's generated type asks for: hostile input ignores the types. */
function hostile(value: unknown): never {
  return value as never;
}

/** Runs `call`; a throw must be an `Error` with a string `code`, never a trap. */
function survives(what: string, call: () => unknown): void {
  try {
    call();
  } catch (error) {
    assert(!(error instanceof WebAssembly.RuntimeError), `${what} trapped: ${error}`);
    assert(error instanceof Error, `${what} threw a non-Error: ${String(error)}`);
    const code = (error as Error & { code?: unknown }).code;
    assert(typeof code === "string" && code.length > 0, `${what} threw without a code: ${error}`);
  }
}

/** A planner with an index loaded, for methods that need one. */
function loaded(): wasm.Planner {
  const planner = new wasm.Planner("ns", "p");
  planner.loadIndex(encoder.encode('{"version":1,"entries":{}}'));
  return planner;
}

/** One hostile case per free function. */
const FUNCTIONS: Record<string, () => unknown> = {
  bookkeepingNames: () => wasm.bookkeepingNames(),
  classifyCachePath: () => wasm.classifyCachePath(EVIL, EVIL, [EVIL, HUGE]),
  codeLists: () => wasm.codeLists(),
  callOutcome: () =>
    wasm.callOutcome(hostile({
      run: "sideways",
      warnings: [{ code: EVIL, message: HUGE }],
      failures: [{ item: DEEP, code: 7 }],
      moved: -1,
    })),
  findCollisions: () => wasm.findCollisions([EVIL, "a", "a/b", "A", HUGE]),
  findContamination: () => wasm.findContamination(EVIL, JUNK),
  bindUnnamed: () =>
    wasm.bindUnnamed(
      hostile([{ name: EVIL, marker: true }, { name: DEEP, marker: "yes" }, 7]),
      hostile("robot"),
    ),
  journalLine: () => wasm.journalLine(EVIL + HUGE),
  judgeExisting: () =>
    wasm.judgeExisting(
      hostile({ size: -1, sha256: 7 }),
      hostile({ sha256: DEEP, size: -2 }),
      hostile({
        exists: "yes",
        size: NaN,
        etag: DEEP,
      }),
    ),
  versionAtKey: () =>
    wasm.versionAtKey(
      hostile({ exists: "yes", size: -1, etag: DEEP }),
      hostile({ etag: 7, size: NaN }),
    ),
  judgeAside: () => {
    wasm.judgeAside({ size: -1, sha256: EVIL }, JUNK as never, HUGE, DEEP as never);
    wasm.judgeAside({ size: 1, sha256: EVIL }, undefined, EVIL, { size: NaN } as never);
    return wasm.judgeAside(
      undefined,
      { size: 2 ** 64, sha256: 7 } as never,
      undefined,
      null as never,
    );
  },
  judgeLostCondition: () => wasm.judgeLostCondition(HUGE, NaN, { exists: true, size: -1 }),
  afterLostRace: () => wasm.afterLostRace(NaN, Infinity),
  lockAssess: () => wasm.lockAssess(DEEP, NaN, EVIL, -1e300),
  lockDefaults: () => wasm.lockDefaults(),
  afterNotFound: () => wasm.afterNotFound(EVIL, HUGE, true, -1),
  checkMissingInARow: () => wasm.checkMissingInARow(-1, NaN),
  lockReadable: () => wasm.lockReadable(DEEP),
  printable: () => wasm.printable(EVIL + HUGE, true),
  isStaleTemp: () => wasm.isStaleTemp(NaN, Infinity),
  lockHeartbeatMs: () => wasm.lockHeartbeatMs(NaN),
  mapRel: () => wasm.mapRel(EVIL, EVIL, EVIL),
  mapCallerPath: () => wasm.mapCallerPath(`ns/${EVIL}`, "ns", EVIL),
  scopeForModels: () => wasm.scopeForModels(hostile([{ modelType: 7 }, EVIL])),
  partitionKey: () => wasm.partitionKey(EVIL),
  planMigrate: () => wasm.planMigrate(EVIL, EVIL, JUNK, DEEP, JUNK, new Date(NaN)),
  relFromRemoteKey: () => wasm.relFromRemoteKey(EVIL, "ns"),
  sidecarFoldJournal: () => wasm.sidecarFoldJournal(DEEP, JUNK),
  sidecarLazyPullActive: () => wasm.sidecarLazyPullActive(DEEP),
  sidecarUnreadable: () => wasm.sidecarUnreadable(JUNK),
  sidecarWithCatalogHash: () => wasm.sidecarWithCatalogHash(DEEP, HUGE),
  sidecarWithServerVerdict: () =>
    wasm.sidecarWithServerVerdict(
      DEEP,
      { store: 7, writes: "yes", probedAtMs: -Infinity } as never,
    ),
};

/** A `Map` whose iterator throws as soon as the core walks it. */
function throwingMap(): Map<string, Uint8Array> {
  const map = new Map<string, Uint8Array>([["a", JUNK]]);
  map[Symbol.iterator] = () => {
    throw new TypeError("hostile iterator");
  };
  return map;
}

/** One hostile case per `Planner` method (called out of order, with junk, or both). */
const METHODS: Record<string, () => unknown> = {
  free: () => new wasm.Planner("ns", "p").free(),

  applyPull: () => loaded().applyPull(JUNK, [EVIL], [{ rel: EVIL }] as never),
  conflictCopyPath: () => loaded().conflictCopyPath(EVIL, HUGE),
  mergePointer: () => loaded().mergePointer(JUNK, new Uint8Array(1 << 20).fill(0x39), false),
  indexJson: () => new wasm.Planner("ns", "p").indexJson(true),
  indexLength: () => new wasm.Planner("ns", "p").indexLength,
  listingPrefix: () => new wasm.Planner("ns", "p").listingPrefix,
  addListingPage: () => {
    const p = new wasm.Planner("ns", "p");
    p.addListingPage(JUNK, [EVIL]);
  },
  beginRebuild: () => new wasm.Planner("ns", "p").beginRebuild("not a time" as never),
  finishRebuild: () => new wasm.Planner("ns", "p").finishRebuild(new Date(NaN)),
  loadBase: () => loaded().loadBase(DEEP),
  loadIndex: () => new wasm.Planner("ns", "p").loadIndex(DEEP),
  loadShards: () =>
    new wasm.Planner("ns", "p").loadShards(JUNK, new Map([[EVIL, 7 as never], ["a", JUNK]])),
  localIndexAfterPull: () => new wasm.Planner("ns", "p").localIndexAfterPull(),
  localIndexAfterPush: () => new wasm.Planner("ns", "p").localIndexAfterPush(),
  pushWarnings: () => new wasm.Planner("ns", "p").pushWarnings(),
  pullWarnings: () => new wasm.Planner("ns", "p").pullWarnings(),
  lockKey: () => new wasm.Planner("ns", "p").lockKey,
  normalizeTombstone: () => loaded().normalizeTombstone(EVIL),
  planBackupDedupe: () => loaded().planBackupDedupe(JUNK, { [EVIL]: EVIL } as never),
  planPull: () => loaded().planPull(JUNK, { scope: 7, tombstones: [EVIL] } as never),
  planPush: () =>
    loaded().planPush(
      JUNK,
      [EVIL],
      new Map([[EVIL, 7]]) as never,
      { maxDeletePercent: "NaN" } as never,
    ),
  planRepair: () => loaded().planRepair(JUNK, new Map([[7, EVIL]]) as never),
  planResolve: () => loaded().planResolve("both", [EVIL], JUNK),
  rebasePushShards: () => loaded().rebasePushShards(DEEP, throwingMap()),
  rebasePush: () => loaded().rebasePush(DEEP),
  remoteIndexKey: () => new wasm.Planner("ns", "p").remoteIndexKey,
  metaKey: () => new wasm.Planner("ns", "p").metaKey,
  shardKey: () => new wasm.Planner("ns", "p").shardKey(EVIL),
  controlFolder: () => new wasm.Planner("ns", "p").controlFolder,
};

/** The module's own exports that are not the core's surface. */
const NOT_CORE = new Set([
  "default",
  "initSync",
  "wasmMemoryBytes",
  "Planner",
  "PullRun",
  "PushRun",
  "RebuildRun",
  "RepairRun",
  "MigrateRun",
  "ResolveRun",
  "ContaminationRun",
  "ShardWriteRun",
  "LockRun",
  "DoctorRun",
  "IndexReadRun",
  "ConditionsRun",
  "ShardMoveRun",
  "CatalogExportRun",
  "DirtyRecorder",
]);

/** A push run with a planner, for the run's methods (each called out of order or with junk). */
function pushRun(): { run: wasm.PushRun; planner: wasm.Planner } {
  return { run: new wasm.PushRun({ maxDeletes: -1, expect: 7 }), planner: loaded() };
}

/** One hostile case per `PushRun` method. */
const PUSH_RUN_METHODS: Record<string, () => unknown> = {
  free: () => new wasm.PushRun(undefined).free(),
  poll: () => {
    const { run, planner } = pushRun();
    run.poll(planner);
  },
  handle: () =>
    hostileEvents(
      [
        "localState",
        "index",
        "base",
        "walkFirst",
        "sealHashes",
        "sealRefreshed",
        "walk",
        "hashes",
        "confirmed",
        "uploaded",
        "commit",
        "rebased",
        "published",
        "deleted",
        "written",
      ],
      pushRun,
      ({ run, planner }) => run.poll(planner),
      ({ run, planner }, event) => run.handle(planner, event as wasm.PushEvent),
      { walkErrors: 0 },
    ),
  result: () => pushRun().run.result(),
  sealRefresh: () => pushRun().run.sealRefresh(JUNK),
  sidecar: () => pushRun().run.sidecar(),
};

/** A pull run with a planner, for the run's methods (each called out of order or with junk). */
function pullRun(): { run: wasm.PullRun; planner: wasm.Planner } {
  return { run: new wasm.PullRun({ verify: "yes", scope: [EVIL] }), planner: loaded() };
}

/** One hostile case per `PullRun` method. */
const RUN_METHODS: Record<string, () => unknown> = {
  free: () => new wasm.PullRun(undefined).free(),
  poll: () => {
    const { run, planner } = pullRun();
    run.poll(planner);
    run.poll(planner);
  },
  handle: () =>
    hostileEvents(
      ["localState", "head", "index", "base", "walk", "transfers", "published", "written"],
      pullRun,
      ({ run, planner }) => run.poll(planner),
      ({ run, planner }, event) => run.handle(planner, event as wasm.PullEvent),
    ),
  result: () => pullRun().run.result(),
  sidecar: () => pullRun().run.sidecar(),
};

/** A rebuild run with a planner, for the run's methods (each called out of order or with junk). */
function rebuildRun(): { run: wasm.RebuildRun; planner: wasm.Planner } {
  return {
    run: new wasm.RebuildRun({ mode: "missing", publish: true }, "2026-12-01T00:00:00.000Z"),
    planner: new wasm.Planner("ns", "p"),
  };
}

/**
 * Event fields of every run, each hostile but of the declared type (junk bytes, a traversal in
 * a string, a negative count), so events get past the shape check into the machines.
 */
const JUNK_FIELDS: Record<string, unknown> = {
  bytes: DEEP,
  page: JUNK,
  listing: JUNK,
  etag: EVIL,
  folders: [EVIL, HUGE],
  unencodable: [EVIL, HUGE],
  published: true,
  heads: [{ key: EVIL, exists: true, size: Number.MAX_SAFE_INTEGER, etag: HUGE }],
  deleted: Number.MAX_SAFE_INTEGER,
  changed: [EVIL, HUGE],
  failed: [EVIL, HUGE],
  rels: [EVIL],
  removed: Number.MAX_SAFE_INTEGER,
  conflicts: [EVIL],
  walkErrors: [EVIL],
  paths: [EVIL],
  values: [],
  results: [{ result: "done" }, { result: "refused", reason: HUGE }],
  failures: Number.MAX_SAFE_INTEGER,
  nowIso: EVIL,
  refused: HUGE,
  solo: DEEP,
  soloEtag: EVIL,
  namespace: JUNK,
  namespaceEtag: HUGE,
  copied: Number.MAX_SAFE_INTEGER,
  sidecar: DEEP,
  localIndexExists: true,
  exists: true,
  commitSeq: Number.MAX_SAFE_INTEGER,
  downloaded: JUNK,
  notFound: [EVIL],
  aside: [{ rel: EVIL, copy: HUGE }],
  hashedRels: [EVIL],
  hashedSha256: [HUGE, EVIL],
  keptPointers: [EVIL, HUGE],
  sidecarNow: DEEP,
  v2: true,
  changes: new Uint8Array(new Float64Array([NaN, -Infinity, 1e308]).buffer),
  symlinkedFolders: 0,
  walkedAtMs: Number.MAX_SAFE_INTEGER,
  listingDigest: HUGE,
  confirmed: true,
  uploaded: [{ rel: EVIL, size: 1, mtimeMs: -1, sha256: HUGE }],
  lost: [EVIL, HUGE],
  landed: true,
  conditionalDeletes: true,
  retired: Number.MAX_SAFE_INTEGER,
  kept: Number.MAX_SAFE_INTEGER,
  body: DEEP,
  lastModifiedMs: Number.MAX_SAFE_INTEGER,
  nowMs: -Number.MAX_SAFE_INTEGER,
  code: EVIL,
  message: HUGE,
  symlinkedFiles: [EVIL],
  tempFiles: [EVIL, HUGE],
  mtimes: [Number.MAX_SAFE_INTEGER, null],
};

/** Counts no count can be: negative, fractional, not finite, past 2^53. */
const BAD_COUNTS: Record<string, unknown> = {
  deleted: -1,
  removed: Infinity,
  failures: NaN,
  copied: -0.5,
  commitSeq: NaN,
  walkedAtMs: 0.5,
  retired: -1,
  kept: NaN,
  walkErrors: -1,
  lastModifiedMs: NaN,
  nowMs: Infinity,
  mtimes: [NaN, -Infinity],
};

/** Byte fields that are no whole number of floats, and numbers where bytes belong. */
const BAD_BUFFERS: Record<string, unknown> = {
  changes: JUNK,
  listing: new Float64Array([1, 2]),
  uploaded: 2 ** 64,
};

/** The same fields, each of the wrong type, so events fail the shape check. */
const WRONG_FIELDS: Record<string, unknown> = Object.fromEntries(
  Object.keys(JUNK_FIELDS).map((name, i) => [name, i % 2 ? [300, -1, 0.5] : { event: HUGE }]),
);

/**
 * Every hostile event for a run whose events are `names`: values that are no event at all, an
 * unknown tag, and each event with fields missing, junk and of the wrong type; each sent to a
 * fresh run and to one that has polled once. `own` holds the run's own junk for a field name
 * another run types differently.
 */
function hostileEvents<R>(
  names: string[],
  fresh: () => R,
  poll: (run: R) => unknown,
  handle: (run: R, event: unknown) => unknown,
  own: Record<string, unknown> = {},
): void {
  const events: unknown[] = [undefined, null, 7, HUGE, [], { event: EVIL }, { event: HUGE }];
  for (const event of names) {
    events.push(
      { event },
      { event, ...JUNK_FIELDS, ...own },
      { event, ...JUNK_FIELDS, ...own, ...BAD_COUNTS },
      { event, ...JUNK_FIELDS, ...own, ...BAD_BUFFERS },
      { event, ...WRONG_FIELDS },
    );
  }
  for (const event of events) {
    const label = JSON.stringify(event)?.slice(0, 80);
    survives(`handle(${label})`, () => handle(fresh(), event));
    survives(`poll, handle(${label})`, () => {
      const run = fresh();
      survives("poll", () => poll(run));
      handle(run, event);
    });
  }
}

/** One hostile case per `RebuildRun` method. */
const REBUILD_RUN_METHODS: Record<string, () => unknown> = {
  free: () => rebuildRun().run.free(),
  poll: () => {
    const { run, planner } = rebuildRun();
    run.poll(planner);
    run.poll(planner);
  },
  handle: () =>
    hostileEvents(
      ["got", "page", "listed", "topFolders", "published"],
      rebuildRun,
      ({ run, planner }) => run.poll(planner),
      ({ run, planner }, event) => run.handle(planner, event as wasm.RebuildEvent),
    ),
  result: () => rebuildRun().run.result(),
};

/** A repair run with a planner, for the run's methods (each called out of order or with junk). */
function repairRun(): { run: wasm.RepairRun; planner: wasm.Planner } {
  return {
    run: new wasm.RepairRun({ apply: true }, "2026-12-01T00:00:00.000Z"),
    planner: loaded(),
  };
}

/** One hostile case per `RepairRun` method. */
const REPAIR_RUN_METHODS: Record<string, () => unknown> = {
  free: () => repairRun().run.free(),
  poll: () => {
    const { run, planner } = repairRun();
    run.poll(planner);
    run.poll(planner);
  },
  handle: () =>
    hostileEvents(
      ["journal", "index", "walk", "hashes", "applied", "hydrated"],
      repairRun,
      ({ run, planner }) => run.poll(planner),
      ({ run, planner }, event) => run.handle(planner, event as wasm.RepairEvent),
    ),
  result: () => repairRun().run.result(),
};

/** A migrate run, for the run's methods (each called out of order or with junk). */
function migrateRun(): wasm.MigrateRun {
  return new wasm.MigrateRun("ns", "p", { apply: true }, "2026-12-01T00:00:00.000Z");
}

/** One hostile case per `MigrateRun` method. */
const MIGRATE_RUN_METHODS: Record<string, () => unknown> = {
  free: () => migrateRun().free(),
  poll: () => {
    const run = migrateRun();
    run.poll();
    run.poll();
  },
  handle: () =>
    hostileEvents(
      [
        "got",
        "listing",
        "heads",
        "copied",
        "published",
        "deleted",
      ],
      migrateRun,
      (run) => run.poll(),
      (run, event) => run.handle(event as wasm.MigrateEvent),
    ),
  body: () => migrateRun().body(),
  result: () => migrateRun().result(),
};

/** A resolve run, for the run's methods (each called out of order or with junk). */
function resolveRun(): wasm.ResolveRun {
  return new wasm.ResolveRun(loaded(), { keep: "mine", rels: [EVIL] });
}

/** One hostile case per `ResolveRun` method. */
const RESOLVE_RUN_METHODS: Record<string, () => unknown> = {
  free: () => resolveRun().free(),
  poll: () => {
    const run = resolveRun();
    run.poll();
    run.poll();
  },
  handle: () =>
    hostileEvents(
      ["pulled", "walk", "restored", "pushed", "removed"],
      resolveRun,
      (run) => run.poll(),
      (run, event) => run.handle(event as wasm.ResolveEvent),
    ),
  result: () => resolveRun().result(),
};

/** A contamination run, for the run's methods (each called out of order or with junk). */
function contaminationRun(): wasm.ContaminationRun {
  return new wasm.ContaminationRun("ns", "p", false);
}

/** One hostile case per `ContaminationRun` method. */
const CONTAMINATION_RUN_METHODS: Record<string, () => unknown> = {
  free: () => contaminationRun().free(),
  poll: () => {
    const run = contaminationRun();
    run.poll();
    run.poll();
  },
  handle: () =>
    hostileEvents(
      ["listing", "heads", "got", "published", "deleted"],
      contaminationRun,
      (run) => run.poll(),
      (run, event) => run.handle(event as wasm.ContaminationEvent),
    ),
  body: () => contaminationRun().body(),
  result: () => contaminationRun().result(),
};

/** A shard-set write over a planner with an index, for the run's methods. */
function shardWriteRun(): { run: wasm.ShardWriteRun; planner: wasm.Planner } {
  return {
    run: new wasm.ShardWriteRun({
      commitSeq: 3,
      metaRead: true,
      metaEtag: EVIL,
      shardEtags: new Map([[EVIL, HUGE]]),
      markMonolith: { etag: EVIL, nowIso: "2026-12-01T00:00:00.000Z" },
    }),
    planner: loaded(),
  };
}

/** One hostile case per `ShardWriteRun` method. */
const SHARD_WRITE_RUN_METHODS: Record<string, () => unknown> = {
  free: () => shardWriteRun().run.free(),
  poll: () => {
    const { run, planner } = shardWriteRun();
    run.poll(planner);
    run.poll(planner);
  },
  handle: () =>
    hostileEvents(
      ["probed", "heads", "put", "retired"],
      shardWriteRun,
      ({ run, planner }) => run.poll(planner),
      ({ run, planner }, event) => run.handle(planner, event as wasm.ShardWriteEvent),
    ),
  result: () => shardWriteRun().run.result(),
};

/** A lock run taking a lock with hostile identity fields, for the run's methods. */
function lockRun(): wasm.LockRun {
  return new wasm.LockRun({
    mode: "acquire",
    key: EVIL,
    holder: { holder: HUGE, hostname: EVIL, pid: Number.MAX_SAFE_INTEGER, nonce: EVIL },
    maxWaitMs: 0,
    nowMs: -Number.MAX_SAFE_INTEGER,
    ifMatch: true,
  });
}

/** One hostile case per `LockRun` method. */
const LOCK_RUN_METHODS: Record<string, () => unknown> = {
  free: () => lockRun().free(),
  poll: () => {
    const run = lockRun();
    run.poll();
    run.poll();
  },
  handle: () =>
    hostileEvents(
      ["put", "inspected", "deleted", "slept"],
      lockRun,
      (run) => run.poll(),
      (run, event) => run.handle(event as wasm.LockEvent),
    ),
  result: () => lockRun().result(),
};

/** A doctor over a planner with an index, for the run's methods. */
function doctorRun(): { run: wasm.DoctorRun; planner: wasm.Planner } {
  return { run: new wasm.DoctorRun(), planner: loaded() };
}

/** One hostile case per `DoctorRun` method. */
const DOCTOR_RUN_METHODS: Record<string, () => unknown> = {
  free: () => doctorRun().run.free(),
  poll: () => {
    const { run, planner } = doctorRun();
    run.poll(planner);
    run.poll(planner);
  },
  handle: () =>
    hostileEvents(
      ["index", "indexUnreadable", "walk", "temps", "sidecar"],
      doctorRun,
      ({ run, planner }) => run.poll(planner),
      ({ run, planner }, event) => run.handle(planner, event as wasm.DoctorEvent),
    ),
  result: () => doctorRun().run.result(),
};

/** An index read over a planner, for the run's methods. */
function indexReadRun(): { run: wasm.IndexReadRun; planner: wasm.Planner } {
  return { run: new wasm.IndexReadRun({ purpose: "load" }), planner: new wasm.Planner("ns") };
}

/** An index read waiting for the shards of a v2 meta listing `a` and `b`. */
function indexReadAtShards(): { run: wasm.IndexReadRun; planner: wasm.Planner } {
  const read = indexReadRun();
  read.run.poll(read.planner);
  const meta = encoder.encode('{"version":2,"partitions":["a","b"],"commitSeq":1}');
  read.run.handle(read.planner, { event: "got", bytes: meta });
  return read;
}

/** One hostile case per `IndexReadRun` method. */
const INDEX_READ_RUN_METHODS: Record<string, () => unknown> = {
  free: () => indexReadRun().run.free(),
  poll: () => {
    const { run, planner } = indexReadAtShards();
    run.poll(planner);
    return run.poll(planner);
  },
  handle: () => {
    const own = { failed: Number.MAX_SAFE_INTEGER, first: HUGE, partition: EVIL };
    for (const fresh of [indexReadRun, indexReadAtShards]) {
      hostileEvents(
        ["got", "shard", "shardsRead", "rebuilt"],
        fresh,
        ({ run, planner }) => run.poll(planner),
        ({ run, planner }, event) => run.handle(planner, event as wasm.IndexReadEvent),
        own,
      );
    }
    // A shard under a listed name, then a count of failures no count can be.
    const { run, planner } = indexReadAtShards();
    run.handle(planner, { event: "shard", partition: "a", bytes: DEEP });
    return run.handle(planner, { event: "shardsRead", failed: -1 } as never);
  },
  result: () => indexReadAtShards().run.result(),
};

/** A push's conditions run over a planner, waiting for the sidecar. */
function conditionsRun(): { run: wasm.ConditionsRun; planner: wasm.Planner } {
  const request = {
    purpose: "push",
    conditionalClient: true,
    deleting: true,
    store: EVIL,
  } as const;
  return { run: new wasm.ConditionsRun(request, 1_800_000_000_000), planner: loaded() };
}

/** A conditions run past the sidecar, waiting for the write probe. */
function conditionsAtProbe(): { run: wasm.ConditionsRun; planner: wasm.Planner } {
  const probing = conditionsRun();
  probing.run.poll(probing.planner);
  probing.run.handle(probing.planner, { event: "sidecar" });
  return probing;
}

/** One hostile case per `ConditionsRun` method. */
const CONDITIONS_RUN_METHODS: Record<string, () => unknown> = {
  free: () => conditionsRun().run.free(),
  poll: () => {
    const { run, planner } = conditionsAtProbe();
    run.handle(planner, { event: "writesProbed", created: true, again: false, wrongMatch: false });
    return run.poll(planner);
  },
  handle: () => {
    const own = { bytes: DEEP, created: EVIL, again: 7, wrongMatch: null, refused: HUGE };
    for (const fresh of [conditionsRun, conditionsAtProbe]) {
      hostileEvents(
        ["sidecar", "writesProbed", "deletesProbed", "remembered"],
        fresh,
        ({ run, planner }) => run.poll(planner),
        ({ run, planner }, event) => run.handle(planner, event as wasm.ConditionsEvent),
        own,
      );
    }
    // A sidecar that is junk is no verdict: the probe follows.
    const { run, planner } = conditionsRun();
    run.handle(planner, { event: "sidecar", bytes: JUNK } as never);
    return run.poll(planner);
  },
  result: () => conditionsAtProbe().run.result(),
  known: () => {
    const { run, planner } = conditionsAtProbe();
    survives(
      "refused",
      () =>
        run.handle(planner, {
          event: "writesProbed",
          created: true,
          again: true,
          wrongMatch: true,
        }),
    );
    return run.known;
  },
};

/** A move to shards, waiting for its first read. */
function shardMoveRun(): wasm.ShardMoveRun {
  return new wasm.ShardMoveRun(new Date(1_800_000_000_000));
}

/** A move to shards past its read and load, waiting for the shard-set write. */
function shardMoveAtWrite(): wasm.ShardMoveRun {
  const run = shardMoveRun();
  run.handle({ event: "shardsRead" });
  run.handle({ event: "loaded", monolith: true, etag: EVIL });
  return run;
}

/** One hostile case per `ShardMoveRun` method. */
const SHARD_MOVE_RUN_METHODS: Record<string, () => unknown> = {
  free: () => shardMoveRun().free(),
  poll: () => {
    const run = shardMoveAtWrite();
    run.poll();
    return run.poll();
  },
  handle: () => {
    const own = {
      v2: { partitions: [EVIL, HUGE], commitSeq: -1 },
      monolith: EVIL,
      published: 7,
      partitions: HUGE,
    };
    for (const fresh of [shardMoveRun, shardMoveAtWrite]) {
      hostileEvents(
        ["shardsRead", "loaded", "written"],
        fresh,
        (run) => run.poll(),
        (run, event) => run.handle(event as wasm.ShardMoveEvent),
        own,
      );
    }
    // A set whose commit sequence no count can be.
    return shardMoveRun().handle(
      { event: "shardsRead", v2: { partitions: [], commitSeq: 2 ** 64 } } as never,
    );
  },
  result: () => shardMoveAtWrite().result(),
};

/** A catalog export that remembers, waiting for the sidecar. */
function catalogExportRun(): wasm.CatalogExportRun {
  return new wasm.CatalogExportRun({
    namespace: "prod",
    size: 10,
    sha256: EVIL,
    conditionalClient: true,
    remember: true,
  });
}

/** A catalog export past the sidecar and the HEAD, waiting for its write. */
function catalogExportAtPut(): wasm.CatalogExportRun {
  const run = catalogExportRun();
  run.handle({ event: "sidecar" });
  run.handle({ event: "head", exists: true, size: 10, etag: EVIL });
  return run;
}

/** One hostile case per `CatalogExportRun` method. */
const CATALOG_EXPORT_RUN_METHODS: Record<string, () => unknown> = {
  free: () => catalogExportRun().free(),
  poll: () => {
    const run = catalogExportAtPut();
    run.handle({ event: "put", written: false });
    return run.poll();
  },
  handle: () => {
    const own = { bytes: DEEP, exists: EVIL, size: -1, etag: HUGE, written: 7, ours: null };
    for (const fresh of [catalogExportRun, catalogExportAtPut]) {
      hostileEvents(
        ["sidecar", "head", "put", "verified", "remembered"],
        fresh,
        (run) => run.poll(),
        (run, event) => run.handle(event as wasm.CatalogExportEvent),
        own,
      );
    }
    // A size no count can be.
    const run = catalogExportRun();
    run.handle({ event: "sidecar", bytes: JUNK } as never);
    return run.handle({ event: "head", exists: true, size: 2 ** 64 } as never);
  },
  result: () => catalogExportAtPut().result(),
};

/** One hostile case per `DirtyRecorder` method (each on a recorder that has seen junk). */
const DIRTY_RECORDER_METHODS: Record<string, () => unknown> = {
  free: () => new wasm.DirtyRecorder().free(),
  record: () => {
    const recorder = new wasm.DirtyRecorder();
    recorder.record(DEEP, EVIL + HUGE);
    recorder.record(JUNK, undefined);
    return recorder.record(undefined, EVIL);
  },
  walksEverything: () => {
    const recorder = new wasm.DirtyRecorder();
    recorder.record(JUNK, EVIL);
    return recorder.walksEverything;
  },
  step: () => {
    const recorder = new wasm.DirtyRecorder();
    recorder.step(EVIL + HUGE, true);
    return recorder.step(JUNK as never, 7 as never);
  },
  recorded: () => {
    const recorder = new wasm.DirtyRecorder();
    recorder.recorded(HUGE, true, true);
    recorder.recorded(undefined, JUNK as never, EVIL as never);
    return recorder.step(HUGE, true);
  },
  forget: () => {
    const recorder = new wasm.DirtyRecorder();
    recorder.recorded(EVIL, false, false);
    recorder.forget();
    return recorder.step(EVIL, true);
  },
};

/** Each exported class with its table of hostile cases, one per method. */
const CLASSES: [string, object, Record<string, () => unknown>][] = [
  ["Planner", wasm.Planner.prototype, METHODS],
  ["PullRun", wasm.PullRun.prototype, RUN_METHODS],
  ["PushRun", wasm.PushRun.prototype, PUSH_RUN_METHODS],
  ["RebuildRun", wasm.RebuildRun.prototype, REBUILD_RUN_METHODS],
  ["RepairRun", wasm.RepairRun.prototype, REPAIR_RUN_METHODS],
  ["MigrateRun", wasm.MigrateRun.prototype, MIGRATE_RUN_METHODS],
  ["ResolveRun", wasm.ResolveRun.prototype, RESOLVE_RUN_METHODS],
  ["ContaminationRun", wasm.ContaminationRun.prototype, CONTAMINATION_RUN_METHODS],
  ["ShardWriteRun", wasm.ShardWriteRun.prototype, SHARD_WRITE_RUN_METHODS],
  ["LockRun", wasm.LockRun.prototype, LOCK_RUN_METHODS],
  ["DoctorRun", wasm.DoctorRun.prototype, DOCTOR_RUN_METHODS],
  ["IndexReadRun", wasm.IndexReadRun.prototype, INDEX_READ_RUN_METHODS],
  ["ConditionsRun", wasm.ConditionsRun.prototype, CONDITIONS_RUN_METHODS],
  ["ShardMoveRun", wasm.ShardMoveRun.prototype, SHARD_MOVE_RUN_METHODS],
  ["CatalogExportRun", wasm.CatalogExportRun.prototype, CATALOG_EXPORT_RUN_METHODS],
  ["DirtyRecorder", wasm.DirtyRecorder.prototype, DIRTY_RECORDER_METHODS],
];

Deno.test("every WASM export has a hostile-input case here", () => {
  const functions = Object.entries(wasm)
    .filter(([name, value]) => typeof value === "function" && !NOT_CORE.has(name))
    .map(([name]) => name)
    .sort();
  assertEquals(functions, Object.keys(FUNCTIONS).sort());
  // Every exported class has a table, and every table covers each of its class's methods.
  const classes = [...NOT_CORE].filter((name) => /^[A-Z]/.test(name)).sort();
  assertEquals(CLASSES.map(([name]) => name).sort(), classes);
  for (const [name, prototype, cases] of CLASSES) {
    const methods = Object.getOwnPropertyNames(prototype)
      .filter((method) => method !== "constructor" && !method.startsWith("__"))
      .sort();
    assertEquals(methods, Object.keys(cases).sort(), name);
  }
});

Deno.test("every WASM export returns or throws a coded Error on hostile input, and the instance stays usable", () => {
  const all = [
    ...Object.entries(FUNCTIONS),
    ...CLASSES.flatMap(([, , cases]) => Object.entries(cases)),
  ];
  for (const [name, call] of all) {
    survives(name, call);
    // A trap would leave the instance unusable: the next call would fail too.
    const planner = loaded();
    assertEquals(planner.indexLength, 0, `after ${name}`);
    planner.free();
  }
  // Hostile constructor arguments are refused with a code as well.
  survives("new Planner", () => new wasm.Planner(EVIL, HUGE));
  for (const limit of [0, -1, 0.5, NaN, Infinity, 2 ** 64]) {
    survives(`new Planner(maxIndexEntries ${limit})`, () => new wasm.Planner("ns", "p", limit));
  }
  survives("new PullRun", () => new wasm.PullRun({ metadataOnly: undefined, scope: 7 }));
  survives("new PushRun", () => new wasm.PushRun({ dryRun: "yes", maxDeletePercent: "x" }));
  survives("new RebuildRun", () => new wasm.RebuildRun({ mode: "asked", apply: 1 }, HUGE));
  survives("new RebuildRun (a bad time)", () => new wasm.RebuildRun({ mode: "missing" }, EVIL));
  survives("new RepairRun", () => new wasm.RepairRun({ apply: "yes" }, HUGE));
  survives("new ResolveRun", () => new wasm.ResolveRun(loaded(), { keep: "both", rels: 7 }));
  survives("new ContaminationRun", () => new wasm.ContaminationRun(EVIL, HUGE, true));
  for (const limit of [0, -1, NaN, 2 ** 64]) {
    survives(
      `new ContaminationRun(limit ${limit})`,
      () => new wasm.ContaminationRun("ns", "p", false, limit),
    );
  }
  survives("new MigrateRun", () => new wasm.MigrateRun(EVIL, HUGE, { removeOriginals: 1 }, EVIL));
  survives("new ShardWriteRun", () => new wasm.ShardWriteRun(hostile({ commitSeq: -1 })));
  survives(
    "new ShardWriteRun (a bad time)",
    () => new wasm.ShardWriteRun({ markMonolith: { nowIso: EVIL } }),
  );
  survives("new ShardWriteRun (junk)", () => new wasm.ShardWriteRun(hostile(DEEP)));
  survives("ShardWriteRun (a commit with a commitSeq)", () => {
    new wasm.ShardWriteRun({ commit: true, commitSeq: 1 }).poll(loaded());
  });
  survives("new LockRun (junk)", () => new wasm.LockRun(hostile(DEEP)));
  for (const ttlMs of [0, -1, NaN, 3_600_001, 2 ** 64]) {
    survives(
      `new LockRun (ttlMs ${ttlMs})`,
      () =>
        new wasm.LockRun({
          mode: "refresh",
          key: "k",
          holder: { holder: "h", hostname: "h", pid: 1, nonce: "n" },
          ttlMs,
          ifMatch: false,
        }),
    );
  }
  survives("new LockRun (retryMs 0)", () =>
    new wasm.LockRun({
      mode: "acquire",
      key: "k",
      holder: { holder: "h", hostname: "h", pid: 1, nonce: "n" },
      retryMs: 0,
      nowMs: 0,
      ifMatch: false,
    }));
  survives("new ConditionsRun (junk)", () => new wasm.ConditionsRun(hostile(DEEP), 0));
  survives("new CatalogExportRun (junk)", () => new wasm.CatalogExportRun(hostile(DEEP)));
  survives(
    "new CatalogExportRun (a hostile namespace)",
    () =>
      new wasm.CatalogExportRun({
        namespace: EVIL,
        size: -1,
        sha256: HUGE,
        conditionalClient: true,
      }),
  );
  for (const now of [new Date(NaN), EVIL, hostile(DEEP), undefined]) {
    survives("new ShardMoveRun (not a date)", () => new wasm.ShardMoveRun(now as never));
  }
  for (const nowMs of [NaN, Infinity, -Infinity, 2 ** 64]) {
    survives(
      `new ConditionsRun (nowMs ${nowMs})`,
      () => new wasm.ConditionsRun({ purpose: "push", conditionalClient: true }, nowMs),
    );
  }
  survives(
    "new ConditionsRun (writes known ignored)",
    () =>
      new wasm.ConditionsRun(
        { purpose: "push", conditionalClient: true, knownWrites: false },
        0,
      ),
  );
  survives("ShardWriteRun (a commit without a v2 index)", () => {
    new wasm.ShardWriteRun({ commit: true, metaRead: true }).poll(loaded());
  });
});

Deno.test("the check itself fails on a trap and on an error without a code", () => {
  const fails = (call: () => unknown) => {
    try {
      survives("planted", call);
    } catch {
      return true;
    }
    return false;
  };
  assert(fails(() => {
    throw new WebAssembly.RuntimeError("unreachable");
  }));
  assert(fails(() => {
    throw new Error("no code");
  }));
  assert(
    !fails(() => {
      throw Object.assign(new Error("coded"), { code: "invalid-input" });
    }),
  );
});

Deno.test("callOutcome refuses a report of the wrong shape with invalid-input, and reads a good one", () => {
  for (
    const facts of [
      { run: "pull", warnings: [], failures: [], moved: -1 },
      { run: "pull", warnings: [], failures: [], moved: 1.5 },
      { run: "upload", warnings: [], failures: [], moved: 0 },
      { run: "push", warnings: [{ code: 1 }], failures: [], moved: 0 },
    ]
  ) {
    const error = assertThrows(() => wasm.callOutcome(hostile(facts))) as { code?: string };
    assertEquals(error.code, "invalid-input", JSON.stringify(facts));
  }
  assertEquals(
    wasm.callOutcome({
      run: "push",
      warnings: [],
      failures: [],
      blocked: [{ code: "delete-cap", message: "held" }],
      moved: 2,
      deleted: 0,
    }).error?.code,
    "delete-cap",
  );
});

Deno.test("Maps, byte arrays and Dates that override what the core reads are refused or read as built-ins, never thrown through", () => {
  const meta = encoder.encode('{"version":2,"partitions":["a"],"commitSeq":1}');
  const shard = encoder.encode(
    '{"version":1,"entries":{"data/a.yaml":{"key":"data/a.yaml","size":1}}}',
  );
  /** A Map whose own iteration methods throw: the core reads its entries as the built-in does. */
  class ThrowingMap<K, V> extends Map<K, V> {
    override entries(): MapIterator<[K, V]> {
      throw new TypeError("hostile entries");
    }
    override forEach(): void {
      throw new TypeError("hostile forEach");
    }
    override [Symbol.iterator](): MapIterator<[K, V]> {
      throw new TypeError("hostile iterator");
    }
  }
  /** Bytes whose `length` changes each time it is read. */
  class Shifting extends Uint8Array {
    #reads = 0;
    override get length(): number {
      return ++this.#reads * 1000;
    }
  }
  /** A Date whose `getTime` throws. */
  class ThrowingDate extends Date {
    override getTime(): number {
      throw new TypeError("hostile getTime");
    }
  }
  const cases: [string, (p: wasm.Planner) => unknown][] = [
    ["loadShards(ThrowingMap)", (p) => p.loadShards(meta, new ThrowingMap([["a", shard]]))],
    [
      "loadShards(Proxy of a Map)",
      (p) => p.loadShards(meta, new Proxy(new Map([["a", shard]]), {})),
    ],
    [
      "loadShards(shifting bytes)",
      (p) => p.loadShards(meta, new Map([["a", new Shifting(shard)]])),
    ],
    ["loadShards(object)", (p) => p.loadShards(meta, { a: shard } as never)],
    ["planRepair(ThrowingMap)", (p) => p.planRepair(JUNK, new ThrowingMap([["a", "b"]]))],
    ["beginRebuild(ThrowingDate)", (p) => p.beginRebuild(new ThrowingDate(0))],
    ["beginRebuild(Proxy of a Date)", (p) => p.beginRebuild(new Proxy(new Date(0), {}))],
    ["finishRebuild(a number)", (p) => p.finishRebuild(7 as never)],
  ];
  for (const [what, call] of cases) {
    const planner = new wasm.Planner("ns", "p");
    survives(what, () => call(planner));
    // Nothing threw through the core's frames: the same planner still answers.
    planner.loadIndex(encoder.encode('{"version":1,"entries":{}}'));
    assertEquals(planner.indexLength, 0, `after ${what}`);
    planner.free();
  }
  // The overrides were never called: a subclassed Map and Date read as their built-ins do.
  const planner = new wasm.Planner("ns", "p");
  assertEquals(planner.loadShards(meta, new ThrowingMap([["a", shard]])), 1);
  assertEquals(planner.indexLength, 1);
  planner.beginRebuild(new ThrowingDate(0));
  planner.free();
});
