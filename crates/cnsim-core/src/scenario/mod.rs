//! The core config: a resolved scenario in base units (picoseconds, bit/s, bytes), produced by
//! the Python front end (`docs/core-config.md`). Every key is required, unknown keys are
//! rejected (`deny_unknown_fields`), and [`CoreConfig::check`] validates values with errors that
//! name the dotted key.

use serde::{Deserialize, Serialize};

use crate::cm::CmConfig;
use crate::error::{Error, Result};
pub use crate::topology::config::{FatTreeConfig, LinkConfig, Routing, TopologyConfig};

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CoreConfig {
    pub version: u32,
    pub seed: u64,
    pub duration_ps: u64,
    pub run_to_completion: bool,
    pub topology: TopologyConfig,
    pub switch: SwitchConfig,
    pub nic: NicConfig,
    pub traffic: TrafficConfig,
    pub hotspots: Vec<HotspotConfig>,
    pub cm: CmConfig,
    pub metrics: MetricsConfig,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BufferModel {
    /// One pool of N·M per switch, global PAUSE watermarks (SW-SHARED).
    Shared,
    /// M per input, shared across outputs, per-input PAUSE (SW-PART).
    Partitioned,
    /// Per-port discard threshold, no PAUSE (SW-EGDISC).
    Egress,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SwitchConfig {
    pub buffer: BufferModel,
    pub memory_per_port: u64,
    pub oq_limit: Option<u64>,
    pub processing_delay_ps: u64,
    pub pause: bool,
    /// 0: 802.3x PAUSE (stops every frame but MAC control); 1–8: PFC with that many priority
    /// classes, the watermarks in `thresholds` then per class (802.1Qbb, algorithms.md §2.1).
    #[serde(default)]
    pub pfc_classes: u8,
    /// The switch egress ports that are congestion points (by port name); `None`: every egress
    /// of a CM switch.
    #[serde(default)]
    pub cp_ports: Option<Vec<String>>,
    /// Per switch name: admission capacity and PAUSE watermarks in the buffer model's scope.
    pub thresholds: std::collections::BTreeMap<String, Thresholds>,
}

#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Thresholds {
    pub capacity: u64,
    pub xoff: u64,
    pub xon: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Ingress {
    Unlimited,
    PerVoq,
    Shared,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OnFull {
    Drop,
    Block,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NicConfig {
    pub ingress: Ingress,
    pub ingress_size: u64,
    pub on_full: OnFull,
    pub egress_buffer: u64,
    pub egress_xoff: u64,
    pub egress_xon: u64,
    pub processing_delay_ps: u64,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrafficConfig {
    pub frame_size: u32,
    pub sources: Vec<SourceConfig>,
}

/// One Bernoulli slotted generator (scenarios.md §1.3 TG-BERN).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SourceConfig {
    pub node: String,
    /// Probability of a frame in each frame slot of the node's link.
    pub load: f64,
    /// Fixed destination, or `None` for uniform over the other nodes.
    pub dst: Option<String>,
    pub start_ps: u64,
    pub stop_ps: Option<u64>,
    /// `fixed`: a frame per arrival; `geometric`: a flow of geometric size per arrival (TG-GEO).
    #[serde(default)]
    pub sizes: Sizes,
    /// Mean flow size in frames (1 for fixed sizes).
    #[serde(default = "one")]
    pub mean_frames: f64,
    /// The 802.1Qbb priority class of its frames (below `switch.pfc_classes`; 0 without PFC).
    #[serde(default)]
    pub priority: u8,
}

fn one() -> f64 {
    1.0
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Sizes {
    #[default]
    Fixed,
    Geometric,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HotspotConfig {
    pub node: String,
    pub rate: f64,
    pub start_ps: u64,
    pub end_ps: u64,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MetricsConfig {
    pub bin_ps: u64,
    pub window_ps: [u64; 2],
    pub hot_port: String,
    pub queues: Vec<String>,
    pub per_flow: Vec<[String; 2]>,
    /// A cycle of PAUSE dependencies paused this long is a deadlock (`net::deadlock`).
    #[serde(default = "default_deadlock_threshold")]
    pub deadlock_threshold_ps: u64,
    /// End the run when a deadlock is detected.
    #[serde(default)]
    pub stop_on_deadlock: bool,
    /// Named windows (targets.md §A: `all`, `ss`, `tr`, `rec`) reported beside the main one as
    /// `windows.<name>`; their edges are moved to the nearest bin edge.
    #[serde(default)]
    pub windows: Vec<NamedWindowConfig>,
    /// Nodes whose incoming finite flows are reported as `fct_ms.hot` (the others as `cold`).
    #[serde(default)]
    pub hot_nodes: Vec<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NamedWindowConfig {
    pub name: String,
    pub start_ps: u64,
    pub end_ps: u64,
}

fn default_deadlock_threshold() -> u64 {
    10_000_000_000 // 10 ms
}

fn err<T>(key: &str, value: impl ToString, expected: &str) -> Result<T> {
    Err(Error::config(key, value, expected))
}

impl CoreConfig {
    /// Parse a core config from JSON (unknown keys rejected) and check it.
    pub fn from_json(text: &str) -> Result<Self> {
        let cfg: CoreConfig =
            serde_json::from_str(text).map_err(|e| Error::Parse(e.to_string()))?;
        cfg.check()?;
        Ok(cfg)
    }

    /// Read a core config from any serde data format (unknown keys rejected) and check it: the
    /// Python binding reads the front end's dict directly, without JSON between them.
    pub fn from_deserializer<'de, D: serde::Deserializer<'de>>(data: D) -> Result<Self>
    where
        D::Error: std::fmt::Display,
    {
        let cfg = CoreConfig::deserialize(data).map_err(|e| Error::Parse(e.to_string()))?;
        cfg.check()?;
        Ok(cfg)
    }

    /// Value checks that serde cannot express (ns-3's `CheckConfig`). Names are resolved
    /// against the topology when the network is built.
    pub fn check(&self) -> Result<()> {
        if self.version != 1 {
            return err("version", self.version, "1");
        }
        if self.duration_ps == 0 {
            return err("duration", "0", "a positive time");
        }
        self.check_topology()?;
        self.check_traffic()?;
        self.check_hotspots()?;
        if self.metrics.bin_ps == 0 {
            return err("metrics.bin", 0, "a positive time");
        }
        if self.metrics.window_ps[1] < self.metrics.window_ps[0] {
            return err(
                "metrics.window",
                format!("{:?}", self.metrics.window_ps),
                "[t0, t1] with t0 <= t1",
            );
        }
        for (i, w) in self.metrics.windows.iter().enumerate() {
            if w.name.is_empty() || self.metrics.windows[..i].iter().any(|o| o.name == w.name) {
                return err(
                    &format!("metrics.windows.{i}.name"),
                    &w.name,
                    "a non-empty name used once",
                );
            }
            if w.end_ps < w.start_ps {
                return err(
                    &format!("metrics.windows.{i}"),
                    format!("[{}, {}]", w.start_ps, w.end_ps),
                    "[t0, t1] with t0 <= t1",
                );
            }
        }
        if self.nic.egress_buffer < self.traffic.frame_size as u64 {
            return err(
                "nic.egress_buffer",
                self.nic.egress_buffer,
                "at least one frame",
            );
        }
        if self.switch.pfc_classes > 8 {
            return err(
                "switch.pfc_classes",
                self.switch.pfc_classes,
                "0 (802.3x PAUSE) to 8 classes",
            );
        }
        if self.switch.pause && self.switch.buffer == BufferModel::Egress {
            return err(
                "switch.pause",
                true,
                "false with switch.buffer = \"egress\" (SW-EGDISC has no PAUSE)",
            );
        }
        Ok(())
    }

    fn check_topology(&self) -> Result<()> {
        if self.topology.nodes.is_empty() {
            return err("topology.nodes", "[]", "at least one node");
        }
        for (i, l) in self.topology.links.iter().enumerate() {
            if l.rate_bps == 0 {
                return err(&format!("topology.links.{i}.rate"), 0, "a positive rate");
            }
        }
        if let Some(ft) = &self.topology.fat_tree {
            if ft.radix < 2
                || ft.radix % 2 != 0
                || ft.levels < 1
                || (ft.merged_top && ft.levels < 2)
            {
                return err(
                    "topology.fat_tree",
                    format!("radix {} levels {}", ft.radix, ft.levels),
                    "an even radix >= 2 and levels >= 1 (>= 2 with merged_top)",
                );
            }
            if !self.topology.switches.is_empty() || !self.topology.links.is_empty() {
                return err(
                    "topology.links",
                    "non-empty",
                    "no switches or links with a fat tree (the engine builds them)",
                );
            }
        }
        Ok(())
    }

    fn check_traffic(&self) -> Result<()> {
        if self.traffic.frame_size < 64 {
            return err(
                "traffic.frame_size",
                self.traffic.frame_size,
                "at least 64 B",
            );
        }
        for (i, s) in self.traffic.sources.iter().enumerate() {
            if s.priority >= self.switch.pfc_classes.max(1) {
                return err(
                    &format!("traffic.sources.{i}.priority"),
                    s.priority,
                    "a class below switch.pfc_classes (0 without PFC)",
                );
            }
            if !(0.0..=1.0).contains(&s.load) || s.load.is_nan() {
                return err(
                    &format!("traffic.sources.{i}.load"),
                    s.load,
                    "a fraction in [0, 1]",
                );
            }
            // written so that NaN is rejected too
            #[allow(clippy::neg_cmp_op_on_partial_ord)]
            if !(s.mean_frames >= 1.0) || (s.sizes == Sizes::Fixed && s.mean_frames != 1.0) {
                return err(
                    &format!("traffic.sources.{i}.mean_frames"),
                    s.mean_frames,
                    "at least 1 (exactly 1 with fixed sizes)",
                );
            }
        }
        Ok(())
    }

    fn check_hotspots(&self) -> Result<()> {
        for (i, h) in self.hotspots.iter().enumerate() {
            if !(0.0..=1.0).contains(&h.rate) || h.rate.is_nan() {
                return err(
                    &format!("hotspots.{i}.rate"),
                    h.rate,
                    "a fraction of the link rate in [0, 1]",
                );
            }
            if h.end_ps < h.start_ps {
                return err(
                    &format!("hotspots.{i}.end"),
                    h.end_ps,
                    "a time not before hotspots.start",
                );
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    /// The engine reads exactly the numbers the front end wrote. serde_json's default float
    /// parser can be a unit in the last place off (its `float_roundtrip` feature is exact): the
    /// ECM gains of the qcnp deck were read so, and moved BCN's rates in the last place.
    #[test]
    fn numbers_are_read_exactly() {
        for text in [
            "3.9215686274509802",
            "0.00196078431372549",
            "11.39565714285714",
            "0.9912",
            "1.6667e-06",
        ] {
            let read: f64 = serde_json::from_str(text).unwrap();
            assert_eq!(read, text.parse::<f64>().unwrap(), "{text}");
        }
    }
}
