//! Congestion management: the congestion-point (CP) and reaction-point (RP) interface, the
//! per-flow rate limiter it drives, and the static dispatch over schemes.
//!
//! The shape follows smoltcp's congestion controllers: a trait with no-op default hooks, one file
//! per scheme, and an enum (`AnyCp`, `AnyRp`) that dispatches without virtual calls. To add a
//! scheme: write `cm/<scheme>.rs` with its parameter struct (serde, `deny_unknown_fields`), a CP
//! and an RP type implementing the traits below, add a variant to [`Scheme`], [`AnyCp`] and
//! [`AnyRp`], and a name to [`Scheme::from_config`]. The simulator calls the hooks at the points
//! named in algorithms.md: CP on admission of a data frame with q including it (§1.2, D14); RP on
//! a message, on each frame leaving the VOQ (QCN's byte counter, §5.3 step 2) and on its timers.
//!
//! Scheme `none` (PAUSE or drops alone) creates no CP and no RP, so the hot loop skips every hook.

pub mod bcn;
pub mod e2cm;
pub mod none;
pub mod qcn;
pub mod qcn3pt;
pub mod qcn_plus;
pub mod qcn_sonar;
pub mod sampling;

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::engine::SimRng;
use crate::error::{Error, Result};
use crate::frame::Frame;
use crate::time::SimTime;
pub use crate::wire::{msg, CmPayload};

/// The `[cm]` table of the core config: the scheme name and its parameters, which the scheme's
/// own parameter struct parses (unknown keys rejected there).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CmConfig {
    pub scheme: String,
    #[serde(flatten)]
    pub params: serde_json::Map<String, serde_json::Value>,
}

/// A per-flow rate limiter at the source NIC (algorithms.md §1.4, D7, D15). It paces its flow:
/// the next frame may leave the VOQ at `t_last + 8·L/rate`; a rate of 0 holds the flow.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RateLimiter {
    pub rate_bps: f64,
    /// The source link rate: a new limiter starts here and is released when it climbs back (D7).
    pub line_rate_bps: f64,
}

impl RateLimiter {
    pub fn new(line_rate_bps: f64) -> Self {
        RateLimiter {
            rate_bps: line_rate_bps,
            line_rate_bps,
        }
    }
}

/// What an RP hook asks of the NIC besides changing the limiter.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RpOutput {
    /// Wake the RP (`on_timer`) at this instant; replaces any earlier request. An RP with several
    /// deadlines keeps them itself and asks for the earliest (algorithms.md §9, lazy timers).
    pub timer: Option<SimTime>,
    /// Release the limiter: the flow runs unconstrained again and the RP is dropped (D7).
    pub release: bool,
    /// Send this forward probe (class (b), D6) toward the flow's destination, right behind the
    /// frame just moved to the output buffer and bypassing the limiter (D17).
    pub probe: Option<CmPayload>,
}

/// Congestion point: one per egress port of a CM-enabled switch.
pub trait CongestionPoint {
    /// A data frame was admitted to this output queue; `q` (bytes) includes it. Return a backward
    /// message for the frame's source, if this is a sampling instant that produces one. The
    /// engine fills `flow_src`/`flow_dst` and `cpid`; the CP may mark the frame (`frame.cm.de`).
    fn on_enqueue(
        &mut self,
        _now: SimTime,
        _q: u64,
        _frame: &mut Frame,
        _rng: &mut SimRng,
    ) -> Option<CmPayload> {
        None
    }
    /// A data frame starts leaving this output queue; `q` still includes it.
    fn on_dequeue(&mut self, _now: SimTime, _q: u64, _frame: &mut Frame) {}
    /// A forward probe whose `cpid` names this CP reached it (`q` = current queue). Returning an
    /// answer sends it back to the probe's source (class (a)) and consumes the probe.
    fn on_probe(&mut self, _now: SimTime, _q: u64, _probe: &CmPayload) -> Option<CmPayload> {
        None
    }
}

