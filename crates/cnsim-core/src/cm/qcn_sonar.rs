//! QCN-SONAR: QCN plus "sonar" pings with which a throttled source asks the congestion point
//! that throttled it whether it is still congested, and recovers at once when it is not.
//!
//! Implements algorithms.md §5.6 with decision D17. **This is cnsim's reading of an incomplete
//! public record**: seed 001 gives only the parameter names and values (WP 10 ms, WE 2 ms,
//! SF 0.5 ms, "not congested" threshold 15 000 B and interval 10 ms, "no FR1 target-rate
//! adjustment"); the algorithm below is the §5.6 proposal made precise:
//!
//! * **CP** = the QCN CP (§5.2) that also tracks "not congested": q < `nc_threshold`
//!   continuously for `nc_interval`. It observes q at every admission (q including the frame),
//!   at every departure start (q without the departing frame, i.e. the level it leaves behind)
//!   and when a ping arrives. A ping addressed to it (`on_probe`) is answered at once with
//!   "not congested" or, otherwise, its current Fb, Qoff and Qdelta (Fb against the last
//!   sampling instant's q_old; a ping is not a sampling instant and changes nothing).
//! * **RP** = the QCN RP (§5.3) plus a probing cycle. After `wp` without a CNM on an active RL
//!   the RP opens a probing episode of length `we`: a ping (class (b) forward probe, D6, with
//!   `cpid` = the CPID of the last CNM) at its start and every `sf` while it lasts. A
//!   "not congested" answer to a ping of the current episode, arriving before the episode ends,
//!   triggers the recovery (`recovery = "cr_to_tr"`: CR := TR; `"release"`: release the RL) and
//!   ends the episode. An episode that ends without one leaves normal QCN increase running. In
//!   both cases the next episode opens `wp` after the end of this one; a CNM cancels the episode
//!   and restarts the `wp` wait.
//! * "No FR1 target-rate adjustment": the only TR change QCN makes in the first fast-recovery
//!   cycle is the TR/8 clamp of §5.3 step 4.2, so SONAR never applies it (`efr` has no effect).
//!
//! Answer encoding (a `msg::PROBE_REPLY`): `seq` = [`ANSWER_NOT_CONGESTED`] or
//! [`ANSWER_CONGESTED`]; `stamp` echoes the ping's send time, `stamp2` is the answer time; `fb`
//! (bytes), `qoff`, `qdelta` the CP's current values.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::qcn::{split_params, QcnCp, QcnParams, QcnRp, Wake};
use super::{msg, CmPayload, CongestionPoint, RateLimiter, ReactionPoint, RpOutput};
use crate::engine::SimRng;
use crate::frame::Frame;
use crate::time::SimTime;

/// `seq` of an answer: the CP is "not congested".
pub const ANSWER_NOT_CONGESTED: u32 = 1;
/// `seq` of an answer: the CP is congested; `fb` holds its current Fb.
pub const ANSWER_CONGESTED: u32 = 0;

/// What a "not congested" answer does (D17).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Recovery {
    /// CR := TR (default).
    CrToTr,
    /// Release the rate limiter.
    Release,
}

/// The keys `qcn-sonar` adds to `qcn`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SonarExtra {
    /// Wait without a CNM before probing (WP).
    pub wp_ps: u64,
    /// Length of a probing episode (WE).
    pub we_ps: u64,
    /// Ping spacing inside an episode (SF).
    pub sf_ps: u64,
    /// "Not congested": q below this (bytes) ...
    pub nc_threshold: f64,
    /// ... continuously for this long.
    pub nc_interval_ps: u64,
    pub recovery: Recovery,
}

impl SonarExtra {
    pub const KEYS: [&'static str; 6] = [
        "wp_ps",
        "we_ps",
        "sf_ps",
        "nc_threshold",
        "nc_interval_ps",
        "recovery",
    ];
}

