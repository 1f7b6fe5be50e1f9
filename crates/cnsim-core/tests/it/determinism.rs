//! Same config and seed ⇒ identical summary and series; another seed ⇒ different series.

use crate::common::*;

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
