//! QCN two-point (IEEE 802.1Qau): the congestion point samples its queue and sends a CNM carrying
//! the quantised feedback QntzFb to the source of the sampled frame; the reaction point lowers
//! its current rate CR multiplicatively and recovers it by itself, clocked by a byte counter and
//! a timer, through fast recovery (FR), active increase (AI) and hyper-active increase (HAI).
//!
//! Implements algorithms.md §5.1–5.4 with the project's decisions D7 (release), D8 (strict `>`
//! phase rule, TR := CR only after an increase, jitter U(1 − j, 1 + j)), D9 (EFR = the TR/8
//! clamp, `ai_byte_count`), D17 (`halving`, `target_update`) and D18 (QntzFb range from
//! `fb_bits`, gains per quantum, drift). The CP and RP here are also the building blocks of the
//! other QCN-family schemes (`qcn3pt`, `qcn_sonar`, `qcn_plus`), which wrap them.
//!
//! Units: queue lengths and Fb in bytes, rates in b/s, times in ps; QntzFb in quanta of
//! Fbmax/(2^b − 1), Fbmax = (2w + 1)·Qeq.

use std::sync::Arc;

use rand::Rng;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::sampling::{SamplePoint, Sampler, SamplingMode, SamplingParams};
use super::{
    fraction, msg, positive, CmPayload, CongestionPoint, RateLimiter, ReactionPoint, RpOutput,
};
use crate::engine::SimRng;
use crate::frame::{Frame, FrameKind};
use crate::time::SimTime;

/// What `target_update` selects (§5.3 step 1.2, D8).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TargetUpdate {
    /// TR := CR on a CNM only when ByteStage > 0 or TimeStage > 0 (default).
    AfterIncrease,
    /// TR := CR on every CNM.
    Always,
}

/// What `halving` selects (§5.3 steps 2–3, D17).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Halving {
    /// Each counter halves its period once its own stage reaches F ([CODE:pcn-qcn]; default).
    Own,
    /// Both counters halve their period only in HAI ([CODE:ns3-rdma]).
    Hai,
}

/// Transport of backward messages (D6; §1.5).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Feedback {
    Inband,
    Oob,
}

/// QCN parameters as the front end lowers them (contract "cm parameter names", qcn; every key
/// present, units in the names). Also the common part of `qcn3pt`, `qcn-sonar` and `qcn-plus`,
/// whose own keys are split off before this struct parses the rest (see [`split_params`]).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QcnParams {
    /// Derivative weight w.
    pub w: f64,
    /// Set point Qeq, bytes.
    pub qeq: f64,
    /// Decrease gain per quantum of QntzFb (1/128 = 0.0078125).
    pub gd: f64,
    pub rmin_bps: f64,
    /// b: QntzFb ∈ [0, 2^b − 1] (D18).
    pub fb_bits: u32,
    pub sampling: SamplingMode,
    /// Where the CP samples (§1.2).
    pub sample_at: SamplePoint,
    pub ps: f64,
    pub sample_bytes: f64,
    pub pmin: f64,
    pub pmax: f64,
    /// Self-increase of CR and TR while the RL is active (D18; 0 = off).
    pub drift_rate_bps: f64,
    pub drift_period_ps: u64,
    /// Byte-counter cycle BC, bytes.
    pub bc: f64,
    /// Timer cycle T.
    pub timer_ps: u64,
    /// Fast-recovery threshold F.
    pub f: u32,
    pub r_ai_bps: f64,
    pub r_hai_bps: f64,
    pub hai: bool,
    /// Largest fractional decrease per CNM.
    pub min_dec: f64,
    /// The TR/8 clamp of §5.3 step 4.2 (D9).
    pub efr: bool,
    /// EFR reading (b) of §5.4, experimental: the first byte-counter cycle and the first timer
    /// period after a decrease are this fraction of their normal length (1 = off, the default).
    pub efr_first_cycle: f64,
    /// Byte-counter cycle once ByteStage ≥ F (D9), bytes.
    pub ai_byte_count: f64,
    pub target_update: TargetUpdate,
    pub halving: Halving,
    /// Byte counter and timer jitter: period × U(1 − jitter, 1 + jitter) (D8).
    pub jitter: f64,
    pub cnm_size: u32,
    pub feedback: Feedback,
    pub feedback_delay_ps: u64,
    /// QCN "w/ (0,0)" (S1, §5.4): a sample at q ≥ `qsc` sends a stop message instead of a CNM,
    /// and the RP holds the flow for U(0, `stop_time`) and resumes at half its rate (§3.3 step 3).
    /// QCN two-point only (the front end offers it there; [`split_params`] refuses it for the
    /// family's other schemes, whose RPs do not take stops).
    #[serde(default)]
    pub bcn00: bool,
    #[serde(default)]
    pub qsc: f64,
    #[serde(default)]
    pub stop_time_ps: u64,
}

/// Deserialize-error helper.
fn bad(what: String) -> serde_json::Error {
    <serde_json::Error as serde::de::Error>::custom(what)
}

/// Split the keys `extra_keys` (a scheme's own parameters) off `value` and parse both parts with
/// `deny_unknown_fields`: the QCN base from what is left, the extension from what was split off.
///
/// `#[serde(flatten)]` would disable `deny_unknown_fields`, so the family shares [`QcnParams`]
/// this way instead: an unknown key stays in the base map and is rejected there, by name.
pub fn split_params<E: DeserializeOwned>(
    value: serde_json::Value,
    extra_keys: &[&str],
) -> serde_json::Result<(QcnParams, E)> {
    let serde_json::Value::Object(mut base) = value else {
        return Err(bad("the parameters must be a table".into()));
    };
    let mut extra = serde_json::Map::new();
    for k in extra_keys {
        if let Some(v) = base.remove(*k) {
            extra.insert((*k).to_string(), v);
        }
    }
    let qcn = QcnParams::parse(serde_json::Value::Object(base))?;
    if qcn.bcn00 {
        return Err(bad(
            "bcn00 = true: (0,0) is an option of QCN two-point only".into(),
        ));
    }
    let ext = serde_json::from_value(serde_json::Value::Object(extra))?;
    Ok((qcn, ext))
}

impl QcnParams {
    /// Parse and check (the front end validated already; this guards hand-written configs).
    pub fn parse(value: serde_json::Value) -> serde_json::Result<Self> {
        let p: QcnParams = serde_json::from_value(value)?;
        p.check().map_err(bad)?;
        Ok(p)
    }

    fn check(&self) -> Result<(), String> {
        positive("qeq", self.qeq)?;
        positive("bc", self.bc)?;
        positive("ai_byte_count", self.ai_byte_count)?;
        positive("rmin_bps", self.rmin_bps)?;
        if self.w.is_nan() || self.w < 0.0 {
            return Err(format!("w = {}: must be >= 0", self.w));
        }
        if !(1..=30).contains(&self.fb_bits) {
            return Err(format!("fb_bits = {}: must be in [1, 30]", self.fb_bits));
        }
        if self.f == 0 {
            return Err("f = 0: must be >= 1".into());
        }
        if self.timer_ps == 0 {
            return Err("timer_ps = 0: must be > 0".into());
        }
        if !(0.0..1.0).contains(&self.jitter) {
            return Err(format!("jitter = {}: must be in [0, 1)", self.jitter));
        }
        if !(self.efr_first_cycle > 0.0 && self.efr_first_cycle <= 1.0) {
            return Err(format!(
                "efr_first_cycle = {}: must be in (0, 1]",
                self.efr_first_cycle
            ));
        }
        fraction("min_dec", self.min_dec)?;
        if self.bcn00 && !(self.qsc >= 0.0 && self.qsc.is_finite()) {
            return Err(format!("qsc = {}: must be >= 0 with bcn00", self.qsc));
        }
        if self.drift_rate_bps > 0.0 && self.drift_period_ps == 0 {
            return Err("drift_period_ps = 0: must be > 0 when drift_rate_bps > 0".into());
        }
        Ok(())
    }

    /// Fbmax = (2w + 1)·Qeq, bytes (§1.3).
    pub fn fbmax(&self) -> f64 {
        (2.0 * self.w + 1.0) * self.qeq
    }

    /// 2^b − 1: the largest QntzFb.
    pub fn fb_levels(&self) -> u32 {
        (1u32 << self.fb_bits) - 1
    }

    /// The CP sampler for these parameters. `jitter` mode jitters `sample_bytes` by ± `jitter`
    /// of itself (QCN has no `sample_jitter` key; cnsim's reading).
    pub fn sampling_params(&self) -> SamplingParams {
        SamplingParams {
            mode: self.sampling,
            at: self.sample_at,
            ps: self.ps,
            sample_bytes: self.sample_bytes,
            sample_jitter: self.jitter * self.sample_bytes,
            pmin: self.pmin,
            pmax: self.pmax,
            oversample_factor: 1.0,
        }
    }

    pub fn frame_bytes(&self) -> u32 {
        self.cnm_size
    }

    pub fn oob_delay(&self) -> Option<SimTime> {
        match self.feedback {
            Feedback::Oob => Some(SimTime(self.feedback_delay_ps)),
            Feedback::Inband => None,
        }
    }

    /// A CNM (QntzFb > 0) creates the flow's limiter; nothing else does (§1.4, §5.3 step 1.1).
    pub fn creates_limiter(&self, m: &CmPayload) -> bool {
        (m.msg == msg::FEEDBACK && m.fb > 0.0) || m.msg == msg::STOP
    }
}

/// min(2^b − 1, ⌊x·(2^b − 1)/Fbmax⌋) for a feedback magnitude x ≥ 0 (§1.3 HPE form, D18).
pub fn quantize(x: f64, fbmax: f64, levels: u32) -> u32 {
    if x.is_nan() || x <= 0.0 {
        return 0;
    }
    let q = (x * levels as f64 / fbmax).floor();
    if q >= levels as f64 {
        levels
    } else {
        q as u32
    }
}

