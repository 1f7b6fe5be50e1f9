//! The kernel's side of the switches ([`crate::net::Switch`]): routing a received frame, class
//! (a) control, probes addressed to a congestion point, admission and drops, the CP sample, the
//! output queue and its records, PAUSE frames on the watermarks the switch signals, and backward
//! control messages from switches and NICs (D6).

use crate::engine::Event;
use crate::frame::{Frame, FrameId, FrameKind, ALL_CLASSES};
use crate::net::switch::{Origin, PauseSignal};
use crate::net::PAUSE_FRAME_BYTES;

use super::Simulator;

impl Simulator {
    /// A CM backward message (D6 class (a)) received by switch `s` for its output `out`: strict
    /// priority, not buffered, never dropped. Like every received frame it becomes eligible at
    /// its output `processing_delay` after its last bit (D14): it is handed back then, its ready
    /// time marking it as processed (a ready time from an earlier switch lies before this
    /// arrival). Out of line: data never comes here.
    #[inline(never)]
    fn relay_control(&mut self, s: u32, out: u32, f: FrameId) {
        let now = self.now;
        let ready = now + self.sw_params.processing_delay;
        if ready > now && self.pool.get(f).ready_at < now {
            self.pool.get_mut(f).ready_at = ready;
            let arrival = Event::ArriveAtSwitch {
                switch: s,
                frame: f,
            };
            self.queue.push(ready, arrival);
            return;
        }
        self.ports[out as usize].push_ctrl(f);
        self.try_start(out);
    }

    /// Frame `f` was received on input `in_local` of switch `s`.
    pub(crate) fn switch_receive(&mut self, s: u32, in_local: u32, f: FrameId) {
        let now = self.now;
        let frame = self.pool.get(f);
        let (kind, dst, size, class) = (frame.kind, frame.dst, frame.size as u64, frame.class);
        let sw = &self.switches[s as usize];
        let Some(out_local) = self.topo.route(s, dst) else {
            unreachable!("routes are complete: the topology is checked to be connected");
        };
        let out = sw.ports[out_local as usize];
        if kind == FrameKind::Control && !sw.legacy {
            self.relay_control(s, out, f);
            return;
        }
        if kind == FrameKind::Probe && self.cps_active && !sw.legacy && frame.cm.cpid == out {
            // a probe addressed to this CP: the CP may answer it (and consume it), D6 class (b)
            let probe = frame.cm;
            let q = self.ports[out as usize].class_bytes(class);
            if let Some(cp) = self.cps[out as usize].as_mut() {
                if let Some(mut answer) = cp.on_probe(now, q, &probe) {
                    answer.msg = crate::cm::msg::PROBE_REPLY;
                    answer.cpid = out;
                    answer.flow_src = probe.flow_src;
                    answer.flow_dst = probe.flow_dst;
                    answer.flow_class = probe.flow_class;
                    self.pool.free(f);
                    self.send_control(Origin::Switch(s), probe.flow_src, answer);
                    return;
                }
            }
        }
        let params = self.sw_params;
        let q_out = self.ports[out as usize].q_bytes;
        if let Some(place) = sw.refusal(&params, in_local, size, q_out) {
            self.rec.on_drop(now, size, kind != FrameKind::Data, place);
            if kind == FrameKind::Data {
                self.stats.dropped += 1;
                let flow = self.pool.get(f).flow_inst;
                if flow != crate::frame::NO_FLOW {
                    self.flows.frame_done(flow, now, false);
                }
            }
            self.pool.free(f);
            return;
        }
        let sw = &mut self.switches[s as usize];
        let legacy = sw.legacy;
        let xoff = sw.admit(&params, in_local, class, size);
        let q = q_out + size;
        {
            let fr = self.pool.get_mut(f);
            fr.counted = true;
            fr.ready_at = now + params.processing_delay;
        }
        // queued before the CP and PAUSE act: a control or PAUSE frame they put on this port
        // goes first anyway (strict priority), so the order changes nothing
        self.ports[out as usize].enqueue(f, class, size);
        if self.cps_active && !legacy && kind == FrameKind::Data {
            // the queue of the frame's class, the arriving frame included (q_out + size with one
            // class)
            let q_class = self.ports[out as usize].class_bytes(class);
            self.congestion_point_sample(s, out, q_class, f);
        }
        if xoff != PauseSignal::None {
            self.signal_pause(s, xoff, true);
        }
        self.rec
            .on_queue(self.ports[out as usize].queue_rec(), now, q);
        if Some(out) == self.rec.current_hot {
            self.rec
                .hot_queue
                .set(&self.rec.bins, &self.rec.window, now, q);
        }
        self.try_start(out);
    }

