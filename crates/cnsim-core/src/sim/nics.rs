//! The kernel's side of the adapters ([`crate::net::Nic`], algorithms.md §1.1, §1.4, D15):
//! generator arrivals and the ingress models, the round-robin transfer from VOQs to the output
//! buffer, wake-ups, the sink and its delivery records, and the reaction points' messages,
//! timers and probes.
//!
//! The steps every data frame takes (`pull_arrivals` → `pop_arrival` → `admit` → `voq` →
//! `queue_voq`, then `move_to_ob` → `enter_ob`, and `deliver`) are always inlined into their
//! one or two callers: as separate calls their prologues and argument moves were 3.6 % of a
//! 16-host run's instructions (docs/performance.md). What only a blocked generator needs stays
//! out of line.

use crate::cm::{CmPayload, RateLimiter, RpOutput};
use crate::engine::Event;
use crate::frame::{Frame, FrameId, FrameKind, NO_FLOW};
use crate::net::nic::{pace, Blocked, VoqState};
use crate::net::{Nic, Origin, Port};
use crate::scenario::{Ingress, NicConfig, OnFull};
use crate::time::SimTime;

use super::Simulator;

/// Ring length above which a NIC prefetches the VOQ its next arrival joins: with this many VOQs
/// backlogged their lines no longer stay in cache between two frames of one (below it, at 16
/// hosts and below saturation, the prefetch would be work for nothing).
const BACKLOGGED_RING: usize = 16;

impl Simulator {
    /// Bring NIC `n` up to date: pull arrivals, move eligible frames to the OB, start the link,
    /// and schedule the next wake-up if one is needed.
    pub(crate) fn nic_service(&mut self, n: u32) {
        self.pull_arrivals(n);
        self.nic_transfer(n);
        let p = self.nics[n as usize].port;
        self.try_start(p);
        self.nic_schedule_wake(n);
    }

    pub(crate) fn on_nic_wake(&mut self, n: u32) {
        if self.nics[n as usize].wake_at != self.now {
            return; // superseded
        }
        self.nics[n as usize].wake_at = SimTime::NEVER;
        self.nic_service(n);
    }

    /// The run ends now: admit every arrival generated before the end that no service has
    /// pulled. Generators are advanced lazily, when their NIC is serviced, and a NIC whose output
    /// buffer is full (a backlogged source, or one paused by its switch) is serviced only at its
    /// next departure; without this, the frames such a source generated since its last service
    /// — all of them, for a NIC paused to the end — were missing from `generated`, from the
    /// source drops of a full ingress buffer and from the finite flows (counted neither complete
    /// nor incomplete). The run covers [0, end): an arrival at the end itself is not admitted.
    pub(crate) fn pull_before_end(&mut self) {
        let end = self.now;
        if end == SimTime::ZERO {
            return;
        }
        self.now = SimTime(end.0 - 1); // `pull_arrivals` admits arrivals at or before now
        for n in 0..self.nics.len() as u32 {
            self.pull_arrivals(n);
        }
        self.now = end;
    }

    /// Admit every generator arrival up to now, in time order (ties: generator order).
    #[inline(always)]
    fn pull_arrivals(&mut self, n: u32) {
        let now = self.now;
        let nic = &self.nics[n as usize];
        if nic.one_gen {
            // one generator, never blocked by another: no merge needed
            let g = nic.first_gen;
            while self.gens[g as usize].next <= now && self.nics[n as usize].blocked.is_none() {
                self.pop_arrival(n, g);
            }
            self.nics[n as usize].promote(now);
            return;
        }
        loop {
            let nic = &self.nics[n as usize];
            let blocked_gen = nic.blocked.map(|b| b.gen);
            let mut best: Option<(SimTime, u32)> = None;
            for &g in &nic.gens {
                let t = self.gens[g as usize].next;
                if t <= now && Some(g) != blocked_gen && best.is_none_or(|(bt, _)| t < bt) {
                    best = Some((t, g));
                }
            }
            let Some((_, g)) = best else { break };
            self.pop_arrival(n, g);
        }
        self.nics[n as usize].promote(now);
    }

