//! Traffic generators: Bernoulli slotted arrivals (scenarios.md §1.3). TG-BERN: in every frame
//! slot of the node's link a frame is created with probability `load`. TG-GEO: a flow arrives in
//! a slot with probability `load / mean_frames`, with a size geometric on {1, 2, …} frames of mean
//! `mean_frames`. The generator draws the geometric gap to the next arrival instead of visiting
//! every slot, so an arrival costs O(1) whatever the load.

use rand::Rng;

use crate::engine::SimRng;
use crate::time::SimTime;

const GAP_TABLE: usize = 8;

/// One Bernoulli source at a node. Laid out (`repr(C)`, 64-byte aligned) so that an arrival
/// reads two cache lines: the first holds the random stream, the next instant and what every
/// draw needs; the second the node, the class and the first entries of the gap table, which
/// answer nearly every draw at loads above one half.
#[derive(Clone, Debug)]
#[repr(C, align(64))]
pub struct Generator {
    rng: SimRng,
    /// Instant of the next arrival (`NEVER` once stopped).
    pub next: SimTime,
    /// The frame slot: one frame time at the node's link rate.
    pub slot: SimTime,
    stop: SimTime,
    /// Flow sizes: ln(1 − 1/mean_frames), or `None` for one frame per arrival.
    ln_size: Option<f64>,
    /// Fixed destination, or `None` for uniform over the other nodes.
    pub dst: Option<u32>,
    pub load: f64,
    pub node: u32,
    n_nodes: u32,
    /// Arrivals are finite flows whose completion times are recorded (TG-GEO, even of mean 1).
    flows: bool,
    /// The 802.1Qbb priority class of its frames (0 without PFC).
    pub priority: u8,
    /// Each uniform destination is drawn as soon as its arrival's instant is
    /// ([`Generator::draw_destinations_ahead`]).
    draw_ahead: bool,
    /// With `draw_ahead`: the destination of the arrival at `next`.
    next_dst: u32,
    /// Start of the slot grid.
    pub origin: SimTime,
    /// ln(1 - load), cached for the geometric draw.
    ln_idle: f64,
    /// (1 - p)^j for j = 1..=GAP_TABLE (p = arrival probability per slot): the inverse CDF of
    /// short gaps without a logarithm.
    idle_pow: [f64; GAP_TABLE],
}

