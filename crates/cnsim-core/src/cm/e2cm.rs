//! E2CM — ECM plus end-to-end per-flow probing (algorithms.md §4, D6, D10, D17).
//!
//! Everything of BCN applies (the CPs are BCN CPs; the RP is a BCN RP). In addition, while a flow
//! has a rate limiter its source inserts a probe after every `probe_bytes` of data; the probe
//! travels with the data (class (b): it queues, counts and may be dropped), the destination
//! stamps and returns it (class (a)), and the source turns the forward queueing delay into a
//! per-flow path occupancy and applies the same AIMD to the same limiter:
//!
//! D = (t_dst − t_src) − D0, q_f = D·R/8 bytes (cnsim's per-flow reading, D10),
//! Fb_f = −((q_f − Qeq,f) + w·(q_f − q_f,old)) clamped to ±(2w+1)·Qeq,f, −Fbmax,f at q_f ≥ Qmax,f;
//! Fb_f < 0: R ← max(Rmin, R·(1 + Gd,f·Fb_f)) and the limiter is associated with the destination;
//! Fb_f > 0 from the associated destination: R ← min(R_line, R + Gi,f·Fb_f·Ru).
//!
//! cnsim's readings (D17): D0 = the known forward delay of the path (propagation, 64 B
//! serialisation and processing; option `"min_seen"`); t_src is the probe's transmission start at
//! the source NIC; the probe enters the output buffer right behind the data frame that completed
//! `probe_bytes`, bypassing the limiter. Probing-only (`bcn = false`): the CPs send nothing, every
//! flow gets a limiter at line rate with its first frame and is probed for the whole run (it is
//! never released, or probing would stop).

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::bcn::{fbmax, quantize_fb, BcnParams, BcnRp};
use super::{msg, CmPayload, RateLimiter, ReactionPoint, RpOutput, NODE_CPID};
use crate::engine::SimRng;
use crate::error::Result;
use crate::time::SimTime;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum D0Rule {
    Known,
    MinSeen,
}

/// The keys E2CM adds to the BCN ones.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProbeParams {
    /// `false`: probing only (no BCN feedback from the CPs).
    pub bcn: bool,
    pub probe_bytes: f64,
    pub qeq_flow: f64,
    pub qmax_flow: f64,
    pub gd_flow: f64,
    pub gi_flow: f64,
    pub d0: D0Rule,
}

#[derive(Clone, Debug)]
pub struct E2cmParams {
    /// Shared by every RP and CP: a flow's RP is made with its first frame in probing-only
    /// mode, so a copy per RP would cost two allocations per flow (docs/performance.md).
    pub bcn: Arc<BcnParams>,
    pub probe: ProbeParams,
}

impl E2cmParams {
    /// Split the `[cm]` table into the BCN keys and the probing keys; each part rejects keys it
    /// does not know.
    pub fn from_map(map: &serde_json::Map<String, serde_json::Value>) -> Result<Self> {
        const PROBE_KEYS: [&str; 7] = [
            "bcn",
            "probe_bytes",
            "qeq_flow",
            "qmax_flow",
            "gd_flow",
            "gi_flow",
            "d0",
        ];
        let (probe, bcn): (serde_json::Map<_, _>, serde_json::Map<_, _>) = map
            .clone()
            .into_iter()
            .partition(|(k, _)| PROBE_KEYS.contains(&k.as_str()));
        let err = |e: serde_json::Error| super::params_error(<Self as super::SchemeSpec>::NAME, e);
        Ok(E2cmParams {
            bcn: Arc::new(serde_json::from_value(serde_json::Value::Object(bcn)).map_err(err)?),
            probe: serde_json::from_value(serde_json::Value::Object(probe)).map_err(err)?,
        })
    }
}

/// The E2CM reaction point: a BCN RP that also probes its path.
#[derive(Clone, Debug)]
pub struct E2cmRp {
    p: Arc<E2cmParams>,
    bcn: BcnRp,
    gi_flow: f64,
    bytes_since_probe: f64,
    q_f_old: f64,
    min_seen: u64,
    seq: u32,
}

