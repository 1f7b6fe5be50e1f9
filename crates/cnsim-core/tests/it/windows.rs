//! The figures summary.json adds for targets.md (issue 12, item 2): named windows, sent
//! throughput per source, drops by place, CM frames by kind and origin.

use cnsim_core::cm::CmConfig;
use cnsim_core::scenario::{BufferModel, HotspotConfig};
use cnsim_core::CoreConfig;

use crate::common::*;

/// Two sources at 8 Gb/s each into node 3, whose port serves 2 Gb/s from 10 to 40 ms.
fn hotspot_run(buffer: BufferModel, pause: bool) -> CoreConfig {
    let mut cfg = star(3, G10, 1_000_000);
    cfg.duration_ps = 60 * MS;
    cfg.metrics.window_ps = [10 * MS, 40 * MS];
    cfg.metrics.windows = vec![
        named_window("same", 10 * MS, 40 * MS),
        named_window("after", 40 * MS, 60 * MS),
        named_window("odd", 10 * MS + 400_000_000, 20 * MS + 600_000_000),
    ];
    set_thresholds(&mut cfg, buffer, 300_000, 150_000, 100_000, pause);
    cfg.traffic.sources = vec![source("1", Some("3"), 0.8), source("2", Some("3"), 0.8)];
    cfg.metrics.hot_port = "S1/3".into();
    cfg.hotspots = vec![HotspotConfig {
        node: "3".into(),
        rate: 0.2,
        start_ps: 10 * MS,
        end_ps: 40 * MS,
    }];
    cfg
}

#[test]
fn a_named_window_equal_to_the_main_one_gives_its_figures_exactly() {
    for (buffer, pause) in [
        (BufferModel::Partitioned, true),
        (BufferModel::Egress, false),
    ] {
        let out = run(&hotspot_run(buffer, pause));
        let sm = &out.summary;
        let w = &sm["windows"]["same"];
        assert_eq!(w["window_s"], serde_json::json!([0.01, 0.04]));
        for key in [
            "throughput_gbps.aggregate",
            "throughput_gbps.hot_port",
            "throughput_gbps.per_node.3",
            "paused_fraction",
            "paused_fraction_all",
            "cm.frames",
        ] {
            assert_eq!(num(w, key), num(sm, key), "{key}");
        }
        assert_eq!(w["drops"], sm["drops_window"]);
        for stat in ["mean", "std", "max"] {
            let (a, b) = (
                num(w, &format!("queue_bytes.hot.{stat}")),
                num(sm, &format!("queue_bytes.hot.{stat}")),
            );
            assert!(
                (a - b).abs() <= 1e-9 * b.abs().max(1.0),
                "{stat}: {a} vs {b}"
            );
        }
        assert!(num(sm, "throughput_gbps.hot_port") > 1.99);
        if pause {
            assert!(num(sm, "paused_fraction") > 0.1, "the inputs were paused");
            assert_eq!(num(sm, "drops.frames"), 0.0);
        } else {
            // 16 Gb/s offered, 2 served: the egress buffer overflows
            assert!(num(sm, "drops_window.frames") > 0.0);
            assert_eq!(
                sm["drops"]["by_place"]["egress"]["frames"],
                sm["drops"]["frames"]
            );
        }
        // after the hotspot the port serves at line rate again and the queue drains
        let after = &sm["windows"]["after"];
        assert!(num(after, "throughput_gbps.hot_port") > 9.0);
        // a window between bin edges moves to the nearest ones
        assert_eq!(
            sm["windows"]["odd"]["window_s"],
            serde_json::json!([0.01, 0.021])
        );
    }
}