impl Generator {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        node: u32,
        dst: Option<u32>,
        load: f64,
        slot: SimTime,
        start: SimTime,
        stop: SimTime,
        n_nodes: u32,
        rng: SimRng,
    ) -> Self {
        Self::with_flows(node, dst, load, None, slot, start, stop, n_nodes, rng)
    }

    /// A TG-GEO source when `mean_frames` is given: flows of geometric size with that mean (a
    /// mean of 1 makes one-frame flows, still tracked for their completion times).
    #[allow(clippy::too_many_arguments)]
    pub fn with_flows(
        node: u32,
        dst: Option<u32>,
        load: f64,
        mean_frames: Option<f64>,
        slot: SimTime,
        start: SimTime,
        stop: SimTime,
        n_nodes: u32,
        rng: SimRng,
    ) -> Self {
        let flows = mean_frames.is_some();
        let mean_frames = mean_frames.unwrap_or(1.0);
        let load = load / mean_frames;
        let ln_size = (mean_frames > 1.0).then(|| libm::log(1.0 - 1.0 / mean_frames));
        let mut idle_pow = [0.0; GAP_TABLE];
        let mut q = 1.0;
        for x in idle_pow.iter_mut() {
            q *= 1.0 - load;
            *x = q;
        }
        let mut g = Generator {
            node,
            dst,
            load,
            priority: 0,
            slot,
            next: SimTime::NEVER,
            origin: start,
            stop,
            ln_idle: libm::log(1.0 - load),
            idle_pow,
            ln_size,
            flows,
            n_nodes,
            draw_ahead: false,
            next_dst: 0,
            rng,
        };
        if load > 0.0 && !(dst.is_none() && n_nodes < 2) {
            // the first slot starts at `start`: the first arrival is in slot k - 1
            let k = g.gap_slots();
            g.set_next(SimTime(start.0 + (k - 1) * slot.0));
        }
        g
    }

    /// When the source stops generating (exclusive; `NEVER` for a source that never stops).
    pub fn stop(&self) -> SimTime {
        self.stop
    }

    /// Number of slots to the next arrival: geometric on {1, 2, ...} with success probability `load`.
    fn gap_slots(&mut self) -> u64 {
        if self.load >= 1.0 {
            return 1;
        }
        // u in (0, 1]; the gap is the smallest k with u > (1 - p)^k (inverse CDF of the geometric
        // law); short gaps come from the table, long ones from k = 1 + floor(ln u / ln(1 - p)).
        let u: f64 = 1.0 - self.rng.gen::<f64>();
        for (j, &q) in self.idle_pow.iter().enumerate() {
            if u > q {
                return j as u64 + 1;
            }
        }
        (1 + (libm::log(u) / self.ln_idle).floor() as u64).max(GAP_TABLE as u64 + 1)
    }

    fn set_next(&mut self, t: SimTime) {
        self.next = if t < self.stop { t } else { SimTime::NEVER };
    }

    /// Frames in the arriving flow: 1, or geometric on {1, 2, …} with the configured mean.
    fn flow_frames(&mut self) -> u32 {
        match self.ln_size {
            None => 1,
            Some(ln_q) => {
                let u: f64 = 1.0 - self.rng.gen::<f64>();
                (1 + (libm::log(u) / ln_q).floor() as u64).min(u32::MAX as u64) as u32
            }
        }
    }

    /// Whether this generator makes flows of several frames (TG-GEO).
    pub fn makes_flows(&self) -> bool {
        self.flows
    }

    /// The arrival at `self.next`: its instant, destination and frame count; then advance to the
    /// following arrival.
    #[inline(always)]
    pub fn pop_arrival(&mut self) -> (SimTime, u32, u32) {
        let t = self.next;
        let dst = match self.dst {
            Some(d) => d,
            None if self.draw_ahead => self.next_dst,
            None => uniform_dst(&mut self.rng, self.n_nodes, self.node),
        };
        let frames = self.flow_frames();
        let k = self.gap_slots();
        self.set_next(SimTime(t.0 + k * self.slot.0));
        if self.draw_ahead {
            self.draw_next_dst();
        }
        (t, dst, frames)
    }

    /// Draw each arrival's destination as soon as its instant is known, one arrival early, so
    /// that the NIC can load that VOQ's line before the frame arrives ([`Generator::next_dst`]).
    /// The stream is drawn in the same order as without: a destination is the draw right after
    /// the gap before its arrival either way. Only a generator that can be blocked must not draw
    /// ahead, since [`Generator::resume_after`] draws a gap in between.
    pub fn draw_destinations_ahead(&mut self) {
        self.draw_ahead = true;
        self.draw_next_dst();
    }

    fn draw_next_dst(&mut self) {
        if self.dst.is_none() && self.next != SimTime::NEVER {
            self.next_dst = uniform_dst(&mut self.rng, self.n_nodes, self.node);
        }
    }

    /// The destination of the arrival at `next`, when it is known already (fixed, or drawn
    /// ahead).
    #[inline(always)]
    pub fn next_dst(&self) -> Option<u32> {
        match self.dst {
            Some(d) => Some(d),
            None => (self.draw_ahead && self.next != SimTime::NEVER).then_some(self.next_dst),
        }
    }

    /// After a blocked generator's frame was admitted at `now` (D15, AD-CNSIM): generation resumes
    /// on the slot grid after `now`.
    pub fn resume_after(&mut self, now: SimTime, origin: SimTime) {
        debug_assert!(
            !self.draw_ahead,
            "a generator that can be blocked draws no destination ahead"
        );
        let slots_done = (now.0.saturating_sub(origin.0)).div_ceil(self.slot.0);
        let k = self.gap_slots();
        self.set_next(SimTime(origin.0 + (slots_done + k - 1) * self.slot.0));
    }
}

