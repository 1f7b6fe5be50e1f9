//! PFC (802.1Qbb, algorithms.md §2.1): a PAUSE names one priority class and stops it alone, at
//! the switch's input and in the NIC's output buffer, which then holds one FIFO and one byte
//! count per class; with one class it is 802.3x PAUSE.

use cnsim_core::scenario::{BufferModel, HotspotConfig};

use crate::common::*;

/// Node 1 sends a culprit flow to node 2 (class 0, 4.5 Gb/s offered) and a victim flow to node 3
/// (class `classes - 1`, 4.5 Gb/s) through one switch; node 2's link serves 1 Gb/s from 1 ms on.
/// Partitioned memory of 600 KB per input with PAUSE; with two classes each class has half of
/// it with the same headroom (rtt·bw = 2·1us·10G/8 + 2·1500 = 5,500 B, §2.3).
fn victim_behind_a_hotspot(classes: u8) -> cnsim_core::CoreConfig {
    let mut cfg = star(3, G10, 1_000_000);
    cfg.duration_ps = 20 * MS;
    cfg.metrics.window_ps = [10 * MS, 20 * MS];
    cfg.metrics.per_flow = vec![["1".into(), "2".into()], ["1".into(), "3".into()]];
    let share = 600_000 / u64::from(classes.max(1));
    let xoff = share - 5_500;
    set_thresholds(
        &mut cfg,
        BufferModel::Partitioned,
        600_000,
        xoff,
        xoff / 2,
        true,
    );
    cfg.switch.pfc_classes = classes;
    let mut victim = source("1", Some("3"), 0.45);
    victim.priority = classes.saturating_sub(1);
    cfg.traffic.sources = vec![source("1", Some("2"), 0.45), victim];
    cfg.hotspots = vec![HotspotConfig {
        node: "2".into(),
        rate: 0.1,
        start_ps: MS,
        end_ps: 20 * MS,
    }];
    cfg
}

fn flow(sm: &serde_json::Value, f: &str) -> f64 {
    num(sm, &format!("throughput_gbps.per_flow.{f}"))
}

#[test]
fn a_class_pause_leaves_the_other_class_its_rate() {
    let pfc = run(&victim_behind_a_hotspot(2)).summary;
    assert_eq!(num(&pfc, "drops.frames"), 0.0, "{pfc}");
    assert!(
        num(&pfc, "pause_frames") > 0.0,
        "the culprit's class is paused"
    );
    // the victim keeps what it offers (4.5 Gb/s), the culprit what the hot port serves (1 Gb/s)
    assert!((flow(&pfc, "1->3") - 4.5).abs() < 0.1, "{pfc}");
    assert!((flow(&pfc, "1->2") - 1.0).abs() < 0.02, "{pfc}");

    // 802.3x (and PFC with one class) stops the whole link: the victim waits behind the culprit
    let pause = run(&victim_behind_a_hotspot(0)).summary;
    let one = run(&victim_behind_a_hotspot(1)).summary;
    assert_eq!(pause, one, "one PFC class is 802.3x PAUSE");
    assert!(flow(&pause, "1->3") < 1.5, "{pause}");
    assert_eq!(num(&pause, "drops.frames"), 0.0);
}

/// With classes the NIC's output buffer is one FIFO of `egress_buffer` bytes per class: two
/// greedy flows of one class (20 Gb/s offered to the 10 Gb/s link) fill their FIFO to its three
/// frames and no further, and the other class's FIFO stays free; FECN's probes wait for room in
/// their flow's FIFO like data, and still go out once per interval.
#[test]
fn each_class_has_an_output_buffer_of_its_own_size() {
    let mut cfg = star(3, G10, 1_000_000);
    cfg.switch.pfc_classes = 2;
    cfg.nic.egress_buffer = 4500;
    cfg.cm = fecn_line_rate();
    cfg.traffic.sources = vec![source("1", Some("2"), 1.0), source("1", Some("3"), 1.0)];
    cfg.metrics.queues = vec!["1/S1".into()];
    let sm = run(&cfg).summary;
    assert_eq!(num(&sm, "queue_bytes.1/S1.max"), 4500.0, "{sm}");
    // 10 ms, a probe every 100 us per flow (the first at its first frame)
    assert_eq!(num(&sm, "cm.by_kind.probe.frames"), 200.0, "{sm}");
}