/// `qcn-sonar` parameters: the QCN keys plus [`SonarExtra`].
#[derive(Clone, Debug, PartialEq)]
pub struct SonarParams {
    pub qcn: Arc<QcnParams>,
    pub ext: SonarExtra,
}

impl SonarParams {
    pub fn parse(value: serde_json::Value) -> serde_json::Result<Self> {
        let (qcn, ext): (QcnParams, SonarExtra) = split_params(value, &SonarExtra::KEYS)?;
        if ext.sf_ps == 0 || ext.we_ps == 0 {
            return Err(<serde_json::Error as serde::de::Error>::custom(
                "sf_ps and we_ps must be > 0",
            ));
        }
        Ok(SonarParams {
            qcn: Arc::new(qcn),
            ext,
        })
    }

    /// CNMs create limiters; answers for an unlimited flow are ignored.
    pub fn creates_limiter(&self, m: &CmPayload) -> bool {
        self.qcn.creates_limiter(m)
    }
}

/// The SONAR CP: a QCN CP with a "not congested" detector.
#[derive(Clone, Debug)]
pub struct SonarCp {
    pub qcn: QcnCp,
    pub nc_threshold: f64,
    pub nc_interval: SimTime,
    /// Since when q has been below the threshold (None: it is not).
    pub below_since: Option<SimTime>,
}

impl SonarCp {
    pub fn new(p: &SonarParams, rng: &mut SimRng) -> Self {
        SonarCp {
            qcn: QcnCp::new(&p.qcn, rng),
            nc_threshold: p.ext.nc_threshold,
            nc_interval: SimTime(p.ext.nc_interval_ps),
            below_since: Some(SimTime::ZERO), // the queue is empty at the start
        }
    }

    /// The queue level is `level` from `now` on.
    pub fn observe(&mut self, now: SimTime, level: u64) {
        if (level as f64) < self.nc_threshold {
            self.below_since.get_or_insert(now);
        } else {
            self.below_since = None;
        }
    }

    /// q < nc_threshold continuously for nc_interval.
    pub fn not_congested(&self, now: SimTime) -> bool {
        self.below_since
            .is_some_and(|t| now.saturating_sub(t) >= self.nc_interval)
    }
}

impl CongestionPoint for SonarCp {
    fn on_enqueue(
        &mut self,
        now: SimTime,
        q: u64,
        frame: &mut Frame,
        rng: &mut SimRng,
    ) -> Option<CmPayload> {
        self.observe(now, q);
        self.qcn.on_enqueue(now, q, frame, rng)
    }
    fn on_dequeue(
        &mut self,
        now: SimTime,
        q: u64,
        frame: &mut Frame,
        rng: &mut SimRng,
    ) -> Option<CmPayload> {
        self.observe(now, q.saturating_sub(frame.size as u64));
        self.qcn.on_dequeue(now, q, frame, rng)
    }
    fn on_probe(&mut self, now: SimTime, q: u64, probe: &CmPayload) -> Option<CmPayload> {
        self.observe(now, q);
        let (qoff, qdelta, fb) = self.qcn.peek_fb(q);
        let code = if self.not_congested(now) {
            ANSWER_NOT_CONGESTED
        } else {
            ANSWER_CONGESTED
        };
        Some(CmPayload {
            msg: msg::PROBE_REPLY,
            seq: code,
            stamp: probe.stamp,
            stamp2: now.0,
            fb,
            qoff,
            qdelta,
            ..CmPayload::default()
        })
    }
}

/// The SONAR RP.
#[derive(Clone, Debug)]
pub struct SonarRp {
    pub core: QcnRp,
    pub wake: Wake,
    pub p: Arc<SonarParams>,
    /// When the next probing episode opens (outside an episode).
    pub wp_at: SimTime,
    /// The current episode [start, end); end = NEVER: none.
    pub ep_start: SimTime,
    pub ep_end: SimTime,
    /// The next ping of the current episode.
    pub next_ping: SimTime,
}

