//! The machines of the rarer runs: rebuild, contamination, resolve, migrate, repair, doctor,
//! the index read, the shard-set write, the move to shards, the datastore lock, a push's
//! conditions and the catalog export.

use wasm_bindgen::prelude::*;

use super::convert::*;
use super::planner::Planner;
use super::run_class::export_run;

export_run! {
    /// A rebuild of the remote index from a listing as a state machine (see
    /// `runs/rebuild/machine.rs`): a sync's rebuild of a missing index, or `rebuild-index`'s.
    RebuildRun wraps crate::runs::rebuild::machine::RebuildRun,
    context: session,
    types: ("RebuildAction", "RebuildEvent", "undefined", "RebuildResult")
}

#[wasm_bindgen]
impl RebuildRun {
    /// A run for `request` (`{mode: "missing", publish, prefix}` or `{mode: "asked", apply,
    /// force, v2Existing, prefix}`); `nowIso` dates objects listed without a date.
    #[wasm_bindgen(constructor)]
    pub fn new(request: JsValue, now_iso: String) -> Result<RebuildRun, JsValue> {
        let request: crate::runs::rebuild::machine::RebuildRequest =
            from_js(request, "rebuild request")?;
        iso_time(&now_iso, "nowIso")?;
        Ok(RebuildRun {
            inner: crate::runs::rebuild::machine::RebuildRun::new(request, &now_iso),
        })
    }
}

export_run! {
    /// Repairing namespace contamination as a state machine (see
    /// `runs/contamination/machine.rs`).
    ContaminationRun wraps crate::runs::contamination::machine::ContaminationRun,
    context: none,
    types: ("ContaminationAction", "ContaminationEvent", "undefined", "ContaminationSummary")
}

#[wasm_bindgen]
impl ContaminationRun {
    /// A run for the bound `namespace` (`prefix` only for the key length limit); a dry run
    /// only reports. `maxIndexEntries`: the most entries the bound index may name (absent: the
    /// default, 10^6).
    #[wasm_bindgen(constructor)]
    pub fn new(
        namespace: String,
        prefix: Option<String>,
        dry_run: bool,
        max_index_entries: Option<f64>,
    ) -> Result<ContaminationRun, JsValue> {
        let mut inner = crate::runs::contamination::machine::ContaminationRun::new(
            &namespace,
            prefix.as_deref().unwrap_or(""),
            dry_run,
        )
        .map_err(to_js_error)?;
        if let Some(limit) = max_index_entries {
            inner = inner
                .with_entry_limit(count(limit, "maxIndexEntries")?)
                .map_err(to_js_error)?;
        }
        Ok(ContaminationRun { inner })
    }

    /// The bytes a `publish` action writes.
    pub fn body(&self) -> Result<Vec<u8>, JsValue> {
        self.inner.body().map(<[u8]>::to_vec).map_err(to_js_error)
    }
}

export_run! {
    /// `resolve` as a state machine (see `runs/resolve/machine.rs`).
    ResolveRun wraps crate::runs::resolve::machine::ResolveRun,
    context: none,
    types: ("ResolveAction", "ResolveEvent", "undefined", "ResolveResult")
}

#[wasm_bindgen]
impl ResolveRun {
    /// A run in the layout `planner` binds, for `request` (`{keep, rels}`).
    #[wasm_bindgen(constructor)]
    pub fn new(planner: &Planner, request: JsValue) -> Result<ResolveRun, JsValue> {
        let request: crate::runs::resolve::machine::ResolveRequest =
            from_js(request, "resolve request")?;
        Ok(ResolveRun {
            inner: crate::runs::resolve::machine::ResolveRun::new(
                planner.inner.model().clone(),
                request,
            )
            .map_err(to_js_error)?,
        })
    }
}

export_run! {
    /// The remote side of a solo → namespaced migrate as a state machine (see
    /// `runs/migrate/machine.rs`). It holds its own index sessions.
    MigrateRun wraps crate::runs::migrate::machine::MigrateRun,
    context: none,
    types: ("MigrateAction", "MigrateEvent", "undefined", "MigrateResult")
}

