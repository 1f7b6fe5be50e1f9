//! What the event loop asks the CPU for ahead of its events: the lines the events a few places
//! on in the current instant will read, so that their misses overlap the work of the events
//! before them (docs/performance.md, "Loading the next event's line early" and "The lines an
//! event leads to, asked for in stages"). Hints only: nothing here changes the simulation's
//! state, and a test runs networks with the later stages on and off and compares the results.

use crate::engine::Event;
use crate::net::{Nic, Port};
use crate::topology::{Device, PackedDevice};
use crate::traffic::Generator;

use super::Simulator;

/// How many events ahead, within the current instant, the event loop prefetches an event's
/// first line: four events are a few hundred nanoseconds of work, time for a line to come from
/// the last-level cache or memory (two and eight measured no better at 2,048 hosts).
const PREFETCH_AHEAD: usize = 4;
/// How many events ahead the second stage asks for what those first lines lead to
/// ([`Simulator::prefetch_dependent_lines`]; three and four measured no better at 2,048 hosts).
const DEPENDENT_AHEAD: usize = 2;
/// The size of the ports', NICs' and generators' state above which the later prefetch stages
/// pay: a core's private (L2) cache on the machine measured. Below it (16 to 512 hosts) their
/// lines are in cache anyway and asking for them costs about 3 % (docs/performance.md).
const DEPENDENT_PREFETCH_BYTES: usize = 2 << 20;

/// The event loop's prefetch plan for one network.
#[derive(Debug)]
pub(super) struct Prefetch {
    /// The later stages are on ([`DEPENDENT_PREFETCH_BYTES`]).
    dependent: bool,
    /// Each transmitter's owner and receiver, eight bytes a port (64 KB at 2,048 hosts, where
    /// the ports take 3 MB): what the later stages read before the port's own line arrives.
    port_ends: Vec<[PackedDevice; 2]>,
}

impl Prefetch {
    pub(super) fn plan(ports: &[Port], nics: &[Nic], gens: &[Generator]) -> Self {
        let state_bytes = std::mem::size_of_val(ports)
            + std::mem::size_of_val(nics)
            + std::mem::size_of_val(gens);
        Prefetch {
            dependent: state_bytes > DEPENDENT_PREFETCH_BYTES,
            port_ends: ports.iter().map(|p| [p.owner, p.peer]).collect(),
        }
    }
}

impl Simulator {
    /// Whether the event loop asks for the lines the next events lead to (its later prefetch
    /// stages): where the ports', NICs' and generators' state outgrows a core's private cache
    /// ([`DEPENDENT_PREFETCH_BYTES`]).
    pub fn prefetches_dependent_lines(&self) -> bool {
        self.prefetch.dependent
    }

    /// Turn the later prefetch stages on or off. They are hints to the CPU: the results never
    /// depend on them (a test compares), only the speed.
    pub fn set_prefetch_dependent_lines(&mut self, on: bool) {
        self.prefetch.dependent = on;
    }

    /// Called once per event, before it runs.
    #[inline(always)]
    pub(super) fn prefetch_ahead(&self) {
        let later = self.queue.peek_now(PREFETCH_AHEAD - 1);
        if let Some(ev) = later {
            self.prefetch_for(ev);
        }
        if self.prefetch.dependent {
            self.prefetch_dependent_lines(later);
        }
    }

    /// Prefetch the cache lines the event `ev` reads first — a transmission end's port and
    /// frame, an arrival's frame — so that the misses overlap the work of the events before it.
    /// In a large network nearly every such line is a miss (thousands of events pass between two
    /// visits). A prefetch, unlike the plain load this was until stop 33, does not hold up the
    /// instructions behind it while the line comes (docs/performance.md).
    #[inline(always)]
    fn prefetch_for(&self, ev: Event) {
        match ev {
            Event::TxDone { port, frame } => {
                // the two lines of the data path (`Port`'s layout test)
                crate::engine::prefetch_lines(&self.ports[port as usize], 2);
                crate::engine::prefetch(self.pool.get(frame));
            }
            Event::ArriveAtSwitch { frame, .. } | Event::ArriveAtNic { frame, .. } => {
                crate::engine::prefetch(self.pool.get(frame));
            }
            _ => {}
        }
    }

