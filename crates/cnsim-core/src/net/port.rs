//! A transmitter: one direction of a full-duplex link (rate, one-way propagation delay), serving
//! one frame at a time in strict priority MAC control (PAUSE) > CM class (a) control > data FIFO
//! (D6). PAUSE stops it after the frame in progress (D12); MAC control is never paused. A
//! hotspot lowers the rate of data only (D11, D16).

use std::collections::VecDeque;

use crate::engine::Event;
use crate::frame::{FrameId, FrameKind};
use crate::metrics::PauseRecord;
use crate::time::{tx_time, BitRate, SimTime};
use crate::topology::{Device, PortSpec};
use crate::Simulator;

#[derive(Debug)]
pub struct Port {
    pub spec: PortSpec,
    /// Current service rate of data and class (b) frames (hotspots change it).
    pub data_rate: BitRate,
    pub busy: bool,
    pub current: FrameId,
    pub tx_start: SimTime,
    /// Paused by a PAUSE frame from the link partner.
    pub paused: bool,
    pub paused_since: SimTime,
    pub pause_record: PauseRecord,
    /// MAC control frames (PAUSE) waiting: sent first, never paused.
    pub mac: VecDeque<FrameId>,
    /// CM class (a) backward messages: strict priority over data.
    pub ctrl: VecDeque<FrameId>,
    /// The data FIFO: a switch output queue, or a NIC's output buffer (OB).
    pub oq: VecDeque<FrameId>,
    /// Bytes of `oq` plus the data frame in service (the CP's q; the OB occupancy).
    pub q_bytes: u64,
    /// Pending `PortWake` instant, `NEVER` if none.
    pub wake_at: SimTime,
    /// Index of this port's queue recorder, if its queue is recorded.
    pub queue_rec: Option<u32>,
    /// Index of this port's throughput recorder, if recorded.
    pub tput_rec: Option<u32>,
    /// The last serialisation time computed: (bytes, rate, time) — nearly every frame repeats it.
    tx_memo: (u64, BitRate, SimTime),
}

impl Port {
    pub fn new(spec: PortSpec) -> Self {
        Port {
            data_rate: spec.rate,
            spec,
            busy: false,
            current: FrameId(u32::MAX),
            tx_start: SimTime::ZERO,
            paused: false,
            paused_since: SimTime::ZERO,
            pause_record: PauseRecord::default(),
            mac: VecDeque::new(),
            ctrl: VecDeque::new(),
            oq: VecDeque::new(),
            q_bytes: 0,
            wake_at: SimTime::NEVER,
            queue_rec: None,
            tput_rec: None,
            tx_memo: (0, BitRate(0), SimTime::ZERO),
        }
    }
}

impl Simulator {
    /// Start the next frame on transmitter `p` if it is idle and something may be sent.
    pub(crate) fn try_start(&mut self, p: u32) {
        let now = self.now;
        let port = &mut self.ports[p as usize];
        if port.busy {
            return;
        }
        let (f, rate) = if let Some(f) = port.mac.pop_front() {
            (f, port.spec.rate)
        } else if port.paused {
            return;
        } else if let Some(f) = port.ctrl.pop_front() {
            (f, port.spec.rate)
        } else {
            let Some(&f) = port.oq.front() else { return };
            let ready_at = self.pool.get(f).ready_at;
            if ready_at > now {
                if port.wake_at > ready_at {
                    port.wake_at = ready_at;
                    self.queue.push(ready_at, Event::PortWake { port: p });
                }
                return;
            }
            if port.data_rate.0 == 0 {
                return; // a 0 Gb/s hotspot: data waits (D16)
            }
            port.oq.pop_front();
            (f, port.data_rate)
        };
        if let Device::Nic(_) = port.spec.owner {
            let frame = self.pool.get_mut(f);
            if frame.kind == FrameKind::Probe {
                frame.cm.stamp = now.0; // t_src: the probe's transmission start (D17)
            }
        }
        let size = self.pool.get(f).size as u64;
        port.busy = true;
        port.current = f;
        port.tx_start = now;
        if port.tx_memo.0 != size || port.tx_memo.1 != rate {
            port.tx_memo = (size, rate, tx_time(size, rate));
        }
        let done = now + port.tx_memo.2;
        self.queue.push(done, Event::TxDone { port: p });
        if self.cps_active {
            if let Device::Switch(_) = port.spec.owner {
                let q = port.q_bytes;
                if let Some(cp) = self.cps[p as usize].as_mut() {
                    let frame = self.pool.get_mut(f);
                    if frame.counted {
                        cp.on_dequeue(now, q, frame);
                    }
                }
            }
        }
    }

