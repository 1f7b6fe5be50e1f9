//! QCN+ (IBM's "robust QCN", a.k.a. QCN-SP): QCN with a closed, RTT-aware feedback loop — the
//! source measures its round-trip time to the congestion point with directed probes, recomputes
//! the feedback itself with an RTT-dependent derivative weight, decreases at most once per RTT,
//! and increases on positive feedback obtained on demand by probing; QCN's self-increase stays as
//! the fail-safe.
//!
//! Implements algorithms.md §5.7 with decision D17. **This is cnsim's reading of an incomplete
//! public record**: seed 001 gives the behavioural spec and G. Roeck's gain-tuning rules, not the
//! probe format, `factor`, `baseW`, `Gi_plus` or the probe period. The reading:
//!
//! * **CP** = the QCN CP (§5.2; its CNMs carry Qoff and Qdelta in `CmPayload.qoff/qdelta`). A
//!   directed probe addressed to it is answered at once (`on_probe`) with its current Qoff and
//!   Qdelta (against the last sampling instant's q_old; a probe is not a sampling instant) and
//!   the probe's send time echoed in `stamp`.
//! * **RP** = the QCN RP (§5.3) with these changes:
//!   1. From its first CNM on, it knows the CPID and sends a directed probe (class (b), D6) to it
//!      every `probe_period`, or max(measured RTT, 100 us) when that is null (D17). RTT = answer
//!      arrival − the probe's send time (the latest sample; no filtering).
//!   2. It recomputes Fb from Qoff and Qdelta with W = base_w + RTT_ms·factor/N, N = line/CR
//!      (rule 4 of the r1.01 gain tuning), clamps it to ±Fbmax = ±(2w + 1)·Qeq (the CP's `w`)
//!      and quantises its magnitude to 2^b − 1 levels like QntzFb (D18). The CNM's own QntzFb is
//!      only used to decide whether the CNM creates a limiter.
//!   3. Negative Fb (from a CNM or an answer): the QCN decrease with the recomputed quanta, at
//!      most once per measured RTT (rule 2; no limit before the first measurement).
//!   4. Positive Fb (answers only): TR += gi_plus·Fb·1 Mb/s·0.5^(RTT/1 ms) (rule 5: −50 % gain
//!      per ms of RTT; `gi_plus` per quantum in units of 1 Mb/s), then CR = min((CR + TR)/2, line).
//!   5. The byte counter is the safety timeout TO (rule 3): its cycle is QCN's with `to_threshold`
//!      in place of `bc`, floored at 2·RTT·CR (bytes), and every CNM or answer from the CP
//!      (feedback) restarts it, so it completes only when feedback stops for that many bytes.
//!      QCN's timer, FR/AI/HAI and drift are unchanged.
//!   6. A limiter created by a CNM whose recomputed Fb is not negative is released at once.
//! * **Destination**: a probe no CP consumed is echoed by the destination (`sink_probe`), which
//!   gives an RTT sample but no feedback.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::qcn::{quantize, split_params, QcnCp, QcnParams, QcnRp, Wake};
use super::{msg, CmPayload, CongestionPoint, RateLimiter, ReactionPoint, RpOutput, NODE_CPID};
use crate::engine::SimRng;
use crate::frame::Frame;
use crate::time::SimTime;

/// The automatic probe period's floor (D17).
pub const MIN_PROBE_PERIOD: SimTime = SimTime::us(100);
/// The unit of `gi_plus`·Fb: 1 Mb/s (the front end's default gi_plus = 0.1·(rate/1 Mb/s)/(2^b − 1)).
pub const GI_UNIT_BPS: f64 = 1e6;

/// The keys `qcn-plus` adds to `qcn`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlusExtra {
    pub base_w: f64,
    pub factor: f64,
    /// Positive-feedback gain per quantum, in units of 1 Mb/s.
    pub gi_plus: f64,
    /// Probe period; null = max(measured RTT, 100 us).
    pub probe_period_ps: Option<u64>,
    /// The safety timeout TO in bytes (default BC).
    pub to_threshold: f64,
}

