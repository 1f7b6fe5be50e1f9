//! The run's recorder: every counter and level the summary and the series are made of, updated by
//! the network elements as things happen.

use rustc_hash::FxHashMap;

use super::{Bins, Counter, LevelTracker, PauseRecord, SampledLevel, Window};
use crate::frame::NO_RECORD;
use crate::time::SimTime;

/// Kinds of CM control frames, as `cm.by_kind` names them (index = [`cm_kind`]).
pub const CM_KINDS: [&str; 7] = [
    "negative",
    "positive",
    "stop",
    "reflection",
    "probe",
    "probe_reply",
    "cnp",
];

/// Where a data frame was dropped, as `drops.by_place` names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DropPlace {
    /// Its input partition was full (partitioned memory).
    Partition,
    /// The shared memory was full.
    Pool,
    /// Its egress buffer was full (egress-buffered switch).
    Egress,
    /// Its output queue was at `switch.oq_limit`.
    OqLimit,
}

impl DropPlace {
    pub const ALL: [DropPlace; 4] = [
        DropPlace::Partition,
        DropPlace::Pool,
        DropPlace::Egress,
        DropPlace::OqLimit,
    ];
    pub fn name(self) -> &'static str {
        match self {
            DropPlace::Partition => "partition",
            DropPlace::Pool => "pool",
            DropPlace::Egress => "egress",
            DropPlace::OqLimit => "oq_limit",
        }
    }
}

/// Recorder slots by flow (src, dst): a dense src × dst table for networks of up to
/// `DENSE_FLOW_INDEX` nodes (256 KB at most), a hash map above. Looked up whenever a VOQ is
/// created, which for a destination whose VOQ empties after every frame is once per frame: no
/// hashing on that path in the networks where frames are cheapest (issue 14).
#[derive(Debug)]
enum FlowIndex {
    Dense { nodes: usize, slots: Vec<u32> },
    Sparse(FxHashMap<(u32, u32), u32>),
}

const DENSE_FLOW_INDEX: usize = 256;

impl FlowIndex {
    fn new(n_nodes: usize, flows: &[(u32, u32, String)]) -> Self {
        if n_nodes <= DENSE_FLOW_INDEX {
            let mut slots = vec![NO_RECORD; n_nodes * n_nodes];
            // a (src, dst) named twice keeps its last slot, as the map below does
            for (i, f) in flows.iter().enumerate() {
                slots[f.0 as usize * n_nodes + f.1 as usize] = i as u32;
            }
            FlowIndex::Dense {
                nodes: n_nodes,
                slots,
            }
        } else {
            FlowIndex::Sparse(
                flows
                    .iter()
                    .enumerate()
                    .map(|(i, f)| ((f.0, f.1), i as u32))
                    .collect(),
            )
        }
    }

    #[inline]
    fn get(&self, src: u32, dst: u32) -> Option<u32> {
        match self {
            FlowIndex::Dense { nodes, slots } => slots
                .get(src as usize * nodes + dst as usize)
                .copied()
                .filter(|&i| i != NO_RECORD),
            FlowIndex::Sparse(map) => map.get(&(src, dst)).copied(),
        }
    }
}

#[derive(Debug)]
pub struct Recorder {
    pub bins: Bins,
    pub window: Window,
    pub aggregate: Counter,
    pub nodes: Vec<Counter>,
    pub flows: Vec<Counter>,
    pub flow_names: Vec<String>,
    flow_index: FlowIndex,
    pub ports: Vec<Counter>,
    pub port_names: Vec<String>,
    pub queues: Vec<LevelTracker>,
    pub rates: Vec<SampledLevel>,
    /// The priority class of each flow slot's rate series ([`Recorder::set_rate_classes`]; all
    /// 0 if never set).
    rate_classes: Vec<u8>,
    pub drop_frames: Counter,
    pub drop_bytes: Counter,
    pub control_drops: u64,
    pub source_drop_frames: Counter,
    pub source_drop_bytes: Counter,
    pub cm_frames: Counter,
    pub cm_bytes: Counter,
    /// CM frames and bytes in the window by kind ([`CM_KINDS`]) and by origin: switch egress
    /// port `p` at index `p`, node `n` at `ports + n` (grown as needed).
    pub cm_by_kind: [(u64, u64); 7],
    pub cm_by_origin: Vec<(u64, u64)>,
    /// Data frames and bytes dropped in the network, whole run, by [`DropPlace`].
    pub drops_by_place: [(u64, u64); 4],
    /// Data bytes each source node put on its link.
    pub sent: Vec<Counter>,
    /// The named windows (`windows.*`), on bin edges.
    pub named: Vec<(String, Window)>,
    /// Paused transmitter-picoseconds per bin.
    pub paused_bins: Vec<u64>,
    pub pause_frames: u64,
    pub blocked_since: Vec<Option<SimTime>>,
    pub blocked_window_ps: u64,
    /// The hot port (global index) when it is a fixed port.
    pub hot_port: Option<u32>,
    /// D16: the hot port moves with the hotspot; `current_hot` is the port hot now, if any, and
    /// `hot_queue`/`hot_tput` follow it.
    pub hot_dynamic: bool,
    pub current_hot: Option<u32>,
    pub hot_queue: LevelTracker,
    pub hot_tput: Counter,
    pub hot_busy_window: u64,
    /// Sum of delivery latencies (ps) of frames delivered in the window.
    pub latency_window_ps: u128,
}

