//! A test-only builder of core configs (Rust accepts only resolved configs; the defaults of real
//! scenarios live in Python).

use std::collections::BTreeMap;

use cnsim_core::cm::CmConfig;
use cnsim_core::scenario::*;
use cnsim_core::{CoreConfig, RunControl, RunResult, Simulator};

pub const G10: u64 = 10_000_000_000;
pub const MS: u64 = 1_000_000_000;

/// A single switch "S1" with nodes "1".."n", all links `rate` / `delay`.
pub fn star(n: usize, rate: u64, delay_ps: u64) -> CoreConfig {
    let nodes: Vec<String> = (1..=n).map(|i| i.to_string()).collect();
    let links = nodes
        .iter()
        .map(|x| LinkConfig {
            a: "S1".into(),
            b: x.clone(),
            rate_bps: rate,
            delay_ps,
        })
        .collect();
    let mut thresholds = BTreeMap::new();
    thresholds.insert(
        "S1".to_string(),
        Thresholds {
            capacity: u64::MAX / 4,
            xoff: u64::MAX / 4,
            xon: 0,
        },
    );
    CoreConfig {
        version: 1,
        seed: 1,
        duration_ps: 10 * MS,
        run_to_completion: false,
        topology: TopologyConfig {
            switches: vec!["S1".into()],
            nodes,
            links,
            legacy: vec![],
            routing: Routing::Shortest,
            fat_tree: None,
        },
        switch: SwitchConfig {
            buffer: BufferModel::Partitioned,
            memory_per_port: u64::MAX / 4,
            oq_limit: None,
            processing_delay_ps: 0,
            pause: false,
            pfc_classes: 0,
            cp_ports: None,
            thresholds,
        },
        nic: NicConfig {
            ingress: Ingress::Unlimited,
            ingress_size: 0,
            on_full: OnFull::Drop,
            egress_buffer: 1500,
            egress_xoff: 1500,
            egress_xon: 0,
            processing_delay_ps: 0,
        },
        traffic: TrafficConfig {
            frame_size: 1500,
            sources: vec![],
        },
        hotspots: vec![],
        cm: CmConfig {
            scheme: "none".into(),
            params: Default::default(),
        },
        metrics: MetricsConfig {
            bin_ps: MS,
            window_ps: [0, 10 * MS],
            hot_port: "S1/1".into(),
            queues: vec![],
            per_flow: vec![],
            deadlock_threshold_ps: 10 * MS,
            stop_on_deadlock: false,
            windows: Vec::new(),
            hot_nodes: Vec::new(),
        },
    }
}

/// A (merged-top) k-ary n-tree of switches of radix `radix` (`L<level>.<index>`, built by the
/// engine) with hosts "0".."M-1", every link `rate` / `delay`: the star's other settings.
pub fn fat_tree(radix: u32, levels: u32, merged_top: bool, rate: u64, delay_ps: u64) -> CoreConfig {
    let k = radix as usize / 2;
    let per_level = k.pow(levels - 1);
    let hosts = if merged_top {
        2 * k * per_level
    } else {
        k * per_level
    };
    let mut cfg = star(2, rate, delay_ps);
    let limits = cfg.switch.thresholds["S1"];
    cfg.switch.thresholds = (0..levels as usize)
        .flat_map(|l| {
            let below_top = merged_top && l + 1 < levels as usize;
            (0..if below_top { 2 * per_level } else { per_level }).map(move |i| format!("L{l}.{i}"))
        })
        .map(|name| (name, limits))
        .collect();
    cfg.topology = TopologyConfig {
        switches: vec![],
        nodes: (0..hosts).map(|i| i.to_string()).collect(),
        links: vec![],
        legacy: vec![],
        routing: Routing::Dmodk,
        fat_tree: Some(FatTreeConfig {
            radix,
            levels,
            merged_top,
            rate_bps: rate,
            delay_ps,
        }),
    };
    cfg.metrics.hot_port = "L0.0/0".into();
    cfg
}

pub fn source(node: &str, dst: Option<&str>, load: f64) -> SourceConfig {
    SourceConfig {
        node: node.into(),
        load,
        dst: dst.map(String::from),
        start_ps: 0,
        stop_ps: None,
        sizes: Sizes::Fixed,
        mean_frames: 1.0,
        priority: 0,
    }
}