impl SonarRp {
    pub fn new(p: Arc<SonarParams>, line_rate_bps: f64) -> Self {
        let mut core = QcnRp::new(p.qcn.clone(), line_rate_bps);
        core.fr1_adjust = false; // "no FR1 target-rate adjustment"
        SonarRp {
            core,
            wake: Wake::default(),
            p,
            wp_at: SimTime::NEVER,
            ep_start: SimTime::NEVER,
            ep_end: SimTime::NEVER,
            next_ping: SimTime::NEVER,
        }
    }

    fn next_deadline(&self) -> SimTime {
        let own = if self.in_episode() {
            self.next_ping.min(self.ep_end)
        } else {
            self.wp_at
        };
        self.core.next_deadline().min(own)
    }

    pub fn in_episode(&self) -> bool {
        self.ep_end != SimTime::NEVER
    }

    fn end_episode(&mut self, at: SimTime) {
        self.ep_start = SimTime::NEVER;
        self.ep_end = SimTime::NEVER;
        self.next_ping = SimTime::NEVER;
        self.wp_at = at + SimTime(self.p.ext.wp_ps);
    }

    fn out(&mut self, rl: &mut RateLimiter, probe: Option<CmPayload>) -> RpOutput {
        let next = self.next_deadline();
        let mut out = self.core.output(rl, &mut self.wake, next);
        if !out.release {
            out.probe = probe;
        }
        out
    }
}

impl ReactionPoint for SonarRp {
    fn on_message(
        &mut self,
        now: SimTime,
        m: &CmPayload,
        rl: &mut RateLimiter,
        rng: &mut SimRng,
    ) -> RpOutput {
        match m.msg {
            msg::FEEDBACK if m.fb > 0.0 => {
                self.core.decrease(now, m.fb.round() as u32, rng);
                self.core.cpid = m.cpid;
                self.end_episode(now); // a CNM restarts the WP wait
            }
            // only a "not congested" answer from that CP to a ping of the current episode,
            // arriving before the episode ends (within WE)
            msg::PROBE_REPLY
                if self.core.active
                    && m.cpid == self.core.cpid
                    && m.seq == ANSWER_NOT_CONGESTED
                    && self.in_episode()
                    && m.stamp >= self.ep_start.0
                    && now < self.ep_end =>
            {
                self.end_episode(now);
                match self.p.ext.recovery {
                    Recovery::CrToTr => {
                        self.core.cr = self.core.cr.max(self.core.tr).min(self.core.line)
                    }
                    Recovery::Release => {
                        rl.rate_bps = self.core.line;
                        return RpOutput {
                            release: true,
                            ..RpOutput::default()
                        };
                    }
                }
            }
            _ => {}
        }
        self.out(rl, None)
    }
    fn on_send(
        &mut self,
        _now: SimTime,
        bytes: u64,
        rl: &mut RateLimiter,
        rng: &mut SimRng,
    ) -> RpOutput {
        self.core.count_bytes(bytes, rng);
        self.out(rl, None)
    }
    fn on_timer(&mut self, now: SimTime, rl: &mut RateLimiter, rng: &mut SimRng) -> RpOutput {
        self.core.run_due(now, rng);
        if self.in_episode() && self.ep_end <= now {
            self.end_episode(self.ep_end); // no "not congested" within WE: QCN goes on
        }
        if !self.in_episode() && self.core.active && self.wp_at <= now {
            self.ep_start = now;
            self.ep_end = now + SimTime(self.p.ext.we_ps);
            self.next_ping = now;
        }
        let mut probe = None;
        if self.in_episode() && self.next_ping <= now {
            probe = Some(CmPayload {
                cpid: self.core.cpid,
                stamp: now.0,
                ..CmPayload::default()
            });
            let next = now + SimTime(self.p.ext.sf_ps);
            self.next_ping = if next < self.ep_end {
                next
            } else {
                SimTime::NEVER
            };
        }
        self.out(rl, probe)
    }
}