    /// The VOQ of NIC `n` toward `dst` in `class` (one per destination unless PFC has several
    /// classes), created on first use with its recorder slot (and, for schemes that limit every
    /// flow from the start, its limiter).
    #[inline(always)]
    fn voq(&mut self, n: u32, dst: u32, class: u8) -> u32 {
        let nic = &mut self.nics[n as usize];
        let (v, found) = nic.voq_index(dst, class);
        if found.is_new_flow() {
            let voq = &mut nic.voqs[v as usize];
            voq.flow_rec = self
                .rec
                .flow_slot(nic.node, dst)
                .unwrap_or(crate::frame::NO_RECORD);
            if self.scheme.limiter_from_start() {
                // E2CM probing-only (D17): every flow is limited (at line rate) from its first frame
                let line = nic.line_rate.as_f64();
                voq.limiter = Some(RateLimiter::new(line));
                voq.rp = Some(self.scheme.new_rp(line));
            }
        }
        v
    }

    /// Take generator `g`'s next arrival (a frame, or a flow of frames) into NIC `n`.
    #[inline(always)]
    fn pop_arrival(&mut self, n: u32, g: u32) {
        let gen = &mut self.gens[g as usize];
        let (t, dst, frames) = gen.pop_arrival();
        let flow = if gen.makes_flows() {
            let hot = self
                .flows
                .hot_nodes
                .get(dst as usize)
                .copied()
                .unwrap_or(false);
            self.flows.start(t, frames, hot)
        } else {
            NO_FLOW
        };
        if gen.next == SimTime::NEVER {
            self.gens_done += 1;
        }
        self.nics[n as usize].promote(t);
        self.admit(n, g, t, dst, frames, flow);
        let nic = &self.nics[n as usize];
        if nic.ready.len() > BACKLOGGED_RING {
            // many VOQs wait: the next arrival most likely joins one whose line went cold
            let gen = &self.gens[g as usize];
            if let Some(next) = gen.next_dst() {
                nic.prefetch_voq(next, gen.priority);
            }
        }
    }

    /// `frames` frames generated at `t` (of finite flow `flow`, or `NO_FLOW`) ask to enter their
    /// VOQ (ingress model, D15); on a full blocking ingress the rest waits at the generator.
    #[inline(always)]
    fn admit(&mut self, n: u32, g: u32, t: SimTime, dst: u32, frames: u32, flow: u32) {
        let fs = self.frame_size as u64;
        let class = self.gens[g as usize].priority;
        let v = self.voq(n, dst, class);
        for i in 0..frames {
            let cfg: &NicConfig = &self.nic_cfg;
            let nic = &mut self.nics[n as usize];
            let fits = match cfg.ingress {
                Ingress::Unlimited => true,
                Ingress::PerVoq => nic.voqs[v as usize].bytes(fs) + fs <= self.voq_cap,
                Ingress::Shared => nic.ingress_bytes + fs <= cfg.ingress_size,
            };
            if !fits {
                if cfg.ingress == Ingress::Shared && cfg.on_full == OnFull::Block {
                    nic.blocked = Some(Blocked {
                        gen: g,
                        t,
                        dst,
                        frames: frames - i,
                        flow,
                    });
                    if self.rec.blocked_since[n as usize].is_none() {
                        self.rec.blocked_since[n as usize] = Some(t);
                    }
                    return;
                }
                self.stats.generated += 1;
                self.stats.source_dropped += 1;
                self.rec.on_source_drop(t, fs);
                if flow != NO_FLOW {
                    self.flows.frame_done(flow, t, false);
                }
                continue;
            }
            self.stats.generated += 1;
            let voq = &mut nic.voqs[v as usize];
            voq.push_frame(&mut self.voq_store, t, flow, class);
            nic.ingress_bytes += fs;
            self.queue_voq(n, v, t);
        }
    }

