//! Building a simulator from a core config (docs/core-config.md), one piece at a time: every
//! reference by name (nodes, ports, switches) is resolved here, with an error that names the key.

use crate::cm::{AnyCp, AnyNp, Scheme};
use crate::engine::rng::{stream, StreamKind};
use crate::engine::{Event, EventQueue, SimRng};
use crate::error::{Error, Result};
use crate::metrics::{Bins, Counter, LevelTracker, Recorder, Window, MAX_NAMED_WINDOWS};
use crate::net::{Nic, Port, Switch};
use crate::scenario::{CoreConfig, Ingress, OnFull, Sizes};
use crate::time::{tx_time, SimTime};
use crate::topology::{Device, Topology};
use crate::traffic::Generator;

use super::Hotspot;

/// The network can be simulated: at most [`crate::engine::MAX_NODES`] nodes, and every switch
/// reaches every node (a frame never meets a missing route).
pub(super) fn check_network(topo: &Topology) -> Result<()> {
    if topo.nodes.len() > crate::engine::MAX_NODES {
        return Err(Error::config(
            "topology",
            format!("{} nodes", topo.nodes.len()),
            format!("at most {} nodes", crate::engine::MAX_NODES),
        ));
    }
    for (s, name) in topo.switches.iter().enumerate() {
        for (d, node) in topo.nodes.iter().enumerate() {
            if topo.route(s as u32, d as u32).is_none() {
                return Err(Error::config(
                    "topology.links",
                    format!("{name} .. {node}"),
                    "a connected network",
                ));
            }
        }
    }
    Ok(())
}

/// The node `name`; `key` says where the name comes from, spelled out only for an error (a
/// 2,048-host run names 2,048 sources).
fn node(topo: &Topology, key: impl FnOnce() -> String, name: &str) -> Result<u32> {
    topo.node_by_name(name)
        .ok_or_else(|| Error::config(key(), name, "a node name"))
}

/// One switch per topology switch, with its capacity and PAUSE watermarks.
pub(super) fn switches(cfg: &CoreConfig, topo: &Topology) -> Result<Vec<Switch>> {
    topo.switches
        .iter()
        .enumerate()
        .map(|(s, name)| {
            let limits = *cfg.switch.thresholds.get(name).ok_or_else(|| {
                Error::config(
                    format!("switch.thresholds.{name}"),
                    "missing",
                    "capacity and watermarks for every switch",
                )
            })?;
            Ok(Switch::new(
                topo.switch_ports[s].clone(),
                limits,
                topo.legacy[s],
                cfg.switch.pfc_classes,
            ))
        })
        .collect()
}

/// One NIC per node, on its egress port, with its reaction-point random stream.
pub(super) fn nics(cfg: &CoreConfig, topo: &Topology) -> Vec<Nic> {
    let n_nodes = topo.nodes.len();
    (0..n_nodes)
        .map(|i| {
            let p = topo.node_port[i];
            let rng = stream(cfg.seed, StreamKind::ReactionPoint, i as u64);
            Nic::new(i as u32, p, topo.ports[p as usize].rate, n_nodes, rng)
        })
        .collect()
}

/// One generator per traffic source, slotted at its NIC's line rate, attached to its NIC.
pub(super) fn generators(
    cfg: &CoreConfig,
    topo: &Topology,
    nics: &mut [Nic],
) -> Result<Vec<Generator>> {
    let mut gens = Vec::new();
    for (i, src) in cfg.traffic.sources.iter().enumerate() {
        let n = node(topo, || format!("traffic.sources.{i}.node"), &src.node)?;
        let dst = match &src.dst {
            Some(d) => {
                let d = node(topo, || format!("traffic.sources.{i}.dst"), d)?;
                if d == n {
                    return Err(Error::config(
                        format!("traffic.sources.{i}.dst"),
                        &src.node,
                        "a destination other than the source",
                    ));
                }
                Some(d)
            }
            None => None,
        };
        let rate = nics[n as usize].line_rate;
        let stop = src.stop_ps.map_or(SimTime::NEVER, SimTime);
        let rng = stream(cfg.seed, StreamKind::Traffic, i as u64);
        let slot = tx_time(cfg.traffic.frame_size as u64, rate);
        let mean = (src.sizes == Sizes::Geometric).then_some(src.mean_frames);
        let n_nodes = topo.nodes.len() as u32;
        let mut g = Generator::with_flows(
            n,
            dst,
            src.load,
            mean,
            slot,
            SimTime(src.start_ps),
            stop,
            n_nodes,
            rng,
        );
        g.priority = src.priority;
        if !(cfg.nic.ingress == Ingress::Shared && cfg.nic.on_full == OnFull::Block) {
            g.draw_destinations_ahead(); // only a blocking ingress holds a generator back
        }
        nics[n as usize].add_generator(gens.len() as u32);
        gens.push(g);
    }
    Ok(gens)
}

