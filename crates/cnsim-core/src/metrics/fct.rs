//! Flow completion times of finite flows (TG-GEO, scenarios.md §1.3): a flow's FCT is the delivery
//! time of its last frame minus its arrival (the generation time of its first frame). A flow that
//! loses a frame never completes; one unfinished at the end of the run is incomplete too
//! (contract: `fct_ms`). Only flows in progress hold a slot.
//!
//! Each flow also records when its last frame left the source adapter (the last bit onto the
//! source link): its *adapter wait* is that instant minus its arrival, so FCT = adapter wait +
//! the last frame's time in the network. S3's "load compression" (T-F06) is a flow whose FCT is
//! mostly adapter wait. Flows into a hot node (the hotspot's node, or the node behind the hot
//! port) are reported apart as `hot`, the others as `cold` (T-F04, T-F05).

use crate::time::SimTime;

pub use crate::frame::NO_FLOW;

#[derive(Clone, Copy, Debug)]
struct Flow {
    arrival: SimTime,
    /// When the last of its frames to leave so far left the source adapter.
    left_adapter: SimTime,
    remaining: u32,
    lost: bool,
    hot: bool,
}

/// Completion time and adapter wait (ps) of the completed flows of one group.
#[derive(Debug, Default)]
pub struct FctGroupRecord {
    pub fcts: Vec<u64>,
    pub waits: Vec<u64>,
    pub started: u64,
}

#[derive(Debug, Default)]
pub struct FlowTracker {
    slots: Vec<Flow>,
    free: Vec<u32>,
    /// Completed flows into a hot node and into every other node, in completion order.
    pub hot: FctGroupRecord,
    pub cold: FctGroupRecord,
    /// Flows that lost a frame.
    pub lost: u64,
    pub started: u64,
    /// Per node: flows into it are hot.
    pub hot_nodes: Vec<bool>,
}

impl FlowTracker {
    /// A tracker whose flows into the nodes flagged in `hot_nodes` are hot.
    pub fn new(hot_nodes: Vec<bool>) -> Self {
        FlowTracker {
            hot_nodes,
            ..FlowTracker::default()
        }
    }

    /// A flow of `frames` frames arrived at `t`; `hot`: its destination is a hot node.
    pub fn start(&mut self, t: SimTime, frames: u32, hot: bool) -> u32 {
        self.started += 1;
        if hot {
            self.hot.started += 1;
        } else {
            self.cold.started += 1;
        }
        let f = Flow {
            arrival: t,
            left_adapter: t,
            remaining: frames,
            lost: false,
            hot,
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

    /// A data frame of flow `id` left the source adapter at `t` (its last bit onto the link).
    #[inline]
    pub fn frame_left_adapter(&mut self, id: u32, t: SimTime) {
        let f = &mut self.slots[id as usize];
        f.left_adapter = f.left_adapter.max(t);
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
                let group = if f.hot { &mut self.hot } else { &mut self.cold };
                group.fcts.push(t.0 - f.arrival.0);
                group.waits.push(f.left_adapter.0 - f.arrival.0);
            }
            self.free.push(id);
        }
    }

    /// `fct_ms`: every completed flow, and the hot and cold groups apart.
    pub fn summary(&self) -> super::summary::FctStats {
        let all = FctGroupRecord {
            fcts: [&self.hot.fcts[..], &self.cold.fcts[..]].concat(),
            waits: [&self.hot.waits[..], &self.cold.waits[..]].concat(),
            started: self.started,
        };
        super::summary::FctStats {
            all: all.summary(),
            hot: self.hot.summary(),
            cold: self.cold.summary(),
        }
    }
}

impl FctGroupRecord {
    /// Mean, p50, p99 of the FCTs (ms, nearest rank), counts, and the mean adapter wait (ms).
    pub fn summary(&self) -> super::summary::FctGroup {
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
        // summed in ascending order, so that the mean does not depend on completion order
        let mean_ms = |v: &[u64]| {
            if v.is_empty() {
                return 0.0;
            }
            let mut ms: Vec<f64> = v.iter().map(|&ps| ps as f64 / 1e9).collect();
            ms.sort_by(f64::total_cmp);
            ms.iter().sum::<f64>() / ms.len() as f64
        };
        let completed = self.fcts.len() as u64;
        super::summary::FctGroup {
            mean: mean_ms(&self.fcts),
            p50: pct(0.5),
            p99: pct(0.99),
            completed,
            incomplete: self.started - completed,
            adapter_wait_ms: mean_ms(&self.waits),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn completion_loss_and_percentiles() {
        let mut t = FlowTracker::default();
        let a = t.start(SimTime::ms(1), 2, false);
        let b = t.start(SimTime::ms(2), 1, false);
        let c = t.start(SimTime::ms(3), 2, false);
        t.frame_done(a, SimTime::ms(4), true);
        t.frame_done(b, SimTime::ms(3), true); // 1 ms
        t.frame_done(a, SimTime::ms(5), true); // 4 ms
        t.frame_done(c, SimTime::ms(6), false);
        t.frame_done(c, SimTime::ms(7), true); // its last frame arrives, but one was lost
        assert_eq!(t.lost, 1);
        let _d = t.start(SimTime::ms(7), 3, false); // reuses a slot, never finishes
        let s = t.summary().all;
        assert_eq!(s.completed, 2);
        assert_eq!(s.incomplete, 2, "one lost, one still in progress");
        assert_eq!(s.mean, 2.5);
        assert_eq!(s.p50, 1.0);
        assert_eq!(s.p99, 4.0);
        assert_eq!(t.slots.len(), 3);
    }

    #[test]
    fn hot_and_cold_flows_and_the_adapter_wait() {
        let mut t = FlowTracker::default();
        let hot = t.start(SimTime::ms(0), 2, true);
        let cold = t.start(SimTime::ms(0), 1, false);
        let never = t.start(SimTime::ms(0), 1, true);
        // the hot flow's frames leave the adapter at 3 and 7 ms (the limiter held them), arrive
        // 1 ms later; the cold one leaves at once
        t.frame_left_adapter(hot, SimTime::ms(3));
        t.frame_left_adapter(hot, SimTime::ms(7));
        t.frame_done(hot, SimTime::ms(4), true);
        t.frame_done(hot, SimTime::ms(8), true);
        t.frame_left_adapter(cold, SimTime::ms(1));
        t.frame_done(cold, SimTime::ms(2), true);
        t.frame_left_adapter(never, SimTime::ms(1));
        let s = t.summary();
        assert_eq!((s.hot.completed, s.hot.incomplete), (1, 1));
        assert_eq!((s.hot.mean, s.hot.adapter_wait_ms), (8.0, 7.0));
        assert_eq!((s.cold.completed, s.cold.incomplete), (1, 0));
        assert_eq!((s.cold.mean, s.cold.adapter_wait_ms), (2.0, 1.0));
        assert_eq!(
            (s.all.completed, s.all.mean, s.all.adapter_wait_ms),
            (2, 5.0, 4.0)
        );
    }
}
