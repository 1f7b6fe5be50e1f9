//! Same config and seed ⇒ identical summary and series; another seed ⇒ different series.

use crate::common::*;
use cnsim_core::scenario::BufferModel;
use cnsim_core::{CoreConfig, RunControl, Simulator};

fn cfg(seed: u64) -> cnsim_core::CoreConfig {
    let mut c = star(6, G10, 1_000_000);
    c.seed = seed;
    c.duration_ps = 5 * MS;
    c.metrics.window_ps = [MS, 5 * MS];
    c.traffic.sources = (1..=6).map(|i| source(&i.to_string(), None, 0.7)).collect();
    c.metrics.per_flow = vec![["2".into(), "1".into()]];
    c
}

#[test]
fn same_seed_same_results_other_seed_other_series() {
    let a = run(&cfg(1)).result;
    let b = run(&cfg(1)).result;
    let c = run(&cfg(2)).result;
    assert_eq!(a.summary.to_value(), b.summary.to_value()); // as JSON: NaN is null
    assert_eq!(format!("{:?}", a.series), format!("{:?}", b.series));
    assert_ne!(format!("{:?}", a.series), format!("{:?}", c.series));
}

/// The event loop's later prefetch stages (`Simulator::prefetches_dependent_lines`) are hints:
/// forced on where the network is small enough to leave them off, and off where it is not, a
/// run gives the same summary and series — on a star with PAUSE and a hotspot, without CM and
/// with QCN and with FECN (control frames, probes and their events), and on a fat tree with a
/// hotspot whose frames, PAUSE frames among them, cross three switches, without CM and with QCN.
#[test]
fn the_later_prefetch_stages_change_no_result() {
    let mut on_star = star(16, G10, 1_000_000);
    set_thresholds(
        &mut on_star,
        BufferModel::Partitioned,
        150_000,
        120_000,
        60_000,
        true,
    );
    on_star.hotspots = vec![cnsim_core::scenario::HotspotConfig {
        node: "1".into(),
        rate: 0.2,
        start_ps: 2 * MS,
        end_ps: 6 * MS,
    }];
    let mut tree = fat_tree(4, 2, true, G10, 1_000_000);
    set_thresholds(
        &mut tree,
        BufferModel::Partitioned,
        150_000,
        120_000,
        60_000,
        true,
    );
    // a hotspot in the tree too: PAUSE frames then cross between switches, and a PAUSE frame,
    // which names no destination, must not be looked up in the routes
    tree.hotspots = on_star.hotspots.clone();
    let mut with_qcn = on_star.clone();
    with_qcn.cm = qcn_eval();
    let mut with_fecn = on_star.clone();
    with_fecn.cm = fecn_line_rate();
    let mut tree_qcn = tree.clone();
    tree_qcn.cm = qcn_eval();
    for mut cfg in [on_star, with_qcn, with_fecn, tree, tree_qcn] {
        cfg.duration_ps = 8 * MS;
        cfg.metrics.window_ps = [MS, 8 * MS];
        cfg.traffic.sources = cfg
            .topology
            .nodes
            .iter()
            .map(|n| source(n, None, 0.85))
            .collect();
        let run_with = |on: bool| {
            let mut sim = Simulator::new(&cfg).expect("valid config");
            sim.set_prefetch_dependent_lines(on);
            sim.run(&RunControl::default()).expect("not interrupted");
            sim.finish()
        };
        let (a, b) = (run_with(false), run_with(true));
        let summary = a.summary.to_value();
        assert!(summary["conservation"]["delivered"].as_u64() > Some(10_000));
        if cfg.topology.fat_tree.is_some() && cfg.cm.scheme == "none" {
            assert!(num(&summary, "pause_frames") > 0.0);
        }
        if cfg.cm.scheme != "none" {
            assert!(
                summary["cm"]["frames"].as_u64() > Some(100),
                "{}",
                cfg.cm.scheme
            );
        }
        assert_eq!(a.summary.to_value(), b.summary.to_value());
        assert_eq!(format!("{:?}", a.series), format!("{:?}", b.series));
    }
}

/// A NIC with more than 16 VOQs waiting in its round robin asks ahead for the VOQ its next
/// arrival joins and for the slot that arrival writes (`sim/nics.rs`, `BACKLOGGED_RING`), which
/// otherwise happens only in the largest stars: 48 sources at full load toward every other node
/// and a hotspot, lossless, so PAUSE holds the NICs and their VOQs fill toward 47 destinations.
/// Without CM and with QCN's limiters, the later prefetch stages on and off, every frame is
/// accounted for and the results are the same.
#[test]
fn a_deep_round_robin_of_backlogged_voqs_changes_no_result() {
    let mut base = star(48, G10, 1_000_000);
    set_thresholds(
        &mut base,
        BufferModel::Partitioned,
        150_000,
        120_000,
        60_000,
        true,
    );
    base.duration_ps = 3 * MS;
    base.metrics.window_ps = [MS, 3 * MS];
    base.traffic.sources = base
        .topology
        .nodes
        .iter()
        .map(|n| source(n, None, 1.0))
        .collect();
    base.hotspots = vec![cnsim_core::scenario::HotspotConfig {
        node: "1".into(),
        rate: 0.2,
        start_ps: MS / 2,
        end_ps: 3 * MS,
    }];
    let mut with_qcn = base.clone();
    with_qcn.cm = qcn_eval();
    for cfg in [base, with_qcn] {
        let run_with = |on: bool| {
            run_prepared(&cfg, |sim| sim.set_prefetch_dependent_lines(on)) // conservation checked
        };
        let (a, b) = (run_with(false), run_with(true));
        assert!(num(&a.summary, "pause_frames") > 0.0);
        assert!(a.in_flight_counted > 48 * 17, "{}", a.in_flight_counted);
        assert_eq!(a.summary, b.summary);
        assert_eq!(
            format!("{:?}", a.result.series),
            format!("{:?}", b.result.series)
        );
    }
}