    /// A frame entered VOQ `v` at `t`: an idle VOQ becomes eligible (now, or when its limiter
    /// releases it).
    #[inline(always)]
    fn queue_voq(&mut self, n: u32, v: u32, t: SimTime) {
        let fs = self.frame_size as u64;
        let nic = &mut self.nics[n as usize];
        let voq = &mut nic.voqs[v as usize];
        if voq.state == VoqState::Idle {
            let at = match &voq.limiter {
                Some(rl) => voq.t_last.0.saturating_add(pace(fs, rl).0),
                None => t.0,
            };
            nic.schedule_voq(v, SimTime(at).max(t), t);
        }
    }

    /// Move frames from eligible VOQs to the OB, round-robin, while the OB takes them.
    fn nic_transfer(&mut self, n: u32) {
        if !self.nics[n as usize].ob_class.is_empty() {
            return self.nic_transfer_classes(n);
        }
        let now = self.now;
        let fs = self.frame_size as u64;
        let port = self.nics[n as usize].port;
        if self.nics[n as usize].ob_stopped
            && self.ports[port as usize].q_bytes <= self.nic_cfg.egress_xon
        {
            self.nics[n as usize].ob_stopped = false;
        }
        loop {
            let nic = &mut self.nics[n as usize];
            if let Some(&f) = nic.probes.front() {
                let size = self.pool.get(f).size as u64;
                if nic.ob_stopped
                    || self.ports[port as usize].q_bytes + size > self.nic_cfg.egress_buffer
                {
                    break;
                }
                nic.probes.pop_front();
                self.push_to_ob(n, f, 0, size);
                continue;
            }
            if nic.ob_stopped || self.ports[port as usize].q_bytes + fs > self.nic_cfg.egress_buffer
            {
                nic.prefetch_ring(&self.voq_store);
                if nic.one_gen && nic.ready.len() > BACKLOGGED_RING {
                    // the next arrival's VOQ line was asked for when this service's arrival
                    // joined its VOQ; ask for the slot that arrival will write, a service early
                    let gen = &self.gens[nic.first_gen as usize];
                    if let Some(next) = gen.next_dst() {
                        nic.prefetch_voq_back(next, gen.priority, &self.voq_store);
                    }
                }
                break;
            }
            nic.promote(now);
            let Some(v) = nic.ready.pop_front() else {
                break;
            };
            self.move_to_ob(n, v);
        }
    }

    /// PFC with several classes: the OB is one FIFO of `egress_buffer` bytes per class, so a
    /// VOQ whose class's FIFO is full waits without holding up the other classes (its place in
    /// the round robin is kept).
    #[inline(never)]
    fn nic_transfer_classes(&mut self, n: u32) {
        let now = self.now;
        let fs = self.frame_size as u64;
        while let Some(&f) = self.nics[n as usize].probes.front() {
            let (size, class) = {
                let fr = self.pool.get(f);
                (fr.size as u64, fr.class)
            };
            if self.nics[n as usize].ob_class[class as usize] + size > self.nic_cfg.egress_buffer {
                break; // probes keep their order
            }
            self.nics[n as usize].probes.pop_front();
            self.push_to_ob(n, f, class, size);
        }
        let mut waiting = Vec::new();
        loop {
            let nic = &mut self.nics[n as usize];
            nic.promote(now);
            let Some(v) = nic.ready.pop_front() else {
                break;
            };
            let voq = &nic.voqs[v as usize];
            let class = voq.head_class();
            if nic.ob_class[class as usize] + fs > self.nic_cfg.egress_buffer {
                waiting.push(v);
                continue;
            }
            self.move_to_ob(n, v);
        }
        let nic = &mut self.nics[n as usize];
        for v in waiting.into_iter().rev() {
            nic.ready.push_front(v);
        }
    }