#[wasm_bindgen]
impl MigrateRun {
    /// A run migrating into `namespace` (`prefix` only for the key length limit) for
    /// `request` (`{apply, removeOriginals}`), at `nowIso`.
    #[wasm_bindgen(constructor)]
    pub fn new(
        namespace: String,
        prefix: Option<String>,
        request: JsValue,
        now_iso: String,
    ) -> Result<MigrateRun, JsValue> {
        let request: crate::runs::migrate::machine::MigrateRequest = options(request)?;
        iso_time(&now_iso, "nowIso")?;
        Ok(MigrateRun {
            inner: crate::runs::migrate::machine::MigrateRun::new(
                &namespace,
                prefix.as_deref().unwrap_or(""),
                request,
                &now_iso,
            )
            .map_err(to_js_error)?,
        })
    }

    /// The bytes a `publish` action writes.
    pub fn body(&self) -> Result<Vec<u8>, JsValue> {
        self.inner.body().map(<[u8]>::to_vec).map_err(to_js_error)
    }
}

export_run! {
    /// The layout repair as a state machine (see `runs/repair/machine.rs`).
    RepairRun wraps crate::runs::repair::machine::RepairRun,
    context: session,
    types: ("RepairAction", "RepairEvent", "undefined", "RepairResult")
}

#[wasm_bindgen]
impl RepairRun {
    /// A run for `request` (`{apply}`), started at `nowIso`.
    #[wasm_bindgen(constructor)]
    pub fn new(request: JsValue, now_iso: String) -> Result<RepairRun, JsValue> {
        let request: crate::runs::repair::machine::RepairRequest = options(request)?;
        iso_time(&now_iso, "nowIso")?;
        Ok(RepairRun {
            inner: crate::runs::repair::machine::RepairRun::new(request, &now_iso),
        })
    }
}

export_run! {
    /// `doctor` as a state machine (see `runs/doctor/machine.rs`): the index read, the walk,
    /// our temporary files and the sidecar, judged into problems and notes.
    DoctorRun wraps crate::runs::doctor::machine::DoctorRun,
    context: session,
    types: ("DoctorAction", "DoctorEvent", "undefined", "DoctorFindings")
}

#[wasm_bindgen]
impl DoctorRun {
    /// A run over the planner whose session will hold the index.
    #[wasm_bindgen(constructor)]
    #[allow(clippy::new_without_default)]
    pub fn new() -> DoctorRun {
        DoctorRun {
            inner: crate::runs::doctor::machine::DoctorRun::new(),
        }
    }
}

export_run! {
    /// Reading the bound tree's index as a state machine (see `runs/index_read/machine.rs`):
    /// the v2 shard set, else the monolith, else a rebuild, for a sync, a push's re-merge or a
    /// move to shards.
    IndexReadRun wraps crate::runs::index_read::machine::IndexReadRun,
    context: session,
    types: ("IndexReadAction", "IndexReadEvent", "undefined", "IndexReadResult")
}

#[wasm_bindgen]
impl IndexReadRun {
    /// A read for `request` (`{purpose: "load" | "rebase" | "shards", publishRebuild?}`).
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(unchecked_param_type = "IndexReadRequest")] request: JsValue,
    ) -> Result<IndexReadRun, JsValue> {
        Ok(IndexReadRun {
            inner: crate::runs::index_read::machine::IndexReadRun::new(from_js(
                request,
                "index read request",
            )?),
        })
    }
}

export_run! {
    /// Writing an index cut into shards as a state machine (see `runs/shard_write/machine.rs`):
    /// the v1 mirror, a migration's first v2 set, a rebuild's v2 set.
    ShardWriteRun wraps crate::runs::shard_write::machine::ShardWriteRun,
    context: session,
    types: ("ShardWriteAction", "ShardWriteEvent", "undefined", "ShardWriteResult")
}

#[wasm_bindgen]
impl ShardWriteRun {
    /// A run for `request` (`{commitSeq?, metaRead?, metaEtag?, shardEtags?, markMonolith?}`;
    /// no `commitSeq`: the v1 mirror of what the recorded push touched).
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(unchecked_param_type = "ShardWriteRequest")] request: JsValue,
    ) -> Result<ShardWriteRun, JsValue> {
        let request: crate::runs::shard_write::machine::ShardWriteRequest =
            from_js(request, "shard write request")?;
        if let Some(mark) = &request.mark_monolith {
            iso_time(&mark.now_iso, "markMonolith.nowIso")?;
        }
        Ok(ShardWriteRun {
            inner: crate::runs::shard_write::machine::ShardWriteRun::new(request),
        })
    }
}

