//! FECN — forward explicit congestion notification (Jiang, Jain et al.; algorithms.md §6).
//!
//! Every switch egress port computes an advertised rate r_i every measurement interval T; each
//! source sends a probe along its data path every T with the rate field at −1, every CP the
//! probe leaves through writes its r_i into the field if that is smaller (or the field is −1),
//! the destination returns the probe, and the source sets its flow's rate to the returned value:
//! the bottleneck's advertised rate. E-FECN adds a backward message from a CP whose queue is
//! above Qsc so that sources slow down at once.
//!
//! The switch pseudo-code of §6 with cnsim's readings of what it marks UNCERTAIN (docs/models/fecn.md):
//!
//! * **EstimateCapacity**: C_i = the rate the port serves data at when the interval ends (its
//!   link rate, or the hotspot's reduced rate, D16). The PAUSE-reduced capacity and the
//!   "variable capacity adjustment" are not modelled.
//! * **QueueControl**: the ERICA+-style hyperbola, f = a·Qeq/((a − 1)·q + Qeq) for q ≤ Qeq and
//!   max(c, b·Qeq/((b − 1)·q + Qeq)) above (1 at Qeq, a at q = 0, floored at c); q = the queue
//!   at the start of the interval.
//! * **RateAllocation**: ρ = bits_received/(T·C_i·f); r = C_i (empty queue) or r_{i−1} when
//!   ρ = 0, else min(C_i, r_{i−1}/ρ); then the exponential average r = w·r + (1 − w)·r_{i−1}
//!   (w = `ewma`, 0.5); then the limited increase: while q > Qeq the rate does not rise,
//!   otherwise it at most multiplies by 1 + `max_increase` per interval; finally r ≥ Rmin.
//! * **Probes**: stamped when they start leaving the egress (the pseudo-code's "on transmit");
//!   bits_received counts the data admitted to the output queue during the interval.
//! * **Source**: starts at C0/N0 (`start = "n0"`) or at line rate (`"line"`); probes every T
//!   while it sends (a probe goes with the first frame after T has passed, or at the end of T
//!   if a frame left since the previous probe; bypassing the limiter, class (b), D6, D17), so an
//!   idle flow costs nothing; a returned rate of −1 (no FECN switch on the path) means line
//!   rate. Every flow is limited from its first frame and never released (its rate is the last
//!   one its probes brought back).
//! * **E-FECN** (`efecn`): on admission of a data frame with q > Qsc, a backward message (class
//!   (a)) carrying r_i to the frame's source, at most one per source per interval; the source
//!   takes min(its rate, r_i) at once.

use std::sync::Arc;

use rustc_hash::FxHashSet;
use serde::{Deserialize, Serialize};

use super::qcn::Feedback;
use super::{
    msg, CmPayload, CongestionPoint, RateLimiter, ReactionPoint, RpOutput, SchemeSpec, NODE_CPID,
};
use crate::engine::SimRng;
use crate::frame::{Frame, FrameKind};
use crate::time::SimTime;

/// The probe's rate field before any switch wrote into it.
pub const NO_RATE: f64 = -1.0;

/// Where a new source starts (§6 source step 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Start {
    /// C0/N0.
    N0,
    /// The link rate.
    Line,
}

/// FECN parameters as the front end lowers them (every key present, units in the names).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FecnParams {
    /// Initial rate divider N0.
    pub n0: f64,
    /// Measurement interval T of the switches and probe interval of the sources.
    pub interval_ps: u64,
    /// Queue equilibrium Qeq, bytes.
    pub qeq: f64,
    /// Queue-control constants a, b, c.
    pub a: f64,
    pub b: f64,
    pub c: f64,
    /// Weight of the new rate in the exponential average.
    pub ewma: f64,
    /// The largest relative increase per interval while q ≤ Qeq.
    pub max_increase: f64,
    pub rmin_bps: f64,
    pub start: Start,
    /// E-FECN: backward messages above Qsc (bytes).
    pub efecn: bool,
    pub qsc: f64,
    pub cnm_size: u32,
    pub feedback: Feedback,
    pub feedback_delay_ps: u64,
}

