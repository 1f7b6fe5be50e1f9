//! Network elements against analytic expectations: delays, saturation throughput, drops.

use cnsim_core::scenario::BufferModel;

use crate::common::*;

#[test]
fn single_frame_latency_is_the_sum_of_its_delays_exactly() {
    // 8L/C_src + d + sw_proc + 8L/C_out + d + nic_proc (D14)
    let mut cfg = star(2, G10, 1_000_000);
    cfg.switch.processing_delay_ps = 1_000_000;
    cfg.nic.processing_delay_ps = 1_000_000;
    let mut s = source("1", Some("2"), 1.0);
    s.stop_ps = Some(1); // exactly one frame, at t = 0
    cfg.traffic.sources = vec![s];
    cfg.metrics.hot_port = "S1/2".into();
    let out = run(&cfg);
    let sm = &out.summary;
    assert_eq!(num(sm, "conservation.generated"), 1.0);
    assert_eq!(num(sm, "conservation.delivered"), 1.0);
    let expected_ps = 1_200_000 + 1_000_000 + 1_000_000 + 1_200_000 + 1_000_000 + 1_000_000;
    assert_eq!(
        (num(sm, "latency_us.mean") * 1e6).round() as u64,
        expected_ps
    );
}

#[test]
fn a_slower_egress_adds_its_serialisation_time() {
    // 10G in, 1G hotspot-free out link: 1.2 us + 1 us + 12 us + 1 us
    let mut cfg = star(2, G10, 1_000_000);
    cfg.topology.links[1].rate_bps = 1_000_000_000;
    let mut s = source("1", Some("2"), 1.0);
    s.stop_ps = Some(1);
    cfg.traffic.sources = vec![s];
    cfg.metrics.hot_port = "S1/2".into();
    let out = run(&cfg);
    assert_eq!(
        (num(&out.summary, "latency_us.mean") * 1e6).round() as u64,
        1_200_000 + 1_000_000 + 12_000_000 + 1_000_000
    );
}

#[test]
fn one_source_at_half_load_delivers_5_gbps() {
    let mut cfg = star(2, G10, 1_000_000);
    cfg.duration_ps = 200 * MS;
    cfg.metrics.window_ps = [10 * MS, 200 * MS];
    cfg.traffic.sources = vec![source("1", Some("2"), 0.5)];
    cfg.metrics.hot_port = "S1/2".into();
    let out = run(&cfg);
    let sm = &out.summary;
    // 190 ms at 0.5 per 1.2 us slot: ~79,000 frames, std of the count ~200 frames (0.25 %)
    let agg = num(sm, "throughput_gbps.aggregate");
    assert!((agg - 5.0).abs() < 0.05, "aggregate {agg}");
    assert_eq!(num(sm, "throughput_gbps.per_node.2"), agg);
    // the port counts a frame when its last bit leaves, the sink a link delay later: a frame
    // leaving just before either end of the window counts in one and not the other
    let frame_gbps = 1500.0 * 8.0 / 0.19 / 1e9;
    let hot = num(sm, "throughput_gbps.hot_port");
    assert!(
        (hot - agg).abs() <= 2.0 * frame_gbps + 1e-12,
        "hot port {hot}, aggregate {agg}"
    );
    assert_eq!(num(sm, "drops.frames"), 0.0);
}

#[test]
fn two_sources_into_one_port_with_egress_discard_deliver_line_rate_and_drop_the_excess() {
    let mut cfg = star(3, G10, 1_000_000);
    cfg.duration_ps = 100 * MS;
    cfg.metrics.window_ps = [10 * MS, 100 * MS];
    set_thresholds(&mut cfg, BufferModel::Egress, 600_000, 0, 0, false);
    cfg.traffic.sources = vec![source("1", Some("3"), 0.8), source("2", Some("3"), 0.8)];
    cfg.metrics.hot_port = "S1/3".into();
    let out = run(&cfg);
    let sm = &out.summary;
    let agg = num(sm, "throughput_gbps.aggregate");
    assert!((agg - 10.0).abs() < 0.01, "aggregate {agg}");
    // offered 16 Gb/s, served 10: 6 Gb/s dropped
    let dropped_gbps = num(sm, "drops_window.bytes") * 8.0 / 0.09 / 1e9;
    assert!(
        (dropped_gbps - 6.0).abs() < 0.1,
        "dropped {dropped_gbps} Gb/s"
    );
    assert!(num(sm, "queue_bytes.hot.max") <= 600_000.0);
    assert!(
        num(sm, "queue_bytes.hot.mean") > 590_000.0,
        "the discard threshold holds the queue full"
    );
    assert!(num(sm, "underrun") < 1e-3);
    assert!((num(sm, "bottleneck_utilisation") - 1.0).abs() < 0.01);
}

#[test]
fn a_hotspot_serves_at_its_fraction_and_zero_serves_nothing() {
    let mut cfg = star(2, G10, 1_000_000);
    cfg.duration_ps = 60 * MS;
    cfg.metrics.window_ps = [20 * MS, 40 * MS];
    set_thresholds(&mut cfg, BufferModel::Egress, 10_000_000_000, 0, 0, false);
    cfg.traffic.sources = vec![source("1", Some("2"), 1.0)];
    cfg.metrics.hot_port = "S1/2".into();
    cfg.hotspots = vec![cnsim_core::scenario::HotspotConfig {
        node: "2".into(),
        rate: 0.2,
        start_ps: 10 * MS,
        end_ps: 50 * MS,
    }];
    let out = run(&cfg);
    let hot = num(&out.summary, "throughput_gbps.hot_port");
    assert!((hot - 2.0).abs() < 0.01, "hot port {hot}");
    assert!((num(&out.summary, "bottleneck_utilisation") - 1.0).abs() < 0.01);

    cfg.hotspots[0].rate = 0.0;
    let out = run(&cfg);
    assert_eq!(num(&out.summary, "throughput_gbps.hot_port"), 0.0);
    assert_eq!(
        num(&out.summary, "underrun"),
        0.0,
        "nothing to serve at rate 0 is not underrun"
    );
}

