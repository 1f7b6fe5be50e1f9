//! The engine refuses a config it cannot run, naming the key (the front end checks first; these
//! are the engine's own checks, for configs built by hand).

use cnsim_core::scenario::LinkConfig;
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
    // a second switch with a node of its own and no link to the first
    cfg.topology.switches.push("S2".into());
    cfg.topology.nodes.push("4".into());
    cfg.topology.links.push(LinkConfig {
        a: "S2".into(),
        b: "4".into(),
        rate_bps: G10,
        delay_ps: 1_000_000,
    });
    cfg.switch
        .thresholds
        .insert("S2".into(), cfg.switch.thresholds["S1"]);
    assert_eq!(refused_key(&cfg), "topology.links");
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