#[test]
fn each_source_reports_what_it_sent_and_drops_name_their_place() {
    let mut cfg = hotspot_run(BufferModel::Partitioned, false);
    cfg.metrics.window_ps = [0, 10 * MS];
    let out = run(&cfg);
    let sm = &out.summary;
    // before the hotspot nothing holds the sources back: 8 Gb/s each; node 3 sends nothing
    for n in ["1", "2"] {
        let sent = num(sm, &format!("throughput_gbps.per_source_sent.{n}"));
        assert!((sent - 8.0).abs() < 0.2, "{n}: {sent}");
    }
    assert!(sm["throughput_gbps"]["per_source_sent"]["3"].is_null());
    // without PAUSE the 300 KB partitions overflow during the hotspot
    let by_place = &sm["drops"]["by_place"];
    assert!(num(sm, "drops.frames") > 0.0);
    assert_eq!(by_place["partition"]["frames"], sm["drops"]["frames"]);
    assert_eq!(by_place["partition"]["bytes"], sm["drops"]["bytes"]);
    assert_eq!(by_place.as_object().unwrap().len(), 1);
}

#[test]
fn control_frames_are_counted_by_kind_and_by_origin() {
    let mut cfg = star(3, G10, 1_000_000);
    cfg.cm = fecn_line_rate();
    cfg.duration_ps = 20 * MS;
    cfg.metrics.window_ps = [0, 20 * MS];
    cfg.traffic.sources = vec![source("1", Some("3"), 0.8), source("2", Some("3"), 0.8)];
    cfg.metrics.hot_port = "S1/3".into();
    let out = run(&cfg);
    let cm = &out.summary["cm"];
    let total = num(cm, "frames");
    assert!(total > 0.0);
    let sum = |m: &serde_json::Value| {
        m.as_object()
            .unwrap()
            .values()
            .map(|c| c["frames"].as_f64().unwrap())
            .sum::<f64>()
    };
    assert_eq!(sum(&cm["by_kind"]), total);
    assert_eq!(sum(&cm["by_cp"]), total);
    // FECN: each source probes, each destination returns the probes
    assert!(num(cm, "by_kind.probe.frames") > 0.0);
    assert_eq!(
        num(cm, "by_kind.probe.frames"),
        num(cm, "by_kind.probe_reply.frames")
    );
    for origin in ["node:1", "node:2", "node:3"] {
        assert!(num(cm, &format!("by_cp.{origin}.frames")) > 0.0, "{origin}");
    }
}

/// QCN's CNMs are congestion notifications: counted as "negative" although the field they carry,
/// QntzFb, is a positive magnitude (they were reported as "positive"); BCN's signed Fb still
/// splits into both kinds.
#[test]
fn qcn_notifications_are_negative_feedback_and_bcn_splits_by_sign() {
    let mut cfg = hotspot_run(BufferModel::Partitioned, true);
    cfg.cm = qcn_eval();
    let out = run(&cfg);
    let cm = &out.summary["cm"];
    assert!(num(cm, "frames") > 0.0);
    assert_eq!(num(cm, "by_kind.negative.frames"), num(cm, "frames"));
    assert!(cm["by_kind"]["positive"].is_null(), "{cm}");

    let mut cfg = hotspot_run(BufferModel::Partitioned, true);
    cfg.cm = bcn_zhb(37_500.0); // Qeq inside the 300 KB partitions
    let out = run(&cfg);
    let cm = &out.summary["cm"];
    let (neg, pos) = (
        num(cm, "by_kind.negative.frames"),
        num(cm, "by_kind.positive.frames"),
    );
    assert!(neg > 0.0 && pos > 0.0, "{cm}");
    assert_eq!(neg + pos, num(cm, "frames"));
}

