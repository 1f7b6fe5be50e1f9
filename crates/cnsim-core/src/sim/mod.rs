//! The simulator: one value that owns the whole network in flat arrays, the event queue and the
//! recorder, built from a [`CoreConfig`]. Two simulators never share state, so a process may run
//! any number of them (htsim's global event list is the counter-example).

mod ports;
mod summary;
mod switches;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crate::cm::{AnyCp, Scheme};
use crate::engine::rng::{stream, StreamKind};
use crate::engine::{Event, EventQueue, SimRng};
use crate::error::{Error, Result};
use crate::frame::FramePool;
use crate::metrics::summary::Summary;
use crate::metrics::{Bins, FlowTracker, LevelTracker, Recorder, Series, Window};
use crate::net::switch::SwitchParams;
use crate::net::{Nic, Port, Switch};
use crate::scenario::{CoreConfig, Ingress, NicConfig, Sizes};
use crate::time::{tx_time, SimTime};
use crate::topology::{Device, Topology};
use crate::traffic::Generator;

/// Shared with the caller while a run is in progress: progress for a progress bar, and a flag
/// to interrupt the run (checked every few thousand events).
#[derive(Debug, Default)]
pub struct RunControl {
    pub progress_ps: AtomicU64,
    pub interrupt: AtomicBool,
}

/// Frame accounting for the conservation check.
#[derive(Clone, Copy, Debug, Default)]
pub struct Stats {
    pub generated: u64,
    pub delivered: u64,
    pub dropped: u64,
    pub source_dropped: u64,
    /// Frames whose last bit arrived but whose delivery (after the NIC delay) falls after the end.
    pub sink_pending: u64,
}

/// A hotspot window resolved to its port.
#[derive(Clone, Copy, Debug)]
pub struct Hotspot {
    pub port: u32,
    pub rate: f64,
    pub start: SimTime,
    pub end: SimTime,
}

/// What a finished run hands back: the engine's summary and the binned series.
#[derive(Debug)]
pub struct RunResult {
    pub summary: Summary,
    pub series: Vec<(String, Series)>,
    pub bin_s: f64,
    pub bins: usize,
}

pub struct Simulator {
    pub(crate) now: SimTime,
    pub(crate) end: SimTime,
    pub(crate) queue: EventQueue,
    pub(crate) pool: FramePool,
    pub topo: Topology,
    pub(crate) ports: Vec<Port>,
    pub(crate) switches: Vec<Switch>,
    pub(crate) nics: Vec<Nic>,
    pub(crate) gens: Vec<Generator>,
    pub(crate) hotspots: Vec<Hotspot>,
    pub(crate) scheme: Scheme,
    /// One CP per switch egress port of a CM switch (indexed by port), when the scheme has CPs.
    pub(crate) cps: Vec<Option<AnyCp>>,
    pub(crate) cp_rngs: Vec<SimRng>,
    pub(crate) cps_active: bool,
    /// The scheme acts on frames reaching a sink (reflections, probes): arrivals need events.
    pub(crate) sink_events: bool,
    pub(crate) cm_frame_bytes: u32,
    pub(crate) frame_size: u32,
    pub(crate) sw_params: SwitchParams,
    pub(crate) nic_cfg: NicConfig,
    pub(crate) voq_cap: u64,
    pub(crate) rec: Recorder,
    pub(crate) stats: Stats,
    pub(crate) events: u64,
    /// Finite flows in progress and their completion times.
    pub(crate) flows: FlowTracker,
    /// Generators that will generate nothing more.
    pub(crate) gens_done: usize,
    /// End when every source has stopped and no data frame is left (or at the cap).
    run_to_completion: bool,
}