/// Reaction point: the CM state of one flow at its source NIC, driving the flow's limiter.
pub trait ReactionPoint {
    /// A backward message for this flow arrived. `rl` is the flow's limiter (created at line rate
    /// by the NIC when [`Scheme::creates_limiter`] said so).
    fn on_message(
        &mut self,
        _now: SimTime,
        _msg: &CmPayload,
        _rl: &mut RateLimiter,
        _rng: &mut SimRng,
    ) -> RpOutput {
        RpOutput::default()
    }
    /// A frame of this flow (`bytes` long) left its VOQ for the output buffer.
    fn on_send(
        &mut self,
        _now: SimTime,
        _bytes: u64,
        _rl: &mut RateLimiter,
        _rng: &mut SimRng,
    ) -> RpOutput {
        RpOutput::default()
    }
    /// The wake-up requested through [`RpOutput::timer`] is due.
    fn on_timer(&mut self, _now: SimTime, _rl: &mut RateLimiter, _rng: &mut SimRng) -> RpOutput {
        RpOutput::default()
    }
    /// The CPID this flow's data frames carry in their rate-limited tag (RLT), if any.
    fn tag(&self) -> Option<u32> {
        None
    }
}

/// CPIDs of destinations (E2CM probe feedback names the destination, §4): the node index with
/// this bit set. CPIDs of congestion points are their egress port index.
pub const NODE_CPID: u32 = 1 << 31;

/// The selected scheme with its parameters: a factory for CPs and RPs and the scheme-wide hooks.
///
/// Adding a scheme: a variant here, in [`AnyCp`] and [`AnyRp`], an arm in every `match` below
/// (the compiler lists them), and its name in [`Scheme::from_config`].
#[derive(Clone, Debug)]
pub enum Scheme {
    None(none::NoneParams),
    Bcn(Arc<bcn::BcnParams>),
    E2cm(Arc<e2cm::E2cmParams>),
    Qcn(Arc<qcn::QcnParams>),
    Qcn3pt(Arc<qcn3pt::Qcn3ptParams>),
    QcnSonar(Arc<qcn_sonar::SonarParams>),
    QcnPlus(Arc<qcn_plus::PlusParams>),
}

impl Scheme {
    /// Build the scheme named by `cm.scheme`, parsing its parameters (unknown keys rejected).
    pub fn from_config(cfg: &CmConfig) -> Result<Self> {
        let params = serde_json::Value::Object(cfg.params.clone());
        let key = format!("cm ({})", cfg.scheme);
        let parse_err =
            |e: serde_json::Error| Error::config(key.clone(), e, "the parameters of that scheme");
        let scheme = match cfg.scheme.as_str() {
            "none" => Scheme::None(serde_json::from_value(params).map_err(parse_err)?),
            "bcn" => Scheme::Bcn(Arc::new(serde_json::from_value(params).map_err(parse_err)?)),
            "e2cm" => Scheme::E2cm(Arc::new(e2cm::E2cmParams::from_map(&cfg.params)?)),
            "qcn" => Scheme::Qcn(Arc::new(qcn::QcnParams::parse(params).map_err(parse_err)?)),
            "qcn3pt" => Scheme::Qcn3pt(Arc::new(qcn3pt::Qcn3ptParams::parse(params).map_err(parse_err)?)),
            "qcn-sonar" => Scheme::QcnSonar(Arc::new(qcn_sonar::SonarParams::parse(params).map_err(parse_err)?)),
            "qcn-plus" => Scheme::QcnPlus(Arc::new(qcn_plus::PlusParams::parse(params).map_err(parse_err)?)),
            other => {
                return Err(Error::config(
                    "cm.scheme",
                    other,
                    "a scheme this engine implements: none, bcn, e2cm, qcn, qcn3pt, qcn-sonar, qcn-plus",
                ))
            }
        };
        Ok(scheme)
    }