/// A 2-to-1 incast (two 10 Gb/s senders into node 3) under `cm`, its traffic in the highest of
/// `classes` PFC classes, measured over [10, 20] ms: its summary and its flows' rate series.
fn incast(classes: u8, cm: &cnsim_core::cm::CmConfig) -> (serde_json::Value, String) {
    let mut cfg = star(3, G10, 1_000_000);
    cfg.duration_ps = 20 * MS;
    cfg.metrics.window_ps = [10 * MS, 20 * MS];
    cfg.metrics.per_flow = vec![["1".into(), "3".into()], ["2".into(), "3".into()]];
    let share = 600_000 / u64::from(classes.max(1));
    set_thresholds(
        &mut cfg,
        BufferModel::Partitioned,
        600_000,
        share - 5_500,
        (share - 5_500) / 2,
        true,
    );
    cfg.switch.pfc_classes = classes;
    cfg.traffic.sources = ["1", "2"]
        .map(|n| {
            let mut s = source(n, Some("3"), 1.0);
            s.priority = classes.saturating_sub(1);
            s
        })
        .to_vec();
    cfg.cm = cm.clone();
    let out = run(&cfg);
    let rates = format!("{:?}", series(&out.result, "rates"));
    (out.summary, rates)
}

/// Every message of a scheme names the class of the flow it is about, and reaches that class's
/// limiter: an incast on class 1 of two classes is throttled exactly as one without PFC (no
/// PAUSE occurs, and the class's queue is the port's) — DCQCN's CNPs (in poll mode sent from a
/// wake-up per flow, `Event::SinkTimer`, whose one word packs the source and the class), QCN's
/// and QCN+'s CNMs and probe answers, QCN-3pt's reflections, FECN's returned probes. (With the
/// class left out of the wake-up, the class-1 DCQCN run sent no CNP; with it left out of a
/// reflection or a returned probe, the message reached a class-0 limiter.) The flows' rate
/// series follow their class-1 limiters the same way.
#[test]
fn every_scheme_serves_a_higher_class_as_class_0() {
    let with = |scheme: &str, extra: &[(&str, serde_json::Value)]| {
        let mut cm = qcn_eval();
        cm.scheme = scheme.into();
        for (k, v) in extra {
            cm.params.insert((*k).into(), v.clone());
        }
        cm
    };
    let schemes = [
        dcqcn_paper("poll"),
        dcqcn_paper("suppress"),
        qcn_eval(),
        qcn3pt_eval(0.04),
        with(
            "qcn-plus",
            &[
                ("base_w", 2.0.into()),
                // W grows with the measured RTT: an answer's RTT moves the loop
                ("factor", 1000.0.into()),
                ("gi_plus", 15.873.into()),
                ("probe_period_ps", 1_000_000_000u64.into()),
                ("to_threshold", 150_000.into()),
            ],
        ),
        fecn_line_rate(),
    ];
    for cm in &schemes {
        let ((plain, plain_rates), (high, high_rates)) = (incast(0, cm), incast(2, cm));
        let name = &cm.scheme;
        assert_eq!(num(&high, "pause_frames"), 0.0, "{name}: {high}");
        assert!(num(&plain, "cm.frames") >= 10.0, "{name}: {plain}");
        assert_eq!(high["cm"], plain["cm"], "{name}");
        // the rate series follow the class-1 limiters (`Recorder::set_rate_classes`)
        assert!(plain_rates.len() > 500, "{name}: {plain_rates}");
        assert_eq!(high_rates, plain_rates, "{name}");
        for f in ["1->3", "2->3"] {
            assert_eq!(flow(&high, f), flow(&plain, f), "{name}: {f}");
        }
    }
}

/// A per-VOQ ingress with PFC classes has a VOQ per destination and class, each holding the
/// ingress shared by the N − 1 destinations and the classes (`sim/build.rs`, `voq_cap`), so
/// that a NIC never holds more than `nic.ingress_size`: node 1's class-1 flow into a node that
/// serves nothing keeps 30,000 / (2 · 2) = 7,500 B (5 frames) in its VOQ and drops the rest at
/// the source (the switch holds the class's frames up to its XOFF, as in `pause.rs`'s
/// a_source_paused_to_the_end_counts_every_frame_it_generated).
#[test]
fn a_per_voq_ingress_is_shared_by_destinations_and_classes() {
    let mut cfg = star(3, G10, 1_000_000);
    cfg.duration_ps = 2 * MS;
    cfg.metrics.window_ps = [0, 2 * MS];
    set_thresholds(
        &mut cfg,
        BufferModel::Partitioned,
        60_000,
        24_500,
        12_250,
        true,
    );
    cfg.switch.pfc_classes = 2;
    cfg.nic.ingress = cnsim_core::scenario::Ingress::PerVoq;
    cfg.nic.ingress_size = 30_000;
    let mut s = source("1", Some("3"), 1.0);
    s.priority = 1;
    cfg.traffic.sources = vec![s];
    cfg.hotspots = vec![HotspotConfig {
        node: "3".into(),
        rate: 0.0,
        start_ps: 0,
        end_ps: 2 * MS,
    }];
    let out = run(&cfg);
    let sm = &out.summary;
    // 19 frames below the class's XOFF in the switch, 1 on the wire to it, 5 in the VOQ
    assert_eq!(out.in_flight_counted, 19 + 1 + 5, "{sm}");
    assert_eq!(num(sm, "source_drops.frames"), 1667.0 - 25.0, "{sm}");
}
