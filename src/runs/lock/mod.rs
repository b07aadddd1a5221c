//! The datastore lock the extension's writers hold while they publish: taking it (waiting for a
//! live holder, taking over a stale one), refreshing its lease, releasing it. The order of the
//! requests, what each is conditional on, when to wait and when to give up are decided in
//! [`machine`] from the facts the shim reports ([`events`]), in the vocabulary of [`actions`];
//! what a lock object means is [`crate::state::lock`]'s.

pub mod actions;
pub mod events;
pub mod machine;
