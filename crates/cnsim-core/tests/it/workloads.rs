//! Finite flows (TG-GEO): FCT accounting, runs to completion; the moving hot port (D16); the
//! grid on which waiting frames are stored.

use cnsim_core::scenario::{HotspotConfig, SourceConfig};
use cnsim_core::CoreConfig;

use crate::common::*;

#[test]
fn a_flow_completion_time_is_last_delivery_minus_first_generation() {
    // one flow on an idle path: its k frames leave the NIC back to back, so the last one is
    // delivered k·1.2 us + 1 us + 1.2 us + 1 us after the flow arrived
    let mut cfg = star(2, G10, 1_000_000);
    let mut s = flows("1", Some("2"), 1.0, 40.0);
    s.stop_ps = Some(1); // only the flow arriving in the first slot (probability 1/40 · ...)
    cfg.traffic.sources = vec![s];
    cfg.metrics.hot_port = "S1/2".into();
    cfg.metrics.hot_nodes = vec!["2".into()];
    let (out, k) = with_a_first_flow(&mut cfg);
    let sm = &out.summary;
    assert_eq!(num(sm, "fct_ms.completed"), 1.0);
    let expect_ps = k * 1_200_000.0 + 3_200_000.0;
    assert_eq!(
        (num(sm, "fct_ms.mean") * 1e9).round(),
        expect_ps,
        "{k} frames"
    );
    // its last bit left the source adapter k·1.2 us after the flow arrived; node 2 is hot,
    // so it is a hot flow
    assert_eq!(
        (num(sm, "fct_ms.adapter_wait_ms") * 1e9).round(),
        k * 1_200_000.0
    );
    assert_eq!(num(sm, "fct_ms.hot.completed"), 1.0);
    assert_eq!(num(sm, "fct_ms.cold.completed"), 0.0);
    assert_eq!(num(sm, "fct_ms.hot.mean"), num(sm, "fct_ms.mean"));
}

/// Runs `cfg` with seeds 1, 2, … until its flow source's first slot holds a flow (a source that
/// stops after its first slot): the outcome and the frames generated.
fn with_a_first_flow(cfg: &mut CoreConfig) -> (Outcome, f64) {
    for seed in 1..200 {
        cfg.seed = seed;
        let out = run(cfg);
        let k = num(&out.summary, "conservation.generated");
        if k > 0.0 {
            return (out, k);
        }
    }
    panic!("no seed produced a flow in the first slot");
}

/// A run to completion lasts until its last frame is delivered (scenarios.md §1.3 TG-GEO: "the
/// run continues until every frame is delivered"), not only until that frame left the last
/// port: with one flow of k frames arriving at 0 on an idle 1 us path, the last delivery is at
/// its FCT, k·1.2 us + 3.2 us, and the run may not end before it. (Until the audit of the traffic
/// generators it ended 1 us earlier, when the last frame's last bit left S1, so the flow's
/// completion came after `duration_s`.)
#[test]
fn a_run_to_completion_lasts_until_the_last_delivery() {
    let mut cfg = star(2, G10, 1_000_000);
    let mut s = flows("1", Some("2"), 1.0, 40.0);
    s.stop_ps = Some(1); // only the flow arriving in the first slot
    cfg.traffic.sources = vec![s];
    cfg.run_to_completion = true;
    cfg.metrics.window_ps = [0, 10 * MS];
    cfg.metrics.hot_port = "S1/2".into();
    let (out, k) = with_a_first_flow(&mut cfg);
    let sm = &out.summary;
    let fct_ps = (num(sm, "fct_ms.mean") * 1e9).round();
    assert_eq!(fct_ps, k * 1_200_000.0 + 3_200_000.0);
    let end_ps = (num(sm, "duration_s") * 1e12).round();
    assert!(
        end_ps > fct_ps,
        "the run ended at {end_ps} ps, before its last delivery at {fct_ps} ps"
    );
    assert!(end_ps <= fct_ps + 1.0, "and right after it: {end_ps} ps");
    // every frame was delivered inside the run: k frames over the run's length
    let gbps = num(sm, "throughput_gbps.aggregate");
    let expect = k * 12_000.0 / (end_ps * 1e-12) / 1e9;
    assert!((gbps - expect).abs() < 1e-9, "{gbps} Gb/s, not {expect}");
}