impl PlusExtra {
    pub const KEYS: [&'static str; 5] = [
        "base_w",
        "factor",
        "gi_plus",
        "probe_period_ps",
        "to_threshold",
    ];
}

/// `qcn-plus` parameters: the QCN keys plus [`PlusExtra`].
#[derive(Clone, Debug, PartialEq)]
pub struct PlusParams {
    pub qcn: QcnParams,
    pub ext: PlusExtra,
    /// The RP's QCN parameters: `bc` replaced by `to_threshold` (rule 3: the open-loop byte
    /// cycle is the safety timeout).
    pub rp_qcn: Arc<QcnParams>,
}

impl PlusParams {
    pub fn parse(value: serde_json::Value) -> serde_json::Result<Self> {
        let (qcn, ext): (QcnParams, PlusExtra) = split_params(value, &PlusExtra::KEYS)?;
        if ext.to_threshold.is_nan() || ext.to_threshold <= 0.0 || ext.probe_period_ps == Some(0) {
            return Err(<serde_json::Error as serde::de::Error>::custom(
                "to_threshold and probe_period_ps must be > 0",
            ));
        }
        let rp_qcn = Arc::new(QcnParams {
            bc: ext.to_threshold,
            ..qcn
        });
        Ok(PlusParams { qcn, ext, rp_qcn })
    }

    /// A CNM creates a limiter (the RP then recomputes its Fb); answers never do.
    pub fn creates_limiter(&self, m: &CmPayload) -> bool {
        self.qcn.creates_limiter(m)
    }

    /// A probe reached the destination: echo it (an RTT sample without feedback).
    pub fn sink_probe(&self, now: SimTime, probe: &CmPayload) -> Option<CmPayload> {
        Some(CmPayload {
            msg: msg::PROBE_REPLY,
            cpid: NODE_CPID | probe.flow_dst,
            stamp: probe.stamp,
            stamp2: now.0,
            seq: probe.seq,
            flow_src: probe.flow_src,
            flow_dst: probe.flow_dst,
            flow_class: probe.flow_class,
            ..CmPayload::default()
        })
    }
}

/// The QCN+ CP: a QCN CP that answers directed probes.
#[derive(Clone, Debug)]
pub struct PlusCp {
    pub qcn: QcnCp,
}

impl PlusCp {
    pub fn new(p: &PlusParams, rng: &mut SimRng) -> Self {
        PlusCp {
            qcn: QcnCp::new(&p.qcn, rng),
        }
    }
}

impl CongestionPoint for PlusCp {
    fn on_enqueue(
        &mut self,
        now: SimTime,
        q: u64,
        frame: &mut Frame,
        rng: &mut SimRng,
    ) -> Option<CmPayload> {
        self.qcn.on_enqueue(now, q, frame, rng)
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
    fn on_probe(&mut self, now: SimTime, q: u64, probe: &CmPayload) -> Option<CmPayload> {
        let (qoff, qdelta, fb) = self.qcn.peek_fb(q);
        Some(CmPayload {
            msg: msg::PROBE_REPLY,
            fb,
            qoff,
            qdelta,
            stamp: probe.stamp,
            stamp2: now.0,
            seq: probe.seq,
            ..CmPayload::default()
        })
    }
}

/// The QCN+ RP.
#[derive(Clone, Debug)]
pub struct PlusRp {
    pub core: QcnRp,
    pub wake: Wake,
    pub p: Arc<PlusParams>,
    /// The latest RTT sample; ZERO before the first. (The CP whose answers count and where
    /// probes go is `core.cpid`, from the CNMs.)
    pub rtt: SimTime,
    /// The last decrease; NEVER before the first.
    pub last_decrease: SimTime,
    pub next_probe: SimTime,
    pub probes: u32,
}

impl PlusRp {
    pub fn new(p: Arc<PlusParams>, line_rate_bps: f64) -> Self {
        PlusRp {
            core: QcnRp::new(p.rp_qcn.clone(), line_rate_bps),
            wake: Wake::default(),
            p,
            rtt: SimTime::ZERO,
            last_decrease: SimTime::NEVER,
            next_probe: SimTime::NEVER,
            probes: 0,
        }
    }

