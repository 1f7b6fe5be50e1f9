//! Network elements (algorithms.md §1–2, D6, D11, D12, D14–D16): link transmitters with PAUSE
//! and strict-priority control classes (`port`), store-and-forward switches with their buffer
//! models and PAUSE watermarks (`switch`), and NICs with VOQs, rate limiters, an output buffer
//! and a sink (`nic`). Each file adds the element's state type and its event handlers as an
//! `impl Simulator` block: the state of the whole network lives in flat arrays of the
//! [`crate::Simulator`], addressed by index.

pub mod nic;
pub mod port;
pub mod switch;

pub use nic::{Nic, Voq};
pub use port::Port;
pub use switch::{Origin, Switch};

/// Size of a PAUSE frame and the default size of CM control frames (64 B minimum frame, D6).
pub const PAUSE_FRAME_BYTES: u32 = 64;
