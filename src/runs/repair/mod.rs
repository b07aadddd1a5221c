//! The layout doctor and repair: the problems and the repair plan ([`plan`]), and the
//! run's sequence ([`machine`]).

pub mod events;
pub mod machine;
pub mod plan;