/// A source of finite flows (TG-GEO): flows of `mean_frames` frames on average, geometric.
pub fn flows(node: &str, dst: Option<&str>, load: f64, mean_frames: f64) -> SourceConfig {
    SourceConfig {
        sizes: Sizes::Geometric,
        mean_frames,
        ..source(node, dst, load)
    }
}

/// The series of `kind` ("throughput", "queue", "rates", …) of a finished run.
pub fn series<'a>(r: &'a RunResult, kind: &str) -> &'a cnsim_core::metrics::Series {
    &r.series
        .iter()
        .find(|(k, _)| k == kind)
        .unwrap_or_else(|| panic!("no {kind} series"))
        .1
}

/// A named window `windows.<name>` over [t0, t1) ps.
pub fn named_window(name: &str, t0: u64, t1: u64) -> NamedWindowConfig {
    NamedWindowConfig {
        name: name.into(),
        start_ps: t0,
        end_ps: t1,
    }
}

pub fn set_thresholds(
    cfg: &mut CoreConfig,
    buffer: BufferModel,
    capacity: u64,
    xoff: u64,
    xon: u64,
    pause: bool,
) {
    cfg.switch.buffer = buffer;
    cfg.switch.pause = pause;
    for t in cfg.switch.thresholds.values_mut() {
        *t = Thresholds {
            capacity,
            xoff,
            xon,
        };
    }
}

pub struct Outcome {
    pub result: RunResult,
    /// The summary as JSON, navigated by key in the tests.
    pub summary: serde_json::Value,
    pub in_flight_counted: u64,
}

/// Run to the end and check conservation on the way out:
/// generated = delivered + dropped + source_dropped + in flight (counted where the frames are).
pub fn run(cfg: &CoreConfig) -> Outcome {
    run_prepared(cfg, |_| {})
}

/// [`run`], with `prepare` applied to the simulator before it starts (engine switches that must
/// change no result, such as its prefetch stages).
pub fn run_prepared(cfg: &CoreConfig, prepare: impl FnOnce(&mut Simulator)) -> Outcome {
    let mut sim = Simulator::new(cfg).expect("valid config");
    prepare(&mut sim);
    sim.run(&RunControl::default()).expect("not interrupted");
    let counted = sim.in_flight_counted();
    let result = sim.finish();
    let summary = result.summary.to_value();
    assert_eq!(
        summary["conservation"]["in_flight_counted"].as_u64(),
        Some(counted)
    );
    let c = &summary["conservation"];
    let g = c["generated"].as_u64().unwrap();
    let accounted = c["delivered"].as_u64().unwrap()
        + c["dropped"].as_u64().unwrap()
        + c["source_dropped"].as_u64().unwrap()
        + counted;
    assert_eq!(g, accounted, "conservation: {c}");
    Outcome {
        result,
        summary,
        in_flight_counted: counted,
    }
}

pub fn num(v: &serde_json::Value, path: &str) -> f64 {
    let mut cur = v;
    for k in path.split('.') {
        cur = &cur[k];
    }
    cur.as_f64()
        .unwrap_or_else(|| panic!("{path} is not a number: {cur}"))
}

/// FECN with the published pseudo-code's constants (algorithms.md §6), sources starting at line
/// rate and a 100 us interval: a scheme whose probes cross every congestion point.
pub fn fecn_line_rate() -> CmConfig {
    CmConfig {
        scheme: "fecn".into(),
        params: serde_json::json!({"n0": 200.0, "interval_ps": 100_000_000u64, "qeq": 24000.0, "a": 1.1, "b": 1.002,
            "c": 0.1, "ewma": 0.5, "max_increase": 1.0, "rmin_bps": 5e7, "start": "line", "efecn": false, "qsc": 96000.0,
            "cnm_size": 64, "feedback": "inband", "feedback_delay_ps": 0})
        .as_object()
        .cloned()
        .unwrap_or_default(),
    }
}