/// A run to completion lasts until its sources stop (contract: "`traffic.stop` ends generation;
/// a run-to-completion scenario then runs until no data frame is left"), also when their last
/// frame is delivered long before, or when they generate nothing at all. Until the traffic
/// audit's F6 such a run ended at whatever event came first once its last frame was delivered
/// (here a hotspot's start at 2 ms) or, with none, at its cap.
#[test]
fn a_run_to_completion_lasts_until_its_sources_stop() {
    let mut cfg = star(3, G10, 1_000_000);
    cfg.duration_ps = 10 * MS; // the cap
    cfg.run_to_completion = true;
    cfg.metrics.window_ps = [0, 10 * MS];
    cfg.metrics.hot_port = "S1/2".into();
    // one frame in the first slot (load 1, stopped after it), and a source that draws nothing
    // before its stop at 5 ms
    let first = SourceConfig {
        stop_ps: Some(1),
        ..source("1", Some("2"), 1.0)
    };
    let idle = SourceConfig {
        stop_ps: Some(5 * MS),
        ..source("3", Some("2"), 1e-12)
    };
    let hotspot = HotspotConfig {
        node: "3".into(),
        rate: 0.5,
        start_ps: 2 * MS,
        end_ps: 3 * MS,
    };
    cfg.traffic.sources = vec![first, idle];
    cfg.hotspots = vec![hotspot.clone()];
    let out = run(&cfg);
    assert_eq!(num(&out.summary, "conservation.generated"), 1.0);
    assert_eq!(num(&out.summary, "conservation.delivered"), 1.0);
    assert_eq!(
        num(&out.summary, "duration_s"),
        0.005,
        "ends when the sources stop"
    );
    // nothing generated at all, without a hotspot (no event after the start)
    cfg.traffic.sources.remove(0);
    cfg.hotspots.clear();
    let out = run(&cfg);
    assert_eq!(num(&out.summary, "conservation.generated"), 0.0);
    assert_eq!(
        num(&out.summary, "duration_s"),
        0.005,
        "an empty run ends when its sources stop"
    );
    // no source at all: nothing ends generation, the run lasts its duration (an event at 2 ms
    // does not end it)
    cfg.traffic.sources.clear();
    cfg.hotspots = vec![hotspot];
    assert_eq!(num(&run(&cfg).summary, "duration_s"), 0.01);
}

#[test]
fn a_run_to_completion_ends_when_everything_is_delivered() {
    let mut cfg = star(4, G10, 1_000_000);
    cfg.duration_ps = 1_000 * MS; // the cap
    cfg.run_to_completion = true;
    cfg.metrics.window_ps = [0, 1_000 * MS];
    cfg.traffic.sources = (1..=4)
        .map(|i| SourceConfig {
            stop_ps: Some(20 * MS),
            ..flows(&i.to_string(), None, 0.6, 40.0)
        })
        .collect();
    let out = run(&cfg);
    let sm = &out.summary;
    assert_eq!(out.in_flight_counted, 0);
    let end = num(sm, "duration_s");
    assert!(end > 0.02 && end < 0.03, "ended at {end} s");
    assert_eq!(num(sm, "fct_ms.incomplete"), 0.0);
    assert!(num(sm, "fct_ms.completed") > 100.0);
    assert!(num(sm, "fct_ms.p99") >= num(sm, "fct_ms.p50"));
    // the series end with the run
    let tput = series(&out.result, "throughput");
    assert_eq!(
        tput.columns[0].1.len() / tput.entities.len(),
        (end * 1000.0).ceil() as usize
    );
}

