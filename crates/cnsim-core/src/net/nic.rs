//! The adapter (NIC), algorithms.md §1.1, §1.4 and D15: generator → per-destination VOQs (ingress
//! limit) → rate-limiter gate → round-robin among eligible VOQs → output buffer (OB) → link; and
//! the sink that records delivery `nic.processing_delay` after the last bit arrives.
//!
//! A VOQ holds only the generation times of its frames (a held frame costs no event and no pool
//! slot); a pool frame is made when it moves to the OB. VOQs and limiters are created lazily, per
//! destination actually used. Generators are advanced lazily: arrivals up to `now` are pulled in
//! time order whenever the NIC is serviced, which is exact because VOQ state only shrinks at
//! service instants. A wake-up is scheduled only when the OB could take a frame.
//!
//! The NIC owns its VOQs, their index, the round-robin ring and the release heap of limited
//! VOQs (this file, with unit tests); the kernel's side — generators, ingress admission, the
//! transfer to the OB, the sink and the reaction points — is `sim/nics.rs`.
//!
//! With PFC and several priority classes a VOQ holds one destination *and class*: a flow is
//! (source, destination, class), as 802.1Qau's reaction points are per priority and a RoCE QP
//! sends in one, so a frame of a paused class never holds another class's frames to the same
//! destination (docs/decisions.md, PFC). Its index key is `dst + class·nodes` ([`Nic::key`]).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use rustc_hash::FxHashMap;

use crate::cm::{AnyRp, RateLimiter};
use crate::engine::SimRng;
use crate::frame::NO_FLOW;
use crate::time::{tx_time_f64, BitRate, SimTime};

use super::voq_store::{TimeFifo, VoqStore};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VoqState {
    /// Empty.
    Idle,
    /// In the round-robin ring.
    Ready,
    /// Non-empty but held by its rate limiter until `eligible_at`.
    Waiting,
}

/// A per-destination virtual output queue: one flow (source, destination) of this NIC, or with
/// several PFC classes one (source, destination, class). Laid out
/// (`repr(C)`, 64-byte aligned) so that a frame of an unlimited flow of no finite flow reads one
/// cache line of it — its times' FIFO, identity, counters and rate limiter — and the runs, the
/// eligibility instant and the reaction point's lines only when they are in use (`rp` is `Some`
/// only with a limiter). The frames' generation times are in the simulation's [`VoqStore`]. A
/// backlogged VOQ is revisited only after every other VOQ of its NIC's ring, so each line a
/// frame reads is a miss at 128 hosts (docs/performance.md, "One line per VOQ").
#[derive(Debug)]
#[repr(C, align(64))]
pub struct Voq {
    /// Generation time of every queued frame, in chunks of the [`VoqStore`] (private: only
    /// [`Voq::push_frame`] and [`Voq::pop_frame`] keep it in step with the plain head and the
    /// runs). Every frame has the simulation's one frame size, so the VOQ's bytes are its
    /// length times that size.
    frames: TimeFifo,
    /// When the flow's previous frame left the VOQ.
    pub t_last: SimTime,
    pub limiter: Option<RateLimiter>,
    /// The first `plain_head` queued frames belong to no flow and are of class 0: the common
    /// case (Bernoulli frames) costs no run at all ([`Voq::push_frame`]).
    plain_head: u32,
    pub dst: u32,
    /// The flow's throughput recorder slot (`NO_RECORD` if not recorded).
    pub flow_rec: u32,
    pub state: VoqState,
    /// The class of the frame that left last (a probe travels in its flow's class); with several
    /// PFC classes the VOQ's own class, which every frame of it has.
    pub class: u8,
    /// In use (a recycled slot waits in the NIC's free list).
    live: bool,
    /// `runs` is not empty (kept on this line, so that a plain frame never reads `runs`).
    has_runs: bool,
    /// When a `Waiting` VOQ's limiter lets it go (meaningless in the other states).
    pub eligible_at: SimTime,
    /// The flows and priority classes of the frames behind the plain head, as runs (flow,
    /// frames, class) in queue order (`NO_FLOW` runs for frames of no flow).
    runs: VecDeque<(u32, u32, u8)>,
    /// The reaction point; `Some` only while `limiter` is (they are created and released
    /// together), so an unlimited flow never reads it.
    pub rp: Option<AnyRp>,
    pub timer_token: u32,
}

impl Voq {
    fn new(dst: u32) -> Self {
        Voq {
            dst,
            frames: TimeFifo::new(),
            plain_head: 0,
            runs: VecDeque::new(),
            has_runs: false,
            class: 0,
            state: VoqState::Idle,
            t_last: SimTime::ZERO,
            eligible_at: SimTime::ZERO,
            limiter: None,
            rp: None,
            timer_token: 0,
            flow_rec: crate::frame::NO_RECORD,
            live: true,
        }
    }

    /// Start a new flow in a free slot (`dst` already set): a fresh VOQ's state, with the slot's
    /// queue buffers kept. A free slot holds no frame, no limiter and no reaction point
    /// (`maybe_recycle`), and its timer token was advanced when its limiter went
    /// ([`Voq::release_limiter`]), so no stale timer can fire on the new flow; the token's line
    /// is not touched here (a slot is reset for nearly every cold frame). The recorder slot is
    /// cleared: the caller looks up the new destination's.
    fn reset(&mut self, class: u8) {
        debug_assert!(self.frames.is_empty() && self.runs.is_empty() && !self.has_runs);
        debug_assert!(self.plain_head == 0);
        debug_assert!(self.limiter.is_none() && self.state == VoqState::Idle);
        debug_assert!(
            self.rp.is_none(),
            "a reaction point lives only with its limiter"
        );
        self.class = class;
        self.flow_rec = crate::frame::NO_RECORD;
        self.t_last = SimTime::ZERO;
        self.live = true;
    }

