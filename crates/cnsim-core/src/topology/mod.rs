//! Topology: switches, nodes and full-duplex links, turned into transmitter ports (one per link
//! direction) and per-switch routing tables.
//!
//! Routing is shortest path (in switch hops) with a deterministic tie-break: among equally short
//! next hops a switch takes the one on its lowest local port (ports are numbered in link
//! declaration order). Nodes are end points, never transit.

pub mod config;
pub mod fattree;

use std::collections::VecDeque;

use rustc_hash::{FxHashMap, FxHashSet};

pub use config::{FatTreeConfig, LinkConfig, Routing, TopologyConfig};

use crate::error::{Error, Result};
use crate::time::{BitRate, SimTime};

/// Who owns a transmitter (or receives on a link).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Device {
    Switch(u32),
    Nic(u32),
}

impl Device {
    /// In four bytes ([`PackedDevice`]).
    #[inline]
    pub fn packed(self) -> PackedDevice {
        debug_assert!(matches!(self, Device::Switch(i) | Device::Nic(i) if i < PackedDevice::NIC));
        match self {
            Device::Switch(s) => PackedDevice(s),
            Device::Nic(n) => PackedDevice(n | PackedDevice::NIC),
        }
    }
}

/// A [`Device`] in four bytes (the top bit says NIC), for the port's first cache line, which
/// has room for two of them and not for two eight-byte enums ([`crate::net::Port`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PackedDevice(u32);

impl PackedDevice {
    const NIC: u32 = 1 << 31;

    #[inline(always)]
    pub fn get(self) -> Device {
        if self.0 & Self::NIC != 0 {
            Device::Nic(self.0 & !Self::NIC)
        } else {
            Device::Switch(self.0)
        }
    }
}

/// One direction of a link: the transmitter at `owner` and the receiver at `peer` (`repr(C)`:
/// what a hop reads first; see [`crate::net::Port`]). Its name, `owner/peer`, is spelled out
/// only when asked for ([`Topology::port_name`]): a 2,048-host tree has 12,000 ports.
#[derive(Clone, Debug)]
#[repr(C)]
pub struct PortSpec {
    pub owner: Device,
    pub peer: Device,
    pub delay: SimTime,
    pub rate: BitRate,
    /// The owner's local port index (0 for a NIC).
    pub local: u32,
    /// The receiver's local port index: the input (partition) the frame arrives on.
    pub peer_local: u32,
    /// The port transmitting the other way on the same link.
    pub reverse: u32,
}

#[derive(Clone, Debug)]
pub struct Topology {
    pub nodes: Vec<String>,
    pub switches: Vec<String>,
    pub ports: Vec<PortSpec>,
    /// Egress port (global index) of each node's NIC.
    pub node_port: Vec<u32>,
    /// Egress ports (global indices) of each switch, by local index.
    pub switch_ports: Vec<Vec<u32>>,
    /// The local egress port of each switch toward each node.
    pub routes: RouteTable,
    pub legacy: Vec<bool>,
    /// Every node and switch by name.
    devices: FxHashMap<String, Device>,
}

/// Next hops: the local egress port of each switch toward each node, as one row per switch in a
/// single allocation, so that a lookup is one load from a compact table. Entries are one byte
/// when no switch has more than 255 ports (every shipped topology) and two otherwise: at
/// 2,048 hosts a lookup is a likely cache miss, and the tree's 96 × 2,048 routes take 197 KB
/// instead of 393 KB (stop 34: 1 ms of `scale-ft-2048` 3 % faster; docs/performance.md).
#[derive(Clone, Debug)]
pub struct RouteTable {
    nodes: usize,
    next: Hops,
}

/// The table's entries, [`RouteTable::NONE`] (all ones) where a node is unreachable.
#[derive(Clone, Debug)]
enum Hops {
    Narrow(Vec<u8>),
    Wide(Vec<u16>),
}

impl Default for RouteTable {
    fn default() -> Self {
        RouteTable::new(0, 0, 0)
    }
}

impl RouteTable {
    /// No route (the node is unreachable from the switch), in the entries' width.
    const NONE: u16 = u16::MAX;
    /// Local port indices must stay below this (checked when a topology is built).
    pub const MAX_PORTS: usize = u16::MAX as usize;