impl E2cmRp {
    pub fn new(p: Arc<E2cmParams>, line_rate_bps: f64) -> Self {
        let bcn = BcnRp::new(p.bcn.clone(), line_rate_bps);
        let gi_flow = p.probe.gi_flow * line_rate_bps / p.bcn.gi_rate_bps;
        E2cmRp {
            p,
            bcn,
            gi_flow,
            bytes_since_probe: 0.0,
            q_f_old: 0.0,
            min_seen: u64::MAX,
            seq: 0,
        }
    }

    /// The path-occupancy feedback of a returned probe (§4 step 3).
    pub fn probe_feedback(&mut self, reply: &CmPayload, rate_bps: f64) -> f64 {
        let forward = reply.stamp2.saturating_sub(reply.stamp);
        self.min_seen = self.min_seen.min(forward);
        let d0 = match self.p.probe.d0 {
            D0Rule::Known => reply.base_delay,
            D0Rule::MinSeen => self.min_seen,
        };
        let d_s = forward.saturating_sub(d0) as f64 / 1e12;
        let q_f = d_s * rate_bps / 8.0;
        let pp = &self.p.probe;
        let w = self.p.bcn.w;
        let m = fbmax(w, pp.qeq_flow);
        let fb = (-((q_f - pp.qeq_flow) + w * (q_f - self.q_f_old))).clamp(-m, m);
        self.q_f_old = q_f;
        let fb = if q_f >= pp.qmax_flow { -m } else { fb };
        // the gains are per quantum when the CPs quantise (fb_bits > 0, D18): the probe's
        // feedback is quantised the same way, so that gd_flow = gd means the same decrease
        match self.p.bcn.fb_bits {
            0 => fb,
            bits => quantize_fb(fb, m, bits),
        }
    }

    fn output(&self, rl: &RateLimiter) -> RpOutput {
        let mut out = self.bcn.output_for(rl);
        if !self.p.probe.bcn {
            out.release = false; // probing-only flows stay limited (and probed) for good
        }
        out
    }
}

impl ReactionPoint for E2cmRp {
    fn on_message(
        &mut self,
        now: SimTime,
        m: &CmPayload,
        rl: &mut RateLimiter,
        rng: &mut SimRng,
    ) -> RpOutput {
        if m.msg != msg::PROBE_REPLY {
            self.bcn.on_message(now, m, rl, rng);
            return self.output(rl);
        }
        // a flow held by BCN(0,0) is probed at the rate it will resume from (D4), not at 0
        let rate = self.bcn.effective_rate(rl);
        let fb = self.probe_feedback(m, rate);
        let (gd, gi) = (self.p.probe.gd_flow, self.gi_flow);
        self.bcn.aimd(fb, NODE_CPID | m.flow_dst, gd, gi, rl);
        self.output(rl)
    }

    fn on_send(
        &mut self,
        _now: SimTime,
        bytes: u64,
        _rl: &mut RateLimiter,
        _rng: &mut SimRng,
    ) -> RpOutput {
        self.bytes_since_probe += bytes as f64;
        if self.bytes_since_probe < self.p.probe.probe_bytes {
            return RpOutput::default();
        }
        self.bytes_since_probe = 0.0;
        self.seq += 1;
        // addressed to no CP: it runs to the destination, which returns it
        let probe = CmPayload {
            msg: msg::PROBE,
            cpid: u32::MAX,
            seq: self.seq,
            ..Default::default()
        };
        RpOutput {
            probe: Some(probe),
            ..Default::default()
        }
    }

    fn on_timer(&mut self, now: SimTime, rl: &mut RateLimiter, rng: &mut SimRng) -> RpOutput {
        self.bcn.on_timer(now, rl, rng);
        self.output(rl)
    }

    fn tag(&self) -> Option<u32> {
        self.bcn.tag()
    }
}

/// The destination's part: return the probe with its arrival time (§4 step 2).
pub fn return_probe(now: SimTime, probe: &CmPayload) -> CmPayload {
    CmPayload {
        msg: msg::PROBE_REPLY,
        cpid: NODE_CPID | probe.flow_dst,
        stamp2: now.0,
        ..*probe
    }
}