    /// Remove the rate limiter and the reaction point (release, D7) and advance the timer token,
    /// so that the flow's pending timers are stale.
    pub fn release_limiter(&mut self) -> Option<AnyRp> {
        self.limiter = None;
        self.timer_token = self.timer_token.wrapping_add(1);
        self.rp.take()
    }

    /// Queue a frame generated at `t`, of finite flow `flow` (or `NO_FLOW`) and priority `class`.
    /// While no run is queued, a frame of no flow in class 0 only extends the plain head: a
    /// VOQ that empties after each frame (most of them, below saturation) never touches `runs`.
    #[inline(always)]
    pub fn push_frame(&mut self, store: &mut VoqStore, t: SimTime, flow: u32, class: u8) {
        self.frames.push(store, t);
        if flow == NO_FLOW && class == 0 && !self.has_runs {
            self.plain_head += 1;
            return;
        }
        match self.runs.back_mut() {
            Some(run) if run.0 == flow && run.2 == class => run.1 += 1,
            _ => self.runs.push_back((flow, 1, class)),
        }
        self.has_runs = true;
    }

    /// Dequeue the head frame: its generation time, flow (`NO_FLOW` if none) and class.
    #[inline(always)]
    pub fn pop_frame(&mut self, store: &mut VoqStore) -> Option<(SimTime, u32, u8)> {
        let t = self.frames.pop(store)?;
        if self.plain_head > 0 {
            self.plain_head -= 1;
            return Some((t, NO_FLOW, 0));
        }
        let run = self.runs.front_mut().expect("runs cover the frames");
        let (flow, class) = (run.0, run.2);
        run.1 -= 1;
        if run.1 == 0 {
            self.runs.pop_front();
            self.has_runs = !self.runs.is_empty();
        }
        Some((t, flow, class))
    }

    /// Frames queued.
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.frames.len()
    }

    /// Bytes queued: every frame has the simulation's one size `frame_size`.
    #[inline(always)]
    pub fn bytes(&self, frame_size: u64) -> u64 {
        self.frames.len() as u64 * frame_size
    }

    /// No frame queued.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.frames.is_empty()
    }

    /// The priority class of the head frame (0 if the VOQ is empty).
    pub fn head_class(&self) -> u8 {
        if self.plain_head > 0 || !self.has_runs {
            0
        } else {
            self.runs.front().map_or(0, |run| run.2)
        }
    }
}

/// What [`Nic::voq_index`] found for a destination.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VoqLookup {
    /// Its live VOQ.
    Live,
    /// A new or recycled slot, reset for a new flow: `flow_rec` is `NO_RECORD` until set.
    Fresh,
}

impl VoqLookup {
    /// A new flow's state (a limiter from the start, for the schemes that want one).
    pub fn is_new_flow(self) -> bool {
        self != VoqLookup::Live
    }
}

/// A generator waiting for room in a full shared ingress (AD-CNSIM, D15): the rest of its arrival.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Blocked {
    pub(crate) gen: u32,
    pub(crate) t: SimTime,
    pub(crate) dst: u32,
    pub(crate) frames: u32,
    pub(crate) flow: u32,
}

/// VOQ lookup by flow key ([`Nic::key`]: the destination, or with several PFC classes the
/// destination and class; N below is the number of keys, nodes × classes). Up to
/// `DENSE_VOQ_INDEX` keys a dense table (4·N bytes per NIC). Beyond, the index stays linear in
/// what is used and in cache:
/// - while the NIC has made at most `FEW_VOQ_SLOTS` VOQ slots, the destination of each slot
///   (`NO_DST` where it is free) is kept inline and scanned. Below saturation a NIC of the
///   2,048-host tree never holds two VOQs at once, and a hash map would insert and remove an
///   entry for every frame (docs/performance.md);
/// - once it needs more, a hash map of the live VOQs;
/// - once that map holds a `DENSE_SHARE`-th of the nodes, the dense table, which is then no
///   larger and costs one load a lookup: a scheme that limits every flow keeps a VOQ for every
///   destination a NIC has sent to (E2CM probing only, FECN).
///
/// Each step is for good: a slot, once made, is never given back.
#[derive(Debug)]
enum VoqIndex {
    Dense(Vec<u32>),
    /// The key of each slot, and the number of keys (for the next steps).
    Few([u32; FEW_VOQ_SLOTS], u32),
    /// The live VOQs by key, and the number of keys (the dense table's length).
    Sparse(FxHashMap<u32, u32>, u32),
}

impl VoqIndex {
    /// An empty index for `keys` keys: dense if that is small, else the inline slots.
    fn new(keys: usize) -> Self {
        if keys <= DENSE_VOQ_INDEX {
            VoqIndex::Dense(vec![NO_VOQ; keys])
        } else {
            VoqIndex::Few([NO_DST; FEW_VOQ_SLOTS], keys as u32)
        }
    }
}

const DENSE_VOQ_INDEX: usize = 256;
const FEW_VOQ_SLOTS: usize = 8;
/// A hash map of N/4 entries takes 2.6–4.5 bytes a node (9 bytes a bucket, 8/7 to 16/7 buckets
/// an entry), the dense table 4.
const DENSE_SHARE: usize = 4;
const NO_VOQ: u32 = u32::MAX;
/// [`VoqIndex::Few`]'s entry of a free slot (no key has this value).
const NO_DST: u32 = u32::MAX;