    /// Move the head frame of ready VOQ `v` of NIC `n` into the OB (its limiter's pacing, its
    /// RP's byte counter, its next eligibility). The NIC, its VOQ and its OB are each looked up
    /// once (the fields are borrowed apart); only a reaction point's output needs the whole
    /// simulator, and the VOQ is looked up again after it.
    #[inline(always)]
    fn move_to_ob(&mut self, n: u32, v: u32) {
        let now = self.now;
        let fs = self.frame_size as u64;
        let Simulator {
            nics,
            pool,
            voq_store,
            ports,
            rec,
            nic_cfg,
            ..
        } = self;
        let nic = &mut nics[n as usize];
        let node = nic.node;
        let voq = &mut nic.voqs[v as usize];
        let (gen_time, flow_inst, class) =
            voq.pop_frame(voq_store).expect("a ready VOQ is non-empty");
        voq.class = class;
        voq.t_last = now;
        let dst = voq.dst;
        nic.ingress_bytes -= fs;
        let mut frame = Frame::data(node, dst, fs as u32, gen_time);
        frame.class = class;
        frame.counted = true;
        frame.flow_rec = voq.flow_rec;
        frame.flow_inst = flow_inst;
        // a reaction point lives only with a limiter: an unlimited flow never reads its line
        let out = match voq.limiter.as_mut() {
            Some(rl) => voq.rp.as_mut().and_then(|rp| {
                if let Some(cpid) = rp.tag() {
                    frame.cm.tagged = true;
                    frame.cm.cpid = cpid;
                }
                // the RP counts the frame as sent (its byte counter); the OB has no part in that
                let before = rl.rate_bps;
                let out = rp.on_send(now, fs, rl, &mut nic.rng);
                if rl.rate_bps != before && !out.release {
                    // an increase by the frames sent (QCN's byte counter): the rate series
                    // follows the limiter at every change, as at CNMs and timers
                    rec.on_rate(now, node, dst, class, rl.rate_bps / 1e9);
                }
                // most sends ask for nothing: the output is copied out only when it asks for
                // something (copied whole right after the call, for every frame of a limited flow,
                // it waited on the callee's smaller stores; docs/performance.md)
                (!out.asks_nothing()).then_some(out)
            }),
            None => {
                debug_assert!(
                    voq.rp.is_none(),
                    "a reaction point lives only with its limiter"
                );
                None
            }
        };
        let f = pool.alloc(frame);
        let ob = &mut ports[nic.port as usize];
        enter_ob(nic, ob, nic_cfg, f, class, fs);
        rec.on_queue(ob.queue_rec(), now, ob.q_bytes);
        let nic = match out {
            Some(out) => {
                self.apply_rp_output(n, v, out);
                &mut self.nics[n as usize]
            }
            None => nic,
        };
        let voq = &mut nic.voqs[v as usize];
        if voq.is_empty() {
            voq.state = VoqState::Idle;
            nic.maybe_recycle(v);
        } else {
            let at = match &voq.limiter {
                Some(rl) => SimTime(now.0.saturating_add(pace(fs, rl).0)),
                None => now,
            };
            nic.schedule_voq(v, at, now);
        }
        if nic.blocked.is_some() {
            self.unblock_generator(n);
        }
    }

    /// Frame `f` (`size` bytes, priority `class`) enters the OB of NIC `n` ([`enter_ob`]).
    #[inline(always)]
    fn push_to_ob(&mut self, n: u32, f: FrameId, class: u8, size: u64) {
        let nic = &mut self.nics[n as usize];
        let ob = &mut self.ports[nic.port as usize];
        enter_ob(nic, ob, &self.nic_cfg, f, class, size);
        self.rec.on_queue(ob.queue_rec(), self.now, ob.q_bytes);
    }