/// QCN-SONAR in the registry (cm/mod.rs).
impl super::SchemeSpec for SonarParams {
    const NAME: &'static str = "qcn-sonar";
    type Cp = SonarCp;
    type Rp = SonarRp;
    type Np = ();
    fn cp_on_dequeue(&self) -> super::OnDequeue {
        super::OnDequeue::Every // the not-congested test follows departures (§5.6)
    }
    fn parse(params: &serde_json::Map<String, serde_json::Value>) -> crate::error::Result<Self> {
        Self::parse(serde_json::Value::Object(params.clone()))
            .map_err(|e| super::params_error(Self::NAME, e))
    }
    fn new_cp(self: &Arc<Self>, _cpid: u32, _line_rate_bps: f64, rng: &mut SimRng) -> SonarCp {
        SonarCp::new(self, rng)
    }
    fn new_rp(self: &Arc<Self>, line_rate_bps: f64) -> SonarRp {
        SonarRp::new(self.clone(), line_rate_bps)
    }
    fn new_np(self: &Arc<Self>, _node: u32) {}
    fn creates_limiter(&self, m: &CmPayload) -> bool {
        SonarParams::creates_limiter(self, m)
    }
    fn frame_bytes(&self) -> u32 {
        self.qcn.frame_bytes()
    }
    fn oob_delay(&self) -> Option<SimTime> {
        self.qcn.oob_delay()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cm::qcn::tests::{json, rng, rp_params};
    use crate::engine::rng::{stream, StreamKind};

    const LINE: f64 = 10e9;
    const CP: u32 = 42;

    fn with_ext(mut v: serde_json::Value, recovery: &str) -> SonarParams {
        let ext = serde_json::json!({"wp_ps": 10_000_000_000u64, "we_ps": 2_000_000_000u64, "sf_ps": 500_000_000u64,
            "nc_threshold": 15000, "nc_interval_ps": 10_000_000_000u64, "recovery": recovery});
        for (k, x) in ext.as_object().unwrap() {
            v[k] = x.clone();
        }
        SonarParams::parse(v).unwrap()
    }

    fn rp_sonar(recovery: &str, over: serde_json::Value) -> (SonarRp, RateLimiter, SimRng) {
        let p = with_ext(serde_json::to_value(rp_params(over)).unwrap(), recovery);
        (
            SonarRp::new(Arc::new(p), LINE),
            RateLimiter::new(LINE),
            rng(),
        )
    }

    fn cnm(qntz: u32) -> CmPayload {
        CmPayload {
            msg: msg::FEEDBACK,
            fb: qntz as f64,
            cpid: CP,
            ..CmPayload::default()
        }
    }

    fn answer(code: u32, stamp: SimTime) -> CmPayload {
        CmPayload {
            msg: msg::PROBE_REPLY,
            cpid: CP,
            seq: code,
            stamp: stamp.0,
            ..CmPayload::default()
        }
    }

    #[test]
    fn parameters_split() {
        let p = with_ext(json(), "release");
        assert_eq!(p.ext.recovery, Recovery::Release);
        assert_eq!(p.ext.sf_ps, 500_000_000);
        let v = serde_json::to_value(p.ext).unwrap();
        assert_eq!(v.as_object().unwrap().len(), SonarExtra::KEYS.len());
        for k in SonarExtra::KEYS {
            assert!(v.get(k).is_some(), "{k}");
        }
        // the SF and WE timers must run: either at 0 is refused on its own
        for key in ["sf_ps", "we_ps"] {
            let mut v = serde_json::to_value(p.ext).unwrap();
            for (k, x) in json().as_object().unwrap() {
                v[k] = x.clone();
            }
            v[key] = serde_json::json!(0);
            assert!(SonarParams::parse(v).is_err(), "{key}");
        }
    }

    #[test]
    fn the_cp_samples_as_qcn_and_watches_every_admission() {
        let mut v = json();
        v["sampling"] = serde_json::json!("interval");
        v["sample_bytes"] = serde_json::json!(1500); // every frame is a sampling instant
        let p = with_ext(v, "cr_to_tr");
        let mut r = stream(1, StreamKind::CongestionPoint, 0);
        let mut cp = SonarCp::new(&p, &mut r);
        let mut f = Frame::data(1, 2, 1500, SimTime::ZERO);
        // q_old = 0, q = 60 000: QntzFb 63
        let m = cp
            .on_enqueue(SimTime::ms(11), 60_000, &mut f, &mut r)
            .unwrap();
        assert_eq!((m.msg, m.fb), (msg::FEEDBACK, 63.0));
        // that admission (q >= 15 000 B) restarted the "not congested" clock: a ping at the same
        // instant that finds the queue below the threshold is still answered "congested"
        let ping = CmPayload {
            msg: msg::PROBE,
            cpid: CP,
            ..CmPayload::default()
        };
        let a = cp.on_probe(SimTime::ms(11), 13_500, &ping).unwrap();
        assert_eq!((a.msg, a.seq), (msg::PROBE_REPLY, ANSWER_CONGESTED));
    }

    #[test]
    fn cp_not_congested_after_nc_interval_below_threshold() {
        let mut v = json();
        v["sampling"] = serde_json::json!("interval");
        v["sample_bytes"] = serde_json::json!(1e9); // no sampling instant in this test
        let p = with_ext(v, "cr_to_tr");
        let mut r = stream(1, StreamKind::CongestionPoint, 0);
        let mut cp = SonarCp::new(&p, &mut r);
        let ping = CmPayload {
            msg: msg::PROBE,
            cpid: CP,
            stamp: 123,
            ..CmPayload::default()
        };
        // empty since t = 0: at 10 ms exactly it is "not congested"
        assert_eq!(
            cp.on_probe(SimTime::us(9_999), 0, &ping).unwrap().seq,
            ANSWER_CONGESTED
        );
        let a = cp.on_probe(SimTime::ms(10), 0, &ping).unwrap();
        assert_eq!(
            (a.seq, a.stamp, a.stamp2),
            (ANSWER_NOT_CONGESTED, 123, SimTime::ms(10).0)
        );
        // an admission with q >= 15 000 B resets the clock
        let mut f = Frame::data(1, 2, 1500, SimTime::ZERO);
        cp.on_enqueue(SimTime::ms(11), 15_000, &mut f, &mut r);
        assert_eq!(
            cp.on_probe(SimTime::ms(11), 15_000, &ping).unwrap().seq,
            ANSWER_CONGESTED
        );
        // the departure start of that frame leaves 13 500 B: below from 12 ms
        cp.on_dequeue(SimTime::ms(12), 15_000, &mut f, &mut r);
        assert_eq!(cp.below_since, Some(SimTime::ms(12)));
        assert_eq!(
            cp.on_probe(SimTime::us(21_999), 13_500, &ping).unwrap().seq,
            ANSWER_CONGESTED
        );
        let a = cp.on_probe(SimTime::ms(22), 13_500, &ping).unwrap();
        assert_eq!(a.seq, ANSWER_NOT_CONGESTED);
        // the answer carries the current Fb without touching q_old (0): Fb = -((13500-26176) + 2·13500)
        assert_eq!(
            (a.qoff, a.qdelta, a.fb),
            (
                13_500.0 - 26_176.0,
                13_500.0,
                -(13_500.0 - 26_176.0 + 27_000.0)
            )
        );
        assert_eq!(cp.qcn.q_old, 0.0);
        // a ping seeing q >= threshold is answered "congested"
        assert_eq!(
            cp.on_probe(SimTime::ms(30), 20_000, &ping).unwrap().seq,
            ANSWER_CONGESTED
        );
    }

    #[test]
    fn pings_after_wp_every_sf_during_we() {
        let (mut rp, mut rl, mut r) = rp_sonar("cr_to_tr", serde_json::json!({}));
        let out = rp.on_message(SimTime::ZERO, &cnm(32), &mut rl, &mut r);
        assert_eq!(
            out.timer,
            Some(SimTime::ms(10)),
            "WP = 10 ms before the 15 ms QCN timer"
        );
        let mut pings = vec![];
        let mut t = SimTime::ms(10);
        loop {
            let out = rp.on_timer(t, &mut rl, &mut r);
            if let Some(p) = out.probe {
                assert_eq!(p.cpid, CP);
                assert_eq!(p.stamp, t.0);
                pings.push(t);
            }
            match out.timer {
                Some(n) if n < SimTime::ms(15) => t = n,
                Some(n) => {
                    // the episode [10, 12) ended at 12 ms: the QCN timer is next, then WP again
                    assert_eq!(n, SimTime::ms(15));
                    assert_eq!(rp.wp_at, SimTime::ms(22));
                    break;
                }
                None => panic!("a deadline is always pending"),
            }
        }
        assert_eq!(
            pings,
            vec![
                SimTime::ms(10),
                SimTime::us(10_500),
                SimTime::ms(11),
                SimTime::us(11_500)
            ]
        );
        // a wake-up inside an episode between two pings (another deadline) sends none
        let (mut rp2, mut rl2, mut r2) = rp_sonar("cr_to_tr", serde_json::json!({}));
        rp2.on_message(SimTime::ZERO, &cnm(32), &mut rl2, &mut r2);
        assert!(rp2
            .on_timer(SimTime::ms(10), &mut rl2, &mut r2)
            .probe
            .is_some());
        assert!(rp2
            .on_timer(SimTime::us(10_200), &mut rl2, &mut r2)
            .probe
            .is_none());
        assert!(rp2
            .on_timer(SimTime::us(10_500), &mut rl2, &mut r2)
            .probe
            .is_some());
        // a CNM during the wait restarts it
        rp.on_timer(SimTime::ms(15), &mut rl, &mut r);
        let out = rp.on_message(SimTime::ms(16), &cnm(1), &mut rl, &mut r);
        assert_eq!(rp.wp_at, SimTime::ms(26));
        assert_eq!(
            out.timer,
            Some(SimTime::ms(26)),
            "WP (26 ms) before the restarted timer (31 ms)"
        );
    }

    #[test]
    fn not_congested_within_we_sets_cr_to_tr() {
        let (mut rp, mut rl, mut r) = rp_sonar("cr_to_tr", serde_json::json!({}));
        rp.on_message(SimTime::ZERO, &cnm(32), &mut rl, &mut r); // CR 7.5 G, TR 10 G
        for _ in 0..100 {
            rp.on_send(SimTime::ZERO, 1500, &mut rl, &mut r); // FR: CR 8.75 G
        }
        rp.on_message(SimTime::ms(1), &cnm(32), &mut rl, &mut r); // TR := 8.75 G, CR 6.5625 G
        assert_eq!((rl.rate_bps, rp.core.tr), (6.5625e9, 8.75e9));
        let out = rp.on_timer(SimTime::ms(11), &mut rl, &mut r);
        assert!(out.probe.is_some());
        // a congested answer changes nothing
        rp.on_message(
            SimTime::us(11_100),
            &answer(ANSWER_CONGESTED, SimTime::ms(11)),
            &mut rl,
            &mut r,
        );
        assert_eq!(rl.rate_bps, 6.5625e9);
        // a stale answer (to a ping sent before the episode) changes nothing
        rp.on_message(
            SimTime::us(11_100),
            &answer(ANSWER_NOT_CONGESTED, SimTime::ms(5)),
            &mut rl,
            &mut r,
        );
        assert_eq!(rl.rate_bps, 6.5625e9);
        // an answer from another CP changes nothing
        let mut other = answer(ANSWER_NOT_CONGESTED, SimTime::ms(11));
        other.cpid = CP + 1;
        rp.on_message(SimTime::us(11_100), &other, &mut rl, &mut r);
        assert_eq!(rl.rate_bps, 6.5625e9);
        // "not congested" within WE: CR := TR; the episode ends, WP restarts from now
        let out = rp.on_message(
            SimTime::us(11_200),
            &answer(ANSWER_NOT_CONGESTED, SimTime::ms(11)),
            &mut rl,
            &mut r,
        );
        assert_eq!((rl.rate_bps, rp.core.tr), (8.75e9, 8.75e9));
        assert!(!out.release);
        assert!(!rp.in_episode());
        assert_eq!(rp.wp_at, SimTime::us(21_200));
    }

    #[test]
    fn answers_after_we_are_ignored_and_release_mode_releases() {
        let (mut rp, mut rl, mut r) = rp_sonar("release", serde_json::json!({}));
        rp.on_message(SimTime::ZERO, &cnm(32), &mut rl, &mut r);
        rp.on_timer(SimTime::ms(10), &mut rl, &mut r); // episode [10, 12)
                                                       // an answer at 12 ms is outside WE
        rp.on_timer(SimTime::ms(12), &mut rl, &mut r);
        let out = rp.on_message(
            SimTime::ms(12),
            &answer(ANSWER_NOT_CONGESTED, SimTime::ms(10)),
            &mut rl,
            &mut r,
        );
        assert!(!out.release);
        assert_eq!(rl.rate_bps, 7.5e9);
        // an answer arriving at the episode's end, before its timer fires: outside WE too
        let (mut rp2, mut rl2, mut r2) = rp_sonar("release", serde_json::json!({}));
        rp2.on_message(SimTime::ZERO, &cnm(32), &mut rl2, &mut r2);
        rp2.on_timer(SimTime::ms(10), &mut rl2, &mut r2);
        let out = rp2.on_message(
            SimTime::ms(12),
            &answer(ANSWER_NOT_CONGESTED, SimTime::ms(10)),
            &mut rl2,
            &mut r2,
        );
        assert!(!out.release);
        assert_eq!(rl2.rate_bps, 7.5e9);
        // next episode at 22 ms; an answer inside it releases the RL
        rp.on_timer(SimTime::ms(15), &mut rl, &mut r);
        rp.on_timer(SimTime::ms(22), &mut rl, &mut r);
        let out = rp.on_message(
            SimTime::us(22_300),
            &answer(ANSWER_NOT_CONGESTED, SimTime::ms(22)),
            &mut rl,
            &mut r,
        );
        assert!(out.release);
    }

    #[test]
    fn no_fr1_target_rate_adjustment() {
        // Gd = 1/64: the largest QntzFb (63) is capped at min_dec = 0.5
        let (mut rp, mut rl, mut r) =
            rp_sonar("cr_to_tr", serde_json::json!({"efr": true, "gd": 0.015625}));
        for _ in 0..4 {
            rp.on_message(SimTime::ZERO, &cnm(63), &mut rl, &mut r); // CR 625 Mb/s, TR 10 G
        }
        for _ in 0..100 {
            rp.on_send(SimTime::ZERO, 1500, &mut rl, &mut r);
        }
        // QCN with EFR would set TR = 1.25 G here; SONAR keeps TR: CR = (0.625 + 10)/2 G
        assert_eq!((rp.core.tr, rl.rate_bps), (10e9, 5.3125e9));
        // feedback with QntzFb 0 is no CNM: no decrease, no new cycle
        let stage = rp.core.byte_stage;
        rp.on_message(SimTime::ZERO, &cnm(0), &mut rl, &mut r);
        assert_eq!((rp.core.byte_stage, rl.rate_bps), (stage, 5.3125e9));
    }
}
