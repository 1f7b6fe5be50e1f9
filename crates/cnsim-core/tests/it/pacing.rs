//! The per-flow rate limiter paces its flow (algorithms.md §1.4, D15).

use cnsim_core::{RunControl, Simulator};

use crate::common::*;

#[test]
fn a_limiter_paces_a_greedy_flow_and_a_raised_rate_takes_effect() {
    let mut cfg = star(2, G10, 1_000_000);
    cfg.duration_ps = 40 * MS;
    cfg.metrics.window_ps = [0, 20 * MS];
    cfg.traffic.sources = vec![source("1", Some("2"), 1.0)];
    cfg.metrics.per_flow = vec![["1".into(), "2".into()]];
    cfg.metrics.hot_port = "S1/2".into();
    let mut sim = Simulator::new(&cfg).unwrap();
    let ctl = RunControl::default();
    sim.set_flow_rate(0, 1, Some(2.5e9));
    sim.run_until(cnsim_core::time::SimTime(20 * MS), &ctl)
        .unwrap();
    sim.set_flow_rate(0, 1, Some(7.5e9));
    sim.run(&ctl).unwrap();
    let r = sim.finish();
    let flow = num(&r.summary.to_value(), "throughput_gbps.per_flow.1->2");
    assert!((flow - 2.5).abs() < 0.01, "paced flow {flow}");
    let rates = &r.series.iter().find(|(k, _)| k == "rates").unwrap().1;
    let gbps = &rates.columns[0].1;
    assert_eq!(gbps[5], 2.5);
    assert_eq!(gbps[30], 7.5);
    let tput = &r.series.iter().find(|(k, _)| k == "throughput").unwrap().1;
    let agg = &tput.columns[0].1;
    assert!((agg[35] - 7.5).abs() < 0.05, "raised rate {}", agg[35]);
}

/// Issue 12 audit: a forward probe bypasses the rate limiter but not the NIC's output buffer
/// (D17): with the default one-frame OB it waits until the data frame before it has left, so
/// the OB never holds more than its 1,500 B — here FECN at line rate with a probe every 100 us.
#[test]
fn probes_wait_for_room_in_the_output_buffer() {
    let mut cfg = star(2, G10, 1_000_000);
    cfg.duration_ps = 2 * MS;
    cfg.metrics.window_ps = [0, 2 * MS];
    cfg.traffic.sources = vec![source("1", Some("2"), 1.0)];
    cfg.metrics.hot_port = "S1/2".into();
    cfg.cm = fecn_line_rate();
    let mut sim = Simulator::new(&cfg).unwrap();
    let ctl = RunControl::default();
    let (mut most, mut t) = (0, 0);
    while t < 2 * MS {
        t += 100_000; // 100 ns
        sim.run_until(cnsim_core::time::SimTime(t), &ctl).unwrap();
        most = most.max(sim.queue_bytes("1/S1").unwrap());
    }
    assert_eq!(most, 1500, "the OB holds one frame at most");
    let r = sim.finish();
    assert!(
        num(&r.summary.to_value(), "cm.frames") >= 30.0,
        "probes went out and came back"
    );
}