/// A run to completion with a blocking adapter (AD-SHARED): generators held back past their
/// stop time finish when they are let go, and the run ends when the last frame is delivered.
#[test]
fn a_run_to_completion_with_blocked_generators_ends() {
    let mut cfg = star(4, G10, 1_000_000);
    cfg.duration_ps = 1_000 * MS; // the cap
    cfg.run_to_completion = true;
    cfg.metrics.window_ps = [0, 1_000 * MS];
    cfg.nic.ingress = cnsim_core::scenario::Ingress::Shared;
    cfg.nic.ingress_size = 15_000;
    cfg.nic.on_full = cnsim_core::scenario::OnFull::Block;
    cfg.traffic.sources = (2..=4)
        .map(|i| SourceConfig {
            stop_ps: Some(20 * MS),
            ..flows(&i.to_string(), Some("1"), 0.6, 40.0)
        })
        .collect();
    let out = run(&cfg);
    let sm = &out.summary;
    assert!(num(sm, "source_blocked_fraction") > 0.0, "{sm}");
    assert_eq!(out.in_flight_counted, 0);
    assert_eq!(num(sm, "fct_ms.incomplete"), 0.0);
    let end = num(sm, "duration_s");
    assert!(end > 0.02 && end < 0.1, "ended at {end} s");
}

#[test]
fn lost_frames_leave_their_flows_incomplete() {
    let mut cfg = star(3, G10, 1_000_000);
    set_thresholds(
        &mut cfg,
        cnsim_core::scenario::BufferModel::Egress,
        30_000,
        0,
        0,
        false,
    );
    cfg.duration_ps = 20 * MS;
    cfg.metrics.window_ps = [0, 20 * MS];
    cfg.metrics.hot_port = "S1/3".into();
    cfg.traffic.sources = ["1", "2"]
        .iter()
        .map(|n| flows(n, Some("3"), 0.9, 10.0))
        .collect();
    let sm = run(&cfg).summary;
    assert!(num(&sm, "drops.frames") > 0.0);
    assert!(num(&sm, "fct_ms.incomplete") > 0.0);

    // run to completion, with frames lost at the switch and at the sources (VOQs of 10
    // frames): the run ends when the last frame is delivered or lost, not at its cap
    cfg.run_to_completion = true;
    cfg.duration_ps = 1_000 * MS;
    for s in &mut cfg.traffic.sources {
        s.stop_ps = Some(20 * MS);
    }
    cfg.nic.ingress = cnsim_core::scenario::Ingress::PerVoq;
    cfg.nic.ingress_size = 2 * 15_000;
    let sm = run(&cfg).summary;
    assert!(
        num(&sm, "drops.frames") > 0.0 && num(&sm, "source_drops.frames") > 0.0,
        "{sm}"
    );
    let end = num(&sm, "duration_s");
    assert!(end > 0.02 && end < 0.021, "ended at {end} s");
}

#[test]
fn the_moving_hot_port_follows_the_hotspot() {
    let mut cfg = star(4, G10, 1_000_000);
    cfg.duration_ps = 40 * MS;
    cfg.metrics.window_ps = [10 * MS, 30 * MS];
    cfg.metrics.hot_port = "hotspot".into();
    cfg.metrics.queues = vec!["S1/1".into(), "S1/2".into()];
    cfg.metrics.windows = vec![
        named_window("first", 10 * MS, 20 * MS),
        named_window("second", 20 * MS, 30 * MS),
        named_window("after", 30 * MS, 40 * MS),
    ];
    cfg.traffic.sources = (1..=4).map(|i| source(&i.to_string(), None, 0.9)).collect();
    set_thresholds(
        &mut cfg,
        cnsim_core::scenario::BufferModel::Egress,
        10_000_000_000,
        0,
        0,
        false,
    );
    cfg.hotspots = vec![
        HotspotConfig {
            node: "1".into(),
            rate: 0.2,
            start_ps: 10 * MS,
            end_ps: 20 * MS,
        },
        HotspotConfig {
            node: "2".into(),
            rate: 0.1,
            start_ps: 20 * MS,
            end_ps: 30 * MS,
        },
    ];
    let out = run(&cfg);
    let sm = &out.summary;
    // 2 Gb/s for 10 ms, then 1 Gb/s for 10 ms (both ports saturated by 2.7 Gb/s offered)
    assert!(
        (num(sm, "throughput_gbps.hot_port") - 1.5).abs() < 0.01,
        "{sm}"
    );
    assert!((num(sm, "bottleneck_utilisation") - 1.0).abs() < 0.01);
    assert!(num(sm, "underrun") < 1e-3, "saturated throughout: {sm}");
    assert!(num(sm, "queue_bytes.hot.mean") > 100_000.0);
    // the hot queue is port 1's in the first half and port 2's in the second, figure for figure
    let w = &sm["windows"];
    assert_eq!(
        w["first"]["queue_bytes"]["hot"],
        w["first"]["queue_bytes"]["S1/1"]
    );
    assert_eq!(
        w["second"]["queue_bytes"]["hot"],
        w["second"]["queue_bytes"]["S1/2"]
    );
    let halves =
        (num(w, "first.queue_bytes.S1/1.mean") + num(w, "second.queue_bytes.S1/2.mean")) / 2.0;
    assert!(
        (num(sm, "queue_bytes.hot.mean") - halves).abs() < 1e-6 * halves,
        "{sm}"
    );
    assert_eq!(
        num(sm, "queue_bytes.hot.max"),
        num(w, "second.queue_bytes.S1/2.max")
    );
    // after the last hotspot no port is hot, while port 2 still drains its backlog
    assert!(num(w, "after.queue_bytes.S1/2.max") > 100_000.0);
    assert_eq!(num(w, "after.queue_bytes.hot.max"), 0.0);
    assert_eq!(num(w, "after.throughput_gbps.hot_port"), 0.0);
    let q = series(&out.result, "queue");
    assert_eq!(q.entities[0], "hotspot");
}