/// A destination drawn uniformly among the `n_nodes` nodes other than `node`.
#[inline(always)]
fn uniform_dst(rng: &mut SimRng, n_nodes: u32, node: u32) -> u32 {
    let d = rng.gen_range(0..n_nodes - 1);
    if d >= node {
        d + 1
    } else {
        d
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng::{stream, StreamKind};

    fn gen(load: f64, dst: Option<u32>, seed: u64) -> Generator {
        Generator::new(
            0,
            dst,
            load,
            SimTime::ns(1200),
            SimTime::ZERO,
            SimTime::NEVER,
            16,
            stream(seed, StreamKind::Traffic, 0),
        )
    }

    #[test]
    fn an_arrival_reads_two_cache_lines_of_its_generator() {
        use std::mem::{offset_of, size_of};
        assert_eq!(std::mem::align_of::<Generator>(), 64);
        let line = |off: usize| off / 64;
        for (off, size) in [
            (offset_of!(Generator, rng), size_of::<SimRng>()),
            (offset_of!(Generator, next), 8),
            (offset_of!(Generator, slot), 8),
            (offset_of!(Generator, stop), 8),
            (offset_of!(Generator, ln_size), size_of::<Option<f64>>()),
            (offset_of!(Generator, dst), size_of::<Option<u32>>()),
        ] {
            assert_eq!(line(off + size - 1), 0, "offset {off}");
        }
        for (off, size) in [
            (offset_of!(Generator, load), 8),
            (offset_of!(Generator, node), 4),
            (offset_of!(Generator, n_nodes), 4),
            (offset_of!(Generator, flows), 1),
            (offset_of!(Generator, priority), 1),
            (offset_of!(Generator, draw_ahead), 1),
            (offset_of!(Generator, next_dst), 4),
            (offset_of!(Generator, idle_pow), 3 * 8),
        ] {
            assert_eq!(line(off + size - 1), 1, "offset {off}");
        }
    }

    #[test]
    fn destinations_drawn_ahead_are_the_same_destinations() {
        // the same stream in the same order: every arrival (instant, destination, size) is the
        // one drawn without drawing ahead, and the destination is known one arrival early
        for mean in [None, Some(4.0)] {
            let make = || {
                Generator::with_flows(
                    3,
                    None,
                    0.85,
                    mean,
                    SimTime::ns(1200),
                    SimTime::ns(500),
                    SimTime::ms(2),
                    16,
                    stream(7, StreamKind::Traffic, 3),
                )
            };
            let (mut plain, mut ahead) = (make(), make());
            ahead.draw_destinations_ahead();
            assert_eq!(plain.next_dst(), None, "not known without drawing ahead");
            let mut n = 0;
            while plain.next != SimTime::NEVER {
                let known = ahead.next_dst().expect("drawn ahead");
                let arrival = plain.pop_arrival();
                assert_eq!(ahead.pop_arrival(), arrival);
                assert_eq!(known, arrival.1);
                n += 1;
            }
            assert_eq!(ahead.next, SimTime::NEVER);
            assert_eq!(ahead.next_dst(), None, "nothing after the last arrival");
            assert!(n > 100, "{n} arrivals");
        }
        // a fixed destination is always known
        assert_eq!(gen(0.5, Some(9), 1).next_dst(), Some(9));
    }

    #[test]
    fn arrivals_sit_on_the_slot_grid_at_the_offered_load() {
        let mut g = gen(0.85, None, 1);
        let n = 200_000;
        let mut last = SimTime::ZERO;
        let mut hits = [0u64; 16];
        for _ in 0..n {
            let (t, d, _) = g.pop_arrival();
            assert_eq!(t.0 % 1_200_000, 0);
            assert!(t > last || last == SimTime::ZERO);
            assert_ne!(d, 0, "never to itself");
            hits[d as usize] += 1;
            last = t;
        }
        let slots = last.0 / 1_200_000 + 1;
        let load = n as f64 / slots as f64;
        assert!((load - 0.85).abs() < 0.005, "load {load}");
        for (d, &h) in hits.iter().enumerate().skip(1) {
            let share = h as f64 / n as f64;
            assert!((share - 1.0 / 15.0).abs() < 0.004, "dst {d} share {share}");
        }
    }

    #[test]
    fn low_loads_draw_long_gaps_at_the_offered_load() {
        // gaps beyond the table (k > 8) come from the logarithm: two thirds of them at 5 %
        for load in [0.05, 0.3] {
            let mut g = gen(load, Some(3), 2);
            let n = 100_000;
            let mut last = SimTime::ZERO;
            for _ in 0..n {
                last = g.pop_arrival().0;
            }
            let measured = n as f64 / (last.0 / 1_200_000 + 1) as f64;
            assert!(
                (measured / load - 1.0).abs() < 0.01,
                "load {load}: {measured}"
            );
        }
    }

    #[test]
    fn a_uniform_source_with_one_other_node_sends_to_it_and_alone_sends_nothing() {
        let with = |n_nodes| {
            let (slot, rng) = (SimTime::ns(1200), stream(1, StreamKind::Traffic, 0));
            Generator::new(
                0,
                None,
                0.5,
                slot,
                SimTime::ZERO,
                SimTime::NEVER,
                n_nodes,
                rng,
            )
        };
        let mut g = with(2);
        for _ in 0..100 {
            assert_eq!(g.pop_arrival().1, 1);
        }
        assert_eq!(with(1).next, SimTime::NEVER);
    }

    #[test]
    fn full_load_fills_every_slot_and_stop_is_honoured() {
        let mut g = Generator::new(
            3,
            Some(1),
            1.0,
            SimTime::us(1),
            SimTime::us(5),
            SimTime::us(8),
            4,
            stream(1, StreamKind::Traffic, 3),
        );
        let got: Vec<_> =
            std::iter::from_fn(|| (g.next != SimTime::NEVER).then(|| g.pop_arrival())).collect();
        assert_eq!(
            got,
            vec![
                (SimTime::us(5), 1, 1),
                (SimTime::us(6), 1, 1),
                (SimTime::us(7), 1, 1)
            ]
        );
    }

    #[test]
    fn geometric_flows_have_the_mean_size_and_the_offered_load() {
        // mean 60 000 B = 40 frames at 50 % load: a flow every 80 slots on average
        let mut g = Generator::with_flows(
            0,
            None,
            0.5,
            Some(40.0),
            SimTime::ns(1200),
            SimTime::ZERO,
            SimTime::NEVER,
            16,
            stream(4, StreamKind::Traffic, 0),
        );
        let (mut frames, mut last, n) = (0u64, SimTime::ZERO, 20_000);
        for _ in 0..n {
            let (t, _, k) = g.pop_arrival();
            assert!(k >= 1);
            frames += k as u64;
            last = t;
        }
        let mean = frames as f64 / n as f64;
        assert!((mean - 40.0).abs() < 1.0, "mean size {mean}");
        let load = frames as f64 / (last.0 / 1_200_000) as f64;
        assert!((load - 0.5).abs() < 0.02, "load {load}");
    }

    #[test]
    fn zero_load_never_arrives_and_seeds_differ() {
        assert_eq!(gen(0.0, None, 1).next, SimTime::NEVER);
        let a: Vec<_> = (0..10)
            .map({
                let mut g = gen(0.5, None, 1);
                move |_| g.pop_arrival()
            })
            .collect();
        let b: Vec<_> = (0..10)
            .map({
                let mut g = gen(0.5, None, 2);
                move |_| g.pop_arrival()
            })
            .collect();
        assert_ne!(a, b);
    }
}