/// §1.2's switch: a CP that samples frames as they leave instead of as they arrive still signals
/// the sources of the frames it samples, which slow down; only the sampling instants differ.
#[test]
fn a_cp_sampling_at_departure_signals_the_hot_flows_and_holds_the_queue() {
    // without PAUSE the hot queue overflows its 300 KB discard threshold unless the sources slow
    let none = run(&hotspot_run(BufferModel::Egress, false)).summary;
    let dropped = num(&none, "drops.frames");
    assert!(dropped > 10_000.0, "{dropped}");
    for cm in [qcn_eval(), bcn_zhb(37_500.0)] {
        let at = |point: &str| {
            let mut cfg = hotspot_run(BufferModel::Egress, false);
            cfg.cm = cm.clone();
            cfg.cm
                .params
                .insert("sample_at".into(), serde_json::json!(point));
            run(&cfg).summary
        };
        let (arrival, departure) = (at("arrival"), at("departure"));
        let scheme = &cm.scheme;
        let cm_d = &departure["cm"];
        // every message comes from the hot port's CP, and reaches the hot flows' sources: they
        // slow down and the hot queue loses a small fraction of what it lost without CM
        assert!(num(cm_d, "frames") > 10.0, "{scheme}: {cm_d}");
        assert_eq!(
            num(cm_d, "by_cp.S1/3.frames"),
            num(cm_d, "frames"),
            "{scheme}"
        );
        assert!(num(&departure, "drops.frames") < dropped / 10.0, "{scheme}");
        // the sampling instants differ from arrival's
        assert_ne!(
            num(cm_d, "frames"),
            num(&arrival["cm"], "frames"),
            "{scheme}"
        );
    }
}

/// Flows 1→3 and 2→3 at 4 Gb/s each into node 3, whose port serves 5 Gb/s for the first 20 ms,
/// under `cm` for `duration_ms`: each flow's rate series (1 ms bins), by flow name.
fn rate_series_of_two_flows_into_a_hotspot(
    cm: CmConfig,
    duration_ms: u64,
) -> Vec<(String, Vec<f64>)> {
    let mut cfg = star(3, G10, 1_000_000);
    cfg.cm = cm;
    cfg.duration_ps = duration_ms * MS;
    cfg.metrics.window_ps = [0, duration_ms * MS];
    cfg.metrics.hot_port = "S1/3".into();
    cfg.metrics.per_flow = vec![["1".into(), "3".into()], ["2".into(), "3".into()]];
    cfg.traffic.sources = vec![source("1", Some("3"), 0.4), source("2", Some("3"), 0.4)];
    cfg.hotspots = vec![HotspotConfig {
        node: "3".into(),
        rate: 0.5,
        start_ps: 0,
        end_ps: 20 * MS,
    }];
    let out = run(&cfg);
    let rates = series(&out.result, "rates");
    let col = &rates.columns[0].1;
    let bins = col.len() / rates.entities.len();
    rates
        .entities
        .iter()
        .enumerate()
        .map(|(i, flow)| (flow.clone(), col[i * bins..(i + 1) * bins].to_vec()))
        .collect()
}

/// A released limiter ends the flow's rate series (NaN: "no limiter"), whichever event released
/// it (a frame sent, a CNM, a timer); it used to keep showing its last rate.
#[test]
fn a_released_limiter_ends_its_rate_series() {
    for (flow, v) in rate_series_of_two_flows_into_a_hotspot(qcn_eval(), 300) {
        assert!(v.iter().any(|x| x.is_finite()), "{flow} was limited");
        // 8 Gb/s into 5 during the hotspot, into 10 after it: the limiter climbs back to line
        // rate and goes
        assert!(
            v.last().unwrap().is_nan(),
            "{flow}: {:?}",
            &v[v.len() - 5..]
        );
    }
}

/// The rate series follows the limiter through increases driven by the frames it sends (QCN's
/// byte counter, §5.3), not only through the CNMs and timers that used to be the only places it
/// was recorded: with the timer out of the way every increase below comes from the byte counter.
#[test]
fn the_rate_series_records_byte_counter_increases() {
    let mut cm = qcn_eval();
    cm.params
        .insert("timer_ps".into(), serde_json::json!(10_000_000_000_000u64)); // 10 s
    for (flow, v) in rate_series_of_two_flows_into_a_hotspot(cm, 60) {
        // after the hotspot (1 ms bins from 25 ms) no CNM comes: the limiter climbs by byte
        // cycles of 150 KB, about one per millisecond at 1 Gb/s (the series stayed flat)
        let v = &v[25..];
        let rises = v
            .windows(2)
            .filter(|w| w[0].is_finite() && w[1].is_finite() && w[1] > w[0])
            .count();
        assert!(rises >= 5, "{flow}: {rises} rises in {v:?}");
    }
}