    /// A blocked generator's frame enters the shared ingress as soon as it fits (AD-CNSIM, D15).
    #[inline(never)]
    fn unblock_generator(&mut self, n: u32) {
        let now = self.now;
        let fs = self.frame_size as u64;
        let nic = &self.nics[n as usize];
        let Some(b) = nic.blocked else { return };
        if nic.ingress_bytes + fs > self.nic_cfg.ingress_size {
            return;
        }
        self.nics[n as usize].blocked = None;
        self.admit(n, b.gen, b.t, b.dst, b.frames, b.flow);
        if self.nics[n as usize].blocked.is_some() {
            return; // the rest of a flow still does not fit
        }
        if let Some(since) = self.rec.blocked_since[n as usize].take() {
            self.rec.blocked_window_ps += self.rec.window.overlap(since, now);
        }
        let gen = &mut self.gens[b.gen as usize];
        let origin = gen.origin;
        // Generation resumes on the slot grid after now, from a fresh gap: a generator whose
        // next arrival fell past its stop before it was held back may have arrivals again
        // (it is counted done again when the last of them is popped), and one held back past
        // its stop is done now.
        let was_done = gen.next == SimTime::NEVER;
        gen.resume_after(now, origin);
        match (was_done, gen.next == SimTime::NEVER) {
            (false, true) => self.gens_done += 1,
            (true, false) => self.gens_done -= 1,
            _ => {}
        }
    }

    #[inline(always)]
    fn nic_schedule_wake(&mut self, n: u32) {
        let fs = self.frame_size as u64;
        let nic = &mut self.nics[n as usize];
        let ob_bytes = self.ports[nic.port as usize].q_bytes;
        let single = nic.ob_class.is_empty(); // with classes, another class's FIFO may have room
        if single && (nic.ob_stopped || ob_bytes + fs > self.nic_cfg.egress_buffer) {
            return; // the next departure services the NIC
        }
        let blocked_gen = nic.blocked.map(|b| b.gen);
        let mut next = nic.next_release();
        let one = [nic.first_gen];
        // (the common single generator is read inline, not from the list's heap line)
        let gens: &[u32] = if nic.one_gen { &one } else { &nic.gens };
        for &g in gens {
            if Some(g) != blocked_gen {
                next = next.min(self.gens[g as usize].next);
            }
        }
        if next != SimTime::NEVER && next < nic.wake_at {
            nic.wake_at = next;
            self.queue.push(next, Event::NicWake { nic: n });
        }
    }

    /// A frame arrived at NIC `n` from its switch.
    pub(crate) fn nic_receive(&mut self, n: u32, f: FrameId) {
        let frame = self.pool.get(f);
        if frame.kind != FrameKind::Data {
            // a CM frame's content lies in its second line: copied whole
            let frame = *frame;
            self.pool.free(f);
            match frame.kind {
                FrameKind::Control => self.rp_message(n, &frame.cm),
                FrameKind::Probe => {
                    if let Some(reply) = self.scheme.sink_probe(self.now, &frame.cm) {
                        self.send_control(Origin::Nic(n), frame.cm.flow_src, reply);
                    }
                }
                FrameKind::Data | FrameKind::Pause { .. } => {}
            }
            return;
        }
        // a data frame is read where it lies: what the sink and its NP read is in its first line
        let (flow_rec, flow_inst, size, gen_time, src, class) = (
            frame.flow_rec,
            frame.flow_inst,
            frame.size as u64,
            frame.gen_time,
            frame.src,
            frame.class,
        );
        self.deliver(n, flow_rec, flow_inst, size, gen_time, self.now);
        // the NP selected the frame as it left for this NIC, unless tests ask it here
        if self.sink_events
            && (self.select_at_departure
                || self.nps[n as usize].selects(self.pool.get(f), &mut self.np_rngs[n as usize]))
        {
            let out = self.nps[n as usize].on_data(self.now, self.pool.get(f));
            self.pool.free(f);
            if let Some(reply) = out.reply {
                self.send_control(Origin::Nic(n), src, reply);
            }
            if let Some(t) = out.wake {
                let flow = crate::engine::sink_flow(src, class);
                self.queue.push(t, Event::SinkTimer { nic: n, flow });
            }
        } else {
            self.pool.free(f);
        }
    }