export_run! {
    /// The datastore lock as a state machine (see `runs/lock/machine.rs`): take it (waiting for
    /// a live holder, taking over a stale one), refresh its lease, release it.
    LockRun wraps crate::runs::lock::machine::LockRun,
    context: none,
    types: ("LockAction", "LockEvent", "undefined", "LockResult")
}

#[wasm_bindgen]
impl LockRun {
    /// A run for `request` (`{mode: "acquire" | "refresh" | "release" | "forceRelease", key,
    /// ...}`); a lease outside 1 ms..=1 h is `invalid-input`.
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(unchecked_param_type = "LockRequest")] request: JsValue,
    ) -> Result<LockRun, JsValue> {
        let request: crate::runs::lock::machine::LockRequest = from_js(request, "lock request")?;
        Ok(LockRun {
            inner: crate::runs::lock::machine::LockRun::new(request).map_err(to_js_error)?,
        })
    }
}

export_run! {
    /// What the server honours of conditional requests as a state machine (see
    /// `runs/conditions/machine.rs`): how a push's writes and deletes are made conditional, or
    /// what `doctor --probe-server` reports.
    ConditionsRun wraps crate::runs::conditions::machine::ConditionsRun,
    context: session,
    types: ("ConditionsAction", "ConditionsEvent", "undefined", "ConditionsResult")
}

#[wasm_bindgen]
impl ConditionsRun {
    /// A run for `request` at `nowMs` (epoch ms); a push's process that already found the
    /// server ignoring conditional writes (`knownWrites: false`) is
    /// `conditional-writes-unsupported`.
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(unchecked_param_type = "ConditionsRequest")] request: JsValue,
        now_ms: f64,
    ) -> Result<ConditionsRun, JsValue> {
        let request = from_js(request, "conditions request")?;
        let now_ms = millis(now_ms, "nowMs")?;
        Ok(ConditionsRun {
            inner: crate::runs::conditions::machine::ConditionsRun::new(request, now_ms)
                .map_err(to_js_error)?,
        })
    }

    /// What is known of the server so far (`{writes, deletes}`, each null when not known), at
    /// any point of the run, a refusal or a failed request included: the process's memo.
    #[wasm_bindgen(getter, unchecked_return_type = "ConditionsKnown")]
    pub fn known(&self) -> Result<JsValue, JsValue> {
        to_js(&self.inner.known())
    }
}

export_run! {
    /// Moving the bound tree's index to the v2 shard-first layout as a state machine (see
    /// `runs/shard_move/machine.rs`): on v2 already, moved, or lost to another move.
    ShardMoveRun wraps crate::runs::shard_move::machine::ShardMoveRun,
    context: none,
    types: ("ShardMoveAction", "ShardMoveEvent", "undefined", "ShardMoveResult")
}

#[wasm_bindgen]
impl ShardMoveRun {
    /// A move at `now` (recorded in the monolith marked as moved).
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(unchecked_param_type = "Date")] now: JsValue,
    ) -> Result<ShardMoveRun, JsValue> {
        Ok(ShardMoveRun {
            inner: crate::runs::shard_move::machine::ShardMoveRun::new(date_iso(&now, "now")?),
        })
    }
}

export_run! {
    /// One upload of a namespace's catalog export as a state machine (see
    /// `runs/catalog_export/machine.rs`): skipped, held back, written on the copy a HEAD saw, or
    /// a conflict.
    CatalogExportRun wraps crate::runs::catalog_export::machine::CatalogExportRun,
    context: none,
    types: ("CatalogExportAction", "CatalogExportEvent", "undefined", "CatalogExportResult")
}

#[wasm_bindgen]
impl CatalogExportRun {
    /// An upload for `request` (`{namespace, size, sha256, conditionalClient, remember?,
    /// allowShrink?}`); a namespace the path rules refuse is refused with its code.
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(unchecked_param_type = "CatalogExportRequest")] request: JsValue,
    ) -> Result<CatalogExportRun, JsValue> {
        let request = from_js(request, "catalog export request")?;
        Ok(CatalogExportRun {
            inner: crate::runs::catalog_export::machine::CatalogExportRun::new(request)
                .map_err(to_js_error)?,
        })
    }
}