impl FecnParams {
    fn check(&self) -> std::result::Result<(), String> {
        let positive = [
            ("n0", self.n0),
            ("qeq", self.qeq),
            ("a", self.a),
            ("b", self.b),
            ("c", self.c),
            ("rmin", self.rmin_bps),
        ];
        for (k, v) in positive {
            super::positive(k, v)?;
        }
        if self.a <= 1.0 || self.b <= 1.0 {
            return Err(format!(
                "a = {}, b = {}: both must be > 1 (f(0) = a, f falls through 1 at Qeq)",
                self.a, self.b
            ));
        }
        if !(0.0 < self.ewma && self.ewma <= 1.0) {
            return Err(format!("ewma = {}: must be in (0, 1]", self.ewma));
        }
        if self.max_increase.is_nan() || self.max_increase < 0.0 {
            return Err(format!(
                "max_increase = {}: must be >= 0",
                self.max_increase
            ));
        }
        if self.interval_ps == 0 {
            return Err("interval = 0: must be a positive time".into());
        }
        Ok(())
    }

    /// QueueControl (§6 step 2.1): the load factor f at queue `q` bytes.
    pub fn queue_factor(&self, q: f64) -> f64 {
        if q <= self.qeq {
            self.a * self.qeq / ((self.a - 1.0) * q + self.qeq)
        } else {
            (self.b * self.qeq / ((self.b - 1.0) * q + self.qeq)).max(self.c)
        }
    }

    fn interval_s(&self) -> f64 {
        self.interval_ps as f64 * 1e-12
    }
}

// ------------------------------------------------------------------------------------------ CP

/// The rate allocator of one switch egress port (§6, switch).
#[derive(Clone, Debug)]
pub struct FecnCp {
    p: Arc<FecnParams>,
    /// Nominal capacity C0 (the port's link rate), b/s.
    c0: f64,
    /// The advertised rate, b/s: r_{i−1} while interval i runs.
    pub rate: f64,
    pub initialised: bool,
    /// Data bits admitted to the queue since the interval started.
    pub bits_received: f64,
    /// The queue at the start of the interval, bytes.
    pub qlen: u64,
    /// E-FECN: sources told during this interval.
    told: FxHashSet<u32>,
}

impl FecnCp {
    pub fn new(p: &Arc<FecnParams>, line_rate_bps: f64) -> Self {
        let r0 = line_rate_bps / p.n0;
        FecnCp {
            p: p.clone(),
            c0: line_rate_bps,
            rate: r0,
            initialised: false,
            bits_received: 0.0,
            qlen: 0,
            told: FxHashSet::default(),
        }
    }

    /// RateAllocation (§6 step 2) with capacity `c` (b/s): r_i from r_{i−1} = `self.rate`.
    fn allocate(&self, c: f64) -> f64 {
        let p = &self.p;
        let prev = self.rate; // r_{i−1}
        let q = self.qlen as f64;
        let rho = self.bits_received / (p.interval_s() * c * p.queue_factor(q));
        let r = if rho == 0.0 {
            if self.qlen == 0 {
                c
            } else {
                prev
            }
        } else {
            c.min(prev / rho)
        };
        let r = p.ewma * r + (1.0 - p.ewma) * prev;
        let cap = if q > p.qeq {
            prev
        } else {
            prev * (1.0 + p.max_increase)
        };
        r.min(cap).max(p.rmin_bps)
    }
}

impl CongestionPoint for FecnCp {
    fn on_enqueue(
        &mut self,
        _now: SimTime,
        q: u64,
        frame: &mut Frame,
        _rng: &mut SimRng,
    ) -> Option<CmPayload> {
        self.bits_received += 8.0 * frame.size as f64;
        if self.p.efecn && q as f64 > self.p.qsc && self.told.insert(frame.src) {
            return Some(CmPayload {
                msg: msg::FEEDBACK,
                fb: self.rate,
                ..CmPayload::default()
            });
        }
        None
    }

    /// §6 "on transmitting a tagged frame": a probe leaving through this port carries the
    /// smaller of its rate field and r_i.
    fn on_dequeue(
        &mut self,
        _now: SimTime,
        _q: u64,
        frame: &mut Frame,
        _rng: &mut SimRng,
    ) -> Option<CmPayload> {
        if frame.kind == FrameKind::Probe && (frame.cm.fb == NO_RATE || frame.cm.fb > self.rate) {
            frame.cm.fb = self.rate;
        }
        None
    }

    /// §6 step 1: the T timer.
    fn on_tick(&mut self, _now: SimTime, q: u64, service_bps: f64) {
        let received = self.bits_received > 0.0;
        if !self.initialised && received {
            self.initialised = true;
        }
        if self.initialised {
            self.rate = if received {
                self.allocate(service_bps)
            } else {
                self.c0 / self.p.n0
            };
        }
        self.bits_received = 0.0;
        self.qlen = q;
        self.told.clear();
    }
}