    fn rtt_ms(&self) -> f64 {
        self.rtt.as_secs_f64() * 1e3
    }

    /// W = base_w + RTT_ms·factor/N with N = line/CR (§5.7 rule 4).
    pub fn w(&self) -> f64 {
        self.p.ext.base_w + self.rtt_ms() * self.p.ext.factor * self.core.cr / self.core.line
    }

    /// The RP's own feedback from a CP's Qoff and Qdelta: (Fb in bytes, clamped; signed quanta).
    pub fn feedback(&self, qoff: f64, qdelta: f64) -> (f64, i64) {
        let fbmax = self.p.qcn.fbmax();
        let fb = (-(qoff + self.w() * qdelta)).clamp(-fbmax, fbmax);
        let q = quantize(fb.abs(), fbmax, self.p.qcn.fb_levels()) as i64;
        (fb, if fb < 0.0 { -q } else { q })
    }

    /// The probe period in force.
    pub fn probe_period(&self) -> SimTime {
        match self.p.ext.probe_period_ps {
            Some(ps) => SimTime(ps),
            None => self.rtt.max(MIN_PROBE_PERIOD),
        }
    }

    /// Negative feedback of `quanta`: the QCN decrease, at most once per measured RTT.
    fn decrease(&mut self, now: SimTime, quanta: u32, rng: &mut SimRng) {
        if self.last_decrease != SimTime::NEVER && now.saturating_sub(self.last_decrease) < self.rtt
        {
            return; // rule 2 (before the first RTT sample, rtt = 0 limits nothing)
        }
        self.core.decrease(now, quanta, rng);
        self.last_decrease = now;
    }

    /// Positive feedback of `quanta` (§5.7 step 4).
    fn increase(&mut self, quanta: u32) {
        let gain = self.p.ext.gi_plus * quanta as f64 * GI_UNIT_BPS * 0.5f64.powf(self.rtt_ms());
        self.core.tr += gain;
        self.core.cr = ((self.core.cr + self.core.tr) / 2.0).min(self.core.line);
    }

    /// Feedback arrived: the safety timeout starts over.
    fn feedback_seen(&mut self, rng: &mut SimRng) {
        if self.core.active {
            self.core.restart_byte_counter(rng);
        }
    }

    fn maybe_probe(&mut self, now: SimTime) -> Option<CmPayload> {
        if !self.core.active || self.next_probe > now {
            return None;
        }
        self.probes += 1;
        self.next_probe = now + self.probe_period();
        Some(CmPayload {
            cpid: self.core.cpid,
            stamp: now.0,
            seq: self.probes,
            ..CmPayload::default()
        })
    }

    fn out(&mut self, now: SimTime, rl: &mut RateLimiter) -> RpOutput {
        let probe = self.maybe_probe(now);
        let next = self.core.next_deadline().min(self.next_probe);
        let mut out = self.core.output(rl, &mut self.wake, next);
        if !out.release {
            out.probe = probe;
        }
        out
    }
}

impl ReactionPoint for PlusRp {
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
                let (_, q) = self.feedback(m.qoff, m.qdelta);
                if q < 0 {
                    self.decrease(now, (-q) as u32, rng);
                }
                if !self.core.active {
                    // rule 6: the recomputed feedback does not ask for a decrease
                    rl.rate_bps = self.core.line;
                    return RpOutput {
                        release: true,
                        ..RpOutput::default()
                    };
                }
                self.feedback_seen(rng);
                if self.next_probe == SimTime::NEVER {
                    self.next_probe = now;
                }
            }
            msg::PROBE_REPLY if self.core.active => {
                let rtt = now.saturating_sub(SimTime(m.stamp));
                self.rtt = rtt;
                self.core.rtt_s = rtt.as_secs_f64();
                if m.cpid == self.core.cpid {
                    let (_, q) = self.feedback(m.qoff, m.qdelta);
                    if q < 0 {
                        self.decrease(now, (-q) as u32, rng);
                    } else if q > 0 {
                        self.increase(q as u32);
                    }
                    self.feedback_seen(rng);
                }
            }
            _ => {}
        }
        self.out(now, rl)
    }
    fn on_send(
        &mut self,
        now: SimTime,
        bytes: u64,
        rl: &mut RateLimiter,
        rng: &mut SimRng,
    ) -> RpOutput {
        self.core.count_bytes(bytes, rng);
        self.out(now, rl)
    }
    fn on_timer(&mut self, now: SimTime, rl: &mut RateLimiter, rng: &mut SimRng) -> RpOutput {
        self.core.run_due(now, rng);
        self.out(now, rl)
    }
}

