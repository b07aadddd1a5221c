//! The move to shards as a machine (`runs::shard_move`): its decisions are covered by
//! `tests/specs/shard_move/`; here, what it refuses to be told out of turn.

use s3sync_core::runs::machine::Machine;
use s3sync_core::runs::shard_move::events::ShardMoveEvent;
use s3sync_core::runs::shard_move::machine::{ShardMoveAction, ShardMoveRun};

#[test]
fn an_event_out_of_turn_is_invalid_input_and_changes_nothing() {
    let mut run = ShardMoveRun::new("2026-12-01T00:00:00.000Z".to_string());
    assert_eq!(
        Machine::poll(&mut run, &mut ()).unwrap(),
        ShardMoveAction::ReadShards
    );
    for event in [
        ShardMoveEvent::Loaded {
            monolith: true,
            etag: None,
        },
        ShardMoveEvent::Written {
            published: true,
            partitions: vec!["a".into()],
        },
    ] {
        let error = Machine::handle(&mut run, &mut (), event).unwrap_err();
        assert_eq!(error.code(), "invalid-input");
    }
    assert_eq!(
        Machine::poll(&mut run, &mut ()).unwrap(),
        ShardMoveAction::ReadShards
    );
    assert_eq!(Machine::result(&run).unwrap_err().code(), "invalid-input");
    // Once over, nothing more is taken.
    Machine::handle(&mut run, &mut (), ShardMoveEvent::ShardsRead { v2: None }).unwrap();
    Machine::handle(
        &mut run,
        &mut (),
        ShardMoveEvent::Loaded {
            monolith: false,
            etag: None,
        },
    )
    .unwrap();
    Machine::handle(
        &mut run,
        &mut (),
        ShardMoveEvent::Written {
            published: true,
            partitions: vec![],
        },
    )
    .unwrap();
    assert_eq!(
        Machine::poll(&mut run, &mut ()).unwrap(),
        ShardMoveAction::Done
    );
    let late = Machine::handle(&mut run, &mut (), ShardMoveEvent::ShardsRead { v2: None });
    assert_eq!(late.unwrap_err().code(), "invalid-input");
    assert!(Machine::result(&run).unwrap().moved);
}