// ------------------------------------------------------------------------------------------ RP

/// The source side of one flow (§6, source).
#[derive(Clone, Debug)]
pub struct FecnRp {
    p: Arc<FecnParams>,
    line: f64,
    /// The rate the flow sends at, b/s.
    pub rate: f64,
    /// The next probe (`ZERO`: with the flow's first frame).
    pub next_probe: SimTime,
    pub probes: u32,
    /// A frame left since the previous probe.
    pub sent: bool,
}

impl FecnRp {
    pub fn new(p: Arc<FecnParams>, line_rate_bps: f64) -> Self {
        let rate = match p.start {
            Start::N0 => line_rate_bps / p.n0,
            Start::Line => line_rate_bps,
        };
        FecnRp {
            p,
            line: line_rate_bps,
            rate,
            next_probe: SimTime::ZERO,
            probes: 0,
            sent: false,
        }
    }

    /// The limiter at the flow's rate, a probe if one is due, and the next probe's wake-up.
    fn output(&mut self, now: SimTime, rl: &mut RateLimiter) -> RpOutput {
        rl.rate_bps = self.rate;
        let mut out = RpOutput::default();
        if now >= self.next_probe && std::mem::take(&mut self.sent) {
            self.probes += 1;
            self.next_probe = now + SimTime(self.p.interval_ps);
            out.probe = Some(CmPayload {
                fb: NO_RATE,
                cpid: NODE_CPID,
                seq: self.probes,
                ..CmPayload::default()
            });
            out.timer = Some(self.next_probe);
        }
        out
    }
}

impl ReactionPoint for FecnRp {
    fn on_message(
        &mut self,
        _now: SimTime,
        m: &CmPayload,
        rl: &mut RateLimiter,
        _rng: &mut SimRng,
    ) -> RpOutput {
        match m.msg {
            // §6 source step 3: the bottleneck's advertised rate (−1: no FECN switch on the path)
            msg::PROBE_REPLY => {
                self.rate = if m.fb == NO_RATE {
                    self.line
                } else {
                    m.fb.min(self.line)
                }
            }
            // E-FECN: slow down at once
            msg::FEEDBACK => self.rate = self.rate.min(m.fb),
            _ => {}
        }
        rl.rate_bps = self.rate;
        RpOutput::default()
    }

    fn on_send(
        &mut self,
        now: SimTime,
        _bytes: u64,
        rl: &mut RateLimiter,
        _rng: &mut SimRng,
    ) -> RpOutput {
        self.sent = true;
        self.output(now, rl)
    }

    fn on_timer(&mut self, now: SimTime, rl: &mut RateLimiter, _rng: &mut SimRng) -> RpOutput {
        self.output(now, rl)
    }
}