    /// An empty table for `switches` switches of at most `widest` ports each and `nodes` nodes.
    pub fn new(switches: usize, nodes: usize, widest: usize) -> Self {
        // ports 0 … 254 fit a byte beside the all-ones NONE
        let next = if widest <= u8::MAX as usize {
            Hops::Narrow(vec![u8::MAX; switches * nodes])
        } else {
            Hops::Wide(vec![Self::NONE; switches * nodes])
        };
        RouteTable { nodes, next }
    }

    #[inline]
    pub fn get(&self, switch: u32, node: u32) -> Option<u32> {
        let i = switch as usize * self.nodes + node as usize;
        match &self.next {
            Hops::Narrow(next) => (next[i] != u8::MAX).then_some(next[i] as u32),
            Hops::Wide(next) => (next[i] != Self::NONE).then_some(next[i] as u32),
        }
    }

    /// The address of the entry [`RouteTable::get`] reads for (`switch`, `node`), for a
    /// prefetch (the event loop asks for it a few events before the hop reads it).
    #[inline(always)]
    pub fn entry_address(&self, switch: u32, node: u32) -> *const u8 {
        let i = switch as usize * self.nodes + node as usize;
        match &self.next {
            Hops::Narrow(next) => next.as_ptr().wrapping_add(i),
            Hops::Wide(next) => next.as_ptr().wrapping_add(i).cast(),
        }
    }

    /// The local ports of `switch` toward every node, in node order.
    pub fn set_row(&mut self, switch: usize, local_ports: &[u32]) {
        assert_eq!(local_ports.len(), self.nodes, "a port per node");
        let row = switch * self.nodes..(switch + 1) * self.nodes;
        match &mut self.next {
            Hops::Narrow(next) => {
                assert!(
                    local_ports.iter().all(|&p| p < u8::MAX as u32),
                    "a narrow table holds ports below 255"
                );
                for (entry, &p) in next[row].iter_mut().zip(local_ports) {
                    *entry = p as u8;
                }
            }
            Hops::Wide(next) => {
                debug_assert!(local_ports.iter().all(|&p| (p as usize) < Self::MAX_PORTS));
                for (entry, &p) in next[row].iter_mut().zip(local_ports) {
                    *entry = p as u16;
                }
            }
        }
    }

    pub fn set(&mut self, switch: usize, node: usize, local_port: u32) {
        let i = switch * self.nodes + node;
        match &mut self.next {
            Hops::Narrow(next) => {
                assert!(
                    local_port < u8::MAX as u32,
                    "a narrow table holds ports below 255"
                );
                next[i] = local_port as u8;
            }
            Hops::Wide(next) => {
                debug_assert!((local_port as usize) < Self::MAX_PORTS);
                next[i] = local_port as u16;
            }
        }
    }
}

/// Is `name` a valid device name? `key` (spelled out only for an error) says where it comes from.
fn check_name(key: impl FnOnce() -> String, name: &str) -> Result<()> {
    if name.is_empty()
        || name.contains('/')
        || name.contains(':')
        || name.contains("->")
        || name.contains(char::is_whitespace)
    {
        return Err(Error::config(
            key(),
            name,
            "a non-empty name without '/', ':', '->' or white space",
        ));
    }
    Ok(())
}

impl Topology {
    /// Build a topology: the fat tree the config describes, or its explicit switches and links.
    pub fn build(cfg: &TopologyConfig) -> Result<Self> {
        if let Some(ft) = &cfg.fat_tree {
            return fattree::build(cfg, ft);
        }
        let mut topo = Self::build_graph(cfg)?;
        match cfg.routing {
            Routing::Shortest => topo.routes = topo.shortest_path_routes(),
            Routing::Dmodk => {
                return Err(Error::config(
                    "topology.routing",
                    "dmodk",
                    "\"shortest\" (d-mod-k needs a fat tree)",
                ))
            }
        }
        Ok(topo)
    }

    /// Switches, nodes and links into ports, without routes.
    pub(crate) fn build_graph(cfg: &TopologyConfig) -> Result<Self> {
        let devices = devices_by_name(&cfg.nodes, &cfg.switches)?;
        let mut wiring = Wiring::new(&cfg.nodes, &cfg.switches, cfg.links.len());
        for (i, l) in cfg.links.iter().enumerate() {
            let end = |which: &str, name: &String| {
                devices.get(name).copied().ok_or_else(|| {
                    Error::config(
                        format!("topology.links.{i}.{which}"),
                        name,
                        "a node or switch name",
                    )
                })
            };
            let (a, b) = (end("a", &l.a)?, end("b", &l.b)?);
            wiring.link(a, b, BitRate(l.rate_bps), SimTime(l.delay_ps))?;
        }
        wiring.into_topology(devices, &cfg.legacy)
    }