/// Each hotspot window on the switch port that feeds its node.
pub(super) fn hotspots(cfg: &CoreConfig, topo: &Topology) -> Result<Vec<Hotspot>> {
    cfg.hotspots
        .iter()
        .enumerate()
        .map(|(i, h)| {
            let n = node(topo, || format!("hotspots.{i}.node"), &h.node)?;
            Ok(Hotspot {
                port: topo.port_toward_node(n),
                rate: h.rate,
                start: SimTime(h.start_ps),
                end: SimTime(h.end_ps),
            })
        })
        .collect()
}

/// A congestion point on every egress port of a CM switch (legacy switches have none, D6), or
/// on the ports `switch.cp_ports` names, each with its own random stream; nothing when the
/// scheme has no CPs.
pub(super) fn congestion_points(
    cfg: &CoreConfig,
    scheme: &Scheme,
    ports: &[Port],
    topo: &Topology,
) -> Result<(Vec<Option<AnyCp>>, Vec<SimRng>)> {
    if !scheme.has_congestion_points() {
        return Ok((Vec::new(), Vec::new()));
    }
    let named: Option<Vec<bool>> = match &cfg.switch.cp_ports {
        None => None,
        Some(names) => {
            let mut chosen = vec![false; ports.len()];
            for (i, name) in names.iter().enumerate() {
                let p = topo.port_by_name(name).filter(|&p| {
                    matches!(ports[p as usize].spec.owner, Device::Switch(s) if !topo.legacy[s as usize])
                });
                let Some(p) = p else {
                    return Err(Error::config(
                        format!("switch.cp_ports.{i}"),
                        name,
                        "an egress port <switch>/<neighbour> of a CM switch",
                    ));
                };
                chosen[p as usize] = true;
            }
            Some(chosen)
        }
    };
    let mut rngs: Vec<SimRng> = (0..ports.len())
        .map(|i| stream(cfg.seed, StreamKind::CongestionPoint, i as u64))
        .collect();
    let cps = ports
        .iter()
        .enumerate()
        .map(|(i, p)| match p.spec.owner {
            Device::Switch(s)
                if !topo.legacy[s as usize] && named.as_ref().is_none_or(|c| c[i]) =>
            {
                Some(scheme.new_cp(i as u32, p.spec.rate.as_f64(), &mut rngs[i]))
            }
            _ => None,
        })
        .collect();
    Ok((cps, rngs))
}