    fn congestion_point_sample(&mut self, s: u32, out: u32, q: u64, f: FrameId) {
        let now = self.now;
        let Some(cp) = self.cps[out as usize].as_mut() else {
            return;
        };
        let rng = &mut self.cp_rngs[out as usize];
        let frame = self.pool.get_mut(f);
        if let Some(msg) = cp.on_enqueue(now, q, frame, rng) {
            let (src, dst, class) = (frame.src, frame.dst, frame.class);
            self.send_cp_message(s, out, src, dst, class, msg);
        }
    }

    /// The message the CP of egress `p` (switch `s`) sent about a frame of flow `src` → `dst` in
    /// `class`, sampled as it arrived or as it left: to the flow's source, naming the CP (D6).
    pub(crate) fn send_cp_message(
        &mut self,
        s: u32,
        p: u32,
        src: u32,
        dst: u32,
        class: u8,
        mut msg: crate::cm::CmPayload,
    ) {
        msg.cpid = p;
        msg.flow_src = src;
        msg.flow_dst = dst;
        msg.flow_class = class;
        self.send_control(Origin::Switch(s), src, msg);
    }

    /// Send a class (a) backward message from a switch or a NIC to node `target` (D6): at the
    /// head of the data at the first egress, routed by the normal tables; or out of band after
    /// the scheme's fixed delay.
    pub(crate) fn send_control(&mut self, origin: Origin, target: u32, msg: crate::cm::CmPayload) {
        let now = self.now;
        let src = if let Origin::Nic(n) = origin {
            n
        } else {
            u32::MAX
        };
        let mut frame = Frame::data(src, target, self.cm_frame_bytes, now);
        frame.kind = FrameKind::Control;
        frame.cm = msg;
        let origin_slot = match origin {
            Origin::Nic(n) => self.ports.len() + n as usize,
            Origin::Switch(_) => msg.cpid as usize,
        };
        self.rec.on_cm(
            now,
            frame.size as u64,
            super::cm_kind(msg.msg, msg.fb, self.scheme.signed_feedback()),
            origin_slot,
        );
        let f = self.pool.alloc(frame);
        if let Some(delay) = self.scheme.oob_delay() {
            self.queue.push(
                now + delay,
                crate::engine::Event::Feedback {
                    nic: target,
                    frame: f,
                },
            );
            return;
        }
        let out = match origin {
            Origin::Switch(s) => {
                let out_local = self.topo.route(s, target).expect("routes are complete");
                self.switches[s as usize].ports[out_local as usize]
            }
            Origin::Nic(n) => self.nics[n as usize].port,
        };
        self.ports[out as usize].push_ctrl(f);
        match origin {
            Origin::Switch(_) => self.try_start(out),
            Origin::Nic(n) => self.nic_service(n),
        }
    }

    /// A frame of `class` held by switch `s` (charged to input `in_local`) has fully left:
    /// release its memory and decide XON (D12, D14).
    pub(crate) fn switch_departed(&mut self, s: u32, in_local: u32, class: u8, size: u64) {
        let params = self.sw_params;
        let xon = self.switches[s as usize].depart(&params, in_local, class, size);
        if xon != PauseSignal::None {
            self.signal_pause(s, xon, false); // rare: the common departure crosses no watermark
        }
    }

    /// Send PAUSE (`xoff`) or resume frames upstream on the inputs `signal` names: for its class
    /// with PFC, for everything with 802.3x PAUSE.
    #[cold]
    fn signal_pause(&mut self, s: u32, signal: PauseSignal, xoff: bool) {
        let pfc = self.sw_params.pfc;
        let class_of = |c: u8| if pfc { c } else { ALL_CLASSES };
        match signal {
            PauseSignal::None => {}
            PauseSignal::Input(i, c) => {
                let p = self.switches[s as usize].ports[i as usize];
                self.send_pause(p, xoff, class_of(c));
            }
            PauseSignal::All(c) => {
                let class = class_of(c);
                for i in 0..self.switches[s as usize].ports.len() {
                    let p = self.switches[s as usize].ports[i];
                    self.send_pause(p, xoff, class);
                }
            }
        }
    }

    /// Queue a PAUSE (`xoff`) or resume frame for `class` at the head of egress `p` (toward the
    /// upstream).
    fn send_pause(&mut self, p: u32, xoff: bool, class: u8) {
        let mut frame = Frame::data(u32::MAX, u32::MAX, PAUSE_FRAME_BYTES, self.now);
        frame.kind = FrameKind::Pause { xoff, class };
        let f = self.pool.alloc(frame);
        self.rec.pause_frames += 1;
        self.ports[p as usize].push_mac(f);
        self.try_start(p);
    }
}