    /// A route table for this network with no route yet, its entries wide enough for the
    /// switch with the most ports.
    pub(crate) fn empty_routes(&self) -> RouteTable {
        let widest = self.switch_ports.iter().map(Vec::len).max().unwrap_or(0);
        RouteTable::new(self.switches.len(), self.nodes.len(), widest)
    }

    /// Shortest-path next hops by one BFS per destination over the switch graph.
    pub(crate) fn shortest_path_routes(&self) -> RouteTable {
        let ns = self.switches.len();
        let mut routes = self.empty_routes();
        let mut dist = vec![u32::MAX; ns];
        let mut queue = VecDeque::new();
        for (d, &np) in self.node_port.iter().enumerate() {
            let attach = match self.ports[np as usize].peer {
                Device::Switch(s) => s as usize,
                Device::Nic(_) => unreachable!("nodes link to switches"),
            };
            dist.iter_mut().for_each(|x| *x = u32::MAX);
            dist[attach] = 0;
            routes.set(attach, d, self.ports[np as usize].peer_local);
            queue.push_back(attach);
            while let Some(s) = queue.pop_front() {
                for &p in &self.switch_ports[s] {
                    if let Device::Switch(t) = self.ports[p as usize].peer {
                        if dist[t as usize] == u32::MAX {
                            dist[t as usize] = dist[s] + 1;
                            queue.push_back(t as usize);
                        }
                    }
                }
            }
            for s in 0..ns {
                if s == attach || dist[s] == u32::MAX {
                    continue;
                }
                // lowest local port whose neighbour is one hop closer
                if let Some(l) = self.switch_ports[s]
                    .iter()
                    .position(|&p| matches!(self.ports[p as usize].peer, Device::Switch(t) if dist[t as usize] + 1 == dist[s]))
                {
                    routes.set(s, d, l as u32);
                }
            }
        }
        routes
    }

    /// The port named `owner/peer` (names hold no '/').
    pub fn port_by_name(&self, name: &str) -> Option<u32> {
        let (owner, peer) = name.split_once('/')?;
        let (owner, peer) = (*self.devices.get(owner)?, *self.devices.get(peer)?);
        let mine: &[u32] = match owner {
            Device::Nic(n) => std::slice::from_ref(&self.node_port[n as usize]),
            Device::Switch(s) => &self.switch_ports[s as usize],
        };
        mine.iter()
            .copied()
            .find(|&p| self.ports[p as usize].peer == peer)
    }

    /// The name of port `p`: `owner/peer` (`S1/7`, `S2/S3`), as the config and the results
    /// spell it.
    pub fn port_name(&self, p: u32) -> String {
        let spec = &self.ports[p as usize];
        format!(
            "{}/{}",
            self.device_name(spec.owner),
            self.device_name(spec.peer)
        )
    }

    pub fn node_by_name(&self, name: &str) -> Option<u32> {
        match self.devices.get(name) {
            Some(&Device::Nic(n)) => Some(n),
            _ => None,
        }
    }

    /// Local egress port of `switch` toward `node`, if the node is reachable.
    #[inline]
    pub fn route(&self, switch: u32, node: u32) -> Option<u32> {
        self.routes.get(switch, node)
    }

    /// [`Topology::route`] for a `node` that may name no node (a PAUSE frame's destination):
    /// `None` for it.
    #[inline]
    pub fn route_if_node(&self, switch: u32, node: u32) -> Option<u32> {
        ((node as usize) < self.nodes.len())
            .then(|| self.routes.get(switch, node))
            .flatten()
    }

    /// The name of a device.
    pub fn device_name(&self, d: Device) -> &str {
        match d {
            Device::Nic(n) => &self.nodes[n as usize],
            Device::Switch(s) => &self.switches[s as usize],
        }
    }

    /// The switch egress port feeding `node` (where an output-generated hotspot acts, D11).
    pub fn port_toward_node(&self, node: u32) -> u32 {
        self.ports[self.node_port[node as usize] as usize].reverse
    }

