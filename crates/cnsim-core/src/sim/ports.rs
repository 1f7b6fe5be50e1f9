//! The kernel's side of the transmitters ([`crate::net::Port`]): it asks a port to start its
//! next frame, schedules what the port says (transmission end, wake-up), calls the congestion
//! point on a dequeue, records departures and hands arrivals to the receiving switch or NIC.

use crate::cm::OnDequeue;
use crate::engine::Event;
use crate::frame::{FrameId, FrameKind};
use crate::net::port::{PauseChange, Start};
use crate::topology::Device;

use super::Simulator;

impl Simulator {
    /// Start the next frame on transmitter `p` if it is idle and something may be sent.
    #[inline(always)]
    pub(crate) fn try_start(&mut self, p: u32) {
        let now = self.now;
        let port = &mut self.ports[p as usize];
        if port.busy {
            return; // the common case (a frame joins a queue in service): no call at all
        }
        match port.start_next(now, &mut self.pool) {
            Start::Nothing => {}
            Start::WakeAt(t) => self.queue.push(t, Event::PortWake { port: p }),
            Start::Sent { frame: f, done } => {
                self.queue.push(done, Event::TxDone { port: p, frame: f });
                if self.cps_dequeue != OnDequeue::Nothing
                    && port.q_bytes > self.cp_dequeue_floor[p as usize]
                {
                    if let Device::Switch(s) = port.owner.get() {
                        self.cp_dequeue(s, p, f);
                    }
                }
            }
        }
    }

    /// Frame `f` starts leaving egress `p` of switch `s`, whose CP acts on departures: DCQCN's
    /// marking, FECN's probe stamp, SONAR's queue watch, or a sample (`sample_at = "departure"`,
    /// §1.2), whose message goes to the frame's source as at admission. Out of line: only these
    /// schemes reach it.
    #[inline(never)]
    fn cp_dequeue(&mut self, s: u32, p: u32, f: FrameId) {
        // the frame's line (which the transmission's end reads anyway) before the CP's: a data
        // frame of a scheme that stamps probes only never loads the CP
        let frame = self.pool.get_mut(f);
        if !self.cps_dequeue.acts_on(frame) {
            return;
        }
        let q = self.ports[p as usize].class_bytes(frame.class);
        let Some(cp) = self.cps[p as usize].as_mut() else {
            return;
        };
        if let Some(msg) = cp.on_dequeue(self.now, q, frame, &mut self.cp_rngs[p as usize]) {
            let (src, dst, class) = (frame.src, frame.dst, frame.class);
            self.send_cp_message(s, p, src, dst, class, msg);
        }
    }

    /// The measurement interval of the CP at switch egress `p` ended: the CP sees the queue and
    /// the port's current data rate; the next interval ends one period later.
    pub(crate) fn on_cp_tick(&mut self, p: u32) {
        let now = self.now;
        let port = &self.ports[p as usize];
        let (q, service) = (port.q_bytes, port.data_rate.as_f64());
        if let Some(cp) = self.cps[p as usize].as_mut() {
            cp.on_tick(now, q, service);
        }
        if let Some(period) = self.scheme.cp_period() {
            self.queue.push(now + period, Event::CpTick { port: p });
        }
    }

