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
    let rates = series(&r, "rates");
    let gbps = &rates.columns[0].1;
    assert_eq!(gbps[5], 2.5);
    assert_eq!(gbps[30], 7.5);
    let tput = series(&r, "throughput");
    let agg = &tput.columns[0].1;
    assert!((agg[35] - 7.5).abs() < 0.05, "raised rate {}", agg[35]);
}

/// Issue 12 audit: a forward probe bypasses the rate limiter but not the NIC's output buffer
/// (D17): with the default one-frame OB it waits until the data frame before it has left, so
/// the OB never holds more than its 1,500 B — here FECN at line rate with a probe every 100 us;
/// also with PFC, where the OB is one such FIFO per class. An OB of 1,564 B has room for the
/// 64 B probe beside the frame on the wire, and takes it at once.
#[test]
fn probes_wait_for_room_in_the_output_buffer() {
    for (classes, egress) in [(0, 1500), (2, 1500), (0, 1564), (2, 1564)] {
        let mut cfg = star(2, G10, 1_000_000);
        cfg.nic.egress_buffer = egress;
        cfg.duration_ps = 2 * MS;
        cfg.metrics.window_ps = [0, 2 * MS];
        cfg.traffic.sources = vec![source("1", Some("2"), 1.0)];
        cfg.metrics.hot_port = "S1/2".into();
        cfg.cm = fecn_line_rate();
        cfg.switch.pfc_classes = classes;
        // no watermark below the buffer's size: its capacity alone holds the probe back
        cfg.nic.egress_xoff = 3000;
        let mut sim = Simulator::new(&cfg).unwrap();
        let ctl = RunControl::default();
        let (mut most, mut t) = (0, 0);
        while t < 2 * MS {
            t += 100_000; // 100 ns
            sim.run_until(cnsim_core::time::SimTime(t), &ctl).unwrap();
            most = most.max(sim.queue_bytes("1/S1").unwrap());
        }
        assert_eq!(most, egress, "the OB is full at most ({classes} classes)");
        let r = sim.finish();
        assert!(
            num(&r.summary.to_value(), "cm.frames") >= 30.0,
            "probes went out and came back"
        );
    }
}

/// Issue 12, S4: a limited flow shares a saturated NIC with a greedy one behind a 150 KB output
/// buffer. Moved whenever a frame fits (no hysteresis on the internal VOQ → OB transfer, the eval
/// deck's reading), the limited flow gets close to its limiter's 2 Gb/s (paced from the instant
/// its previous frame moved, plus its turn in the round robin). With the switch's PAUSE rule for
/// watermarks (143.25 / 71.625 KB) the buffer refills in bursts of ~48 frames at one instant and
/// the limited flow moves one frame per burst: about a tenth of its rate.
#[test]
fn a_limited_flow_behind_a_full_output_buffer_gets_its_rate_only_without_refill_bursts() {
    let limited_gbps = |xoff: u64, xon: u64| {
        let mut cfg = star(3, G10, 1_000_000);
        cfg.duration_ps = 20 * MS;
        cfg.metrics.window_ps = [5 * MS, 20 * MS];
        cfg.nic.egress_buffer = 150_000;
        cfg.nic.egress_xoff = xoff;
        cfg.nic.egress_xon = xon;
        cfg.traffic.sources = vec![source("1", Some("2"), 1.0), source("1", Some("3"), 1.0)];
        cfg.metrics.per_flow = vec![["1".into(), "3".into()], ["1".into(), "2".into()]];
        let mut sim = Simulator::new(&cfg).unwrap();
        sim.set_flow_rate(0, 2, Some(2e9));
        sim.run(&RunControl::default()).unwrap();
        let sm = sim.finish().summary.to_value();
        let (limited, greedy) = (
            num(&sm, "throughput_gbps.per_flow.1->3"),
            num(&sm, "throughput_gbps.per_flow.1->2"),
        );
        assert!(
            (limited + greedy - 10.0).abs() < 0.05,
            "the link stays full: {sm}"
        );
        limited
    };
    let smooth = limited_gbps(148_500, 148_500);
    assert!(
        (1.5..=2.0).contains(&smooth),
        "no hysteresis: {smooth} Gb/s"
    );
    let bursts = limited_gbps(143_250, 71_625);
    assert!(
        bursts < 0.4,
        "refill bursts cap the limited flow: {bursts} Gb/s"
    );
}