/// One sampling instant of a CP (§5.2 step 3–4).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Sample {
    pub qoff: f64,
    pub qdelta: f64,
    /// Fb = −(Qoff + w·Qdelta), clamped at −Fbmax (bytes).
    pub fb: f64,
    /// QntzFb (0 when Fb ≥ 0).
    pub qntz: u32,
    /// The sampling-table index used for the next interval: ⌊QntzFb·8/2^b⌋ (D18).
    pub index: usize,
}

/// QCN congestion point (§5.2): q includes the arriving frame (D14); Qoff, Qdelta and q_old are
/// updated at every sampling instant, whether or not a CNM is sent (§1.2).
#[derive(Clone, Debug)]
pub struct QcnCp {
    pub w: f64,
    pub qeq: f64,
    pub fbmax: f64,
    pub levels: u32,
    pub fb_bits: u32,
    /// The (0,0) threshold Qsc, bytes (`None` without (0,0)).
    pub qsc: Option<f64>,
    pub sampler: Sampler,
    /// Queue at the previous sampling instant.
    pub q_old: f64,
    /// The last sampling instant's values (diagnostics, QCN-3pt `last_fb_negative`).
    pub last: Sample,
}

impl QcnCp {
    pub fn new(p: &QcnParams, rng: &mut SimRng) -> Self {
        QcnCp {
            w: p.w,
            qeq: p.qeq,
            fbmax: p.fbmax(),
            levels: p.fb_levels(),
            fb_bits: p.fb_bits,
            qsc: p.bcn00.then_some(p.qsc),
            sampler: Sampler::new(p.sampling_params(), rng),
            q_old: 0.0,
            last: Sample::default(),
        }
    }

    /// Fb = −(Qoff + w·Qdelta) of queue `q` against q_old, without updating anything (probes).
    pub fn peek_fb(&self, q: u64) -> (f64, f64, f64) {
        let qoff = q as f64 - self.qeq;
        let qdelta = q as f64 - self.q_old;
        let fb = (-(qoff + self.w * qdelta)).max(-self.fbmax);
        (qoff, qdelta, fb)
    }

    /// A sampling instant with queue `q` (§5.2 steps 3–5): compute and remember Fb and QntzFb,
    /// set q_old, and set up the sampler's next interval.
    pub fn sample(&mut self, q: u64, rng: &mut SimRng) -> Sample {
        let (qoff, qdelta, fb) = self.peek_fb(q);
        self.q_old = q as f64;
        // §5.2 step 4: only Fb < 0 is quantised and reported
        let qntz = if fb < 0.0 {
            quantize(-fb, self.fbmax, self.levels)
        } else {
            0
        };
        // D18: the table index is the three high bits of the b-bit QntzFb
        let index = ((qntz as u64 * 8) >> self.fb_bits) as usize;
        let severity = if fb < 0.0 { -fb / self.fbmax } else { 0.0 };
        self.sampler.next(severity, index, rng);
        self.last = Sample {
            qoff,
            qdelta,
            fb,
            qntz,
            index,
        };
        self.last
    }

    /// The CNM for a sample, if it has one (QntzFb > 0, §5.1). The engine fills cpid and flow.
    pub fn cnm(s: &Sample) -> Option<CmPayload> {
        (s.qntz > 0).then(|| CmPayload {
            msg: msg::FEEDBACK,
            fb: s.qntz as f64,
            qoff: s.qoff,
            qdelta: s.qdelta,
            ..CmPayload::default()
        })
    }
}

impl QcnCp {
    /// A data frame passes the sampling point with the queue at `q` (§5.2).
    fn on_frame(&mut self, q: u64, frame: &Frame, rng: &mut SimRng) -> Option<CmPayload> {
        if !self.sampler.is_sample(frame.size as u64, false, rng) {
            return None;
        }
        let s = self.sample(q, rng);
        if self.qsc.is_some_and(|qsc| q as f64 >= qsc) {
            // (0,0): severe congestion stops the source (§3.2 step 4, as BCN's CP)
            return Some(CmPayload {
                msg: msg::STOP,
                qoff: s.qoff,
                qdelta: s.qdelta,
                ..CmPayload::default()
            });
        }
        Self::cnm(&s)
    }
}

impl CongestionPoint for QcnCp {
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

/// Wake-up bookkeeping for an RP with several deadlines (algorithms.md §9, lazy timers): ask the
/// NIC for the earliest one only when it differs from what was asked last.
#[derive(Clone, Copy, Debug)]
pub struct Wake {
    pub armed: SimTime,
}

impl Default for Wake {
    fn default() -> Self {
        Wake {
            armed: SimTime::NEVER,
        }
    }
}

impl Wake {
    pub fn request(&mut self, next: SimTime) -> Option<SimTime> {
        if next == self.armed {
            return None;
        }
        self.armed = next;
        (next != SimTime::NEVER).then_some(next)
    }
}

/// U(1 − j, 1 + j) (D8); exactly 1 without drawing when j = 0.
pub fn jitter_factor(j: f64, rng: &mut SimRng) -> f64 {
    if j > 0.0 {
        rng.gen_range(1.0 - j..=1.0 + j)
    } else {
        1.0
    }
}

/// Add a duration given in (fractional) ps.
fn after(now: SimTime, ps: f64) -> SimTime {
    SimTime(now.0.saturating_add(ps.round().max(1.0) as u64))
}

/// Increase phase (§5.3 step 4.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    FastRecovery,
    ActiveIncrease,
    HyperActiveIncrease,
}

/// QCN reaction point of one flow (§5.3; D7–D9, D17, D18). The flow's limiter rate is CR.
#[derive(Clone, Debug)]
pub struct QcnRp {
    pub p: Arc<QcnParams>,
    pub line: f64,
    /// Current rate CR and target rate TR, b/s.
    pub cr: f64,
    pub tr: f64,
    pub byte_stage: u32,
    pub time_stage: u32,
    /// Bytes left in the current byte-counter cycle.
    pub byte_left: f64,
    /// The RP's own byte counter runs (off in QCN-3pt, D17).
    pub byte_counter: bool,
    /// Step 4.2's TR/8 clamp may apply (off in QCN-SONAR: "no FR1 target-rate adjustment").
    pub fr1_adjust: bool,
    /// QCN+ only: byte cycles are at least 2·RTT·CR (§5.7 step 5); 0 otherwise.
    pub rtt_s: f64,
    /// Next timer expiry, next drift step; NEVER while the RL is not active.
    pub timer_at: SimTime,
    pub drift_at: SimTime,
    /// The RL has been activated by a first decrease.
    pub active: bool,
    /// The CPID of the last CNM (set by the scheme's RP: SONAR pings and QCN+ probes go there).
    pub cpid: u32,
    /// (0,0): the flow is held (limiter at 0) until this instant; NEVER when not stopped.
    pub stopped_until: SimTime,
}

impl QcnRp {
    /// A new RP: CR = TR = line rate, stages 0 (§5.3 step 1.1, D7); inactive until its first CNM.
    pub fn new(p: Arc<QcnParams>, line_rate_bps: f64) -> Self {
        QcnRp {
            p,
            line: line_rate_bps,
            cr: line_rate_bps,
            tr: line_rate_bps,
            byte_stage: 0,
            time_stage: 0,
            byte_left: 0.0,
            byte_counter: true,
            fr1_adjust: true,
            rtt_s: 0.0,
            timer_at: SimTime::NEVER,
            drift_at: SimTime::NEVER,
            active: false,
            cpid: 0,
            stopped_until: SimTime::NEVER,
        }
    }

    /// The earliest of the RP's own deadlines.
    pub fn next_deadline(&self) -> SimTime {
        self.timer_at.min(self.drift_at).min(self.stopped_until)
    }

    /// D7: released when CR and TR have reached the line rate.
    pub fn released(&self) -> bool {
        self.cr >= self.line && self.tr >= self.line
    }

    fn in_hai(&self) -> bool {
        self.p.hai && self.byte_stage > self.p.f && self.time_stage > self.p.f
    }

    /// The current phase by the strict rule of §5.3 step 4.1 (D8): FR for exactly F cycles of
    /// each counter; AI once either stage exceeds F; HAI once both do (if `hai`).
    pub fn phase(&self) -> Phase {
        let f = self.p.f;
        if self.in_hai() {
            Phase::HyperActiveIncrease
        } else if self.byte_stage > f || self.time_stage > f {
            Phase::ActiveIncrease
        } else {
            Phase::FastRecovery
        }
    }

    /// Length of the next byte-counter cycle before jitter (§5.3 step 2, D9, D17): BC while
    /// ByteStage < F, then `ai_byte_count`; halved once ByteStage ≥ F (`halving = "own"`) or in
    /// HAI (`"hai"`). A separate active-increase count (S4's AIByteCnt, `ai_byte_count` ≠ BC) is
    /// that cycle itself, the standard's BC/2 replaced, so `"own"` does not halve it again
    /// (docs/decisions.md, "QCN's AI byte count"). QCN+ floors it at 2·RTT·CR (§5.7 step 5).
    pub fn byte_period(&self) -> f64 {
        let f = self.p.f;
        let separate_ai = self.p.ai_byte_count != self.p.bc;
        let base = if self.byte_stage < f {
            self.p.bc
        } else {
            self.p.ai_byte_count
        };
        let halve = match self.p.halving {
            Halving::Own => self.byte_stage >= f && !separate_ai,
            Halving::Hai => self.in_hai(),
        };
        let b = if halve { base / 2.0 } else { base };
        b.max(2.0 * self.rtt_s * self.cr / 8.0)
    }

    /// Length of the next timer cycle before jitter, ps (§5.3 step 3, D17).
    pub fn timer_period(&self) -> f64 {
        let halve = match self.p.halving {
            Halving::Own => self.time_stage >= self.p.f,
            Halving::Hai => self.in_hai(),
        };
        let t = self.p.timer_ps as f64;
        if halve {
            t / 2.0
        } else {
            t
        }
    }

    /// Restart the byte counter for a new cycle.
    pub fn restart_byte_counter(&mut self, rng: &mut SimRng) {
        self.byte_left = self.byte_period() * jitter_factor(self.p.jitter, rng);
    }

