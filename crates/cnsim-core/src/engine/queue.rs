//! The pending-event set: a timing wheel of fixed-width slots over integer-picosecond times, in
//! front of a monotone radix heap for the events beyond the wheel's reach, with exact FIFO order
//! among equal times (DESIGN.md "Performance targets": no event list whose cost grows with the
//! number of pending events).
//!
//! A discrete-event simulator never schedules into the past, and nearly every event it
//! schedules lies a transmission or a propagation delay ahead: microseconds. The wheel holds
//! the next [`SLOTS`] slots of `2^slot_bits` ps each. A push into one of them appends to that
//! slot's vector (push order); when a slot becomes the current one it is sorted by time — a
//! stable sort, so that equal times keep their push order, and skipped when the slot already is
//! in order (one instant, the common case with times on a grid). A push into the current slot
//! is inserted after every pending event of a time not later. Events beyond the wheel's reach
//! wait in the radix heap and move into the wheel, in (time, push) order, as soon as the wheel
//! comes to cover their slot — before any later push can reach that slot, so equal times still
//! pop in push order. Push and pop cost O(1) amortised whatever the number of pending events;
//! the slot width is chosen from the network (a transmission plus a propagation delay within
//! reach, a transmission over at least 4 slots: [`EventQueue::with_reach`]) and changes only
//! the speed, never the order.
//!
//! The radix heap (the whole queue until stop 35): bucket `b` holds the events whose time first
//! differs from `last` (the time of its latest pop) in bit `b - 1`; bucket 0 holds the events
//! at exactly `last`, in push order. A pop takes bucket 0's front; when bucket 0 is empty the
//! first non-empty bucket is scanned for its minimum time, which becomes `last`, and its events
//! are redistributed into lower buckets. An event moves down at most 64 times in its life.
//!
//! FIFO ties are exact in both: the pop order is the (time, push order) order the former binary
//! heap produced, hence bit-identical runs.

use super::Event;
use crate::time::SimTime;

#[derive(Clone, Copy, Debug)]
struct Entry {
    time: u64,
    event: Event,
}

/// Slots of the wheel: the current one and `SLOTS - 1` ahead. Few enough that the slots' vectors
/// stay in cache; with 65.5 ns slots (10 Gb/s, 1 us links) the reach is 8.3 us.
const SLOTS: usize = 128;
const WORDS: usize = SLOTS / 64;
/// The slot width when nothing is known of the network: 2^16 ps.
const DEFAULT_SLOT_BITS: u32 = 16;
/// A data frame's transmission spans at least this many slots ([`EventQueue::with_reach`]).
const MIN_SLOTS_PER_TRANSMISSION: u64 = 4;
/// The widest slot, 2^28 ps (268 us). A slot keeps the capacity of the most events it ever
/// held, and every slot of the ring comes to hold a slot's worth: links so slow that one
/// transmission outlasts the run (1 bit/s) made slots as wide as the run, and 10 simulated
/// seconds of deadlock checks every 250 ns (the shortest period) held 1 GB; at this width a slot
/// holds at most about 1,100 of them. Only transmissions longer than 1 ms (1500 B below 11
/// Mb/s) reach it: 10 Gb/s slots are 2^18 ps, 1 Gb/s ones 2^21.
const MAX_SLOT_BITS: u32 = 28;

/// The pending-event set.
#[derive(Debug)]
pub struct EventQueue {
    /// The current slot's events in (time, push) order; `cur[head..]` are pending.
    cur: Vec<Entry>,
    head: usize,
    /// The slot `cur` holds (time >> `slot_bits`).
    cur_slot: u64,
    slot_bits: u32,
    /// Slots `cur_slot + 1 ..= cur_slot + SLOTS - 1`, each in push order, at index slot % SLOTS.
    ring: [Vec<Entry>; SLOTS],
    /// Bit `i` set ⇔ `ring[i]` is non-empty.
    bits: [u64; WORDS],
    /// The events beyond the ring, and the earliest of their times (None if none): kept here
    /// because the heap may only be asked for its minimum by a pop (see `RadixHeap`).
    far: RadixHeap,
    far_min: Option<u64>,
    /// The time of the latest pop (the simulated now); no push may be earlier.
    last: u64,
    len: usize,
}

