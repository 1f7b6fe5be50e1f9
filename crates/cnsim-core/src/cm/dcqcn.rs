//! DCQCN (RoCEv2 congestion control; Zhu et al., SIGCOMM 2015): the switch marks ECN on its
//! egress queues (congestion point, CP), the receiving NIC turns marks into congestion
//! notification packets (notification point, NP), and the sending NIC's per-flow rate limiter
//! reacts (reaction point, RP).
//!
//! Implements algorithms.md §7 with the constants of §10:
//!
//! * **CP** (§7.1): RED-style marking, p = 0 for q ≤ Kmin, Pmax·(q − Kmin)/(Kmax − Kmin) up to
//!   Kmax, 1 above; at dequeue (default; q = the bytes queued behind the departing frame, as
//!   [CODE:ns3-rdma] and [CODE:hpcc] decrement the egress counter before the test) or at enqueue
//!   (`mark = "enqueue"`; q including the arriving frame, D14). Only data frames are marked (the
//!   control class is never queued with them, D6). Draws come from the port's seeded CP stream,
//!   and only when 0 < p < 1.
//! * **NP** (§7.2): per flow, a CNP for a marked frame unless one was sent during the last
//!   `cnp_interval` (the paper, `cnp_mode = "suppress"`), or one CNP per `cnp_interval` if any
//!   frame was marked since the previous check, checks from the flow's first frame on
//!   ([CODE:ns3-rdma], `cnp_mode = "poll"`). CNPs are class (a) control frames (D6).
//! * **RP** (§7.3, `rp = "paper"`): on a CNP, RT := RC (always with `clamp_target`, else only
//!   after an increase), α := (1 − g)·α + g, RC := max(Rmin, RC·(1 − α/2)), stages reset, byte
//!   counter and increase timer restarted, alpha timer restarted; the alpha timer decays
//!   α := (1 − g)·α every K without a CNP (computed in closed form when next needed: it changes
//!   nothing else); byte counter (B) and timer (T) expiries increment their stage and run an
//!   increase event: phase by `phase_rule` ("fired": FR while the stage of the counter that
//!   fired is < F, then AI while the other's is < F, else HAI — [CODE:ns3-rdma]; "joint": FR
//!   while both are < F, HAI when both are > F, AI otherwise), RT += 0 / R_AI /
//!   R_HAI·(min(stages) − F + 1) ("fired") or R_HAI·(min(stages) − F) ("joint"), or
//!   RT := RT/8 when a stage is 1 and RT > 10·RC (`efr`); then
//!   RC := min((RC + RT)/2, line rate). In HAI the next byte-counter cycle and timer period are
//!   halved. No jitter.
//! * **RP** (§7.4, `rp = "nic"`, the `dcqcn-nic` preset): the first CNP sets α = `alpha_init`
//!   and RC = RT = `rate_on_first_cnp`·RC; α is updated every `alpha_timer` ((1 − g)·α + g if a
//!   CNP arrived in the period, else (1 − g)·α; closed form between CNPs); a decrease is checked
//!   every `decrease_interval` from the first CNP (RT := RC if `clamp_target` or TimeStage ≠ 0,
//!   RC := max(Rmin, RC·(1 − α/2)), TimeStage := 0, timer restarted) — only a pending CNP needs
//!   an event; the increase timer alone drives recovery: TimeStage < F → FR, = F → AI (RT +=
//!   R_AI), > F → HAI (RT += R_HAI), RT capped at the line rate, RC := (RC + RT)/2.
//!
//! Limiters follow D7: created at line rate by the first CNP of a flow, released when RC and RT
//! reach the line rate (a later CNP starts a new one with the flow's kept RP and its α,
//! `outlives_release`). Units: bytes, b/s, ps.

use std::sync::Arc;

use rand::Rng;
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use super::qcn::{Feedback, Wake};
use super::{
    fraction, msg, positive, CmPayload, CongestionPoint, NotificationPoint, NpOutput, RateLimiter,
    ReactionPoint, RpOutput, SchemeSpec, NODE_CPID,
};
use crate::engine::SimRng;
use crate::frame::{Frame, FrameKind};
use crate::time::SimTime;

/// Where the CP marks (§7.1 step 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MarkAt {
    Dequeue,
    Enqueue,
}

/// How the NP paces CNPs (§7.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CnpMode {
    /// A CNP at once for a marked frame, unless the flow had one during the last interval.
    Suppress,
    /// Every interval from the flow's first frame: one CNP if a frame was marked since the last check.
    Poll,
}

/// Which reaction point (§7.3 or §7.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RpVariant {
    Paper,
    Nic,
}

/// Phase selection of the §7.3 RP (the flag §7.3 asks for).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PhaseRule {
    /// [CODE:ns3-rdma]: by the stage of the counter that fired, then the other's.
    Fired,
    /// The paper's description: FR while both stages are below F, HAI when both are above
    /// it (with the step R_HAI·(min stage − F), the QCN code's), AI otherwise.
    Joint,
}

/// DCQCN parameters as the front end lowers them (every key present, units in the names).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DcqcnParams {
    /// RED thresholds, bytes, and the marking probability at Kmax (§7.1).
    pub kmin: f64,
    pub kmax: f64,
    pub pmax: f64,
    /// When set, `kmin` and `kmax` are the thresholds of a port of this rate, and every CP
    /// scales them by its own port's rate ([CODE:hpcc]'s thresholds per link speed, §7.4 step
    /// 5); when absent, every port marks at the same byte counts.
    #[serde(default)]
    pub k_rate_bps: Option<f64>,
    pub mark: MarkAt,
    /// N: the NP's CNP interval (§7.2).
    pub cnp_interval_ps: u64,
    pub cnp_mode: CnpMode,
    pub rp: RpVariant,
    /// α gain g and α of a new limiter.
    pub g: f64,
    pub alpha_init: f64,
    /// K (paper) or the α update period (NIC).
    pub alpha_timer_ps: u64,
    /// T: the rate-increase timer.
    pub timer_ps: u64,
    /// B: the byte counter, bytes (paper RP only).
    pub bc: f64,
    /// F: fast-recovery stages.
    pub f: u32,
    pub r_ai_bps: f64,
    pub r_hai_bps: f64,
    pub rmin_bps: f64,
    /// RT := RC on every decrease (else only when a stage is non-zero).
    pub clamp_target: bool,
    pub phase_rule: PhaseRule,
    /// The TR/8 clamp of an increase at which either stage is 1 (paper RP).
    pub efr: bool,
    /// NIC RP: RC = RT = this fraction of RC at the first CNP.
    pub rate_on_first_cnp: f64,
    /// NIC RP: the decrease check period.
    pub decrease_interval_ps: u64,
    pub cnm_size: u32,
    pub feedback: Feedback,
    pub feedback_delay_ps: u64,
}

impl DcqcnParams {
    /// Parse and check (the front end validated single values; this checks their relations).
    pub fn parse(
        params: &serde_json::Map<String, serde_json::Value>,
    ) -> crate::error::Result<Self> {
        let p: DcqcnParams = super::parse_params(Self::NAME, params)?;
        p.check().map_err(|e| super::params_error(Self::NAME, e))?;
        Ok(p)
    }

    fn check(&self) -> Result<(), String> {
        fraction("pmax", self.pmax)?;
        fraction("g", self.g)?;
        fraction("alpha_init", self.alpha_init)?;
        if !(self.rate_on_first_cnp > 0.0 && self.rate_on_first_cnp <= 1.0) {
            return Err(format!(
                "rate_on_first_cnp = {}: must be in (0, 1]",
                self.rate_on_first_cnp
            ));
        }
        if let Some(rate) = self.k_rate_bps {
            positive("k_rate", rate)?;
        }
        if !(self.kmin >= 0.0 && self.kmax >= self.kmin) {
            return Err(format!(
                "kmax = {} B, kmin = {} B: need 0 <= kmin <= kmax",
                self.kmax, self.kmin
            ));
        }
        positive("bc", self.bc)?;
        positive("rmin", self.rmin_bps)?;
        if self.f == 0 {
            return Err("f = 0: must be >= 1".into());
        }
        for (k, v) in [
            ("cnp_interval", self.cnp_interval_ps),
            ("alpha_timer", self.alpha_timer_ps),
            ("timer", self.timer_ps),
            ("decrease_interval", self.decrease_interval_ps),
        ] {
            if v == 0 {
                return Err(format!("{k} = 0: must be a positive time"));
            }
        }
        Ok(())
    }

    pub fn oob_delay(&self) -> Option<SimTime> {
        match self.feedback {
            Feedback::Oob => Some(SimTime(self.feedback_delay_ps)),
            Feedback::Inband => None,
        }
    }

    /// Kmin and Kmax, bytes, of a port of `line_rate_bps`: as given, or scaled from
    /// `k_rate_bps` (a port of that rate keeps them exactly: the factor is 1).
    pub fn thresholds(&self, line_rate_bps: f64) -> (f64, f64) {
        match self.k_rate_bps {
            Some(rate) => {
                let scale = line_rate_bps / rate;
                (self.kmin * scale, self.kmax * scale)
            }
            None => (self.kmin, self.kmax),
        }
    }
}

// ------------------------------------------------------------------------------------------ CP

/// The CP of one switch egress queue (§7.1).
#[derive(Clone, Debug)]
pub struct DcqcnCp {
    p: Arc<DcqcnParams>,
    /// This port's RED thresholds, bytes ([`DcqcnParams::thresholds`]).
    kmin: f64,
    kmax: f64,
}