impl Recorder {
    pub fn new(bins: Bins, window: Window, n_nodes: usize, flows: &[(u32, u32, String)]) -> Self {
        Recorder {
            aggregate: Counter::new(),
            nodes: (0..n_nodes).map(|_| Counter::new()).collect(),
            flows: flows.iter().map(|_| Counter::new()).collect(),
            flow_names: flows.iter().map(|f| f.2.clone()).collect(),
            rates: flows
                .iter()
                .map(|f| SampledLevel::new(f.2.clone()))
                .collect(),
            rate_classes: Vec::new(),
            flow_index: FlowIndex::new(n_nodes, flows),
            ports: Vec::new(),
            port_names: Vec::new(),
            queues: Vec::new(),
            drop_frames: Counter::new(),
            drop_bytes: Counter::new(),
            control_drops: 0,
            source_drop_frames: Counter::new(),
            source_drop_bytes: Counter::new(),
            cm_frames: Counter::new(),
            cm_bytes: Counter::new(),
            cm_by_kind: [(0, 0); 7],
            cm_by_origin: Vec::new(),
            drops_by_place: [(0, 0); 4],
            sent: (0..n_nodes).map(|_| Counter::new()).collect(),
            named: Vec::new(),
            paused_bins: Vec::new(),
            pause_frames: 0,
            blocked_since: vec![None; n_nodes],
            blocked_window_ps: 0,
            hot_port: None,
            hot_dynamic: false,
            current_hot: None,
            hot_queue: LevelTracker::new("hotspot".into()),
            hot_tput: Counter::new(),
            hot_busy_window: 0,
            latency_window_ps: 0,
            bins,
            window,
        }
    }

    /// The recorder slot of flow (src, dst), if its throughput is recorded (looked up once per
    /// flow, when its VOQ is created; frames carry it).
    pub fn flow_slot(&self, src: u32, dst: u32) -> Option<u32> {
        self.flow_index.get(src, dst)
    }

    /// A data frame of recorder slot `flow_rec`, generated at `gen`, was delivered to `dst` at `t`.
    #[inline(always)]
    pub fn on_delivered(&mut self, t: SimTime, flow_rec: u32, dst: u32, bytes: u64, gen: SimTime) {
        let (b, w) = (self.bins.index(t), self.window.contains(t));
        self.aggregate.add_at(b, w, bytes);
        self.nodes[dst as usize].add_at(b, w, bytes);
        if flow_rec != NO_RECORD {
            self.flows[flow_rec as usize].add_at(b, w, bytes);
        }
        if w {
            self.latency_window_ps += (t.0 - gen.0) as u128;
        }
    }

    pub fn on_drop(&mut self, t: SimTime, bytes: u64, control: bool, place: DropPlace) {
        if control {
            self.control_drops += 1;
            return;
        }
        self.drop_frames.add(&self.bins, &self.window, t, 1);
        self.drop_bytes.add(&self.bins, &self.window, t, bytes);
        let by = &mut self.drops_by_place[place as usize];
        by.0 += 1;
        by.1 += bytes;
    }

    /// A data frame of `bytes` left source `node`'s adapter at `t` (its last bit on the link).
    #[inline]
    pub fn on_sent(&mut self, t: SimTime, node: u32, bytes: u64) {
        self.sent[node as usize].add(&self.bins, &self.window, t, bytes);
    }

    pub fn on_source_drop(&mut self, t: SimTime, bytes: u64) {
        self.source_drop_frames.add(&self.bins, &self.window, t, 1);
        self.source_drop_bytes
            .add(&self.bins, &self.window, t, bytes);
    }