    pub fn name(&self) -> &'static str {
        match self {
            Scheme::None(_) => "none",
            Scheme::Bcn(_) => "bcn",
            Scheme::E2cm(_) => "e2cm",
            Scheme::Qcn(_) => "qcn",
            Scheme::Qcn3pt(_) => "qcn3pt",
            Scheme::QcnSonar(_) => "qcn-sonar",
            Scheme::QcnPlus(_) => "qcn-plus",
        }
    }

    /// Whether switches have CPs: `false` lets the hot loop skip every hook.
    pub fn has_congestion_points(&self) -> bool {
        match self {
            Scheme::None(_) => false,
            Scheme::E2cm(p) => p.probe.bcn,
            _ => true,
        }
    }

    /// Whether the scheme acts on frames reaching their destination (QCN-3pt reflections, E2CM
    /// probes): otherwise the engine records deliveries without an arrival event.
    pub fn needs_sink_events(&self) -> bool {
        match self {
            Scheme::None(_) | Scheme::Bcn(_) | Scheme::E2cm(_) => false,
            // §5.5: the destination reflects DE = 0 data frames
            Scheme::Qcn3pt(_) => true,
            Scheme::Qcn(_) | Scheme::QcnSonar(_) | Scheme::QcnPlus(_) => false,
        }
    }

    /// Whether every flow gets a limiter (at line rate) and an RP with its first frame (E2CM
    /// probing-only, D17) instead of on its first congestion message.
    pub fn limiter_from_start(&self) -> bool {
        match self {
            Scheme::None(_) | Scheme::Bcn(_) => false,
            Scheme::E2cm(p) => !p.probe.bcn,
            Scheme::Qcn(_) | Scheme::Qcn3pt(_) | Scheme::QcnSonar(_) | Scheme::QcnPlus(_) => false,
        }
    }

    /// Whether `msg` creates a limiter for a flow that has none (the first negative feedback,
    /// §1.4); other messages for such a flow are ignored.
    pub fn creates_limiter(&self, msg: &CmPayload) -> bool {
        match self {
            Scheme::None(_) => false,
            // §1.4: the first negative feedback (or a stop, D4) installs the limiter
            Scheme::Bcn(_) | Scheme::E2cm(_) => {
                msg.msg == msg::STOP || (msg.msg == msg::FEEDBACK && msg.fb < 0.0)
            }
            // §5.3 step 1.1: a CNM (QntzFb > 0); reflections and answers never create one
            Scheme::Qcn(p) => p.creates_limiter(msg),
            Scheme::Qcn3pt(p) => p.creates_limiter(msg),
            Scheme::QcnSonar(p) => p.creates_limiter(msg),
            Scheme::QcnPlus(p) => p.creates_limiter(msg),
        }
    }

    /// Size of CM control frames (bytes).
    pub fn frame_bytes(&self) -> u32 {
        match self {
            Scheme::None(_) => 64,
            Scheme::Bcn(p) => p.cnm_size,
            Scheme::E2cm(p) => p.bcn.cnm_size,
            Scheme::Qcn(p) => p.frame_bytes(),
            Scheme::Qcn3pt(p) => p.qcn.frame_bytes(),
            Scheme::QcnSonar(p) => p.qcn.frame_bytes(),
            Scheme::QcnPlus(p) => p.qcn.frame_bytes(),
        }
    }

    /// Out-of-band feedback delay (`feedback = "oob"`): messages skip the network and reach the
    /// source this long after they are sent. `None`: in-band on the reverse path (default).
    pub fn oob_delay(&self) -> Option<SimTime> {
        let bcn_oob = |p: &bcn::BcnParams| {
            (p.feedback == bcn::Feedback::Oob).then_some(SimTime(p.feedback_delay_ps))
        };
        match self {
            Scheme::None(_) => None,
            Scheme::Bcn(p) => bcn_oob(p),
            Scheme::E2cm(p) => bcn_oob(&p.bcn),
            Scheme::Qcn(p) => p.oob_delay(),
            Scheme::Qcn3pt(p) => p.qcn.oob_delay(),
            Scheme::QcnSonar(p) => p.qcn.oob_delay(),
            Scheme::QcnPlus(p) => p.qcn.oob_delay(),
        }
    }

    /// The CP of the egress port with id `cpid`.
    pub fn new_cp(&self, cpid: u32, rng: &mut SimRng) -> AnyCp {
        match self {
            Scheme::None(_) => AnyCp::None(none::NoCp),
            Scheme::Bcn(p) => AnyCp::Bcn(bcn::BcnCp::new(p.clone(), cpid, rng)),
            Scheme::E2cm(p) => AnyCp::Bcn(bcn::BcnCp::new(Arc::new(p.bcn.clone()), cpid, rng)),
            Scheme::Qcn(p) => AnyCp::Qcn(qcn::QcnCp::new(p, rng)),
            Scheme::Qcn3pt(p) => AnyCp::Qcn3pt(qcn3pt::Qcn3ptCp::new(p, rng)),
            Scheme::QcnSonar(p) => AnyCp::QcnSonar(qcn_sonar::SonarCp::new(p, rng)),
            Scheme::QcnPlus(p) => AnyCp::QcnPlus(qcn_plus::PlusCp::new(p, rng)),
        }
    }

    /// The RP of a flow whose source link runs at `line_rate_bps`.
    pub fn new_rp(&self, line_rate_bps: f64) -> AnyRp {
        match self {
            Scheme::None(_) => AnyRp::None(none::NoRp),
            Scheme::Bcn(p) => AnyRp::Bcn(bcn::BcnRp::new(p.clone(), line_rate_bps)),
            Scheme::E2cm(p) => AnyRp::E2cm(e2cm::E2cmRp::new(p.clone(), line_rate_bps)),
            Scheme::Qcn(p) => AnyRp::Qcn(qcn::QcnReaction::new(p.clone(), line_rate_bps)),
            Scheme::Qcn3pt(p) => AnyRp::Qcn3pt(qcn3pt::Qcn3ptRp::new(p, line_rate_bps)),
            Scheme::QcnSonar(p) => {
                AnyRp::QcnSonar(qcn_sonar::SonarRp::new(p.clone(), line_rate_bps))
            }
            Scheme::QcnPlus(p) => AnyRp::QcnPlus(qcn_plus::PlusRp::new(p.clone(), line_rate_bps)),
        }
    }

    /// A data frame reached its destination (only with [`Scheme::needs_sink_events`]): a backward
    /// message to the frame's source, if the destination answers (QCN-3pt reflection).
    pub fn sink_data(&self, frame: &Frame, rng: &mut SimRng) -> Option<CmPayload> {
        match self {
            Scheme::None(_) | Scheme::Bcn(_) | Scheme::E2cm(_) => None,
            Scheme::Qcn3pt(p) => p.sink_data(frame, rng),
            Scheme::Qcn(_) | Scheme::QcnSonar(_) | Scheme::QcnPlus(_) => None,
        }
    }

    /// A forward probe reached its destination: the reply to send back to its source, if any
    /// (E2CM: the probe returned with the destination's timestamp).
    pub fn sink_probe(&self, now: SimTime, probe: &CmPayload) -> Option<CmPayload> {
        match self {
            Scheme::None(_) | Scheme::Bcn(_) => None,
            Scheme::E2cm(_) => Some(e2cm::return_probe(now, probe)),
            // QCN+: the destination is the last chance to answer a directed probe (§5.7)
            Scheme::QcnPlus(p) => p.sink_probe(now, probe),
            Scheme::Qcn(_) | Scheme::Qcn3pt(_) | Scheme::QcnSonar(_) => None,
        }
    }
}