/// A CM backward message crossing a switch waits that switch's processing delay like any
/// received frame (D14: "eligible at its output `switch.processing_delay` later"; D6 gives it
/// priority at the output, not a way around the pipeline). Node 1 on S1 sends to node 3 on S2,
/// whose port is a 2 Gb/s hotspot; S2's BCN message to node 1 crosses S1. A 1 us processing
/// delay delays the sampled frame by 1 us (S1, forward) and the message by 1 us (S1, backward):
/// the limiter is created 2 us later than without it (it was 1 us while messages skipped it).
#[test]
fn a_backward_message_waits_the_processing_delay_of_every_switch_it_crosses() {
    let limiter_created = |processing_ps: u64| -> usize {
        let mut cfg = star(1, G10, 1_000_000);
        cfg.topology.switches.push("S2".into());
        cfg.topology.nodes.push("3".into());
        for (a, b) in [("S1", "S2"), ("S2", "3")] {
            cfg.topology.links.push(cnsim_core::scenario::LinkConfig {
                a: a.into(),
                b: b.into(),
                rate_bps: G10,
                delay_ps: 1_000_000,
            });
        }
        let limits = cfg.switch.thresholds["S1"];
        cfg.switch.thresholds.insert("S2".into(), limits);
        cfg.switch.processing_delay_ps = processing_ps;
        cfg.duration_ps = MS / 2;
        cfg.metrics.window_ps = [0, MS / 2];
        cfg.metrics.bin_ps = 100_000; // 100 ns
        cfg.traffic.sources = vec![source("1", Some("3"), 1.0)];
        cfg.metrics.per_flow = vec![["1".into(), "3".into()]];
        cfg.metrics.hot_port = "S2/3".into();
        cfg.hotspots = vec![cnsim_core::scenario::HotspotConfig {
            node: "3".into(),
            rate: 0.2,
            start_ps: 0,
            end_ps: MS,
        }];
        cfg.cm = bcn_zhb(3000.0);
        cfg.switch.cp_ports = Some(vec!["S2/3".into()]); // S1's egress toward S2 sends nothing
        let out = run(&cfg);
        let rates = series(&out.result, "rates");
        rates.columns[0]
            .1
            .iter()
            .position(|r| !r.is_nan())
            .expect("a message reached node 1")
    };
    assert_eq!(limiter_created(1_000_000) - limiter_created(0), 20);
}

/// Two saturated flows into nodes 1 and 2 (star of 3, node 3 sends nothing), hotspots given as
/// (node, rate, start ms, end ms); 60 ms run, window [10, 50] ms.
fn hotspot_run(hotspots: &[(&str, f64, u64, u64)], hot_port: &str) -> serde_json::Value {
    let mut cfg = star(4, G10, 1_000_000);
    cfg.duration_ps = 60 * MS;
    cfg.metrics.window_ps = [10 * MS, 50 * MS];
    set_thresholds(&mut cfg, BufferModel::Egress, 10_000_000_000, 0, 0, false);
    cfg.traffic.sources = vec![source("3", Some("1"), 1.0), source("4", Some("2"), 1.0)];
    cfg.metrics.hot_port = hot_port.into();
    cfg.hotspots = hotspots
        .iter()
        .map(
            |&(node, rate, t0, t1)| cnsim_core::scenario::HotspotConfig {
                node: node.into(),
                rate,
                start_ps: t0 * MS,
                end_ps: t1 * MS,
            },
        )
        .collect();
    run(&cfg).summary
}

/// A window nested in another on the same node: the node serves at the inner rate while it
/// lasts and at the outer one again after it, as the capacity the metrics count (D16: the last
/// listed window covering the instant). The end of the inner window restored the line rate.
#[test]
fn a_nested_hotspot_gives_the_port_back_to_the_outer_one() {
    let sm = hotspot_run(&[("1", 0.2, 10, 50), ("1", 0.5, 20, 30)], "S1/1");
    // 10 ms at 5 Gb/s and 30 at 2 Gb/s over the 40 ms window
    let hot = num(&sm, "throughput_gbps.hot_port");
    assert!((hot - 2.75).abs() < 0.01, "hot port {hot}");
    let used = num(&sm, "bottleneck_utilisation");
    assert!((used - 1.0).abs() < 0.01, "utilisation {used}");
}

/// Windows on two nodes that overlap: the moving hot port is the port of the last listed
/// window covering the instant, and stays on node 1's port once node 2's window ends inside
/// it (it fell to no port at all, and counted node 1's capacity without its traffic).
#[test]
fn the_moving_hot_port_returns_to_a_window_still_on() {
    let sm = hotspot_run(&[("1", 0.2, 10, 50), ("2", 0.5, 20, 30)], "hotspot");
    // node 1 at 2 Gb/s for [10, 20) and [30, 50), node 2 at 5 Gb/s for [20, 30)
    let hot = num(&sm, "throughput_gbps.hot_port");
    assert!(
        (hot - (30.0 * 2.0 + 10.0 * 5.0) / 40.0).abs() < 0.01,
        "hot port {hot}"
    );
    let used = num(&sm, "bottleneck_utilisation");
    assert!((used - 1.0).abs() < 0.01, "utilisation {used}");
}