    /// Switches traversed from `src` to `dst` (for tests and path-length checks).
    pub fn path(&self, src: u32, dst: u32) -> Option<Vec<u32>> {
        let mut out = Vec::new();
        let mut dev = self.ports[self.node_port[src as usize] as usize].peer;
        while let Device::Switch(s) = dev {
            if out.len() > self.switches.len() {
                return None;
            }
            out.push(s);
            let local = self.route(s, dst)?;
            dev = self.ports[self.switch_ports[s as usize][local as usize] as usize].peer;
        }
        (dev == Device::Nic(dst)).then_some(out)
    }
}

/// Every node and switch by name (names checked, each used once).
fn devices_by_name(nodes: &[String], switches: &[String]) -> Result<FxHashMap<String, Device>> {
    let mut devices: FxHashMap<String, Device> = FxHashMap::default();
    devices.reserve(nodes.len() + switches.len());
    let named = nodes
        .iter()
        .enumerate()
        .map(|(i, n)| ("nodes", i, n, Device::Nic(i as u32)))
        .chain(
            switches
                .iter()
                .enumerate()
                .map(|(i, n)| ("switches", i, n, Device::Switch(i as u32))),
        );
    for (table, i, name, device) in named {
        check_name(|| format!("topology.{table}.{i}"), name)?;
        if devices.insert(name.clone(), device).is_some() {
            return Err(Error::config(
                format!("topology.{table}.{i}"),
                name,
                "a name used once",
            ));
        }
    }
    Ok(devices)
}

/// The transmitter ports of the links declared so far: two per link, one each way.
struct Wiring<'a> {
    nodes: &'a [String],
    switches: &'a [String],
    ports: Vec<PortSpec>,
    node_port: Vec<u32>,
    switch_ports: Vec<Vec<u32>>,
    /// The switch pairs linked so far, lower index first (a node has one link: see `attach`).
    switch_links: FxHashSet<(u32, u32)>,
}

impl<'a> Wiring<'a> {
    fn new(nodes: &'a [String], switches: &'a [String], links: usize) -> Self {
        Wiring {
            nodes,
            switches,
            ports: Vec::with_capacity(2 * links),
            node_port: vec![u32::MAX; nodes.len()],
            switch_ports: vec![Vec::new(); switches.len()],
            switch_links: FxHashSet::default(),
        }
    }