/// Static dispatch over CPs.
#[derive(Clone, Debug)]
pub enum AnyCp {
    None(none::NoCp),
    Bcn(bcn::BcnCp),
    Qcn(qcn::QcnCp),
    Qcn3pt(qcn3pt::Qcn3ptCp),
    QcnSonar(qcn_sonar::SonarCp),
    QcnPlus(qcn_plus::PlusCp),
}

macro_rules! dispatch_cp {
    ($self:ident, $cp:ident => $body:expr) => {
        match $self {
            AnyCp::None($cp) => $body,
            AnyCp::Bcn($cp) => $body,
            AnyCp::Qcn($cp) => $body,
            AnyCp::Qcn3pt($cp) => $body,
            AnyCp::QcnSonar($cp) => $body,
            AnyCp::QcnPlus($cp) => $body,
        }
    };
}

impl AnyCp {
    #[inline]
    pub fn on_enqueue(
        &mut self,
        now: SimTime,
        q: u64,
        frame: &mut Frame,
        rng: &mut SimRng,
    ) -> Option<CmPayload> {
        dispatch_cp!(self, cp => cp.on_enqueue(now, q, frame, rng))
    }
    #[inline]
    pub fn on_dequeue(&mut self, now: SimTime, q: u64, frame: &mut Frame) {
        dispatch_cp!(self, cp => cp.on_dequeue(now, q, frame))
    }
    pub fn on_probe(&mut self, now: SimTime, q: u64, probe: &CmPayload) -> Option<CmPayload> {
        dispatch_cp!(self, cp => cp.on_probe(now, q, probe))
    }
}

