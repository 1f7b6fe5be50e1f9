//! The engine refuses a config it cannot run, naming the key (the front end checks first; these
//! are the engine's own checks, for configs built by hand).

use cnsim_core::scenario::{BufferModel, FatTreeConfig, HotspotConfig, LinkConfig, SourceConfig};
use cnsim_core::{CoreConfig, Error, Simulator};

use crate::common::*;

/// The key the engine names when it refuses `cfg`.
fn refused_key(cfg: &CoreConfig) -> String {
    match Simulator::new(cfg) {
        Err(Error::Config { key, .. }) => key,
        other => panic!("expected a config error, got {:?}", other.map(|_| ())),
    }
}

#[test]
fn a_network_that_is_not_connected_is_refused() {
    let mut cfg = star(3, G10, 1_000_000);
    // a switch `s` linked to `peer`, with the first switch's thresholds
    let add_switch = |cfg: &mut CoreConfig, s: &str, peer: &str| {
        cfg.topology.switches.push(s.into());
        cfg.topology.links.push(LinkConfig {
            a: s.into(),
            b: peer.into(),
            rate_bps: G10,
            delay_ps: 1_000_000,
        });
        let first = cfg.switch.thresholds["S1"];
        cfg.switch.thresholds.insert(s.into(), first);
    };
    // a second switch with a node of its own and no link to the first
    cfg.topology.nodes.push("4".into());
    add_switch(&mut cfg, "S2", "4");
    assert_eq!(refused_key(&cfg), "topology.links");
    // the far part grows a second switch: routing searches it and finds no way out either
    add_switch(&mut cfg, "S3", "S2");
    assert_eq!(refused_key(&cfg), "topology.links");
}

/// Names are used in port names ("S1/2", "S1->2") and keys, so none may be empty or hold the
/// separators or white space; the key names the table and the index.
#[test]
fn names_with_separators_are_refused() {
    for bad in ["", "a/b", "a:b", "a->b", "a b", "a\tb"] {
        let mut cfg = star(2, G10, 1_000_000);
        cfg.topology.nodes[1] = bad.into();
        cfg.topology.links[1].b = bad.into();
        assert_eq!(refused_key(&cfg), "topology.nodes.1", "node {bad:?}");
        let mut cfg = star(2, G10, 1_000_000);
        cfg.topology.switches[0] = bad.into();
        assert_eq!(refused_key(&cfg), "topology.switches.0", "switch {bad:?}");
    }
    // a dash alone, or a '>' alone, is allowed
    let mut cfg = star(2, G10, 1_000_000);
    cfg.topology.nodes[1] = "a-b>c".into();
    cfg.topology.links[1].b = "a-b>c".into();
    assert!(Simulator::new(&cfg).is_ok());
}

#[test]
fn at_most_four_named_windows() {
    let mut cfg = star(2, G10, 1_000_000);
    let window = |i: u64| named_window(&format!("w{i}"), i * MS, (i + 1) * MS);
    cfg.metrics.windows = (0..4).map(window).collect();
    assert!(Simulator::new(&cfg).is_ok());
    cfg.metrics.windows.push(window(4));
    assert_eq!(refused_key(&cfg), "metrics.windows");
}

/// The key `CoreConfig::check` names when it refuses `cfg`, or `None` when it accepts it.
fn check_key(cfg: &CoreConfig) -> Option<String> {
    match cfg.check() {
        Ok(()) => None,
        Err(Error::Config { key, .. }) => Some(key),
        Err(e) => panic!("expected a config error, got {e}"),
    }
}