/// FECN in the registry (cm/mod.rs).
impl SchemeSpec for FecnParams {
    const NAME: &'static str = "fecn";
    type Cp = FecnCp;
    type Rp = FecnRp;
    type Np = ();
    fn cp_on_dequeue(&self) -> super::OnDequeue {
        super::OnDequeue::Probes // probes are stamped as they leave (§6)
    }
    fn parse(params: &serde_json::Map<String, serde_json::Value>) -> crate::error::Result<Self> {
        let p: FecnParams = super::parse_params(Self::NAME, params)?;
        p.check().map_err(|e| super::params_error(Self::NAME, e))?;
        Ok(p)
    }
    fn new_cp(self: &Arc<Self>, _cpid: u32, line_rate_bps: f64, _rng: &mut SimRng) -> FecnCp {
        FecnCp::new(self, line_rate_bps)
    }
    fn new_rp(self: &Arc<Self>, line_rate_bps: f64) -> FecnRp {
        FecnRp::new(self.clone(), line_rate_bps)
    }
    fn new_np(self: &Arc<Self>, _node: u32) {}
    /// Every flow has its limiter from its first frame.
    fn creates_limiter(&self, _m: &CmPayload) -> bool {
        false
    }
    fn frame_bytes(&self) -> u32 {
        self.cnm_size
    }
    fn oob_delay(&self) -> Option<SimTime> {
        (self.feedback == Feedback::Oob).then_some(SimTime(self.feedback_delay_ps))
    }
    fn cp_period(&self) -> Option<SimTime> {
        Some(SimTime(self.interval_ps))
    }
    fn limiter_from_start(&self) -> bool {
        true
    }
    /// A sending flow probes once every T (the RP's `next_probe`).
    fn probe_period(&self) -> Option<SimTime> {
        Some(SimTime(self.interval_ps))
    }
    /// §6 source step 3: the destination returns the probe with its rate field.
    fn sink_probe(&self, now: SimTime, probe: &CmPayload) -> Option<CmPayload> {
        Some(CmPayload {
            msg: msg::PROBE_REPLY,
            cpid: NODE_CPID | probe.flow_dst,
            fb: probe.fb,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng::{stream, StreamKind};

    const LINE: f64 = 10e9;

    fn json() -> serde_json::Value {
        serde_json::json!({"n0": 200.0, "interval_ps": 1_000_000_000u64, "qeq": 24000.0, "a": 1.1, "b": 1.002, "c": 0.1,
            "ewma": 0.5, "max_increase": 1.0, "rmin_bps": 5e7, "start": "n0", "efecn": false, "qsc": 96000.0,
            "cnm_size": 64, "feedback": "inband", "feedback_delay_ps": 0})
    }

    fn params(over: serde_json::Value) -> Arc<FecnParams> {
        let mut v = json();
        for (k, x) in over.as_object().unwrap() {
            v[k] = x.clone();
        }
        Arc::new(FecnParams::parse(v.as_object().unwrap()).unwrap())
    }

    fn rng() -> SimRng {
        stream(3, StreamKind::CongestionPoint, 0)
    }

    fn close(a: f64, b: f64) {
        assert!((a - b).abs() <= 1e-9 * b.abs().max(1.0), "{a} != {b}");
    }

    /// Admit `bytes` of data to the CP (1500 B frames).
    fn admit(cp: &mut FecnCp, bytes: u64) {
        let mut r = rng();
        for _ in 0..bytes / 1500 {
            let mut f = Frame::data(1, 2, 1500, SimTime::ZERO);
            cp.on_enqueue(SimTime::ZERO, 0, &mut f, &mut r);
        }
    }

    #[test]
    fn parameters_are_checked_by_name() {
        let p = params(serde_json::json!({}));
        assert_eq!(p.cp_period(), Some(SimTime::ms(1)));
        // every flow limited from its first frame and probing every T: the run budget's terms
        assert!(p.limiter_from_start());
        assert_eq!(p.probe_period(), Some(SimTime::ms(1)));
        assert!(
            !p.probes_carry_base_delay(),
            "FECN's probes carry rates, not delays"
        );
        // its CPs stamp probes as they leave, and see no data frame then
        assert_eq!(p.cp_on_dequeue(), crate::cm::OnDequeue::Probes);
        // feedback out of band after its delay, through the registry's trait
        assert_eq!(<FecnParams as SchemeSpec>::oob_delay(&p), None);
        let oob = params(serde_json::json!({"feedback": "oob", "feedback_delay_ps": 7_000_000u64}));
        assert_eq!(
            <FecnParams as SchemeSpec>::oob_delay(&oob),
            Some(SimTime::us(7))
        );
        for (k, v, want) in [
            ("a", 1.0, "a = 1"),
            ("ewma", 0.0, "ewma = 0"),
            ("qeq", 0.0, "qeq = 0"),
            ("max_increase", -1.0, "max_increase"),
        ] {
            let mut j = json();
            j[k] = serde_json::json!(v);
            let e = FecnParams::parse(j.as_object().unwrap())
                .unwrap_err()
                .to_string();
            assert!(e.contains(want), "{e}");
        }
        // the boundaries that are allowed: a rate that never rises, an EWMA that keeps no memory
        let edge = params(serde_json::json!({"max_increase": 0.0, "ewma": 1.0}));
        assert_eq!((edge.max_increase, edge.ewma), (0.0, 1.0));
    }

    #[test]
    fn queue_control_is_the_hyperbola_through_a_1_and_c() {
        let p = params(serde_json::json!({}));
        close(p.queue_factor(0.0), 1.1);
        close(p.queue_factor(24_000.0), 1.0);
        close(
            p.queue_factor(12_000.0),
            1.1 * 24_000.0 / (0.1 * 12_000.0 + 24_000.0),
        );
        close(
            p.queue_factor(48_000.0),
            1.002 * 24_000.0 / (0.002 * 48_000.0 + 24_000.0),
        );
        assert_eq!(p.queue_factor(1e9), 0.1, "floored at c");
    }

    /// The advertised rate over a sequence of intervals: waiting for traffic at C0/N0, then the
    /// allocation, the average and the limited increase, exactly.
    #[test]
    fn rate_allocation_trajectory() {
        let p = params(serde_json::json!({}));
        let mut cp = FecnCp::new(&p, LINE);
        let r0 = LINE / 200.0;
        // no traffic: not initialised, r stays C0/N0
        cp.on_tick(SimTime::ms(1), 0, LINE);
        assert_eq!((cp.initialised, cp.rate), (false, r0));
        // 1 ms with 150 KB received, empty queue: rho = 1.2e6 bits/(1e-3 * 1e10 * 1.1)
        admit(&mut cp, 150_000);
        cp.on_tick(SimTime::ms(2), 30_000, LINE);
        let rho = 1.2e6 / (1e-3 * LINE * 1.1);
        let raw = LINE.min(r0 / rho);
        let avg = 0.5 * raw + 0.5 * r0;
        close(cp.rate, avg.min(2.0 * r0)); // at most doubles while q <= Qeq
        assert_eq!(cp.rate, 2.0 * r0, "the increase limit binds");
        assert_eq!((cp.qlen, cp.bits_received), (30_000, 0.0));
        // the next interval starts with q = 30 KB > Qeq: 12.5 Gb/s of arrivals on a 10 Gb/s port
        let before = cp.rate;
        admit(&mut cp, 1_500_000);
        cp.on_tick(SimTime::ms(3), 0, LINE);
        let f = p.queue_factor(30_000.0);
        let rho = 1.2e7 / (1e-3 * LINE * f);
        let want = (0.5 * LINE.min(before / rho) + 0.5 * before).min(before);
        close(cp.rate, want);
        assert!(cp.rate < before);
        // a hotspot: the capacity is the port's service rate (2 Gb/s) and caps the rate
        cp.rate = 9e9;
        cp.qlen = 0;
        admit(&mut cp, 1500);
        cp.on_tick(SimTime::ms(4), 0, 2e9);
        close(cp.rate, 0.5 * 2e9 + 0.5 * 9e9);
        // an initialised port with no traffic falls back to C0/N0; Rmin floors the allocation
        cp.on_tick(SimTime::ms(5), 0, LINE);
        assert_eq!(cp.rate, r0);
        let mut tiny = FecnCp::new(
            &params(serde_json::json!({"rmin_bps": 4e7, "ewma": 1.0})),
            LINE,
        );
        tiny.initialised = true;
        tiny.qlen = 100_000;
        admit(&mut tiny, 15_000_000);
        tiny.on_tick(SimTime::ms(1), 0, LINE);
        assert_eq!(tiny.rate, 4e7);
    }

    #[test]
    fn probes_carry_the_smallest_advertised_rate() {
        let p = params(serde_json::json!({}));
        let mut cp = FecnCp::new(&p, LINE);
        let mut r = rng();
        let mut probe = Frame {
            kind: FrameKind::Probe,
            ..Frame::data(1, 2, 64, SimTime::ZERO)
        };
        probe.cm.fb = NO_RATE;
        cp.on_dequeue(SimTime::ZERO, 0, &mut probe, &mut r);
        assert_eq!(probe.cm.fb, LINE / 200.0);
        probe.cm.fb = 1e7; // a smaller rate from an earlier hop stays
        cp.on_dequeue(SimTime::ZERO, 0, &mut probe, &mut r);
        assert_eq!(probe.cm.fb, 1e7);
        probe.cm.fb = 4e9; // a larger one gives way to this hop's
        cp.on_dequeue(SimTime::ZERO, 0, &mut probe, &mut r);
        assert_eq!(probe.cm.fb, LINE / 200.0);
        let mut data = Frame::data(1, 2, 1500, SimTime::ZERO);
        data.cm.fb = NO_RATE;
        cp.on_dequeue(SimTime::ZERO, 0, &mut data, &mut r);
        assert_eq!(data.cm.fb, NO_RATE, "data frames are not stamped");
    }

    #[test]
    fn the_source_probes_every_interval_and_adopts_the_returned_rate() {
        let p = params(serde_json::json!({}));
        let mut rp = FecnRp::new(p.clone(), LINE);
        let mut rl = RateLimiter::new(LINE);
        let mut r = rng();
        // the first frame: the rate drops to C0/N0 and a probe goes with it
        let out = rp.on_send(SimTime::us(5), 1500, &mut rl, &mut r);
        assert_eq!(rl.rate_bps, 5e7);
        let probe = out.probe.unwrap();
        let expected = CmPayload {
            fb: NO_RATE,
            cpid: NODE_CPID,
            seq: 1,
            ..CmPayload::default()
        };
        assert_eq!(probe, expected);
        // the destination returns it whole, stamped, for the flow's destination's CP id
        let sent = CmPayload {
            msg: msg::PROBE,
            fb: 2.5e9,
            stamp: 7,
            flow_src: 3,
            flow_dst: 9,
            ..probe
        };
        let reply = <FecnParams as SchemeSpec>::sink_probe(&p, SimTime(40), &sent).unwrap();
        let expected = CmPayload {
            msg: msg::PROBE_REPLY,
            cpid: NODE_CPID | 9,
            stamp2: 40,
            ..sent
        };
        assert_eq!(reply, expected);
        assert_eq!(out.timer, Some(SimTime::us(1005)));
        // more frames within the interval: no probe
        assert!(rp
            .on_send(SimTime::us(500), 1500, &mut rl, &mut r)
            .probe
            .is_none());
        // the timer: the next probe (a frame left during the interval)
        let out = rp.on_timer(SimTime::us(1005), &mut rl, &mut r);
        assert_eq!(
            (out.probe.unwrap().seq, out.timer),
            (2, Some(SimTime::us(2005)))
        );
        // an idle interval: no probe and no further wake-up; the next frame takes one along
        assert_eq!(
            rp.on_timer(SimTime::us(2005), &mut rl, &mut r),
            RpOutput::default()
        );
        let out = rp.on_send(SimTime::us(3500), 1500, &mut rl, &mut r);
        assert_eq!(
            (out.probe.unwrap().seq, out.timer),
            (3, Some(SimTime::us(4500)))
        );
        // the returned probe sets the rate, capped at line rate; -1 means line rate
        let back = |fb: f64| CmPayload {
            msg: msg::PROBE_REPLY,
            fb,
            ..CmPayload::default()
        };
        rp.on_message(SimTime::ms(2), &back(3.3e9), &mut rl, &mut r);
        assert_eq!(rl.rate_bps, 3.3e9);
        rp.on_message(SimTime::ms(2), &back(2e10), &mut rl, &mut r);
        assert_eq!(rl.rate_bps, LINE);
        rp.on_message(SimTime::ms(2), &back(NO_RATE), &mut rl, &mut r);
        assert_eq!(rl.rate_bps, LINE);
        // E-FECN: only downwards
        let slow = CmPayload {
            msg: msg::FEEDBACK,
            fb: 1e9,
            ..CmPayload::default()
        };
        rp.on_message(SimTime::ms(2), &slow, &mut rl, &mut r);
        assert_eq!(rl.rate_bps, 1e9);
        let up = CmPayload {
            msg: msg::FEEDBACK,
            fb: 5e9,
            ..CmPayload::default()
        };
        rp.on_message(SimTime::ms(2), &up, &mut rl, &mut r);
        assert_eq!(rl.rate_bps, 1e9);
        // start at line rate
        let mut rp = FecnRp::new(params(serde_json::json!({"start": "line"})), LINE);
        rp.on_send(SimTime::ZERO, 1500, &mut rl, &mut r);
        assert_eq!(rl.rate_bps, LINE);
    }

    #[test]
    fn efecn_tells_each_source_once_per_interval_above_qsc() {
        let p = params(serde_json::json!({"efecn": true}));
        let mut cp = FecnCp::new(&p, LINE);
        let mut r = rng();
        let mut send = |cp: &mut FecnCp, src: u32, q: u64| {
            let mut f = Frame::data(src, 9, 1500, SimTime::ZERO);
            cp.on_enqueue(SimTime::ZERO, q, &mut f, &mut r)
        };
        assert!(send(&mut cp, 1, 96_000).is_none(), "at Qsc: nothing");
        let m = send(&mut cp, 1, 96_001).unwrap();
        assert_eq!((m.msg, m.fb), (msg::FEEDBACK, LINE / 200.0));
        assert!(
            send(&mut cp, 1, 200_000).is_none(),
            "once per source per interval"
        );
        assert!(send(&mut cp, 2, 200_000).is_some());
        cp.on_tick(SimTime::ms(1), 200_000, LINE);
        assert!(send(&mut cp, 1, 200_000).is_some(), "a new interval");
        let mut off = FecnCp::new(&params(serde_json::json!({})), LINE);
        assert!(
            send(&mut off, 1, 1_000_000).is_none(),
            "plain FECN sends nothing back"
        );
    }
}
