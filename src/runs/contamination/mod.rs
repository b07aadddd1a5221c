//! Objects of other namespaces under the bound one: which are safe to remove ([`plan`])
//! and the run's sequence ([`machine`]).

pub mod events;
pub mod machine;
pub mod plan;