/// A NIC. Laid out for the per-frame path (`repr(C)`, 64-byte aligned): everything a frame's
/// way through the adapter reads — the generator, the VOQ index and ring, the OB state, the
/// blocked generator, the probe queue — lies in the first four cache lines, the rest after
/// them. At 2,048 hosts thousands of events pass between two services of one NIC, so each line
/// it touches is a likely miss (docs/performance.md).
#[derive(Debug)]
#[repr(C, align(64))]
pub struct Nic {
    /// The NIC's egress port (global index); its `oq` is the OB.
    pub port: u32,
    pub node: u32,
    /// `gens[0]` (`NO_GEN` if none), inline: a NIC with one generator, the common case, reads
    /// no heap line to find it.
    pub(crate) first_gen: u32,
    /// `gens.len() == 1`.
    pub(crate) one_gen: bool,
    /// Transfer to the OB stopped at `egress_xoff`, resumes at `egress_xon`.
    pub(crate) ob_stopped: bool,
    pub(crate) wake_at: SimTime,
    /// Bytes in all VOQs (the shared ingress pool).
    pub ingress_bytes: u64,
    pub voqs: Vec<Voq>,
    pub(crate) ready: VecDeque<u32>,
    /// A generator blocked on a full shared ingress, with what it still has to admit.
    pub(crate) blocked: Option<Blocked>,
    /// Limited VOQs by release time; ties by flow key (`dst + class·nodes`: class by class, each
    /// in destination order; the destination alone with one class), so the order does not depend
    /// on slots.
    waiting: BinaryHeap<Reverse<(SimTime, u32, u32)>>,
    /// Forward probes waiting for room in the OB (they go ahead of data, D17).
    pub(crate) probes: VecDeque<crate::frame::FrameId>,
    /// With PFC and several classes: bytes of each class in the OB, which is then one FIFO per
    /// class, each of `egress_buffer` bytes (empty otherwise).
    pub(crate) ob_class: Vec<u64>,
    /// A class's offset in the VOQ keys: the number of nodes with several PFC classes (a VOQ per
    /// destination and class), 0 otherwise (a VOQ per destination, whatever the frame's class).
    class_stride: u32,
    voq_of_dst: VoqIndex,
    /// VOQ slots free for reuse, the one freed last on top: a VOQ lives while it holds frames
    /// or a rate limiter, so a NIC talking to thousands of destinations keeps only a handful.
    free_voqs: Vec<u32>,
    /// Generators (global indices) at this node ([`Nic::add_generator`]).
    pub gens: Vec<u32>,
    pub line_rate: BitRate,
    pub rng: SimRng,
}

/// A VOQ's index key ([`Nic::key`]), from the NIC's `class_stride`: a function of the parts, so
/// that code holding one of the NIC's VOQs borrowed can compute it.
#[inline(always)]
fn flow_key(dst: u32, class: u8, class_stride: u32) -> u32 {
    dst + class as u32 * class_stride
}

/// [`Nic::first_gen`] of a NIC without a generator.
pub(crate) const NO_GEN: u32 = u32::MAX;

impl Nic {
    pub fn new(node: u32, port: u32, line_rate: BitRate, n_nodes: usize, rng: SimRng) -> Self {
        Nic {
            node,
            port,
            first_gen: NO_GEN,
            one_gen: false,
            line_rate,
            voqs: Vec::new(),
            class_stride: 0,
            voq_of_dst: VoqIndex::new(n_nodes),
            free_voqs: Vec::new(),
            ready: VecDeque::new(),
            waiting: BinaryHeap::new(),
            ob_stopped: false,
            ob_class: Vec::new(),
            probes: VecDeque::new(),
            gens: Vec::new(),
            wake_at: SimTime::NEVER,
            ingress_bytes: 0,
            blocked: None,
            rng,
        }
    }

    /// Generator `g` (global index) sends from this NIC.
    pub fn add_generator(&mut self, g: u32) {
        if self.gens.is_empty() {
            self.first_gen = g;
        }
        self.gens.push(g);
        self.one_gen = self.gens.len() == 1;
    }

    /// PFC with `classes` > 1: give the OB one FIFO per priority class, and keep a VOQ per
    /// destination and class (called before the NIC has a VOQ).
    pub fn set_classes(&mut self, classes: u8) {
        self.ob_class = vec![0; classes as usize];
        if classes > 1 {
            debug_assert!(
                self.voqs.is_empty(),
                "the index is laid out before the first VOQ"
            );
            let nodes = match &self.voq_of_dst {
                VoqIndex::Dense(t) => t.len() as u32,
                VoqIndex::Few(_, keys) | VoqIndex::Sparse(_, keys) => *keys,
            };
            self.class_stride = nodes;
            self.voq_of_dst = VoqIndex::new(nodes as usize * classes as usize);
        }
    }

    /// The index key of the flow toward `dst` in `class`: `dst` alone unless the NIC keeps a VOQ
    /// per destination and class ([`Nic::set_classes`]).
    #[inline(always)]
    pub fn key(&self, dst: u32, class: u8) -> u32 {
        flow_key(dst, class, self.class_stride)
    }

    /// A frame of `class` (`size` bytes) left the OB.
    #[inline]
    pub fn ob_class_left(&mut self, class: u8, size: u64) {
        if let Some(bytes) = self.ob_class.get_mut(class as usize) {
            *bytes -= size;
        }
    }