impl Default for EventQueue {
    fn default() -> Self {
        Self::with_slot_bits(DEFAULT_SLOT_BITS)
    }
}

impl EventQueue {
    pub fn new() -> Self {
        Self::default()
    }

    /// A queue whose wheel reaches at least `reach` ahead of the current slot (twice the longest
    /// transmission plus propagation delay of the network), with the narrowest slots that do —
    /// but no wider than a quarter of `shortest` (the shortest data-frame transmission).
    ///
    /// Most events lie one transmission ahead. Were the slots wider than that, those events
    /// would land in the current slot, each one inserted into its sorted vector with a move of
    /// what follows: long links (1 ms on a 2,048-host tree: 16.7 us slots, 1.2 us
    /// transmissions) made every transmission end such an insert into a slot of a hundred
    /// thousand events, and the run 60 times slower. The events beyond the narrower wheel's
    /// reach wait in the radix heap instead, at O(1) amortised.
    pub fn with_reach(reach: SimTime, shortest: SimTime) -> Self {
        let per_slot = reach.0.div_ceil(SLOTS as u64 - 1).max(1);
        let reach_bits = per_slot.next_power_of_two().trailing_zeros();
        let finest_bits = (shortest.0 / MIN_SLOTS_PER_TRANSMISSION).max(1).ilog2();
        Self::with_slot_bits(reach_bits.min(finest_bits).min(MAX_SLOT_BITS))
    }