    /// A decrease by QntzFb = `qntz` quanta (§5.3 step 1). Activates the RL if needed.
    pub fn decrease(&mut self, now: SimTime, qntz: u32, rng: &mut SimRng) {
        // step 1.3: gd per quantum, capped at min_dec
        self.decrease_by(now, (self.p.gd * qntz as f64).min(self.p.min_dec), rng);
    }

    /// A (0,0) stop (§3.3 step 3, QCN "w/ (0,0)"): unless the flow is already held, hold it for
    /// U(0, stop_time) and let it resume at max(Rmin, CR/2), the decrease's bookkeeping (TR,
    /// stages, counters) done as for a CNM.
    pub fn stop(&mut self, now: SimTime, rng: &mut SimRng) {
        if self.stopped_until != SimTime::NEVER {
            return;
        }
        self.decrease_by(now, 0.5, rng);
        self.stopped_until = now + SimTime(rng.gen_range(0..=self.p.stop_time_ps));
    }

    /// §5.3 step 1 with the fractional decrease `dec`.
    fn decrease_by(&mut self, now: SimTime, dec: f64, rng: &mut SimRng) {
        if !self.active {
            self.active = true;
            if self.p.drift_rate_bps > 0.0 {
                self.drift_at = after(now, self.p.drift_period_ps as f64);
            }
        }
        // step 1.2 (D8): TR := CR only after an increase event, unless "always"
        if self.p.target_update == TargetUpdate::Always
            || self.byte_stage > 0
            || self.time_stage > 0
        {
            self.tr = self.cr;
        }
        // step 1.3, floored at Rmin
        self.cr = (self.cr * (1.0 - dec)).max(self.p.rmin_bps);
        // step 1.4; EFR reading (b) (§5.4, experimental) shortens this first recovery cycle
        self.byte_stage = 0;
        self.time_stage = 0;
        self.restart_byte_counter(rng);
        self.timer_at = after(
            now,
            self.p.timer_ps as f64 * jitter_factor(self.p.jitter, rng) * self.p.efr_first_cycle,
        );
        self.byte_left *= self.p.efr_first_cycle;
    }

    /// §5.3 step 4: one increase event after a stage counter advanced.
    pub fn increase_event(&mut self) {
        let f = self.p.f;
        let delta = match self.phase() {
            Phase::HyperActiveIncrease => {
                self.p.r_hai_bps * (self.byte_stage.min(self.time_stage) - f) as f64
            }
            Phase::ActiveIncrease => self.p.r_ai_bps,
            Phase::FastRecovery => 0.0,
        };
        // step 4.2 (D9): the TR/8 clamp ("extra fast recovery") in the first cycle
        if self.p.efr
            && self.fr1_adjust
            && (self.byte_stage == 1 || self.time_stage == 1)
            && self.tr > 10.0 * self.cr
        {
            self.tr /= 8.0;
        } else {
            self.tr += delta;
        }
        // step 4.3
        self.cr = ((self.cr + self.tr) / 2.0).min(self.line);
    }

    /// A byte-counter cycle completed (or, in QCN-3pt, a reflection arrived): ByteStage += 1,
    /// next cycle, increase event (§5.3 step 2; §5.5 step 3).
    pub fn byte_cycle(&mut self, rng: &mut SimRng) {
        self.byte_stage += 1;
        self.restart_byte_counter(rng);
        self.increase_event();
    }

    /// Bytes of the flow left its VOQ: run the byte counter (§5.3 step 2).
    pub fn count_bytes(&mut self, bytes: u64, rng: &mut SimRng) {
        if !self.active || !self.byte_counter {
            return;
        }
        self.byte_left -= bytes as f64;
        if self.byte_left <= 0.0 {
            self.byte_cycle(rng);
        }
    }

    /// Run the timer and drift deadlines that are due at `now` (timer first on a tie), and end
    /// a (0,0) stop that is due.
    pub fn run_due(&mut self, now: SimTime, rng: &mut SimRng) {
        if self.stopped_until <= now {
            self.stopped_until = SimTime::NEVER;
        }
        if self.timer_at <= now {
            // §5.3 step 3
            self.time_stage += 1;
            self.timer_at = after(now, self.timer_period() * jitter_factor(self.p.jitter, rng));
            self.increase_event();
        }
        if self.drift_at <= now {
            // D18 / §3.3 step 4: drift adds to CR and TR, each capped at the line rate
            // (a TR already above the line rate after AI is left where it is)
            self.cr = (self.cr + self.p.drift_rate_bps).min(self.line);
            if self.tr < self.line {
                self.tr = (self.tr + self.p.drift_rate_bps).min(self.line);
            }
            self.drift_at = after(now, self.p.drift_period_ps as f64);
        }
    }

    /// Write CR to the limiter and build the output: release (D7) or the earliest wake-up.
    pub fn output(&self, rl: &mut RateLimiter, wake: &mut Wake, next: SimTime) -> RpOutput {
        let stopped = self.stopped_until != SimTime::NEVER;
        rl.rate_bps = if stopped { 0.0 } else { self.cr };
        if self.active && !stopped && self.released() {
            return RpOutput {
                release: true,
                ..RpOutput::default()
            };
        }
        RpOutput {
            timer: wake.request(next),
            ..RpOutput::default()
        }
    }
}

/// The plain QCN RP: a [`QcnRp`] and its wake-up.
#[derive(Clone, Debug)]
pub struct QcnReaction {
    pub core: QcnRp,
    pub wake: Wake,
}

impl QcnReaction {
    pub fn new(p: Arc<QcnParams>, line_rate_bps: f64) -> Self {
        QcnReaction {
            core: QcnRp::new(p, line_rate_bps),
            wake: Wake::default(),
        }
    }
    fn out(&mut self, rl: &mut RateLimiter) -> RpOutput {
        let next = self.core.next_deadline();
        self.core.output(rl, &mut self.wake, next)
    }
}

impl ReactionPoint for QcnReaction {
    fn on_message(
        &mut self,
        now: SimTime,
        m: &CmPayload,
        rl: &mut RateLimiter,
        rng: &mut SimRng,
    ) -> RpOutput {
        if m.msg == msg::FEEDBACK && m.fb > 0.0 {
            self.core.cpid = m.cpid;
            self.core.decrease(now, m.fb.round() as u32, rng);
        } else if m.msg == msg::STOP {
            self.core.cpid = m.cpid;
            self.core.stop(now, rng);
        }
        self.out(rl)
    }
    fn on_send(
        &mut self,
        _now: SimTime,
        bytes: u64,
        rl: &mut RateLimiter,
        rng: &mut SimRng,
    ) -> RpOutput {
        self.core.count_bytes(bytes, rng);
        self.out(rl)
    }
    fn on_timer(&mut self, now: SimTime, rl: &mut RateLimiter, rng: &mut SimRng) -> RpOutput {
        self.core.run_due(now, rng);
        self.out(rl)
    }
}