    /// A CM control frame of kind `kind` ([`cm_kind`]) was generated at `origin` (the
    /// [`Recorder::cm_by_origin`] index), each counted once (contract "cm").
    pub fn on_cm(&mut self, t: SimTime, bytes: u64, kind: usize, origin: usize) {
        self.cm_frames.add(&self.bins, &self.window, t, 1);
        self.cm_bytes.add(&self.bins, &self.window, t, bytes);
        if self.window.contains(t) {
            let k = &mut self.cm_by_kind[kind];
            k.0 += 1;
            k.1 += bytes;
            if origin >= self.cm_by_origin.len() {
                self.cm_by_origin.resize(origin + 1, (0, 0));
            }
            let o = &mut self.cm_by_origin[origin];
            o.0 += 1;
            o.1 += bytes;
        }
    }

    /// A port's queue is now `q` bytes: recorded if the port has a queue recorder (`slot`).
    #[inline(always)]
    pub fn on_queue(&mut self, slot: Option<u32>, now: SimTime, q: u64) {
        if let Some(r) = slot {
            self.queues[r as usize].set(&self.bins, &self.window, now, q);
        }
    }

    /// The rate limiter of flow (src, dst) is now `gbps` (NaN: no limiter).
    pub fn on_rate(&mut self, t: SimTime, src: u32, dst: u32, class: u8, gbps: f64) {
        if let Some(i) = self.flow_index.get(src, dst) {
            if self.rate_classes.get(i as usize).copied().unwrap_or(0) == class {
                self.rates[i as usize].set(&self.bins, t, gbps);
            }
        }
    }

    /// The priority class of each flow slot's rate series: the series follows that class's
    /// limiter of its (source, destination) pair (with several PFC classes a pair may have one
    /// per class; `sim/build.rs`).
    pub fn set_rate_classes(&mut self, classes: Vec<u8>) {
        self.rate_classes = classes;
    }

    /// The moving hot port (D16) is now `port` (None: no hotspot is on), whose queue is `q`.
    pub fn move_hot_port(&mut self, t: SimTime, port: Option<u32>, q: u64) {
        self.current_hot = port;
        self.hot_queue.set(&self.bins, &self.window, t, q);
    }

    /// A data frame served over [start, t) left the moving hot port, whose queue is now `q`.
    pub fn on_hot_departure(&mut self, t: SimTime, start: SimTime, bytes: u64, q: u64) {
        self.hot_tput.add(&self.bins, &self.window, t, bytes);
        self.hot_busy_window += self.window.overlap(start, t);
        self.hot_queue.set(&self.bins, &self.window, t, q);
    }

    /// Give every series exactly `n` bins, the bins of the run's actual end (a run to completion
    /// may end before its cap). Counters were allocated as time reached them and are padded;
    /// level trackers close their remaining bins in `finish`.
    pub fn fit(&mut self, n: usize) {
        self.bins.truncate(n);
        for c in [
            &mut self.aggregate,
            &mut self.drop_frames,
            &mut self.drop_bytes,
            &mut self.source_drop_frames,
        ]
        .into_iter()
        .chain([
            &mut self.source_drop_bytes,
            &mut self.cm_frames,
            &mut self.cm_bytes,
            &mut self.hot_tput,
        ])
        .chain(self.nodes.iter_mut())
        .chain(self.sent.iter_mut())
        .chain(self.flows.iter_mut())
        .chain(self.ports.iter_mut())
        {
            c.fit(n);
        }
        for q in self
            .queues
            .iter_mut()
            .chain(std::iter::once(&mut self.hot_queue))
        {
            q.end_values.truncate(n);
            q.max_values.truncate(n);
            q.bin_integrals.truncate(n);
            q.bin_integrals_sq.truncate(n);
        }
        for r in self.rates.iter_mut() {
            r.end_values.truncate(n);
        }
        self.paused_bins.resize(n, 0);
    }