    fn with_slot_bits(slot_bits: u32) -> Self {
        Self {
            cur: Vec::new(),
            head: 0,
            cur_slot: 0,
            slot_bits,
            ring: std::array::from_fn(|_| Vec::new()),
            bits: [0; WORDS],
            far: RadixHeap::default(),
            far_min: None,
            last: 0,
            len: 0,
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Schedule `event` at `time`, which must not be earlier than the latest pop (the simulator
    /// never schedules into the past). O(1). Always inlined: an event built at the call site and
    /// handed over by reference would be reloaded as one wide load over narrower stores, a
    /// store-forwarding stall on every push.
    #[inline(always)]
    pub fn push(&mut self, time: SimTime, event: Event) {
        assert!(
            time.0 >= self.last,
            "event scheduled in the past: {} < {}",
            time.0,
            self.last
        );
        self.len += 1;
        let e = Entry {
            time: time.0,
            event,
        };
        let slot = time.0 >> self.slot_bits;
        if slot <= self.cur_slot {
            self.insert_current(e);
        } else if slot - self.cur_slot < SLOTS as u64 {
            self.put(slot, e);
        } else {
            self.far_min = Some(self.far_min.map_or(e.time, |m| m.min(e.time)));
            self.far.push(e);
        }
    }

    #[inline(always)]
    fn put(&mut self, slot: u64, e: Entry) {
        let i = slot as usize % SLOTS;
        self.ring[i].push(e);
        self.bits[i / 64] |= 1 << (i % 64);
    }

    /// An event of the current slot (or, after a look ahead that found it empty, of an earlier
    /// one: every pending event is later): after every pending event of a time not later.
    #[inline(always)]
    fn insert_current(&mut self, e: Entry) {
        let mut i = self.cur.len();
        while i > self.head && self.cur[i - 1].time > e.time {
            i -= 1;
        }
        self.cur.insert(i, e);
    }

    /// `cur` is spent: make the next non-empty slot current, moving the far events it now
    /// reaches into the ring first. False if nothing is pending. Out of line: a pop usually
    /// finds `cur` non-empty.
    #[inline(never)]
    fn advance(&mut self) -> bool {
        self.cur.clear();
        self.head = 0;
        let far_slot = self.far_min.map(|t| t >> self.slot_bits);
        let next = match (self.next_ring_slot(), far_slot) {
            (Some(a), Some(b)) => a.min(b),
            (a, b) => match a.or(b) {
                Some(s) => s,
                None => return false,
            },
        };
        self.cur_slot = next;
        let reach = next.saturating_add(SLOTS as u64);
        while self.far_min.is_some_and(|t| t >> self.slot_bits < reach) {
            let e = self.far.pop().expect("far_min names a pending event");
            self.put(e.time >> self.slot_bits, e);
            self.far_min = self.far.min_time();
        }
        let i = next as usize % SLOTS;
        self.bits[i / 64] &= !(1 << (i % 64));
        std::mem::swap(&mut self.cur, &mut self.ring[i]);
        sort_slot(&mut self.cur);
        true
    }

    /// The first non-empty slot of the ring after the current one.
    fn next_ring_slot(&self) -> Option<u64> {
        // (wrapping: at the last slot of time no bit can be set, and none is returned)
        let start = self.cur_slot.wrapping_add(1) as usize % SLOTS;
        // the ring's bits from `start` on, then those before it
        for k in 0..=WORDS {
            let w = (start / 64 + k) % WORDS;
            let mut word = self.bits[w];
            if k == 0 {
                word &= !0u64 << (start % 64);
            } else if k == WORDS {
                word &= (1u64 << (start % 64)).wrapping_sub(1);
            }
            if word != 0 {
                let i = w * 64 + word.trailing_zeros() as usize;
                return Some(self.cur_slot + 1 + ((i + SLOTS - start) % SLOTS) as u64);
            }
        }
        None
    }

    /// Make `cur` hold the earliest pending event, if any.
    #[inline(always)]
    fn settle(&mut self) -> bool {
        self.head < self.cur.len() || self.advance()
    }

    #[inline(always)]
    fn take(&mut self) -> (SimTime, Event) {
        let e = self.cur[self.head];
        self.head += 1;
        self.last = e.time;
        self.len -= 1;
        (SimTime(e.time), e.event)
    }

    /// The event `ahead` places after the next one at the current instant (0: the next), if the
    /// instant holds that many more (without taking any).
    #[inline(always)]
    pub fn peek_now(&self, ahead: usize) -> Option<Event> {
        self.cur
            .get(self.head + ahead)
            .filter(|e| e.time == self.last)
            .map(|e| e.event)
    }

    /// The time of the earliest event, if any. O(1) amortised.
    pub fn peek_time(&mut self) -> Option<SimTime> {
        self.settle().then(|| SimTime(self.cur[self.head].time))
    }

    /// Remove and return the earliest event (FIFO among equal times). O(1) amortised.
    pub fn pop(&mut self) -> Option<(SimTime, Event)> {
        self.settle().then(|| self.take())
    }

    /// Remove and return the earliest event if it is earlier than `until` (the event loop's one
    /// call per event; equivalent to `peek_time` then `pop`).
    #[inline]
    pub fn pop_before(&mut self, until: SimTime) -> Option<(SimTime, Event)> {
        if !self.settle() || self.cur[self.head].time >= until.0 {
            return None;
        }
        Some(self.take())
    }
}

/// Slots up to this long are put in order by insertion; longer ones by the standard library's
/// stable sort.
const INSERTION_SORT_MAX: usize = 64;

/// Put a slot's events in time order, equal times in push order (a stable sort by time).
///
/// A slot is usually in order already — one instant, or times on a grid pushed as they come —
/// or nearly so: a scheme's timer or control frame pushed after events later than it. One
/// insertion pass both checks the order and moves such an event back, where the standard sort
/// (its run detection, then a quicksort of the whole slot beyond 20 events) cost schemes with
/// timers 1–3 % of their instructions. Beyond `INSERTION_SORT_MAX` events an insertion pass
/// could cost the square of the length, and the standard sort takes over.
fn sort_slot(v: &mut [Entry]) {
    if v.len() > INSERTION_SORT_MAX {
        if v.windows(2).any(|w| w[0].time > w[1].time) {
            v.sort_by_key(|e| e.time);
        }
        return;
    }
    for i in 1..v.len() {
        let e = v[i];
        if e.time < v[i - 1].time {
            // after every earlier event of a time not later: equal times keep their order
            let mut j = i - 1;
            while j > 0 && v[j - 1].time > e.time {
                j -= 1;
            }
            v.copy_within(j..i, j + 1);
            v[j] = e;
        }
    }
}

/// Buckets 1..=64 (index = bit length of `time ^ last`); bucket 0 is `now`.
const BUCKETS: usize = 65;

/// The events beyond the wheel's reach: a monotone radix heap. Its `last` moves only when a
/// pop refills bucket 0, and every push must be at `last` or later: so its minimum is looked at
/// ([`RadixHeap::min_time`]) without refilling, since a later push may still be earlier than it.
#[derive(Debug)]
struct RadixHeap {
    /// Events at exactly `last`, FIFO: `now[head..]` are pending.
    now: Vec<Entry>,
    head: usize,
    /// `buckets[b]` for b in 1..=64; `buckets[0]` is unused. An array, so that a bucket index
    /// (a bit length, at most 64) needs no bounds check.
    buckets: [Vec<Entry>; BUCKETS],
    /// Bit `b` set ⇔ `buckets[b]` is non-empty.
    occupied: u128,
    /// The time of the latest pop; no push may be earlier.
    last: u64,
}

impl Default for RadixHeap {
    fn default() -> Self {
        Self {
            now: Vec::new(),
            head: 0,
            buckets: std::array::from_fn(|_| Vec::new()),
            occupied: 0,
            last: 0,
        }
    }
}

impl RadixHeap {
    fn place(&mut self, e: Entry) {
        let diff = e.time ^ self.last;
        if diff == 0 {
            self.now.push(e);
        } else {
            let b = (64 - diff.leading_zeros()) as usize;
            self.buckets[b].push(e);
            self.occupied |= 1 << b;
        }
    }

    fn push(&mut self, e: Entry) {
        debug_assert!(e.time >= self.last, "the far heap is monotone");
        self.place(e);
    }

    /// The earliest pending time, without moving `last`: bucket 0's, else the minimum of the
    /// lowest non-empty bucket.
    fn min_time(&self) -> Option<u64> {
        if self.head < self.now.len() {
            return Some(self.last);
        }
        if self.occupied == 0 {
            return None;
        }
        let b = self.occupied.trailing_zeros() as usize;
        self.buckets[b].iter().map(|e| e.time).min()
    }

    /// `now` is empty and some bucket is not: take the lowest non-empty bucket, make its
    /// earliest time `last` and redistribute its events below it — or, when they all share that
    /// time, make the bucket itself `now`: the same events in the same order, without moving them.
    fn refill(&mut self) {
        let b = self.occupied.trailing_zeros() as usize;
        self.occupied &= !(1 << b);
        let (min, max) = self.buckets[b].iter().fold((u64::MAX, 0), |(lo, hi), e| {
            (lo.min(e.time), hi.max(e.time))
        });
        self.last = min;
        if min == max {
            std::mem::swap(&mut self.now, &mut self.buckets[b]);
            return;
        }
        let mut bucket = std::mem::take(&mut self.buckets[b]);
        for &e in &bucket {
            self.place(e);
        }
        bucket.clear();
        self.buckets[b] = bucket; // keep its capacity
    }

    /// Remove and return the earliest event (FIFO among equal times).
    fn pop(&mut self) -> Option<Entry> {
        if self.head == self.now.len() {
            self.now.clear();
            self.head = 0;
            if self.occupied == 0 {
                return None;
            }
            self.refill();
        }
        let e = self.now[self.head];
        self.head += 1;
        Some(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;

    fn ev(port: u32) -> Event {
        Event::TxDone {
            port,
            frame: crate::wire::FrameId(port),
        }
    }

    /// Links so slow that a transmission outlasts the run: the slots stop at 2^28 ps, so a
    /// slot holds at most its width's worth of events (a slot as wide as the run once kept every
    /// event of the run, and the ring's slots as much capacity each); order is kept throughout.
    #[test]
    fn the_slots_of_the_slowest_links_are_spent_and_do_not_pile_up() {
        let transmission = SimTime(12_000 * crate::time::PS_PER_S); // 1500 B at 1 bit/s
        let mut q = EventQueue::with_reach(SimTime(2 * transmission.0), transmission);
        assert_eq!(q.slot_bits, MAX_SLOT_BITS);
        q.push(transmission, ev(7)); // pending all along
        let step = 250_000; // a deadlock check every 250 ns, for a simulated second
        q.push(SimTime(0), ev(0));
        let mut most = 0;
        for k in 1..4_000_000u64 {
            let (t, e) = q.pop().expect("pending");
            assert_eq!(
                (t, e),
                (SimTime((k - 1) * step), ev(if k == 1 { 0 } else { 1 }))
            );
            q.push(SimTime(k * step), ev(1));
            most = most.max(q.cur.len());
        }
        assert!(
            most <= (1 << MAX_SLOT_BITS) / step as usize + 2,
            "{most} events held"
        );
        assert_eq!(q.pop(), Some((SimTime(3_999_999 * step), ev(1))));
        assert_eq!(q.pop(), Some((transmission, ev(7))));
        assert_eq!(q.pop(), None);
    }

    #[test]
    fn a_slot_is_sorted_stably_at_every_length() {
        // both branches of `sort_slot` (insertion up to INSERTION_SORT_MAX, the standard sort
        // beyond), against the standard stable sort: few distinct times (many ties), nearly
        // sorted slots with a few late pushes, and reversed ones (the insertion's worst case)
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(7);
        for len in 0..=2 * INSERTION_SORT_MAX + 1 {
            for shape in 0..4 {
                let mut v: Vec<Entry> = (0..len)
                    .map(|k| Entry {
                        time: match shape {
                            0 => rng.gen_range(0..4),
                            1 => rng.gen_range(0..1_000),
                            2 if rng.gen_bool(0.1) => rng.gen_range(0..len as u64 * 10 + 1),
                            2 => k as u64 * 10,
                            _ => (len - k) as u64 / 2,
                        },
                        event: ev(k as u32),
                    })
                    .collect();
                let mut expected = v.clone();
                expected.sort_by_key(|e| e.time);
                sort_slot(&mut v);
                let key = |e: &Entry| (e.time, e.event);
                assert_eq!(
                    v.iter().map(key).collect::<Vec<_>>(),
                    expected.iter().map(key).collect::<Vec<_>>(),
                    "length {len}, shape {shape}"
                );
            }
        }
    }

    #[test]
    fn pops_in_time_order_and_fifo_on_ties() {
        let mut q = EventQueue::new();
        q.push(SimTime(30), ev(0));
        q.push(SimTime(10), ev(1));
        q.push(SimTime(20), ev(2));
        q.push(SimTime(10), ev(3));
        q.push(SimTime(10), ev(4));
        assert!(!q.is_empty() && q.len() == 5);
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            order,
            vec![
                (SimTime(10), ev(1)),
                (SimTime(10), ev(3)),
                (SimTime(10), ev(4)),
                (SimTime(20), ev(2)),
                (SimTime(30), ev(0)),
            ]
        );
        assert!(q.is_empty() && q.peek_time().is_none());
    }

    #[test]
    fn peek_now_shows_the_next_event_of_the_current_instant_only() {
        let mut q = EventQueue::new();
        q.push(SimTime(10), ev(1));
        q.push(SimTime(10), ev(2));
        q.push(SimTime(10), ev(4));
        q.push(SimTime(20), ev(3));
        assert_eq!(
            q.peek_now(0),
            None,
            "nothing popped yet: no current instant"
        );
        assert_eq!(q.pop(), Some((SimTime(10), ev(1))));
        assert_eq!(q.peek_now(0), Some(ev(2)));
        assert_eq!(q.peek_now(1), Some(ev(4)));
        assert_eq!(q.peek_now(2), None, "only the current instant is looked at");
        assert_eq!(q.pop(), Some((SimTime(10), ev(2))), "peeking takes nothing");
        assert_eq!(q.peek_now(0), Some(ev(4)));
        assert_eq!(q.pop(), Some((SimTime(10), ev(4))));
        assert_eq!(q.peek_now(0), None, "the next event is at a later instant");
        assert_eq!(q.pop(), Some((SimTime(20), ev(3))));
    }

    #[test]
    fn ties_pushed_before_and_after_a_pop_stay_fifo() {
        let mut q = EventQueue::new();
        q.push(SimTime(100), ev(0));
        q.push(SimTime(5), ev(1));
        assert_eq!(q.pop(), Some((SimTime(5), ev(1))));
        q.push(SimTime(100), ev(2)); // same time as ev(0), pushed later, from a different `last`
        q.push(SimTime(5), ev(3)); // at exactly now
        q.push(SimTime(100), ev(4));
        let order: Vec<_> = std::iter::from_fn(|| q.pop())
            .map(|(t, e)| (t.0, e))
            .collect();
        assert_eq!(
            order,
            vec![(5, ev(3)), (100, ev(0)), (100, ev(2)), (100, ev(4))]
        );
    }

    /// The slot width changes the speed, never the order: the same random sequences (ties, the
    /// current slot, the ring, far beyond it, the end of time) against the reference heap, from
    /// one-picosecond slots to slots wider than any delay.
    #[test]
    fn every_slot_width_pops_in_the_reference_order() {
        for slot_bits in [0, 3, 10, 16, 22, 40, 48] {
            let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(u64::from(slot_bits));
            let mut q = EventQueue::with_slot_bits(slot_bits);
            let mut reference = BinaryHeap::new();
            let (mut now, mut seq) = (0u64, 0u32);
            for _ in 0..20_000 {
                if rng.gen_bool(0.5) || reference.is_empty() {
                    let t = match rng.gen_range(0..6) {
                        0 => now,
                        1 => now.saturating_add(rng.gen_range(0..1 << slot_bits.min(40))),
                        2 => now.saturating_add(rng.gen_range(0..2_400_000)),
                        3 => now.saturating_add(rng.gen_range(0..(200u64 << slot_bits.min(40)))),
                        4 => now.saturating_add(rng.gen_range(0..1u64 << 50)),
                        _ => u64::MAX - rng.gen_range(0..2),
                    }
                    .max(now);
                    q.push(SimTime(t), ev(seq));
                    reference.push(Reverse((t, seq)));
                    seq += 1;
                } else {
                    let Reverse((t, s)) = reference.pop().unwrap();
                    assert_eq!(q.peek_time(), Some(SimTime(t)), "slot_bits {slot_bits}");
                    assert_eq!(q.pop(), Some((SimTime(t), ev(s))), "slot_bits {slot_bits}");
                    now = t;
                }
                assert_eq!(q.len(), reference.len());
            }
            while let Some(Reverse((t, s))) = reference.pop() {
                assert_eq!(q.pop(), Some((SimTime(t), ev(s))), "slot_bits {slot_bits}");
            }
            assert!(q.is_empty() && q.pop().is_none());
        }
    }

    #[test]
    fn the_wheel_reaches_the_delay_it_is_built_for() {
        for reach in [1, 127, 2_200_000, 12_000_000 + 500_000_000, u64::MAX / 2] {
            let q = EventQueue::with_reach(SimTime(reach), SimTime::NEVER);
            // (a reach beyond what the widest slots cover gets the widest slots)
            assert!(
                (SLOTS as u128 - 1) << q.slot_bits >= u128::from(reach)
                    || q.slot_bits == MAX_SLOT_BITS,
                "{reach}"
            );
            let narrower = q.slot_bits.checked_sub(1).map(|b| (SLOTS as u128 - 1) << b);
            assert!(
                narrower.is_none_or(|r| r < u128::from(reach)),
                "{reach}: the narrowest slots"
            );
        }
        // 10 Gb/s and 1 us links: a 1500 B frame's transmission and propagation within reach
        assert_eq!(
            EventQueue::with_reach(SimTime(2_200_000), SimTime::NEVER).slot_bits,
            15
        );
    }

    #[test]
    fn a_transmission_spans_four_slots_whatever_the_reach() {
        // the network's rule: reach twice the longest hop, a 1.2 us transmission over 4 slots
        let build = |delay_ps: u64| {
            EventQueue::with_reach(SimTime(2 * (1_200_000 + delay_ps)), SimTime(1_200_000))
        };
        // 1 us links: 65.5 ns slots reach 8.3 us, and a transmission spans 18 of them
        assert_eq!(build(1_000_000).slot_bits, 16);
        // 10 us links: 262 ns slots reach 33 us, 4.6 to a transmission
        assert_eq!(build(10_000_000).slot_bits, 18);
        // 250 us and 1 ms links: the reach alone would take 4.2 and 16.8 us slots
        assert_eq!(
            EventQueue::with_reach(SimTime(2 * 1_001_200_000), SimTime::NEVER).slot_bits,
            24
        );
        for delay_ps in [250_000_000, 1_000_000_000] {
            let q = build(delay_ps);
            assert_eq!(q.slot_bits, 18, "{delay_ps} ps links");
            assert!(1_200_000 >> q.slot_bits >= MIN_SLOTS_PER_TRANSMISSION);
        }
        // a degenerate network (no transmission time) still gets slots of 1 ps
        assert_eq!(EventQueue::with_reach(SimTime(0), SimTime(0)).slot_bits, 0);
    }

    /// The ring is searched from the slot after the current one: a slot that wrapped round the
    /// ring's end (index below the start, in the start's own word) lies further ahead than one
    /// at or after the start, and waits for it.
    #[test]
    fn a_slot_wrapped_round_the_ring_waits_for_the_nearer_ones_in_its_word() {
        let mut q = EventQueue::with_slot_bits(0);
        q.push(SimTime(10), ev(0));
        assert_eq!(q.pop(), Some((SimTime(10), ev(0))));
        // the ring starts at index 11; slot 130 is index 2, 120 slots ahead; slot 12 is index 12
        q.push(SimTime(130), ev(1));
        q.push(SimTime(12), ev(2));
        assert_eq!(q.pop(), Some((SimTime(12), ev(2))));
        assert_eq!(q.pop(), Some((SimTime(130), ev(1))));
        assert!(q.is_empty());
    }

    #[test]
    fn far_future_events() {
        let mut q = EventQueue::new();
        q.push(SimTime(u64::MAX), ev(0));
        q.push(SimTime(1 << 40), ev(1));
        q.push(SimTime(0), ev(2));
        assert_eq!(q.peek_time(), Some(SimTime(0)));
        assert_eq!(q.pop(), Some((SimTime(0), ev(2))));
        assert_eq!(q.pop(), Some((SimTime(1 << 40), ev(1))));
        q.push(SimTime(u64::MAX), ev(3));
        assert_eq!(q.pop(), Some((SimTime(u64::MAX), ev(0))));
        assert_eq!(q.pop(), Some((SimTime(u64::MAX), ev(3))));
        assert_eq!(q.len(), 0);
    }

    #[test]
    #[should_panic(expected = "in the past")]
    fn refuses_a_push_into_the_past() {
        let mut q = EventQueue::new();
        q.push(SimTime(10), ev(0));
        q.pop();
        q.push(SimTime(9), ev(1));
    }

    /// Interleaved pushes (never into the past, many ties, some far ahead) and pops against a
    /// reference binary heap keyed by (time, sequence) — the former implementation.
    #[test]
    fn matches_a_reference_binary_heap_on_random_sequences() {
        for seed in 0..20 {
            let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(seed);
            let mut q = EventQueue::new();
            let mut reference = BinaryHeap::new();
            let mut now = 0u64;
            let mut seq = 0u32;
            for _ in 0..5000 {
                for _ in 0..rng.gen_range(0..4) {
                    let t = match rng.gen_range(0..10) {
                        0..=2 => now,
                        3..=7 => now + rng.gen_range(0..64),
                        8 => now + rng.gen_range(0..1 << 20),
                        _ => now + rng.gen_range(0..1u64 << 50),
                    };
                    q.push(SimTime(t), ev(seq));
                    reference.push(Reverse((t, seq)));
                    seq += 1;
                }
                if rng.gen_bool(0.6) {
                    let want = reference.pop().map(|Reverse((t, s))| (SimTime(t), ev(s)));
                    assert_eq!(q.peek_time(), want.map(|w| w.0));
                    if let Some((t, _)) = want {
                        // the event loop's call: nothing at or after the deadline, then the event
                        assert_eq!(q.pop_before(t), None);
                        assert_eq!(q.pop_before(SimTime(t.0 + 1)), want);
                        now = t.0;
                    } else {
                        assert_eq!(q.pop_before(SimTime(u64::MAX)), None);
                    }
                }
                assert_eq!(q.len(), reference.len());
            }
            while let Some(Reverse((t, s))) = reference.pop() {
                assert_eq!(q.pop(), Some((SimTime(t), ev(s))));
            }
            assert!(q.pop().is_none());
        }
    }

    /// Times on a grid, as in the benchmark workloads: most refills find a bucket of one instant
    /// and hand it over whole as the current instant; the order must stay the reference's.
    #[test]
    fn grid_times_keep_fifo_order_when_a_bucket_becomes_the_current_instant() {
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(7);
        let mut q = EventQueue::new();
        let mut reference = BinaryHeap::new();
        let (mut now, mut seq) = (0u64, 0u32);
        for _ in 0..20_000 {
            for _ in 0..rng.gen_range(0..3) {
                let t = now + 1_200_000 * rng.gen_range(0..4) + 1_000_000 * rng.gen_range(0..2);
                q.push(SimTime(t), ev(seq));
                reference.push(Reverse((t, seq)));
                seq += 1;
            }
            if rng.gen_bool(0.55) {
                let want = reference.pop().map(|Reverse((t, s))| (SimTime(t), ev(s)));
                assert_eq!(q.pop(), want);
                if let Some((t, _)) = want {
                    now = t.0;
                }
            }
        }
        while let Some(Reverse((t, s))) = reference.pop() {
            assert_eq!(q.pop(), Some((SimTime(t), ev(s))));
        }
    }

    #[test]
    fn deep_heaps_pop_like_a_binary_heap() {
        // tens of thousands pending, as in a 2,048-host fabric; many equal times
        use rand::{Rng, SeedableRng};
        use std::cmp::Reverse;
        use std::collections::BinaryHeap;
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(11);
        let mut q = EventQueue::new();
        let mut reference = BinaryHeap::new();
        let (mut seq, mut now) = (0u32, 0u64);
        for _ in 0..200_000u64 {
            if rng.gen_bool(0.52) || reference.is_empty() {
                let t = now + rng.gen_range(0..2_000u64); // never into the past
                q.push(SimTime(t), ev(seq));
                reference.push(Reverse((t, seq)));
                seq += 1;
            } else {
                let Reverse((t, s)) = reference.pop().unwrap();
                assert_eq!(q.pop(), Some((SimTime(t), ev(s))));
                now = t;
            }
        }
        assert!(q.len() > 5_000, "the heap got deep: {}", q.len());
        while let Some(Reverse((t, s))) = reference.pop() {
            assert_eq!(q.pop(), Some((SimTime(t), ev(s))));
        }
        assert!(q.is_empty() && q.peek_time().is_none());
    }

    #[test]
    fn buckets_the_far_heap_and_the_window_edge_pop_in_key_order() {
        // times from the same bucket to well beyond the ring's window (268 us), pushed at or
        // after the last popped time, as the simulator does
        use rand::{Rng, SeedableRng};
        use std::cmp::Reverse;
        use std::collections::BinaryHeap;
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(5);
        let mut q = EventQueue::new();
        let mut reference = BinaryHeap::new();
        let (mut now, mut seq) = (0u64, 0u32);
        for _ in 0..100_000 {
            if rng.gen_bool(0.5) || reference.is_empty() {
                let ahead = match rng.gen_range(0..4) {
                    0 => 0,                                  // the same instant
                    1 => rng.gen_range(0..70_000),           // the same or the next bucket
                    2 => rng.gen_range(0..300_000_000),      // up to the window's edge
                    _ => rng.gen_range(0..5_000_000_000u64), // far beyond it
                };
                q.push(SimTime(now + ahead), ev(seq));
                reference.push(Reverse((now + ahead, seq)));
                seq += 1;
            } else {
                let Reverse((t, s)) = reference.pop().unwrap();
                assert_eq!(q.peek_time(), Some(SimTime(t)));
                assert_eq!(q.pop(), Some((SimTime(t), ev(s))));
                now = t;
            }
            assert_eq!(q.len(), reference.len());
        }
        while let Some(Reverse((t, s))) = reference.pop() {
            assert_eq!(q.pop(), Some((SimTime(t), ev(s))));
        }
        assert!(q.is_empty() && q.peek_time().is_none() && q.pop().is_none());
    }
}