impl Simulator {
    pub fn new(cfg: &CoreConfig) -> Result<Self> {
        cfg.check()?;
        let topo = Topology::build(&cfg.topology)?;
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
        let ports: Vec<Port> = topo.ports.iter().cloned().map(Port::new).collect();
        let mut switches = Vec::with_capacity(topo.switches.len());
        for (s, name) in topo.switches.iter().enumerate() {
            let limits = *cfg.switch.thresholds.get(name).ok_or_else(|| {
                Error::config(
                    format!("switch.thresholds.{name}"),
                    "missing",
                    "capacity and watermarks for every switch",
                )
            })?;
            switches.push(Switch::new(
                topo.switch_ports[s].clone(),
                limits,
                topo.legacy[s],
            ));
        }
        let n_nodes = topo.nodes.len();
        let mut nics: Vec<Nic> = (0..n_nodes)
            .map(|i| {
                let p = topo.node_port[i];
                Nic::new(
                    i as u32,
                    p,
                    topo.ports[p as usize].rate,
                    n_nodes,
                    stream(cfg.seed, StreamKind::ReactionPoint, i as u64),
                )
            })
            .collect();
        let node = |key: String, name: &str| {
            topo.node_by_name(name)
                .ok_or_else(|| Error::config(key, name, "a node name"))
        };
        let mut gens = Vec::new();
        for (i, src) in cfg.traffic.sources.iter().enumerate() {
            let n = node(format!("traffic.sources.{i}.node"), &src.node)?;
            let dst = match &src.dst {
                Some(d) => {
                    let d = node(format!("traffic.sources.{i}.dst"), d)?;
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
            let g = Generator::with_flows(
                n,
                dst,
                src.load,
                mean,
                slot,
                SimTime(src.start_ps),
                stop,
                n_nodes as u32,
                rng,
            );
            nics[n as usize].gens.push(gens.len() as u32);
            gens.push(g);
        }
        let mut hotspots = Vec::new();
        for (i, h) in cfg.hotspots.iter().enumerate() {
            let n = node(format!("hotspots.{i}.node"), &h.node)?;
            hotspots.push(Hotspot {
                port: topo.port_toward_node(n),
                rate: h.rate,
                start: SimTime(h.start_ps),
                end: SimTime(h.end_ps),
            });
        }
        let scheme = Scheme::from_config(&cfg.cm)?;
        let cm_frame_bytes = scheme.frame_bytes();
        let cps_active = scheme.has_congestion_points();
        let sink_events = scheme.needs_sink_events();
        let (cps, cp_rngs) = if cps_active {
            let mut rngs: Vec<SimRng> = (0..ports.len())
                .map(|i| stream(cfg.seed, StreamKind::CongestionPoint, i as u64))
                .collect();
            let cps = ports
                .iter()
                .enumerate()
                .map(|(i, p)| match p.spec.owner {
                    Device::Switch(s) if !topo.legacy[s as usize] => {
                        Some(scheme.new_cp(i as u32, &mut rngs[i]))
                    }
                    _ => None,
                })
                .collect();
            (cps, rngs)
        } else {
            (Vec::new(), Vec::new())
        };

        // metrics
        let end = SimTime(cfg.duration_ps);
        let bins = Bins::new(cfg.metrics.bin_ps, cfg.duration_ps);
        let window = Window {
            t0: cfg.metrics.window_ps[0].min(cfg.duration_ps),
            t1: cfg.metrics.window_ps[1].min(cfg.duration_ps),
        };
        let mut flows = Vec::new();
        for (i, [s, d]) in cfg.metrics.per_flow.iter().enumerate() {
            let sn = node(format!("metrics.per_flow.{i}"), s)?;
            let dn = node(format!("metrics.per_flow.{i}"), d)?;
            flows.push((sn, dn, format!("{s}->{d}")));
        }
        let mut rec = Recorder::new(bins, window, n_nodes, &flows);
        let mut sim_ports = ports;
        let port_named = |key: &str, name: &str| {
            topo.port_by_name(name)
                .ok_or_else(|| Error::config(key, name, "a port name <switch>/<neighbour>"))
        };
        let mut recorded = Vec::new();
        if cfg.metrics.hot_port == "hotspot" {
            // D16: the hot port is whichever port is hot at each instant
            if hotspots.is_empty() {
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
            let name = topo.ports[p as usize].name.clone();
            sim_ports[p as usize].queue_rec = Some(rec.queues.len() as u32);
            rec.queues.push(LevelTracker::new(name.clone()));
            sim_ports[p as usize].tput_rec = Some(rec.ports.len() as u32);
            rec.ports.push(crate::metrics::Counter::new());
            rec.port_names.push(name);
        }

        let voq_cap = match cfg.nic.ingress {
            Ingress::PerVoq => cfg.nic.ingress_size / (n_nodes.max(2) as u64 - 1),
            _ => u64::MAX,
        };
        let gens_done = gens.iter().filter(|g| g.next == SimTime::NEVER).count();
        let mut queue = EventQueue::new();
        for (i, h) in hotspots.iter().enumerate() {
            queue.push(
                h.start,
                Event::Hotspot {
                    index: i as u32,
                    on: true,
                },
            );
            queue.push(
                h.end,
                Event::Hotspot {
                    index: i as u32,
                    on: false,
                },
            );
        }
        Ok(Simulator {
            now: SimTime::ZERO,
            end,
            queue,
            pool: FramePool::new(),
            topo,
            ports: sim_ports,
            switches,
            nics,
            gens,
            hotspots,
            scheme,
            cps,
            cp_rngs,
            cps_active,
            sink_events,
            cm_frame_bytes,
            frame_size: cfg.traffic.frame_size,
            sw_params: SwitchParams {
                buffer: cfg.switch.buffer,
                oq_limit: cfg.switch.oq_limit,
                processing_delay: SimTime(cfg.switch.processing_delay_ps),
                pause: cfg.switch.pause,
            },
            nic_cfg: cfg.nic.clone(),
            voq_cap,
            rec,
            stats: Stats::default(),
            events: 0,
            flows: FlowTracker::default(),
            gens_done,
            run_to_completion: cfg.run_to_completion,
        })
    }

    pub fn now(&self) -> SimTime {
        self.now
    }

    pub fn events(&self) -> u64 {
        self.events
    }

    pub fn stats(&self) -> Stats {
        self.stats
    }

    /// Run until the end of the scenario (or an interrupt).
    pub fn run(&mut self, ctl: &RunControl) -> Result<()> {
        self.run_until(self.end, ctl)
    }

    /// Process every event before `until` (at most the end of the run); the simulator may be
    /// advanced further by another call.
    pub fn run_until(&mut self, until: SimTime, ctl: &RunControl) -> Result<()> {
        let until = until.min(self.end);
        if self.now == SimTime::ZERO && self.events == 0 {
            for n in 0..self.nics.len() as u32 {
                self.nic_service(n);
            }
        }
        while let Some(t) = self.queue.peek_time() {
            if t >= until {
                break;
            }
            let (t, ev) = self.queue.pop().expect("peeked");
            self.now = t;
            self.events += 1;
            match ev {
                Event::TxDone { port } => self.on_tx_done(port),
                Event::Arrive { port, frame } => self.on_arrive(port, frame),
                Event::NicWake { nic } => self.on_nic_wake(nic),
                Event::PortWake { port } => {
                    if self.ports[port as usize].wake_at == t {
                        self.ports[port as usize].wake_at = SimTime::NEVER;
                        self.try_start(port);
                    }
                }
                Event::Hotspot { index, on } => {
                    let h = self.hotspots[index as usize];
                    self.set_service_rate(h.port, if on { h.rate } else { 1.0 });
                    if self.rec.hot_dynamic {
                        let q = self.ports[h.port as usize].q_bytes;
                        self.rec.move_hot_port(t, h.port, on, q);
                    }
                }
                Event::CmTimer { nic, flow, token } => self.on_cm_timer(nic, flow, token),
                Event::Feedback { nic, frame } => self.nic_receive(nic, frame),
            }
            if self.run_to_completion && self.all_done() {
                self.end = t;
                break;
            }
            if self.events & 0x3FFF == 0 {
                ctl.progress_ps.store(t.0, Ordering::Relaxed);
                if ctl.interrupt.load(Ordering::Relaxed) {
                    return Err(Error::Interrupted);
                }
            }
        }
        self.now = until.min(self.end);
        ctl.progress_ps.store(self.now.0, Ordering::Relaxed);
        Ok(())
    }

    /// Every source has stopped and no data frame is left anywhere (run to completion).
    fn all_done(&self) -> bool {
        let s = &self.stats;
        s.generated == s.delivered + s.dropped + s.source_dropped
            && self.gens_done == self.gens.len()
            && self.nics.iter().all(|n| !n.is_blocked())
    }

    /// Data frames inside the network, counted where they are (VOQs, OBs, links, switches, sinks).
    pub fn in_flight_counted(&self) -> u64 {
        let voqs: u64 = self
            .nics
            .iter()
            .flat_map(|n| n.voqs.iter())
            .map(|v| v.frames.len() as u64)
            .sum();
        voqs + self.pool.live_data() + self.stats.sink_pending
    }

    /// The forward delay of a `bytes`-long frame from `src` to `dst` without queueing: every
    /// link's serialisation and propagation plus every switch's processing (E2CM's known D0).
    pub fn base_delay(&self, src: u32, dst: u32, bytes: u64) -> SimTime {
        let mut port = self.topo.node_port[src as usize];
        let mut total = SimTime::ZERO;
        loop {
            let spec = &self.topo.ports[port as usize];
            total += tx_time(bytes, spec.rate) + spec.delay;
            match spec.peer {
                Device::Nic(_) => return total,
                Device::Switch(s) => {
                    total += self.sw_params.processing_delay;
                    let local = self.topo.route(s, dst).expect("routes are complete");
                    port = self.topo.switch_ports[s as usize][local as usize];
                }
            }
        }
    }

    /// The service-rate fraction of port `p` at each instant, as (start, end, rate) pieces over the
    /// window (the hot port's capacity for utilisation and underrun).
    /// `p = None`: the moving hot port (D16) — capacity only while some hotspot is active.
    fn capacity_pieces(&self, p: Option<u32>, window: &Window) -> Vec<(u64, u64, f64)> {
        let mine = |h: &&Hotspot| p.is_none_or(|p| h.port == p);
        let idle_rate = if p.is_some() { 1.0 } else { 0.0 };
        let mut cuts = vec![window.t0, window.t1];
        for h in self.hotspots.iter().filter(mine) {
            cuts.extend([
                h.start.0.clamp(window.t0, window.t1),
                h.end.0.clamp(window.t0, window.t1),
            ]);
        }
        cuts.sort_unstable();
        cuts.dedup();
        cuts.windows(2)
            .map(|w| {
                let mid = SimTime(w[0]);
                // the last window that covers the piece wins, as the events apply in that order
                let rate = self
                    .hotspots
                    .iter()
                    .filter(mine)
                    .rfind(|h| h.start <= mid && mid < h.end)
                    .map_or(idle_rate, |h| h.rate);
                (w[0], w[1], rate)
            })
            .collect()
    }
}

/// Parse, build and run a core config (JSON) to the end.
pub fn run_json(text: &str, ctl: &RunControl) -> Result<RunResult> {
    let cfg = CoreConfig::from_json(text)?;
    let mut sim = Simulator::new(&cfg)?;
    sim.run(ctl)?;
    Ok(sim.finish())
}