/// Each value check at its edge: the last value accepted, then the first refused, with the key
/// the refusal names (`CoreConfig::check`; the front end checks the same, this is the engine's
/// own line for configs built by hand).
#[test]
fn each_value_check_accepts_its_edge_and_refuses_past_it() {
    type Edit = fn(&mut CoreConfig);
    let cases: &[(&str, Edit, Edit)] = &[
        ("version", |c| c.version = 1, |c| c.version = 2),
        ("duration", |c| c.duration_ps = 1, |c| c.duration_ps = 0),
        (
            "metrics.bin",
            |c| c.metrics.bin_ps = 1,
            |c| c.metrics.bin_ps = 0,
        ),
        (
            "metrics.window",
            |c| c.metrics.window_ps = [MS, MS],
            |c| c.metrics.window_ps = [MS + 1, MS],
        ),
        (
            "metrics.windows.0.name",
            |c| c.metrics.windows = vec![named_window("a", 0, MS)],
            |c| c.metrics.windows = vec![named_window("", 0, MS)],
        ),
        (
            "metrics.windows.1.name",
            |c| c.metrics.windows = vec![named_window("a", 0, MS), named_window("b", 0, MS)],
            |c| c.metrics.windows = vec![named_window("a", 0, MS), named_window("a", 0, MS)],
        ),
        (
            "metrics.windows.0",
            |c| c.metrics.windows = vec![named_window("a", MS, MS)],
            |c| c.metrics.windows = vec![named_window("a", MS + 1, MS)],
        ),
        (
            "nic.egress_buffer",
            |c| c.nic.egress_buffer = 1500,
            |c| c.nic.egress_buffer = 1499,
        ),
        (
            "switch.pfc_classes",
            |c| c.switch.pfc_classes = 8,
            |c| c.switch.pfc_classes = 9,
        ),
        (
            "switch.pause",
            |c| {
                c.switch.buffer = BufferModel::Egress;
                c.switch.pause = false
            },
            |c| {
                c.switch.buffer = BufferModel::Egress;
                c.switch.pause = true
            },
        ),
        ("topology.nodes", |_| {}, |c| c.topology.nodes.clear()),
        (
            "topology.links.1.rate",
            |c| c.topology.links[1].rate_bps = 1,
            |c| c.topology.links[1].rate_bps = 0,
        ),
        (
            "traffic.frame_size",
            |c| c.traffic.frame_size = 64,
            |c| c.traffic.frame_size = 63,
        ),
        (
            "hotspots.0.end",
            |c| c.hotspots = vec![hotspot(1.0, MS, MS)],
            |c| c.hotspots = vec![hotspot(1.0, MS + 1, MS)],
        ),
    ];
    for (key, accepted, refused) in cases {
        let mut cfg = star(2, G10, 1_000_000);
        accepted(&mut cfg);
        assert_eq!(check_key(&cfg), None, "{key}: the edge is accepted");
        let mut cfg = star(2, G10, 1_000_000);
        refused(&mut cfg);
        assert_eq!(
            check_key(&cfg).as_deref(),
            Some(*key),
            "{key}: past the edge"
        );
    }
}

fn hotspot(rate: f64, start_ps: u64, end_ps: u64) -> HotspotConfig {
    HotspotConfig {
        node: "1".into(),
        rate,
        start_ps,
        end_ps,
    }
}

/// Fractions are in [0, 1] with both ends accepted, and NaN is refused.
#[test]
fn loads_and_hotspot_rates_are_fractions() {
    let with_load = |load: f64| {
        let mut cfg = star(2, G10, 1_000_000);
        cfg.traffic.sources = vec![source("1", None, load)];
        check_key(&cfg)
    };
    let with_rate = |rate: f64| {
        let mut cfg = star(2, G10, 1_000_000);
        cfg.hotspots = vec![hotspot(rate, 0, MS)];
        check_key(&cfg)
    };
    for x in [0.0, 1.0] {
        assert_eq!(with_load(x), None, "load {x}");
        assert_eq!(with_rate(x), None, "rate {x}");
    }
    for x in [-0.01, 1.01, f64::NAN] {
        assert_eq!(
            with_load(x).as_deref(),
            Some("traffic.sources.0.load"),
            "load {x}"
        );
        assert_eq!(with_rate(x).as_deref(), Some("hotspots.0.rate"), "rate {x}");
    }
}

