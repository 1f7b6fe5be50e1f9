//! The simulator: one value that owns the whole network in flat arrays, the event queue and the
//! recorder, built from a [`CoreConfig`]. Two simulators never share state, so a process may run
//! any number of them (htsim's global event list is the counter-example).

mod build;
mod deadlock;
mod nics;
mod ports;
mod prefetch;
mod summary;
mod switches;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crate::cm::{AnyCp, AnyNp, AnyRp, OnDequeue, Scheme};
use crate::engine::{Event, EventQueue, SimRng};
use crate::error::{Error, Result};
use crate::frame::FramePool;
use crate::metrics::summary::Summary;
use crate::metrics::{FlowTracker, Recorder, Series, Window};
use crate::net::switch::SwitchParams;
use crate::net::voq_store::VoqStore;
use crate::net::{Nic, Port, Switch};
use crate::scenario::{CoreConfig, NicConfig};
use crate::time::{tx_time, SimTime};
use crate::topology::{Device, Topology};
use crate::traffic::Generator;
use prefetch::Prefetch;

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
    /// The generation times of the frames waiting in VOQs, for every NIC.
    pub(crate) voq_store: VoqStore,
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
    /// Which frames the CPs act on as they leave their queue (`Nothing` without CPs).
    pub(crate) cps_dequeue: OnDequeue,
    /// Per port, the queue at or below which its CP does nothing on a dequeue
    /// (`CongestionPoint::dequeue_floor`; `u64::MAX` without a CP), when `cps_dequeue` is set.
    pub(crate) cp_dequeue_floor: Vec<u64>,
    /// The scheme acts on frames reaching a sink (reflections, probes): arrivals need events.
    pub(crate) sink_events: bool,
    /// One notification point per NIC (indexed by NIC), when `sink_events`.
    pub(crate) nps: Vec<AnyNp>,
    /// Reaction points whose limiter was released but whose state lives on
    /// ([`crate::cm::ReactionPoint::outlives_release`]), by (NIC, destination): the flow's next
    /// limiter takes its state from here. Kept here, not in the NIC, whose lines the event path
    /// reads.
    pub(crate) dormant_rps: BTreeMap<(u32, u32), AnyRp>,
    /// Each notification point's own random stream (algorithms.md §9): QCN-3pt's reflection
    /// draws do not shift the draws of the NIC's reaction points.
    pub(crate) np_rngs: Vec<SimRng>,
    /// A notification point selects the data frames it acts on as they leave for its NIC, and
    /// the others are delivered without an arrival event (`NotificationPoint::selects`); off
    /// (tests only), it selects them at their arrival, each of which is an event.
    pub(crate) select_at_departure: bool,
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
    /// When the last source stops generating (a run to completion ends no earlier; the end of
    /// the run when there is no source, or one that never stops).
    sources_stop: SimTime,
    /// The latest delivery instant so far: a frame is counted delivered when it leaves the last
    /// port, and reaches its sink a link delay (plus `nic.processing_delay`) later.
    pub(crate) last_delivery: SimTime,
    /// PAUSE deadlock detection (`net::deadlock`): the threshold, whether to stop, and the first
    /// deadlock found.
    pub(crate) deadlock_threshold: SimTime,
    pub(crate) stop_on_deadlock: bool,
    pub(crate) deadlock: Option<crate::metrics::summary::Deadlock>,
    /// Transmitters paused now (for any class): no deadlock can exist while this is zero, so the
    /// periodic check then costs nothing (at 2,048 hosts a scan reads every port).
    pub(crate) paused_transmitters: u32,
    /// What the event loop asks for ahead of its events (`sim/prefetch.rs`).
    prefetch: Prefetch,
}