    /// The VOQ toward `dst` in `class` (the class matters only with a VOQ per class), created on
    /// first use, and whether it is a new flow's.
    ///
    /// A new flow takes the slot freed last (`maybe_recycle`), with either index: below
    /// saturation a cold destination's VOQ empties after every frame, so a NIC cycles through
    /// the few slots it has live at once and they stay in cache. (A slot kept per destination
    /// saves the index write, but at 128 hosts its 127 slots per NIC, each frame's in a random
    /// one, made the VOQ lines most of the run's cache misses: docs/performance.md.)
    #[inline(always)]
    pub fn voq_index(&mut self, dst: u32, class: u8) -> (u32, VoqLookup) {
        let key = self.key(dst, class);
        let v = self.indexed(key);
        if v != NO_VOQ {
            return (v, VoqLookup::Live);
        }
        // a VOQ per class has its class for good; one per destination starts at 0
        let class = if self.class_stride > 0 { class } else { 0 };
        let v = match self.free_voqs.pop() {
            Some(v) => {
                let voq = &mut self.voqs[v as usize];
                voq.dst = dst;
                voq.reset(class);
                v
            }
            None => {
                let mut voq = Voq::new(dst);
                voq.class = class;
                self.voqs.push(voq);
                self.voqs.len() as u32 - 1
            }
        };
        match &mut self.voq_of_dst {
            VoqIndex::Dense(t) => t[key as usize] = v,
            VoqIndex::Few(t, _) => match t.get_mut(v as usize) {
                Some(slot) => *slot = key,
                None => self.index_in_map(key, v),
            },
            VoqIndex::Sparse(m, keys) => {
                m.insert(key, v);
                if m.len() * DENSE_SHARE >= *keys as usize {
                    self.index_densely();
                }
            }
        }
        (v, VoqLookup::Fresh)
    }

    /// The first VOQ slot beyond [`VoqIndex::Few`]'s inline table (slot `v`, key `key`): the
    /// live VOQs move to a hash map, for the rest of the run. Out of line: the hot path that
    /// calls it stays small.
    #[cold]
    #[inline(never)]
    fn index_in_map(&mut self, key: u32, v: u32) {
        let VoqIndex::Few(t, keys) = &self.voq_of_dst else {
            unreachable!("only the inline index moves to a map");
        };
        let live = (0..).zip(*t).filter(|&(_, k)| k != NO_DST);
        let mut m: FxHashMap<u32, u32> = live.map(|(v, k)| (k, v)).collect();
        m.insert(key, v);
        self.voq_of_dst = VoqIndex::Sparse(m, *keys);
    }

    /// The map of live VOQs reached a `DENSE_SHARE`-th of the nodes: they move to the dense
    /// table, for the rest of the run. Out of line, as [`Nic::index_in_map`].
    #[cold]
    #[inline(never)]
    fn index_densely(&mut self) {
        let VoqIndex::Sparse(m, keys) = &self.voq_of_dst else {
            unreachable!("only the map moves to the dense table");
        };
        let mut t = vec![NO_VOQ; *keys as usize];
        for (&k, &v) in m {
            t[k as usize] = v;
        }
        // room for a VOQ per destination at once: the slots keep growing toward that, and a
        // vector that doubles copies them and leaves the old copies to the allocator. Pages
        // nothing writes to stay unmapped, and the address space taken is at most four times
        // the N/4 slots already written
        self.voqs.reserve_exact(*keys as usize - self.voqs.len());
        self.voq_of_dst = VoqIndex::Dense(t);
    }

    #[inline(always)]
    /// Free VOQ `v` if it holds no frame and no limiter (its flow has nothing the NIC must keep):
    /// its slot leaves the index and goes back to the free list.
    pub(crate) fn maybe_recycle(&mut self, v: u32) {
        let voq = &mut self.voqs[v as usize];
        if !voq.live
            || !voq.frames.is_empty()
            || voq.limiter.is_some()
            || voq.state != VoqState::Idle
        {
            return;
        }
        voq.live = false;
        let key = flow_key(voq.dst, voq.class, self.class_stride);
        match &mut self.voq_of_dst {
            VoqIndex::Dense(t) => t[key as usize] = NO_VOQ,
            VoqIndex::Few(t, _) => t[v as usize] = NO_DST,
            VoqIndex::Sparse(m, _) => {
                m.remove(&key);
            }
        }
        self.free_voqs.push(v);
    }

    /// A generator of this NIC waits for room in its ingress buffer.
    pub fn is_blocked(&self) -> bool {
        self.blocked.is_some()
    }

    /// The live VOQ toward `dst` in `class`, if any.
    #[inline]
    pub fn find_voq(&self, dst: u32, class: u8) -> Option<u32> {
        Some(self.indexed(self.key(dst, class))).filter(|&v| v != NO_VOQ)
    }

    /// The live VOQ's slot the index holds for `key` (`NO_VOQ` if none).
    #[inline]
    fn indexed(&self, key: u32) -> u32 {
        match &self.voq_of_dst {
            VoqIndex::Dense(t) => t[key as usize],
            VoqIndex::Few(t, _) => t
                .iter()
                .position(|&k| k == key)
                .map_or(NO_VOQ, |v| v as u32),
            VoqIndex::Sparse(m, _) => m.get(&key).copied().unwrap_or(NO_VOQ),
        }
    }

    /// Make VOQ `v` (non-empty) eligible at `at`: into the ring if due, else onto the waiting heap.
    #[inline(always)]
    pub(crate) fn schedule_voq(&mut self, v: u32, at: SimTime, now: SimTime) {
        let voq = &mut self.voqs[v as usize];
        if at <= now {
            voq.state = VoqState::Ready;
            self.ready.push_back(v);
        } else {
            // read only while Waiting: a VOQ that goes straight to the ring leaves its second
            // line alone
            voq.eligible_at = at;
            voq.state = VoqState::Waiting;
            let key = flow_key(voq.dst, voq.class, self.class_stride);
            self.waiting.push(Reverse((at, key, v)));
        }
    }

