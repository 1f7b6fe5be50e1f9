//! Run a core config (JSON, as printed by `cnsim show ID --core`) without Python — for profiling
//! and callgrind. Prints the summary and the engine speed.
//!
//! `cargo run --release --example run_scenario -- core.json`

use std::time::Instant;

use cnsim_core::{CoreConfig, RunControl, Simulator};

fn main() {
    let path = std::env::args()
        .nth(1)
        .expect("usage: run_scenario CORE.json");
    let text = std::fs::read_to_string(&path).expect("readable file");
    let build_start = Instant::now();
    let cfg = CoreConfig::from_json(&text).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(2)
    });
    let mut sim = Simulator::new(&cfg).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(2)
    });
    let build = build_start.elapsed().as_secs_f64();
    let start = Instant::now();
    sim.run(&RunControl::default()).expect("not interrupted");
    let wall = start.elapsed().as_secs_f64();
    let events = sim.events();
    let delivered = sim.stats().delivered;
    let sim_s = sim.now().as_secs_f64();
    let start = Instant::now();
    let result = sim.finish();
    let finish = start.elapsed().as_secs_f64();
    println!("{}", serde_json::to_string_pretty(&result.summary).unwrap());
    eprintln!(
        "wall {wall:.3} s, {:.2} M events/s, {:.2} M frames/s, {:.3} simulated s per wall s; \
         summary and series {finish:.3} s; config and build {build:.3} s",
        events as f64 / wall / 1e6,
        delivered as f64 / wall / 1e6,
        sim_s / wall
    );
}
