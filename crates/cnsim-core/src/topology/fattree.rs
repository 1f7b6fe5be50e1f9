//! Fat trees (scenarios.md §5 e2cm-fat-tree, §6 eval-fat-tree-64, §8 zhb-ft-*, scale-ft-2048;
//! docs/core-config.md): k-ary n-trees, optionally two of them merged at the top, with
//! deterministic d-mod-k up/down routing computed arithmetically.
//!
//! A level-l switch carries a word w of n−1 base-k digits (w_0 least significant). Host q (index d
//! within its half, digits d_0 … d_{n−1}) hangs off leaf ⌊d/k⌋ (w_i = d_{i+1}) on port d_0. A
//! level-l switch of the destination's half is an ancestor of it iff w_i = d_{i+1} for i ≥ l; the
//! (merged) top level is an ancestor of every host. Up: at level l the frame takes up-port d_l,
//! i.e. to the level-(l+1) switch whose digit l is d_l (d-mod-k: destinations spread evenly over
//! the up-links). Down: from an ancestor at level l to the level-(l−1) switch with digit l−1 := d_l.

use super::{
    devices_by_name, Device, FatTreeConfig, RouteTable, Routing, Topology, TopologyConfig, Wiring,
};
use crate::error::{Error, Result};
use crate::time::{BitRate, SimTime};

/// The tree's shape.
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    pub k: u32,
    pub n: u32,
    pub merged: bool,
}

impl Shape {
    pub fn new(ft: &FatTreeConfig) -> Self {
        Shape {
            k: ft.radix / 2,
            n: ft.levels,
            merged: ft.merged_top,
        }
    }
    /// Hosts per half (per tree).
    pub fn half_hosts(&self) -> u32 {
        self.k.pow(self.n)
    }
    pub fn hosts(&self) -> u32 {
        self.half_hosts() * if self.merged { 2 } else { 1 }
    }
    /// Switches per level of one tree.
    pub fn per_level(&self) -> u32 {
        self.k.pow(self.n - 1)
    }
    fn halves(&self, level: u32) -> u32 {
        if self.merged && level + 1 < self.n {
            2
        } else {
            1
        }
    }
    pub fn switches(&self) -> u32 {
        (0..self.n).map(|l| self.halves(l) * self.per_level()).sum()
    }
    /// Global switch index of (level, half, word).
    fn index(&self, level: u32, half: u32, word: u32) -> u32 {
        let below: u32 = (0..level).map(|l| self.halves(l) * self.per_level()).sum();
        below + half * self.per_level() + word
    }
    fn name(&self, level: u32, half: u32, word: u32) -> String {
        format!("L{level}.{}", half * self.per_level() + word)
    }
    fn digit(&self, x: u32, i: u32) -> u32 {
        x / self.k.pow(i) % self.k
    }
    fn with_digit(&self, x: u32, i: u32, v: u32) -> u32 {
        x - self.digit(x, i) * self.k.pow(i) + v * self.k.pow(i)
    }
}

