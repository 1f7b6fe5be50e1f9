//! The engine's part of summary.json (spec/contract.md "summary.json"; docs/core-config.md "What
//! the engine returns") as typed data, serialised once with serde. Every value is a pure
//! function of the config and seed. The Python side adds `scenario`, `scheme`, `seed` and
//! `fairness` (`cnsim.results.build_summary`).

use std::collections::BTreeMap;

use serde::Serialize;

/// Window means and whole-run counts of one run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Summary {
    /// Simulated time at the end (a run to completion may end before its cap).
    pub duration_s: f64,
    /// The measurement window [t0, t1] in seconds.
    pub window_s: [f64; 2],
    pub throughput_gbps: Throughput,
    /// Queue statistics over the window, by port name, plus `hot`.
    pub queue_bytes: BTreeMap<String, QueueStats>,
    /// Frames dropped in the network over the whole run (`control`: CM frames).
    pub drops: Drops,
    /// Frames dropped in the network inside the window.
    pub drops_window: Count,
    /// Frames refused by full source ingress buffers over the whole run.
    pub source_drops: Count,
    /// Mean share of the window in which a source's generator was blocked (AD-CNSIM).
    pub source_blocked_fraction: f64,
    /// Mean paused share of the window over the transmitters paused in it.
    pub paused_fraction: f64,
    /// Mean paused share of the window over every transmitter.
    pub paused_fraction_all: f64,
    /// PAUSE frames sent over the whole run.
    pub pause_frames: u64,
    /// CM control traffic inside the window.
    pub cm: CmStats,
    /// Flow completion times of finite flows (None without TG-GEO traffic).
    pub fct_ms: Option<FctStats>,
    pub latency_us: Latency,
    /// Share of the window in which the hot port could serve but had nothing to send.
    pub underrun: f64,
    /// Hot-port throughput over its capacity in the window.
    pub bottleneck_utilisation: f64,
    pub engine: EngineStats,
    pub conservation: Conservation,
    /// The first PAUSE deadlock detected, if any (`net::deadlock`).
    pub deadlock: Option<Deadlock>,
    /// The named windows of targets.md §A (`all`, `ss`, `tr`, `rec`), each with the main window's
    /// throughput, queue, drop, pause and CM keys (docs/metrics.md "Named windows").
    pub windows: BTreeMap<String, WindowStats>,
}

/// The throughput, queue, drop, pause and CM figures of one named window. Its edges are on
/// series bin edges (`window_s` says where), so every figure is exact from the binned records.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WindowStats {
    pub window_s: [f64; 2],
    pub throughput_gbps: Throughput,
    pub queue_bytes: BTreeMap<String, QueueStats>,
    /// Frames dropped in the network inside the window.
    pub drops: Count,
    /// Frames refused by full source ingress buffers inside the window.
    pub source_drops: Count,
    pub paused_fraction: f64,
    pub paused_fraction_all: f64,
    pub cm: CmCount,
}

/// A cycle of transmitters that pause each other for good.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Deadlock {
    /// When it was detected (every member paused for at least the threshold by then).
    pub t_s: f64,
    /// The cycle's transmitters as port names, each waiting on the next.
    pub cycle: Vec<String>,
    /// The PAUSE class (0: 802.3x PAUSE, the only class today).
    pub class: u32,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Throughput {
    pub aggregate: f64,
    pub hot_port: f64,
    pub per_node: BTreeMap<String, f64>,
    pub per_flow: BTreeMap<String, f64>,
    /// Data each source put on its link (last bit out of its adapter), per source node.
    pub per_source_sent: BTreeMap<String, f64>,
}