/// The recorder: bins and window, the recorded flows, the hot port (fixed, or following the
/// hotspot, D16) and the recorded queues, whose ports get their recorder slots.
pub(super) fn recorder(
    cfg: &CoreConfig,
    topo: &Topology,
    has_hotspots: bool,
    ports: &mut [Port],
    gens: &[Generator],
) -> Result<Recorder> {
    let bins = Bins::new(cfg.metrics.bin_ps, cfg.duration_ps);
    let window = Window {
        t0: cfg.metrics.window_ps[0].min(cfg.duration_ps),
        t1: cfg.metrics.window_ps[1].min(cfg.duration_ps),
    };
    let mut flows = Vec::new();
    for (i, [s, d]) in cfg.metrics.per_flow.iter().enumerate() {
        let sn = node(topo, || format!("metrics.per_flow.{i}"), s)?;
        let dn = node(topo, || format!("metrics.per_flow.{i}"), d)?;
        flows.push((sn, dn, format!("{s}->{d}")));
    }
    let mut rec = Recorder::new(bins.clone(), window, topo.nodes.len(), &flows);
    rec.set_rate_classes(rate_classes(gens, topo.nodes.len(), &flows));
    rec.named = named_windows(cfg, &bins)?;
    let port_named = |key: &str, name: &str| {
        topo.port_by_name(name)
            .ok_or_else(|| Error::config(key, name, "a port name <switch>/<neighbour>"))
    };
    let mut recorded = Vec::new();
    if cfg.metrics.hot_port == "hotspot" {
        // D16: the hot port is whichever port is hot at each instant
        if !has_hotspots {
            return Err(Error::config(
                "metrics.hot_port",
                "hotspot",
                "a port name (the scenario has no hotspot)",
            ));
        }
        rec.hot_dynamic = true;
    } else {
        let hot = port_named("metrics.hot_port", &cfg.metrics.hot_port)?;
        if !matches!(topo.ports[hot as usize].owner, Device::Switch(_)) {
            return Err(Error::config(
                "metrics.hot_port",
                &cfg.metrics.hot_port,
                "a switch egress port",
            ));
        }
        rec.hot_port = Some(hot);
        recorded.push(hot);
    }
    for (i, q) in cfg.metrics.queues.iter().enumerate() {
        let p = port_named(&format!("metrics.queues.{i}"), q)?;
        if !recorded.contains(&p) {
            recorded.push(p);
        }
    }
    for p in recorded {
        let name = topo.port_name(p);
        ports[p as usize].record_queue(rec.queues.len() as u32);
        rec.queues.push(LevelTracker::new(name.clone()));
        ports[p as usize].record_tput(rec.ports.len() as u32);
        rec.ports.push(Counter::new());
        rec.port_names.push(name);
    }
    Ok(rec)
}

/// The priority class whose limiter each recorded flow's rate series follows (with several PFC
/// classes a NIC keeps a VOQ, so a limiter, per destination and class): a named flow's own, the
/// first listed if several share the pair, else the class of its source's uniform traffic.
fn rate_classes(gens: &[Generator], n_nodes: usize, flows: &[(u32, u32, String)]) -> Vec<u8> {
    let mut named: rustc_hash::FxHashMap<(u32, u32), u8> = Default::default();
    let mut uniform: Vec<Option<u8>> = vec![None; n_nodes];
    for g in gens {
        match g.dst {
            Some(d) => {
                named.entry((g.node, d)).or_insert(g.priority);
            }
            None => {
                uniform[g.node as usize].get_or_insert(g.priority);
            }
        }
    }
    flows
        .iter()
        .map(|&(s, d, _)| {
            named
                .get(&(s, d))
                .copied()
                .or(uniform[s as usize])
                .unwrap_or(0)
        })
        .collect()
}

/// The bytes each VOQ of a per-VOQ ingress holds: the ingress shared by the N − 1 destinations,
/// and with several PFC classes by their classes too (a VOQ per destination and class), so that
/// a NIC never holds more than `ingress_size` (no limit for the other ingress models).
pub(super) fn voq_cap(cfg: &CoreConfig, n_nodes: usize) -> u64 {
    let classes = u64::from(cfg.switch.pfc_classes.max(1));
    match cfg.nic.ingress {
        Ingress::PerVoq => cfg.nic.ingress_size / ((n_nodes.max(2) as u64 - 1) * classes),
        _ => u64::MAX,
    }
}

/// Per node: its incoming finite flows are hot (`metrics.hot_nodes`, chosen by the front end).
pub(super) fn hot_nodes(cfg: &CoreConfig, topo: &Topology) -> Result<Vec<bool>> {
    let mut hot = vec![false; topo.nodes.len()];
    for (i, name) in cfg.metrics.hot_nodes.iter().enumerate() {
        hot[node(topo, || format!("metrics.hot_nodes.{i}"), name)? as usize] = true;
    }
    Ok(hot)
}

