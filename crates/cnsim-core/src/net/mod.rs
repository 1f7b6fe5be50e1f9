//! Network elements (algorithms.md §1–2, D6, D11, D12, D14–D16): link transmitters with PAUSE
//! and strict-priority control classes (`port`), store-and-forward switches with their buffer
//! models and PAUSE watermarks (`switch`), and NICs with VOQs, rate limiters, an output buffer
//! and a sink (`nic`). Each element owns its state and decides alone, returning what happened;
//! the simulator's kernel (`sim/ports.rs`, `sim/switches.rs`, `sim/nics.rs`) keeps them in flat
//! arrays addressed by index, turns their answers into events and records, and never lets an
//! element reach into another (docs/architecture.md).

pub mod deadlock;
pub mod nic;
pub mod port;
pub mod switch;
pub mod voq_store;

pub use nic::{Nic, Voq};
pub use port::Port;
pub use switch::{Origin, Switch};

/// Size of a PAUSE frame and the default size of CM control frames (64 B minimum frame, D6).
pub const PAUSE_FRAME_BYTES: u32 = 64;
