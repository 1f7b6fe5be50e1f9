//! BCN / ECM — Backward Congestion Notification (algorithms.md §3, §1.2–1.4, D2–D5, D7, D18).
//!
//! **CP** (§3.2), per egress queue: at each sampling instant (q includes the arriving frame)
//! Qoff = q − Qeq, Qdelta = q − q_old (q_old updated at every sample), Fb = −(Qoff + w·Qdelta)
//! clamped to ±Fbmax = ±(2w+1)·Qeq, optionally quantised (D18). BCN(0,0) above Qsc sends a stop
//! (D4); BCN_MAX above Qmc forces −Fbmax (D5). Negative feedback goes to the source of the
//! sampled frame (optionally only while q > Qeq, D3); positive feedback only to frames whose
//! rate-limited tag names this CP.
//!
//! **RP** (§3.3), per flow: R ← max(Rmin, R·(1 + Gd·Fb)) on Fb < 0 (and the limiter is associated
//! with that CP); R ← min(R_line, R + Gi·Fb·Ru) on Fb > 0 from the associated CP; a stop holds the
//! flow for U(0, T_stop) then resumes at max(Rmin, R/2); optional drift adds R_drift every
//! T_drift; the limiter is released when R reaches the line rate (D7). Gi is stated for
//! `links.rate`: an RP on another link rate uses Gi × (its rate / that rate) (contract).

use std::sync::Arc;

use rand::Rng;
use serde::{Deserialize, Serialize};

use super::sampling::{SamplePoint, Sampler, SamplingMode, SamplingParams};
use super::{msg, CmPayload, CongestionPoint, RateLimiter, ReactionPoint, RpOutput};
use crate::engine::SimRng;
use crate::frame::{Frame, FrameKind};
use crate::time::SimTime;

/// What a CP does at a sampling instant with q ≥ Qsc when BCN(0,0) is on (§3.3 step 3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Bcn00Mode {
    /// Send a BCN(0,0) stop message: the RP holds the flow for U(0, T_stop) (D4; default).
    Stop,
    /// The alternative mode: a negative message with Fb = −Fbmax (the largest decrease).
    Fbmax,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Quantize {
    /// Fb itself is quantised to `fb_bits` (§1.3).
    Fb,
    /// ECM-Q: Qoff and Qdelta quantised separately, Fb reconstructed (§1.3, D18).
    Separate,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Feedback {
    Inband,
    Oob,
}

/// The `[cm]` parameters of `bcn` in base units (bytes, bit/s, ps), as the front end lowers them.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BcnParams {
    pub w: f64,
    pub qeq: f64,
    /// Decrease gain per byte of Fb (per quantum when `fb_bits` > 0).
    pub gd: f64,
    /// Increase gain per byte of Fb (per quantum when `fb_bits` > 0), stated for `gi_rate_bps`.
    pub gi: f64,
    pub ru_bps: f64,
    pub rmin_bps: f64,
    /// How `gd0` was defined (used by the front end's expressions; recorded here).
    pub gd0_rule: String,
    pub sampling: SamplingMode,
    /// Where the CP samples (§1.2).
    pub sample_at: SamplePoint,
    pub ps: f64,
    pub sample_bytes: f64,
    pub sample_jitter: f64,
    pub pmin: f64,
    pub pmax: f64,
    pub oversample_factor: f64,
    /// 0 = raw bytes.
    pub fb_bits: u32,
    pub quantize: Quantize,
    pub bcn_max: bool,
    pub qmc: f64,
    pub bcn00: bool,
    pub bcn00_mode: Bcn00Mode,
    pub qsc: f64,
    pub stop_time_ps: u64,
    pub drift_rate_bps: f64,
    pub drift_period_ps: u64,
    pub negative_only_above_qeq: bool,
    pub cnm_size: u32,
    pub feedback: Feedback,
    pub feedback_delay_ps: u64,
    /// The link rate `gi` is stated for (`links.rate`).
    pub gi_rate_bps: f64,
}

impl BcnParams {
    pub fn fbmax(&self) -> f64 {
        fbmax(self.w, self.qeq)
    }

    pub fn sampling(&self) -> SamplingParams {
        SamplingParams {
            mode: self.sampling,
            at: self.sample_at,
            ps: self.ps,
            sample_bytes: self.sample_bytes,
            sample_jitter: self.sample_jitter,
            pmin: self.pmin,
            pmax: self.pmax,
            oversample_factor: self.oversample_factor,
        }
    }
}

/// Fbmax = (2w+1)·Qeq (§1.3).
pub fn fbmax(w: f64, qeq: f64) -> f64 {
    (2.0 * w + 1.0) * qeq
}

/// Fb = −(Qoff + w·Qdelta), clamped to ±Fbmax (§1.3).
pub fn feedback(qoff: f64, qdelta: f64, w: f64, qeq: f64) -> f64 {
    let m = fbmax(w, qeq);
    (-(qoff + w * qdelta)).clamp(-m, m)
}

