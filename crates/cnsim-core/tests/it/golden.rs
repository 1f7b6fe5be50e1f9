//! The engine's goldens: for each case in `tests/golden/` (written by
//! `python scripts/golden.py --write-engine` from shipped scenarios: the core config the front
//! end lowers, and the engine's summary), the engine alone must reproduce the summary exactly.
//! The cases cover every scheme, memory model, PFC, the adapter models (blocking included), processing delays, a
//! legacy bridge, a fat tree, finite flows to completion and a PAUSE deadlock, so the engine's
//! own suite notices a change of behaviour anywhere in the kernel (refactors, cargo-mutants)
//! without the Python goldens. A deliberate model change rewrites them (and the Python ones).

use std::path::Path;

use cnsim_core::CoreConfig;
use serde_json::Value;

use crate::common::run;

/// Paths where two JSON values differ (exact comparison, floats included).
fn diff(want: &Value, got: &Value, path: &str, out: &mut Vec<String>) {
    match (want, got) {
        (Value::Object(a), Value::Object(b)) => {
            for k in a.keys().chain(b.keys().filter(|k| !a.contains_key(*k))) {
                let (x, y) = (&a.get(k), &b.get(k));
                match (x, y) {
                    (Some(x), Some(y)) => diff(x, y, &format!("{path}.{k}"), out),
                    _ => out.push(format!("{path}.{k}: {x:?} vs {y:?}")),
                }
            }
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                diff(x, y, &format!("{path}[{i}]"), out);
            }
        }
        _ if want != got => out.push(format!("{path}: {want} vs {got}")),
        _ => {}
    }
}

#[test]
fn the_engine_reproduces_its_golden_summaries() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("tests/golden exists")
        .map(|e| e.expect("readable entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    assert!(files.len() >= 18, "the engine's golden cases: {files:?}");
    let mut failures = Vec::new();
    for path in &files {
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(path).expect("readable"))
            .expect("a golden file is JSON");
        let cfg = CoreConfig::from_json(&doc["config"].to_string()).expect("a valid config");
        let out = run(&cfg); // conservation is checked on the way
        let mut d = Vec::new();
        diff(&doc["summary"], &out.summary, "summary", &mut d);
        if !d.is_empty() {
            d.truncate(10);
            failures.push(format!("{}:\n  {}", doc["case"], d.join("\n  ")));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