    /// Move the VOQs whose limiter released them by `t` into the ring, in release order.
    #[inline]
    pub(crate) fn promote(&mut self, t: SimTime) {
        if self.waiting.is_empty() {
            return;
        }
        while let Some(&Reverse((at, _, v))) = self.waiting.peek() {
            if at > t {
                break;
            }
            self.waiting.pop();
            let voq = &mut self.voqs[v as usize];
            if voq.state == VoqState::Waiting && voq.eligible_at == at {
                voq.state = VoqState::Ready;
                self.ready.push_back(v);
            }
        }
    }

    /// Prefetch the line of the live VOQ toward `dst` in `class`, if there is one.
    #[inline(always)]
    pub(crate) fn prefetch_voq(&self, dst: u32, class: u8) {
        if let Some(v) = self.find_voq(dst, class) {
            crate::engine::prefetch(&self.voqs[v as usize]);
        }
    }

    /// Prefetch the end of the list of free VOQ slots (what a new flow's VOQ pops).
    #[inline(always)]
    pub(crate) fn prefetch_free_list(&self) {
        if let Some(v) = self.free_voqs.last() {
            crate::engine::prefetch(v);
        }
    }

    /// Prefetch the slot a new flow's VOQ takes next (the one freed last). This reads the end of
    /// the free list ([`Nic::prefetch_free_list`]).
    #[inline(always)]
    pub(crate) fn prefetch_free_voq(&self) {
        if let Some(voq) = self
            .free_voqs
            .last()
            .and_then(|&v| self.voqs.get(v as usize))
        {
            crate::engine::prefetch(voq);
        }
    }

    /// Prefetch the chunk of the live VOQ toward `dst` in `class` that its next frame's time will
    /// fill. Its VOQ's line should be in cache already ([`Nic::prefetch_voq`]): this reads it.
    #[inline(always)]
    pub(crate) fn prefetch_voq_back(&self, dst: u32, class: u8, store: &VoqStore) {
        let chunk = self
            .find_voq(dst, class)
            .and_then(|v| self.voqs[v as usize].frames.back_chunk(store));
        if let Some(c) = chunk {
            crate::engine::prefetch(c);
        }
    }

    /// Prefetch what the next transfers will read: the head frame of the VOQ served next and
    /// the line of the one after it.
    #[inline(always)]
    pub(crate) fn prefetch_ring(&self, store: &VoqStore) {
        if let Some(&v) = self.ready.front() {
            if let Some(c) = self.voqs[v as usize].frames.front_chunk(store) {
                crate::engine::prefetch(c);
            }
        }
        if let Some(&v) = self.ready.get(1) {
            crate::engine::prefetch(&self.voqs[v as usize]);
        }
    }

    pub(crate) fn next_release(&mut self) -> SimTime {
        while let Some(&Reverse((at, _, v))) = self.waiting.peek() {
            let voq = &self.voqs[v as usize];
            if voq.state == VoqState::Waiting && voq.eligible_at == at {
                return at;
            }
            self.waiting.pop();
        }
        SimTime::NEVER
    }
}