/// Fbq = sign(Fb)·min(2^b − 1, floor(|Fb|·(2^b − 1)/Fbmax)) (D18).
pub fn quantize_fb(fb: f64, fbmax: f64, bits: u32) -> f64 {
    let top = ((1u64 << bits) - 1) as f64;
    fb.signum() * top.min((fb.abs() * top / fbmax).floor())
}

/// ECM-Q (§1.3 proposal, D18): Qoff on ±Qeq and Qdelta on ±2·Qeq, each a signed `bits`-bit value
/// (2^(b−1) − 1 levels each side, truncated toward zero, clamped); returns the reconstructed
/// (Qoff, Qdelta) in bytes.
pub fn quantize_separately(qoff: f64, qdelta: f64, qeq: f64, bits: u32) -> (f64, f64) {
    let levels = ((1u64 << (bits - 1)) - 1) as f64;
    let q =
        |x: f64, scale: f64| (x / scale * levels).clamp(-levels, levels).trunc() * scale / levels;
    (q(qoff, qeq), q(qdelta, 2.0 * qeq))
}

/// The BCN congestion point of one egress queue.
#[derive(Clone, Debug)]
pub struct BcnCp {
    p: Arc<BcnParams>,
    cpid: u32,
    sampler: Sampler,
    q_old: f64,
}

impl BcnCp {
    pub fn new(p: Arc<BcnParams>, cpid: u32, rng: &mut SimRng) -> Self {
        let sampler = Sampler::new(p.sampling(), rng);
        BcnCp {
            p,
            cpid,
            sampler,
            q_old: 0.0,
        }
    }

    /// The feedback of a sampling instant at queue `q` (§3.2 steps 3–5): the message, if any.
    pub fn sample(&mut self, q: f64, tagged_by_me: bool, rng: &mut SimRng) -> Option<CmPayload> {
        let p = &self.p;
        let qoff = q - p.qeq;
        let qdelta = q - self.q_old;
        self.q_old = q;
        let m = p.fbmax();
        let mut fb = feedback(qoff, qdelta, p.w, p.qeq);
        let severity = if fb < 0.0 { -fb / m } else { 0.0 };
        let index = ((severity * 63.0).floor().min(63.0) as usize) / 8;
        self.sampler.next(severity, index, rng);
        let severe = p.bcn00 && q >= p.qsc;
        if severe && p.bcn00_mode == Bcn00Mode::Stop {
            return Some(CmPayload {
                msg: msg::STOP,
                qoff,
                qdelta,
                ..Default::default()
            });
        }
        if p.fb_bits > 0 {
            fb = match p.quantize {
                Quantize::Fb => quantize_fb(fb, m, p.fb_bits),
                Quantize::Separate => {
                    let (qo, qd) = quantize_separately(qoff, qdelta, p.qeq, p.fb_bits);
                    quantize_fb(feedback(qo, qd, p.w, p.qeq), m, p.fb_bits)
                }
            };
        }
        if (p.bcn_max && q >= p.qmc) || severe {
            fb = if p.fb_bits > 0 {
                -(((1u64 << p.fb_bits) - 1) as f64)
            } else {
                -m
            };
        }
        let send = if fb < 0.0 {
            !p.negative_only_above_qeq || q > p.qeq
        } else {
            fb > 0.0 && tagged_by_me
        };
        send.then_some(CmPayload {
            msg: msg::FEEDBACK,
            fb,
            qoff,
            qdelta,
            ..Default::default()
        })
    }
}

impl BcnCp {
    /// A data frame passes the sampling point with the queue at `q` (§3.2 steps 2–6).
    fn on_frame(&mut self, q: u64, frame: &Frame, rng: &mut SimRng) -> Option<CmPayload> {
        if !self
            .sampler
            .is_sample(frame.size as u64, q as f64 > self.p.qeq, rng)
        {
            return None;
        }
        let tagged_by_me = frame.cm.tagged && frame.cm.cpid == self.cpid;
        self.sample(q as f64, tagged_by_me, rng)
    }
}

impl CongestionPoint for BcnCp {
    fn on_enqueue(
        &mut self,
        _now: SimTime,
        q: u64,
        frame: &mut Frame,
        rng: &mut SimRng,
    ) -> Option<CmPayload> {
        match self.sampler.params.at {
            SamplePoint::Arrival => self.on_frame(q, frame, rng),
            SamplePoint::Departure => None,
        }
    }
    fn on_dequeue(
        &mut self,
        _now: SimTime,
        q: u64,
        frame: &mut Frame,
        rng: &mut SimRng,
    ) -> Option<CmPayload> {
        // data frames only, as at admission (probes and relayed control pass unsampled)
        match self.sampler.params.at {
            SamplePoint::Departure if frame.kind == FrameKind::Data => self.on_frame(q, frame, rng),
            _ => None,
        }
    }
}

