//! Running under control: a run advanced in pieces is the run in one, an interrupt stops it at
//! its next check, a PAUSE deadlock can end it, and the simulator's counters agree with its
//! summary.

use cnsim_core::scenario::BufferModel;
use cnsim_core::time::SimTime;
use cnsim_core::{CoreConfig, Error, RunControl, Simulator};

use crate::common::*;

/// Six nodes at 70 % from 1 ms on (nothing happens before), 5 ms.
fn late_start() -> CoreConfig {
    let mut c = star(6, G10, 1_000_000);
    c.duration_ps = 5 * MS;
    c.metrics.window_ps = [MS, 5 * MS];
    c.traffic.sources = (1..=6)
        .map(|i| {
            let mut s = source(&i.to_string(), None, 0.7);
            s.start_ps = MS;
            s
        })
        .collect();
    c
}

#[test]
fn a_run_in_pieces_is_the_run_in_one() {
    let cfg = late_start();
    let ctl = RunControl::default();
    let mut whole = Simulator::new(&cfg).unwrap();
    whole.run(&ctl).unwrap();
    let events = whole.events();
    let stats = whole.stats();
    assert_eq!(whole.now(), SimTime(5 * MS));
    let whole = whole.finish();
    let sm = whole.summary.to_value();
    assert_eq!(stats.generated as f64, num(&sm, "conservation.generated"));
    assert_eq!(stats.delivered as f64, num(&sm, "conservation.delivered"));
    assert!(events > stats.generated, "every frame takes several events");
    assert_eq!((whole.bin_s, whole.bins), (1e-3, 5), "1 ms bins over 5 ms");

    // pieces that end before anything happens (at 0, and before the sources start), then on
    let mut pieces = Simulator::new(&cfg).unwrap();
    for t in [0, MS / 2, 3 * MS] {
        pieces.run_until(SimTime(t), &ctl).unwrap();
        assert_eq!(pieces.now(), SimTime(t));
        assert_eq!(
            ctl.progress_ps.load(std::sync::atomic::Ordering::Relaxed),
            t
        );
    }
    assert!(pieces.events() > 0 && pieces.events() < events);
    pieces.run(&ctl).unwrap();
    assert_eq!(pieces.events(), events);
    let pieces = pieces.finish();
    assert_eq!(pieces.summary.to_value(), sm);
    assert_eq!(
        format!("{:?}", pieces.series),
        format!("{:?}", whole.series)
    );
}

#[test]
fn an_interrupt_stops_the_run_at_its_next_check() {
    let mut cfg = late_start();
    cfg.duration_ps = 10 * MS;
    let ctl = RunControl::default();
    let mut sim = Simulator::new(&cfg).unwrap();
    sim.run_until(SimTime(4 * MS), &ctl).unwrap();
    assert!(sim.events() > 1 << 15, "past the first checks");
    ctl.interrupt
        .store(true, std::sync::atomic::Ordering::Relaxed);
    assert!(matches!(sim.run(&ctl), Err(Error::Interrupted)));
    let at = ctl.progress_ps.load(std::sync::atomic::Ordering::Relaxed);
    // the next check comes within 16,384 events (about 1 ms here): well before the end
    assert!(at > 4 * MS && at < 6 * MS, "stopped at {at} ps");
}

/// The ring of `ring-6-deadlock` (the engine's golden case): six switches, each node sending
/// two hops round the ring, closes a cycle of PAUSE at about 2.5 ms.
fn ring() -> CoreConfig {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden/ring-6-deadlock--none.json");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    CoreConfig::from_json(&doc["config"].to_string()).unwrap()
}

#[test]
fn a_deadlock_ends_the_run_when_asked_to() {
    let mut cfg = ring();
    let on = run(&cfg).summary;
    let found = num(&on, "deadlock.t_s");
    assert_eq!(num(&on, "duration_s"), 0.05, "found, but the run goes on");
    cfg.metrics.stop_on_deadlock = true;
    let stop = run(&cfg).summary;
    assert_eq!(num(&stop, "deadlock.t_s"), found);
    assert_eq!(
        num(&stop, "duration_s"),
        found,
        "the run ends where it was found"
    );

    // a lossless run with PAUSE and no cycle is not stopped
    let mut hog = star(8, G10, 1_000_000);
    set_thresholds(
        &mut hog,
        BufferModel::Partitioned,
        600_000,
        594_500,
        297_250,
        true,
    );
    hog.metrics.stop_on_deadlock = true;
    hog.traffic.sources = (2..=8)
        .map(|i| source(&i.to_string(), Some("1"), 0.3))
        .collect();
    let sm = run(&hog).summary;
    assert!(num(&sm, "paused_fraction") > 0.1, "{sm}");
    assert!(sm["deadlock"].is_null());
    assert_eq!(num(&sm, "duration_s"), 0.01);
}

/// The ring with one-hop flows (node i to node i + 1) into nodes served at 0 Gb/s from 1 ms:
/// every ring link ends up paused for good, but in partitioned memory no paused egress holds a
/// frame of the input it waits on (each holds its own node's frames), so there is no cyclic
/// dependency; in one shared pool any frame does, and the ring is a deadlock (the ring links
/// the other way round are paused too, but hold nothing).
fn one_hop_ring(buffer: BufferModel) -> serde_json::Value {
    let mut cfg = ring();
    for (i, s) in cfg.traffic.sources.iter_mut().enumerate() {
        s.dst = Some(((i + 1) % 6 + 1).to_string());
    }
    cfg.hotspots = (1..=6)
        .map(|n| cnsim_core::scenario::HotspotConfig {
            node: n.to_string(),
            rate: 0.0,
            start_ps: MS,
            end_ps: 50 * MS,
        })
        .collect();
    cfg.switch.buffer = buffer;
    run(&cfg).summary
}

#[test]
fn a_deadlock_is_a_cycle_of_frames_waiting_on_each_other() {
    let part = one_hop_ring(BufferModel::Partitioned);
    assert!(num(&part, "paused_fraction_all") > 0.3, "{part}");
    assert!(part["deadlock"].is_null(), "{}", part["deadlock"]);
    // the pool pauses every input, the empty ring links the other way round too; the cycle is
    // the one whose egresses hold frames
    let shared = one_hop_ring(BufferModel::Shared);
    let ring = ["S1/S2", "S2/S3", "S3/S4", "S4/S5", "S5/S6", "S6/S1"];
    assert_eq!(
        shared["deadlock"]["cycle"],
        serde_json::json!(ring),
        "{shared}"
    );
}