/// Build the tree's switches and links as a graph config, then its d-mod-k routes.
pub fn build(cfg: &TopologyConfig, ft: &FatTreeConfig) -> Result<Topology> {
    let sh = Shape::new(ft);
    if cfg.nodes.len() != sh.hosts() as usize {
        return Err(Error::config(
            "topology.nodes",
            cfg.nodes.len(),
            format!("{} hosts for this fat tree", sh.hosts()),
        ));
    }
    let mut names = vec![String::new(); sh.switches() as usize];
    for l in 0..sh.n {
        for h in 0..sh.halves(l) {
            for w in 0..sh.per_level() {
                names[sh.index(l, h, w) as usize] = sh.name(l, h, w);
            }
        }
    }
    let devices = devices_by_name(&cfg.nodes, &names)?;
    let mut wiring = Wiring::new(&cfg.nodes, &names, sh.hosts() as usize * sh.n as usize);
    let (rate, delay) = (BitRate(ft.rate_bps), SimTime(ft.delay_ps));
    let mut link = |a: u32, b: Device| wiring.link(Device::Switch(a), b, rate, delay);
    // hosts first, then level by level upward: every switch lists its down ports before its up
    // ports, in digit order
    for q in 0..sh.hosts() {
        let (h, d) = (q / sh.half_hosts(), q % sh.half_hosts());
        link(sh.index(0, h, d / sh.k), Device::Nic(q))?;
    }
    for l in 0..sh.n - 1 {
        for h in 0..sh.halves(l) {
            for w in 0..sh.per_level() {
                for j in 0..sh.k {
                    let up_half = if sh.halves(l + 1) == 1 { 0 } else { h };
                    let up = sh.index(l + 1, up_half, sh.with_digit(w, l, j));
                    link(sh.index(l, h, w), Device::Switch(up))?;
                }
            }
        }
    }
    let mut topo = wiring.into_topology(devices, &cfg.legacy)?;
    topo.routes = match cfg.routing {
        Routing::Dmodk => dmodk_routes(&topo, sh),
        Routing::Shortest => topo.shortest_path_routes(),
    };
    Ok(topo)
}