/// QCN+ in the registry (cm/mod.rs): the destination is the last to answer a directed probe.
impl super::SchemeSpec for PlusParams {
    const NAME: &'static str = "qcn-plus";
    type Cp = PlusCp;
    type Rp = PlusRp;
    type Np = ();
    fn cp_on_dequeue(&self) -> super::OnDequeue {
        super::OnDequeue::every_if(self.qcn.sample_at == super::sampling::SamplePoint::Departure)
    }
    fn parse(params: &serde_json::Map<String, serde_json::Value>) -> crate::error::Result<Self> {
        Self::parse(serde_json::Value::Object(params.clone()))
            .map_err(|e| super::params_error(Self::NAME, e))
    }
    fn new_cp(self: &Arc<Self>, _cpid: u32, _line_rate_bps: f64, rng: &mut SimRng) -> PlusCp {
        PlusCp::new(self, rng)
    }
    fn new_rp(self: &Arc<Self>, line_rate_bps: f64) -> PlusRp {
        PlusRp::new(self.clone(), line_rate_bps)
    }
    fn new_np(self: &Arc<Self>, _node: u32) {}
    fn creates_limiter(&self, m: &CmPayload) -> bool {
        PlusParams::creates_limiter(self, m)
    }
    fn frame_bytes(&self) -> u32 {
        self.qcn.frame_bytes()
    }
    fn oob_delay(&self) -> Option<SimTime> {
        self.qcn.oob_delay()
    }
    fn sink_probe(&self, now: SimTime, probe: &CmPayload) -> Option<CmPayload> {
        PlusParams::sink_probe(self, now, probe)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cm::qcn::tests::{json, rng, rp_params};
    use crate::engine::rng::{stream, StreamKind};

    const LINE: f64 = 10e9;
    const CP: u32 = 9;
    const GI: f64 = 15.873015873015873; // 0.1·(10 G/1 M)/63

    /// QCN+'s own keys as the front end lowers them.
    fn ext() -> serde_json::Value {
        serde_json::json!({"base_w": 2.0, "factor": 1.0, "gi_plus": GI, "probe_period_ps": null, "to_threshold": 150000})
    }

    fn with_ext(mut v: serde_json::Value, over: serde_json::Value) -> PlusParams {
        for (k, x) in ext()
            .as_object()
            .unwrap()
            .iter()
            .chain(over.as_object().unwrap())
        {
            v[k] = x.clone();
        }
        PlusParams::parse(v).unwrap()
    }

    fn new_rp(over: serde_json::Value) -> (PlusRp, RateLimiter, SimRng) {
        let p = with_ext(
            serde_json::to_value(rp_params(serde_json::json!({}))).unwrap(),
            over,
        );
        (
            PlusRp::new(Arc::new(p), LINE),
            RateLimiter::new(LINE),
            rng(),
        )
    }

    fn cnm(qoff: f64, qdelta: f64) -> CmPayload {
        CmPayload {
            msg: msg::FEEDBACK,
            fb: 1.0,
            cpid: CP,
            qoff,
            qdelta,
            ..CmPayload::default()
        }
    }

    fn answer(sent: SimTime, qoff: f64, qdelta: f64) -> CmPayload {
        CmPayload {
            msg: msg::PROBE_REPLY,
            cpid: CP,
            qoff,
            qdelta,
            stamp: sent.0,
            ..CmPayload::default()
        }
    }

    #[test]
    fn parameters_split_with_null_probe_period() {
        let p = with_ext(json(), serde_json::json!({}));
        assert_eq!(p.ext.probe_period_ps, None);
        let p = with_ext(json(), serde_json::json!({"probe_period_ps": 1_000_000}));
        assert_eq!(p.ext.probe_period_ps, Some(1_000_000));
        let v = serde_json::to_value(p.ext).unwrap();
        assert_eq!(v.as_object().unwrap().len(), PlusExtra::KEYS.len());
        let mut v = json();
        v["gi_plus"] = serde_json::json!(1.0);
        assert!(PlusParams::parse(v)
            .unwrap_err()
            .to_string()
            .contains("missing field"));
        // each of the three guards refuses on its own; the RP's byte cycle is the timeout
        for (key, bad) in [
            ("to_threshold", serde_json::json!(0.0)),
            ("to_threshold", serde_json::json!(-1.0)),
            ("probe_period_ps", serde_json::json!(0)),
        ] {
            let mut v = json();
            for (k, x) in ext().as_object().unwrap() {
                v[k] = x.clone();
            }
            v[key] = bad;
            assert!(PlusParams::parse(v).is_err(), "{key}");
        }
        let p = with_ext(json(), serde_json::json!({"to_threshold": 1.0}));
        assert_eq!(p.rp_qcn.bc, 1.0);
    }

    #[test]
    fn cp_answers_with_qoff_qdelta_without_sampling() {
        let mut v = json();
        v["sampling"] = serde_json::json!("interval");
        v["sample_bytes"] = serde_json::json!(1500);
        let p = with_ext(v, serde_json::json!({}));
        let mut r = stream(1, StreamKind::CongestionPoint, 0);
        let mut cp = PlusCp::new(&p, &mut r);
        let mut f = Frame::data(1, 2, 1500, SimTime::ZERO);
        cp.on_enqueue(SimTime::ZERO, 20_000, &mut f, &mut r); // a sample: q_old = 20 000
        let probe = CmPayload {
            msg: msg::PROBE,
            cpid: CP,
            stamp: 77,
            seq: 3,
            ..CmPayload::default()
        };
        let a = cp.on_probe(SimTime::us(5), 30_000, &probe).unwrap();
        assert_eq!(
            (a.qoff, a.qdelta, a.fb),
            (30_000.0 - 26_176.0, 10_000.0, -(3_824.0 + 20_000.0))
        );
        assert_eq!(a.msg, msg::PROBE_REPLY);
        assert_eq!((a.stamp, a.stamp2, a.seq), (77, SimTime::us(5).0, 3));
        assert_eq!(cp.qcn.q_old, 20_000.0, "a probe is not a sampling instant");
        // sampling at departure: admissions are not counted, departures are
        let mut v = json();
        v["sampling"] = serde_json::json!("interval");
        v["sample_bytes"] = serde_json::json!(1500);
        v["sample_at"] = serde_json::json!("departure");
        let p = with_ext(v, serde_json::json!({}));
        let mut cp = PlusCp::new(&p, &mut r);
        assert!(cp
            .on_enqueue(SimTime::ZERO, 60_000, &mut f, &mut r)
            .is_none());
        let m = cp
            .on_dequeue(SimTime::ZERO, 60_000, &mut f, &mut r)
            .unwrap();
        assert_eq!((m.msg, m.fb), (msg::FEEDBACK, 63.0));
    }

    #[test]
    fn recomputed_fb_with_rtt_dependent_w() {
        let (mut rp, _, _) = new_rp(serde_json::json!({}));
        // no RTT yet: W = base_w = 2; Fb = -(1000 + 2·2000) = -5000 -> floor(5000·63/130880) = 2
        assert_eq!(rp.w(), 2.0);
        assert_eq!(rp.feedback(1000.0, 2000.0), (-5000.0, -2));
        // RTT 1 ms, CR = 5 G (N = 2): W = 2 + 1·1/2 = 2.5
        rp.rtt = SimTime::ms(1);
        rp.core.cr = 5e9;
        assert_eq!(rp.w(), 2.5);
        // the larger W turns Fb = -(-10000 + 2·4000) = +2000 into -(-10000 + 2.5·4000) = 0
        assert_eq!(rp.feedback(-10_000.0, 4000.0), (0.0, 0));
        // clamp at ±Fbmax = ±130 880 B -> ±63
        assert_eq!(rp.feedback(200_000.0, 0.0), (-130_880.0, -63));
        assert_eq!(rp.feedback(-200_000.0, 0.0), (130_880.0, 63));
        // the factor scales the RTT term: factor 4, RTT 1 ms, N = 2 -> W = 2 + 4/2 = 4
        let (mut rp, _, _) = new_rp(serde_json::json!({"factor": 4.0}));
        rp.rtt = SimTime::ms(1);
        rp.core.cr = 5e9;
        assert_eq!(rp.w(), 4.0);
    }

    #[test]
    fn first_cnm_decreases_and_probes_then_one_decrease_per_rtt() {
        let (mut rp, mut rl, mut r) = new_rp(serde_json::json!({}));
        let out = rp.on_message(SimTime::ZERO, &cnm(1000.0, 2000.0), &mut rl, &mut r);
        // 2 quanta: CR = 10 G·(1 - 2/128)
        assert_eq!(rl.rate_bps, 9.84375e9);
        let p = out.probe.expect("the first probe goes at once");
        assert_eq!((p.cpid, p.stamp, p.seq), (CP, 0, 1));
        assert_eq!(
            out.timer,
            Some(SimTime::us(100)),
            "probe period max(RTT unknown, 100 us)"
        );
        // the answer at 50 us: RTT = 50 us, Fb = 0 -> no rate change
        let out = rp.on_message(
            SimTime::us(50),
            &answer(SimTime::ZERO, 0.0, 0.0),
            &mut rl,
            &mut r,
        );
        assert_eq!(rp.rtt, SimTime::us(50));
        assert_eq!(rl.rate_bps, 9.84375e9);
        assert!(out.probe.is_none());
        // a CNM 80 us after the last decrease (>= RTT): applied with W = 2 + 0.05·0.984375
        rp.on_message(SimTime::us(80), &cnm(1000.0, 2000.0), &mut rl, &mut r);
        let w = 2.0 + 0.05 * 0.984375;
        let fb: f64 = -(1000.0 + w * 2000.0);
        let quanta = (-fb * 63.0 / 130_880.0).floor();
        assert_eq!(quanta, 2.0);
        let cr = 9.84375e9 * (1.0 - quanta / 128.0);
        assert_eq!(rl.rate_bps, cr);
        // 20 us later (< RTT): ignored; 50 us after the last decrease: applied
        rp.on_message(SimTime::us(100), &cnm(1000.0, 2000.0), &mut rl, &mut r);
        assert_eq!(rl.rate_bps, cr);
        rp.on_message(SimTime::us(130), &cnm(0.0, 20_000.0), &mut rl, &mut r);
        // W = 2 + 0.05·cr/line; Fb = -W·20000 -> quanta
        let w = 2.0 + 0.05 * cr / LINE;
        let quanta = (w * 20_000.0 * 63.0 / 130_880.0).floor();
        assert_eq!(rl.rate_bps, cr * (1.0 - quanta / 128.0));
    }

    #[test]
    fn negative_answers_decrease_and_neutral_feedback_leaves_the_cycle() {
        let (mut rp, mut rl, mut r) = new_rp(serde_json::json!({}));
        // an answer before any CNM: the RL is not active, nothing is measured or changed
        rp.on_message(
            SimTime::ms(1),
            &answer(SimTime::ZERO, 1000.0, 2000.0),
            &mut rl,
            &mut r,
        );
        assert_eq!(
            (rp.rtt, rl.rate_bps, rp.core.active),
            (SimTime::ZERO, LINE, false)
        );
        // a CNM whose QntzFb is 0 is not a CNM: no limiter
        let mut zero = cnm(1000.0, 2000.0);
        zero.fb = 0.0;
        rp.on_message(SimTime::ZERO, &zero, &mut rl, &mut r);
        assert_eq!((rl.rate_bps, rp.core.active), (LINE, false));
        // the first CNM: CR 9.84375 G
        rp.on_message(SimTime::ZERO, &cnm(1000.0, 2000.0), &mut rl, &mut r);
        // the answer 1 ms after its probe: RTT 1 ms, W = 2 + 1·0.984375;
        // Fb = −(1000 + 2.984375·2000) = −6968.75 -> floor(3.35) = 3 quanta
        rp.on_message(
            SimTime::ms(1),
            &answer(SimTime::ZERO, 1000.0, 2000.0),
            &mut rl,
            &mut r,
        );
        let cr = 9.84375e9 * (1.0 - 3.0 / 128.0);
        assert_eq!(rl.rate_bps, cr);
        // a CNM whose recomputed Fb is positive but under one quantum: no decrease, and the
        // recovery cycle goes on (ByteStage kept)
        let (mut rp, mut rl, mut r) = new_rp(serde_json::json!({}));
        rp.on_message(SimTime::ZERO, &cnm(1000.0, 2000.0), &mut rl, &mut r);
        for _ in 0..100 {
            rp.on_send(SimTime::ZERO, 1500, &mut rl, &mut r);
        }
        let (stage, rate) = (rp.core.byte_stage, rl.rate_bps);
        assert_eq!(stage, 1);
        rp.on_message(SimTime::ms(1), &cnm(-1000.0, 0.0), &mut rl, &mut r);
        assert_eq!((rp.core.byte_stage, rl.rate_bps), (stage, rate));
    }

    #[test]
    fn positive_answers_raise_tr_with_rtt_discount_then_release() {
        let (mut rp, mut rl, mut r) = new_rp(serde_json::json!({}));
        rp.on_message(SimTime::ZERO, &cnm(1000.0, 2000.0), &mut rl, &mut r); // CR 9.84375 G, TR 10 G
                                                                             // answer 1 ms after its probe: RTT = 1 ms; Fb = 10000 -> floor(4.81) = 4 quanta
        rp.on_message(
            SimTime::ms(1),
            &answer(SimTime::ZERO, -10_000.0, 0.0),
            &mut rl,
            &mut r,
        );
        let tr = 10e9 + GI * 4.0 * 1e6 * 0.5;
        let cr = (9.84375e9 + tr) / 2.0;
        assert_eq!((rp.core.tr, rl.rate_bps), (tr, cr));
        // again: CR would pass the line rate -> capped, and CR, TR >= line -> released (D7)
        let out = rp.on_message(
            SimTime::ms(2),
            &answer(SimTime::ms(1), -10_000.0, 0.0),
            &mut rl,
            &mut r,
        );
        assert!((cr + tr + GI * 2e6) / 2.0 >= LINE);
        assert!(out.release);
        // an answer from another CP (or the destination) only measures the RTT
        let (mut rp, mut rl, mut r) = new_rp(serde_json::json!({}));
        rp.on_message(SimTime::ZERO, &cnm(1000.0, 2000.0), &mut rl, &mut r);
        let mut a = answer(SimTime::ZERO, -10_000.0, 0.0);
        a.cpid = NODE_CPID | 4;
        rp.on_message(SimTime::us(300), &a, &mut rl, &mut r);
        assert_eq!(
            (rp.rtt, rl.rate_bps, rp.core.tr),
            (SimTime::us(300), 9.84375e9, 10e9)
        );
        assert_eq!(rp.probe_period(), SimTime::us(300));
    }

    #[test]
    fn safety_timeout_bytes_and_probe_period() {
        let (mut rp, mut rl, mut r) = new_rp(serde_json::json!({"to_threshold": 75000}));
        rp.on_message(SimTime::ZERO, &cnm(1000.0, 2000.0), &mut rl, &mut r);
        assert_eq!(rp.core.byte_left, 75_000.0, "TO replaces BC");
        for _ in 0..49 {
            rp.on_send(SimTime::ZERO, 1500, &mut rl, &mut r);
        }
        assert_eq!(rp.core.byte_left, 1500.0);
        // feedback (an answer with Fb = 0) restarts the timeout; RTT 1 ms now floors the cycle at
        // 2·RTT·CR = 2·1e-3·9.84375e9/8 B
        rp.on_message(
            SimTime::ms(1),
            &answer(SimTime::ZERO, 0.0, 0.0),
            &mut rl,
            &mut r,
        );
        assert_eq!(rp.core.byte_left, 2.0 * 1e-3 * 9.84375e9 / 8.0);
        assert_eq!(rp.core.byte_stage, 0);
        assert_eq!(rp.probe_period(), SimTime::ms(1));
        // without feedback the open-loop cycle completes: ByteStage 1, FR step
        let n = (2.0 * 1e-3 * 9.84375e9 / 8.0 / 1500.0f64).ceil() as usize;
        for _ in 0..n {
            rp.on_send(SimTime::ms(1), 1500, &mut rl, &mut r);
        }
        assert_eq!(rp.core.byte_stage, 1);
        assert_eq!(rl.rate_bps, (9.84375e9 + 10e9) / 2.0);
        // a fixed probe period overrides the automatic one; RTT 50 us -> 100 us floor
        let (mut rp, _, _) = new_rp(serde_json::json!({"probe_period_ps": 1_000_000_000}));
        rp.rtt = SimTime::us(5);
        assert_eq!(rp.probe_period(), SimTime::ms(1));
        let (mut rp, _, _) = new_rp(serde_json::json!({}));
        rp.rtt = SimTime::us(50);
        assert_eq!(rp.probe_period(), SimTime::us(100));
    }

    #[test]
    fn probes_follow_the_period_on_timer() {
        let (mut rp, mut rl, mut r) = new_rp(serde_json::json!({}));
        let out = rp.on_message(SimTime::ZERO, &cnm(1000.0, 2000.0), &mut rl, &mut r);
        assert!(out.probe.is_some());
        let out = rp.on_timer(SimTime::us(100), &mut rl, &mut r);
        assert_eq!(
            out.probe.map(|p| (p.stamp, p.seq)),
            Some((SimTime::us(100).0, 2))
        );
        assert_eq!(out.timer, Some(SimTime::us(200)));
    }

    #[test]
    fn a_cnm_without_negative_recomputed_fb_releases_at_once() {
        let (mut rp, mut rl, mut r) = new_rp(serde_json::json!({}));
        // W = 2: Fb = -(-10000 + 2·4000) = +2000
        let out = rp.on_message(SimTime::ZERO, &cnm(-10_000.0, 4000.0), &mut rl, &mut r);
        assert!(out.release);
        assert_eq!(rl.rate_bps, LINE);
    }

    #[test]
    fn destination_echo() {
        let p = with_ext(json(), serde_json::json!({}));
        let probe = CmPayload {
            msg: msg::PROBE,
            cpid: CP,
            stamp: 5,
            seq: 2,
            flow_src: 1,
            flow_dst: 4,
            flow_class: 3,
            ..CmPayload::default()
        };
        let e = p.sink_probe(SimTime(9), &probe).unwrap();
        // the echo names the flow whole, its PFC class too: it reaches that class's limiter
        assert_eq!(
            (e.msg, e.cpid, e.stamp, e.stamp2, e.seq),
            (msg::PROBE_REPLY, NODE_CPID | 4, 5, 9, 2)
        );
        assert_eq!((e.flow_src, e.flow_dst, e.flow_class), (1, 4, 3));
        assert!(!p.creates_limiter(&e));
    }
}
