//! QCN three-point (reflection): QCN whose rate increases are confirmed by the destination
//! instead of self-clocked by the source's byte counter.
//!
//! Implements algorithms.md §5.5 with decision D17 — **cnsim's reading of an incomplete public
//! record** (seed 004 and [PAN07] name the DE bit, the reflection point and RefP = 0.04; the
//! marking rule and the RP's reaction to a reflection are not published):
//!
//! * **CP** = the QCN CP of §5.2 (`qcn::QcnCp`) plus DE marking at enqueue: with
//!   `de_rule = "q_above_qeq"` (default) a data frame gets DE = 1 when q > Qeq (q including it);
//!   with `"last_fb_negative"` when the CP's most recent sampled Fb (this frame's, if it is a
//!   sampling instant) is negative. CPs only set DE, never clear it.
//! * **Reflection point** (the destination NIC): for each received data frame with DE = 0, with
//!   probability `refp`, a `msg::REFLECTION` (Fb = 0) to the frame's source, whether or not the
//!   source limits that flow (a reflection for an unlimited flow is then ignored there).
//! * **RP** = the QCN RP of §5.3 with its own byte counter off: a reflection for a flow with an
//!   active RL does ByteStage += 1 then `increase_event()` (FR/AI/HAI as in QCN); the timer stays
//!   as a fail-safe. CNMs decrease as in QCN.

use std::sync::Arc;

use rand::Rng;
use serde::{Deserialize, Serialize};

use super::qcn::{split_params, QcnCp, QcnParams, QcnRp, Wake};
use super::{msg, CmPayload, CongestionPoint, RateLimiter, ReactionPoint, RpOutput, NODE_CPID};
use crate::engine::SimRng;
use crate::frame::Frame;
use crate::time::SimTime;

/// Which frames a CP marks discard-eligible (D17).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DeRule {
    /// DE := 1 at enqueue when q > Qeq (default).
    QAboveQeq,
    /// DE := 1 at enqueue when the CP's last sampled Fb < 0.
    LastFbNegative,
}

/// The keys `qcn3pt` adds to `qcn`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Qcn3ptExtra {
    /// Reflection probability per DE = 0 data frame at the destination.
    pub refp: f64,
    pub de_rule: DeRule,
}

impl Qcn3ptExtra {
    pub const KEYS: [&'static str; 2] = ["refp", "de_rule"];
}

/// `qcn3pt` parameters: the QCN keys plus [`Qcn3ptExtra`].
#[derive(Clone, Debug, PartialEq)]
pub struct Qcn3ptParams {
    pub qcn: Arc<QcnParams>,
    pub ext: Qcn3ptExtra,
}

impl Qcn3ptParams {
    pub fn parse(value: serde_json::Value) -> serde_json::Result<Self> {
        let (qcn, ext): (QcnParams, Qcn3ptExtra) = split_params(value, &Qcn3ptExtra::KEYS)?;
        super::fraction("refp", ext.refp)
            .map_err(<serde_json::Error as serde::de::Error>::custom)?;
        Ok(Qcn3ptParams {
            qcn: Arc::new(qcn),
            ext,
        })
    }

    /// A CNM creates a limiter; a reflection never does (it only confirms for an active RL).
    pub fn creates_limiter(&self, m: &CmPayload) -> bool {
        self.qcn.creates_limiter(m)
    }

    /// The reflection point's draw (§5.5 step 2): a DE = 0 data frame is reflected with
    /// probability `refp`; a frame marked DE draws nothing, nor does any frame when RefP is 0.
    pub fn reflects(&self, frame: &Frame, rng: &mut SimRng) -> bool {
        !frame.cm.de && self.ext.refp > 0.0 && rng.gen::<f64>() < self.ext.refp
    }

