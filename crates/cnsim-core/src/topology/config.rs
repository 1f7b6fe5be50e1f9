//! The `topology` table of the core config (docs/core-config.md): the wiring the front end
//! resolved — nodes, switches, links, routing, or a fat tree the engine builds itself. It lives
//! with the topology it describes so that building a topology needs nothing from the layers
//! above; `scenario::CoreConfig` holds it.

use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TopologyConfig {
    pub switches: Vec<String>,
    pub nodes: Vec<String>,
    pub links: Vec<LinkConfig>,
    pub legacy: Vec<String>,
    pub routing: Routing,
    /// A fat tree the engine builds itself (then `switches` and `links` are empty).
    #[serde(default)]
    pub fat_tree: Option<FatTreeConfig>,
}

/// A k-ary n-tree, or two of them merged at the top (docs/core-config.md).
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FatTreeConfig {
    /// Ports per switch: 2k.
    pub radix: u32,
    /// Levels n.
    pub levels: u32,
    pub merged_top: bool,
    pub rate_bps: u64,
    pub delay_ps: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Routing {
    Shortest,
    Dmodk,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkConfig {
    pub a: String,
    pub b: String,
    pub rate_bps: u64,
    pub delay_ps: u64,
}