    /// A transmitter was paused over [from, to).
    pub fn add_paused(&mut self, record: &mut PauseRecord, from: SimTime, to: SimTime) {
        let w = self.window.overlap(from, to);
        if w > 0 || (self.window.contains(from)) {
            record.paused_in_window = true;
        }
        record.window_ps += w;
        for (i, (_, named)) in self.named.iter().enumerate() {
            let w = named.overlap(from, to);
            if w > 0 || named.contains(from) {
                record.named_paused |= 1 << i;
            }
            record.named_ps[i] += w;
        }
        if to <= from {
            return;
        }
        let mut t = from.0;
        while t < to.0 {
            let b = self.bins.index(SimTime(t));
            let bin_end = ((b as u64 + 1) * self.bins.width).min(to.0);
            let bin_end = if b + 1 == self.bins.count() {
                to.0
            } else {
                bin_end
            };
            *super::slot(&mut self.paused_bins, b) += bin_end - t;
            t = bin_end;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The dense table (up to 256 nodes) and the map above it give the same slots: unknown flows
    /// and out-of-range nodes have none, a flow named twice keeps its last slot.
    #[test]
    fn flow_slots_are_the_same_dense_and_hashed() {
        let flows: Vec<(u32, u32, String)> = [(0, 3), (2, 1), (3, 0), (2, 1)]
            .iter()
            .map(|&(s, d)| (s, d, format!("{s}->{d}")))
            .collect();
        let dense = FlowIndex::new(4, &flows);
        let sparse = FlowIndex::new(DENSE_FLOW_INDEX + 1, &flows);
        assert!(matches!(dense, FlowIndex::Dense { .. }));
        assert!(matches!(sparse, FlowIndex::Sparse(_)));
        for index in [&dense, &sparse] {
            assert_eq!(index.get(0, 3), Some(0));
            assert_eq!(index.get(3, 0), Some(2));
            assert_eq!(index.get(2, 1), Some(3));
            assert_eq!(index.get(1, 2), None);
            assert_eq!(index.get(0, 0), None);
        }
        assert_eq!(dense.get(4, 0), None);
    }

    /// Issue 13: a run's cap must not be allocated up front (a 10^7 s cap in 1 ps bins is 10^19
    /// bins); series grow with the time simulated and take the run's actual length at the end.
    #[test]
    fn series_grow_with_simulated_time_not_the_cap() {
        let bins = Bins::new(1, 10_000_000 * crate::time::PS_PER_S);
        let window = Window {
            t0: 0,
            t1: bins.end,
        };
        let mut rec = Recorder::new(bins, window, 4, &[(0, 1, "0->1".into())]);
        rec.on_delivered(SimTime(3), 0, 1, 1500, SimTime(0));
        rec.on_drop(SimTime(5), 64, false, DropPlace::Pool);
        rec.hot_queue.set(&rec.bins, &rec.window, SimTime(4), 3000);
        let mut pause = PauseRecord::default();
        rec.add_paused(&mut pause, SimTime(2), SimTime(4));
        assert_eq!(rec.aggregate.bins, vec![0, 0, 0, 1500]);
        assert_eq!(rec.drop_frames.bins.len(), 6);
        assert_eq!(rec.paused_bins, vec![0, 0, 1, 1]);
        assert_eq!(
            rec.nodes[0].bins.len(),
            0,
            "nothing delivered to node 0: nothing allocated"
        );
        // the run ended at t = 8: every series gets exactly 8 bins
        let end = Bins::new(1, 8);
        rec.fit(end.n);
        let (mean, _, max) = rec
            .hot_queue
            .finish(&end, &Window { t0: 0, t1: 8 }, SimTime(8));
        assert_eq!((mean, max), (3000.0 * 4.0 / 8.0, 3000.0));
        for c in [
            &rec.aggregate,
            &rec.nodes[0],
            &rec.drop_frames,
            &rec.cm_bytes,
        ] {
            assert_eq!(c.bins.len(), 8);
        }
        assert_eq!(rec.paused_bins.len(), 8);
        assert_eq!(
            rec.hot_queue.end_values,
            vec![0.0, 0.0, 0.0, 0.0, 3000.0, 3000.0, 3000.0, 3000.0]
        );
        assert_eq!(rec.hot_queue.max_values.len(), 8);
    }

    /// `paused_fraction` averages over the transmitters paused in the window: a pause that
    /// reaches into it from before counts, one over before it does not, nor does one that
    /// starts at its end; a pause of no length at an instant inside it counts. Drops are
    /// counted by place in frames and bytes.
    #[test]
    fn a_transmitter_counts_as_paused_in_the_window_only_if_it_was() {
        let bins = Bins::new(10, 40);
        let mut rec = Recorder::new(bins, Window { t0: 10, t1: 20 }, 2, &[]);
        let paused = |rec: &mut Recorder, from: u64, to: u64| {
            let mut p = PauseRecord::default();
            rec.add_paused(&mut p, SimTime(from), SimTime(to));
            (p.paused_in_window, p.window_ps)
        };
        assert_eq!(paused(&mut rec, 5, 15), (true, 5));
        assert_eq!(paused(&mut rec, 0, 5), (false, 0));
        assert_eq!(paused(&mut rec, 0, 10), (false, 0));
        assert_eq!(paused(&mut rec, 20, 30), (false, 0));
        assert_eq!(paused(&mut rec, 15, 15), (true, 0));
        rec.on_drop(SimTime(12), 1500, false, DropPlace::Partition);
        rec.on_drop(SimTime(13), 64, false, DropPlace::Partition);
        rec.on_drop(SimTime(14), 64, true, DropPlace::Partition);
        assert_eq!(rec.drops_by_place[DropPlace::Partition as usize], (2, 1564));
        assert_eq!(rec.control_drops, 1);
    }
}