/// Static dispatch over RPs.
#[derive(Clone, Debug)]
pub enum AnyRp {
    None(none::NoRp),
    Bcn(bcn::BcnRp),
    E2cm(e2cm::E2cmRp),
    Qcn(qcn::QcnReaction),
    Qcn3pt(qcn3pt::Qcn3ptRp),
    QcnSonar(qcn_sonar::SonarRp),
    QcnPlus(qcn_plus::PlusRp),
}

macro_rules! dispatch_rp {
    ($self:ident, $rp:ident => $body:expr) => {
        match $self {
            AnyRp::None($rp) => $body,
            AnyRp::Bcn($rp) => $body,
            AnyRp::E2cm($rp) => $body,
            AnyRp::Qcn($rp) => $body,
            AnyRp::Qcn3pt($rp) => $body,
            AnyRp::QcnSonar($rp) => $body,
            AnyRp::QcnPlus($rp) => $body,
        }
    };
}

impl AnyRp {
    pub fn on_message(
        &mut self,
        now: SimTime,
        msg: &CmPayload,
        rl: &mut RateLimiter,
        rng: &mut SimRng,
    ) -> RpOutput {
        dispatch_rp!(self, rp => rp.on_message(now, msg, rl, rng))
    }
    pub fn on_send(
        &mut self,
        now: SimTime,
        bytes: u64,
        rl: &mut RateLimiter,
        rng: &mut SimRng,
    ) -> RpOutput {
        dispatch_rp!(self, rp => rp.on_send(now, bytes, rl, rng))
    }
    pub fn on_timer(&mut self, now: SimTime, rl: &mut RateLimiter, rng: &mut SimRng) -> RpOutput {
        dispatch_rp!(self, rp => rp.on_timer(now, rl, rng))
    }
    pub fn tag(&self) -> Option<u32> {
        dispatch_rp!(self, rp => rp.tag())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(scheme: &str, params: serde_json::Value) -> CmConfig {
        CmConfig {
            scheme: scheme.into(),
            params: params.as_object().cloned().unwrap_or_default(),
        }
    }

    #[test]
    fn none_builds_and_has_no_cps() {
        let s = Scheme::from_config(&cfg("none", serde_json::json!({}))).unwrap();
        assert_eq!(s.name(), "none");
        assert!(!s.has_congestion_points());
    }

    #[test]
    fn unknown_params_and_schemes_are_rejected_with_the_key() {
        let e = Scheme::from_config(&cfg("none", serde_json::json!({"gd": 1.0}))).unwrap_err();
        assert!(e.to_string().contains("cm (none)"), "{e}");
        let e = Scheme::from_config(&cfg("bogus", serde_json::json!({}))).unwrap_err();
        assert!(e.to_string().starts_with("cm.scheme = bogus"), "{e}");
        assert!(!Scheme::from_config(&cfg("none", serde_json::json!({})))
            .unwrap()
            .needs_sink_events());
    }
}