/// The stages are on where the ports', NICs' and generators' state outgrows a core's private
/// cache (2 MiB): a 2,048-host tree's 8,192 ports hold 3 MiB alone; 16 hosts and a 512-host
/// tree stay below.
#[test]
fn the_later_prefetch_stages_follow_the_size_of_the_network() {
    let on = |cfg: &CoreConfig| {
        Simulator::new(cfg)
            .expect("valid config")
            .prefetches_dependent_lines()
    };
    assert!(!on(&star(16, G10, 1_000_000)));
    assert!(!on(&fat_tree(32, 2, true, G10, 1_000_000)));
    assert!(on(&fat_tree(64, 2, true, G10, 1_000_000)));
}

/// A notification point draws from its own random stream (algorithms.md §9, docs/decisions.md
/// "Random streams"): QCN-3pt drawing a reflection for every frame it receives, with a RefP so
/// small that none is ever sent, changes no result — the reaction points of the same NICs draw
/// their timer jitter (D8) as when RefP is 0 and nothing is drawn. (When the draws came from
/// the NICs' own streams, they moved that jitter.)
#[test]
fn reflection_draws_do_not_move_the_reaction_points_draws() {
    let mut base = hotspot_star(20 * MS);
    base.metrics.per_flow = vec![["2".into(), "1".into()], ["3".into(), "1".into()]];
    let run_with = |refp: f64| {
        let out = run(&with_qcn3pt(&base, refp));
        let mut summary = out.summary;
        // arrivals the NP acts on are events; the engine's count of them is not a result
        summary.as_object_mut().unwrap().remove("engine");
        (summary, format!("{:?}", out.result.series))
    };
    let ((silent, silent_series), (drawn, drawn_series)) = (run_with(0.0), run_with(1e-300));
    assert_eq!(silent["cm"]["by_kind"].get("reflection"), None, "none sent");
    assert!(
        silent["cm"]["frames"].as_u64() > Some(50),
        "CNMs create limiters, whose byte counters and timers draw jitter"
    );
    assert_eq!(silent, drawn);
    assert_eq!(silent_series, drawn_series);
}

/// Notification points select the frames they act on as the frames leave for their NIC, and
/// the others reach their sink without an arrival event (`Simulator::set_select_at_departure`):
/// selected at the arrivals instead, every arrival an event, the results are the same — QCN-3pt
/// drawing its reflections (from the NP's own stream, in the order of the arrivals either way)
/// and DCQCN in both CNP modes — and only the count of events differs.
#[test]
fn selecting_at_departure_changes_no_result() {
    let mut base = hotspot_star(10 * MS);
    base.metrics.per_flow = vec![["2".into(), "1".into()], ["3".into(), "4".into()]];
    let three_point = with_qcn3pt(&base, 0.04);
    let dcqcn = |mode: &str| {
        let mut c = base.clone();
        c.cm = dcqcn_paper(mode);
        c
    };
    for cfg in [three_point, dcqcn("suppress"), dcqcn("poll")] {
        let run_with = |at_departure: bool| {
            let mut sim = Simulator::new(&cfg).expect("valid config");
            sim.set_select_at_departure(at_departure);
            sim.run(&RunControl::default()).expect("not interrupted");
            let result = sim.finish();
            let mut summary = result.summary.to_value();
            let events = summary["engine"]["events"].as_u64().unwrap();
            summary.as_object_mut().unwrap().remove("engine");
            (summary, format!("{:?}", result.series), events)
        };
        let (departure, arrival) = (run_with(true), run_with(false));
        let kind = if cfg.cm.scheme == "qcn3pt" {
            "reflection"
        } else {
            "cnp"
        };
        assert!(
            departure.0["cm"]["by_kind"][kind]["frames"].as_u64() > Some(10),
            "{}: the NPs act: {}",
            cfg.cm.scheme,
            departure.0["cm"]
        );
        assert_eq!(departure.0, arrival.0, "{}", cfg.cm.scheme);
        assert_eq!(departure.1, arrival.1, "{}", cfg.cm.scheme);
        assert!(
            departure.2 + 10_000 < arrival.2,
            "{}: arrivals saved",
            cfg.cm.scheme
        );
    }
}

/// Eight hosts at 85 % load on a partitioned switch with PAUSE, node 1's port at a fifth of its
/// rate from 1 to 6 ms: flows get limited, and a scheme's sinks and sources have work to do.
fn hotspot_star(duration_ps: u64) -> CoreConfig {
    let mut c = star(8, G10, 1_000_000);
    set_thresholds(
        &mut c,
        BufferModel::Partitioned,
        150_000,
        120_000,
        60_000,
        true,
    );
    c.hotspots = vec![cnsim_core::scenario::HotspotConfig {
        node: "1".into(),
        rate: 0.2,
        start_ps: MS,
        end_ps: 6 * MS,
    }];
    c.duration_ps = duration_ps;
    c.metrics.window_ps = [MS, duration_ps];
    c.traffic.sources = (1..=8)
        .map(|i| source(&i.to_string(), None, 0.85))
        .collect();
    c
}

/// `cfg` with QCN-3pt (the eval deck's QCN constants) reflecting with probability `refp`.
fn with_qcn3pt(cfg: &CoreConfig, refp: f64) -> CoreConfig {
    let mut c = cfg.clone();
    c.cm = qcn3pt_eval(refp);
    c
}
