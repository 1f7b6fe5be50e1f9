//! The kernel's side of deadlock detection (`net::deadlock`): the wait graph of the transmitters
//! paused for at least the threshold, read from the ports and switches as they are.

use crate::engine::Event;
use crate::metrics::summary::Deadlock;
use crate::net::deadlock::{find_cycle, Waits};
use crate::scenario::BufferModel;
use crate::time::PS_PER_S;
use crate::topology::Device;

use super::Simulator;

impl Simulator {
    /// The periodic check (every quarter threshold while PAUSE is on and nothing is found yet;
    /// a deadlock is then reported at most 1.25 thresholds after its last link paused).
    pub(crate) fn on_deadlock_check(&mut self) -> bool {
        if self.detect_deadlock() {
            return true;
        }
        let next = self.now + crate::time::SimTime((self.deadlock_threshold.0 / 4).max(1));
        if next < self.end {
            self.queue.push(next, Event::DeadlockCheck);
        }
        false
    }

    /// Look for a PAUSE deadlock now, class by class (one class without PFC); record the first
    /// one found. Returns whether one was found.
    pub(crate) fn detect_deadlock(&mut self) -> bool {
        debug_assert_eq!(
            self.paused_transmitters as usize,
            self.ports.iter().filter(|p| p.paused != 0).count(),
            "the count of paused transmitters follows every PAUSE and resume"
        );
        if self.paused_transmitters == 0 {
            return false; // a cycle needs paused transmitters
        }
        let classes = self.switches.first().map_or(1, |s| s.classes) as u8;
        for class in 0..classes {
            if let Some(cycle) = self.paused_cycle(class) {
                self.deadlock = Some(Deadlock {
                    t_s: self.now.0 as f64 / PS_PER_S as f64,
                    cycle: cycle.iter().map(|&p| self.topo.port_name(p)).collect(),
                    class: class.into(),
                });
                return true;
            }
        }
        false
    }

    /// A cycle of transmitters paused for `class` for at least the threshold, each waiting on a
    /// paused egress of the next switch that holds frames of that class it must see leave.
    fn paused_cycle(&self, class: u8) -> Option<Vec<u32>> {
        let now = self.now;
        let long = |since: crate::time::SimTime| {
            now.0.saturating_sub(since.0) >= self.deadlock_threshold.0
        };
        let stuck = |p: usize| {
            let port = &self.ports[p];
            port.class_paused(class) && long(port.class_since[class as usize])
        };
        let mut waits: Waits = vec![Vec::new(); self.ports.len()];
        let mut any = false;
        for (p, port) in self.ports.iter().enumerate() {
            let Device::Switch(y) = port.spec.peer else {
                continue;
            };
            if !stuck(p) {
                continue;
            }
            let input = port.spec.peer_local;
            for &e in &self.switches[y as usize].ports {
                if !stuck(e as usize) {
                    continue;
                }
                // the paused egress holds a frame the paused input waits to see leave
                let Some(queue) = self.ports[e as usize].data_queues().nth(class as usize) else {
                    continue;
                };
                let holds = match self.sw_params.buffer {
                    BufferModel::Shared => !queue.is_empty(),
                    _ => queue
                        .iter()
                        .any(|q| self.pool.get(q.frame).in_local == input),
                };
                if holds {
                    waits[p].push(e);
                    any = true;
                }
            }
        }
        if !any {
            return None;
        }
        find_cycle(&waits)
    }
}
