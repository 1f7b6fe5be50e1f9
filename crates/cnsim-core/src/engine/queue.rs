//! A FIFO-stable binary min-heap of events keyed by (time, insertion sequence).
//!
//! Ties at equal time pop in insertion order (like SimPy's `(time, priority, eid)` and nexosim's
//! `(key, epoch)`), so a run is a pure function of its inputs. `push` and `pop` are O(log n);
//! the heap holds one entry per pending event, a few per port, so it stays small.

use std::collections::BinaryHeap;

use super::Event;
use crate::time::SimTime;

/// Key = time << 64 | sequence: one integer comparison orders by time, then FIFO.
#[derive(Clone, Copy, Debug)]
struct Entry {
    key: u128,
    event: Event,
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Entry {
    /// Reversed, so that std's max-heap pops the earliest key.
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        other.key.cmp(&self.key)
    }
}

/// The pending-event set.
#[derive(Debug, Default)]
pub struct EventQueue {
    heap: BinaryHeap<Entry>,
    seq: u64,
}

impl EventQueue {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// Schedule `event` at `time`. O(log n).
    #[inline]
    pub fn push(&mut self, time: SimTime, event: Event) {
        let key = ((time.0 as u128) << 64) | self.seq as u128;
        self.seq += 1;
        self.heap.push(Entry { key, event });
    }

    /// The time of the earliest event, if any. O(1).
    #[inline]
    pub fn peek_time(&self) -> Option<SimTime> {
        self.heap.peek().map(|e| SimTime((e.key >> 64) as u64))
    }

    /// Remove and return the earliest event (FIFO among equal times). O(log n), with std's
    /// sift-to-the-bottom pop (one comparison per level).
    #[inline]
    pub fn pop(&mut self) -> Option<(SimTime, Event)> {
        self.heap
            .pop()
            .map(|e| (SimTime((e.key >> 64) as u64), e.event))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(port: u32) -> Event {
        Event::TxDone { port }
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
    }

    #[test]
    fn matches_a_sorted_reference_on_random_input() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(7);
        let mut q = EventQueue::new();
        let mut reference = Vec::new();
        let mut seq = 0u32;
        for round in 0..2000 {
            let n = rng.gen_range(0..4);
            for _ in 0..n {
                let t = rng.gen_range(0..50u64) + round;
                q.push(SimTime(t), ev(seq));
                reference.push((t, seq));
                seq += 1;
            }
            if rng.gen_bool(0.6) {
                reference.sort();
                if let Some((t, s)) = (!reference.is_empty()).then(|| reference.remove(0)) {
                    assert_eq!(q.pop(), Some((SimTime(t), ev(s))));
                } else {
                    assert_eq!(q.pop(), None);
                }
            }
        }
        reference.sort();
        for (t, s) in reference {
            assert_eq!(q.pop(), Some((SimTime(t), ev(s))));
        }
        assert!(q.is_empty());
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
        let mut seq = 0u32;
        for round in 0..200_000u64 {
            if rng.gen_bool(0.52) || reference.is_empty() {
                let t = round / 8 + rng.gen_range(0..2_000u64);
                q.push(SimTime(t), ev(seq));
                reference.push(Reverse((t, seq)));
                seq += 1;
            } else {
                let Reverse((t, s)) = reference.pop().unwrap();
                assert_eq!(q.pop(), Some((SimTime(t), ev(s))));
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
