//! The pending-event set: a monotone radix heap over integer-picosecond times with exact FIFO
//! order among equal times (DESIGN.md "Performance targets": no event list whose cost grows with
//! the number of pending events).
//!
//! A discrete-event simulator never schedules into the past, so the keys pushed are never below
//! the last key popped. A radix heap exploits that: bucket `b` holds the events whose time first
//! differs from `last` (the time of the latest pop) in bit `b - 1`; bucket 0 holds the events at
//! exactly `last`, in push order. A pop takes bucket 0's front; when bucket 0 is empty the first
//! non-empty bucket is scanned for its minimum time, which becomes `last`, and its events are
//! redistributed into lower buckets. An event moves down at most 64 times in its life, so
//! push and pop cost O(1) amortised in the number of pending events (O(log of the time span)).
//!
//! FIFO ties are exact: every bucket is a vector in push order (redistribution only ever fills
//! empty buckets, in order), and events of equal time always share a bucket, so among equal
//! times the pop order is the push order — the same sequence the former `(time, seq)` binary
//! heap produced, hence bit-identical runs.

use super::Event;
use crate::time::SimTime;

#[derive(Clone, Copy, Debug)]
struct Entry {
    time: u64,
    event: Event,
}

/// Buckets 1..=64 (index = bit length of `time ^ last`); bucket 0 is `now`.
const BUCKETS: usize = 65;

/// The pending-event set.
#[derive(Debug)]
pub struct EventQueue {
    /// Events at exactly `last`, FIFO: `now[head..]` are pending. A vector read from a cursor
    /// (emptied when the cursor reaches its end) costs less per push and pop than a ring.
    now: Vec<Entry>,
    head: usize,
    /// `buckets[b]` for b in 1..=64; `buckets[0]` is unused (kept so indices read as the spec).
    /// An array, so that a bucket index (a bit length, at most 64) needs no bounds check.
    buckets: [Vec<Entry>; BUCKETS],
    /// Bit `b` set ⇔ `buckets[b]` is non-empty.
    occupied: u128,
    /// The time of the latest pop (the simulated now); no push may be earlier.
    last: u64,
    len: usize,
}

impl Default for EventQueue {
    fn default() -> Self {
        Self {
            now: Vec::new(),
            head: 0,
            buckets: std::array::from_fn(|_| Vec::new()),
            occupied: 0,
            last: 0,
            len: 0,
        }
    }
}

impl EventQueue {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline(always)]
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

    /// Schedule `event` at `time`, which must not be earlier than the latest pop (the simulator
    /// never schedules into the past). O(1). Always inlined: an event built at the call site and
    /// handed over by reference would be reloaded as one wide load over narrower stores, a
    /// store-forwarding stall on every push (perf showed it as half of `push`).
    #[inline(always)]
    pub fn push(&mut self, time: SimTime, event: Event) {
        assert!(
            time.0 >= self.last,
            "event scheduled in the past: {} < {}",
            time.0,
            self.last
        );
        self.len += 1;
        self.place(Entry {
            time: time.0,
            event,
        });
    }

    /// Make `now` non-empty if any event is pending: advance `last` to the earliest pending time.
    #[inline]
    fn settle(&mut self) {
        if self.now.is_empty() && self.occupied != 0 {
            self.refill();
        }
    }

    /// `now` is empty and some bucket is not: take the lowest non-empty bucket, make its
    /// earliest time `last` and redistribute its events below it — or, when they all share that
    /// time (times on a grid make this the common case), make the bucket itself `now`: the
    /// same events in the same order, without moving them. Out of line: the common pop finds
    /// `now` non-empty and stays a few instructions.
    #[inline(never)]
    fn refill(&mut self) {
        let b = self.occupied.trailing_zeros() as usize;
        self.occupied &= !(1 << b);
        let (min, max) = self.buckets[b].iter().fold((u64::MAX, 0), |(lo, hi), e| {
            (lo.min(e.time), hi.max(e.time))
        });
        self.last = min;
        if min == max {
            // one instant (common: times on a grid): the bucket, in push order, becomes `now`
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

    /// The next event at `last`, if any; the vector is emptied as its last event is taken (so
    /// `now` is empty exactly when no event at `last` is pending).
    #[inline(always)]
    fn take_now(&mut self) -> Option<Entry> {
        let e = *self.now.get(self.head)?;
        self.head += 1;
        if self.head == self.now.len() {
            self.now.clear();
            self.head = 0;
        }
        Some(e)
    }

    /// The event `ahead` places after the next one at the current instant (0: the next), if the
    /// instant holds that many more (without taking any).
    #[inline(always)]
    pub fn peek_now(&self, ahead: usize) -> Option<Event> {
        self.now.get(self.head + ahead).map(|e| e.event)
    }

    /// The time of the earliest event, if any. O(1) amortised.
    #[inline]
    pub fn peek_time(&mut self) -> Option<SimTime> {
        self.settle();
        self.now.get(self.head).map(|e| SimTime(e.time))
    }

    /// Remove and return the earliest event (FIFO among equal times). O(1) amortised.
    #[inline]
    pub fn pop(&mut self) -> Option<(SimTime, Event)> {
        self.settle();
        let e = self.take_now()?;
        self.len -= 1;
        Some((SimTime(e.time), e.event))
    }

    /// Remove and return the earliest event if it is earlier than `until` (the event loop's one
    /// call per event; equivalent to `peek_time` then `pop`).
    #[inline]
    pub fn pop_before(&mut self, until: SimTime) -> Option<(SimTime, Event)> {
        self.settle();
        // every event in `now` is at `last`
        if self.last >= until.0 {
            return None;
        }
        let e = self.take_now()?;
        self.len -= 1;
        Some((SimTime(e.time), e.event))
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

    #[test]
    fn pops_in_time_order_and_fifo_on_ties() {
        let mut q = EventQueue::new();
        q.push(SimTime(30), ev(0));
        q.push(SimTime(10), ev(1));
        q.push(SimTime(20), ev(2));
        q.push(SimTime(10), ev(3));
        q.push(SimTime(10), ev(4));
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
        assert_eq!(q.peek_now(0), None, "nothing popped yet: no current instant");
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