/// The BCN reaction point of one flow.
#[derive(Clone, Debug)]
pub struct BcnRp {
    p: Arc<BcnParams>,
    /// Gi for this RP's link rate.
    gi: f64,
    /// The CP the limiter is associated with (its frames carry RLT(cpid)).
    pub cpid: Option<u32>,
    /// BCN(0,0): the flow is held until this instant, then resumes at max(Rmin, `resume_from`/2).
    stopped_until: Option<SimTime>,
    resume_from: f64,
    next_drift: Option<SimTime>,
}

impl BcnRp {
    pub fn new(p: Arc<BcnParams>, line_rate_bps: f64) -> Self {
        let gi = p.gi * line_rate_bps / p.gi_rate_bps;
        BcnRp {
            p,
            gi,
            cpid: None,
            stopped_until: None,
            resume_from: 0.0,
            next_drift: None,
        }
    }

    /// The rate the feedback acts on: the limiter's, or while stopped the rate to resume from.
    fn rate_mut<'a>(&'a mut self, rl: &'a mut RateLimiter) -> &'a mut f64 {
        if self.stopped_until.is_some() {
            &mut self.resume_from
        } else {
            &mut rl.rate_bps
        }
    }

    /// §3.3 steps 1–2 for feedback `fb` from CP `cpid`.
    pub fn apply_feedback(&mut self, fb: f64, cpid: u32, rl: &mut RateLimiter) {
        let (gd, gi) = (self.p.gd, self.gi);
        self.aimd(fb, cpid, gd, gi, rl);
    }

    /// The rate feedback acts on: the limiter's, or while stopped (D4) the rate it will resume
    /// from (a stopped flow sends nothing, so nothing measured can speak for its rate of 0).
    pub fn effective_rate(&self, rl: &RateLimiter) -> f64 {
        if self.stopped_until.is_some() {
            self.resume_from
        } else {
            rl.rate_bps
        }
    }

    /// The AIMD of §3.3 with gains `gd` and `gi` (Gi for this RP's link rate): E2CM's probe
    /// feedback applies it with the per-flow gains (§4 step 3.4).
    pub fn aimd(&mut self, fb: f64, cpid: u32, gd: f64, gi: f64, rl: &mut RateLimiter) {
        let (ru, rmin, line) = (self.p.ru_bps, self.p.rmin_bps, rl.line_rate_bps);
        if fb < 0.0 {
            let r = self.rate_mut(rl);
            *r = (*r * (1.0 + gd * fb)).max(rmin);
            self.cpid = Some(cpid);
        } else if fb > 0.0 && self.cpid == Some(cpid) {
            let r = self.rate_mut(rl);
            *r = (*r + gi * fb * ru).min(line);
        }
    }

    /// Release at line rate (D7), else a wake-up for the next stop end or drift step.
    pub fn output_for(&self, rl: &RateLimiter) -> RpOutput {
        if self.stopped_until.is_none() && rl.rate_bps >= rl.line_rate_bps {
            return RpOutput {
                release: true,
                ..Default::default()
            };
        }
        let timer = [self.stopped_until, self.next_drift]
            .into_iter()
            .flatten()
            .min();
        RpOutput {
            timer,
            ..Default::default()
        }
    }
}

impl ReactionPoint for BcnRp {
    fn on_message(
        &mut self,
        now: SimTime,
        m: &CmPayload,
        rl: &mut RateLimiter,
        rng: &mut SimRng,
    ) -> RpOutput {
        if self.next_drift.is_none() && self.p.drift_rate_bps > 0.0 {
            self.next_drift = Some(now + SimTime(self.p.drift_period_ps));
        }
        match m.msg {
            msg::FEEDBACK => self.apply_feedback(m.fb, m.cpid, rl),
            msg::STOP if self.stopped_until.is_none() => {
                // D4: hold for U(0, T_stop), then resume at max(Rmin, R/2)
                self.resume_from = rl.rate_bps;
                rl.rate_bps = 0.0;
                self.stopped_until = Some(now + SimTime(rng.gen_range(0..=self.p.stop_time_ps)));
                self.cpid = Some(m.cpid);
            }
            _ => {}
        }
        self.output_for(rl)
    }

    fn on_timer(&mut self, now: SimTime, rl: &mut RateLimiter, _rng: &mut SimRng) -> RpOutput {
        if self.stopped_until.is_some_and(|t| t <= now) {
            self.stopped_until = None;
            rl.rate_bps = (self.resume_from / 2.0).max(self.p.rmin_bps);
        }
        if let Some(t) = self.next_drift.filter(|&t| t <= now) {
            let (drift, line) = (self.p.drift_rate_bps, rl.line_rate_bps);
            let r = self.rate_mut(rl);
            *r = (*r + drift).min(line);
            self.next_drift = Some(t + SimTime(self.p.drift_period_ps));
        }
        self.output_for(rl)
    }

    fn tag(&self) -> Option<u32> {
        self.cpid
    }
}

