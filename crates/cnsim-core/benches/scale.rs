//! The scale benchmark group (issue 14; docs/performance.md): the same 85 % load at 16, 128, 512
//! and 2,048 hosts, each run for a simulated time sized to about 1 M events, reported as events
//! per second. `cargo bench -p cnsim-core --bench scale`. The core configs are
//! `cnsim show ID --core` of `zhb-og-single-hop`, `zhb-og-n128`, `scale-ft-2048` and
//! `scale-ft-2048 --set topology.fat_tree.radix=32`; `cnsim bench --scale` is the same
//! measurement from the command line, with peak memory per size.

use cnsim_core::{CoreConfig, RunControl, Simulator};
use divan::counter::ItemsCount;
use divan::{black_box, Bencher};

fn main() {
    divan::main();
}

/// (hosts, core config, events per host per simulated second: sizes the simulated time).
fn case(hosts: u32) -> (&'static str, f64) {
    match hosts {
        16 => (include_str!("zhb-og-single-hop.core.json"), 2.2e6),
        128 => (include_str!("zhb-og-n128.core.json"), 2.2e6),
        512 => (include_str!("scale-ft-512.core.json"), 5.0e6),
        _ => (include_str!("scale-ft-2048.core.json"), 5.0e6),
    }
}

const EVENTS: f64 = 1.0e6;

#[divan::bench(args = [16, 128, 512, 2048], sample_count = 3)]
fn scale(bencher: Bencher, hosts: u32) {
    let (json, per_host) = case(hosts);
    let mut cfg = CoreConfig::from_json(json).expect("shipped core config");
    cfg.duration_ps = (EVENTS / (hosts as f64 * per_host) * 1e12) as u64;
    cfg.metrics.window_ps = [0, cfg.duration_ps];
    let events = {
        let mut sim = Simulator::new(&cfg).expect("valid config");
        sim.run(&RunControl::default()).expect("run");
        sim.events()
    };
    bencher.counter(ItemsCount::new(events)).bench_local(|| {
        let mut sim = Simulator::new(&cfg).expect("valid config");
        sim.run(&RunControl::default()).expect("run");
        black_box(sim.events())
    });
}
