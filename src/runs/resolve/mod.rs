//! `resolve`: settling conflict copies, as a run ([`machine`]).

pub mod events;
pub mod machine;