/// Time-weighted mean and standard deviation and the maximum of a queue over the window (bytes).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct QueueStats {
    pub mean: f64,
    pub std: f64,
    pub max: f64,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Drops {
    pub frames: u64,
    pub bytes: u64,
    pub control: u64,
    /// Data frames dropped, whole run, by where: `partition` (a full input partition), `pool`
    /// (full shared memory), `egress` (a full egress buffer), `oq_limit` (the output-queue
    /// limit), `source` (a full NIC ingress buffer; the `source_drops` figures).
    pub by_place: BTreeMap<String, Count>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Count {
    pub frames: u64,
    pub bytes: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CmStats {
    /// Every control frame: `frames`, `bytes`, `mbps`.
    #[serde(flatten)]
    pub total: CmCount,
    /// The same by message kind: `negative`, `positive` (BCN/ECM feedback, QCN CNMs), `stop`
    /// (BCN(0,0)), `reflection` (QCN-3pt), `probe` (forward probes and pings), `probe_reply`
    /// (returned probes, CP answers), `cnp` (DCQCN). Kinds that sent nothing are left out.
    pub by_kind: BTreeMap<String, CmCount>,
    /// The same by origin: a switch egress (`S1/1`, the CP) or a node (`node:<n>`: reflections,
    /// probes and their returns, CNPs).
    pub by_cp: BTreeMap<String, CmCount>,
}

/// CM control frames and their rate over a window.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct CmCount {
    pub frames: u64,
    pub bytes: u64,
    pub mbps: f64,
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct FctStats {
    /// Every finite flow (`mean`, `p50`, `p99`, `completed`, `incomplete`, `adapter_wait_ms`).
    #[serde(flatten)]
    pub all: FctGroup,
    /// Flows into a hot node (the hotspots' nodes, or the node behind the hot port).
    pub hot: FctGroup,
    /// Every other flow.
    pub cold: FctGroup,
}

/// Flow completion times of a group of flows (ms): mean and nearest-rank percentiles over the
/// completed ones, the counts, and the mean time from a completed flow's arrival until its last
/// frame left the source adapter.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct FctGroup {
    pub mean: f64,
    pub p50: f64,
    pub p99: f64,
    pub completed: u64,
    pub incomplete: u64,
    pub adapter_wait_ms: f64,
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Latency {
    /// Mean delivery latency (generation to delivery) of frames delivered in the window.
    pub mean: f64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct EngineStats {
    pub events: u64,
}

/// Frame accounting: generated = delivered + dropped + source_dropped + in_flight.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Conservation {
    pub generated: u64,
    pub delivered: u64,
    pub dropped: u64,
    pub source_dropped: u64,
    pub in_flight: u64,
    /// Frames in flight held by a counted buffer (switch memory or a NIC output buffer).
    pub in_flight_counted: u64,
}

impl Summary {
    /// The summary as a JSON value (for callers that navigate it by key).
    pub fn to_value(&self) -> serde_json::Value {
        serde_json::to_value(self).expect("a summary always serialises")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_and_non_finite_values_serialise_as_the_contract_says() {
        let s = Summary {
            duration_s: 0.6,
            window_s: [0.2, 0.5],
            throughput_gbps: Throughput {
                aggregate: 38.7,
                hot_port: 2.0,
                per_node: BTreeMap::from([("1".into(), 2.0)]),
                per_flow: BTreeMap::new(),
                per_source_sent: BTreeMap::new(),
            },
            queue_bytes: BTreeMap::from([(
                "hot".into(),
                QueueStats {
                    mean: f64::NAN,
                    std: 0.0,
                    max: 1.0,
                },
            )]),
            drops: Drops {
                frames: 1,
                bytes: 1500,
                control: 0,
                by_place: BTreeMap::new(),
            },
            drops_window: Count {
                frames: 0,
                bytes: 0,
            },
            source_drops: Count {
                frames: 0,
                bytes: 0,
            },
            source_blocked_fraction: 0.0,
            paused_fraction: 0.5,
            paused_fraction_all: 0.25,
            pause_frames: 3,
            cm: CmStats {
                total: CmCount {
                    frames: 0,
                    bytes: 0,
                    mbps: 0.0,
                },
                by_kind: BTreeMap::new(),
                by_cp: BTreeMap::new(),
            },
            fct_ms: None,
            latency_us: Latency { mean: 1.5 },
            underrun: 0.0,
            bottleneck_utilisation: 1.0,
            engine: EngineStats { events: 10 },
            deadlock: None,
            windows: BTreeMap::new(),
            conservation: Conservation {
                generated: 5,
                delivered: 4,
                dropped: 1,
                source_dropped: 0,
                in_flight: 0,
                in_flight_counted: 0,
            },
        };
        let v = s.to_value();
        assert_eq!(v["throughput_gbps"]["per_node"]["1"], 2.0);
        assert_eq!(v["window_s"], serde_json::json!([0.2, 0.5]));
        assert!(
            v["queue_bytes"]["hot"]["mean"].is_null(),
            "NaN is null in JSON"
        );
        assert!(v["fct_ms"].is_null());
        assert_eq!(v["conservation"]["generated"], 5);
        assert_eq!(v.as_object().unwrap().len(), 20);
        assert!(v["deadlock"].is_null());
    }
}