/// D15: "when R changes, eligibility is recomputed as t_last + 8·L/R_new" — also for a VOQ that
/// already waits in the round robin for the output buffer. Two greedy flows share node 1's
/// one-frame OB, so each VOQ spends most of its time in the ring; both are cut to 1.2 Mb/s
/// (a 10 ms gap) at 3 ms. Only the frame already in the OB may leave in the next 5 ms; a VOQ
/// kept in the ring would let one more frame of each flow through.
#[test]
fn a_lowered_rate_holds_a_voq_already_waiting_in_the_round_robin() {
    let mut cfg = star(3, G10, 1_000_000);
    cfg.duration_ps = 8 * MS;
    cfg.metrics.window_ps = [3 * MS, 8 * MS];
    cfg.traffic.sources = vec![source("1", Some("2"), 1.0), source("1", Some("3"), 1.0)];
    let mut sim = Simulator::new(&cfg).unwrap();
    let ctl = RunControl::default();
    sim.run_until(cnsim_core::time::SimTime(3 * MS), &ctl)
        .unwrap();
    sim.set_flow_rate(0, 1, Some(1.2e6));
    sim.set_flow_rate(0, 2, Some(1.2e6));
    sim.run(&ctl).unwrap();
    let sm = sim.finish().summary.to_value();
    let sent_bytes = num(&sm, "throughput_gbps.per_source_sent.1") * 1e9 * 5e-3 / 8.0;
    assert!(
        (sent_bytes - 1500.0).abs() < 1e-6,
        "node 1 sent {sent_bytes} B after the cut"
    );
}

/// A NIC port's queue (its output buffer) is recorded whenever it changes, as a switch's is: two
/// greedy flows keep an OB of three frames full (it refills at each departure, XON at two
/// frames), so its time-weighted mean is its size. (Recorded only at departures, it read one
/// frame short: 3,000 B.)
#[test]
fn the_output_buffer_is_recorded_as_it_fills() {
    let mut cfg = star(3, G10, 1_000_000);
    cfg.nic.egress_buffer = 4500;
    cfg.nic.egress_xoff = 4500;
    cfg.nic.egress_xon = 3000;
    cfg.traffic.sources = vec![source("1", Some("2"), 1.0), source("1", Some("3"), 1.0)];
    cfg.metrics.queues = vec!["1/S1".into()];
    let sm = run(&cfg).summary;
    assert_eq!(num(&sm, "queue_bytes.1/S1.max"), 4500.0, "{sm}");
    assert!(num(&sm, "queue_bytes.1/S1.mean") > 4490.0, "{sm}");
}

/// The rate series follows a limiter as it climbs back: QCN throttles two flows into one port,
/// the second stops at 5 ms, and the first recovers by its byte counter's cycles (fast recovery,
/// then active increase), with no CNM once the queue has drained.
#[test]
fn the_rate_series_follows_a_recovering_limiter() {
    let mut cfg = star(3, G10, 1_000_000);
    cfg.cm = qcn_eval();
    cfg.duration_ps = 12 * MS;
    cfg.metrics.window_ps = [0, 12 * MS];
    let mut second = source("2", Some("3"), 0.8);
    second.stop_ps = Some(5 * MS);
    cfg.traffic.sources = vec![source("1", Some("3"), 0.8), second];
    cfg.metrics.per_flow = vec![["1".into(), "3".into()]];
    cfg.metrics.hot_port = "S1/3".into();
    let r = run(&cfg).result;
    let rates = series(&r, "rates");
    let gbps = &rates.columns[0].1;
    assert_eq!(rates.entities, ["1->3"]);
    // rising bin by bin once the second flow has gone (its queue drained by 8 ms)
    for b in 9..12 {
        assert!(gbps[b] > gbps[b - 1] + 0.1, "bin {b}: {gbps:?}");
    }
}