/// QCN with the eval deck's constants (PS-EVAL-QCN as the front end lowers it) and HAI on, so
/// that limiters climb back to line rate and are released within milliseconds.
pub fn qcn_eval() -> CmConfig {
    CmConfig {
        scheme: "qcn".into(),
        params: serde_json::json!({"w": 2.0, "qeq": 26176, "gd": 0.0078125, "rmin_bps": 5000000, "fb_bits": 6,
            "sampling": "linear", "sample_at": "arrival", "ps": 0.01, "sample_bytes": 150000, "pmin": 0.01, "pmax": 0.1,
            "drift_rate_bps": 0, "drift_period_ps": 20000000000u64, "bc": 150000, "timer_ps": 15000000000u64,
            "f": 5, "r_ai_bps": 12000000, "r_hai_bps": 50000000, "hai": true, "min_dec": 0.5, "efr": true, "efr_first_cycle": 1.0,
            "ai_byte_count": 37500, "target_update": "after_increase", "halving": "own", "jitter": 0.15,
            "cnm_size": 64, "feedback": "inband", "feedback_delay_ps": 0, "bcn00": false, "qsc": 300000.0, "stop_time_ps": 1000000000u64})
        .as_object()
        .cloned()
        .unwrap_or_default(),
    }
}

/// QCN-3pt with the eval deck's QCN constants ([`qcn_eval`]), its notification points
/// reflecting a frame with probability `refp` (QCN-3pt's De bit set while q > Qeq).
pub fn qcn3pt_eval(refp: f64) -> CmConfig {
    let mut cm = qcn_eval();
    cm.scheme = "qcn3pt".into();
    cm.params.insert("refp".into(), refp.into());
    cm.params.insert("de_rule".into(), "q_above_qeq".into());
    cm
}

/// DCQCN with the paper's constants (algorithms.md §7, as the front end lowers them), its
/// notification point sending CNPs in `cnp_mode` ("suppress" or "poll").
pub fn dcqcn_paper(cnp_mode: &str) -> CmConfig {
    CmConfig {
        scheme: "dcqcn".into(),
        params: serde_json::json!({"kmin": 5000, "kmax": 200000, "pmax": 0.01, "mark": "dequeue",
            "cnp_interval_ps": 50000000, "cnp_mode": cnp_mode, "rp": "paper", "g": 0.00390625,
            "alpha_init": 1.0, "alpha_timer_ps": 55000000, "timer_ps": 55000000, "bc": 10000000,
            "f": 5, "r_ai_bps": 40000000, "r_hai_bps": 200000000, "rmin_bps": 100000000,
            "clamp_target": true, "phase_rule": "fired", "efr": true, "rate_on_first_cnp": 1.0,
            "decrease_interval_ps": 4000000, "cnm_size": 64, "feedback": "inband",
            "feedback_delay_ps": 0})
        .as_object()
        .cloned()
        .unwrap_or_default(),
    }
}

/// BCN with PS-BCN-ZHB's constants (algorithms.md §3, scenarios.md §1.4) and equilibrium queue
/// `qeq` bytes.
pub fn bcn_zhb(qeq: f64) -> CmConfig {
    CmConfig {
        scheme: "bcn".into(),
        params: serde_json::json!({
            "w": 2.0, "qeq": qeq, "gd": 1.6667e-06, "gi": 0.00066667, "ru_bps": 1e7, "rmin_bps": 1e7,
            "gd0_rule": "half", "sampling": "interval", "sample_at": "arrival", "ps": 0.02, "sample_bytes": 75000.0, "sample_jitter": 0.0,
            "pmin": 0.01, "pmax": 0.1, "oversample_factor": 1.0, "fb_bits": 0, "quantize": "fb", "bcn_max": false,
            "qmc": 600000.0, "bcn00": false, "bcn00_mode": "stop", "qsc": 1200000.0, "stop_time_ps": 1000000000u64, "drift_rate_bps": 0.0,
            "drift_period_ps": 20000000000u64, "negative_only_above_qeq": false, "cnm_size": 64, "feedback": "inband",
            "feedback_delay_ps": 0, "gi_rate_bps": 1e10
        })
        .as_object()
        .cloned()
        .unwrap_or_default(),
    }
}