/// E2CM in the registry (cm/mod.rs): BCN CPs unless probing only (D17), BCN-family limiters,
/// probes returned by the destination.
impl super::SchemeSpec for E2cmParams {
    const NAME: &'static str = "e2cm";
    type Cp = super::bcn::BcnCp;
    type Rp = E2cmRp;
    type Np = ();
    fn cp_on_dequeue(&self) -> super::OnDequeue {
        super::OnDequeue::every_if(self.bcn.sample_at == super::sampling::SamplePoint::Departure)
    }
    fn parse(params: &serde_json::Map<String, serde_json::Value>) -> Result<Self> {
        Self::from_map(params)
    }
    fn new_cp(
        self: &Arc<Self>,
        cpid: u32,
        _line_rate_bps: f64,
        rng: &mut SimRng,
    ) -> super::bcn::BcnCp {
        super::bcn::BcnCp::new(self.bcn.clone(), cpid, rng)
    }
    fn new_rp(self: &Arc<Self>, line_rate_bps: f64) -> E2cmRp {
        E2cmRp::new(self.clone(), line_rate_bps)
    }
    fn new_np(self: &Arc<Self>, _node: u32) {}
    fn creates_limiter(&self, m: &CmPayload) -> bool {
        super::bcn::creates_limiter(m)
    }
    fn frame_bytes(&self) -> u32 {
        self.bcn.cnm_size
    }
    fn signed_feedback(&self) -> bool {
        true
    }
    fn oob_delay(&self) -> Option<SimTime> {
        self.bcn.oob_delay()
    }
    fn has_congestion_points(&self) -> bool {
        self.probe.bcn
    }
    fn limiter_from_start(&self) -> bool {
        !self.probe.bcn
    }
    fn probes_carry_base_delay(&self) -> bool {
        self.probe.d0 == D0Rule::Known
    }
    fn sink_probe(&self, now: SimTime, probe: &CmPayload) -> Option<CmPayload> {
        Some(return_probe(now, probe))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng::{stream, StreamKind};

    fn params(bcn: bool) -> E2cmParams {
        E2cmParams::from_map(&map(bcn)).unwrap()
    }

    fn map(bcn: bool) -> serde_json::Map<String, serde_json::Value> {
        let mut map = serde_json::to_value(crate::cm::bcn::tests::zhb())
            .unwrap()
            .as_object()
            .unwrap()
            .clone();
        for (k, v) in [
            ("bcn", serde_json::json!(bcn)),
            ("probe_bytes", serde_json::json!(75000.0)),
            ("qeq_flow", serde_json::json!(37500.0)),
            ("qmax_flow", serde_json::json!(150000.0)),
            ("gd_flow", serde_json::json!(2.6667e-6)),
            ("gi_flow", serde_json::json!(5.3333e-3)),
            ("d0", serde_json::json!("known")),
        ] {
            map.insert(k.into(), v);
        }
        map
    }

    #[test]
    fn unknown_keys_are_rejected_in_either_part() {
        let mut map = serde_json::Map::new();
        map.insert("bogus".into(), serde_json::json!(1));
        assert!(E2cmParams::from_map(&map)
            .unwrap_err()
            .to_string()
            .contains("cm (e2cm)"));
    }

    #[test]
    fn a_probe_every_probe_bytes() {
        let mut rp = E2cmRp::new(Arc::new(params(true)), 1e10);
        let mut rl = RateLimiter::new(1e10);
        let mut r = stream(1, StreamKind::ReactionPoint, 0);
        let probes: Vec<u32> = (1..=150)
            .filter_map(|i| {
                rp.on_send(SimTime::ZERO, 1500, &mut rl, &mut r)
                    .probe
                    .map(|p| {
                        // addressed to no CP: it runs to the destination
                        assert_eq!((p.msg, p.cpid), (msg::PROBE, u32::MAX));
                        (i, p.seq)
                    })
            })
            .map(|(i, s)| {
                assert_eq!(i as u32, 50 * s);
                s
            })
            .collect();
        assert_eq!(probes, vec![1, 2, 3]);
    }

    #[test]
    fn returned_probes_drive_the_limiter() {
        let mut rp = E2cmRp::new(Arc::new(params(true)), 1e10);
        let mut rl = RateLimiter::new(1e10);
        rl.rate_bps = 2e9;
        let mut r = stream(1, StreamKind::ReactionPoint, 0);
        // 200 us of queueing at 2 Gb/s: q_f = 50 KB; Fb = −((50000 − 37500) + 2·50000) = −112500
        let reply = CmPayload {
            msg: msg::PROBE_REPLY,
            flow_dst: 5,
            stamp: 1_000_000,
            stamp2: 1_000_000 + 10_000_000 + 200_000_000,
            base_delay: 10_000_000,
            ..Default::default()
        };
        rp.on_message(SimTime::ZERO, &reply, &mut rl, &mut r);
        assert_eq!(rl.rate_bps, 2e9 * (1.0 + 2.6667e-6 * -112_500.0));
        assert_eq!(rp.tag(), Some(NODE_CPID | 5));
        // queue gone: q_f = 0, Fb = −((0 − 37500) + 2·(0 − 50000)) = +137500 from the associated dst
        let before = rl.rate_bps;
        let empty = CmPayload {
            stamp2: reply.stamp + reply.base_delay,
            ..reply
        };
        rp.on_message(SimTime::ZERO, &empty, &mut rl, &mut r);
        assert_eq!(rl.rate_bps, before + 5.3333e-3 * 137_500.0 * 1e7);
        // at q_f >= Qmax,f: the largest decrease
        let full = CmPayload {
            stamp2: reply.stamp + reply.base_delay + 1_000_000_000,
            ..reply
        };
        let r0 = rl.rate_bps;
        rp.on_message(SimTime::ZERO, &full, &mut rl, &mut r);
        assert_eq!(rl.rate_bps, (r0 * (1.0 + 2.6667e-6 * -187_500.0)).max(1e7));
    }

    /// Issue 12 audit: with quantised feedback (fb_bits > 0) the gains are per quantum, so the
    /// probe's feedback is quantised too — before, gd_flow multiplied bytes (2,976× too much
    /// here: (2w+1)·Qeq/(2^6 − 1) = 187,500/63).
    #[test]
    fn probe_feedback_is_quantised_like_the_cps() {
        let mut p = params(true);
        Arc::make_mut(&mut p.bcn).fb_bits = 6;
        p.probe.gd_flow = 0.0079;
        p.probe.gi_flow = 0.01;
        let mut rp = E2cmRp::new(Arc::new(p), 1e10);
        let mut rl = RateLimiter::new(1e10);
        rl.rate_bps = 2e9;
        let mut r = stream(1, StreamKind::ReactionPoint, 0);
        // Fb = −112,500 B as in the test above: QntzFb = −floor(112,500·63/187,500) = −37
        let reply = CmPayload {
            msg: msg::PROBE_REPLY,
            flow_dst: 5,
            stamp: 1_000_000,
            stamp2: 211_000_000,
            base_delay: 10_000_000,
            ..Default::default()
        };
        rp.on_message(SimTime::ZERO, &reply, &mut rl, &mut r);
        assert_eq!(
            rl.rate_bps,
            2e9 * (1.0 + 0.0079 * -37.0),
            "unquantised it would fall to Rmin"
        );
    }

    /// Issue 12 audit: a probe that returns while BCN(0,0) holds the flow measures the rate the
    /// flow will resume from, not 0 (which read as an empty path and raised the rate), and the
    /// flow stays held.
    #[test]
    fn a_probe_during_a_stop_acts_on_the_resume_rate() {
        let mut rp = E2cmRp::new(Arc::new(params(true)), 1e10);
        let mut rl = RateLimiter::new(1e10);
        rl.rate_bps = 2e9;
        let mut r = stream(1, StreamKind::ReactionPoint, 0);
        let stop = CmPayload {
            msg: msg::STOP,
            cpid: 3,
            ..Default::default()
        };
        rp.on_message(SimTime::ZERO, &stop, &mut rl, &mut r);
        assert_eq!(rl.rate_bps, 0.0);
        // 200 us of queueing at the resume rate 2 Gb/s: q_f = 50 KB, Fb = −112,500
        let reply = CmPayload {
            msg: msg::PROBE_REPLY,
            flow_dst: 5,
            stamp: 1_000_000,
            stamp2: 211_000_000,
            base_delay: 10_000_000,
            ..Default::default()
        };
        rp.on_message(SimTime(1), &reply, &mut rl, &mut r);
        assert_eq!(rl.rate_bps, 0.0, "still held");
        let resume = 2e9 * (1.0 + 2.6667e-6 * -112_500.0);
        assert_eq!(rp.bcn.effective_rate(&rl), resume);
        // the stop ends at the RP's timer: the flow resumes at half the rate it was held at
        let out = rp.on_timer(SimTime(1), &mut rl, &mut r);
        let end = out.timer.expect("a wake-up at the stop's end");
        let out = rp.on_timer(end, &mut rl, &mut r);
        assert_eq!(rl.rate_bps, resume / 2.0);
        assert_eq!((out.timer, out.release), (None, false));
    }

    #[test]
    fn e2cm_builds_from_config_with_its_hooks() {
        let build = |bcn: bool, over: serde_json::Value| {
            crate::cm::tests::scheme_with("e2cm", map(bcn), over)
        };
        let m = |msg: u8, fb: f64| CmPayload {
            msg,
            fb,
            ..Default::default()
        };
        for bcn in [true, false] {
            let s = build(bcn, serde_json::json!({}));
            assert_eq!(s.name(), "e2cm");
            // probing only (D17): no CPs, every flow limited from its first frame
            assert_eq!(s.has_congestion_points(), bcn);
            assert_eq!(s.limiter_from_start(), !bcn);
            assert_eq!(s.probe_period(), None, "E2CM probes by bytes sent");
            assert!(s.probes_carry_base_delay(), "d0 = \"known\" by default");
            let min_seen = build(bcn, serde_json::json!({"d0": "min_seen"}));
            assert!(!min_seen.probes_carry_base_delay());
            assert_eq!(s.cp_on_dequeue(), crate::cm::OnDequeue::Nothing);
            assert!(s.signed_feedback());
            assert_eq!(s.frame_bytes(), 64);
            assert_eq!(s.oob_delay(), None);
            assert!(s.creates_limiter(&m(msg::FEEDBACK, -1.0)));
            assert!(s.creates_limiter(&m(msg::STOP, 0.0)));
            assert!(!s.creates_limiter(&m(msg::FEEDBACK, 1.0)));
            // the destination returns a probe stamped with its arrival
            let probe = CmPayload {
                msg: msg::PROBE,
                flow_dst: 4,
                stamp: 7,
                ..Default::default()
            };
            let back = s.sink_probe(SimTime(90), &probe).unwrap();
            assert_eq!(
                (back.msg, back.stamp, back.stamp2),
                (msg::PROBE_REPLY, 7, 90)
            );
        }
        let s = build(
            true,
            serde_json::json!({"sample_at": "departure", "cnm_size": 80,
            "feedback": "oob", "feedback_delay_ps": 5000000}),
        );
        assert_eq!(s.cp_on_dequeue(), crate::cm::OnDequeue::Every);
        // probing only has no CPs: nothing to call at departure, however they would sample
        let probing = build(false, serde_json::json!({"sample_at": "departure"}));
        assert_eq!(probing.cp_on_dequeue(), crate::cm::OnDequeue::Nothing);
        assert_eq!(s.frame_bytes(), 80);
        assert_eq!(s.oob_delay(), Some(SimTime::us(5)));
    }

    #[test]
    fn probing_only_flows_are_never_released() {
        let mut rp = E2cmRp::new(Arc::new(params(false)), 1e10);
        let mut rl = RateLimiter::new(1e10);
        let mut r = stream(1, StreamKind::ReactionPoint, 0);
        let reply = CmPayload {
            msg: msg::PROBE_REPLY,
            flow_dst: 5,
            stamp: 0,
            stamp2: 0,
            ..Default::default()
        };
        let out = rp.on_message(SimTime::ZERO, &reply, &mut rl, &mut r);
        assert!(!out.release);
        let mut rp = E2cmRp::new(Arc::new(params(true)), 1e10);
        assert!(
            rp.on_message(SimTime::ZERO, &reply, &mut rl, &mut r)
                .release
        );
    }

    #[test]
    fn the_destination_stamps_and_returns() {
        let p = CmPayload {
            msg: msg::PROBE,
            flow_src: 1,
            flow_dst: 2,
            stamp: 5,
            seq: 9,
            base_delay: 3,
            ..Default::default()
        };
        let r = return_probe(SimTime(40), &p);
        assert_eq!(
            (
                r.msg,
                r.stamp,
                r.stamp2,
                r.seq,
                r.flow_src,
                r.base_delay,
                r.cpid
            ),
            (msg::PROBE_REPLY, 5, 40, 9, 1, 3, NODE_CPID | 2)
        );
    }
}