impl DcqcnCp {
    /// The CP of an egress port of `line_rate_bps`.
    pub fn new(p: &Arc<DcqcnParams>, line_rate_bps: f64) -> Self {
        let (kmin, kmax) = p.thresholds(line_rate_bps);
        DcqcnCp {
            p: p.clone(),
            kmin,
            kmax,
        }
    }

    /// The marking probability at queue `q` bytes (§7.1 step 2).
    pub fn mark_probability(&self, q: f64) -> f64 {
        if q <= self.kmin {
            0.0
        } else if q <= self.kmax {
            self.p.pmax * (q - self.kmin) / (self.kmax - self.kmin)
        } else {
            1.0
        }
    }

    /// Mark `frame` CE with the probability of queue `q`.
    fn mark(&self, q: f64, frame: &mut Frame, rng: &mut SimRng) {
        if frame.kind != FrameKind::Data {
            return;
        }
        let p = self.mark_probability(q);
        if p >= 1.0 || (p > 0.0 && rng.gen::<f64>() < p) {
            frame.cm.ce = true;
        }
    }
}

impl CongestionPoint for DcqcnCp {
    fn on_enqueue(
        &mut self,
        _now: SimTime,
        q: u64,
        frame: &mut Frame,
        rng: &mut SimRng,
    ) -> Option<CmPayload> {
        if self.p.mark == MarkAt::Enqueue {
            self.mark(q as f64, frame, rng);
        }
        None
    }

    /// Marking at dequeue starts above Kmin (the queue left behind is smaller still); marking at
    /// enqueue leaves dequeues alone.
    fn dequeue_floor(&self) -> u64 {
        match self.p.mark {
            MarkAt::Dequeue => self.kmin as u64,
            MarkAt::Enqueue => u64::MAX,
        }
    }

    fn on_dequeue(
        &mut self,
        _now: SimTime,
        q: u64,
        frame: &mut Frame,
        rng: &mut SimRng,
    ) -> Option<CmPayload> {
        if self.p.mark == MarkAt::Dequeue {
            // the queue the frame leaves behind
            let behind = q.saturating_sub(frame.size as u64);
            self.mark(behind as f64, frame, rng);
        }
        None
    }
}

// ------------------------------------------------------------------------------------------ NP

/// What the NP remembers of one flow it receives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct NpFlow {
    /// The last CNP sent for the flow (`NEVER`: none yet).
    last_cnp: SimTime,
    /// Poll mode: the flow's first frame (checks at first + k·N).
    first: SimTime,
    /// Poll mode: a frame was marked since the previous check.
    marked: bool,
    /// Poll mode: the pending check (`NEVER`: none pending).
    check_at: SimTime,
}

/// The NP of one receiving NIC (§7.2): per source and priority class (the flow is source → this
/// node, in one class; without PFC every frame is of class 0).
#[derive(Clone, Debug)]
pub struct DcqcnNp {
    node: u32,
    interval: u64,
    mode: CnpMode,
    flows: FxHashMap<(u32, u8), NpFlow>,
}

impl DcqcnNp {
    pub fn new(p: &DcqcnParams, node: u32) -> Self {
        DcqcnNp {
            node,
            interval: p.cnp_interval_ps,
            mode: p.cnp_mode,
            flows: FxHashMap::default(),
        }
    }

    fn cnp(&self, (src, class): (u32, u8)) -> CmPayload {
        CmPayload {
            msg: msg::CNP,
            cpid: NODE_CPID | self.node,
            flow_src: src,
            flow_dst: self.node,
            flow_class: class,
            ..CmPayload::default()
        }
    }

    /// A data frame reached this NIC at `now` (its last bit).
    pub fn receive(&mut self, now: SimTime, frame: &Frame) -> NpOutput {
        let src = (frame.src, frame.class);
        let ce = frame.cm.ce;
        match self.mode {
            CnpMode::Suppress => {
                if !ce {
                    return NpOutput::default();
                }
                let interval = self.interval;
                let fl = self.flows.entry(src).or_insert(NpFlow {
                    last_cnp: SimTime::NEVER,
                    first: now,
                    marked: false,
                    check_at: SimTime::NEVER,
                });
                // "no CNP during the last N": the previous one is at least N old
                if fl.last_cnp != SimTime::NEVER && now.0 - fl.last_cnp.0 < interval {
                    return NpOutput::default();
                }
                fl.last_cnp = now;
                NpOutput {
                    reply: Some(self.cnp(src)),
                    wake: None,
                }
            }
            CnpMode::Poll => {
                let interval = self.interval;
                match self.flows.get_mut(&src) {
                    None => {
                        // the first frame: the first check is now, with this frame counted
                        let last = if ce { now } else { SimTime::NEVER };
                        self.flows.insert(
                            src,
                            NpFlow {
                                last_cnp: last,
                                first: now,
                                marked: false,
                                check_at: SimTime::NEVER,
                            },
                        );
                        NpOutput {
                            reply: ce.then(|| self.cnp(src)),
                            wake: None,
                        }
                    }
                    Some(fl) => {
                        if !ce {
                            return NpOutput::default();
                        }
                        fl.marked = true;
                        if fl.check_at != SimTime::NEVER {
                            return NpOutput::default();
                        }
                        // the next check strictly after now (a check due now ran before this frame)
                        let k = (now.0 - fl.first.0) / interval + 1;
                        fl.check_at = SimTime(fl.first.0 + k * interval);
                        NpOutput {
                            reply: None,
                            wake: Some(fl.check_at),
                        }
                    }
                }
            }
        }
    }

    /// A poll-mode check of the flow from `src` in `class` is due: a CNP if a frame was marked
    /// since the last.
    pub fn check(&mut self, now: SimTime, src: u32, class: u8) -> Option<CmPayload> {
        let src = (src, class);
        let fl = self.flows.get_mut(&src)?;
        if fl.check_at != now {
            return None;
        }
        fl.check_at = SimTime::NEVER;
        if !std::mem::take(&mut fl.marked) {
            return None;
        }
        fl.last_cnp = now;
        Some(self.cnp(src))
    }
}

impl NotificationPoint for DcqcnNp {
    fn on_data(&mut self, now: SimTime, frame: &Frame) -> NpOutput {
        self.receive(now, frame)
    }
    fn on_timer(&mut self, now: SimTime, src: u32, class: u8) -> Option<CmPayload> {
        self.check(now, src, class)
    }
    /// A marked frame, and in poll mode the first frame of a flow, which starts its checks; an
    /// unmarked frame does nothing (§7.2). No draw. The flows only ever join `flows`, so a flow
    /// known now is known when the frame arrives.
    fn selects(&mut self, frame: &Frame, _rng: &mut SimRng) -> bool {
        frame.cm.ce
            || (self.mode == CnpMode::Poll && !self.flows.contains_key(&(frame.src, frame.class)))
    }
}

// ------------------------------------------------------------------------------------------ RP

/// Increase phase of an RP event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    FastRecovery,
    ActiveIncrease,
    HyperActiveIncrease,
}

/// Which counter produced an increase event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Counter {
    Bytes,
    Timer,
}

/// The DCQCN reaction point of one flow (§7.3 or §7.4); the limiter's rate is RC.
#[derive(Clone, Debug)]
pub struct DcqcnRp {
    pub p: Arc<DcqcnParams>,
    pub line: f64,
    /// Current and target rate, b/s.
    pub rc: f64,
    pub rt: f64,
    /// α as of `alpha_ref` (paper: the last CNP; NIC: after `alpha_ticks` updates).
    pub alpha: f64,
    alpha_ref: SimTime,
    alpha_ticks: u64,
    /// NIC: a CNP arrived since the last α update.
    alpha_cnp: bool,
    pub byte_stage: u32,
    pub time_stage: u32,
    /// Bytes left in the byte counter's cycle (paper).
    pub byte_left: f64,
    /// Next increase-timer expiry (`NEVER` before the first decrease).
    pub timer_at: SimTime,
    /// NIC: the pending decrease check (`NEVER`: no CNP waiting).
    pub decrease_at: SimTime,
    /// The first CNP arrived.
    pub active: bool,
    /// The phase of the last increase event (diagnostics and tests).
    pub last_phase: Option<Phase>,
    wake: Wake,
}

impl DcqcnRp {
    /// A new RP: RC = RT = line rate, α = `alpha_init`; inactive until its first CNP.
    pub fn new(p: Arc<DcqcnParams>, line_rate_bps: f64) -> Self {
        DcqcnRp {
            alpha: p.alpha_init,
            p,
            line: line_rate_bps,
            rc: line_rate_bps,
            rt: line_rate_bps,
            alpha_ref: SimTime::ZERO,
            alpha_ticks: 0,
            alpha_cnp: false,
            byte_stage: 0,
            time_stage: 0,
            byte_left: 0.0,
            timer_at: SimTime::NEVER,
            decrease_at: SimTime::NEVER,
            active: false,
            last_phase: None,
            wake: Wake::default(),
        }
    }

    fn keep(&self) -> f64 {
        1.0 - self.p.g
    }

    /// α at `now` (paper RP: the alpha timer's decays since the last CNP; NIC: the periodic
    /// updates up to `now`), without changing the state.
    pub fn alpha_at(&self, now: SimTime) -> f64 {
        let mut rp = self.clone();
        rp.advance_alpha(now);
        rp.alpha
    }