#[test]
fn waiting_frames_are_kept_on_the_generators_grid() {
    use cnsim_core::Simulator;
    // 1500 B frames at 10 Gb/s: the grid's unit is the 1.2 us slot
    let mut cfg = star(4, G10, 1_000_000);
    cfg.traffic.sources = vec![source("1", Some("2"), 1.0), source("3", Some("2"), 1.0)];
    let unit = |cfg: &cnsim_core::CoreConfig| Simulator::new(cfg).unwrap().voq_time_unit();
    assert_eq!(unit(&cfg), Some(1_200_000));
    // a source whose grid starts 0.1 s later: 83,333 1/3 slots, so a third of a slot
    let mut late = source("4", None, 0.5);
    late.start_ps = 100 * MS;
    cfg.traffic.sources.push(late);
    assert_eq!(unit(&cfg), Some(400_000));
    // a grid 1 ns off the others: 65,535 ns reach too few slots, whole times are kept
    cfg.traffic.sources[2].start_ps = 1_000;
    assert_eq!(unit(&cfg), None);
}

/// Two sources at one NIC, each offering 10 Gb/s, half a slot apart, into an ingress buffer of
/// one frame that drops when full: arrivals are admitted in time order, whichever source they
/// come from. The source that starts half a slot late has each frame waiting in the buffer
/// before the frame on the wire ends; the other's frames arrive at that instant, when the place
/// is taken again, and are dropped. (Admitted by source order instead, the first source would
/// take the place every time.)
#[test]
fn a_nic_admits_its_sources_arrivals_in_time_order() {
    let mut cfg = star(3, G10, 1_000_000);
    cfg.nic.ingress = cnsim_core::scenario::Ingress::Shared;
    cfg.nic.ingress_size = 1500;
    let mut late = source("1", Some("3"), 1.0);
    late.start_ps = 600_000;
    cfg.traffic.sources = vec![source("1", Some("2"), 1.0), late];
    cfg.metrics.per_flow = vec![["1".into(), "2".into()], ["1".into(), "3".into()]];
    let sm = run(&cfg).summary;
    let (first, late) = (
        num(&sm, "throughput_gbps.per_flow.1->2"),
        num(&sm, "throughput_gbps.per_flow.1->3"),
    );
    assert!(first < 0.01 && late > 9.99, "{first} and {late} Gb/s");

    // arrivals at the same instant are admitted in source order: the first source wins
    cfg.traffic.sources[1].start_ps = 0;
    let sm = run(&cfg).summary;
    let (first, second) = (
        num(&sm, "throughput_gbps.per_flow.1->2"),
        num(&sm, "throughput_gbps.per_flow.1->3"),
    );
    assert!(first > 9.99 && second < 0.01, "{first} and {second} Gb/s");
}
