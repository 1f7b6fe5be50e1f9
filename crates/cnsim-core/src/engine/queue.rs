//! A FIFO-stable binary min-heap of events keyed by (time, insertion sequence).
//!
//! Ties at equal time pop in insertion order (like SimPy's `(time, priority, eid)` and nexosim's
//! `(key, epoch)`), so a run is a pure function of its inputs. `push` and `pop` are O(log n);
//! the heap holds one entry per pending event, a few per port, so it stays small.

use super::Event;
use crate::time::SimTime;

#[derive(Clone, Copy, Debug)]
struct Entry {
    time: u64,
    seq: u64,
    event: Event,
}

impl Entry {
    #[inline]
    fn key(&self) -> (u64, u64) {
        (self.time, self.seq)
    }
}

/// The pending-event set.
#[derive(Debug, Default)]
pub struct EventQueue {
    heap: Vec<Entry>,
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
        let entry = Entry { time: time.0, seq: self.seq, event };
        self.seq += 1;
        self.heap.push(entry);
        // sift up with a hole
        let mut i = self.heap.len() - 1;
        while i > 0 {
            let parent = (i - 1) / 2;
            if self.heap[parent].key() <= entry.key() {
                break;
            }
            self.heap[i] = self.heap[parent];
            i = parent;
        }
        self.heap[i] = entry;
    }

    /// The time of the earliest event, if any. O(1).
    pub fn peek_time(&self) -> Option<SimTime> {
        self.heap.first().map(|e| SimTime(e.time))
    }

    /// Remove and return the earliest event (FIFO among equal times). O(log n).
    #[inline]
    pub fn pop(&mut self) -> Option<(SimTime, Event)> {
        let last = self.heap.pop()?;
        if self.heap.is_empty() {
            return Some((SimTime(last.time), last.event));
        }
        let top = self.heap[0];
        // sift the last entry down from the root
        let n = self.heap.len();
        let mut i = 0;
        loop {
            let l = 2 * i + 1;
            if l >= n {
                break;
            }
            let r = l + 1;
            let c = if r < n && self.heap[r].key() < self.heap[l].key() { r } else { l };
            if last.key() <= self.heap[c].key() {
                break;
            }
            self.heap[i] = self.heap[c];
            i = c;
        }
        self.heap[i] = last;
        Some((SimTime(top.time), top.event))
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
}
