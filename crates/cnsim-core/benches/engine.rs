//! Engine benchmarks (divan): the event queue, the frame pool, and whole scenarios.
//! `cargo bench -p cnsim-core`. The scenario benchmark runs 20 ms of `zhb-og-single-hop` (the
//! core config is `cnsim show zhb-og-single-hop --core`) and reports events per second.

use cnsim_core::engine::{Event, EventQueue};
use cnsim_core::frame::{Frame, FramePool};
use cnsim_core::time::SimTime;
use cnsim_core::{CoreConfig, RunControl, Simulator};
use divan::counter::ItemsCount;
use divan::{black_box, Bencher};

fn main() {
    divan::main();
}

const ZHB: &str = include_str!("zhb-og-single-hop.core.json");

/// Steady state of a heap holding `n` pending events: pop one, push one a little later.
#[divan::bench(args = [64, 1024, 16384])]
fn event_queue_hold(bencher: Bencher, n: u64) {
    let mut q = EventQueue::new();
    for i in 0..n {
        q.push(
            SimTime(i * 7919 % 100_000),
            Event::TxDone {
                port: i as u32,
                frame: cnsim_core::frame::FrameId(i as u32),
            },
        );
    }
    bencher.counter(ItemsCount::new(1usize)).bench_local(|| {
        let (t, e) = q.pop().unwrap();
        q.push(SimTime(t.0 + 50_000 + (t.0 % 977)), black_box(e));
    });
}

#[divan::bench]
fn frame_pool_alloc_free(bencher: Bencher) {
    let mut pool = FramePool::new();
    let held: Vec<_> = (0..1000)
        .map(|i| pool.alloc(Frame::data(i, 0, 1500, SimTime::ZERO)))
        .collect();
    black_box(&held);
    bencher.counter(ItemsCount::new(1usize)).bench_local(|| {
        let f = pool.alloc(Frame::data(1, 2, 1500, SimTime::ZERO));
        pool.free(black_box(f));
    });
}

/// 20 ms of zhb-og-single-hop in the hogging phase (the hotspot starts at 0.1 s: shifted to 0).
#[divan::bench(sample_count = 5)]
fn zhb_og_single_hop_20ms(bencher: Bencher) {
    let mut cfg = CoreConfig::from_json(ZHB).unwrap();
    cfg.duration_ps = 20_000_000_000;
    cfg.metrics.window_ps = [0, cfg.duration_ps];
    cfg.hotspots[0].start_ps = 0;
    let events = {
        let mut sim = Simulator::new(&cfg).unwrap();
        sim.run(&RunControl::default()).unwrap();
        sim.events()
    };
    bencher.counter(ItemsCount::new(events)).bench_local(|| {
        let mut sim = Simulator::new(&cfg).unwrap();
        sim.run(&RunControl::default()).unwrap();
        black_box(sim.events())
    });
}