/// A port's throughput counts data only (docs/decisions.md, "Metrics"): FECN's forward probes
/// cross the hot port beside the data (about 10 Mb/s of them here), yet its throughput equals
/// the data delivered through it, to within the frame or two on the wire at the window's ends.
#[test]
fn the_hot_port_throughput_counts_data_not_probes() {
    let mut cfg = star(3, G10, 1_000_000);
    cfg.cm = fecn_line_rate();
    cfg.duration_ps = 20 * MS;
    cfg.metrics.window_ps = [0, 20 * MS];
    cfg.traffic.sources = vec![source("1", Some("3"), 0.4), source("2", Some("3"), 0.4)];
    cfg.metrics.hot_port = "S1/3".into();
    let out = run(&cfg);
    let sm = &out.summary;
    let probes_gbps = num(sm, "cm.by_kind.probe.bytes") * 8.0 / 20e-3 / 1e9;
    assert!(
        probes_gbps > 0.005,
        "probes crossed the port: {probes_gbps} Gb/s"
    );
    let (hot, data) = (
        num(sm, "throughput_gbps.hot_port"),
        num(sm, "throughput_gbps.per_node.3"),
    );
    let edge = 2.0 * 1500.0 * 8.0 / 20e-3 / 1e9;
    assert!(
        (hot - data).abs() <= edge,
        "hot port {hot}, data into node 3 {data}"
    );
}

#[test]
fn an_empty_window_reports_no_traffic_not_a_division_by_zero() {
    let mut cfg = star(3, G10, 1_000_000);
    cfg.metrics.window_ps = [2 * MS, 2 * MS];
    cfg.traffic.sources = vec![source("1", Some("2"), 0.5)];
    let sm = run(&cfg).summary;
    assert_eq!(num(&sm, "throughput_gbps.aggregate"), 0.0, "{sm}");
    assert_eq!(num(&sm, "throughput_gbps.per_source_sent.1"), 0.0);
}

/// Out-of-band feedback (a CNM that does not travel the network) arrives its delay after it
/// was sent: with a delay beyond the run, the flows never hear of the congestion they cause and
/// deliver what they deliver without a scheme; with no delay they are throttled at once.
#[test]
fn out_of_band_feedback_arrives_after_its_delay() {
    let with = |delay_ps: Option<u64>| {
        let mut cfg = star(3, G10, 1_000_000);
        cfg.traffic.sources = vec![source("1", Some("3"), 0.8), source("2", Some("3"), 0.8)];
        cfg.metrics.hot_port = "S1/3".into();
        if let Some(d) = delay_ps {
            cfg.cm = qcn_eval();
            cfg.cm.params.insert("feedback".into(), "oob".into());
            cfg.cm.params.insert("feedback_delay_ps".into(), d.into());
        }
        run(&cfg).summary
    };
    let none = with(None);
    let late = with(Some(1_000 * MS));
    assert!(num(&late, "cm.by_kind.negative.frames") > 0.0, "{late}");
    for key in ["throughput_gbps", "queue_bytes", "drops"] {
        assert_eq!(late[key], none[key], "{key}");
    }
    let now = with(Some(0));
    assert!(num(&now, "queue_bytes.hot.max") < num(&none, "queue_bytes.hot.max") / 2.0);
}

/// A hot port stopped (served at 0 Gb/s) through the whole window has no capacity to use: its
/// utilisation is 0, not 0/0.
#[test]
fn a_hot_port_stopped_all_window_has_no_utilisation() {
    let mut cfg = star(3, G10, 1_000_000);
    cfg.metrics.window_ps = [2 * MS, 8 * MS];
    cfg.metrics.hot_port = "S1/2".into();
    cfg.traffic.sources = vec![source("1", Some("2"), 0.5)];
    cfg.hotspots = vec![HotspotConfig {
        node: "2".into(),
        rate: 0.0,
        start_ps: MS,
        end_ps: 9 * MS,
    }];
    let sm = run(&cfg).summary;
    assert_eq!(num(&sm, "throughput_gbps.hot_port"), 0.0, "{sm}");
    assert_eq!(num(&sm, "bottleneck_utilisation"), 0.0, "{sm}");
}