    /// The reflection of `frame`: Fb = 0 to its source, naming the flow (src, dst).
    pub fn reflection(&self, frame: &Frame) -> CmPayload {
        CmPayload {
            msg: msg::REFLECTION,
            cpid: NODE_CPID | frame.dst,
            fb: 0.0,
            flow_src: frame.src,
            flow_dst: frame.dst,
            flow_class: frame.class,
            ..CmPayload::default()
        }
    }
}

/// The QCN-3pt CP: a QCN CP that marks DE.
#[derive(Clone, Debug)]
pub struct Qcn3ptCp {
    pub qcn: QcnCp,
    pub de_rule: DeRule,
}

impl Qcn3ptCp {
    pub fn new(p: &Qcn3ptParams, rng: &mut SimRng) -> Self {
        Qcn3ptCp {
            qcn: QcnCp::new(&p.qcn, rng),
            de_rule: p.ext.de_rule,
        }
    }
}

impl CongestionPoint for Qcn3ptCp {
    fn on_enqueue(
        &mut self,
        now: SimTime,
        q: u64,
        frame: &mut Frame,
        rng: &mut SimRng,
    ) -> Option<CmPayload> {
        let cnm = self.qcn.on_enqueue(now, q, frame, rng);
        let mark = match self.de_rule {
            DeRule::QAboveQeq => q as f64 > self.qcn.qeq,
            DeRule::LastFbNegative => self.qcn.last.fb < 0.0,
        };
        if mark {
            frame.cm.de = true;
        }
        cnm
    }
    fn on_dequeue(
        &mut self,
        now: SimTime,
        q: u64,
        frame: &mut Frame,
        rng: &mut SimRng,
    ) -> Option<CmPayload> {
        self.qcn.on_dequeue(now, q, frame, rng)
    }
}

/// The QCN-3pt RP: the QCN RP without its own byte counter, advanced by reflections.
#[derive(Clone, Debug)]
pub struct Qcn3ptRp {
    pub core: QcnRp,
    pub wake: Wake,
}

impl Qcn3ptRp {
    pub fn new(p: &Qcn3ptParams, line_rate_bps: f64) -> Self {
        let mut core = QcnRp::new(p.qcn.clone(), line_rate_bps);
        core.byte_counter = false; // D17: the RP's own byte counter is off in 3pt
        Qcn3ptRp {
            core,
            wake: Wake::default(),
        }
    }
    fn out(&mut self, rl: &mut RateLimiter) -> RpOutput {
        let next = self.core.next_deadline();
        self.core.output(rl, &mut self.wake, next)
    }
}

impl ReactionPoint for Qcn3ptRp {
    fn on_message(
        &mut self,
        now: SimTime,
        m: &CmPayload,
        rl: &mut RateLimiter,
        rng: &mut SimRng,
    ) -> RpOutput {
        match m.msg {
            msg::FEEDBACK if m.fb > 0.0 => {
                self.core.cpid = m.cpid;
                self.core.decrease(now, m.fb.round() as u32, rng);
            }
            // §5.5 step 3 (D17): ByteStage += 1 then increase_event()
            msg::REFLECTION if self.core.active => self.core.byte_cycle(rng),
            _ => {}
        }
        self.out(rl)
    }
    fn on_timer(&mut self, now: SimTime, rl: &mut RateLimiter, rng: &mut SimRng) -> RpOutput {
        self.core.run_due(now, rng);
        self.out(rl)
    }
    // on_send: nothing; the byte counter is off
}

/// QCN 3-point in the registry (cm/mod.rs): the destination reflects DE = 0 data frames (§5.5).
impl super::SchemeSpec for Qcn3ptParams {
    const NAME: &'static str = "qcn3pt";
    type Cp = Qcn3ptCp;
    type Rp = Qcn3ptRp;
    type Np = Qcn3ptNp;
    fn cp_on_dequeue(&self) -> super::OnDequeue {
        super::OnDequeue::every_if(self.qcn.sample_at == super::sampling::SamplePoint::Departure)
    }
    fn parse(params: &serde_json::Map<String, serde_json::Value>) -> crate::error::Result<Self> {
        Self::parse(serde_json::Value::Object(params.clone()))
            .map_err(|e| super::params_error(Self::NAME, e))
    }
    fn new_cp(self: &Arc<Self>, _cpid: u32, _line_rate_bps: f64, rng: &mut SimRng) -> Qcn3ptCp {
        Qcn3ptCp::new(self, rng)
    }
    fn new_rp(self: &Arc<Self>, line_rate_bps: f64) -> Qcn3ptRp {
        Qcn3ptRp::new(self, line_rate_bps)
    }
    fn new_np(self: &Arc<Self>, _node: u32) -> Qcn3ptNp {
        Qcn3ptNp { p: self.clone() }
    }
    fn creates_limiter(&self, m: &CmPayload) -> bool {
        Qcn3ptParams::creates_limiter(self, m)
    }
    fn frame_bytes(&self) -> u32 {
        self.qcn.frame_bytes()
    }
    fn oob_delay(&self) -> Option<SimTime> {
        self.qcn.oob_delay()
    }
    fn needs_sink_events(&self) -> bool {
        true
    }
}

/// The reflection point of a destination NIC (§5.5 step 2): stateless, it holds the parameters.
#[derive(Clone, Debug)]
pub struct Qcn3ptNp {
    p: Arc<Qcn3ptParams>,
}

impl super::NotificationPoint for Qcn3ptNp {
    /// A selected frame is one drawn for reflection.
    fn on_data(&mut self, _now: SimTime, frame: &Frame) -> super::NpOutput {
        super::NpOutput {
            reply: Some(self.p.reflection(frame)),
            wake: None,
        }
    }
    /// The reflection draw, from the NP's own stream (docs/decisions.md "Random streams").
    fn selects(&mut self, frame: &Frame, rng: &mut SimRng) -> bool {
        self.p.reflects(frame, rng)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cm::qcn::tests::{json, rng, rp_params};
    use crate::cm::qcn::Phase;
    use crate::engine::rng::{stream, StreamKind};

    const LINE: f64 = 10e9;

    fn params(over: serde_json::Value) -> Qcn3ptParams {
        let mut v = json();
        v["refp"] = serde_json::json!(0.04);
        v["de_rule"] = serde_json::json!("q_above_qeq");
        v["sampling"] = serde_json::json!("interval");
        v["sample_bytes"] = serde_json::json!(1500);
        for (k, x) in over.as_object().unwrap() {
            v[k] = x.clone();
        }
        Qcn3ptParams::parse(v).unwrap()
    }

    #[test]
    fn parameters_split_and_reject_unknown_keys() {
        let p = params(serde_json::json!({}));
        assert_eq!(
            p.ext,
            Qcn3ptExtra {
                refp: 0.04,
                de_rule: DeRule::QAboveQeq
            }
        );
        assert_eq!(p.qcn.qeq, 26_176.0);
        // the KEYS list is exactly the extension's fields
        let v = serde_json::to_value(p.ext).unwrap();
        let mut keys: Vec<&str> = v.as_object().unwrap().keys().map(|k| k.as_str()).collect();
        keys.sort();
        assert_eq!(keys, vec!["de_rule", "refp"]);
        let mut v = json();
        v["refp"] = serde_json::json!(0.04);
        v["de_rule"] = serde_json::json!("q_above_qeq");
        v["wp_ps"] = serde_json::json!(1);
        assert!(Qcn3ptParams::parse(v.clone())
            .unwrap_err()
            .to_string()
            .contains("wp_ps"));
        v.as_object_mut().unwrap().remove("wp_ps");
        v.as_object_mut().unwrap().remove("refp");
        assert!(Qcn3ptParams::parse(v)
            .unwrap_err()
            .to_string()
            .contains("refp"));
    }

    #[test]
    fn de_marking_rules() {
        let mut r = stream(1, StreamKind::CongestionPoint, 0);
        // q_above_qeq: strictly above Qeq = 26 176 B
        let p = params(serde_json::json!({"sample_bytes": 1000000}));
        let mut cp = Qcn3ptCp::new(&p, &mut r);
        for (q, de) in [
            (26_175u64, false),
            (26_176, false),
            (26_177, true),
            (10_000, false),
        ] {
            let mut f = Frame::data(1, 2, 1500, SimTime::ZERO);
            cp.on_enqueue(SimTime::ZERO, q, &mut f, &mut r);
            assert_eq!(f.cm.de, de, "q = {q}");
        }
        // a frame already marked upstream stays marked
        let mut f = Frame::data(1, 2, 1500, SimTime::ZERO);
        f.cm.de = true;
        cp.on_enqueue(SimTime::ZERO, 0, &mut f, &mut r);
        assert!(f.cm.de);
        // last_fb_negative: the most recent sample decides (every frame is a sample here)
        let p = params(serde_json::json!({"de_rule": "last_fb_negative"}));
        let mut cp = Qcn3ptCp::new(&p, &mut r);
        // q_old = 0: q = 9000 -> Fb = -((9000-26176) + 2·9000) = -824 < 0 (QntzFb 0: no CNM, but DE)
        let mut f = Frame::data(1, 2, 1500, SimTime::ZERO);
        assert!(cp.on_enqueue(SimTime::ZERO, 9000, &mut f, &mut r).is_none());
        assert!(f.cm.de);
        // q = 9000 again: Fb = 17176 > 0 -> not marked
        let mut f = Frame::data(1, 2, 1500, SimTime::ZERO);
        cp.on_enqueue(SimTime::ZERO, 9000, &mut f, &mut r);
        assert!(!f.cm.de);
        // Fb = 0 (q = q_old = Qeq) is not negative: not marked
        cp.qcn.q_old = 26_176.0;
        let mut f = Frame::data(1, 2, 1500, SimTime::ZERO);
        cp.on_enqueue(SimTime::ZERO, 26_176, &mut f, &mut r);
        assert_eq!(cp.qcn.last.fb, 0.0);
        assert!(!f.cm.de);
    }

    #[test]
    fn a_departure_sampling_cp_sends_as_frames_leave() {
        let mut r = stream(1, StreamKind::CongestionPoint, 0);
        let p = params(serde_json::json!({"sample_at": "departure"}));
        let mut cp = Qcn3ptCp::new(&p, &mut r);
        let mut f = Frame::data(1, 2, 1500, SimTime::ZERO);
        assert!(cp
            .on_enqueue(SimTime::ZERO, 60_000, &mut f, &mut r)
            .is_none());
        assert!(f.cm.de, "DE is marked at admission all the same");
        // q_old = 0, q = 60 000: Fb = −(33 824 + 120 000) -> clamped, QntzFb 63
        let m = cp
            .on_dequeue(SimTime::ZERO, 60_000, &mut f, &mut r)
            .unwrap();
        assert_eq!((m.msg, m.fb), (msg::FEEDBACK, 63.0));
    }

    #[test]
    fn reflections_only_for_unmarked_frames_with_probability_refp() {
        let p = params(serde_json::json!({"refp": 1.0}));
        let mut r = stream(1, StreamKind::Sink, 0);
        let mut f = Frame::data(3, 5, 1500, SimTime::ZERO);
        assert!(p.reflects(&f, &mut r));
        let m = p.reflection(&f);
        assert_eq!(
            (m.msg, m.fb, m.flow_src, m.flow_dst, m.cpid),
            (msg::REFLECTION, 0.0, 3, 5, NODE_CPID | 5)
        );
        assert!(!p.creates_limiter(&m));
        // a frame marked DE: no reflection, and no draw from the sink's stream
        f.cm.de = true;
        let mut twin = r.clone();
        assert!(!p.reflects(&f, &mut r));
        assert_eq!(r.gen::<u64>(), twin.gen::<u64>());
        // refp = 0: the same for every frame
        let p0 = params(serde_json::json!({"refp": 0.0}));
        let mut twin = r.clone();
        assert!(!p0.reflects(&Frame::data(3, 5, 1500, SimTime::ZERO), &mut r));
        assert_eq!(r.gen::<u64>(), twin.gen::<u64>());
        // refp = 0.04 (the default): one draw per unmarked frame, a reflection for 4 % of them
        let p = params(serde_json::json!({}));
        let f = Frame::data(3, 5, 1500, SimTime::ZERO);
        let n = 100_000;
        let hits = (0..n).filter(|_| p.reflects(&f, &mut r)).count();
        assert!((hits as f64 / n as f64 - 0.04).abs() < 0.003, "{hits}");
    }

    #[test]
    fn the_reflection_point_selects_exactly_the_frames_it_reflects() {
        use crate::cm::NotificationPoint;
        let mut np = Qcn3ptNp {
            p: Arc::new(params(serde_json::json!({ "refp": 0.5 }))),
        };
        let plain = Frame::data(3, 5, 1500, SimTime::ZERO);
        // the selection is the draw: the same stream gives the same answers as `reflects`
        let mut r = stream(1, StreamKind::Sink, 0);
        let mut twin = r.clone();
        let selected: Vec<bool> = (0..64).map(|_| np.selects(&plain, &mut r)).collect();
        let drawn: Vec<bool> = (0..64).map(|_| np.p.reflects(&plain, &mut twin)).collect();
        assert_eq!(selected, drawn);
        assert!(selected.contains(&true) && selected.contains(&false));
        // a selected frame is reflected at its arrival, without another draw
        let mut twin = r.clone();
        let out = np.on_data(SimTime::ZERO, &plain);
        assert_eq!(
            out.reply.map(|m| (m.msg, m.flow_src)),
            Some((msg::REFLECTION, 3))
        );
        assert_eq!(r.gen::<u64>(), twin.gen::<u64>());
    }

    #[test]
    fn reflections_drive_fr_then_ai_and_the_byte_counter_is_off() {
        let mut v = serde_json::to_value(rp_params(serde_json::json!({}))).unwrap();
        v["refp"] = serde_json::json!(0.04);
        v["de_rule"] = serde_json::json!("q_above_qeq");
        let p = Qcn3ptParams::parse(v).unwrap();
        let mut rp = Qcn3ptRp::new(&p, LINE);
        let mut rl = RateLimiter::new(LINE);
        let mut r = rng();
        let refl = CmPayload {
            msg: msg::REFLECTION,
            ..CmPayload::default()
        };
        // a reflection before any CNM does nothing (no active RL)
        rp.on_message(SimTime::ZERO, &refl, &mut rl, &mut r);
        assert_eq!((rp.core.byte_stage, rl.rate_bps), (0, LINE));
        let cnm = CmPayload {
            msg: msg::FEEDBACK,
            fb: 32.0,
            ..CmPayload::default()
        };
        let out = rp.on_message(SimTime::ZERO, &cnm, &mut rl, &mut r);
        assert_eq!(rl.rate_bps, 7.5e9);
        assert_eq!(
            out.timer,
            Some(SimTime::ms(15)),
            "the timer stays as a fail-safe"
        );
        // sending never advances anything
        for _ in 0..10_000 {
            rp.on_send(SimTime::ZERO, 1500, &mut rl, &mut r);
        }
        assert_eq!((rp.core.byte_stage, rl.rate_bps), (0, 7.5e9));
        // reflections 1..5: FR; the 6th: AI (R_AI = 5 Mb/s)
        let expect = [8.75e9, 9.375e9, 9.6875e9, 9.84375e9, 9.921875e9];
        for (i, cr) in expect.into_iter().enumerate() {
            rp.on_message(SimTime::ZERO, &refl, &mut rl, &mut r);
            assert_eq!(rp.core.byte_stage, i as u32 + 1);
            assert_eq!((rl.rate_bps, rp.core.tr), (cr, 10e9));
            assert_eq!(rp.core.phase(), Phase::FastRecovery);
        }
        rp.on_message(SimTime::ZERO, &refl, &mut rl, &mut r);
        assert_eq!(rp.core.phase(), Phase::ActiveIncrease);
        assert_eq!(
            (rl.rate_bps, rp.core.tr),
            ((9.921875e9 + 10.005e9) / 2.0, 10.005e9)
        );
        // the timer still works: stage 1 of the timer (FR for the timer, AI overall)
        let out = rp.on_timer(SimTime::ms(15), &mut rl, &mut r);
        assert_eq!(rp.core.time_stage, 1);
        assert_eq!(rp.core.tr, 10.010e9);
        assert_eq!(out.timer, Some(SimTime::ms(30)));
        // feedback without congestion (QntzFb 0) is no decrease: the stages stay
        let zero = CmPayload {
            msg: msg::FEEDBACK,
            fb: 0.0,
            ..CmPayload::default()
        };
        let rate = rl.rate_bps;
        rp.on_message(SimTime::ms(15), &zero, &mut rl, &mut r);
        assert_eq!((rp.core.byte_stage, rp.core.time_stage), (6, 1));
        assert_eq!(rl.rate_bps, rate);
    }
}