/// BCN/ECM in the registry (cm/mod.rs): CPs on every CM egress; the first negative feedback or
/// a stop installs the limiter (§1.4, D4).
impl super::SchemeSpec for BcnParams {
    const NAME: &'static str = "bcn";
    type Cp = BcnCp;
    type Rp = BcnRp;
    type Np = ();
    fn cp_on_dequeue(&self) -> super::OnDequeue {
        super::OnDequeue::every_if(self.sample_at == SamplePoint::Departure)
    }
    fn parse(params: &serde_json::Map<String, serde_json::Value>) -> crate::error::Result<Self> {
        super::parse_params(Self::NAME, params)
    }
    fn new_cp(self: &Arc<Self>, cpid: u32, _line_rate_bps: f64, rng: &mut SimRng) -> BcnCp {
        BcnCp::new(self.clone(), cpid, rng)
    }
    fn new_rp(self: &Arc<Self>, line_rate_bps: f64) -> BcnRp {
        BcnRp::new(self.clone(), line_rate_bps)
    }
    fn new_np(self: &Arc<Self>, _node: u32) {}
    fn creates_limiter(&self, m: &CmPayload) -> bool {
        creates_limiter(m)
    }
    fn frame_bytes(&self) -> u32 {
        self.cnm_size
    }
    fn signed_feedback(&self) -> bool {
        true
    }
    fn oob_delay(&self) -> Option<SimTime> {
        (self.feedback == Feedback::Oob).then_some(SimTime(self.feedback_delay_ps))
    }
}