    /// The later stages of the event loop's prefetch, where the network's state outgrows a
    /// core's private caches ([`DEPENDENT_PREFETCH_BYTES`]): each asks for lines that lines
    /// asked for by an earlier stage (or the small table of port ends) lead to, so that a chain
    /// of dependent misses overlaps the events before it.
    ///
    /// * Four events on (`later`, the event [`Simulator::prefetch_for`] had): the NIC behind a transmitter (its
    ///   service reads its four lines) and its node's sent-bytes counter, and the delivery
    ///   counter of a receiving node, found in [`Prefetch::port_ends`].
    /// * Two events on: the NIC's generator and its list of free VOQ slots, the next frame of a
    ///   switch's FIFO, the counters' current bins; the route entry and the switch of an arrival.
    /// * One event on: the VOQ slot a new flow takes; the output port an arrival joins.
    #[inline(always)]
    fn prefetch_dependent_lines(&self, later: Option<Event>) {
        match later {
            Some(Event::TxDone { port, .. }) => {
                let [owner, peer] = self.prefetch.port_ends[port as usize];
                if let Device::Nic(n) = owner.get() {
                    crate::engine::prefetch_all(&self.nics[n as usize]);
                    crate::engine::prefetch(&self.rec.sent[n as usize]);
                }
                if let Device::Nic(d) = peer.get() {
                    crate::engine::prefetch(&self.rec.nodes[d as usize]);
                }
            }
            Some(Event::NicWake { nic }) => crate::engine::prefetch_all(&self.nics[nic as usize]),
            _ => {}
        }
        match self.queue.peek_now(DEPENDENT_AHEAD - 1) {
            Some(Event::TxDone { port, .. }) => {
                let port = &self.ports[port as usize];
                match port.owner.get() {
                    Device::Nic(n) => {
                        let nic = &self.nics[n as usize];
                        if let Some(g) = self.gens.get(nic.first_gen as usize) {
                            crate::engine::prefetch_lines(g, 2);
                        }
                        nic.prefetch_free_list();
                        if let Some(bin) = self.rec.sent[n as usize].bins.last() {
                            crate::engine::prefetch(bin);
                        }
                    }
                    Device::Switch(_) => {
                        if let Some(next) = port.oq.front() {
                            crate::engine::prefetch(next);
                        }
                    }
                }
                if let Device::Nic(d) = port.peer.get() {
                    if let Some(bin) = self.rec.nodes[d as usize].bins.last() {
                        crate::engine::prefetch(bin);
                    }
                }
            }
            Some(Event::ArriveAtSwitch { switch, frame }) => {
                // (a PAUSE frame's destination is no node: its address lies outside the table,
                // which a prefetch, never a fault, tolerates; the stage below reads the entry)
                let dst = self.pool.get(frame).dst;
                crate::engine::prefetch_address(self.topo.routes.entry_address(switch, dst));
                crate::engine::prefetch(&self.switches[switch as usize]);
            }
            _ => {}
        }
        match self.queue.peek_now(0) {
            Some(Event::TxDone { port, .. }) => {
                if let Device::Nic(n) = self.prefetch.port_ends[port as usize][0].get() {
                    self.nics[n as usize].prefetch_free_voq();
                }
            }
            Some(Event::ArriveAtSwitch { switch, frame }) => {
                // a PAUSE frame names no destination (and is not routed): nothing to look up
                let dst = self.pool.get(frame).dst;
                if let Some(out) = self.topo.route_if_node(switch, dst) {
                    let p = self.switches[switch as usize].ports[out as usize];
                    crate::engine::prefetch_lines(&self.ports[p as usize], 2);
                }
            }
            _ => {}
        }
    }
}