/// The pacing gap of a limited flow: 8·L/R, or `NEVER` while the limiter holds it at rate 0.
#[inline]
pub(crate) fn pace(bytes: u64, rl: &RateLimiter) -> SimTime {
    if rl.rate_bps > 0.0 {
        tx_time_f64(bytes, rl.rate_bps)
    } else {
        SimTime::NEVER
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng::{stream, StreamKind};

    #[test]
    fn a_frame_through_the_adapter_reads_four_cache_lines_of_its_nic() {
        use std::mem::{offset_of, size_of};
        assert_eq!(std::mem::align_of::<Nic>(), 64);
        let last = |off: usize, size: usize| (off + size - 1) / 64;
        for (off, size) in [
            (offset_of!(Nic, port), 4),
            (offset_of!(Nic, first_gen), 4),
            (offset_of!(Nic, one_gen), 1),
            (offset_of!(Nic, ob_stopped), 1),
            (offset_of!(Nic, wake_at), 8),
            (offset_of!(Nic, ingress_bytes), 8),
            (offset_of!(Nic, voqs), size_of::<Vec<Voq>>()),
            (offset_of!(Nic, ready), size_of::<VecDeque<u32>>()),
            (offset_of!(Nic, blocked), size_of::<Option<Blocked>>()),
            (
                offset_of!(Nic, waiting),
                size_of::<BinaryHeap<Reverse<(SimTime, u32, u32)>>>(),
            ),
            (
                offset_of!(Nic, probes),
                size_of::<VecDeque<crate::frame::FrameId>>(),
            ),
            (offset_of!(Nic, ob_class), size_of::<Vec<u64>>()),
            (offset_of!(Nic, class_stride), 4),
            (offset_of!(Nic, voq_of_dst), size_of::<VoqIndex>()),
        ] {
            assert!(last(off, size) < 4, "offset {off}, {size} bytes");
        }
    }

    #[test]
    fn a_frame_through_an_unlimited_voq_reads_one_cache_line_of_it() {
        use std::mem::{offset_of, size_of};
        assert_eq!(std::mem::align_of::<Voq>(), 64);
        let last = |off: usize, size: usize| (off + size - 1) / 64;
        // what a plain frame's arrival and transfer read and write, and the recycling test
        for (off, size) in [
            (offset_of!(Voq, frames), size_of::<TimeFifo>()),
            (offset_of!(Voq, t_last), 8),
            (offset_of!(Voq, limiter), size_of::<Option<RateLimiter>>()),
            (offset_of!(Voq, plain_head), 4),
            (offset_of!(Voq, dst), 4),
            (offset_of!(Voq, flow_rec), 4),
            (offset_of!(Voq, state), 1),
            (offset_of!(Voq, class), 1),
            (offset_of!(Voq, live), 1),
            (offset_of!(Voq, has_runs), 1),
        ] {
            assert!(last(off, size) < 1, "offset {off}, {size} bytes");
        }
        // the runs, the eligibility, the reaction point and its timer token follow: a limited
        // flow of a finite flow reads five lines at most
        assert!(size_of::<Voq>() <= 5 * 64);
        // and a NIC is five lines (the rarely read state, such as a released flow's reaction
        // point, lives in the simulator)
        assert!(size_of::<Nic>() <= 5 * 64);
    }

    #[test]
    fn a_nic_reuses_few_slots_for_many_short_flows() {
        // 127 destinations, one frame each, one at a time: one slot serves them all with either
        // index, so a NIC's VOQ lines stay in cache (the dense index used to keep a slot per
        // destination: 127 here)
        for n_nodes in [128, 1000] {
            let mut nic = nic(n_nodes);
            let mut store = VoqStore::new();
            for dst in 1..128 {
                let (v, found) = nic.voq_index(dst, 0);
                assert_eq!(found, VoqLookup::Fresh);
                nic.voqs[v as usize].push_frame(&mut store, SimTime(dst as u64), NO_FLOW, 0);
                assert_eq!(
                    nic.voqs[v as usize].pop_frame(&mut store).map(|f| f.0),
                    Some(SimTime(dst as u64))
                );
                nic.maybe_recycle(v);
                assert_eq!(nic.find_voq(dst, 0), None);
            }
            assert_eq!(nic.voqs.len(), 1, "{n_nodes} nodes");
        }
    }

    #[test]
    fn a_large_network_scans_a_few_slots_and_maps_many() {
        // beyond DENSE_VOQ_INDEX nodes: the destinations of up to FEW_VOQ_SLOTS slots inline,
        // then a map of the live VOQs that keeps every one findable
        let mut nic = nic(1000);
        let mut store = VoqStore::new();
        let dsts: Vec<u32> = (0..20).map(|i| 999 - 37 * i).collect();
        let mut slots = Vec::new();
        for (i, &dst) in dsts.iter().enumerate() {
            let (v, found) = nic.voq_index(dst, 0);
            assert_eq!((v, found), (i as u32, VoqLookup::Fresh));
            nic.voqs[v as usize].push_frame(&mut store, SimTime(1), NO_FLOW, 0);
            slots.push(v);
            let inline = matches!(nic.voq_of_dst, VoqIndex::Few(..));
            assert_eq!(inline, i < FEW_VOQ_SLOTS, "slot {i}");
            for (&d, &s) in dsts.iter().zip(&slots) {
                assert_eq!(
                    nic.find_voq(d, 0),
                    Some(s),
                    "destination {d} after slot {i}"
                );
            }
        }
        assert_eq!(nic.find_voq(1, 0), None);
        // a recycled slot leaves the index, and the next new flow takes it
        nic.voqs[slots[3] as usize].pop_frame(&mut store);
        nic.maybe_recycle(slots[3]);
        assert_eq!(nic.find_voq(dsts[3], 0), None);
        assert_eq!(nic.voq_index(5, 0), (slots[3], VoqLookup::Fresh));
        assert_eq!(nic.voq_index(dsts[4], 0), (slots[4], VoqLookup::Live));
        // inline, a freed slot is free for every destination, the one it served included
        let mut small = self::nic(1000);
        let (a, _) = small.voq_index(7, 0);
        let (b, _) = small.voq_index(8, 0);
        small.maybe_recycle(a);
        assert_eq!(small.find_voq(7, 0), None);
        assert_eq!(small.find_voq(8, 0), Some(b));
        assert_eq!(small.voq_index(8, 0), (b, VoqLookup::Live));
        assert_eq!(small.voq_index(7, 0), (a, VoqLookup::Fresh));
    }

    #[test]
    fn a_map_of_a_quarter_of_the_nodes_becomes_the_dense_table() {
        // 1,000 nodes: inline up to 8 slots, mapped up to 249 live VOQs, dense from the 250th
        let mut nic = nic(1000);
        let mut store = VoqStore::new();
        let dsts: Vec<u32> = (0..300).map(|i| (7 * i + 3) % 1000).collect();
        for (i, &dst) in dsts.iter().enumerate() {
            let (v, found) = nic.voq_index(dst, 0);
            assert_eq!((v, found), (i as u32, VoqLookup::Fresh));
            nic.voqs[v as usize].push_frame(&mut store, SimTime(1), NO_FLOW, 0);
            let step = match nic.voq_of_dst {
                VoqIndex::Few(..) => 0,
                VoqIndex::Sparse(..) => 1,
                VoqIndex::Dense(_) => 2,
            };
            assert_eq!(
                step,
                usize::from(i >= 8) + usize::from(i >= 249),
                "slot {i}"
            );
            // dense, the slots have room for every destination (and no more): no copy as they
            // grow
            assert_eq!(nic.voqs.capacity() >= 1000, step == 2, "slot {i}");
            if i == 249 {
                assert_eq!(nic.voqs.capacity(), 1000);
            }
            if matches!(i, 7 | 8 | 248 | 249 | 299) {
                for (s, &d) in dsts[..=i].iter().enumerate() {
                    assert_eq!(
                        nic.find_voq(d, 0),
                        Some(s as u32),
                        "destination {d} after slot {i}"
                    );
                }
                assert_eq!(nic.find_voq(1, 0), None);
            }
        }
        // dense, a recycled slot leaves the index and the next new flow takes it
        nic.voqs[17].pop_frame(&mut store);
        nic.maybe_recycle(17);
        assert_eq!(nic.find_voq(dsts[17], 0), None);
        assert_eq!(nic.voq_index(1, 0), (17, VoqLookup::Fresh));
        assert_eq!(nic.voq_index(dsts[18], 0), (18, VoqLookup::Live));
        assert!(matches!(&nic.voq_of_dst, VoqIndex::Dense(t) if t.len() == 1000));
    }

    #[test]
    fn the_first_generator_is_kept_inline() {
        let mut n = nic(4);
        assert_eq!((n.first_gen, n.one_gen), (NO_GEN, false));
        n.add_generator(7);
        assert_eq!((n.first_gen, n.one_gen), (7, true));
        n.add_generator(3);
        assert_eq!((n.first_gen, n.one_gen), (7, false));
        assert_eq!(n.gens, [7, 3]);
    }

    fn nic(n_nodes: usize) -> Nic {
        Nic::new(
            0,
            0,
            BitRate(10_000_000_000),
            n_nodes,
            stream(1, StreamKind::ReactionPoint, 0),
        )
    }

    #[test]
    fn a_voq_returns_its_frames_flows_and_classes_in_queue_order() {
        // plain frames (no flow, class 0) before, between and after runs of flows and classes
        let mut voq = Voq::new(3);
        let mut store = VoqStore::new();
        let pushed = [
            (1, NO_FLOW, 0),
            (2, NO_FLOW, 0),
            (3, 7, 0),
            (4, 7, 0),
            (5, NO_FLOW, 0),
            (6, NO_FLOW, 2),
            (7, 8, 2),
            (8, NO_FLOW, 0),
        ];
        let mut popped = Vec::new();
        for (i, &(t, flow, class)) in pushed.iter().enumerate() {
            voq.push_frame(&mut store, SimTime(t), flow, class);
            if i == 4 {
                // dequeue part of the way through: the plain head is used up first
                popped.push(voq.pop_frame(&mut store).unwrap());
                assert_eq!(voq.head_class(), 0);
            }
        }
        assert_eq!(
            voq.runs.len(),
            5,
            "the plain head takes no run: 7, plain, class 2, 8, plain"
        );
        assert!(voq.has_runs);
        assert_eq!(voq.bytes(1500), 7 * 1500);
        while let Some(f) = voq.pop_frame(&mut store) {
            if f.0 == SimTime(6) {
                assert_eq!(voq.head_class(), 2, "frame 7 (flow 8) is next, in class 2");
            }
            popped.push(f);
        }
        let expected: Vec<_> = pushed.iter().map(|&(t, f, c)| (SimTime(t), f, c)).collect();
        assert_eq!(popped, expected);
        assert!(voq.runs.is_empty() && voq.plain_head == 0 && voq.frames.is_empty());
        assert!(!voq.has_runs && voq.bytes(1500) == 0);
        // a VOQ that empties after every frame never uses a run
        voq.push_frame(&mut store, SimTime(9), NO_FLOW, 0);
        assert!(voq.runs.is_empty() && !voq.has_runs && voq.plain_head == 1);
        assert_eq!(voq.pop_frame(&mut store), Some((SimTime(9), NO_FLOW, 0)));
        // a class's run behind a plain head: the head, in class 0, decides (PFC's OB room)
        voq.push_frame(&mut store, SimTime(10), NO_FLOW, 0);
        voq.push_frame(&mut store, SimTime(11), NO_FLOW, 2);
        assert_eq!(voq.head_class(), 0);
        voq.pop_frame(&mut store);
        assert_eq!(voq.head_class(), 2);
    }

    #[test]
    fn voqs_are_made_on_first_use_and_recycled_when_they_hold_nothing() {
        for n_nodes in [16, 1000] {
            // the dense index (small networks) and the sparse one behave alike
            let mut nic = nic(n_nodes);
            let mut store = VoqStore::new();
            let (a, found) = nic.voq_index(5, 0);
            assert!(found == VoqLookup::Fresh && nic.find_voq(5, 0) == Some(a));
            assert_eq!(nic.voq_index(5, 0), (a, VoqLookup::Live));
            nic.voqs[a as usize].flow_rec = 4;
            let token = nic.voqs[a as usize].timer_token;
            nic.voqs[a as usize].frames.push(&mut store, SimTime(1));
            nic.maybe_recycle(a);
            assert_eq!(nic.find_voq(5, 0), Some(a), "a VOQ with frames stays");
            nic.voqs[a as usize].frames.clear(&mut store);
            nic.voqs[a as usize].limiter = Some(RateLimiter::new(1e9));
            nic.maybe_recycle(a);
            assert_eq!(
                nic.find_voq(5, 0),
                Some(a),
                "a limited flow keeps its VOQ (D7)"
            );
            nic.voqs[a as usize].release_limiter();
            nic.maybe_recycle(a);
            assert_eq!(nic.find_voq(5, 0), None);
            // a flow's state does not outlive its VOQ, whichever slot the next flow gets
            nic.voqs[a as usize].t_last = SimTime(7);
            nic.voqs[a as usize].class = 3;
            let (b, found) = nic.voq_index(9, 0);
            assert_eq!(found, VoqLookup::Fresh);
            assert_eq!(b, a, "the slot freed last is reused");
            assert_eq!(
                nic.voqs[a as usize].flow_rec,
                crate::frame::NO_RECORD,
                "another destination's recorder slot is not inherited"
            );
            let old = &nic.voqs[a as usize];
            assert_eq!(
                (old.t_last, old.class, old.live, old.timer_token),
                (SimTime::ZERO, 0, true, token.wrapping_add(1)),
                "a fresh flow's state; a stale timer cannot fire on the new flow"
            );
            assert_eq!(nic.voqs[b as usize].dst, 9);
            let (c, found) = nic.voq_index(5, 0);
            assert_eq!(found, VoqLookup::Fresh);
            assert_ne!(c, a, "a live slot is not handed out again");
        }
    }

    #[test]
    fn with_several_pfc_classes_a_flow_is_a_destination_and_a_class() {
        // the dense index (16 nodes × 3 classes = 48 keys) and the inline slots then the map
        // (1000 × 3) behave alike
        for n_nodes in [16, 1000] {
            let mut one = nic(n_nodes);
            one.set_classes(1);
            let (v, _) = one.voq_index(5, 0);
            assert_eq!(one.key(5, 0), 5, "one class: a VOQ per destination");
            assert_eq!(one.voq_index(5, 0), (v, VoqLookup::Live));

            let mut nic = nic(n_nodes);
            nic.set_classes(3);
            assert_eq!(nic.key(5, 2), 5 + 2 * n_nodes as u32);
            let (a, _) = nic.voq_index(5, 0);
            let (b, found) = nic.voq_index(5, 2);
            assert!(
                found == VoqLookup::Fresh && b != a,
                "class 2 toward 5 is another flow"
            );
            assert_eq!(
                (nic.voqs[b as usize].dst, nic.voqs[b as usize].class),
                (5, 2)
            );
            assert_eq!((nic.find_voq(5, 2), nic.find_voq(5, 0)), (Some(b), Some(a)));
            assert_eq!(nic.find_voq(5, 1), None);
            // enough flows to move the inline slots to a map, and on to the dense table
            let keys: Vec<(u32, u8)> = (0..n_nodes as u32 / 2)
                .flat_map(|d| [(d, 0), (d, 1)])
                .collect();
            let slots: Vec<u32> = keys.iter().map(|&(d, c)| nic.voq_index(d, c).0).collect();
            for (&(d, c), &v) in keys.iter().zip(&slots) {
                assert_eq!(nic.find_voq(d, c), Some(v), "destination {d}, class {c}");
                assert_eq!(nic.voqs[v as usize].class, c);
            }
            // a recycled slot takes its next flow's class; the freed key is gone
            nic.maybe_recycle(b);
            assert_eq!(nic.find_voq(5, 2), None);
            let last = n_nodes as u32 - 1; // beyond the flows above
            let (c, found) = nic.voq_index(last, 1);
            assert_eq!(
                (c, found, nic.voqs[c as usize].class),
                (b, VoqLookup::Fresh, 1)
            );
            // equal release times wait in key order: destination 3 in class 0 before class 1
            let (x, y) = (nic.voq_index(3, 1).0, nic.voq_index(3, 0).0);
            nic.schedule_voq(x, SimTime(200), SimTime(100));
            nic.schedule_voq(y, SimTime(200), SimTime(100));
            nic.promote(SimTime(200));
            assert_eq!(nic.ready.iter().copied().collect::<Vec<_>>(), vec![y, x]);
        }
    }

    #[test]
    fn due_voqs_join_the_ring_and_limited_ones_wait_in_release_order() {
        let mut nic = nic(16);
        let v: Vec<u32> = [3, 1, 2, 4]
            .iter()
            .map(|&d| nic.voq_index(d, 0).0)
            .collect();
        let now = SimTime(100);
        nic.schedule_voq(v[0], SimTime(50), now); // due: into the ring
        nic.schedule_voq(v[1], SimTime(300), now);
        nic.schedule_voq(v[2], SimTime(200), now);
        nic.schedule_voq(v[3], SimTime(200), now); // same release as v[2]: destination 2 before 4
        assert_eq!(nic.ready.iter().copied().collect::<Vec<_>>(), vec![v[0]]);
        assert_eq!(nic.voqs[v[1] as usize].state, VoqState::Waiting);
        assert_eq!(nic.next_release(), SimTime(200));
        nic.promote(SimTime(250));
        assert_eq!(
            nic.ready.iter().copied().collect::<Vec<_>>(),
            vec![v[0], v[2], v[3]]
        );
        // a rescheduled VOQ leaves a stale heap entry behind: skipped, never promoted twice
        nic.schedule_voq(v[1], SimTime(400), SimTime(250));
        assert_eq!(nic.next_release(), SimTime(400));
        nic.promote(SimTime(350));
        assert_eq!(nic.ready.len(), 3);
        nic.promote(SimTime(400));
        assert_eq!(nic.ready.back(), Some(&v[1]));
        assert_eq!(nic.next_release(), SimTime::NEVER);
    }

    #[test]
    fn the_pacing_gap_is_the_serialisation_time_at_the_limited_rate() {
        let rl = RateLimiter::new(10e9);
        assert_eq!(
            pace(
                1500,
                &RateLimiter {
                    rate_bps: 1e9,
                    ..rl
                }
            ),
            SimTime(12_000_000)
        ); // 12 us
        assert_eq!(pace(1500, &rl), SimTime(1_200_000));
        assert_eq!(
            pace(
                1500,
                &RateLimiter {
                    rate_bps: 0.0,
                    ..rl
                }
            ),
            SimTime::NEVER,
            "rate 0 holds the flow"
        );
    }
}