/// QCN 2-point in the registry (cm/mod.rs): a CNM (QntzFb > 0) installs the limiter (§5.3 1.1).
impl super::SchemeSpec for QcnParams {
    const NAME: &'static str = "qcn";
    type Cp = QcnCp;
    type Rp = QcnReaction;
    type Np = ();
    fn cp_on_dequeue(&self) -> super::OnDequeue {
        super::OnDequeue::every_if(self.sample_at == SamplePoint::Departure)
    }
    fn parse(params: &serde_json::Map<String, serde_json::Value>) -> crate::error::Result<Self> {
        Self::parse(serde_json::Value::Object(params.clone()))
            .map_err(|e| super::params_error(Self::NAME, e))
    }
    fn new_cp(self: &Arc<Self>, _cpid: u32, _line_rate_bps: f64, rng: &mut SimRng) -> QcnCp {
        QcnCp::new(self, rng)
    }
    fn new_rp(self: &Arc<Self>, line_rate_bps: f64) -> QcnReaction {
        QcnReaction::new(self.clone(), line_rate_bps)
    }
    fn new_np(self: &Arc<Self>, _node: u32) {}
    fn creates_limiter(&self, m: &CmPayload) -> bool {
        QcnParams::creates_limiter(self, m)
    }
    fn frame_bytes(&self) -> u32 {
        QcnParams::frame_bytes(self)
    }
    fn oob_delay(&self) -> Option<SimTime> {
        QcnParams::oob_delay(self)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::engine::rng::{stream, StreamKind};

    /// The eval-deck QCN parameters as lowered by the front end (PS-EVAL-QCN), with `sampling`
    /// replaced by `interval` so tests choose their sampling instants.
    pub(crate) fn json() -> serde_json::Value {
        serde_json::json!({"w": 2.0, "qeq": 26176, "gd": 0.0078125, "rmin_bps": 5000000, "fb_bits": 6,
            "sampling": "linear", "sample_at": "arrival", "ps": 0.01, "sample_bytes": 150000, "pmin": 0.01, "pmax": 0.1,
            "drift_rate_bps": 0, "drift_period_ps": 20000000000u64, "bc": 150000, "timer_ps": 15000000000u64,
            "f": 5, "r_ai_bps": 12000000, "r_hai_bps": 50000000, "hai": false, "min_dec": 0.5, "efr": true, "efr_first_cycle": 1.0,
            "ai_byte_count": 37500, "target_update": "after_increase", "halving": "own", "jitter": 0.15,
            "cnm_size": 64, "feedback": "inband", "feedback_delay_ps": 0,
            "bcn00": false, "qsc": 300000.0, "stop_time_ps": 1000000000u64})
    }

    pub(crate) fn params(over: serde_json::Value) -> QcnParams {
        let mut v = json();
        for (k, x) in over.as_object().unwrap() {
            v[k] = x.clone();
        }
        QcnParams::parse(v).unwrap()
    }

    /// MIB-style RP parameters without jitter: BC 150 000 B, T 15 ms, F 5, R_AI 5 Mb/s,
    /// R_HAI 50 Mb/s, Gd 1/128, min_dec 0.5, Rmin 5 Mb/s.
    pub(crate) fn rp_params(over: serde_json::Value) -> QcnParams {
        let base = params(
            serde_json::json!({"jitter": 0.0, "r_ai_bps": 5000000, "hai": true, "ai_byte_count": 150000}),
        );
        let mut v = serde_json::to_value(base).unwrap();
        for (k, x) in over.as_object().unwrap() {
            v[k] = x.clone();
        }
        QcnParams::parse(v).unwrap()
    }

    pub(crate) fn rng() -> SimRng {
        stream(7, StreamKind::ReactionPoint, 0)
    }

    const LINE: f64 = 10e9;

    fn frame() -> Frame {
        Frame::data(3, 1, 1500, SimTime::ZERO)
    }

    fn cnm(qntz: u32) -> CmPayload {
        CmPayload {
            msg: msg::FEEDBACK,
            fb: qntz as f64,
            ..CmPayload::default()
        }
    }

    fn close(a: f64, b: f64) {
        assert!((a - b).abs() <= 1e-6 * b.abs().max(1.0), "{a} != {b}");
    }

    // ---------------------------------------------------------------- parameters

    #[test]
    fn parameters_parse_exactly_and_reject_unknown_keys() {
        let p = QcnParams::parse(json()).unwrap();
        assert_eq!(p.fbmax(), 5.0 * 26176.0);
        assert_eq!(p.fb_levels(), 63);
        assert_eq!(p.sampling, SamplingMode::Linear);
        assert_eq!(p.oob_delay(), None);
        let mut v = json();
        v["refp"] = serde_json::json!(0.04);
        assert!(QcnParams::parse(v)
            .unwrap_err()
            .to_string()
            .contains("refp"));
        let mut v = json();
        v["feedback"] = serde_json::json!("oob");
        v["feedback_delay_ps"] = serde_json::json!(1000);
        assert_eq!(
            QcnParams::parse(v).unwrap().oob_delay(),
            Some(SimTime(1000))
        );
        let mut v = json();
        v["fb_bits"] = serde_json::json!(0);
        assert!(QcnParams::parse(v).is_err());
        let mut v = json();
        v.as_object_mut().unwrap().remove("bc");
        assert!(QcnParams::parse(v).unwrap_err().to_string().contains("bc"));
    }

    #[test]
    fn the_parameter_guards_reject_exactly_what_they_name() {
        // (key, value, accepted?): each guard's boundary from both sides
        let cases: [(&str, serde_json::Value, bool); 18] = [
            ("qeq", serde_json::json!(1e-9), true),
            ("qeq", serde_json::json!(0.0), false),
            ("qeq", serde_json::json!(-1.0), false),
            ("rmin_bps", serde_json::json!(1.0), true),
            ("rmin_bps", serde_json::json!(0.0), false),
            ("w", serde_json::json!(0.0), true),
            ("w", serde_json::json!(-0.5), false),
            ("jitter", serde_json::json!(0.0), true),
            ("jitter", serde_json::json!(1.0), false),
            ("efr_first_cycle", serde_json::json!(1.0), true),
            ("efr_first_cycle", serde_json::json!(0.0), false),
            ("min_dec", serde_json::json!(1.0), true),
            ("min_dec", serde_json::json!(1.5), false),
            ("f", serde_json::json!(1), true),
            ("f", serde_json::json!(0), false),
            ("timer_ps", serde_json::json!(0), false),
            ("fb_bits", serde_json::json!(30), true),
            ("fb_bits", serde_json::json!(31), false),
        ];
        for (key, value, ok) in cases {
            let mut v = json();
            v[key] = value.clone();
            let got = QcnParams::parse(v);
            assert_eq!(got.is_ok(), ok, "{key} = {value}: {got:?}");
            if let Err(e) = got {
                assert!(e.to_string().contains(key), "{key}: {e}");
            }
        }
        // a drift needs its period; without a drift the period is not read
        let mut v = json();
        v["drift_rate_bps"] = serde_json::json!(4e6);
        v["drift_period_ps"] = serde_json::json!(0);
        assert!(QcnParams::parse(v.clone()).is_err());
        v["drift_rate_bps"] = serde_json::json!(0.0);
        assert!(QcnParams::parse(v).is_ok());
        // QCN (0,0)'s threshold is checked only with bcn00 on
        let mut v = json();
        v["qsc"] = serde_json::json!(-1.0);
        assert!(QcnParams::parse(v.clone()).is_ok());
        v["bcn00"] = serde_json::json!(true);
        assert!(QcnParams::parse(v.clone())
            .unwrap_err()
            .to_string()
            .contains("qsc"));
        v["qsc"] = serde_json::json!(0.0);
        assert!(QcnParams::parse(v).is_ok());
    }

    #[test]
    fn fbmax_follows_w_and_sets_the_quantum() {
        // Fbmax = (2w + 1)·Qeq: at w = 8, 17·Qeq (w = 2 cannot tell 2w from 2 + w)
        let p = params(
            serde_json::json!({"w": 8.0, "qeq": 10_000.0, "sampling": "interval", "sample_bytes": 1500}),
        );
        assert_eq!(p.fbmax(), 170_000.0);
        let mut r = stream(1, StreamKind::CongestionPoint, 0);
        let mut cp = QcnCp::new(&p, &mut r);
        // q_old = 0, q = 12 000: Fb = -(2 000 + 8·12 000) = -98 000 -> floor(98 000·63/170 000) = 36
        let m = cp.on_enqueue(SimTime::ZERO, 12_000, &mut frame(), &mut r);
        assert_eq!(cp.last.fb, -98_000.0);
        assert_eq!(m.map(|m| m.fb), Some(36.0));
        // Qdelta = 0: Fb = -2 000 -> floor(0.741) = 0, no CNM
        assert!(cp
            .on_enqueue(SimTime::ZERO, 12_000, &mut frame(), &mut r)
            .is_none());
        // q = 30 000 after 12 000: -(20 000 + 8·18 000) = -164 000 -> floor(60.78) = 60
        let m = cp.on_enqueue(SimTime::ZERO, 30_000, &mut frame(), &mut r);
        assert_eq!(m.map(|m| m.fb), Some(60.0));
        // q = 50 000 after 30 000: -(40 000 + 8·20 000) = -200 000, clamped at -Fbmax -> 63
        let m = cp.on_enqueue(SimTime::ZERO, 50_000, &mut frame(), &mut r);
        assert_eq!(cp.last.fb, -170_000.0);
        assert_eq!(m.map(|m| m.fb), Some(63.0));
    }

    #[test]
    fn jitter_sampling_spreads_the_interval_by_the_rp_jitter() {
        // QCN has no sample_jitter key: "jitter" sampling varies sample_bytes by ± jitter of itself
        let p = params(
            serde_json::json!({"sampling": "jitter", "sample_bytes": 150_000.0, "jitter": 0.2}),
        );
        let s = p.sampling_params();
        assert_eq!(s.sample_bytes, 150_000.0);
        assert_eq!(s.sample_jitter, 30_000.0);
        assert_eq!(s.oversample_factor, 1.0);
        assert_eq!((s.pmin, s.pmax, s.ps), (0.01, 0.1, 0.01));
    }

    #[test]
    fn only_cnms_with_feedback_create_limiters() {
        let p = params(serde_json::json!({}));
        assert!(p.creates_limiter(&cnm(1)));
        assert!(!p.creates_limiter(&cnm(0)));
        assert!(!p.creates_limiter(&CmPayload {
            msg: msg::REFLECTION,
            ..CmPayload::default()
        }));
        assert!(!p.creates_limiter(&CmPayload {
            msg: msg::PROBE_REPLY,
            fb: 3.0,
            ..CmPayload::default()
        }));
    }

    // ---------------------------------------------------------------- congestion point

    /// A CP that samples every 1500 B frame: Qeq = 26 176 B, w = 2, Fbmax = 130 880 B, b = 6.
    fn every_frame_cp() -> (QcnCp, SimRng) {
        let p = params(serde_json::json!({"sampling": "interval", "sample_bytes": 1500}));
        let mut r = stream(1, StreamKind::CongestionPoint, 0);
        (QcnCp::new(&p, &mut r), r)
    }

    #[test]
    fn a_departure_sampling_cp_samples_only_frames_that_leave() {
        // §1.2's switch: with sample_at = "departure" admissions are not counted; each frame
        // that starts to leave is, with the queue that still holds it
        let p = params(serde_json::json!(
            {"sampling": "interval", "sample_bytes": 1500, "sample_at": "departure"}
        ));
        let mut r = stream(1, StreamKind::CongestionPoint, 0);
        let mut cp = QcnCp::new(&p, &mut r);
        for q in [1500, 30_000, 90_000] {
            assert_eq!(cp.on_enqueue(SimTime::ZERO, q, &mut frame(), &mut r), None);
        }
        assert_eq!(cp.q_old, 0.0, "no sampling instant at admission");
        let mut probe = frame();
        probe.kind = FrameKind::Probe;
        assert_eq!(
            cp.on_dequeue(SimTime::ZERO, 30_000, &mut probe, &mut r),
            None
        );
        assert_eq!(
            cp.q_old, 0.0,
            "a probe leaving is not a data frame to sample"
        );
        // Fb = -((30000-26176) + 2·30000) = -63824 -> QntzFb 30 (as the arrival trace below)
        let m = cp.on_dequeue(SimTime::ZERO, 30_000, &mut frame(), &mut r);
        assert_eq!(cp.last.fb, -63_824.0);
        assert_eq!(m.map(|m| m.fb), Some(30.0));
        assert_eq!(cp.q_old, 30_000.0);
        // an arrival-sampling CP ignores departures
        let (mut cp, mut r) = every_frame_cp();
        assert_eq!(
            cp.on_dequeue(SimTime::ZERO, 90_000, &mut frame(), &mut r),
            None
        );
        assert_eq!(cp.q_old, 0.0);
    }

    #[test]
    fn cp_trace_gives_exact_fb_qntzfb_and_updates_q_old_at_every_sample() {
        let (mut cp, mut r) = every_frame_cp();
        // (q, expected Fb, expected QntzFb); quantum = 130 880/63 = 2077.46 B
        // q_old starts at 0.
        let trace: [(u64, f64, u32); 6] = [
            // Fb = -((1500-26176) + 2·1500) = 21676 > 0 -> no CNM (q_old := 1500)
            (1500, 21_676.0, 0),
            // Fb = -((30000-26176) + 2·28500) = -60824 -> floor(60824·63/130880) = floor(29.278) = 29
            (30_000, -60_824.0, 29),
            // Fb = -((30000-26176) + 0) = -3824 -> floor(1.8407) = 1
            (30_000, -3_824.0, 1),
            // Fb = -((28000-26176) + 2·(-2000)) = 2176 > 0 (q above Qeq, draining): no CNM
            (28_000, 2_176.0, 0),
            // Fb = -((90000-26176) + 2·62000) = -187824 -> clamped at -130880 -> 63
            (90_000, -130_880.0, 63),
            // Fb = -((90000-26176) + 0) = -63824 -> floor(30.722) = 30
            (90_000, -63_824.0, 30),
        ];
        for (i, (q, fb, qntz)) in trace.into_iter().enumerate() {
            let m = cp.on_enqueue(SimTime::ZERO, q, &mut frame(), &mut r);
            assert_eq!(cp.last.fb, fb, "step {i}");
            assert_eq!(cp.last.qntz, qntz, "step {i}");
            assert_eq!(
                cp.q_old, q as f64,
                "q_old is updated at every sampling instant"
            );
            match m {
                Some(m) => {
                    assert!(qntz > 0);
                    assert_eq!(m.msg, msg::FEEDBACK);
                    assert_eq!(m.fb, qntz as f64);
                    assert_eq!(m.qoff, q as f64 - 26_176.0);
                    assert_eq!(m.qdelta, cp.last.qdelta);
                }
                None => assert_eq!(qntz, 0, "step {i}: a CNM is sent iff QntzFb > 0"),
            }
        }
    }

    #[test]
    fn quantisation_boundaries() {
        let fbmax = 130_880.0;
        // exactly Fbmax -> 63; above -> 63 (clamped); one byte short -> 62
        assert_eq!(quantize(fbmax, fbmax, 63), 63);
        assert_eq!(quantize(2.0 * fbmax, fbmax, 63), 63);
        assert_eq!(quantize(fbmax - 1.0, fbmax, 63), 62);
        // one quantum is 130880/63 = 2077.46 B: 2077 -> 0 (no CNM), 2078 -> 1
        assert_eq!(quantize(2077.0, fbmax, 63), 0);
        assert_eq!(quantize(2078.0, fbmax, 63), 1);
        assert_eq!(quantize(0.0, fbmax, 63), 0);
        // 8 bits: 255 levels
        assert_eq!(quantize(fbmax / 2.0, fbmax, 255), 127);
        // through the CP: q_old = 0, q = Q -> Fb = -((Q-26176) + 2Q) = 26176 - 3Q
        // -Fb = 2077 needs 3Q = 28253 (not an integer); take Q with -Fb just below/above one quantum
        let (mut cp, mut r) = every_frame_cp();
        // 3·9417 - 26176 = 2075 -> 0
        assert!(cp
            .on_enqueue(SimTime::ZERO, 9417, &mut frame(), &mut r)
            .is_none());
        assert_eq!(cp.last.fb, -2075.0);
        let (mut cp, mut r) = every_frame_cp();
        // 3·9418 - 26176 = 2078 -> 1
        assert_eq!(
            cp.on_enqueue(SimTime::ZERO, 9418, &mut frame(), &mut r)
                .unwrap()
                .fb,
            1.0
        );
        let (mut cp, mut r) = every_frame_cp();
        // -Fb = Fbmax exactly: 3Q - 26176 = 130880 -> Q = 52352
        assert_eq!(
            cp.on_enqueue(SimTime::ZERO, 52_352, &mut frame(), &mut r)
                .unwrap()
                .fb,
            63.0
        );
        assert_eq!(cp.last.fb, -130_880.0);
    }

    #[test]
    fn table_sampling_follows_the_index_sequence() {
        let p = params(serde_json::json!({"sampling": "table"}));
        let mut r = stream(2, StreamKind::CongestionPoint, 0);
        let mut cp = QcnCp::new(&p, &mut r);
        let in_range = |cp: &QcnCp, i: usize| {
            let b = super::super::sampling::QCN_TABLE[i];
            assert!(
                cp.sampler.bytes_left >= 0.85 * b - 1e-9
                    && cp.sampler.bytes_left <= 1.15 * b + 1e-9,
                "{} for index {i}",
                cp.sampler.bytes_left
            );
        };
        in_range(&cp, 0);
        // drive sampling instants directly with this queue trace
        let trace: [u64; 6] = [30_000, 30_000, 26_176, 40_000, 70_000, 20_000];
        let mut q_old = 0.0f64;
        let mut seen = vec![];
        for q in trace {
            let s = cp.sample(q, &mut r);
            // the spec's formulas, by hand
            let fb = (-((q as f64 - 26_176.0) + 2.0 * (q as f64 - q_old))).max(-130_880.0);
            q_old = q as f64;
            let qntz = if fb < 0.0 {
                ((-fb * 63.0 / 130_880.0).floor() as u32).min(63)
            } else {
                0
            };
            assert_eq!(s.qntz, qntz);
            assert_eq!(s.index, (qntz * 8 / 64) as usize);
            in_range(&cp, s.index);
            seen.push((s.qntz, s.index));
        }
        // the hand-computed sequence: 30000: Fb=-63824 -> 30 -> index 3; 30000: -3824 -> 1 -> 0;
        // 26176: +7648 -> 0 -> 0; 40000: -(13824 + 2·13824) = -41472 -> 19.96 -> 19 -> 2;
        // 70000: -(43824 + 2·30000) = -103824 -> 49.98 -> 49 -> 6;
        // 20000: Fb = -(-6176 - 100000) = 106176 -> 0 -> 0
        assert_eq!(
            seen,
            vec![(30, 3), (1, 0), (0, 0), (19, 2), (49, 6), (0, 0)]
        );
        // index 7 needs QntzFb >= 56 (-Fb >= 56·2077.46 = 116338)
        cp.q_old = 0.0;
        assert_eq!(cp.sample(52_352, &mut r).index, 7);
    }

    #[test]
    fn linear_sampling_probability_follows_fb() {
        let p = params(serde_json::json!({}));
        let mut r = stream(3, StreamKind::CongestionPoint, 0);
        let mut cp = QcnCp::new(&p, &mut r);
        assert_eq!(cp.sampler.p, 0.01);
        cp.sample(52_352, &mut r); // -Fb = Fbmax
        assert!((cp.sampler.p - 0.1).abs() < 1e-15);
        cp.q_old = 0.0;
        cp.sample(21_812, &mut r); // Fb = 26176 - 3·21812 = -39260 -> 0.01 + 0.09·39260/130880
        assert!((cp.sampler.p - (0.01 + 0.09 * 39_260.0 / 130_880.0)).abs() < 1e-15);
        cp.sample(1000, &mut r); // Fb > 0 -> Pmin
        assert_eq!(cp.sampler.p, 0.01);
    }

    // ---------------------------------------------------------------- reaction point

    fn new_rp(p: &QcnParams) -> (QcnReaction, RateLimiter, SimRng) {
        (
            QcnReaction::new(Arc::new(*p), LINE),
            RateLimiter::new(LINE),
            rng(),
        )
    }

    /// Send `n` frames of 1500 B; returns the outputs of the last one.
    fn send(rp: &mut QcnReaction, rl: &mut RateLimiter, r: &mut SimRng, n: usize) -> RpOutput {
        let mut out = RpOutput::default();
        for _ in 0..n {
            out = rp.on_send(SimTime::ZERO, 1500, rl, r);
        }
        out
    }

    #[test]
    fn qcn_with_00_stops_the_source_above_qsc_and_resumes_it_at_half_rate() {
        // the CP: a sample at q >= Qsc is a stop, below it a CNM as usual; q_old follows both
        let p = params(serde_json::json!(
            {"sampling": "interval", "sample_bytes": 1500, "bcn00": true, "qsc": 60000.0}
        ));
        let mut r = stream(1, StreamKind::CongestionPoint, 0);
        let mut cp = QcnCp::new(&p, &mut r);
        let m = cp
            .on_enqueue(SimTime::ZERO, 30_000, &mut frame(), &mut r)
            .unwrap();
        assert_eq!((m.msg, m.fb), (msg::FEEDBACK, 30.0));
        let m = cp
            .on_enqueue(SimTime::ZERO, 60_000, &mut frame(), &mut r)
            .unwrap();
        assert_eq!(m.msg, msg::STOP);
        assert_eq!((m.qoff, m.qdelta), (60_000.0 - 26_176.0, 30_000.0));
        assert_eq!(cp.q_old, 60_000.0);
        assert!(p.creates_limiter(&m), "a stop installs the limiter");

        // the RP: held at 0 for U(0, 1 ms), then CR = line/2 (TR stays at the line rate)
        let p = rp_params(
            serde_json::json!({"bcn00": true, "qsc": 60000.0, "stop_time_ps": 1_000_000_000u64}),
        );
        let (mut rp, mut rl, mut r) = new_rp(&p);
        let stop = CmPayload {
            msg: msg::STOP,
            ..CmPayload::default()
        };
        let t0 = SimTime(5_000);
        let out = rp.on_message(t0, &stop, &mut rl, &mut r);
        assert_eq!(rl.rate_bps, 0.0);
        let until = rp.core.stopped_until;
        assert!(
            until >= t0 && until <= t0 + SimTime(1_000_000_000),
            "{until:?}"
        );
        assert_eq!(out.timer, Some(until), "woken when the stop ends");
        assert_eq!((rp.core.cr, rp.core.tr), (LINE / 2.0, LINE));
        // a second stop while held changes nothing
        rp.on_message(t0 + SimTime(1), &stop, &mut rl, &mut r);
        assert_eq!((rp.core.stopped_until, rp.core.cr), (until, LINE / 2.0));
        let out = rp.on_timer(until, &mut rl, &mut r);
        assert_eq!(rl.rate_bps, LINE / 2.0);
        assert!(!out.release);
        assert_eq!(rp.core.stopped_until, SimTime::NEVER);

        // the family's other schemes do not take stops
        let mut v = serde_json::to_value(params(serde_json::json!({}))).unwrap();
        v["bcn00"] = serde_json::json!(true);
        v["qsc"] = serde_json::json!(60000.0);
        let err = split_params::<serde_json::Value>(v, &[])
            .unwrap_err()
            .to_string();
        assert!(err.contains("two-point only"), "{err}");
    }

    #[test]
    fn fr_then_ai_at_the_f_plus_first_cycle_then_release() {
        let p = rp_params(serde_json::json!({}));
        let (mut rp, mut rl, mut r) = new_rp(&p);
        let out = rp.on_message(SimTime::ZERO, &cnm(32), &mut rl, &mut r);
        // dec = 32/128 = 0.25; TR stays at line (no increase yet, D8)
        assert_eq!(rl.rate_bps, 7.5e9);
        assert_eq!(rp.core.tr, 10e9);
        assert_eq!(out.timer, Some(SimTime::ms(15)));
        // five FR cycles of 100 frames: CR halves its distance to TR, TR fixed
        let expect_cr = [8.75e9, 9.375e9, 9.6875e9, 9.84375e9, 9.921875e9];
        for (i, cr) in expect_cr.into_iter().enumerate() {
            send(&mut rp, &mut rl, &mut r, 99);
            assert_eq!(
                rp.core.byte_stage, i as u32,
                "no cycle before the 100th frame"
            );
            send(&mut rp, &mut rl, &mut r, 1);
            assert_eq!(rp.core.byte_stage, i as u32 + 1);
            assert_eq!(rp.core.phase(), Phase::FastRecovery);
            assert_eq!(rl.rate_bps, cr);
            assert_eq!(rp.core.tr, 10e9);
        }
        // halving "own": ByteStage = F = 5 -> the next cycle is BC/2 = 50 frames; the 6th cycle is AI
        send(&mut rp, &mut rl, &mut r, 49);
        assert_eq!(rp.core.byte_stage, 5);
        send(&mut rp, &mut rl, &mut r, 1);
        assert_eq!(rp.core.phase(), Phase::ActiveIncrease);
        assert_eq!(rp.core.tr, 10e9 + 5e6);
        assert_eq!(rl.rate_bps, (9.921875e9 + 10.005e9) / 2.0);
        send(&mut rp, &mut rl, &mut r, 49);
        let out = send(&mut rp, &mut rl, &mut r, 1);
        assert_eq!(rp.core.tr, 10.010e9);
        close(rl.rate_bps, 9.98671875e9);
        assert!(!out.release);
        // 8th cycle: TR = 10.015e9, (CR+TR)/2 = 10.0008594e9 -> capped at line -> released (D7)
        send(&mut rp, &mut rl, &mut r, 49);
        let out = send(&mut rp, &mut rl, &mut r, 1);
        assert!(out.release);
        assert_eq!(rl.rate_bps, 10e9);
    }

    #[test]
    fn efr_first_cycle_shortens_only_the_first_recovery_cycle() {
        // §5.4 EFR reading (b): after a decrease the first byte-counter cycle and the first timer
        // period are the given fraction of BC and T; the cycles after them are whole again
        for (frac, first_bytes, first_timer) in [(1.0, 150_000.0, 15e9), (0.25, 37_500.0, 3.75e9)] {
            let p = rp_params(serde_json::json!({"efr_first_cycle": frac}));
            let mut rp = QcnRp::new(Arc::new(p), LINE);
            let mut r = rng();
            rp.decrease(SimTime(1_000), 10, &mut r);
            assert_eq!(rp.byte_left, first_bytes);
            assert_eq!(rp.timer_at, SimTime(1_000 + first_timer as u64));
            let cr = rp.cr;
            rp.count_bytes(first_bytes as u64, &mut r);
            assert_eq!(rp.byte_stage, 1);
            assert_eq!(rp.byte_left, 150_000.0, "the second cycle is a whole BC");
            assert_eq!(
                rp.cr,
                (cr + LINE) / 2.0,
                "fast recovery halves the gap to TR"
            );
            rp.run_due(SimTime(1_000 + first_timer as u64), &mut r);
            assert_eq!(rp.time_stage, 1);
            assert_eq!(
                rp.timer_at,
                SimTime(1_000 + first_timer as u64 + 15_000_000_000)
            );
        }
        let mut v = serde_json::to_value(params(serde_json::json!({}))).unwrap();
        v["efr_first_cycle"] = serde_json::json!(0.0);
        let err = QcnParams::parse(v).unwrap_err().to_string();
        assert!(err.contains("efr_first_cycle = 0"), "{err}");
    }

    #[test]
    fn ai_byte_count_sets_the_cycle_after_fr() {
        // seed 004: FR cycles of 150 000 B, AI cycles of AIByteCnt = 37 500 B (25 frames): the
        // separate count replaces the standard's BC/2, "own" does not halve it again, while the
        // timer still halves once its own stage reaches F (the eval preset)
        let p = rp_params(serde_json::json!({"ai_byte_count": 37500, "halving": "own"}));
        let mut rp = QcnRp::new(Arc::new(p), LINE);
        rp.byte_stage = 4;
        assert_eq!(rp.byte_period(), 150_000.0);
        rp.byte_stage = 5;
        assert_eq!(rp.byte_period(), 37_500.0);
        rp.time_stage = 4;
        assert_eq!(rp.timer_period(), 15e9);
        rp.time_stage = 5;
        assert_eq!(rp.timer_period(), 7.5e9);
        // without a separate count, "own" halves BC at stage F (§5.3 step 2)
        let p = rp_params(serde_json::json!({"halving": "own"}));
        let mut rp = QcnRp::new(Arc::new(p), LINE);
        rp.byte_stage = 5;
        assert_eq!(rp.byte_period(), 75_000.0);
        let p =
            rp_params(serde_json::json!({"ai_byte_count": 37500, "halving": "hai", "hai": false}));
        let mut rp = QcnRp::new(Arc::new(p), LINE);
        rp.byte_stage = 9;
        rp.time_stage = 9;
        assert_eq!(
            rp.byte_period(),
            37_500.0,
            "hai off: no halving with halving = hai"
        );
        let p = rp_params(serde_json::json!({"halving": "hai"}));
        let mut rp = QcnRp::new(Arc::new(p), LINE);
        rp.byte_stage = 6;
        rp.time_stage = 5;
        assert_eq!(rp.byte_period(), 150_000.0);
        assert_eq!(rp.timer_period(), 15e9);
        rp.time_stage = 6;
        assert_eq!(rp.byte_period(), 75_000.0);
        assert_eq!(rp.timer_period(), 7.5e9);
    }

    /// D8: TR := CR on a CNM once either stage counter is non-zero, the timer's included.
    #[test]
    fn a_cnm_after_a_timer_cycle_sets_tr_to_cr() {
        let p = rp_params(serde_json::json!({}));
        let (mut rp, mut rl, mut r) = new_rp(&p);
        rp.on_message(SimTime::ZERO, &cnm(32), &mut rl, &mut r); // CR 7.5 G, TR 10 G
        rp.on_timer(SimTime::ms(15), &mut rl, &mut r); // TimeStage 1, FR: CR = 8.75 G
        assert_eq!((rp.core.byte_stage, rp.core.time_stage), (0, 1));
        assert_eq!((rl.rate_bps, rp.core.tr), (8.75e9, 10e9));
        rp.on_message(SimTime::ms(16), &cnm(32), &mut rl, &mut r);
        assert_eq!(rp.core.tr, 8.75e9, "TR := CR before the decrease");
        assert_eq!(rl.rate_bps, 8.75e9 * 0.75);
    }

    /// D7: the limiter is released when CR *and* TR are at line rate.
    #[test]
    fn release_needs_the_target_rate_at_line_too() {
        let p = rp_params(serde_json::json!({}));
        let mut c = QcnRp::new(Arc::new(p), LINE);
        c.cr = LINE;
        c.tr = 0.9 * LINE;
        assert!(!c.released());
        c.tr = LINE;
        assert!(c.released());
        c.cr = 0.99 * LINE;
        assert!(!c.released());
    }

    /// D8: the byte counter and the timer are jittered by U(0.85, 1.15) at every restart.
    #[test]
    fn byte_counter_and_timer_are_jittered_within_15_percent() {
        let p = rp_params(serde_json::json!({"jitter": 0.15}));
        let (mut rp, mut rl, mut r) = new_rp(&p);
        let (mut timers, mut bytes) = (vec![], vec![]);
        for i in 0..40u64 {
            let now = SimTime::ms(i);
            rp.on_message(now, &cnm(1), &mut rl, &mut r);
            timers.push((rp.core.timer_at.0 - now.0) as f64 / 15e9);
            bytes.push(rp.core.byte_left / 150_000.0);
        }
        for f in timers.iter().chain(&bytes) {
            assert!((0.85..=1.15).contains(f), "{f}");
        }
        let spread = |v: &[f64]| {
            v.iter().cloned().fold(f64::MIN, f64::max) - v.iter().cloned().fold(f64::MAX, f64::min)
        };
        assert!(spread(&timers) > 0.2, "timer factors spread over the range");
        assert!(
            spread(&bytes) > 0.2,
            "byte-counter factors spread over the range"
        );
        // without jitter, exactly T and BC
        let p = rp_params(serde_json::json!({}));
        let (mut rp, mut rl, mut r) = new_rp(&p);
        rp.on_message(SimTime::ZERO, &cnm(1), &mut rl, &mut r);
        assert_eq!(rp.core.timer_at, SimTime::ms(15));
        assert_eq!(rp.core.byte_left, 150_000.0);
    }

    #[test]
    fn tr_over_8_clamp_with_efr_and_without() {
        for efr in [true, false] {
            // Gd = 1/64: the largest QntzFb (63) asks for 0.984, capped at min_dec = 0.5
            let p = rp_params(serde_json::json!({"efr": efr, "gd": 0.015625}));
            let (mut rp, mut rl, mut r) = new_rp(&p);
            for _ in 0..4 {
                rp.on_message(SimTime::ZERO, &cnm(63), &mut rl, &mut r);
            }
            // dec = 0.5 four times; TR stays at line (no increase in between)
            assert_eq!(rl.rate_bps, 625e6);
            assert_eq!(rp.core.tr, 10e9);
            send(&mut rp, &mut rl, &mut r, 100);
            if efr {
                // ByteStage 1 and TR = 10 G > 10·CR = 6.25 G: TR := TR/8 = 1.25 G; CR = (0.625+1.25)/2
                assert_eq!(rp.core.tr, 1.25e9);
                assert_eq!(rl.rate_bps, 0.9375e9);
                send(&mut rp, &mut rl, &mut r, 100);
                assert_eq!(rp.core.tr, 1.25e9, "only in the first cycle");
                assert_eq!(rl.rate_bps, 1.09375e9);
            } else {
                assert_eq!(rp.core.tr, 10e9);
                assert_eq!(rl.rate_bps, 5.3125e9);
            }
        }
        // the first cycle may be a timer cycle: TimeStage 1 clamps as ByteStage 1 does
        let p = rp_params(serde_json::json!({"gd": 0.015625}));
        let (mut rp, mut rl, mut r) = new_rp(&p);
        for _ in 0..4 {
            rp.on_message(SimTime::ZERO, &cnm(63), &mut rl, &mut r);
        }
        // no jitter: the timer runs out 15 ms after the last CNM
        rp.on_timer(SimTime::ms(15), &mut rl, &mut r);
        assert_eq!((rp.core.time_stage, rp.core.byte_stage), (1, 0));
        assert_eq!(rp.core.tr, 1.25e9);
        assert_eq!(rl.rate_bps, 0.9375e9);
        // TR exactly 10·CR is not above it: no clamp
        let (mut rp, mut rl, mut r) = new_rp(&p);
        rp.on_message(SimTime::ZERO, &cnm(63), &mut rl, &mut r);
        rp.core.cr = 1e9;
        rl.rate_bps = 1e9;
        send(&mut rp, &mut rl, &mut r, 100);
        assert_eq!(rp.core.tr, 10e9);
        assert_eq!(rl.rate_bps, 5.5e9);
        // not above 10·CR: no clamp
        let p = rp_params(serde_json::json!({"gd": 0.015625}));
        let (mut rp, mut rl, mut r) = new_rp(&p);
        for _ in 0..3 {
            rp.on_message(SimTime::ZERO, &cnm(63), &mut rl, &mut r);
        }
        assert_eq!(rl.rate_bps, 1.25e9); // 10·CR = 12.5 G > TR
        send(&mut rp, &mut rl, &mut r, 100);
        assert_eq!(rp.core.tr, 10e9);
        assert_eq!(rl.rate_bps, 5.625e9);
    }

    #[test]
    fn min_dec_cap_and_rmin_floor() {
        let p = rp_params(serde_json::json!({"gd": 0.015625}));
        let (mut rp, mut rl, mut r) = new_rp(&p);
        // gd·63 = 0.984 -> capped at min_dec = 0.5
        rp.on_message(SimTime::ZERO, &cnm(63), &mut rl, &mut r);
        assert_eq!(rl.rate_bps, 5e9);
        // gd·10 = 0.15625
        rp.on_message(SimTime::ZERO, &cnm(10), &mut rl, &mut r);
        assert_eq!(rl.rate_bps, 5e9 * (1.0 - 0.15625));
        // the floor: many decreases end at Rmin = 5 Mb/s exactly
        for _ in 0..20 {
            rp.on_message(SimTime::ZERO, &cnm(63), &mut rl, &mut r);
        }
        assert_eq!(rl.rate_bps, 5e6);
        let p = rp_params(serde_json::json!({"min_dec": 0.25}));
        let (mut rp, mut rl, mut r) = new_rp(&p);
        rp.on_message(SimTime::ZERO, &cnm(63), &mut rl, &mut r);
        assert_eq!(rl.rate_bps, 7.5e9);
    }

    #[test]
    fn target_update_variants() {
        // after_increase: TR := CR only when a stage is non-zero
        let p = rp_params(serde_json::json!({}));
        let (mut rp, mut rl, mut r) = new_rp(&p);
        rp.on_message(SimTime::ZERO, &cnm(32), &mut rl, &mut r); // CR 7.5 G, TR 10 G
        rp.on_message(SimTime::ZERO, &cnm(32), &mut rl, &mut r); // CR 5.625 G, TR still 10 G
        assert_eq!((rl.rate_bps, rp.core.tr), (5.625e9, 10e9));
        send(&mut rp, &mut rl, &mut r, 100); // FR: CR = (5.625+10)/2 = 7.8125 G
        assert_eq!(rl.rate_bps, 7.8125e9);
        rp.on_message(SimTime::ZERO, &cnm(32), &mut rl, &mut r); // stage 1 -> TR := 7.8125 G, CR = 5.859375 G
        assert_eq!((rl.rate_bps, rp.core.tr), (5.859375e9, 7.8125e9));
        // always: TR := CR on every CNM
        let p = rp_params(serde_json::json!({"target_update": "always"}));
        let (mut rp, mut rl, mut r) = new_rp(&p);
        rp.on_message(SimTime::ZERO, &cnm(32), &mut rl, &mut r);
        assert_eq!((rl.rate_bps, rp.core.tr), (7.5e9, 10e9));
        rp.on_message(SimTime::ZERO, &cnm(32), &mut rl, &mut r);
        assert_eq!((rl.rate_bps, rp.core.tr), (5.625e9, 7.5e9));
    }

    #[test]
    fn timer_cycles_ai_and_hai_at_the_exact_stage() {
        let p = rp_params(serde_json::json!({"bc": 1e12, "ai_byte_count": 1e12}));
        let (mut rp, mut rl, mut r) = new_rp(&p);
        let out = rp.on_message(SimTime::ZERO, &cnm(32), &mut rl, &mut r);
        let (mut cr, mut tr) = (7.5e9f64, 10e9f64);
        let mut t = out.timer.unwrap();
        assert_eq!(t, SimTime::ms(15));
        // timer cycles 1..=5: FR, period 15 ms; after stage 5 ("own") 7.5 ms
        for stage in 1..=8u32 {
            let out = rp.on_timer(t, &mut rl, &mut r);
            if stage > 5 {
                tr += 5e6; // AI: R_AI per cycle from the 6th cycle
            }
            cr = ((cr + tr) / 2.0).min(LINE);
            assert_eq!(rp.core.time_stage, stage);
            close(rl.rate_bps, cr);
            close(rp.core.tr, tr);
            if cr >= LINE && tr >= LINE {
                assert!(out.release);
                break;
            }
            let period = if stage >= 5 {
                SimTime::us(7500)
            } else {
                SimTime::ms(15)
            };
            assert_eq!(out.timer, Some(t + period), "stage {stage}");
            t += period;
        }
        // HAI: both stages past F with hai on; delta = R_HAI·(min(stages) − F)
        let p = rp_params(serde_json::json!({"timer_ps": 1000000000000000u64, "gd": 0.015625}));
        let (mut rp, mut rl, mut r) = new_rp(&p);
        for _ in 0..4 {
            rp.on_message(SimTime::ZERO, &cnm(63), &mut rl, &mut r); // CR = 625 Mb/s, TR = 10 G
        }
        rp.core.tr = 1e9; // start from a known TR below line (bypassing the first-cycle clamp)
        rp.core.cr = 0.5e9;
        rp.core.time_stage = 7; // as if seven timer cycles had passed
        let (mut cr, mut tr) = (0.5e9f64, 1e9f64);
        for bs in 1..=8u32 {
            send(&mut rp, &mut rl, &mut r, if bs <= 5 { 100 } else { 50 });
            assert_eq!(rp.core.byte_stage, bs);
            // ts = 7 > F: AI until bs > F, then R_HAI·(min(bs, 7) − 5) = 50, 100, 100 Mb/s
            let delta = if bs > 5 {
                50e6 * (bs.min(7) - 5) as f64
            } else {
                5e6
            };
            tr += delta;
            cr = ((cr + tr) / 2.0).min(LINE);
            close(rp.core.tr, tr);
            close(rl.rate_bps, cr);
            let expect = if bs > 5 {
                Phase::HyperActiveIncrease
            } else {
                Phase::ActiveIncrease
            };
            assert_eq!(rp.core.phase(), expect, "bs {bs}");
        }
        // hai off: both past F is still AI
        let p = rp_params(serde_json::json!({"hai": false}));
        let mut c = QcnRp::new(Arc::new(p), LINE);
        c.byte_stage = 9;
        c.time_stage = 9;
        assert_eq!(c.phase(), Phase::ActiveIncrease);
    }

    #[test]
    fn drift_adds_to_cr_and_tr_capped_at_line() {
        let p = rp_params(
            serde_json::json!({"drift_rate_bps": 4000000, "timer_ps": 1000000000000000u64, "gd": 0.015625}),
        );
        let (mut rp, mut rl, mut r) = new_rp(&p);
        let out = rp.on_message(SimTime::ZERO, &cnm(63), &mut rl, &mut r);
        assert_eq!(
            out.timer,
            Some(SimTime::ms(20)),
            "the drift step is the earliest deadline"
        );
        assert_eq!((rl.rate_bps, rp.core.tr), (5e9, 10e9));
        let out = rp.on_timer(SimTime::ms(20), &mut rl, &mut r);
        assert_eq!((rl.rate_bps, rp.core.tr), (5.004e9, 10e9));
        assert_eq!(out.timer, Some(SimTime::ms(40)));
        rp.on_timer(SimTime::ms(40), &mut rl, &mut r);
        assert_eq!(rl.rate_bps, 5.008e9);
        // near line: CR capped, then released when CR and TR reach line
        rp.core.cr = 9.998e9;
        let out = rp.on_timer(SimTime::ms(60), &mut rl, &mut r);
        assert_eq!(rl.rate_bps, 10e9);
        assert!(out.release);
    }

    #[test]
    fn jitter_stays_within_bounds() {
        let p = rp_params(serde_json::json!({"jitter": 0.15}));
        let mut r = rng();
        let mut lo = f64::MAX;
        let mut hi = 0.0f64;
        for i in 0..2000u64 {
            let mut rp = QcnReaction::new(Arc::new(p), LINE);
            let mut rl = RateLimiter::new(LINE);
            let now = SimTime::ms(i);
            let out = rp.on_message(now, &cnm(1), &mut rl, &mut r);
            let dt = (out.timer.unwrap() - now).0 as f64;
            assert!((12.75e9..=17.25e9).contains(&dt), "{dt}");
            let b = rp.core.byte_left;
            assert!((127_500.0..=172_500.0).contains(&b), "{b}");
            lo = lo.min(b);
            hi = hi.max(b);
        }
        assert!(
            lo < 130_000.0 && hi > 170_000.0,
            "the jitter spans its range: {lo} {hi}"
        );
    }

    #[test]
    fn no_jitter_draws_nothing() {
        // j = 0 leaves the RP's random stream untouched (runs without jitter stay comparable)
        let (mut a, mut b) = (rng(), rng());
        assert_eq!(jitter_factor(0.0, &mut a), 1.0);
        assert_eq!(a.gen::<u64>(), b.gen::<u64>());
        let f = jitter_factor(0.1, &mut a);
        assert!((0.9..=1.1).contains(&f) && f != 1.0, "{f}");
    }

    #[test]
    fn only_a_cnm_with_feedback_decreases() {
        let p = rp_params(serde_json::json!({}));
        let (mut rp, mut rl, mut r) = new_rp(&p);
        rp.on_message(SimTime::ZERO, &cnm(32), &mut rl, &mut r);
        send(&mut rp, &mut rl, &mut r, 200);
        let state = (rp.core.cr, rp.core.tr, rp.core.byte_stage, rp.core.timer_at);
        assert_eq!(state.2, 2);
        // QntzFb 0, or another kind of message carrying a value: no decrease, no stage reset
        for m in [
            cnm(0),
            CmPayload {
                msg: msg::PROBE_REPLY,
                fb: 3.0,
                ..CmPayload::default()
            },
            CmPayload {
                msg: msg::REFLECTION,
                fb: 3.0,
                ..CmPayload::default()
            },
        ] {
            rp.on_message(SimTime::ms(1), &m, &mut rl, &mut r);
            assert_eq!(
                (rp.core.cr, rp.core.tr, rp.core.byte_stage, rp.core.timer_at),
                state,
                "{m:?}"
            );
        }
    }

    #[test]
    fn an_rp_counts_nothing_before_its_first_cnm() {
        let p = rp_params(serde_json::json!({}));
        let (mut rp, mut rl, mut r) = new_rp(&p);
        let out = send(&mut rp, &mut rl, &mut r, 500);
        assert_eq!(
            (rp.core.byte_stage, rp.core.cr, rp.core.tr),
            (0, LINE, LINE)
        );
        assert_eq!((out.timer, out.release), (None, false));
    }

    #[test]
    fn each_timer_period_is_jittered_anew() {
        // §5.3 step 3 re-arms the timer at T·U(1 − j, 1 + j) with a fresh draw each cycle
        let p = rp_params(serde_json::json!({"jitter": 0.15, "bc": 1e12, "ai_byte_count": 1e12}));
        let (mut rp, mut rl, mut r) = new_rp(&p);
        rp.on_message(SimTime::ZERO, &cnm(32), &mut rl, &mut r);
        for _ in 0..4 {
            // (the period stays T until TimeStage reaches F = 5)
            let t = rp.core.timer_at;
            let mut twin = r.clone();
            let f = jitter_factor(0.15, &mut twin);
            rp.on_timer(t, &mut rl, &mut r);
            assert_eq!(rp.core.timer_at, after(t, 15e9 * f));
            assert_ne!(f, 1.0);
        }
    }

    #[test]
    fn drift_raises_a_target_below_line_and_leaves_one_above_it() {
        let p = rp_params(
            serde_json::json!({"drift_rate_bps": 4000000, "timer_ps": 1000000000000000u64, "gd": 0.015625}),
        );
        let (mut rp, mut rl, mut r) = new_rp(&p);
        rp.on_message(SimTime::ZERO, &cnm(63), &mut rl, &mut r);
        rp.core.tr = 8e9;
        rp.on_timer(SimTime::ms(20), &mut rl, &mut r);
        assert_eq!((rl.rate_bps, rp.core.tr), (5.004e9, 8.004e9));
        // after active increase TR may stand above the line rate: the drift leaves it there
        rp.core.tr = 10.005e9;
        rp.on_timer(SimTime::ms(40), &mut rl, &mut r);
        assert_eq!((rl.rate_bps, rp.core.tr), (5.008e9, 10.005e9));
    }

    #[test]
    fn wake_requests_only_changes() {
        let mut w = Wake::default();
        assert_eq!(w.request(SimTime::NEVER), None);
        assert_eq!(w.request(SimTime::ms(1)), Some(SimTime::ms(1)));
        assert_eq!(w.request(SimTime::ms(1)), None);
        assert_eq!(w.request(SimTime::ms(2)), Some(SimTime::ms(2)));
    }
}

#[cfg(test)]
mod scheme_tests {
    use super::tests::json;
    use crate::cm::{msg, CmConfig, CmPayload, OnDequeue, Scheme};
    use crate::engine::rng::{stream, StreamKind};
    use crate::frame::Frame;
    use crate::time::SimTime;