/// The named windows (`windows.*`) on the bin edges nearest to theirs, so that the binned
/// records give them exactly.
fn named_windows(cfg: &CoreConfig, bins: &Bins) -> Result<Vec<(String, Window)>> {
    if cfg.metrics.windows.len() > MAX_NAMED_WINDOWS {
        return Err(Error::config(
            "metrics.windows",
            cfg.metrics.windows.len(),
            format!("at most {MAX_NAMED_WINDOWS} named windows"),
        ));
    }
    let edge = |t: u64| {
        let w = bins.width;
        ((t.saturating_add(w / 2)) / w * w).min(cfg.duration_ps)
    };
    Ok(cfg
        .metrics
        .windows
        .iter()
        .map(|w| {
            let t0 = edge(w.start_ps);
            let window = Window {
                t0,
                t1: edge(w.end_ps).max(t0),
            };
            (w.name.clone(), window)
        })
        .collect())
}

/// One notification point per NIC, when the scheme acts at destinations (QCN-3pt reflections,
/// DCQCN's CNP generation); none otherwise.
pub(super) fn notification_points(
    cfg: &CoreConfig,
    scheme: &Scheme,
    nics: &[Nic],
) -> (Vec<AnyNp>, Vec<SimRng>) {
    if !scheme.needs_sink_events() {
        return (Vec::new(), Vec::new());
    }
    nics.iter()
        .map(|nic| {
            let rng = stream(cfg.seed, StreamKind::Sink, u64::from(nic.node));
            (scheme.new_np(nic.node), rng)
        })
        .unzip()
}

/// When the last source stops generating, at most the end of the run. Contract: "`traffic.stop`
/// ends generation; a run-to-completion scenario then runs until no data frame is left": a source
/// stops at its stop time, not at its last arrival (which the lazy generator knows in advance),
/// and with no source at all nothing ends generation before the run's duration.
pub(super) fn sources_stop(cfg: &CoreConfig, gens: &[Generator]) -> SimTime {
    let end = SimTime(cfg.duration_ps);
    gens.iter()
        .map(Generator::stop)
        .max()
        .unwrap_or(end)
        .min(end)
}

/// The events a run starts with: the first deadlock check (with PAUSE), the CPs' first
/// measurement intervals (schemes with a CP clock), the hotspot windows, and in a run to
/// completion whose sources stop before its end the observer at that stop ([`sources_stop`]).
/// The queue's wheel reaches twice the longest hop (a data frame's transmission plus its link's
/// propagation), so that nearly every event is scheduled into it, not beyond, unless that would
/// make its slots wider than a quarter of the shortest transmission (`engine::queue`).
pub(super) fn first_events(
    cfg: &CoreConfig,
    scheme: &Scheme,
    cps: &[Option<AnyCp>],
    hotspots: &[Hotspot],
    ports: &[Port],
    sources_stop: SimTime,
) -> EventQueue {
    let frame = u64::from(cfg.traffic.frame_size);
    let sending = ports.iter().filter(|p| p.data_rate.0 > 0);
    let hop = sending
        .clone()
        .map(|p| tx_time(frame, p.data_rate).0.saturating_add(p.delay.0))
        .max()
        .unwrap_or(0);
    let shortest = sending
        .map(|p| tx_time(frame, p.data_rate))
        .min()
        .unwrap_or(SimTime::NEVER);
    let mut queue = EventQueue::with_reach(SimTime(hop.saturating_mul(2)), shortest);
    if cfg.switch.pause {
        queue.push(
            SimTime(cfg.metrics.deadlock_threshold_ps),
            Event::DeadlockCheck,
        );
    }
    if let Some(period) = scheme.cp_period() {
        for (port, _) in cps.iter().enumerate().filter(|(_, cp)| cp.is_some()) {
            queue.push(period, Event::CpTick { port: port as u32 });
        }
    }
    for (i, h) in hotspots.iter().enumerate() {
        let index = i as u32;
        queue.push(h.start, Event::Hotspot { index, on: true });
        queue.push(h.end, Event::Hotspot { index, on: false });
    }
    if cfg.run_to_completion && sources_stop.0 < cfg.duration_ps {
        // the end is looked for after each event: one at the sources' stop, should none follow
        queue.push(sources_stop, Event::SourcesStopped);
    }
    queue
}