    fn name(&self, d: Device) -> &'a str {
        match d {
            Device::Nic(i) => &self.nodes[i as usize],
            Device::Switch(i) => &self.switches[i as usize],
        }
    }

    /// The next link, between `a` and `b`: check its ends and add its two ports (a→b, then b→a).
    fn link(&mut self, a: Device, b: Device, rate: BitRate, delay: SimTime) -> Result<()> {
        // the link's index (two ports a link so far), its key and the pair are spelled out only
        // for an error (a 2,048-host tree has 6,000 links)
        let i = self.ports.len() / 2;
        let key = || format!("topology.links.{i}");
        let pair = || format!("{} - {}", self.name(a), self.name(b));
        if matches!((a, b), (Device::Nic(_), Device::Nic(_))) {
            return Err(Error::config(
                key(),
                pair(),
                "a link with a switch at one end at least",
            ));
        }
        if a == b {
            return Err(Error::config(
                key(),
                pair(),
                "a link between two different devices",
            ));
        }
        if let (Device::Switch(x), Device::Switch(y)) = (a, b) {
            if !self.switch_links.insert((x.min(y), x.max(y))) {
                return Err(Error::config(
                    key(),
                    format!("{}/{}", self.name(a), self.name(b)),
                    "at most one link between two devices",
                ));
            }
        }
        let pab = self.ports.len() as u32;
        let pba = pab + 1;
        let la = self.attach(i, a, pab)?;
        let lb = self.attach(i, b, pba)?;
        for (owner, local, peer, peer_local, reverse) in [(a, la, b, lb, pba), (b, lb, a, la, pab)]
        {
            self.ports.push(PortSpec {
                owner,
                local,
                peer,
                peer_local,
                reverse,
                rate,
                delay,
            });
        }
        Ok(())
    }

    /// Give device `d` its egress `port`; returns the port's local index at `d`.
    fn attach(&mut self, link: usize, d: Device, port: u32) -> Result<u32> {
        match d {
            Device::Nic(n) => {
                if self.node_port[n as usize] != u32::MAX {
                    return Err(Error::config(
                        format!("topology.links.{link}"),
                        &self.nodes[n as usize],
                        "one link per node",
                    ));
                }
                self.node_port[n as usize] = port;
                Ok(0)
            }
            Device::Switch(s) => {
                self.switch_ports[s as usize].push(port);
                Ok(self.switch_ports[s as usize].len() as u32 - 1)
            }
        }
    }

    /// The network wired (every node linked, no switch too wide), without routes.
    fn into_topology(
        self,
        devices: FxHashMap<String, Device>,
        legacy_names: &[String],
    ) -> Result<Topology> {
        if let Some(n) = self.node_port.iter().position(|&p| p == u32::MAX) {
            return Err(Error::config(
                "topology.links",
                &self.nodes[n],
                "every node linked to a switch",
            ));
        }
        if let Some((s, ports)) = self
            .switch_ports
            .iter()
            .enumerate()
            .find(|(_, p)| p.len() >= RouteTable::MAX_PORTS)
        {
            return Err(Error::config(
                "topology.links",
                format!("{} ports on {}", ports.len(), self.switches[s]),
                format!("fewer than {} ports per switch", RouteTable::MAX_PORTS),
            ));
        }
        let mut legacy = vec![false; self.switches.len()];
        for (i, name) in legacy_names.iter().enumerate() {
            match devices.get(name) {
                Some(Device::Switch(s)) => legacy[*s as usize] = true,
                _ => {
                    return Err(Error::config(
                        format!("topology.legacy.{i}"),
                        name,
                        "a switch name",
                    ))
                }
            }
        }
        Ok(Topology {
            nodes: self.nodes.to_vec(),
            switches: self.switches.to_vec(),
            ports: self.ports,
            node_port: self.node_port,
            switch_ports: self.switch_ports,
            routes: RouteTable::default(),
            legacy,
            devices,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::LinkConfig;
    use super::*;

    fn link(a: &str, b: &str) -> LinkConfig {
        LinkConfig {
            a: a.into(),
            b: b.into(),
            rate_bps: 10_000_000_000,
            delay_ps: 1_000_000,
        }
    }

    fn chain() -> TopologyConfig {
        // S1{1,2} -- S2{3,4} -- S3{7,8} -- S4{5,6} -- S5{9,10}  (zhb-og-multi-hop)
        let mut links = vec![];
        for (s, ns) in [
            ("S1", ["1", "2"]),
            ("S2", ["3", "4"]),
            ("S3", ["7", "8"]),
            ("S4", ["5", "6"]),
            ("S5", ["9", "10"]),
        ] {
            for n in ns {
                links.push(link(s, n));
            }
        }
        for (a, b) in [("S1", "S2"), ("S2", "S3"), ("S3", "S4"), ("S4", "S5")] {
            links.push(link(a, b));
        }
        TopologyConfig {
            switches: ["S1", "S2", "S3", "S4", "S5"].map(String::from).to_vec(),
            nodes: (1..=10).map(|i| i.to_string()).collect(),
            links,
            legacy: vec![],
            routing: Routing::Shortest,
            fat_tree: None,
        }
    }

    #[test]
    fn chain_paths_match_the_spec() {
        let t = Topology::build(&chain()).unwrap();
        let n = |s: &str| t.node_by_name(s).unwrap();
        let names = |p: Vec<u32>| {
            p.into_iter()
                .map(|s| t.switches[s as usize].clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(names(t.path(n("1"), n("7")).unwrap()), ["S1", "S2", "S3"]);
        assert_eq!(names(t.path(n("9"), n("7")).unwrap()), ["S5", "S4", "S3"]);
        assert_eq!(
            names(t.path(n("2"), n("9")).unwrap()),
            ["S1", "S2", "S3", "S4", "S5"]
        );
        assert_eq!(names(t.path(n("5"), n("3")).unwrap()), ["S4", "S3", "S2"]);
        assert_eq!(t.port_name(t.port_toward_node(n("7"))), "S3/7");
        assert_eq!(t.port_by_name("S3/7"), Some(t.port_toward_node(n("7"))));
        assert_eq!(t.port_name(t.port_by_name("S2/S3").unwrap()), "S2/S3");
        assert_eq!(t.device_name(Device::Nic(n("7"))), "7");
        assert_eq!(t.device_name(Device::Switch(2)), "S3");
    }

    #[test]
    fn route_entries_are_a_byte_up_to_255_ports_and_two_beyond() {
        for (widest, narrow) in [
            (0, true),
            (255, true),
            (256, false),
            (RouteTable::MAX_PORTS - 1, false),
        ] {
            let mut r = RouteTable::new(3, 4, widest);
            assert_eq!(matches!(r.next, Hops::Narrow(_)), narrow, "{widest} ports");
            let top = widest.saturating_sub(1) as u32;
            r.set(2, 3, top);
            r.set(0, 1, 0);
            assert_eq!((r.get(2, 3), r.get(0, 1)), (Some(top), Some(0)));
            // every other pair stays unreachable, whatever the width
            let unset = (0..3).flat_map(|s| (0..4).map(move |n| (s, n)));
            assert!(unset
                .filter(|&p| p != (2, 3) && p != (0, 1))
                .all(|(s, n)| r.get(s, n).is_none()));
        }
    }

    /// A whole row written at once (the fat tree's d-mod-k) reads back entry by entry, in either
    /// width, and leaves the other rows unreachable.
    #[test]
    fn a_row_of_routes_is_written_at_once() {
        for widest in [255, 300] {
            let top = widest as u32 - 1;
            let mut r = RouteTable::new(3, 4, widest);
            r.set_row(1, &[3, 0, top, 7]);
            let row = |s| (0..4).map(|n| r.get(s, n)).collect::<Vec<_>>();
            assert_eq!(
                row(1),
                [Some(3), Some(0), Some(top), Some(7)],
                "{widest} ports"
            );
            assert!(row(0).iter().chain(&row(2)).all(Option::is_none));
        }
    }

    /// A switch of 300 ports needs two-byte entries: a star of 300 nodes routes to each of them.
    #[test]
    fn a_switch_wider_than_a_byte_routes_to_every_port() {
        let nodes: Vec<String> = (0..300).map(|i| format!("n{i}")).collect();
        let cfg = TopologyConfig {
            switches: vec!["S".into()],
            nodes: nodes.clone(),
            links: nodes.iter().map(|n| link("S", n)).collect(),
            legacy: vec![],
            routing: Routing::Shortest,
            fat_tree: None,
        };
        let t = Topology::build(&cfg).unwrap();
        assert!(matches!(t.routes.next, Hops::Wide(_)));
        for (i, n) in nodes.iter().enumerate() {
            let local = t.route(0, i as u32).expect("reachable");
            assert_eq!(
                t.port_name(t.switch_ports[0][local as usize]),
                format!("S/{n}")
            );
        }
    }

    #[test]
    fn bad_wiring_is_rejected_with_the_key() {
        let mut c = chain();
        c.links.push(link("S1", "nowhere"));
        let e = Topology::build(&c).unwrap_err().to_string();
        assert!(e.starts_with("topology.links.14.b = nowhere"), "{e}");
        let mut c = chain();
        c.links.push(link("S2", "1"));
        assert!(Topology::build(&c)
            .unwrap_err()
            .to_string()
            .contains("one link per node"));
        let mut c = chain();
        c.nodes.push("11".into());
        assert!(Topology::build(&c)
            .unwrap_err()
            .to_string()
            .contains("every node linked"));
        // a second link between two switches, declared either way round
        for (a, b) in [("S2", "S3"), ("S3", "S2")] {
            let mut c = chain();
            c.links.push(link(a, b));
            let e = Topology::build(&c).unwrap_err().to_string();
            assert_eq!(
                e,
                format!("topology.links.14 = {a}/{b}: at most one link between two devices")
            );
        }
    }

    /// Every port's name leads back to it; names of ports that do not exist lead nowhere.
    #[test]
    fn port_names_and_ports_correspond() {
        let t = Topology::build(&chain()).unwrap();
        assert_eq!(t.ports.len(), 28);
        for p in 0..t.ports.len() as u32 {
            let name = t.port_name(p);
            assert_eq!(t.port_by_name(&name), Some(p), "{name}");
        }
        assert_eq!(t.port_name(t.node_port[0]), "1/S1");
        for missing in [
            "S1/S3",
            "1/S2",
            "7/S1",
            "S1",
            "S1/",
            "/S1",
            "S1/nowhere",
            "S1/1/2",
            "",
        ] {
            assert_eq!(t.port_by_name(missing), None, "{missing}");
        }
    }
}