    /// The last bit of the frame in service left `p`. Of the port only its first cache line is
    /// read, unless a recorder watches it or its queue holds more frames (`Port`).
    pub(crate) fn on_tx_done(&mut self, p: u32) {
        let now = self.now;
        let port = &mut self.ports[p as usize];
        let (owner, peer, peer_local, delay) =
            (port.owner.get(), port.peer, port.peer_local, port.delay);
        let fr = self.pool.get_mut(port.current);
        let (counted, size, in_local, kind, class, flow_inst) = (
            fr.counted,
            fr.size as u64,
            fr.in_local,
            fr.kind,
            fr.class,
            fr.flow_inst,
        );
        // the input it arrives on, where the receiver charges it (a switch's partition)
        fr.in_local = peer_local;
        fr.counted = false;
        let f = port.finish(size, counted);
        if counted {
            let q = port.q_bytes;
            self.rec.on_queue(port.queue_rec(), now, q);
            // a port's throughput and its busy time count data only (docs/decisions.md,
            // "Metrics"): a probe, or a CM message relayed by a legacy switch, adds no bytes and
            // no busy time
            let data = kind == FrameKind::Data;
            let data_bytes = if data { size } else { 0 };
            if let Some(r) = port.tput_rec() {
                self.rec.ports[r as usize].add(&self.rec.bins, &self.rec.window, now, data_bytes);
            }
            if Some(p) == self.rec.hot_port {
                if data {
                    let tx_start = port.tx_start;
                    self.rec.hot_busy_window += self.rec.window.overlap(tx_start, now);
                }
            } else if Some(p) == self.rec.current_hot {
                let busy_from = if data { port.tx_start } else { now };
                self.rec.on_hot_departure(now, busy_from, data_bytes, q);
            }
            match owner {
                Device::Switch(s) => self.switch_departed(s, in_local, class, size),
                Device::Nic(n) => {
                    self.nics[n as usize].ob_class_left(class, size);
                    if kind == FrameKind::Data {
                        // the frame left its source adapter (per_source_sent, FCT adapter wait)
                        self.rec.on_sent(now, n, size);
                        if flow_inst != crate::frame::NO_FLOW {
                            self.flows.frame_left_adapter(flow_inst, now);
                        }
                    }
                }
            }
        }
        match peer.get() {
            // A data frame into a sink that nothing watches, or whose NP will not act on it:
            // record its delivery now instead of spending an event on its arrival (same instant,
            // same accounting).
            Device::Nic(n)
                if kind == FrameKind::Data && (!self.sink_events || !self.np_selects(n, f)) =>
            {
                let fr = self.pool.get(f);
                let (flow_rec, flow_inst, gen_time) = (fr.flow_rec, fr.flow_inst, fr.gen_time);
                self.pool.free(f);
                self.deliver(n, flow_rec, flow_inst, size, gen_time, now + delay);
            }
            Device::Nic(n) => self
                .queue
                .push(now + delay, Event::ArriveAtNic { nic: n, frame: f }),
            Device::Switch(s) => self.queue.push(
                now + delay,
                Event::ArriveAtSwitch {
                    switch: s,
                    frame: f,
                },
            ),
        }
        match owner {
            Device::Switch(_) => self.try_start(p),
            Device::Nic(n) => self.nic_service(n),
        }
    }

    /// NIC `n`'s notification point will act on data frame `f`, which leaves for it now
    /// (`NotificationPoint::selects`, drawing from the NP's own stream where it samples). Out of
    /// line: only schemes with notification points ask, and the transmission end it is called
    /// from is inlined into the event loop.
    #[inline(never)]
    fn np_selects(&mut self, n: u32, f: FrameId) -> bool {
        !self.select_at_departure
            || self.nps[n as usize].selects(self.pool.get(f), &mut self.np_rngs[n as usize])
    }

    /// The last bit of frame `f` arrived at switch `s`, on input `Frame::in_local`.
    pub(crate) fn on_arrive_at_switch(&mut self, s: u32, f: FrameId) {
        let frame = self.pool.get(f);
        let in_local = frame.in_local;
        if let FrameKind::Pause { xoff, class } = frame.kind {
            self.pool.free(f);
            // our transmitter toward the link partner that sent it
            let p = self.switches[s as usize].ports[in_local as usize];
            self.set_paused(p, xoff, class);
            return;
        }
        self.switch_receive(s, in_local, f);
    }

    /// The last bit of frame `f` arrived at NIC `n`.
    pub(crate) fn on_arrive_at_nic(&mut self, n: u32, f: FrameId) {
        if let FrameKind::Pause { xoff, class } = self.pool.get(f).kind {
            self.pool.free(f);
            let p = self.nics[n as usize].port;
            self.set_paused(p, xoff, class);
            return;
        }
        self.nic_receive(n, f);
    }

    /// Apply a received PAUSE for `class` to transmitter `p` (XOFF/XON semantics, D12).
    fn set_paused(&mut self, p: u32, xoff: bool, class: u8) {
        let now = self.now;
        match self.ports[p as usize].set_paused(now, xoff, class) {
            PauseChange::None => return,
            PauseChange::Paused => {
                self.paused_transmitters += 1;
                return;
            }
            PauseChange::Resumed { since } => {
                self.paused_transmitters -= 1;
                self.rec
                    .add_paused(&mut self.ports[p as usize].pause_record, since, now);
            }
            // PFC: another class may have been waiting behind the resumed one
            PauseChange::Class => {}
        }
        match self.ports[p as usize].owner.get() {
            Device::Switch(_) => self.try_start(p),
            Device::Nic(n) => self.nic_service(n),
        }
    }

    /// A hotspot window starts or ends on switch egress `p`: its data rate becomes `fraction` of
    /// the link rate. A frame in service finishes at the old rate (D16).
    pub(crate) fn set_service_rate(&mut self, p: u32, fraction: f64) {
        self.ports[p as usize].set_service_fraction(fraction);
        self.try_start(p);
    }
}