/// Fixed sizes need exactly one frame per arrival, geometric sizes a mean of at least one.
#[test]
fn mean_flow_sizes_are_checked_by_size_law() {
    let key = |src: SourceConfig| {
        let mut cfg = star(2, G10, 1_000_000);
        cfg.traffic.sources = vec![src];
        check_key(&cfg)
    };
    let refused = Some("traffic.sources.0.mean_frames");
    assert_eq!(key(source("1", None, 0.5)), None);
    let fixed_two = SourceConfig {
        mean_frames: 2.0,
        ..source("1", None, 0.5)
    };
    assert_eq!(key(fixed_two).as_deref(), refused);
    assert_eq!(key(flows("1", None, 0.5, 1.0)), None);
    assert_eq!(key(flows("1", None, 0.5, 40.0)), None);
    for mean in [0.99, f64::NAN] {
        assert_eq!(
            key(flows("1", None, 0.5, mean)).as_deref(),
            refused,
            "{mean}"
        );
    }
}

/// A source's priority is a class below `switch.pfc_classes`, and 0 without PFC.
#[test]
fn priorities_stay_below_the_pfc_classes() {
    let key = |classes: u8, priority: u8| {
        let mut cfg = star(2, G10, 1_000_000);
        cfg.switch.pfc_classes = classes;
        cfg.traffic.sources = vec![SourceConfig {
            priority,
            ..source("1", None, 0.5)
        }];
        check_key(&cfg)
    };
    let refused = Some("traffic.sources.0.priority");
    assert_eq!(key(0, 0), None);
    assert_eq!(key(0, 1).as_deref(), refused);
    assert_eq!(key(3, 2), None);
    assert_eq!(key(3, 3).as_deref(), refused);
}

/// A fat tree needs an even radix of at least 2 and a level (two when merged at the top), and
/// leaves switches and links to the engine.
#[test]
fn fat_tree_shapes_are_checked() {
    let key = |radix: u32, levels: u32, merged_top: bool| {
        let mut cfg = star(2, G10, 1_000_000);
        cfg.topology.switches.clear();
        cfg.topology.links.clear();
        cfg.topology.fat_tree = Some(FatTreeConfig {
            radix,
            levels,
            merged_top,
            rate_bps: G10,
            delay_ps: 1_000_000,
        });
        check_key(&cfg)
    };
    let refused = Some("topology.fat_tree");
    assert_eq!(key(2, 1, false), None);
    assert_eq!(key(4, 2, true), None);
    assert_eq!(key(0, 1, false).as_deref(), refused);
    assert_eq!(key(1, 1, false).as_deref(), refused);
    assert_eq!(key(3, 1, false).as_deref(), refused);
    assert_eq!(key(4, 0, false).as_deref(), refused);
    assert_eq!(key(4, 1, true).as_deref(), refused);

    let with_fat_tree = |edit: fn(&mut CoreConfig)| {
        let mut cfg = star(2, G10, 1_000_000);
        cfg.topology.fat_tree = Some(FatTreeConfig {
            radix: 4,
            levels: 2,
            merged_top: false,
            rate_bps: G10,
            delay_ps: 1_000_000,
        });
        edit(&mut cfg);
        check_key(&cfg)
    };
    let links = Some("topology.links");
    assert_eq!(
        with_fat_tree(|c| c.topology.links.clear()).as_deref(),
        links
    );
    assert_eq!(
        with_fat_tree(|c| c.topology.switches.clear()).as_deref(),
        links
    );
    let neither = |c: &mut CoreConfig| {
        c.topology.links.clear();
        c.topology.switches.clear();
    };
    assert_eq!(with_fat_tree(neither), None);
}

/// Keys with a default may be left out of the JSON: one frame per arrival, and a PAUSE cycle
/// held 10 ms is a deadlock.
#[test]
fn defaults_fill_keys_left_out() {
    let mut cfg = star(2, G10, 1_000_000);
    cfg.traffic.sources = vec![source("1", None, 0.5)];
    let mut json = serde_json::to_value(&cfg).unwrap();
    json["traffic"]["sources"][0]
        .as_object_mut()
        .unwrap()
        .remove("mean_frames");
    json["metrics"]
        .as_object_mut()
        .unwrap()
        .remove("deadlock_threshold_ps");
    let read = CoreConfig::from_json(&json.to_string()).unwrap();
    assert_eq!(read.traffic.sources[0].mean_frames, 1.0);
    assert_eq!(read.metrics.deadlock_threshold_ps, 10 * MS);
}