impl Simulator {
    /// Build the simulator of a core config (docs/core-config.md): the network, the traffic,
    /// the scheme's congestion points and the recorder (`sim/build.rs`), and the hotspot events.
    pub fn new(cfg: &CoreConfig) -> Result<Self> {
        cfg.check()?;
        let topo = Topology::build(&cfg.topology)?;
        build::check_network(&topo)?;
        let mut ports: Vec<Port> = topo.ports.iter().cloned().map(Port::new).collect();

        let switches = build::switches(cfg, &topo)?;
        if cfg.switch.processing_delay_ps > 0 {
            for sw in &switches {
                sw.ports
                    .iter()
                    .for_each(|&p| ports[p as usize].hold_until_ready());
            }
        }
        let mut nics = build::nics(cfg, &topo);
        if cfg.switch.pfc_classes > 1 {
            ports
                .iter_mut()
                .for_each(|p| p.set_classes(cfg.switch.pfc_classes));
            nics.iter_mut()
                .for_each(|n| n.set_classes(cfg.switch.pfc_classes));
        }
        let gens = build::generators(cfg, &topo, &mut nics)?;
        let hotspots = build::hotspots(cfg, &topo)?;
        let scheme = Scheme::from_config(&cfg.cm)?;
        let (cps, cp_rngs) = build::congestion_points(cfg, &scheme, &ports, &topo)?;
        let (nps, np_rngs) = build::notification_points(cfg, &scheme, &nics);
        let rec = build::recorder(cfg, &topo, !hotspots.is_empty(), &mut ports, &gens)?;
        let voq_cap = build::voq_cap(cfg, topo.nodes.len());
        let gens_done = gens.iter().filter(|g| g.next == SimTime::NEVER).count();
        let sources_stop = build::sources_stop(cfg, &gens);
        let queue = build::first_events(cfg, &scheme, &cps, &hotspots, &ports, sources_stop);
        let hot_nodes = build::hot_nodes(cfg, &topo)?;
        Ok(Simulator {
            now: SimTime::ZERO,
            end: SimTime(cfg.duration_ps),
            queue,
            pool: FramePool::new(),
            voq_store: VoqStore::on_grid(gens.iter().map(|g| (g.slot, g.origin))),
            topo,
            prefetch: Prefetch::plan(&ports, &nics, &gens),
            ports,
            switches,
            nics,
            gens,
            hotspots,
            cps_active: scheme.has_congestion_points(),
            cps_dequeue: scheme.cp_on_dequeue(),
            cp_dequeue_floor: cps
                .iter()
                .map(|cp| cp.as_ref().map_or(u64::MAX, AnyCp::dequeue_floor))
                .collect(),
            sink_events: scheme.needs_sink_events(),
            cm_frame_bytes: scheme.frame_bytes(),
            scheme,
            cps,
            cp_rngs,
            nps,
            dormant_rps: BTreeMap::new(),
            np_rngs,
            select_at_departure: true,
            frame_size: cfg.traffic.frame_size,
            sw_params: SwitchParams::new(&cfg.switch),
            nic_cfg: cfg.nic.clone(),
            voq_cap,
            rec,
            stats: Stats::default(),
            events: 0,
            flows: FlowTracker::new(hot_nodes),
            gens_done,
            run_to_completion: cfg.run_to_completion,
            sources_stop,
            last_delivery: SimTime::ZERO,
            deadlock_threshold: SimTime(cfg.metrics.deadlock_threshold_ps),
            stop_on_deadlock: cfg.metrics.stop_on_deadlock,
            deadlock: None,
            paused_transmitters: 0,
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

    /// The unit (ps) in which the VOQ store keeps waiting frames' times, up to 45 to a cache line:
    /// the common unit of the generators' slot grids; `None` where it reaches too short and the
    /// store keeps whole times, 11 to a line (`net::voq_store`).
    pub fn voq_time_unit(&self) -> Option<u64> {
        self.voq_store.unit()
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
        while let Some((t, ev)) = self.queue.pop_before(until) {
            self.now = t;
            self.events += 1;
            // ask for what the events a few places on in this instant read (misses at 2,048
            // hosts), so that their lines arrive while the events before them run
            self.prefetch_ahead();
            match ev {
                Event::TxDone { port, .. } => self.on_tx_done(port),
                Event::ArriveAtSwitch { switch, frame } => self.on_arrive_at_switch(switch, frame),
                Event::ArriveAtNic { nic, frame } => self.on_arrive_at_nic(nic, frame),
                Event::NicWake { nic } => self.on_nic_wake(nic),
                Event::PortWake { port } => {
                    if self.ports[port as usize].wake_at == t {
                        self.ports[port as usize].wake_at = SimTime::NEVER;
                        self.try_start(port);
                    }
                }
                Event::Hotspot { index, on } => self.on_hotspot(index, on),
                Event::CmTimer { nic, flow, token } => self.on_cm_timer(nic, flow, token),
                Event::SinkTimer { nic, flow } => self.on_sink_timer(nic, flow),
                Event::CpTick { port } => self.on_cp_tick(port),
                Event::Feedback { nic, frame } => self.nic_receive(nic, frame),
                Event::SourcesStopped => self.events -= 1, // an observer, as DeadlockCheck
                Event::DeadlockCheck => {
                    self.events -= 1; // an observer, not an event of the model
                    if self.on_deadlock_check() && self.stop_on_deadlock {
                        self.end = t;
                        break;
                    }
                }
            }
            if self.run_to_completion && t >= self.sources_stop && self.all_done() {
                // the last frame is delivered when its last bit has crossed the sink's link (and
                // the NIC's processing), after the event that accounted for it: the run covers
                // [0, end), so it ends just after that delivery
                self.end = t.max(SimTime(self.last_delivery.0 + 1));
                break;
            }
            if self.events & 0x3FFF == 0 {
                ctl.progress_ps.store(t.0, Ordering::Relaxed);
                if ctl.interrupt.load(Ordering::Relaxed) {
                    return Err(Error::Interrupted);
                }
                if self.sw_params.pause
                    && self.deadlock.is_none()
                    && self.detect_deadlock()
                    && self.stop_on_deadlock
                {
                    self.end = t;
                    break;
                }
            }
        }
        self.now = until.min(self.end);
        if self.now == self.end {
            // the run is over: every frame generated before its end counts (contract,
            // conservation), also those no service of their NIC has pulled yet
            self.pull_before_end();
        }
        ctl.progress_ps.store(self.now.0, Ordering::Relaxed);
        Ok(())
    }

    /// Every source has stopped and no data frame is left anywhere (run to completion).
    fn all_done(&self) -> bool {
        debug_assert!(
            self.gens_done <= self.gens.len(),
            "a generator is counted done once"
        );
        let s = &self.stats;
        s.generated == s.delivered + s.dropped + s.source_dropped
            && self.gens_done == self.gens.len()
            && self.nics.iter().all(|n| !n.is_blocked())
    }

    /// Whether notification points select the data frames they act on as the frames leave for
    /// their NIC (the default), or at their arrival, each arrival an event. Either way the
    /// results are the same (a test compares); only the number of events differs.
    pub fn set_select_at_departure(&mut self, on: bool) {
        self.select_at_departure = on;
    }

    /// Bytes queued at the transmitter named `port` (a switch egress: its output queue; a node's
    /// port: the NIC's output buffer), or `None` for an unknown name. A diagnostic for tests.
    pub fn queue_bytes(&self, port: &str) -> Option<u64> {
        let p = self.topo.port_by_name(port)?;
        Some(self.ports[p as usize].q_bytes)
    }

    /// Data frames inside the network, counted where they are (VOQs, OBs, links, switches, sinks).
    pub fn in_flight_counted(&self) -> u64 {
        let voqs: u64 = self
            .nics
            .iter()
            .flat_map(|n| n.voqs.iter())
            .map(|v| v.len() as u64)
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

    /// Hotspot window `index` starts or ends now: its port serves at the rate of the last listed
    /// window that covers the instant, or at line rate (D16; the rule of [`Self::capacity_pieces`],
    /// so that windows that overlap or nest are served as they are measured), and the moving hot
    /// port is the port of the last listed window covering the instant, if any.
    fn on_hotspot(&mut self, index: u32, on: bool) {
        // the rule needs no `on`; the event keeps it (dropping it re-laid the event loop out at a
        // cost of 3-4 % of a scheme's run: docs/performance.md), and it is checked here
        let (now, h) = (self.now, self.hotspots[index as usize]);
        debug_assert_eq!(now, if on { h.start } else { h.end });
        let port = h.port;
        let covering = |h: &&Hotspot| h.start <= now && now < h.end;
        let rate = self
            .hotspots
            .iter()
            .filter(|h| h.port == port)
            .rfind(covering)
            .map_or(1.0, |h| h.rate);
        self.set_service_rate(port, rate);
        if self.rec.hot_dynamic {
            let hot = self.hotspots.iter().rfind(covering).map(|h| h.port);
            let q = hot.map_or(0, |p| self.ports[p as usize].q_bytes);
            self.rec.move_hot_port(now, hot, q);
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
/// The `cm.by_kind` index ([`crate::metrics::recorder::CM_KINDS`]) of a control frame carrying
/// message `msg` with feedback `fb`: with `signed` feedback (BCN/ECM) negative Fb is congestion
/// and positive Fb an increase (§1.2); otherwise (QCN's QntzFb, E-FECN's rate) every feedback
/// message is a congestion notification, "negative" whatever the sign of its field.
pub(crate) fn cm_kind(msg: u8, fb: f64, signed: bool) -> usize {
    use crate::wire::msg;
    match msg {
        msg::FEEDBACK if signed && fb > 0.0 => 1,
        msg::FEEDBACK => 0,
        msg::STOP => 2,
        msg::REFLECTION => 3,
        msg::PROBE => 4,
        msg::PROBE_REPLY => 5,
        _ => 6,
    }
}

pub fn run_json(text: &str, ctl: &RunControl) -> Result<RunResult> {
    let cfg = CoreConfig::from_json(text)?;
    let mut sim = Simulator::new(&cfg)?;
    sim.run(ctl)?;
    Ok(sim.finish())
}

#[cfg(test)]
mod tests {
    use super::cm_kind;
    use crate::metrics::recorder::CM_KINDS;
    use crate::wire::msg;

    #[test]
    fn control_frames_are_counted_by_kind() {
        // signed feedback (BCN/ECM): negative is congestion, positive an increase, 0 neither
        assert_eq!(cm_kind(msg::FEEDBACK, -3.0, true), 0);
        assert_eq!(cm_kind(msg::FEEDBACK, 0.0, true), 0);
        assert_eq!(cm_kind(msg::FEEDBACK, 2.0, true), 1);
        // QCN's QntzFb and E-FECN's rate: every feedback message is a congestion notification
        assert_eq!(cm_kind(msg::FEEDBACK, 2.0, false), 0);
        let kinds = [
            msg::STOP,
            msg::REFLECTION,
            msg::PROBE,
            msg::PROBE_REPLY,
            msg::CNP,
        ]
        .map(|m| CM_KINDS[cm_kind(m, 0.0, true)]);
        assert_eq!(kinds, ["stop", "reflection", "probe", "probe_reply", "cnp"]);
        assert_eq!(CM_KINDS[..2], ["negative", "positive"]);
    }
}