    /// The last bit of the frame in service left `p`.
    pub(crate) fn on_tx_done(&mut self, p: u32) {
        let now = self.now;
        let port = &mut self.ports[p as usize];
        port.busy = false;
        let f = port.current;
        let (counted, size, in_local, kind) = {
            let fr = self.pool.get(f);
            (fr.counted, fr.size as u64, fr.in_local, fr.kind)
        };
        let owner = port.spec.owner;
        let delay = port.spec.delay;
        if counted {
            port.q_bytes -= size;
            let q = port.q_bytes;
            let tx_start = port.tx_start;
            if let Some(r) = port.queue_rec {
                self.rec.queues[r as usize].set(&self.rec.bins, &self.rec.window, now, q);
            }
            if let Some(r) = port.tput_rec {
                self.rec.ports[r as usize].add(&self.rec.bins, &self.rec.window, now, size);
            }
            if Some(p) == self.rec.hot_port {
                self.rec.hot_busy_window += self.rec.window.overlap(tx_start, now);
            } else if Some(p) == self.rec.current_hot {
                self.rec.on_hot_departure(now, tx_start, size, q);
            }
            self.pool.get_mut(f).counted = false;
            if let Device::Switch(s) = owner {
                self.switch_departed(s, in_local, size);
            }
        }
        match self.ports[p as usize].spec.peer {
            // A data frame into a sink that nothing watches: record its delivery now instead of
            // spending an event on its arrival (same instant, same accounting).
            Device::Nic(n) if kind == FrameKind::Data && !self.sink_events => {
                let fr = self.pool.get(f);
                let (flow_rec, flow_inst, gen_time) = (fr.flow_rec, fr.flow_inst, fr.gen_time);
                self.pool.free(f);
                self.deliver(n, flow_rec, flow_inst, size, gen_time, now + delay);
            }
            _ => self
                .queue
                .push(now + delay, Event::Arrive { port: p, frame: f }),
        }
        match owner {
            Device::Switch(_) => self.try_start(p),
            Device::Nic(n) => self.nic_service(n),
        }
    }

    /// The last bit of frame `f` arrived at the receiving end of `p`'s link.
    pub(crate) fn on_arrive(&mut self, p: u32, f: crate::frame::FrameId) {
        let spec = &self.ports[p as usize].spec;
        let (peer, peer_local, reverse) = (spec.peer, spec.peer_local, spec.reverse);
        if let FrameKind::Pause { xoff } = self.pool.get(f).kind {
            self.pool.free(f);
            // the link partner's transmitter toward us is the reverse port of the one that sent it
            self.set_paused(reverse, xoff);
            return;
        }
        match peer {
            Device::Switch(s) => self.switch_receive(s, peer_local, f),
            Device::Nic(n) => self.nic_receive(n, f),
        }
    }

    /// Apply a received PAUSE to transmitter `p` (XOFF/XON semantics, D12).
    fn set_paused(&mut self, p: u32, xoff: bool) {
        let now = self.now;
        let port = &mut self.ports[p as usize];
        if xoff == port.paused {
            return;
        }
        port.paused = xoff;
        if xoff {
            port.paused_since = now;
            return;
        }
        let since = port.paused_since;
        self.rec
            .add_paused(&mut self.ports[p as usize].pause_record, since, now);
        match self.ports[p as usize].spec.owner {
            Device::Switch(_) => self.try_start(p),
            Device::Nic(n) => self.nic_service(n),
        }
    }

    /// A hotspot window starts or ends on switch egress `p`: its data rate becomes `fraction` of
    /// the link rate. A frame in service finishes at the old rate (D16).
    pub(crate) fn set_service_rate(&mut self, p: u32, fraction: f64) {
        let port = &mut self.ports[p as usize];
        port.data_rate = port.spec.rate.scaled(fraction);
        self.try_start(p);
    }
}