/// §1.4: the first negative feedback (or a stop, D4) installs a BCN-family limiter.
pub(crate) fn creates_limiter(m: &CmPayload) -> bool {
    m.msg == msg::STOP || (m.msg == msg::FEEDBACK && m.fb < 0.0)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::engine::rng::{stream, StreamKind};

    /// PS-BCN-ZHB: W 2, Qeq 150 KB, Gd 1.6667e-6, Gi 6.6667e-4, Ru = Rmin = 10 Mb/s, 2 % sampling.
    pub fn zhb() -> BcnParams {
        serde_json::from_value(serde_json::json!({
            "w": 2.0, "qeq": 150000.0, "gd": 1.6667e-06, "gi": 0.00066667, "ru_bps": 1e7, "rmin_bps": 1e7,
            "gd0_rule": "half", "sampling": "interval", "sample_at": "arrival", "ps": 0.02, "sample_bytes": 75000.0, "sample_jitter": 0.0,
            "pmin": 0.01, "pmax": 0.1, "oversample_factor": 1.0, "fb_bits": 0, "quantize": "fb", "bcn_max": false,
            "qmc": 600000.0, "bcn00": false, "bcn00_mode": "stop", "qsc": 1200000.0, "stop_time_ps": 1000000000u64, "drift_rate_bps": 0.0,
            "drift_period_ps": 20000000000u64, "negative_only_above_qeq": false, "cnm_size": 64, "feedback": "inband",
            "feedback_delay_ps": 0, "gi_rate_bps": 1e10
        }))
        .unwrap()
    }

    fn rng() -> SimRng {
        stream(1, StreamKind::CongestionPoint, 0)
    }

    /// D5: oversampling applies while q > Qeq, strictly: with 1-in-50 interval sampling and a
    /// factor 5, frames arriving at q = Qeq are sampled every 50th, above it every 10th.
    #[test]
    fn oversampling_starts_strictly_above_qeq() {
        let mut p = zhb();
        p.oversample_factor = 5.0;
        let p = Arc::new(p);
        let samples = |q: u64| {
            let mut r = rng();
            let mut cp = BcnCp::new(p.clone(), 7, &mut r);
            (0..100)
                .filter(|_| {
                    cp.q_old = -1.0; // a sample sets q_old to q
                    let mut f = Frame::data(1, 2, 1500, SimTime::ZERO);
                    let _ = cp.on_enqueue(SimTime::ZERO, q, &mut f, &mut r);
                    cp.q_old >= 0.0
                })
                .count()
        };
        assert_eq!(samples(100_000), 2);
        assert_eq!(samples(150_000), 2, "at Qeq: no oversampling");
        assert_eq!(samples(150_001), 10, "above Qeq: five times as often");
    }

    #[test]
    fn cp_feedback_follows_a_queue_trace_exactly() {
        let mut cp = BcnCp::new(Arc::new(zhb()), 7, &mut rng());
        let mut r = rng();
        // samples at q = 100 KB, 200 KB, 260 KB, 250 KB, 100 KB (q_old starts at 0)
        let trace = [100_000.0, 200_000.0, 260_000.0, 250_000.0, 100_000.0];
        let got: Vec<Option<f64>> = trace
            .iter()
            .map(|&q| cp.sample(q, false, &mut r).map(|m| m.fb))
            .collect();
        // Fb = −((q − 150000) + 2·(q − q_old)), clamped at ±750000; positive Fb needs a tag
        let expect = [
            -((100_000.0 - 150_000.0) + 2.0 * 100_000.0), // −150000
            -((200_000.0 - 150_000.0) + 2.0 * 100_000.0), // −250000
            -((260_000.0 - 150_000.0) + 2.0 * 60_000.0),  // −230000
            -((250_000.0 - 150_000.0) + 2.0 * -10_000.0), // −80000
        ];
        assert_eq!(got[..4], expect.map(Some));
        assert_eq!(got[4], None, "Fb = +350000 > 0 but the frame is untagged");
        assert_eq!(
            cp.sample(100_000.0, true, &mut r).map(|m| m.fb),
            Some(50_000.0),
            "tagged: positive sent"
        );
        // q 150 KB after 100 KB: Qoff 0, Qdelta 50000 → Fb = −100000
        assert_eq!(
            cp.sample(150_000.0, true, &mut r).map(|m| m.fb),
            Some(-100_000.0)
        );
        assert_eq!(cp.sample(150_000.0, true, &mut r), None, "Fb = 0: nothing");
    }

    #[test]
    fn fb_weights_qdelta_by_w_and_clamps_at_2w_plus_1_qeq() {
        // w = 8 (a kd row): Fbmax = 17·Qeq = 2.55 MB (w = 2 cannot tell 2w from 2 + w)
        let mut p = zhb();
        p.w = 8.0;
        assert_eq!(fbmax(p.w, p.qeq), 2_550_000.0);
        let mut cp = BcnCp::new(Arc::new(p), 7, &mut rng());
        let mut r = rng();
        // q 200 KB after 0: −(50 000 + 8·200 000) = −1 650 000
        assert_eq!(
            cp.sample(200_000.0, false, &mut r).map(|m| m.fb),
            Some(-1_650_000.0)
        );
        // q 500 KB after 200 KB: −(350 000 + 8·300 000) = −2 750 000, clamped at −2 550 000
        assert_eq!(
            cp.sample(500_000.0, false, &mut r).map(|m| m.fb),
            Some(-2_550_000.0)
        );
        // q 100 KB after 500 KB, tagged: +(50 000 + 3 200 000) = 3 250 000, clamped at +2 550 000
        assert_eq!(
            cp.sample(100_000.0, true, &mut r).map(|m| m.fb),
            Some(2_550_000.0)
        );
        assert_eq!(feedback(-50_000.0, -400_000.0, 8.0, 150_000.0), 2_550_000.0);
        assert_eq!(feedback(10_000.0, 1_000.0, 8.0, 150_000.0), -18_000.0);
    }

    #[test]
    fn adaptive_sampling_follows_the_negative_feedback() {
        // linear: the next per-frame probability is pmin + (pmax − pmin)·|Fb|/Fbmax for Fb < 0
        let mut p = zhb();
        p.sampling = SamplingMode::Linear;
        let mut cp = BcnCp::new(Arc::new(p.clone()), 7, &mut rng());
        let mut r = rng();
        assert_eq!(cp.sampler.p, 0.01);
        // q 150 KB after 0: Fb = −300 000 = −0.4·Fbmax
        cp.sample(150_000.0, false, &mut r);
        assert!(
            (cp.sampler.p - (0.01 + 0.09 * 0.4)).abs() < 1e-15,
            "{}",
            cp.sampler.p
        );
        // Fb > 0 (q falls): back to pmin
        cp.sample(100_000.0, false, &mut r);
        assert_eq!(cp.sampler.p, 0.01);
        // table: the interval of index floor(63·|Fb|/Fbmax)/8, jittered ±15 %
        p.sampling = SamplingMode::Table;
        let mut cp = BcnCp::new(Arc::new(p), 7, &mut rng());
        cp.q_old = 150_000.0;
        // q 600 KB after 150 KB: Fb = −(450 000 + 2·450 000), clamped at −Fbmax: 63 -> 63/8 = 7
        cp.sample(600_000.0, false, &mut r);
        let left = cp.sampler.bytes_left;
        assert!(
            (18_500.0 * 0.85..=18_500.0 * 1.15).contains(&left),
            "{left}"
        );
        // q 600 KB again: Fb = −450 000 = −0.6·Fbmax -> floor(37.8) = 37 -> 37/8 = 4: 30 000 B
        cp.sample(600_000.0, false, &mut r);
        let left = cp.sampler.bytes_left;
        assert!(
            (30_000.0 * 0.85..=30_000.0 * 1.15).contains(&left),
            "{left}"
        );
        // q 200 KB after 600 KB: Fb > 0 -> index 0: 150 000 B
        cp.sample(200_000.0, false, &mut r);
        let left = cp.sampler.bytes_left;
        assert!(
            (150_000.0 * 0.85..=150_000.0 * 1.15).contains(&left),
            "{left}"
        );
    }

    #[test]
    fn clamps_bcn_max_stop_and_the_qeq_gate() {
        let mut p = zhb();
        let mut cp = BcnCp::new(Arc::new(p.clone()), 1, &mut rng());
        let mut r = rng();
        let m = cp.sample(1_000_000.0, false, &mut r).unwrap();
        assert_eq!(m.fb, -750_000.0, "clamped at −(2w+1)Qeq");
        assert_eq!((m.qoff, m.qdelta), (850_000.0, 1_000_000.0));
        p.bcn_max = true;
        p.qmc = 300_000.0;
        let mut cp = BcnCp::new(Arc::new(p.clone()), 1, &mut rng());
        cp.q_old = 300_000.0;
        assert_eq!(
            cp.sample(300_000.0, false, &mut r).unwrap().fb,
            -750_000.0,
            "BCN_MAX forces −Fbmax"
        );
        p.bcn00 = true;
        p.qsc = 300_000.0;
        let mut cp = BcnCp::new(Arc::new(p.clone()), 1, &mut rng());
        cp.q_old = 250_000.0;
        let stop = cp.sample(300_000.0, false, &mut r).unwrap();
        assert_eq!(stop.msg, msg::STOP);
        assert_eq!((stop.qoff, stop.qdelta), (150_000.0, 50_000.0));
        // the alternative mode: a maximal negative message instead, also without BCN_MAX
        p.bcn_max = false;
        p.bcn00_mode = Bcn00Mode::Fbmax;
        let mut cp = BcnCp::new(Arc::new(p.clone()), 1, &mut rng());
        cp.q_old = 300_000.0;
        let m = cp.sample(300_000.0, false, &mut r).unwrap();
        assert_eq!((m.msg, m.fb), (msg::FEEDBACK, -750_000.0));
        cp.q_old = 299_000.0;
        let m = cp.sample(299_000.0, false, &mut r).unwrap();
        assert_eq!(m.fb, -149_000.0, "below Qsc: the plain Fb");
        let mut p = zhb();
        p.negative_only_above_qeq = true;
        let mut cp = BcnCp::new(Arc::new(p), 1, &mut rng());
        assert_eq!(
            cp.sample(140_000.0, false, &mut r),
            None,
            "Fb = −270000 but q <= Qeq"
        );
        assert!(cp.sample(160_000.0, false, &mut r).is_some());
        cp.q_old = 100_000.0;
        assert_eq!(
            cp.sample(150_000.0, false, &mut r),
            None,
            "Fb = −100000 at q = Qeq exactly: not above it"
        );
    }

    #[test]
    fn quantised_feedback_through_the_cp() {
        // fb_bits = 8: Fb in quanta of Fbmax/255 = 2 941.18 B, BCN_MAX at the full 255
        let mut p = zhb();
        p.fb_bits = 8;
        let mut cp = BcnCp::new(Arc::new(p.clone()), 7, &mut rng());
        let mut r = rng();
        // q 100 KB after 0: Fb = −150 000 -> −51; q 200 KB after 100 KB: −250 000 -> −85
        let m = cp.sample(100_000.0, false, &mut r).unwrap();
        assert_eq!((m.fb, m.qoff, m.qdelta), (-51.0, -50_000.0, 100_000.0));
        assert_eq!(cp.sample(200_000.0, false, &mut r).unwrap().fb, -85.0);
        // ECM-Q: Qoff −50 000 -> −42/127 of Qeq, Qdelta 100 000 -> 42/127 of 2·Qeq: the
        // reconstructed Fb is −148 818.9 B -> −50 (−51 unquantised)
        p.quantize = Quantize::Separate;
        let mut cp = BcnCp::new(Arc::new(p.clone()), 7, &mut rng());
        assert_eq!(cp.sample(100_000.0, false, &mut r).unwrap().fb, -50.0);
        // BCN_MAX at q >= Qmc: the largest quantised message
        p.quantize = Quantize::Fb;
        p.bcn_max = true;
        p.qmc = 300_000.0;
        let mut cp = BcnCp::new(Arc::new(p), 7, &mut rng());
        cp.q_old = 300_000.0;
        assert_eq!(cp.sample(300_000.0, false, &mut r).unwrap().fb, -255.0);
        // below Qmc the plain quantised Fb: −(149 999 − 2) = −149 997 -> −50
        assert_eq!(cp.sample(299_999.0, false, &mut r).unwrap().fb, -50.0);
    }

    #[test]
    fn positive_feedback_only_for_frames_this_cp_tagged() {
        let mut p = zhb();
        p.sample_bytes = 1500.0; // every frame is a sampling instant
        let mut cp = BcnCp::new(Arc::new(p), 7, &mut rng());
        let mut r = rng();
        let frame = |tagged: bool, cpid: u32| {
            let mut f = Frame::data(1, 2, 1500, SimTime::ZERO);
            f.cm.tagged = tagged;
            f.cm.cpid = cpid;
            f
        };
        // the queue falls below Qeq: Fb > 0 at every sample
        let mut falling = |f: &mut Frame| {
            cp.q_old = 200_000.0;
            cp.on_enqueue(SimTime::ZERO, 100_000, f, &mut r)
        };
        assert_eq!(falling(&mut frame(false, 7)), None, "untagged");
        assert_eq!(falling(&mut frame(true, 8)), None, "tagged by another CP");
        assert_eq!(falling(&mut frame(false, 8)), None);
        let m = falling(&mut frame(true, 7)).expect("tagged by this CP");
        assert_eq!(m.fb, 250_000.0);
    }

    #[test]
    fn departure_sampling_counts_data_frames_as_they_leave() {
        let mut p = zhb();
        p.sample_bytes = 1500.0;
        p.sample_at = SamplePoint::Departure;
        let mut cp = BcnCp::new(Arc::new(p), 7, &mut rng());
        let mut r = rng();
        let mut data = Frame::data(1, 2, 1500, SimTime::ZERO);
        assert_eq!(
            cp.on_enqueue(SimTime::ZERO, 300_000, &mut data, &mut r),
            None
        );
        assert_eq!(cp.q_old, 0.0, "an admission is no sampling instant");
        let mut probe = Frame::data(1, 2, 1500, SimTime::ZERO);
        probe.kind = FrameKind::Probe;
        assert_eq!(
            cp.on_dequeue(SimTime::ZERO, 300_000, &mut probe, &mut r),
            None
        );
        assert_eq!(cp.q_old, 0.0, "a probe passes unsampled");
        let m = cp
            .on_dequeue(SimTime::ZERO, 300_000, &mut data, &mut r)
            .unwrap();
        assert_eq!(m.fb, -750_000.0);
        assert_eq!(cp.q_old, 300_000.0);
    }

    #[test]
    fn quantisation_boundaries() {
        let m = 750_000.0;
        assert_eq!(quantize_fb(-750_000.0, m, 8), -255.0);
        assert_eq!(quantize_fb(-749_999.0, m, 8), -254.0);
        assert_eq!(
            quantize_fb(-2_941.0, m, 8),
            0.0,
            "just below one quantum (2941.18 B)"
        );
        assert_eq!(quantize_fb(-2_942.0, m, 8), -1.0);
        assert_eq!(
            quantize_fb(10_000.0, m, 6),
            0.0f64.max((10_000.0f64 * 63.0 / m).floor())
        );
        // ECM-Q: Qoff 75000 of ±150000 → 63 of 127 levels; Qdelta −1000 of ±300000 → 0 (toward zero)
        let (qo, qd) = quantize_separately(75_000.0, -1_000.0, 150_000.0, 8);
        assert_eq!(qo, 63.0 * 150_000.0 / 127.0);
        assert_eq!(qd, 0.0);
        let (qo, qd) = quantize_separately(900_000.0, -900_000.0, 150_000.0, 8);
        assert_eq!((qo, qd), (150_000.0, -300_000.0), "clamped to full scale");
    }

    #[test]
    fn rp_trajectory_decrease_floor_increase_association_release() {
        let p = Arc::new(zhb());
        let mut rp = BcnRp::new(p, 1e10);
        let mut rl = RateLimiter::new(1e10);
        let mut r = rng();
        let fb = |fb: f64, cpid: u32| CmPayload {
            msg: msg::FEEDBACK,
            fb,
            cpid,
            ..Default::default()
        };
        // R = 10G·(1 − 1.6667e-6·150000) = 10G·0.749995
        rp.on_message(SimTime::ZERO, &fb(-150_000.0, 3), &mut rl, &mut r);
        assert_eq!(rl.rate_bps, 1e10 * (1.0 + 1.6667e-6 * -150_000.0));
        assert_eq!(rp.tag(), Some(3));
        // Gd·|Fb| = 1.25 > 1: floored at Rmin
        rp.on_message(SimTime::ZERO, &fb(-750_000.0, 3), &mut rl, &mut r);
        assert_eq!(rl.rate_bps, 1e7);
        // positive from another CP: ignored; from the associated CP: + Gi·Fb·Ru
        rp.on_message(SimTime::ZERO, &fb(50_000.0, 4), &mut rl, &mut r);
        assert_eq!(rl.rate_bps, 1e7);
        // Fb = 0 (an E2CM probe's answer can be): no change, and no new association
        rp.aimd(0.0, 4, 1.6667e-6, 0.00066667, &mut rl);
        assert_eq!((rl.rate_bps, rp.tag()), (1e7, Some(3)));
        let out = rp.on_message(SimTime::ZERO, &fb(50_000.0, 3), &mut rl, &mut r);
        assert_eq!(rl.rate_bps, 1e7 + 0.00066667 * 50_000.0 * 1e7);
        assert!(!out.release);
        // the largest increase is Gi·Fbmax·Ru = 5 Gb/s (I-3); two of them reach the line rate:
        // capped and released
        let r1 = rl.rate_bps;
        let out = rp.on_message(SimTime::ZERO, &fb(750_000.0, 3), &mut rl, &mut r);
        assert_eq!(rl.rate_bps, r1 + 0.00066667 * 750_000.0 * 1e7);
        assert!(!out.release);
        let out = rp.on_message(SimTime::ZERO, &fb(750_000.0, 3), &mut rl, &mut r);
        assert_eq!(rl.rate_bps, 1e10);
        assert!(out.release);
    }

    #[test]
    fn gi_scales_with_the_rp_link_rate() {
        let rp = BcnRp::new(Arc::new(zhb()), 1e9);
        assert_eq!(rp.gi, 0.00066667 * 0.1);
    }

    #[test]
    fn bcn_builds_from_config_with_its_hooks() {
        let cfg = |over: serde_json::Value| crate::cm::tests::scheme_with("bcn", zhb(), over);
        let fb = |msg: u8, fb: f64| CmPayload {
            msg,
            fb,
            ..Default::default()
        };
        let s = cfg(serde_json::json!({}));
        assert_eq!(s.name(), "bcn");
        assert!(s.has_congestion_points());
        assert!(!s.needs_sink_events());
        assert!(!s.limiter_from_start());
        assert_eq!(s.cp_on_dequeue(), crate::cm::OnDequeue::Nothing);
        assert!(s.signed_feedback(), "BCN's Fb travels with its sign");
        assert_eq!(s.frame_bytes(), 64);
        assert_eq!(s.oob_delay(), None);
        // §1.4: negative feedback and a stop install a limiter; positive or zero feedback and
        // other messages do not
        assert!(s.creates_limiter(&fb(msg::FEEDBACK, -1.0)));
        assert!(s.creates_limiter(&fb(msg::STOP, 0.0)));
        assert!(!s.creates_limiter(&fb(msg::FEEDBACK, 1.0)));
        assert!(!s.creates_limiter(&fb(msg::FEEDBACK, 0.0)));
        assert!(!s.creates_limiter(&fb(msg::PROBE_REPLY, -1.0)));
        let s = cfg(serde_json::json!({"sample_at": "departure", "cnm_size": 80,
            "feedback": "oob", "feedback_delay_ps": 5000000}));
        assert_eq!(s.cp_on_dequeue(), crate::cm::OnDequeue::Every);
        assert_eq!(s.frame_bytes(), 80);
        assert_eq!(s.oob_delay(), Some(SimTime::us(5)));
    }

    #[test]
    fn no_drift_arms_no_timer_and_a_second_stop_changes_nothing() {
        let mut rp = BcnRp::new(Arc::new(zhb()), 1e10);
        let mut rl = RateLimiter::new(1e10);
        let mut r = rng();
        let neg = CmPayload {
            msg: msg::FEEDBACK,
            fb: -150_000.0,
            cpid: 2,
            ..Default::default()
        };
        // drift_rate_bps = 0 (PS-BCN-ZHB): nothing to wake up for
        let out = rp.on_message(SimTime::ms(1), &neg, &mut rl, &mut r);
        assert_eq!((out.timer, out.release), (None, false));
        assert_eq!(rp.next_drift, None);
        let stop = CmPayload {
            msg: msg::STOP,
            cpid: 2,
            ..Default::default()
        };
        let before = rl.rate_bps;
        rp.on_message(SimTime::ms(2), &stop, &mut rl, &mut r);
        let until = rp.stopped_until.unwrap();
        // a stop while stopped: the hold and the rate to resume from stay
        let out = rp.on_message(SimTime::ms(2), &stop, &mut rl, &mut r);
        assert_eq!(rp.stopped_until, Some(until));
        assert_eq!(out.timer, Some(until));
        rp.on_timer(until, &mut rl, &mut r);
        assert_eq!(rl.rate_bps, before / 2.0);
    }

    #[test]
    fn stop_holds_then_resumes_at_half_and_drift_adds() {
        let mut p = zhb();
        p.drift_rate_bps = 4e6;
        let mut rp = BcnRp::new(Arc::new(p), 1e10);
        let mut rl = RateLimiter::new(1e10);
        rl.rate_bps = 4e9;
        let mut r = rng();
        let out = rp.on_message(
            SimTime::ms(1),
            &CmPayload {
                msg: msg::STOP,
                cpid: 2,
                ..Default::default()
            },
            &mut rl,
            &mut r,
        );
        assert_eq!(rl.rate_bps, 0.0);
        let until = rp.stopped_until.unwrap();
        assert!(until >= SimTime::ms(1) && until <= SimTime::ms(2));
        assert_eq!(
            out.timer,
            Some(until),
            "the stop ends before the first drift (21 ms)"
        );
        let out = rp.on_timer(until, &mut rl, &mut r);
        assert_eq!(rl.rate_bps, 2e9);
        assert_eq!(out.timer, Some(SimTime::ms(21)));
        let out = rp.on_timer(SimTime::ms(21), &mut rl, &mut r);
        assert_eq!(rl.rate_bps, 2e9 + 4e6);
        assert_eq!(out.timer, Some(SimTime::ms(41)));
    }
}