    /// The last bit of data `frame` reaches the sink of NIC `n` at `arrival`; it is delivered
    /// `nic.processing_delay` later (D15), or is still in flight if that is after the end.
    #[inline(always)]
    pub(crate) fn deliver(
        &mut self,
        n: u32,
        flow_rec: u32,
        flow_inst: u32,
        size: u64,
        gen_time: SimTime,
        arrival: SimTime,
    ) {
        let t = arrival + SimTime(self.nic_cfg.processing_delay_ps);
        if t >= self.end {
            self.stats.sink_pending += 1;
        } else {
            self.stats.delivered += 1;
            self.last_delivery = self.last_delivery.max(t);
            self.rec.on_delivered(t, flow_rec, n, size, gen_time);
            if flow_inst != NO_FLOW {
                self.flows.frame_done(flow_inst, t, true);
            }
        }
    }

    /// A backward CM message for a flow of NIC `n` (D6, D7): create the limiter at line rate if
    /// the flow has none, then let the RP react. The message names the flow's class (the class
    /// of the frame it is about), which picks the VOQ when there is one per class.
    fn rp_message(&mut self, n: u32, msg: &CmPayload) {
        let now = self.now;
        let v = self.voq(n, msg.flow_dst, msg.flow_class);
        let nic = &mut self.nics[n as usize];
        let line = nic.line_rate.as_f64();
        let key = nic.key(nic.voqs[v as usize].dst, nic.voqs[v as usize].class);
        let voq = &mut nic.voqs[v as usize];
        if voq.limiter.is_none() {
            if !self.scheme.creates_limiter(msg) {
                nic.maybe_recycle(v);
                return; // e.g. positive feedback for a flow that is not limited (§3.3 step 2)
            }
            voq.limiter = Some(RateLimiter::new(line));
            voq.rp = Some(
                self.dormant_rps
                    .remove(&(n, key))
                    .unwrap_or_else(|| self.scheme.new_rp(line)),
            );
        }
        let rl = voq.limiter.as_mut().expect("just created");
        let out =
            voq.rp
                .as_mut()
                .expect("an RP drives a limiter")
                .on_message(now, msg, rl, &mut nic.rng);
        self.apply_rp_output(n, v, out);
        self.limiter_changed(n, v);
    }

    /// Carry out what an RP asked for: a probe behind the frame just sent, a wake-up, a release.
    fn apply_rp_output(&mut self, n: u32, v: u32, out: RpOutput) {
        let now = self.now;
        if let Some(mut probe) = out.probe {
            let nic = &self.nics[n as usize];
            let (dst, class) = (nic.voqs[v as usize].dst, nic.voqs[v as usize].class);
            probe.msg = crate::cm::msg::PROBE;
            probe.flow_src = nic.node;
            probe.flow_dst = dst;
            probe.flow_class = class;
            if self.scheme.probes_carry_base_delay() {
                probe.base_delay = self.base_delay(nic.node, dst, self.cm_frame_bytes as u64).0;
            }
            let mut frame = Frame::data(nic.node, dst, self.cm_frame_bytes, now);
            frame.kind = FrameKind::Probe;
            frame.cm = probe;
            frame.counted = true;
            let origin = self.ports.len() + n as usize;
            self.rec.on_cm(
                now,
                frame.size as u64,
                super::cm_kind(probe.msg, probe.fb, self.scheme.signed_feedback()),
                origin,
            );
            frame.class = class;
            let f = self.pool.alloc(frame);
            // it bypasses the limiter, not the OB: it enters ahead of any data once there is
            // room (D17; with the default one-frame OB, when the frame before it has left)
            self.nics[n as usize].probes.push_back(f);
        }
        let voq = &mut self.nics[n as usize].voqs[v as usize];
        if let Some(t) = out.timer {
            voq.timer_token = voq.timer_token.wrapping_add(1);
            self.queue.push(
                t,
                Event::CmTimer {
                    nic: n,
                    flow: v,
                    token: voq.timer_token,
                },
            );
        }
        if out.release {
            let (dst, class) = (voq.dst, voq.class);
            if let Some(mut rp) = voq.release_limiter() {
                if rp.outlives_release() {
                    let key = self.nics[n as usize].key(dst, class);
                    self.dormant_rps.insert((n, key), rp);
                }
            }
            // the rate series ends here ("no limiter"), whichever event released it
            self.rec.on_rate(now, n, dst, class, f64::NAN);
            self.nics[n as usize].maybe_recycle(v);
        }
    }