/// The route of every (switch, host) by d-mod-k.
fn dmodk_routes(topo: &Topology, sh: Shape) -> RouteTable {
    let switches = topo.switch_ports.len();
    // the local port of each of the current switch's peers: switches first, then hosts (a flat
    // table, set and cleared per switch, since 2,048 hosts × 96 switches are ~200,000 lookups)
    let slot = |peer: Device| -> usize {
        match peer {
            Device::Switch(i) => i as usize,
            Device::Nic(q) => switches + q as usize,
        }
    };
    let mut local = vec![u32::MAX; switches + sh.hosts() as usize];
    // the n base-k digits of every host index within its half, computed once (divisions
    // dominated this loop)
    let (n, half_hosts) = (sh.n as usize, sh.half_hosts());
    let host_digits: Vec<u32> = (0..half_hosts)
        .flat_map(|d| (0..sh.n).map(move |i| sh.digit(d, i)))
        .collect();
    let mut routes = topo.empty_routes();
    let mut row = vec![u32::MAX; sh.hosts() as usize];
    for l in 0..sh.n {
        let li = l as usize;
        // the hosts below a level-l switch of word w (in its half): those whose digits above
        // d_l are w's from digit l up, a run of k^(l+1) host indices
        let below = sh.k.pow(l + 1);
        for h in 0..sh.halves(l) {
            for w in 0..sh.per_level() {
                let s = sh.index(l, h, w);
                let ports = &topo.switch_ports[s as usize];
                for (i, &p) in ports.iter().enumerate() {
                    local[slot(topo.ports[p as usize].peer)] = i as u32;
                }
                // the port to the switch one level down (up) whose digit l−1 (l) is v, per v
                // (u32::MAX where this switch has no such neighbour)
                let neighbours = |level: u32, half: u32, i: u32| -> Vec<u32> {
                    (0..sh.k)
                        .map(|v| {
                            let next = sh.index(level, half, sh.with_digit(w, i, v));
                            local[slot(Device::Switch(next))]
                        })
                        .collect()
                };
                let up: Vec<u32> = if l + 1 < sh.n {
                    let up_half = if sh.halves(l + 1) == 1 { 0 } else { h };
                    neighbours(l + 1, up_half, l)
                } else {
                    Vec::new()
                };
                let first_below = w / sh.k.pow(l) * below;
                let mine = first_below..first_below + below;
                for hq in 0..sh.hosts() / half_hosts {
                    let down: Vec<u32> = if l > 0 {
                        let down_half = if sh.halves(l - 1) == 1 { 0 } else { hq };
                        neighbours(l - 1, down_half, l - 1)
                    } else {
                        Vec::new()
                    };
                    let in_my_half = sh.halves(l) == 1 || h == hq;
                    for d in 0..half_hosts {
                        let q = hq * half_hosts + d;
                        let digit = host_digits[d as usize * n + li] as usize;
                        let ancestor = in_my_half && mine.contains(&d);
                        row[q as usize] = if ancestor && l == 0 {
                            local[slot(Device::Nic(q))]
                        } else if ancestor {
                            down[digit]
                        } else {
                            up[digit]
                        };
                    }
                }
                assert!(row.iter().all(|&p| p != u32::MAX), "the tree is wired");
                routes.set_row(s as usize, &row);
                for &p in ports {
                    local[slot(topo.ports[p as usize].peer)] = u32::MAX;
                }
            }
        }
    }
    routes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(radix: u32, levels: u32, merged: bool) -> Topology {
        let ft = FatTreeConfig {
            radix,
            levels,
            merged_top: merged,
            rate_bps: 10_000_000_000,
            delay_ps: 1_000_000,
        };
        let sh = Shape::new(&ft);
        let cfg = TopologyConfig {
            switches: vec![],
            nodes: (0..sh.hosts()).map(|i| i.to_string()).collect(),
            links: vec![],
            legacy: vec![],
            routing: Routing::Dmodk,
            fat_tree: Some(ft),
        };
        Topology::build(&cfg).unwrap()
    }

    #[test]
    fn sizes_of_the_catalog_trees() {
        for (radix, levels, merged, hosts, switches) in [
            (4, 3, true, 16, 20),
            (4, 4, true, 32, 56),
            (8, 3, false, 64, 48),
            (8, 2, true, 32, 12),
            (64, 2, true, 2048, 96),
        ] {
            let t = tree(radix, levels, merged);
            assert_eq!(
                (t.nodes.len(), t.switches.len()),
                (hosts, switches),
                "radix {radix} levels {levels}"
            );
            for (s, ports) in t.switch_ports.iter().enumerate() {
                let top = t.switches[s].starts_with(&format!("L{}.", levels - 1));
                // every switch has 2k ports, but an unmerged top level uses only its k down ports
                let expect = if top && !merged { radix / 2 } else { radix };
                assert_eq!(ports.len() as u32, expect, "{}", t.switches[s]);
            }
        }
    }

    #[test]
    fn every_pair_routes_up_then_down_within_2n_minus_1_switches() {
        for (radix, levels, merged) in [(4, 3, true), (8, 3, false), (4, 4, true)] {
            let t = tree(radix, levels, merged);
            let n = t.nodes.len() as u32;
            for a in 0..n {
                for b in 0..n {
                    if a == b {
                        continue;
                    }
                    let path = t.path(a, b).unwrap_or_else(|| panic!("no path {a}->{b}"));
                    assert!(
                        (path.len() as u32) < 2 * levels,
                        "{a}->{b}: at most 2n - 1 switches: {path:?}"
                    );
                    let lv: Vec<u32> = path
                        .iter()
                        .map(|&s| {
                            t.switches[s as usize][1..]
                                .split('.')
                                .next()
                                .unwrap()
                                .parse()
                                .unwrap()
                        })
                        .collect();
                    let top = lv
                        .iter()
                        .position(|&x| x == *lv.iter().max().unwrap())
                        .unwrap();
                    assert!(
                        lv[..=top].windows(2).all(|w| w[1] == w[0] + 1)
                            && lv[top..].windows(2).all(|w| w[1] + 1 == w[0]),
                        "{lv:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn dmodk_spreads_destinations_evenly_over_up_links() {
        // 4-ary 3-tree: from leaf L0.0, the 60 remote destinations split 15/15/15/15 over its 4 up-links
        let t = tree(8, 3, false);
        let mut count = [0u32; 8];
        for q in 4..64 {
            count[t.route(0, q).unwrap() as usize] += 1;
        }
        assert_eq!(count, [0, 0, 0, 0, 15, 15, 15, 15]);
        assert_eq!(t.port_name(t.switch_ports[0][2]), "L0.0/2");
    }
}
