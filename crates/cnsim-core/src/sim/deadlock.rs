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

    /// Look for a PAUSE deadlock now; record the first one found. Returns whether one was found.
    pub(crate) fn detect_deadlock(&mut self) -> bool {
        let now = self.now;
        let long = |since: crate::time::SimTime| {
            now.0.saturating_sub(since.0) >= self.deadlock_threshold.0
        };
        let stuck = |p: usize| self.ports[p].paused && long(self.ports[p].paused_since);
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
                let egress = &self.ports[e as usize];
                if !stuck(e as usize) {
                    continue;
                }
                // the paused egress holds a frame the paused input waits to see leave
                let holds = match self.sw_params.buffer {
                    BufferModel::Shared => !egress.oq.is_empty(),
                    _ => egress
                        .oq
                        .iter()
                        .any(|&f| self.pool.get(f).in_local == input),
                };
                if holds {
                    waits[p].push(e);
                    any = true;
                }
            }
        }
        if !any {
            return false;
        }
        let Some(cycle) = find_cycle(&waits) else {
            return false;
        };
        self.deadlock = Some(Deadlock {
            time_s: now.0 as f64 / PS_PER_S as f64,
            cycle: cycle
                .iter()
                .map(|&p| self.ports[p as usize].spec.name.clone())
                .collect(),
            class: 0,
        });
        true
    }
}
