//! # cnsim-core — the engine
//!
//! A packet-level discrete-event simulator of congestion management in lossless data-center
//! Ethernet (IEEE 802.1Qau BCN/ECM, E2CM, QCN and PAUSE). It is a pure Rust crate: the Python
//! package drives it through a thin PyO3 layer (`crates/cnsim-py`), but everything here builds,
//! tests and benchmarks with plain cargo.
//!
//! ## The house, layer by layer
//!
//! 1. **[`time`]** — units in types: [`time::SimTime`] is an integer count of picoseconds,
//!    [`time::BitRate`] bit/s; serialisation times are exact integers.
//! 2. **[`wire`]** — what travels in frames, as plain data: frame handles and the payloads of
//!    CM control frames, below everything that moves them (the engine knows no scheme).
//! 3. **[`engine`]** — the closed [`engine::Event`] enum, a FIFO-stable event queue keyed by
//!    (time, insertion sequence), and per-component RNG streams derived from the master seed.
//! 4. **[`frame`]** — frames in a pool addressed by `u32` handles.
//! 5. **[`topology`]** — switches, nodes and links (with their config table) become
//!    transmitter ports (one per link direction) and per-switch routing tables.
//! 6. **[`traffic`]** — Bernoulli slotted generators that draw the gap to the next arrival.
//! 7. **[`cm`]** — the congestion-point / reaction-point interface and one file per scheme; a
//!    new scheme is a file plus a variant in the dispatch enums.
//! 8. **[`metrics`]** — binned series and exact window summaries, fed by the elements.
//! 9. **[`scenario`]** — the core config (a resolved scenario in base units) and its checks.
//! 10. **[`net`]** — the network elements: link transmitters with PAUSE and strict-priority control
//!     (`net::port`), store-and-forward switches with the shared / partitioned / egress buffer
//!     models (`net::switch`), NICs with VOQs, rate limiters, output buffer and sink (`net::nic`).
//! 11. **[`sim`]** — the [`Simulator`] value that owns all state in flat arrays and runs the
//!     event loop.
//!
//! ## Data flow of a frame
//!
//! generator → NIC VOQ (generation time only) → rate-limiter gate → round-robin → NIC output
//! buffer (pool frame) → link (`TxDone`, `Arrive`) → switch admission (buffer model, CP sample,
//! XOFF) → output queue → link → … → sink (delivery recorded). PAUSE frames travel back on the
//! reverse direction of the input link; CM messages go to the source node by the routing tables.
//!
//! Everything is deterministic: the same config and seed give the same summary and series.
//!
//! Each layer uses only layers below it (`tests/test_architecture.py` checks the `crate::`
//! paths): the elements of [`net`] own their state and answer the kernel in [`sim`], which turns
//! their answers into events and records (docs/architecture.md).

#![deny(unsafe_code)]

pub mod cm;
pub mod engine;
pub mod error;
pub mod frame;
pub mod metrics;
pub mod net;
pub mod scenario;
pub mod sim;
pub mod time;
pub mod topology;
pub mod traffic;
pub mod wire;

pub use error::{Error, Result};
pub use scenario::CoreConfig;
pub use sim::{run_json, RunControl, RunResult, Simulator};

/// The engine's version.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
