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

pub mod none;

use serde::{Deserialize, Serialize};

use crate::engine::SimRng;
use crate::error::{Error, Result};
use crate::frame::Frame;
use crate::time::SimTime;

/// The `[cm]` table of the core config: the scheme name and its parameters, which the scheme's
/// own parameter struct parses (unknown keys rejected there).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CmConfig {
    pub scheme: String,
    #[serde(flatten)]
    pub params: serde_json::Map<String, serde_json::Value>,
}

/// Content of a CM control frame, and the CM tags a data frame carries. Fields a scheme does
/// not use stay zero.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CmPayload {
    /// Identity of the CP that generated a message (or that a data frame's RL is associated with).
    pub cpid: u32,
    /// Feedback value in the scheme's unit (bytes, or quanta when quantised).
    pub fb: f64,
    /// Flow the message is about: (source, destination) node indices.
    pub flow_src: u32,
    pub flow_dst: u32,
    /// Scheme-specific message type.
    pub msg: u8,
    /// Data frames: rate-limited tag (RLT) present.
    pub tagged: bool,
    /// Timestamp carried by probes.
    pub stamp: u64,
}

/// A per-flow rate limiter at the source NIC (algorithms.md §1.4, D7, D15). It paces its flow:
/// the next frame may leave the VOQ at `t_last + 8·L/rate`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RateLimiter {
    pub rate_bps: f64,
    /// The source link rate: a new limiter starts here and is released when it climbs back (D7).
    pub line_rate_bps: f64,
}

impl RateLimiter {
    pub fn new(line_rate_bps: f64) -> Self {
        RateLimiter { rate_bps: line_rate_bps, line_rate_bps }
    }
}

/// What an RP hook asks of the NIC besides changing the limiter.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RpOutput {
    /// (Re)arm the flow's timer at this instant (replaces any armed timer).
    pub timer: Option<SimTime>,
    /// Release the limiter: the flow runs unconstrained again (D7).
    pub release: bool,
    /// Send this message toward the flow's destination (forward probe, D6 class (b)).
    pub probe: Option<CmPayload>,
}

/// Congestion point: one per egress port of a CM-enabled switch.
pub trait CongestionPoint {
    /// A data frame was admitted to this output queue; `q` (bytes) includes it. Return a backward
    /// message for the frame's source, if this is a sampling instant that produces one.
    fn on_enqueue(&mut self, _now: SimTime, _q: u64, _frame: &mut Frame, _rng: &mut SimRng) -> Option<CmPayload> {
        None
    }
    /// A data frame starts leaving this output queue; `q` still includes it.
    fn on_dequeue(&mut self, _now: SimTime, _q: u64, _frame: &mut Frame) {}
}

/// Reaction point: one per flow with CM state at the source NIC.
pub trait ReactionPoint {
    /// A backward message for this flow arrived. `rl` is the flow's limiter, created at line rate
    /// by the NIC if the flow had none (the RP may ask for its release).
    fn on_message(&mut self, _now: SimTime, _msg: &CmPayload, _rl: &mut RateLimiter, _rng: &mut SimRng) -> RpOutput {
        RpOutput::default()
    }
    /// A frame of this flow left its VOQ (`bytes` long).
    fn on_send(&mut self, _now: SimTime, _bytes: u64, _rl: &mut RateLimiter, _rng: &mut SimRng) -> RpOutput {
        RpOutput::default()
    }
    /// The flow's timer fired.
    fn on_timer(&mut self, _now: SimTime, _rl: &mut RateLimiter, _rng: &mut SimRng) -> RpOutput {
        RpOutput::default()
    }
}

/// The selected scheme with its parameters: a factory for CPs and RPs.
#[derive(Clone, Debug)]
pub enum Scheme {
    None(none::NoneParams),
}

impl Scheme {
    /// Build the scheme named by `cm.scheme`, parsing its parameters.
    pub fn from_config(cfg: &CmConfig) -> Result<Self> {
        let params = serde_json::Value::Object(cfg.params.clone());
        let parse_err = |e: serde_json::Error| Error::config(format!("cm ({})", cfg.scheme), e, "the parameters of that scheme");
        match cfg.scheme.as_str() {
            "none" => Ok(Scheme::None(serde_json::from_value(params).map_err(parse_err)?)),
            other => Err(Error::config(
                "cm.scheme",
                other,
                "a scheme this engine implements: \"none\" (bcn, e2cm, qcn, qcn3pt, qcn-sonar and qcn-plus are not implemented yet)",
            )),
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            Scheme::None(_) => "none",
        }
    }

    /// Whether switches have CPs: `false` lets the hot loop skip every hook.
    pub fn has_congestion_points(&self) -> bool {
        match self {
            Scheme::None(_) => false,
        }
    }

    /// Whether the scheme acts on frames reaching their destination (QCN-3pt reflections, E2CM
    /// probes): otherwise the engine records deliveries without an arrival event.
    pub fn needs_sink_events(&self) -> bool {
        match self {
            Scheme::None(_) => false,
        }
    }

    pub fn new_cp(&self, _cpid: u32) -> AnyCp {
        match self {
            Scheme::None(_) => AnyCp::None(none::NoCp),
        }
    }

    pub fn new_rp(&self) -> AnyRp {
        match self {
            Scheme::None(_) => AnyRp::None(none::NoRp),
        }
    }
}

/// Static dispatch over CPs.
#[derive(Clone, Debug)]
pub enum AnyCp {
    None(none::NoCp),
}

impl AnyCp {
    #[inline]
    pub fn on_enqueue(&mut self, now: SimTime, q: u64, frame: &mut Frame, rng: &mut SimRng) -> Option<CmPayload> {
        match self {
            AnyCp::None(cp) => cp.on_enqueue(now, q, frame, rng),
        }
    }
    #[inline]
    pub fn on_dequeue(&mut self, now: SimTime, q: u64, frame: &mut Frame) {
        match self {
            AnyCp::None(cp) => cp.on_dequeue(now, q, frame),
        }
    }
}

/// Static dispatch over RPs.
#[derive(Clone, Debug)]
pub enum AnyRp {
    None(none::NoRp),
}

impl AnyRp {
    pub fn on_message(&mut self, now: SimTime, msg: &CmPayload, rl: &mut RateLimiter, rng: &mut SimRng) -> RpOutput {
        match self {
            AnyRp::None(rp) => rp.on_message(now, msg, rl, rng),
        }
    }
    pub fn on_send(&mut self, now: SimTime, bytes: u64, rl: &mut RateLimiter, rng: &mut SimRng) -> RpOutput {
        match self {
            AnyRp::None(rp) => rp.on_send(now, bytes, rl, rng),
        }
    }
    pub fn on_timer(&mut self, now: SimTime, rl: &mut RateLimiter, rng: &mut SimRng) -> RpOutput {
        match self {
            AnyRp::None(rp) => rp.on_timer(now, rl, rng),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(scheme: &str, params: serde_json::Value) -> CmConfig {
        CmConfig { scheme: scheme.into(), params: params.as_object().cloned().unwrap_or_default() }
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
    }
}
