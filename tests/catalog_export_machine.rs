//! The catalog export as a machine (`runs::catalog_export`): its decisions are covered by
//! `tests/specs/catalog_export/`; here, what it refuses to be told out of turn.

use s3sync_core::runs::catalog_export::events::CatalogExportEvent;
use s3sync_core::runs::catalog_export::machine::{
    CatalogExportAction, CatalogExportRequest, CatalogExportRun,
};
use s3sync_core::runs::machine::Machine;

#[test]
fn an_event_out_of_turn_is_invalid_input_and_changes_nothing() {
    let request = CatalogExportRequest {
        namespace: "prod".into(),
        size: 10,
        sha256: "a".repeat(64),
        conditional_client: true,
        remember: None,
        allow_shrink: None,
    };
    let mut run = CatalogExportRun::new(request).unwrap();
    let head = Machine::poll(&mut run, &mut ()).unwrap();
    assert_eq!(
        head,
        CatalogExportAction::Head {
            key: "prod/.catalog-export.json".into()
        }
    );
    for event in [
        CatalogExportEvent::Sidecar { bytes: None },
        CatalogExportEvent::Put { written: true },
        CatalogExportEvent::Verified { ours: true },
        CatalogExportEvent::Remembered,
    ] {
        let error = Machine::handle(&mut run, &mut (), event).unwrap_err();
        assert_eq!(error.code(), "invalid-input");
    }
    assert_eq!(Machine::poll(&mut run, &mut ()).unwrap(), head);
    assert_eq!(Machine::result(&run).unwrap_err().code(), "invalid-input");
}
