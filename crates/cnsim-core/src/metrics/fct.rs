//! Flow completion times of finite flows (TG-GEO, scenarios.md §1.3): a flow's FCT is the delivery
//! time of its last frame minus its arrival (the generation time of its first frame). A flow that
//! loses a frame never completes; one unfinished at the end of the run is incomplete too
//! (contract: `fct_ms`). Only flows in progress hold a slot.

use crate::time::SimTime;

pub use crate::frame::NO_FLOW;

#[derive(Clone, Copy, Debug)]
struct Flow {
    arrival: SimTime,
    remaining: u32,
    lost: bool,
}

#[derive(Debug, Default)]
pub struct FlowTracker {
    slots: Vec<Flow>,
    free: Vec<u32>,
    /// Completion times (ps) of the flows that completed, in completion order.
    pub fcts: Vec<u64>,
    /// Flows that lost a frame.
    pub lost: u64,
    pub started: u64,
}

impl FlowTracker {
    /// A flow of `frames` frames arrived at `t`.
    pub fn start(&mut self, t: SimTime, frames: u32) -> u32 {
        self.started += 1;
        let f = Flow {
            arrival: t,
            remaining: frames,
            lost: false,
        };
        match self.free.pop() {
            Some(i) => {
                self.slots[i as usize] = f;
                i
            }
            None => {
                self.slots.push(f);
                self.slots.len() as u32 - 1
            }
        }
    }

    /// One frame of flow `id` was delivered at `t` (`delivered`) or lost.
    pub fn frame_done(&mut self, id: u32, t: SimTime, delivered: bool) {
        let f = &mut self.slots[id as usize];
        f.remaining -= 1;
        f.lost |= !delivered;
        if f.remaining == 0 {
            if f.lost {
                self.lost += 1;
            } else {
                self.fcts.push(t.0 - f.arrival.0);
            }
            self.free.push(id);
        }
    }

    /// `fct_ms`: mean, p50, p99 over completed flows; incomplete = lost or unfinished.
    pub fn summary(&self) -> super::summary::FctStats {
        let mut ms: Vec<f64> = self.fcts.iter().map(|&ps| ps as f64 / 1e9).collect();
        ms.sort_by(f64::total_cmp);
        let pct = |p: f64| -> f64 {
            if ms.is_empty() {
                return 0.0;
            }
            // nearest rank
            let rank = ((p * ms.len() as f64).ceil() as usize).clamp(1, ms.len());
            ms[rank - 1]
        };
        let mean = if ms.is_empty() {
            0.0
        } else {
            ms.iter().sum::<f64>() / ms.len() as f64
        };
        let completed = self.fcts.len() as u64;
        super::summary::FctStats {
            mean,
            p50: pct(0.5),
            p99: pct(0.99),
            completed,
            incomplete: self.started - completed,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn completion_loss_and_percentiles() {
        let mut t = FlowTracker::default();
        let a = t.start(SimTime::ms(1), 2);
        let b = t.start(SimTime::ms(2), 1);
        let c = t.start(SimTime::ms(3), 2);
        t.frame_done(a, SimTime::ms(4), true);
        t.frame_done(b, SimTime::ms(3), true); // 1 ms
        t.frame_done(a, SimTime::ms(5), true); // 4 ms
        t.frame_done(c, SimTime::ms(6), false);
        let _d = t.start(SimTime::ms(7), 3); // reuses a slot, never finishes
        let s = t.summary();
        assert_eq!(s.completed, 2);
        assert_eq!(s.incomplete, 2, "one lost, one still in progress");
        assert_eq!(s.mean, 2.5);
        assert_eq!(s.p50, 1.0);
        assert_eq!(s.p99, 4.0);
        assert_eq!(t.slots.len(), 3);
    }
}
