//! Congestion-point placement (issue 12, "signalling overhead"): by default every egress of a
//! CM switch is a CP; `switch.cp_ports` names the ones that are.

use cnsim_core::scenario::BufferModel;
use cnsim_core::Simulator;

use crate::common::*;

/// Two sources at line rate into node 3 through one switch, FECN (its probes carry the rate of
/// the CPs they cross), 150 KB partitions without PAUSE.
fn incast(cp_ports: Option<Vec<String>>) -> cnsim_core::CoreConfig {
    let mut cfg = star(3, G10, 1_000_000);
    cfg.duration_ps = 20 * MS;
    cfg.metrics.window_ps = [5 * MS, 20 * MS];
    cfg.metrics.hot_port = "S1/3".into();
    cfg.traffic.sources = vec![source("1", Some("3"), 1.0), source("2", Some("3"), 1.0)];
    set_thresholds(
        &mut cfg,
        BufferModel::Partitioned,
        150_000,
        150_000,
        150_000,
        false,
    );
    cfg.switch.cp_ports = cp_ports;
    cfg.cm = fecn_line_rate();
    cfg
}

#[test]
fn only_the_named_ports_are_congestion_points() {
    // every egress a CP: the bottleneck S1/3 advertises 5 Gb/s, nothing is lost after onset
    let all = run(&incast(None));
    assert_eq!(num(&all.summary, "drops_window.frames"), 0.0);
    // the bottleneck named: the same
    let named = run(&incast(Some(vec!["S1/3".into()])));
    assert_eq!(num(&named.summary, "drops_window.frames"), 0.0);
    // only an idle port is a CP: the probes come back unstamped, the sources stay at line rate
    let idle = run(&incast(Some(vec!["S1/1".into()])));
    assert!(num(&idle.summary, "drops_window.frames") > 1000.0);
    // an unknown or non-switch port is refused by name
    let e = Simulator::new(&incast(Some(vec!["S1/9".into()])))
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("switch.cp_ports.0"), "{e}");
    let e = Simulator::new(&incast(Some(vec!["1/S1".into()])))
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("switch.cp_ports.0"), "{e}");
}