    /// Apply the α updates due at or before `now`.
    fn advance_alpha(&mut self, now: SimTime) {
        if now < self.alpha_ref {
            return;
        }
        let k = self.p.alpha_timer_ps;
        match self.p.rp {
            RpVariant::Paper => {
                // the alpha timer fires at ref + K, ref + 2K, … (restarted by every CNP)
                let n = (now.0 - self.alpha_ref.0) / k;
                if n > 0 {
                    self.alpha *= self.keep().powi(n.min(i32::MAX as u64) as i32);
                    self.alpha_ref = SimTime(self.alpha_ref.0 + n * k);
                }
            }
            RpVariant::Nic => {
                // updates at origin + K·i, i ≥ 1; the first one due sees the CNP flag
                let ticks = (now.0 - self.alpha_ref.0) / k;
                let n = ticks.saturating_sub(self.alpha_ticks);
                if n > 0 {
                    self.alpha = self.keep() * self.alpha
                        + if std::mem::take(&mut self.alpha_cnp) {
                            self.p.g
                        } else {
                            0.0
                        };
                    if n > 1 {
                        self.alpha *= self.keep().powi((n - 1).min(i32::MAX as u64) as i32);
                    }
                    self.alpha_ticks = ticks;
                }
            }
        }
    }

    /// D7: released when RC and RT have reached the line rate (and no decrease is pending: the
    /// NIC RP's first CNP leaves both at line rate until its first decrease check).
    pub fn released(&self) -> bool {
        self.rc >= self.line && self.rt >= self.line && self.decrease_at == SimTime::NEVER
    }

    /// §7.3 step 1: a CNP at the paper RP.
    fn paper_cnp(&mut self, now: SimTime) {
        if !self.active {
            self.active = true;
            self.alpha_ref = now; // a new limiter: α = alpha_init, no decay before its first CNP
        }
        self.advance_alpha(now);
        if self.p.clamp_target || self.byte_stage > 0 || self.time_stage > 0 {
            self.rt = self.rc;
        }
        self.alpha = self.keep() * self.alpha + self.p.g;
        self.rc = (self.rc * (1.0 - self.alpha / 2.0)).max(self.p.rmin_bps);
        self.byte_stage = 0;
        self.time_stage = 0;
        self.byte_left = self.p.bc;
        self.timer_at = SimTime(now.0 + self.p.timer_ps);
        self.alpha_ref = now; // the alpha timer restarts
    }

    /// §7.3 step 3: an increase event after `fired`'s stage advanced; returns its phase.
    fn increase(&mut self, fired: Counter) -> Phase {
        let f = self.p.f;
        let (own, other) = match fired {
            Counter::Bytes => (self.byte_stage, self.time_stage),
            Counter::Timer => (self.time_stage, self.byte_stage),
        };
        let phase = match self.p.phase_rule {
            PhaseRule::Fired if own < f => Phase::FastRecovery,
            PhaseRule::Fired if other < f => Phase::ActiveIncrease,
            PhaseRule::Joint if own < f && other < f => Phase::FastRecovery,
            PhaseRule::Joint if own <= f || other <= f => Phase::ActiveIncrease,
            _ => Phase::HyperActiveIncrease,
        };
        // the first HAI step is one R_HAI under either rule: "fired" enters HAI at F, "joint"
        // above it
        let first_hai = match self.p.phase_rule {
            PhaseRule::Fired => f,
            PhaseRule::Joint => f + 1,
        };
        let delta = match phase {
            Phase::FastRecovery => 0.0,
            Phase::ActiveIncrease => self.p.r_ai_bps,
            Phase::HyperActiveIncrease => {
                self.p.r_hai_bps * (self.byte_stage.min(self.time_stage) - first_hai + 1) as f64
            }
        };
        if self.p.efr && (self.byte_stage == 1 || self.time_stage == 1) && self.rt > 10.0 * self.rc
        {
            self.rt /= 8.0;
        } else {
            self.rt += delta;
        }
        self.rc = ((self.rc + self.rt) / 2.0).min(self.line);
        self.last_phase = Some(phase);
        phase
    }

    /// §7.4 step 1 (first CNP) or the flag for the next α update and decrease check.
    fn nic_cnp(&mut self, now: SimTime) {
        self.nic_timer_catch_up(now);
        if !self.active {
            self.active = true;
            self.alpha = self.p.alpha_init;
            self.alpha_ref = now;
            self.alpha_ticks = 0;
            self.alpha_cnp = false;
            self.rc *= self.p.rate_on_first_cnp;
            self.rt = self.rc;
        } else {
            self.advance_alpha(now);
            self.alpha_cnp = true;
        }
        if self.decrease_at == SimTime::NEVER {
            // checks at origin + D·i, i ≥ 1; the next one strictly after now
            let d = self.p.decrease_interval_ps;
            let i = (now.0 - self.alpha_ref.0) / d + 1;
            self.decrease_at = SimTime(self.alpha_ref.0 + i * d);
        }
    }

    /// The increase-timer expiries strictly before `now` that no event ran: only a dormant RP
    /// (its limiter released at line rate, kept by `outlives_release`) has them, since its
    /// wake-up was voided at the release. [CODE:hpcc]'s timer keeps firing at line rate, where
    /// an increase leaves RC = RT = line rate and only advances TimeStage, so they are applied
    /// in closed form; without this the next wake-up asked for is in the past.
    fn nic_timer_catch_up(&mut self, now: SimTime) {
        if self.timer_at == SimTime::NEVER || self.timer_at >= now {
            return;
        }
        debug_assert!(self.rc >= self.line && self.rt >= self.line);
        let t = self.p.timer_ps;
        let k = (now.0 - 1 - self.timer_at.0) / t + 1; // expiries at timer_at + i·T < now
        self.time_stage = self
            .time_stage
            .saturating_add(k.min(u32::MAX as u64) as u32);
        self.timer_at = SimTime(self.timer_at.0 + k * t);
    }

    /// §7.4 step 3: the decrease check with a CNP pending.
    fn nic_decrease(&mut self, now: SimTime) {
        self.advance_alpha(now);
        if self.p.clamp_target || self.time_stage != 0 {
            self.rt = self.rc;
        }
        self.rc = (self.rc * (1.0 - self.alpha / 2.0)).max(self.p.rmin_bps);
        self.time_stage = 0;
        self.decrease_at = SimTime::NEVER;
        self.timer_at = SimTime(now.0 + self.p.timer_ps);
    }

    /// §7.4 step 4: the increase timer (phase by TimeStage before it advances).
    fn nic_increase(&mut self, now: SimTime) {
        let f = self.p.f;
        let phase = if self.time_stage < f {
            Phase::FastRecovery
        } else if self.time_stage == f {
            Phase::ActiveIncrease
        } else {
            Phase::HyperActiveIncrease
        };
        match phase {
            Phase::FastRecovery => {}
            Phase::ActiveIncrease => self.rt = (self.rt + self.p.r_ai_bps).min(self.line),
            Phase::HyperActiveIncrease => self.rt = (self.rt + self.p.r_hai_bps).min(self.line),
        }
        self.rc = (self.rc + self.rt) / 2.0;
        self.time_stage += 1;
        self.last_phase = Some(phase);
        self.timer_at = SimTime(now.0 + self.p.timer_ps);
    }

    /// Write RC to the limiter; release (D7) or ask for the earliest deadline.
    fn output(&mut self, rl: &mut RateLimiter) -> RpOutput {
        // (RC + RT)/2 approaches the line rate from below in floating point: snap the last bit/s
        if self.rt >= self.line && self.rc > self.line - 1.0 {
            self.rc = self.line;
        }
        rl.rate_bps = self.rc;
        if self.active && self.released() {
            return RpOutput {
                release: true,
                ..RpOutput::default()
            };
        }
        let next = self.timer_at.min(self.decrease_at);
        RpOutput {
            timer: self.wake.request(next),
            ..RpOutput::default()
        }
    }
}

impl ReactionPoint for DcqcnRp {
    /// A QP's rate state exists from its start to its end (§1.4, [CODE:ns3-rdma],
    /// [CODE:hpcc]): released at line rate (D7), the flow keeps α — decaying on its timer, in
    /// closed form from `alpha_ref` — and the NIC variant's first CNP is not repeated. At line
    /// rate nothing else would change: increase events leave RC = RT = line rate, and the next
    /// CNP resets the stages and counters.
    fn outlives_release(&mut self) -> bool {
        self.wake = Wake::default(); // the release voided the wake-up asked for
        true
    }
    fn on_message(
        &mut self,
        now: SimTime,
        m: &CmPayload,
        rl: &mut RateLimiter,
        _rng: &mut SimRng,
    ) -> RpOutput {
        if m.msg == msg::CNP {
            match self.p.rp {
                RpVariant::Paper => self.paper_cnp(now),
                RpVariant::Nic => self.nic_cnp(now),
            }
        }
        self.output(rl)
    }

    fn on_send(
        &mut self,
        _now: SimTime,
        bytes: u64,
        rl: &mut RateLimiter,
        _rng: &mut SimRng,
    ) -> RpOutput {
        if self.active && self.p.rp == RpVariant::Paper {
            self.byte_left -= bytes as f64;
            if self.byte_left <= 0.0 {
                self.byte_stage += 1;
                let phase = self.increase(Counter::Bytes);
                self.byte_left = if phase == Phase::HyperActiveIncrease {
                    self.p.bc / 2.0
                } else {
                    self.p.bc
                };
            }
        }
        self.output(rl)
    }