    fn cfg(scheme: &str, extra: serde_json::Value) -> CmConfig {
        let mut params = json().as_object().cloned().unwrap();
        for (k, v) in extra.as_object().unwrap() {
            params.insert(k.clone(), v.clone());
        }
        CmConfig {
            scheme: scheme.into(),
            params,
        }
    }

    /// The family's members and the keys each adds to QCN's, as the front end lowers them.
    fn family() -> [(&'static str, serde_json::Value); 4] {
        [
            ("qcn", serde_json::json!({})),
            (
                "qcn3pt",
                serde_json::json!({"refp": 0.04, "de_rule": "q_above_qeq"}),
            ),
            (
                "qcn-sonar",
                serde_json::json!({"wp_ps": 10000000000u64, "we_ps": 2000000000u64,
                "sf_ps": 500000000u64, "nc_threshold": 15000, "nc_interval_ps": 10000000000u64,
                "recovery": "cr_to_tr"}),
            ),
            (
                "qcn-plus",
                serde_json::json!({"base_w": 2.0, "factor": 1.0,
                "gi_plus": 15.873015873015873, "probe_period_ps": null, "to_threshold": 150000}),
            ),
        ]
    }

    /// The four QCN-family names build from the front end's lowered keys, with their hooks.
    #[test]
    fn the_family_builds_from_config_with_its_hooks() {
        let [_, (_, three), _, (_, plus)] = family();
        let cnm = CmPayload {
            msg: msg::FEEDBACK,
            fb: 5.0,
            ..CmPayload::default()
        };
        let refl = CmPayload {
            msg: msg::REFLECTION,
            ..CmPayload::default()
        };
        for (name, extra) in family() {
            let sink = name == "qcn3pt";
            let s = Scheme::from_config(&cfg(name, extra.clone())).unwrap();
            assert_eq!(s.name(), name);
            assert!(s.has_congestion_points());
            assert_eq!(s.needs_sink_events(), sink, "{name}");
            // only SONAR's CP watches departures, unless the CP samples there (§1.2)
            let every = name == "qcn-sonar";
            assert_eq!(s.cp_on_dequeue(), OnDequeue::every_if(every), "{name}");
            let mut at_departure = extra.clone();
            at_departure["sample_at"] = serde_json::json!("departure");
            let d = Scheme::from_config(&cfg(name, at_departure)).unwrap();
            assert_eq!(d.cp_on_dequeue(), OnDequeue::Every, "{name}");
            assert!(!s.limiter_from_start());
            assert_eq!(s.probe_period(), None);
            assert!(s.creates_limiter(&cnm));
            assert!(!s.creates_limiter(&refl));
            assert_eq!(s.frame_bytes(), 64);
            assert_eq!(s.oob_delay(), None);
            let mut r = stream(1, StreamKind::CongestionPoint, 0);
            let _ = s.new_cp(3, 10e9, &mut r);
            let _ = s.new_rp(10e9);
        }
        // another scheme's keys are rejected, naming the key
        let e = Scheme::from_config(&cfg("qcn", three))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("cm (qcn)") && e.contains("unknown field `de_rule`"),
            "{e}"
        );
        let e = Scheme::from_config(&cfg("qcn-sonar", plus))
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown field `base_w`"), "{e}");
        // 3pt reflects through the destination's notification point
        let s = Scheme::from_config(&cfg(
            "qcn3pt",
            serde_json::json!({"refp": 1.0, "de_rule": "q_above_qeq"}),
        ))
        .unwrap();
        let mut r = stream(1, StreamKind::Sink, 0);
        let (mut np, frame) = (s.new_np(7), Frame::data(2, 7, 1500, SimTime::ZERO));
        assert!(np.selects(&frame, &mut r), "RefP = 1: every unmarked frame");
        let out = np.on_data(SimTime::ZERO, &frame);
        assert_eq!(out.wake, None);
        let m = out.reply.unwrap();
        assert_eq!((m.msg, m.flow_src, m.flow_dst), (msg::REFLECTION, 2, 7));
    }

    #[test]
    fn every_family_member_takes_oob_feedback_and_the_cnm_size_and_only_plus_echoes() {
        for (name, extra) in family() {
            let mut v = extra;
            v["feedback"] = serde_json::json!("oob");
            v["feedback_delay_ps"] = serde_json::json!(5000000);
            v["cnm_size"] = serde_json::json!(80);
            let s = Scheme::from_config(&cfg(name, v)).unwrap();
            assert_eq!(s.oob_delay(), Some(SimTime::us(5)), "{name}");
            assert_eq!(s.frame_bytes(), 80, "{name}");
            // only QCN+'s destination echoes its directed probes
            let probe = CmPayload {
                msg: msg::PROBE,
                stamp: 5,
                flow_dst: 4,
                ..CmPayload::default()
            };
            let echo = s.sink_probe(SimTime(9), &probe);
            assert_eq!(
                echo.map(|e| (e.msg, e.stamp, e.stamp2)),
                (name == "qcn-plus").then_some((msg::PROBE_REPLY, 5, 9)),
                "{name}"
            );
        }
    }
}