    /// A wake-up the notification point of NIC `n` asked for about a flow it receives, its source
    /// and class in `flow` ([`crate::engine::sink_flow`], §7.2).
    pub(crate) fn on_sink_timer(&mut self, n: u32, flow: u32) {
        let (src, class) = crate::engine::sink_flow_parts(flow);
        if let Some(reply) = self.nps[n as usize].on_timer(self.now, src, class) {
            self.send_control(Origin::Nic(n), src, reply);
        }
    }

    pub(crate) fn on_cm_timer(&mut self, n: u32, v: u32, token: u32) {
        let now = self.now;
        let nic = &mut self.nics[n as usize];
        let voq = &mut nic.voqs[v as usize];
        if voq.timer_token != token {
            return;
        }
        let (Some(rp), Some(rl)) = (voq.rp.as_mut(), voq.limiter.as_mut()) else {
            return;
        };
        let out = rp.on_timer(now, rl, &mut nic.rng);
        self.apply_rp_output(n, v, out);
        self.limiter_changed(n, v);
    }

    /// Install, change or remove (`None`) the rate limiter of flow (node `n` → `dst`, class 0).
    /// The engine's own entry point for schemes and for tests of the pacing mechanism.
    pub fn set_flow_rate(&mut self, n: u32, dst: u32, rate_bps: Option<f64>) {
        let v = self.voq(n, dst, 0);
        let nic = &mut self.nics[n as usize];
        let line = nic.line_rate.as_f64();
        let voq = &mut nic.voqs[v as usize];
        match rate_bps {
            Some(r) => {
                let rl = voq.limiter.get_or_insert(RateLimiter::new(line));
                rl.rate_bps = r;
            }
            None => {
                voq.release_limiter();
            }
        }
        self.limiter_changed(n, v);
    }

    /// A limiter's rate changed (or it was released): recompute the VOQ's eligibility from t_last
    /// (D15), so that a raised rate takes effect at once and a lowered one (or a stop) holds a VOQ
    /// that was already waiting in the round robin; record the rate, service the NIC.
    fn limiter_changed(&mut self, n: u32, v: u32) {
        let now = self.now;
        let fs = self.frame_size as u64;
        let nic = &mut self.nics[n as usize];
        let voq = &mut nic.voqs[v as usize];
        let rate = voq.limiter.map_or(f64::NAN, |rl| rl.rate_bps / 1e9);
        self.rec.on_rate(now, nic.node, voq.dst, voq.class, rate);
        let gate = match &voq.limiter {
            Some(rl) => SimTime(voq.t_last.0.saturating_add(pace(fs, rl).0)),
            None => now,
        };
        match voq.state {
            VoqState::Waiting => nic.schedule_voq(v, gate.max(now), now),
            VoqState::Ready if gate > now => {
                // out of the ring until its new gate (a rare event: a scan of the ring is enough)
                nic.ready.retain(|&r| r != v);
                nic.schedule_voq(v, gate, now);
            }
            VoqState::Ready | VoqState::Idle => {}
        }
        nic.maybe_recycle(v);
        self.nic_service(n);
    }
}

/// Frame `f` (`size` bytes, priority `class`) enters `nic`'s OB `ob`: its FIFO, its bytes, and
/// the transfer stop at `egress_xoff` (per class FIFO capacity with PFC classes). A function of
/// the parts, so that a caller holding the NIC borrowed need not look it up again.
#[inline(always)]
fn enter_ob(nic: &mut Nic, ob: &mut Port, cfg: &NicConfig, f: FrameId, class: u8, size: u64) {
    ob.enqueue(f, class, size);
    if let Some(bytes) = nic.ob_class.get_mut(class as usize) {
        *bytes += size;
    } else if ob.q_bytes >= cfg.egress_xoff {
        nic.ob_stopped = true;
    }
}