    fn on_timer(&mut self, now: SimTime, rl: &mut RateLimiter, _rng: &mut SimRng) -> RpOutput {
        // the deadlines due by now, in time order (a decrease check first on a tie: it restarts
        // the increase timer)
        loop {
            let t = self.timer_at.min(self.decrease_at);
            if t > now {
                break;
            }
            if self.decrease_at == t {
                self.nic_decrease(t);
                continue;
            }
            match self.p.rp {
                RpVariant::Paper => {
                    self.time_stage += 1;
                    let phase = self.increase(Counter::Timer);
                    let period = self.p.timer_ps;
                    self.timer_at = SimTime(
                        t.0 + if phase == Phase::HyperActiveIncrease {
                            period / 2
                        } else {
                            period
                        },
                    );
                }
                RpVariant::Nic => self.nic_increase(t),
            }
        }
        self.output(rl)
    }
}

/// DCQCN in the registry (cm/mod.rs). The `dcqcn-nic` preset of the front end lowers to this
/// scheme with `rp = "nic"`.
impl SchemeSpec for DcqcnParams {
    const NAME: &'static str = "dcqcn";
    type Cp = DcqcnCp;
    type Rp = DcqcnRp;
    type Np = DcqcnNp;
    fn cp_on_dequeue(&self) -> super::OnDequeue {
        super::OnDequeue::every_if(self.mark == MarkAt::Dequeue)
    }
    fn parse(params: &serde_json::Map<String, serde_json::Value>) -> crate::error::Result<Self> {
        DcqcnParams::parse(params)
    }
    fn new_cp(self: &Arc<Self>, _cpid: u32, line_rate_bps: f64, _rng: &mut SimRng) -> DcqcnCp {
        DcqcnCp::new(self, line_rate_bps)
    }
    fn new_rp(self: &Arc<Self>, line_rate_bps: f64) -> DcqcnRp {
        DcqcnRp::new(self.clone(), line_rate_bps)
    }
    fn new_np(self: &Arc<Self>, node: u32) -> DcqcnNp {
        DcqcnNp::new(self, node)
    }
    /// §1.4, D7: a flow's first CNP installs its limiter at line rate.
    fn creates_limiter(&self, m: &CmPayload) -> bool {
        m.msg == msg::CNP
    }
    fn frame_bytes(&self) -> u32 {
        self.cnm_size
    }
    fn oob_delay(&self) -> Option<SimTime> {
        DcqcnParams::oob_delay(self)
    }
    /// §7.2: the NP turns marks into CNPs.
    fn needs_sink_events(&self) -> bool {
        true
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::engine::rng::{stream, StreamKind};

    /// The §10 defaults as the front end lowers them.
    pub(crate) fn json() -> serde_json::Value {
        serde_json::json!({"kmin": 5000, "kmax": 200000, "pmax": 0.01, "mark": "dequeue",
            "cnp_interval_ps": 50000000u64, "cnp_mode": "suppress", "rp": "paper", "g": 0.00390625,
            "alpha_init": 1.0, "alpha_timer_ps": 55000000u64, "timer_ps": 55000000u64, "bc": 10000000,
            "f": 5, "r_ai_bps": 40000000, "r_hai_bps": 200000000, "rmin_bps": 100000000,
            "clamp_target": true, "phase_rule": "fired", "efr": true, "rate_on_first_cnp": 1.0,
            "decrease_interval_ps": 4000000u64, "cnm_size": 64, "feedback": "inband", "feedback_delay_ps": 0})
    }

    pub(crate) fn params(over: serde_json::Value) -> DcqcnParams {
        let mut v = json();
        for (k, x) in over.as_object().unwrap() {
            v[k] = x.clone();
        }
        DcqcnParams::parse(v.as_object().unwrap()).unwrap()
    }

    const LINE: f64 = 10e9;
    const G: f64 = 1.0 / 256.0;

    fn rng() -> SimRng {
        stream(5, StreamKind::CongestionPoint, 0)
    }

    fn close(a: f64, b: f64) {
        assert!((a - b).abs() <= 1e-9 * b.abs().max(1.0), "{a} != {b}");
    }

    fn cnp() -> CmPayload {
        CmPayload {
            msg: msg::CNP,
            ..CmPayload::default()
        }
    }

    fn marked(src: u32) -> Frame {
        let mut f = Frame::data(src, 9, 1500, SimTime::ZERO);
        f.cm.ce = true;
        f
    }

    // ------------------------------------------------------------------------ parameters

    #[test]
    fn parameters_parse_and_relations_are_checked_by_name() {
        let p = params(serde_json::json!({}));
        assert_eq!((p.kmin, p.kmax, p.pmax, p.f), (5000.0, 200_000.0, 0.01, 5));
        assert_eq!(p.oob_delay(), None);
        let mut v = json();
        v["kmax"] = serde_json::json!(1000);
        let e = DcqcnParams::parse(v.as_object().unwrap())
            .unwrap_err()
            .to_string();
        assert!(e.contains("kmax = 1000 B, kmin = 5000 B"), "{e}");
        let mut v = json();
        v["w"] = serde_json::json!(2.0);
        assert!(DcqcnParams::parse(v.as_object().unwrap())
            .unwrap_err()
            .to_string()
            .contains("unknown field `w`"));
        let mut v = json();
        v["timer_ps"] = serde_json::json!(0);
        assert!(DcqcnParams::parse(v.as_object().unwrap())
            .unwrap_err()
            .to_string()
            .contains("timer = 0"));
        let mut v = json();
        v["pmax"] = serde_json::json!(1.5);
        assert!(DcqcnParams::parse(v.as_object().unwrap())
            .unwrap_err()
            .to_string()
            .contains("pmax = 1.5"));
        let mut v = json();
        v.as_object_mut().unwrap().remove("g");
        assert!(DcqcnParams::parse(v.as_object().unwrap())
            .unwrap_err()
            .to_string()
            .contains("missing field `g`"));
        // each guard at its boundary, from both sides
        for (key, value, ok) in [
            ("rate_on_first_cnp", serde_json::json!(1.0), true),
            ("rate_on_first_cnp", serde_json::json!(0.0), false),
            ("rate_on_first_cnp", serde_json::json!(1.5), false),
            ("kmin", serde_json::json!(0.0), true),
            ("kmin", serde_json::json!(-1.0), false),
            ("kmin", serde_json::json!(200_000.0), true),
            ("bc", serde_json::json!(0.0), false),
            ("rmin_bps", serde_json::json!(0.0), false),
            ("f", serde_json::json!(0), false),
        ] {
            let mut v = json();
            v[key] = value.clone();
            let got = DcqcnParams::parse(v.as_object().unwrap());
            assert_eq!(got.is_ok(), ok, "{key} = {value}: {got:?}");
        }
        // out-of-band CNPs after a fixed delay
        let p = params(serde_json::json!({"feedback": "oob", "feedback_delay_ps": 5000000}));
        assert_eq!(p.oob_delay(), Some(SimTime::us(5)));
        let s = crate::cm::tests::scheme_with("dcqcn", p, serde_json::json!({}));
        assert_eq!(s.oob_delay(), Some(SimTime::us(5)));
    }

    // ------------------------------------------------------------------------ CP

    #[test]
    fn marking_probability_at_below_and_above_the_thresholds() {
        let p = DcqcnCp::new(&Arc::new(params(serde_json::json!({}))), 10e9);
        assert_eq!(p.mark_probability(0.0), 0.0);
        assert_eq!(p.mark_probability(5000.0), 0.0, "at Kmin: no marking");
        close(p.mark_probability(5001.0), 0.01 / 195_000.0);
        close(p.mark_probability(102_500.0), 0.005);
        assert_eq!(p.mark_probability(200_000.0), 0.01, "at Kmax: Pmax");
        assert_eq!(
            p.mark_probability(200_001.0),
            1.0,
            "above Kmax: every frame"
        );
        // Kmin = Kmax: a step
        let s = DcqcnCp::new(
            &Arc::new(params(serde_json::json!({"kmin": 40000, "kmax": 40000}))),
            10e9,
        );
        assert_eq!(
            (s.mark_probability(40_000.0), s.mark_probability(40_001.0)),
            (0.0, 1.0)
        );
    }

    /// `k_rate_bps` makes the thresholds those of a port of that rate: a port of another rate
    /// scales them ([CODE:hpcc]'s table per link speed), a port of that rate keeps them to the
    /// bit; without it every port marks at the same bytes. A rate of 0 is refused.
    #[test]
    fn the_thresholds_follow_the_port_rate_when_given_for_a_rate() {
        let scaled = Arc::new(params(serde_json::json!({
            "kmin": 40000.0, "kmax": 160000.0, "k_rate_bps": 10e9
        })));
        let fast = DcqcnCp::new(&scaled, 10e9);
        assert_eq!((fast.kmin, fast.kmax), (40_000.0, 160_000.0));
        let slow = DcqcnCp::new(&scaled, 1e9);
        close(slow.kmin, 4000.0);
        close(slow.kmax, 16_000.0);
        assert_eq!(slow.dequeue_floor(), 4000);
        assert_eq!(slow.mark_probability(4000.0), 0.0);
        assert!(slow.mark_probability(10_000.0) > 0.0);
        assert_eq!(slow.mark_probability(16_001.0), 1.0);
        assert_eq!(fast.mark_probability(16_001.0), 0.0);
        close(DcqcnCp::new(&scaled, 40e9).kmax, 640_000.0);
        let fixed = Arc::new(params(
            serde_json::json!({"kmin": 40000.0, "kmax": 160000.0}),
        ));
        assert_eq!(fixed.k_rate_bps, None);
        let slow_fixed = DcqcnCp::new(&fixed, 1e9);
        assert_eq!((slow_fixed.kmin, slow_fixed.kmax), (40_000.0, 160_000.0));
        let mut v = serde_json::to_value(*fixed).unwrap();
        v["k_rate_bps"] = serde_json::json!(0.0);
        let e = DcqcnParams::parse(v.as_object().unwrap())
            .unwrap_err()
            .to_string();
        assert!(e.contains("k_rate"), "{e}");
    }

    /// The fraction of marked frames over many dequeues matches p, draws happen only inside
    /// the band, and control frames are never marked.
    #[test]
    fn the_cp_marks_at_dequeue_with_the_queue_left_behind() {
        let p = Arc::new(params(serde_json::json!({"pmax": 0.5})));
        let mut cp = DcqcnCp::new(&p, 10e9);
        let mut r = rng();
        let run = |cp: &mut DcqcnCp, r: &mut SimRng, q: u64, n: usize| -> usize {
            (0..n)
                .filter(|_| {
                    let mut f = Frame::data(1, 2, 1500, SimTime::ZERO);
                    cp.on_dequeue(SimTime::ZERO, q, &mut f, r);
                    f.cm.ce
                })
                .count()
        };
        // q includes the departing frame: 6500 B leaves 5000 = Kmin behind -> never
        let before = r.clone();
        assert_eq!(run(&mut cp, &mut r, 6500, 1000), 0);
        assert_eq!(
            r.gen::<u64>(),
            before.clone().gen::<u64>(),
            "no draw outside the band"
        );
        // 201 501 B leaves 200 001 > Kmax -> always, without a draw
        let mut r2 = before.clone();
        assert_eq!(run(&mut cp, &mut r2, 201_501, 1000), 1000);
        assert_eq!(r2.gen::<u64>(), before.clone().gen::<u64>());
        // mid-band: p = 0.5·(102 500 − 5000)/195 000 = 0.25
        let n = run(&mut cp, &mut r, 104_000, 20_000);
        assert!((4700..=5300).contains(&n), "{n}");
        // enqueue marking is off in dequeue mode, and vice versa
        let mut f = Frame::data(1, 2, 1500, SimTime::ZERO);
        assert!(cp
            .on_enqueue(SimTime::ZERO, 10_000_000, &mut f, &mut r)
            .is_none());
        assert!(!f.cm.ce);
        let pe = Arc::new(params(serde_json::json!({"mark": "enqueue"})));
        let mut cpe = DcqcnCp::new(&pe, 10e9);
        cpe.on_dequeue(SimTime::ZERO, 10_000_000, &mut f, &mut r);
        assert!(!f.cm.ce);
        // at enqueue q includes the arriving frame: 200 001 B is above Kmax
        cpe.on_enqueue(SimTime::ZERO, 200_001, &mut f, &mut r);
        assert!(f.cm.ce);
        let mut ctl = Frame {
            kind: FrameKind::Control,
            ..Frame::data(1, 2, 64, SimTime::ZERO)
        };
        cp.on_dequeue(SimTime::ZERO, 10_000_000, &mut ctl, &mut r);
        assert!(!ctl.cm.ce, "the control class is never marked");
    }

    /// The engine calls `on_dequeue` only above the CP's floor: at or below it the CP neither
    /// marks nor draws, with the smallest frame (a 64 B data frame, the most left behind) too;
    /// one byte above it a frame can be marked. Marking at enqueue: never a dequeue.
    #[test]
    fn the_dequeue_floor_is_where_dequeues_stop_doing_anything() {
        let p = Arc::new(params(
            serde_json::json!({"kmin": 5000.5, "pmax": 1.0, "kmax": 5001.5}),
        ));
        let mut cp = DcqcnCp::new(&p, 10e9);
        let floor = cp.dequeue_floor();
        assert_eq!(floor, 5000);
        for (q, size) in [(floor, 64), (floor, 1500), (64, 64), (0, 64)] {
            let mut r = rng();
            let before = r.clone();
            let mut f = Frame::data(1, 2, size, SimTime::ZERO);
            assert!(cp.on_dequeue(SimTime::ZERO, q, &mut f, &mut r).is_none());
            assert!(!f.cm.ce, "q = {q}");
            assert_eq!(
                r.gen::<u64>(),
                before.clone().gen::<u64>(),
                "no draw at q = {q}"
            );
        }
        // above Kmax with the frame gone: marked
        let mut f = Frame::data(1, 2, 64, SimTime::ZERO);
        cp.on_dequeue(SimTime::ZERO, 5066, &mut f, &mut rng());
        assert!(f.cm.ce);
        let pe = Arc::new(params(serde_json::json!({"mark": "enqueue"})));
        assert_eq!(DcqcnCp::new(&pe, 10e9).dequeue_floor(), u64::MAX);
    }

    // ------------------------------------------------------------------------ NP

    #[test]
    fn np_suppresses_cnps_per_flow_for_the_interval() {
        let p = params(serde_json::json!({}));
        let mut np = DcqcnNp::new(&p, 9);
        let us = SimTime::us;
        // (time, src, marked, CNP expected)
        let trace = [
            (us(0), 1, false, false), // unmarked: nothing
            (us(1), 1, true, true),   // first mark of flow 1
            (us(2), 2, true, true),   // flow 2 is independent
            (us(30), 1, true, false), // 29 us after flow 1's CNP
            (us(50), 1, true, false), // 49 us
            (us(51), 1, true, true),  // exactly 50 us: the last CNP is not within the last 50 us
            (us(52), 2, true, true),  // 50 us after flow 2's
            (us(90), 1, false, false),
            (us(200), 1, true, true),
        ];
        for (i, (t, src, ce, want)) in trace.into_iter().enumerate() {
            let mut f = marked(src);
            f.cm.ce = ce;
            let out = np.receive(t, &f);
            assert_eq!(out.reply.is_some(), want, "step {i}");
            assert_eq!(out.wake, None);
            if let Some(c) = out.reply {
                assert_eq!(
                    (c.msg, c.flow_src, c.flow_dst, c.cpid),
                    (msg::CNP, src, 9, NODE_CPID | 9)
                );
            }
        }
    }

    #[test]
    fn np_poll_mode_checks_every_interval_from_the_first_frame() {
        let p = params(serde_json::json!({"cnp_mode": "poll"}));
        let mut np = DcqcnNp::new(&p, 9);
        let us = SimTime::us;
        // first frame at 10 us, unmarked: checks at 10, 60, 110, 160 … us
        assert_eq!(
            np.receive(us(10), &Frame::data(1, 9, 1500, SimTime::ZERO)),
            NpOutput::default()
        );
        // a mark at 20 us waits for the check at 60 us; a second mark adds nothing
        assert_eq!(np.receive(us(20), &marked(1)).wake, Some(us(60)));
        assert_eq!(np.receive(us(40), &marked(1)), NpOutput::default());
        assert_eq!(
            np.check(us(60), 1, 0)
                .map(|c| (c.msg, c.flow_src, c.flow_dst)),
            Some((msg::CNP, 1, 9))
        );
        // a mark exactly at a check instant goes to the next check (the check ran first)
        assert_eq!(np.receive(us(110), &marked(1)).wake, Some(us(160)));
        assert!(np.check(us(160), 1, 0).is_some());
        // a check with no mark since the last sends nothing (and is only scheduled on a mark)
        assert!(np.check(us(210), 1, 0).is_none());
        // a marked first frame is reported at once (the first check is its arrival)
        let out = np.receive(us(5), &marked(3));
        assert!(out.reply.is_some() && out.wake.is_none());
        assert_eq!(np.receive(us(6), &marked(3)).wake, Some(us(55)));
        // checks keep to the first frame's grid: flow 4's first frame at 70 us, a mark at
        // 100 us waits for the check at 120 us, one at 130 us for 170 us
        assert_eq!(
            np.receive(us(70), &Frame::data(4, 9, 1500, SimTime::ZERO)),
            NpOutput::default()
        );
        assert_eq!(np.receive(us(100), &marked(4)).wake, Some(us(120)));
        assert!(np.check(us(120), 4, 0).is_some());
        assert_eq!(np.receive(us(130), &marked(4)).wake, Some(us(170)));
        // the engine reaches the NP through its trait: the same answers
        let (on_data, on_timer) = (
            <DcqcnNp as NotificationPoint>::on_data(&mut np, us(140), &marked(5)),
            <DcqcnNp as NotificationPoint>::on_timer(&mut np, us(170), 4, 0),
        );
        assert_eq!(
            on_data.reply.map(|c| (c.msg, c.flow_src)),
            Some((msg::CNP, 5)),
            "a marked first frame is reported at once"
        );
        assert_eq!(on_timer.map(|c| (c.msg, c.flow_src)), Some((msg::CNP, 4)));
    }

    #[test]
    fn np_selects_exactly_the_frames_it_acts_on() {
        let us = SimTime::us;
        let plain = |src| Frame::data(src, 9, 1500, SimTime::ZERO);
        // no draw: the answer is the same whatever the stream
        let ignores = |np: &DcqcnNp, f: &Frame| {
            !<DcqcnNp as NotificationPoint>::selects(&mut np.clone(), f, &mut rng())
        };
        // suppress mode: every unmarked frame, none marked, known flow or not
        let mut np = DcqcnNp::new(&params(serde_json::json!({})), 9);
        assert!(ignores(&np, &plain(1)) && !ignores(&np, &marked(1)));
        // and an ignored frame indeed changes nothing: the NP answers later frames the same
        let mut twin = np.clone();
        assert_eq!(np.receive(us(1), &plain(1)), NpOutput::default());
        for t in [2, 3, 60] {
            assert_eq!(
                np.receive(us(t), &marked(1)),
                twin.receive(us(t), &marked(1))
            );
        }
        // poll mode: a flow's first frame starts its checks even unmarked; after it, unmarked
        // frames are ignored and marked ones are not
        let mut np = DcqcnNp::new(&params(serde_json::json!({"cnp_mode": "poll"})), 9);
        assert!(!ignores(&np, &plain(1)) && !ignores(&np, &marked(1)));
        np.receive(us(10), &plain(1));
        assert!(ignores(&np, &plain(1)) && !ignores(&np, &marked(1)));
        assert!(!ignores(&np, &plain(2)), "another flow is still unknown");
        let twin = np.clone();
        assert_eq!(np.receive(us(15), &plain(1)), NpOutput::default());
        assert_eq!(np.flows.get(&(1, 0)), twin.flows.get(&(1, 0)));
        assert_eq!(np.receive(us(20), &marked(1)).wake, Some(us(60)));
    }

    // ------------------------------------------------------------------------ RP (paper)

    fn new_rp(p: DcqcnParams) -> (DcqcnRp, RateLimiter, SimRng) {
        (
            DcqcnRp::new(Arc::new(p), LINE),
            RateLimiter::new(LINE),
            rng(),
        )
    }

    /// §1.4: a QP's state outlives its limiter's release. Paper RP: the next CNP finds α decayed
    /// once per K since the last CNP and cuts with it; NIC RP: α keeps its update grid and the
    /// first-CNP initialisation is not repeated.
    #[test]
    fn the_state_outlives_the_release() {
        let (mut rp, mut rl, mut r) = new_rp(params(serde_json::json!({})));
        rp.on_message(SimTime::ZERO, &cnp(), &mut rl, &mut r);
        assert_eq!(rp.alpha, 1.0); // (1 − g)·1 + g
        (rp.rc, rp.rt) = (LINE, LINE); // recovered
        assert!(rp.released());
        assert!(rp.outlives_release());
        assert_eq!(
            rp.wake.armed,
            SimTime::NEVER,
            "the release voided its wake-up"
        );
        let mut rl = RateLimiter::new(LINE); // the next limiter starts at line rate (D7)
        rp.on_message(SimTime::us(10 * 55 + 7), &cnp(), &mut rl, &mut r);
        let alpha = (1.0 - G).powi(10) * (1.0 - G) + G;
        close(rp.alpha, alpha);
        close(rp.rc, LINE * (1.0 - alpha / 2.0));
        close(rl.rate_bps, rp.rc);
        // the NIC variant: no second "first CNP" (α = 1, RC = RT = rate_on_first_cnp·RC)
        let nic = serde_json::json!({"rp": "nic", "alpha_timer_ps": 1000000u64, "rate_on_first_cnp": 0.5});
        let (mut rp, mut rl, mut r) = new_rp(params(nic));
        rp.on_message(SimTime::ZERO, &cnp(), &mut rl, &mut r);
        close(rp.rc, LINE / 2.0);
        (rp.rc, rp.rt, rp.decrease_at) = (LINE, LINE, SimTime::NEVER);
        assert!(rp.released() && rp.outlives_release());
        let before = rp.alpha_at(SimTime::us(100));
        let mut rl = RateLimiter::new(LINE);
        rp.on_message(SimTime::us(100), &cnp(), &mut rl, &mut r);
        close(rp.alpha_at(SimTime::us(100)), before);
        assert_eq!((rp.rc, rp.rt), (LINE, LINE), "no first-CNP cut to half");
    }

    #[test]
    fn rate_after_cnps_and_alpha_decay() {
        let (mut rp, mut rl, mut r) = new_rp(params(serde_json::json!({})));
        // first CNP: α = (1 − g)·1 + g = 1, RC = 10 G·(1 − 1/2), RT = RC before the cut
        let out = rp.on_message(SimTime::ZERO, &cnp(), &mut rl, &mut r);
        assert_eq!((rp.alpha, rl.rate_bps, rp.rt), (1.0, 5e9, 10e9));
        assert_eq!(out.timer, Some(SimTime::us(55)), "the increase timer T");
        // the alpha timer: α·(1 − g)^n after n periods of K = 55 us without a CNP
        assert_eq!(rp.alpha_at(SimTime::us(54)), 1.0);
        assert_eq!(rp.alpha_at(SimTime::us(55)), 1.0 - G);
        close(rp.alpha_at(SimTime::us(550)), (1.0 - G).powi(10));
        close(rp.alpha_at(SimTime::us(604)), (1.0 - G).powi(10));
        // a second CNP at 120 us: two decays, then the CNP's update; RT := RC (clamp_target)
        rp.on_message(SimTime::us(120), &cnp(), &mut rl, &mut r);
        let a = (1.0 - G) * (1.0 - G).powi(2) + G;
        close(rp.alpha, a);
        assert_eq!(rp.rt, 5e9);
        close(rl.rate_bps, 5e9 * (1.0 - a / 2.0));
        // the alpha timer restarted at the CNP: nothing due 54 us later, one decay at 55 us
        close(rp.alpha_at(SimTime::us(174)), a);
        close(rp.alpha_at(SimTime::us(175)), a * (1.0 - G));
        // a limiter created later starts from alpha_init, undecayed
        let (mut late, mut rl2, _) = new_rp(params(serde_json::json!({})));
        late.on_message(SimTime::ms(1), &cnp(), &mut rl2, &mut r);
        assert_eq!((late.alpha, rl2.rate_bps), (1.0, 5e9));
        // the floor Rmin = 100 Mb/s
        for i in 0..40 {
            rp.on_message(SimTime::us(200 + i), &cnp(), &mut rl, &mut r);
        }
        assert_eq!(rl.rate_bps, 1e8);
        // without clamp_target, RT stays where it was until an increase event happened
        let (mut rp, mut rl, mut r) = new_rp(params(serde_json::json!({"clamp_target": false})));
        rp.on_message(SimTime::ZERO, &cnp(), &mut rl, &mut r);
        rp.on_message(SimTime::us(1), &cnp(), &mut rl, &mut r);
        assert_eq!(rp.rt, 10e9);
        close(rl.rate_bps, 2.5e9);
        // after an increase event of either counter, a CNP sets RT := RC (before the cut)
        for (bytes, timer) in [(1, 0), (0, 1)] {
            let (mut rp, mut rl, mut r) =
                new_rp(params(serde_json::json!({"clamp_target": false})));
            rp.on_message(SimTime::ZERO, &cnp(), &mut rl, &mut r);
            (rp.byte_stage, rp.time_stage) = (bytes, timer);
            let rc = rp.rc;
            rp.on_message(SimTime::us(1), &cnp(), &mut rl, &mut r);
            assert_eq!(rp.rt, rc, "stages {bytes} / {timer}");
        }
    }

    /// Timer-driven recovery with the byte counter out of reach: stages 1–4 are fast recovery,
    /// then active increase (the "fired" rule, F = 5); the first event's TR/8 clamp; periods.
    #[test]
    fn stage_sequence_fr_then_ai_by_the_timer() {
        let (mut rp, mut rl, mut r) = new_rp(params(serde_json::json!({})));
        rp.on_message(SimTime::ZERO, &cnp(), &mut rl, &mut r);
        // a second CNP 1 us later: RT := RC = 5 G, α = (1 − g)·1 + g = 1, RC = 2.5 G
        rp.on_message(SimTime::us(1), &cnp(), &mut rl, &mut r);
        let (mut rc, mut rt) = (2.5e9f64, 5e9f64);
        assert_eq!((rl.rate_bps, rp.rt), (rc, rt));
        let mut t = SimTime::us(56);
        let mut phases = vec![];
        for stage in 1..=8u32 {
            let out = rp.on_timer(t, &mut rl, &mut r);
            assert_eq!(rp.time_stage, stage);
            if stage >= 5 {
                rt += 40e6;
            }
            rc = ((rc + rt) / 2.0).min(LINE);
            close(rl.rate_bps, rc);
            close(rp.rt, rt);
            phases.push(rp.last_phase.unwrap());
            assert_eq!(
                out.timer,
                Some(t + SimTime::us(55)),
                "stage {stage}: T, not halved (no HAI)"
            );
            t += SimTime::us(55);
        }
        use Phase::*;
        assert_eq!(
            phases,
            [
                FastRecovery,
                FastRecovery,
                FastRecovery,
                FastRecovery,
                ActiveIncrease,
                ActiveIncrease,
                ActiveIncrease,
                ActiveIncrease
            ]
        );
        // a CNP resets the stages and restarts the timer from the CNP
        let out = rp.on_message(t, &cnp(), &mut rl, &mut r);
        assert_eq!((rp.time_stage, rp.byte_stage), (0, 0));
        assert_eq!(out.timer, Some(t + SimTime::us(55)));
        // the TR/8 clamp: with RT > 10·RC, the first increase divides RT by 8
        let (mut rp, mut rl, mut r) = new_rp(params(serde_json::json!({"clamp_target": false})));
        for i in 0..5 {
            rp.on_message(SimTime::ns(i), &cnp(), &mut rl, &mut r); // RC 10 G / 2^5 with α = 1
        }
        assert_eq!((rl.rate_bps, rp.rt), (312.5e6, 10e9));
        rp.on_timer(SimTime::ns(4) + SimTime::us(55), &mut rl, &mut r);
        assert_eq!((rp.rt, rl.rate_bps), (1.25e9, (312.5e6 + 1.25e9) / 2.0));
        let (mut rp, mut rl, mut r) = new_rp(params(
            serde_json::json!({"clamp_target": false, "efr": false}),
        ));
        for i in 0..5 {
            rp.on_message(SimTime::ns(i), &cnp(), &mut rl, &mut r);
        }
        rp.on_timer(SimTime::ns(4) + SimTime::us(55), &mut rl, &mut r);
        assert_eq!(rp.rt, 10e9);
    }

    #[test]
    fn the_timer_period_halves_in_hyper_active_increase() {
        let (mut rp, mut rl, mut r) = new_rp(params(serde_json::json!({})));
        rp.on_message(SimTime::ZERO, &cnp(), &mut rl, &mut r);
        // both counters at F = 5 after this expiry: HAI, and the next expiry T/2 later (§7.3 step 3)
        (rp.byte_stage, rp.time_stage) = (5, 4);
        let t = SimTime::us(55);
        let out = rp.on_timer(t, &mut rl, &mut r);
        assert_eq!(rp.last_phase, Some(Phase::HyperActiveIncrease));
        assert_eq!(out.timer, Some(t + SimTime::ns(27_500)));
    }

    #[test]
    fn the_rt_over_8_clamp_and_the_joint_phase_rule_at_their_boundaries() {
        use Phase::*;
        let p = |over: serde_json::Value| {
            let mut v = serde_json::json!({"bc": 1500, "timer_ps": 1000000000000u64});
            for (k, x) in over.as_object().unwrap() {
                v[k] = x.clone();
            }
            params(v)
        };
        // RT = 10 G > 10·RC = 5 G at ByteStage 1: RT := RT/8, RC = (0.5 + 1.25)/2 G
        let (mut rp, mut rl, mut r) = new_rp(p(serde_json::json!({})));
        rp.on_message(SimTime::ZERO, &cnp(), &mut rl, &mut r);
        (rp.rc, rp.rt) = (0.5e9, 10e9);
        rp.on_send(SimTime::ZERO, 1500, &mut rl, &mut r);
        assert_eq!((rp.rt, rp.rc), (1.25e9, 0.875e9));
        // RT exactly 10·RC: no clamp (fast recovery keeps RT)
        let (mut rp, mut rl, mut r) = new_rp(p(serde_json::json!({})));
        rp.on_message(SimTime::ZERO, &cnp(), &mut rl, &mut r);
        (rp.rc, rp.rt) = (1e9, 10e9);
        rp.on_send(SimTime::ZERO, 1500, &mut rl, &mut r);
        assert_eq!((rp.rt, rp.rc), (10e9, 5.5e9));
        // the first timer stage clamps too
        let (mut rp, mut rl, mut r) = new_rp(p(serde_json::json!({"timer_ps": 55000000u64})));
        rp.on_message(SimTime::ZERO, &cnp(), &mut rl, &mut r);
        (rp.rc, rp.rt) = (0.5e9, 10e9);
        rp.on_timer(SimTime::us(55), &mut rl, &mut r);
        assert_eq!((rp.time_stage, rp.byte_stage, rp.rt), (1, 0, 1.25e9));
        // "joint": fast recovery while both stages are below F = 5, HAI once both are above
        // it, AI otherwise (both at F included)
        for (bytes_before, timer, want) in [
            (3, 4, FastRecovery),
            (4, 4, ActiveIncrease),
            (3, 5, ActiveIncrease),
            (4, 5, ActiveIncrease),
            (4, 6, ActiveIncrease),
            (5, 6, HyperActiveIncrease),
            (6, 5, ActiveIncrease),
        ] {
            let (mut rp, mut rl, mut r) =
                new_rp(p(serde_json::json!({"phase_rule": "joint", "efr": false})));
            rp.on_message(SimTime::ZERO, &cnp(), &mut rl, &mut r);
            (rp.byte_stage, rp.time_stage) = (bytes_before, timer);
            rp.on_send(SimTime::ZERO, 1500, &mut rl, &mut r);
            assert_eq!(
                rp.last_phase,
                Some(want),
                "stages {} / {timer}",
                bytes_before + 1
            );
        }
        // the joint rule's HAI step is R_HAI·(min stage − F): one R_HAI at stages 6 / 6, two
        // at 7 / 7 (RT below the line, so the step shows)
        for (stages, step) in [(6u32, 200e6), (7, 400e6)] {
            let (mut rp, mut rl, mut r) =
                new_rp(p(serde_json::json!({"phase_rule": "joint", "efr": false})));
            rp.on_message(SimTime::ZERO, &cnp(), &mut rl, &mut r);
            (rp.byte_stage, rp.time_stage, rp.rc, rp.rt) = (stages - 1, stages, 1e9, 2e9);
            rp.on_send(SimTime::ZERO, 1500, &mut rl, &mut r);
            assert_eq!(rp.last_phase, Some(HyperActiveIncrease));
            assert_eq!(rp.rt, 2e9 + step, "stages {stages}");
        }
    }

    /// Byte counter and timer together: HAI once both stages reach F, with the step
    /// R_HAI·(min − F + 1) and halved periods; the "joint" rule differs where one stage is
    /// below F.
    #[test]
    fn hai_when_both_counters_reach_f_and_the_phase_rules_differ() {
        let p = params(serde_json::json!({"bc": 150000, "timer_ps": 1000000000000u64}));
        let (mut rp, mut rl, mut r) = new_rp(p);
        rp.on_message(SimTime::ZERO, &cnp(), &mut rl, &mut r);
        rp.time_stage = 5; // as if five timer periods had passed
        let send = |rp: &mut DcqcnRp, rl: &mut RateLimiter, r: &mut SimRng, n: usize| {
            for _ in 0..n {
                rp.on_send(SimTime::ZERO, 1500, rl, r);
            }
        };
        let mut seen = vec![];
        for bs in 1..=7u32 {
            let frames = if rp.byte_left < 150_000.0 { 50 } else { 100 };
            let (rc0, rt0) = (rp.rc, rp.rt);
            send(&mut rp, &mut rl, &mut r, frames);
            assert_eq!(rp.byte_stage, bs, "{frames} frames");
            let step = rp.rt - rt0;
            seen.push((rp.last_phase.unwrap(), step));
            close(rp.rc, ((rc0 + rp.rt) / 2.0).min(LINE));
        }
        use Phase::*;
        let want = [
            (FastRecovery, 0.0),
            (FastRecovery, 0.0),
            (FastRecovery, 0.0),
            (FastRecovery, 0.0),
            (HyperActiveIncrease, 200e6),
            (HyperActiveIncrease, 200e6),
            (HyperActiveIncrease, 200e6),
        ];
        for (i, ((ph, st), (wph, wst))) in seen.iter().zip(want).enumerate() {
            assert_eq!(*ph, wph, "byte stage {}", i + 1);
            close(*st, wst);
        }
        // the step grows with the smaller stage: min(8, 7) − F + 1 = 3 → 600 Mb/s (rates below line)
        rp.time_stage = 7;
        rp.rc = 1e9;
        rp.rt = 2e9;
        send(&mut rp, &mut rl, &mut r, 50);
        assert_eq!(
            (rp.byte_stage, rp.last_phase),
            (8, Some(HyperActiveIncrease))
        );
        close(rp.rt, 2.6e9);
        close(rl.rate_bps, 1.8e9);
        // "fired": the byte counter at stage 2 with the timer at 5 is fast recovery; "joint": AI
        for (rule, want) in [("fired", FastRecovery), ("joint", ActiveIncrease)] {
            let p = params(serde_json::json!({"phase_rule": rule, "bc": 1500}));
            let (mut rp, mut rl, mut r) = new_rp(p);
            rp.on_message(SimTime::ZERO, &cnp(), &mut rl, &mut r);
            rp.time_stage = 5;
            rp.byte_stage = 1;
            rp.on_send(SimTime::ZERO, 1500, &mut rl, &mut r);
            assert_eq!(rp.last_phase, Some(want), "{rule}");
        }
        // both counters below F: fast recovery under either rule
        for rule in ["fired", "joint"] {
            let p = params(serde_json::json!({"phase_rule": rule, "bc": 1500}));
            let (mut rp, mut rl, mut r) = new_rp(p);
            rp.on_message(SimTime::ZERO, &cnp(), &mut rl, &mut r);
            rp.time_stage = 2;
            rp.on_send(SimTime::ZERO, 1500, &mut rl, &mut r);
            assert_eq!(rp.last_phase, Some(FastRecovery), "{rule}");
        }
    }

    #[test]
    fn the_limiter_is_released_at_line_rate() {
        let p = params(serde_json::json!({"r_ai_bps": 5e9}));
        let (mut rp, mut rl, mut r) = new_rp(p);
        rp.on_message(SimTime::ZERO, &cnp(), &mut rl, &mut r);
        let mut t = SimTime::ZERO;
        let mut released = false;
        for _ in 0..12 {
            t += SimTime::us(55);
            if rp.on_timer(t, &mut rl, &mut r).release {
                released = true;
                break;
            }
        }
        assert!(released && rl.rate_bps == LINE && rp.rt >= LINE);
    }

    // ------------------------------------------------------------------------ RP (NIC)

    /// §7.4 with HPCC's constants: α every 1 us, decrease checks every 4 us, timer 900 us, F = 1.
    fn nic() -> DcqcnParams {
        nic_with(serde_json::json!({}))
    }

    /// [`nic`] with the parameters of `over` changed.
    fn nic_with(over: serde_json::Value) -> DcqcnParams {
        let mut v = serde_json::json!({"rp": "nic", "alpha_timer_ps": 1000000u64, "timer_ps": 900000000u64, "f": 1,
            "r_ai_bps": 50000000, "r_hai_bps": 100000000, "clamp_target": false, "efr": false});
        for (k, x) in over.as_object().unwrap() {
            v[k] = x.clone();
        }
        params(v)
    }

    #[test]
    fn nic_rp_first_cnp_decrease_check_and_alpha_updates() {
        let (mut rp, mut rl, mut r) = new_rp(nic());
        let t0 = SimTime::us(100);
        let out = rp.on_message(t0, &cnp(), &mut rl, &mut r);
        // the first CNP: α = 1, RC = RT = 1.0·RC; the decrease waits for the check at +4 us
        assert_eq!((rp.alpha, rl.rate_bps, rp.rt), (1.0, 10e9, 10e9));
        assert_eq!(out.timer, Some(t0 + SimTime::us(4)));
        // four α updates without a CNP flag (the first CNP's flag is cleared), then the cut
        let out = rp.on_timer(t0 + SimTime::us(4), &mut rl, &mut r);
        let a = (1.0 - G).powi(4);
        close(rp.alpha, a);
        close(rl.rate_bps, 10e9 * (1.0 - a / 2.0));
        assert_eq!(rp.rt, 10e9, "TimeStage = 0 and no clamp: RT stays");
        assert_eq!(
            out.timer,
            Some(t0 + SimTime::us(904)),
            "the increase timer restarts"
        );
        let rc1 = rl.rate_bps;
        // a CNP at +6.5 us: the α update at +7 us sees it; the check at +8 us cuts
        let out = rp.on_message(t0 + SimTime::ns(6500), &cnp(), &mut rl, &mut r);
        assert_eq!(out.timer, Some(t0 + SimTime::us(8)));
        // another CNP before the next α update: no update is due, α stays, the flag stays set
        let alpha = rp.alpha;
        rp.on_message(t0 + SimTime::ns(6700), &cnp(), &mut rl, &mut r);
        assert_eq!(rp.alpha, alpha);
        rp.on_timer(t0 + SimTime::us(8), &mut rl, &mut r);
        let a2 = ((1.0 - G) * (a * (1.0 - G).powi(2)) + G) * (1.0 - G);
        close(rp.alpha, a2);
        close(rl.rate_bps, rc1 * (1.0 - a2 / 2.0));
        // timer: stage 0 < F = 1 -> FR; stage 1 = F -> AI (+50 Mb/s, capped); stage 2 -> HAI
        let (mut rc, mut rt) = (rl.rate_bps, rp.rt);
        let mut t = t0 + SimTime::us(908);
        let mut phases = vec![];
        for _ in 0..3 {
            let out = rp.on_timer(t, &mut rl, &mut r);
            phases.push(rp.last_phase.unwrap());
            rt = match phases.last().unwrap() {
                Phase::FastRecovery => rt,
                Phase::ActiveIncrease => (rt + 50e6).min(LINE),
                Phase::HyperActiveIncrease => (rt + 100e6).min(LINE),
            };
            rc = (rc + rt) / 2.0;
            close(rl.rate_bps, rc);
            assert_eq!(out.timer, Some(t + SimTime::us(900)));
            t += SimTime::us(900);
        }
        assert_eq!(
            phases,
            [
                Phase::FastRecovery,
                Phase::ActiveIncrease,
                Phase::HyperActiveIncrease
            ]
        );
        assert_eq!(rp.time_stage, 3);
        // a decrease after an increase clamps RT := RC (TimeStage != 0); the check at +3512 us
        // comes before the next increase (+3608 us)
        let before = rl.rate_bps;
        let out = rp.on_message(t - SimTime::us(100), &cnp(), &mut rl, &mut r);
        assert_eq!(out.timer, Some(t0 + SimTime::us(3512)));
        rp.on_timer(t0 + SimTime::us(3512), &mut rl, &mut r);
        assert_eq!(rp.rt, before);
        assert_eq!(rp.time_stage, 0);
    }

    #[test]
    fn nic_rp_steps_rt_below_the_line_and_releases_within_a_bit_of_it() {
        // the first CNP halves RC and RT, so every AI and HAI step shows below the line
        let (mut rp, mut rl, mut r) =
            new_rp(nic_with(serde_json::json!({"rate_on_first_cnp": 0.5})));
        let t0 = SimTime::us(100);
        rp.on_message(t0, &cnp(), &mut rl, &mut r);
        rp.on_timer(t0 + SimTime::us(4), &mut rl, &mut r);
        let (mut rc, mut rt) = (5e9 * (1.0 - (1.0 - G).powi(4) / 2.0), 5e9);
        assert_eq!((rl.rate_bps, rp.rt), (rc, rt));
        // the increase timer every 900 us: FR at TimeStage 0 < F, AI at F, HAI after; released
        // once RT is at the line and RC within 1 b/s of it (the last bit snapped, not waited for)
        let mut t = t0 + SimTime::us(904);
        for stage in 0.. {
            // the NIC RP has no byte counter: bytes sent change nothing (§7.4 step 4)
            rp.on_send(t - SimTime::us(1), 20_000_000, &mut rl, &mut r);
            assert_eq!((rl.rate_bps, rp.byte_stage), (rc, 0));
            rt = (rt + [0.0, 50e6, 100e6][stage.min(2)]).min(LINE);
            rc = (rc + rt) / 2.0;
            let out = rp.on_timer(t, &mut rl, &mut r);
            if rt >= LINE && rc > LINE - 1.0 {
                assert!(out.release, "released at increase {stage}");
                assert_eq!(rl.rate_bps, LINE);
                assert!(
                    rc < LINE && stage > 40,
                    "RC {rc} at increase {stage}: the snap mattered"
                );
                return;
            }
            assert!(!out.release, "not released at increase {stage}: RC {rc}");
            assert_eq!((rl.rate_bps, rp.rt), (rc, rt), "increase {stage}");
            t += SimTime::us(900);
        }
    }

    /// A flow released at line rate and congested again later than one increase period after
    /// its release: its kept RP's increase timer went on past the release ([CODE:hpcc]'s timer
    /// never stops), so the new CNP must not ask for a wake-up in the past (the engine's event
    /// queue refuses one: "event scheduled in the past").
    /// A NIC RP cut by a CNP, then run by its timers until its limiter is released at line rate
    /// (its state kept, `outlives_release`), and the instant of that release.
    fn released_nic_rp() -> (DcqcnRp, SimTime, SimRng) {
        let (mut rp, mut rl, mut r) = new_rp(nic_with(
            serde_json::json!({"timer_ps": 55000000u64, "r_hai_bps": 1e9, "rate_on_first_cnp": 0.5}),
        ));
        rp.on_message(SimTime::ZERO, &cnp(), &mut rl, &mut r);
        let mut now = SimTime::ZERO;
        let mut out = RpOutput::default();
        for _ in 0..10_000 {
            now = rp.timer_at.min(rp.decrease_at);
            out = rp.on_timer(now, &mut rl, &mut r);
            if out.release {
                break;
            }
        }
        assert!(out.release, "released at line rate");
        assert!(rp.outlives_release());
        (rp, now, r)
    }

    #[test]
    fn a_nic_rp_congested_again_after_its_release_asks_for_no_past_wake_up() {
        let (mut rp, now, mut r) = released_nic_rp();
        let stage = rp.time_stage;
        // 10 ms later (181 whole periods of 55 us after the last expiry)
        let later = now + SimTime::ms(10);
        let mut rl = RateLimiter::new(LINE);
        let out = rp.on_message(later, &cnp(), &mut rl, &mut r);
        let wake = out.timer.expect("a wake-up for the decrease check");
        assert!(
            wake >= later,
            "wake-up {wake:?} before the CNP at {later:?}"
        );
        assert!(
            wake <= later + SimTime::us(4) && wake == rp.decrease_at,
            "the decrease check comes first"
        );
        // the timer kept its grid: 182 expiries since the last one ran (the 182nd after the CNP)
        assert_eq!(rp.time_stage, stage + 181);
        assert_eq!(rp.timer_at, now + SimTime::us(55 * 182));
        assert_eq!((rp.rc, rp.rt), (LINE, LINE));
        // the decrease: TimeStage != 0, so RT := RC (no clamp needed)
        rp.on_timer(wake, &mut rl, &mut r);
        assert_eq!((rp.rt, rp.time_stage), (LINE, 0));
        assert!(rl.rate_bps < LINE);
    }

    #[test]
    fn a_cnp_on_a_dormant_timers_expiry_leaves_that_expiry_to_run() {
        // the expiries caught up are those strictly before the CNP: one at its instant is the
        // timer's next wake-up, not counted twice
        let (mut rp, _, mut r) = released_nic_rp();
        let (stage, due) = (rp.time_stage, rp.timer_at);
        let on_grid = due + SimTime::us(55 * 100);
        let mut rl = RateLimiter::new(LINE);
        rp.on_message(on_grid, &cnp(), &mut rl, &mut r);
        assert_eq!(rp.time_stage, stage + 100);
        assert_eq!(rp.timer_at, on_grid);
    }

    #[test]
    fn nic_rate_on_first_cnp() {
        let p = params(serde_json::json!({"rp": "nic", "rate_on_first_cnp": 0.25}));
        let (mut rp, mut rl, mut r) = new_rp(p);
        rp.on_message(SimTime::ZERO, &cnp(), &mut rl, &mut r);
        assert_eq!((rl.rate_bps, rp.rt), (2.5e9, 2.5e9));
    }
}
