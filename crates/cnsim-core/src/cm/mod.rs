//! Congestion management: the congestion-point (CP) and reaction-point (RP) interface, the
//! per-flow rate limiter it drives, and the static dispatch over schemes.
//!
//! The shape follows smoltcp's congestion controllers: a trait with no-op default hooks, one file
//! per scheme, and an enum (`AnyCp`, `AnyRp`) that dispatches without virtual calls. To add a
//! scheme: write `cm/<scheme>.rs` with its parameter struct (serde, `deny_unknown_fields`)
//! implementing [`SchemeSpec`], a CP and an RP type implementing the traits below, and add one
//! line to the [`registry!`] invocation. The simulator calls the hooks at the points
//! named in algorithms.md: CP on admission of a data frame with q including it (§1.2, D14) and
//! when it starts leaving (DCQCN's marking at dequeue, §7.1); RP on a message, on each frame
//! leaving the VOQ (QCN's byte counter, §5.3 step 2) and on its timers; the notification point
//! (NP) of the destination NIC on each data frame that reaches it and on its own wake-ups
//! (QCN-3pt reflections, §5.5; DCQCN's CNP generation, §7.2).
//!
//! Scheme `none` (PAUSE or drops alone) creates no CP and no RP, so the hot loop skips every hook.

pub mod bcn;
pub mod dcqcn;
pub mod e2cm;
pub mod fecn;
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
use crate::frame::{Frame, FrameKind};
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

/// Which frames a scheme's CPs act on as they start leaving their queue
/// ([`SchemeSpec::cp_on_dequeue`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnDequeue {
    /// None: the engine never calls the hook.
    Nothing,
    /// Probes only (FECN stamps its rate into them, §6): a data frame costs no call and leaves
    /// the CP's line alone.
    Probes,
    /// Every counted frame (marking, sampling at departure, SONAR's queue watch).
    Every,
}

impl OnDequeue {
    /// Whether a CP acts on `frame` as it leaves: only a frame charged to the buffer (data and
    /// probes; PAUSE and CM messages pass uncounted), and of the kinds the scheme asked for.
    #[inline]
    pub fn acts_on(self, frame: &Frame) -> bool {
        frame.counted
            && match self {
                OnDequeue::Nothing => false,
                OnDequeue::Probes => frame.kind == FrameKind::Probe,
                OnDequeue::Every => true,
            }
    }

    /// `Every` when `yes`, else `Nothing`.
    pub fn every_if(yes: bool) -> Self {
        if yes {
            OnDequeue::Every
        } else {
            OnDequeue::Nothing
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

impl RpOutput {
    /// Whether the hook asks for nothing at all (no wake-up, no release, no probe): what most
    /// frames sent by a limited flow get back.
    #[inline(always)]
    pub fn asks_nothing(&self) -> bool {
        self.timer.is_none() && !self.release && self.probe.is_none()
    }
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
    /// A counted frame starts leaving this output queue; `q` still includes it. The CP may mark
    /// it (DCQCN's ECN at dequeue), drawing from the port's CP stream `rng`, and, if it samples
    /// at departure (§1.2), return a backward message for the frame's source as `on_enqueue`.
    fn on_dequeue(
        &mut self,
        _now: SimTime,
        _q: u64,
        _frame: &mut Frame,
        _rng: &mut SimRng,
    ) -> Option<CmPayload> {
        None
    }
    /// The queue (bytes, as `on_dequeue` sees it) at or below which `on_dequeue` does nothing —
    /// no mark, no draw, no message — so that the engine need not call it (`u64::MAX`: never
    /// anything). 0, the default, is always right.
    fn dequeue_floor(&self) -> u64 {
        0
    }
    /// The CP's measurement interval ended ([`SchemeSpec::cp_period`]); `q` is the queue now and
    /// `service_bps` the rate the port serves data at now (a hotspot lowers it, D16).
    fn on_tick(&mut self, _now: SimTime, _q: u64, _service_bps: f64) {}
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
    /// The flow's limiter was released (D7): whether this state outlives it, to drive the
    /// flow's next limiter (DCQCN: a QP's rate state lives as long as the QP, §1.4). The
    /// release voids every wake-up the RP asked for.
    fn outlives_release(&mut self) -> bool {
        false
    }
}

/// What a notification point asks of its NIC.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct NpOutput {
    /// A backward message to the frame's source (class (a), D6).
    pub reply: Option<CmPayload>,
    /// Call [`NotificationPoint::on_timer`] about the frame's flow (its source and class) at
    /// this instant (DCQCN's periodic CNP check, §7.2).
    pub wake: Option<SimTime>,
}

/// Notification point: what a scheme keeps and does at a destination NIC (only when the scheme
/// [`SchemeSpec::needs_sink_events`]). Stateless schemes use `()`.
pub trait NotificationPoint {
    /// The last bit of data frame `frame` reached this NIC at `now`; this NP selected it
    /// ([`NotificationPoint::selects`]).
    fn on_data(&mut self, _now: SimTime, _frame: &Frame) -> NpOutput {
        NpOutput::default()
    }
    /// The wake-up asked for about the flow from node `src` in priority `class` is due: a
    /// message to `src`, if any.
    fn on_timer(&mut self, _now: SimTime, _src: u32, _class: u8) -> Option<CmPayload> {
        None
    }
    /// Whether this NP will act on data frame `frame` when it arrives. Asked as the frame's last
    /// bit leaves for this NIC, a link before the arrival (or, in tests, at the arrival): the
    /// answer must hold whatever happens in between. `false`: the NP does nothing with the frame
    /// — no output, no state change — and the engine records its delivery at once, as for a
    /// scheme without NPs, instead of spending an arrival event on it (docs/performance.md,
    /// "DCQCN's unmarked frames delivered without an arrival event"); `true`: `on_data` runs at
    /// the arrival. An NP that samples frames draws here, from its own stream `rng`: one link
    /// feeds a NIC, so its draws come in the order of the arrivals whenever they are made.
    /// `true` (the default) is always right for an NP that draws nothing.
    fn selects(&mut self, _frame: &Frame, _rng: &mut SimRng) -> bool {
        true
    }
}

impl NotificationPoint for () {}

/// CPIDs of destinations (E2CM probe feedback names the destination, §4): the node index with
/// this bit set. CPIDs of congestion points are their egress port index.
pub const NODE_CPID: u32 = 1 << 31;

/// What a congestion-management scheme is to the simulator (DESIGN.md "one file per scheme"):
/// its name in `cm.scheme`, how its parameters parse, its CP and RP types, and the scheme-wide
/// hooks, with defaults for what most schemes do. A scheme's parameter type implements it in the
/// scheme's own file; [`registry!`] below lists the schemes — adding one is a file and a line.
pub trait SchemeSpec: Sized + std::fmt::Debug + Send + Sync + 'static {
    /// The name in `cm.scheme`.
    const NAME: &'static str;
    type Cp: CongestionPoint + Clone + std::fmt::Debug;
    type Rp: ReactionPoint + Clone + std::fmt::Debug;
    /// What each destination NIC keeps (`()` for schemes without a notification point).
    type Np: NotificationPoint + Clone + std::fmt::Debug;
    /// Parse the `[cm]` parameters (unknown keys rejected); errors name the key.
    fn parse(params: &serde_json::Map<String, serde_json::Value>) -> Result<Self>;
    /// The CP of the egress port with id `cpid`, whose link runs at `line_rate_bps`.
    fn new_cp(self: &Arc<Self>, cpid: u32, line_rate_bps: f64, rng: &mut SimRng) -> Self::Cp;
    /// The RP of a flow whose source link runs at `line_rate_bps`.
    fn new_rp(self: &Arc<Self>, line_rate_bps: f64) -> Self::Rp;
    /// The NP of the NIC of node `node`.
    fn new_np(self: &Arc<Self>, node: u32) -> Self::Np;
    /// Whether `msg` creates a limiter for a flow that has none (§1.4); other messages for
    /// such a flow are ignored.
    fn creates_limiter(&self, msg: &CmPayload) -> bool;
    /// Size of CM control frames (bytes).
    fn frame_bytes(&self) -> u32;
    /// Out-of-band feedback delay (`feedback = "oob"`); `None`: in band on the reverse path.
    fn oob_delay(&self) -> Option<SimTime>;
    /// Whether switches have CPs: `false` lets the hot loop skip every hook.
    fn has_congestion_points(&self) -> bool {
        true
    }
    /// Whether the scheme acts on frames reaching their destination: otherwise the engine
    /// records deliveries without an arrival event.
    fn needs_sink_events(&self) -> bool {
        false
    }
    /// Which frames its CPs act on as they leave their queue ([`CongestionPoint::on_dequeue`]):
    /// the engine calls them for those only.
    fn cp_on_dequeue(&self) -> OnDequeue {
        OnDequeue::Nothing
    }
    /// Every CP's measurement interval (FECN's T, §6): the engine calls
    /// [`CongestionPoint::on_tick`] at every multiple of it; `None`: CPs have no clock.
    fn cp_period(&self) -> Option<SimTime> {
        None
    }
    /// Whether every flow gets a limiter (at line rate) and an RP with its first frame.
    fn limiter_from_start(&self) -> bool {
        false
    }
    /// Whether the source writes into each probe the forward delay of its path without queueing
    /// (`CmPayload::base_delay`, E2CM's known D0, D17): a walk along the route per probe, which
    /// the other schemes' probes do not read.
    fn probes_carry_base_delay(&self) -> bool {
        false
    }
    /// How often a flow that sends probes its path (FECN's T, §6), whatever the congestion:
    /// the run budget counts those probes' events. `None`: probes, if any, follow the bytes
    /// sent (E2CM's `probe_bytes`) or the congestion.
    fn probe_period(&self) -> Option<SimTime> {
        None
    }
    /// Whether a `FEEDBACK` message carries a signed Fb (BCN/ECM, §1.2: negative = congestion,
    /// positive = a rate increase). Otherwise every `FEEDBACK` message is a congestion
    /// notification and its `fb` a magnitude (QCN's QntzFb) or a rate (E-FECN), never a sign.
    fn signed_feedback(&self) -> bool {
        false
    }
    /// A forward probe reached its destination: the reply to send back to its source, if any.
    fn sink_probe(&self, _now: SimTime, _probe: &CmPayload) -> Option<CmPayload> {
        None
    }
}

/// Parse a scheme's parameters with serde into `T`, errors naming the scheme's table.
pub(crate) fn parse_params<T: serde::de::DeserializeOwned>(
    scheme: &str,
    params: &serde_json::Map<String, serde_json::Value>,
) -> Result<T> {
    serde_json::from_value(serde_json::Value::Object(params.clone()))
        .map_err(|e| params_error(scheme, e))
}

/// The error for a scheme's parameters that do not parse or do not hold together: it names the
/// scheme's table, `cm (<scheme>)`.
pub(crate) fn params_error(scheme: &str, reason: impl std::fmt::Display) -> Error {
    Error::config(
        format!("cm ({scheme})"),
        reason,
        "the parameters of that scheme",
    )
}

/// A parameter check of the schemes' own `check`s: `v` is a finite number above zero.
pub(crate) fn positive(key: &str, v: f64) -> std::result::Result<(), String> {
    if v > 0.0 && v.is_finite() {
        Ok(())
    } else {
        Err(format!("{key} = {v}: must be > 0"))
    }
}

/// A parameter check of the schemes' own `check`s: `v` lies in [0, 1].
pub(crate) fn fraction(key: &str, v: f64) -> std::result::Result<(), String> {
    if (0.0..=1.0).contains(&v) {
        Ok(())
    } else {
        Err(format!("{key} = {v}: must be in [0, 1]"))
    }
}

/// The scheme registry: one line per scheme (`Variant => parameter type`). It generates the
/// selected [`Scheme`] and the statically dispatched [`AnyCp`] / [`AnyRp`] (no virtual calls
/// on the hot path).
macro_rules! registry {
    ($($variant:ident => $spec:ty),* $(,)?) => {
        /// The selected scheme with its parameters: a factory for CPs and RPs and the
        /// scheme-wide hooks ([`SchemeSpec`]).
        #[derive(Clone, Debug)]
        pub enum Scheme {
            $($variant(Arc<$spec>)),*
        }

        /// Static dispatch over CPs.
        #[derive(Clone, Debug)]
        pub enum AnyCp {
            $($variant(<$spec as SchemeSpec>::Cp)),*
        }

        /// Static dispatch over RPs.
        #[derive(Clone, Debug)]
        pub enum AnyRp {
            $($variant(<$spec as SchemeSpec>::Rp)),*
        }

        /// Static dispatch over notification points.
        #[derive(Clone, Debug)]
        pub enum AnyNp {
            $($variant(<$spec as SchemeSpec>::Np)),*
        }

        /// Every scheme name this engine implements, in registry order.
        pub const SCHEME_NAMES: &[&str] = &[$(<$spec as SchemeSpec>::NAME),*];

        // The hooks are called through the trait, never by method lookup: a scheme's inherent
        // method of the same name would otherwise be chosen over its `SchemeSpec` impl.
        impl Scheme {
            /// Build the scheme named by `cm.scheme`, parsing its parameters.
            pub fn from_config(cfg: &CmConfig) -> Result<Self> {
                $(
                    if cfg.scheme == <$spec as SchemeSpec>::NAME {
                        return Ok(Scheme::$variant(Arc::new(<$spec as SchemeSpec>::parse(&cfg.params)?)));
                    }
                )*
                Err(Error::config(
                    "cm.scheme",
                    &cfg.scheme,
                    format!("a scheme this engine implements: {}", SCHEME_NAMES.join(", ")),
                ))
            }
            pub fn name(&self) -> &'static str {
                match self { $(Scheme::$variant(_) => <$spec as SchemeSpec>::NAME),* }
            }
            pub fn has_congestion_points(&self) -> bool {
                match self { $(Scheme::$variant(p) => <$spec as SchemeSpec>::has_congestion_points(p)),* }
            }
            pub fn needs_sink_events(&self) -> bool {
                match self { $(Scheme::$variant(p) => <$spec as SchemeSpec>::needs_sink_events(p)),* }
            }
            /// Which frames the CPs act on as they leave (`Nothing` where the scheme has none).
            pub fn cp_on_dequeue(&self) -> OnDequeue {
                if !self.has_congestion_points() {
                    return OnDequeue::Nothing;
                }
                match self { $(Scheme::$variant(p) => <$spec as SchemeSpec>::cp_on_dequeue(p)),* }
            }
            pub fn cp_period(&self) -> Option<SimTime> {
                match self { $(Scheme::$variant(p) => <$spec as SchemeSpec>::cp_period(p)),* }
            }
            pub fn limiter_from_start(&self) -> bool {
                match self { $(Scheme::$variant(p) => <$spec as SchemeSpec>::limiter_from_start(p)),* }
            }
            pub fn probes_carry_base_delay(&self) -> bool {
                match self { $(Scheme::$variant(p) => <$spec as SchemeSpec>::probes_carry_base_delay(p)),* }
            }
            pub fn probe_period(&self) -> Option<SimTime> {
                match self { $(Scheme::$variant(p) => <$spec as SchemeSpec>::probe_period(p)),* }
            }
            pub fn signed_feedback(&self) -> bool {
                match self { $(Scheme::$variant(p) => <$spec as SchemeSpec>::signed_feedback(p)),* }
            }
            pub fn creates_limiter(&self, msg: &CmPayload) -> bool {
                match self { $(Scheme::$variant(p) => <$spec as SchemeSpec>::creates_limiter(p, msg)),* }
            }
            pub fn frame_bytes(&self) -> u32 {
                match self { $(Scheme::$variant(p) => <$spec as SchemeSpec>::frame_bytes(p)),* }
            }
            pub fn oob_delay(&self) -> Option<SimTime> {
                match self { $(Scheme::$variant(p) => <$spec as SchemeSpec>::oob_delay(p)),* }
            }
            pub fn new_cp(&self, cpid: u32, line_rate_bps: f64, rng: &mut SimRng) -> AnyCp {
                match self { $(Scheme::$variant(p) => AnyCp::$variant(p.new_cp(cpid, line_rate_bps, rng))),* }
            }
            pub fn new_rp(&self, line_rate_bps: f64) -> AnyRp {
                match self { $(Scheme::$variant(p) => AnyRp::$variant(p.new_rp(line_rate_bps))),* }
            }
            pub fn new_np(&self, node: u32) -> AnyNp {
                match self { $(Scheme::$variant(p) => AnyNp::$variant(p.new_np(node))),* }
            }
            pub fn sink_probe(&self, now: SimTime, probe: &CmPayload) -> Option<CmPayload> {
                match self { $(Scheme::$variant(p) => <$spec as SchemeSpec>::sink_probe(p, now, probe)),* }
            }
        }

        impl AnyCp {
            pub fn dequeue_floor(&self) -> u64 {
                match self { $(AnyCp::$variant(cp) => cp.dequeue_floor()),* }
            }
            #[inline]
            pub fn on_enqueue(
                &mut self,
                now: SimTime,
                q: u64,
                frame: &mut Frame,
                rng: &mut SimRng,
            ) -> Option<CmPayload> {
                match self { $(AnyCp::$variant(cp) => cp.on_enqueue(now, q, frame, rng)),* }
            }
            #[inline]
            pub fn on_dequeue(
                &mut self,
                now: SimTime,
                q: u64,
                frame: &mut Frame,
                rng: &mut SimRng,
            ) -> Option<CmPayload> {
                match self { $(AnyCp::$variant(cp) => cp.on_dequeue(now, q, frame, rng)),* }
            }
            pub fn on_probe(&mut self, now: SimTime, q: u64, probe: &CmPayload) -> Option<CmPayload> {
                match self { $(AnyCp::$variant(cp) => cp.on_probe(now, q, probe)),* }
            }
            pub fn on_tick(&mut self, now: SimTime, q: u64, service_bps: f64) {
                match self { $(AnyCp::$variant(cp) => cp.on_tick(now, q, service_bps)),* }
            }
        }

        impl AnyNp {
            pub fn on_data(&mut self, now: SimTime, frame: &Frame) -> NpOutput {
                match self { $(AnyNp::$variant(np) => np.on_data(now, frame)),* }
            }
            pub fn on_timer(&mut self, now: SimTime, src: u32, class: u8) -> Option<CmPayload> {
                match self { $(AnyNp::$variant(np) => np.on_timer(now, src, class)),* }
            }
            #[inline(always)]
            pub fn selects(&mut self, frame: &Frame, rng: &mut SimRng) -> bool {
                match self { $(AnyNp::$variant(np) => np.selects(frame, rng)),* }
            }
        }

        impl AnyRp {
            pub fn on_message(
                &mut self,
                now: SimTime,
                msg: &CmPayload,
                rl: &mut RateLimiter,
                rng: &mut SimRng,
            ) -> RpOutput {
                match self { $(AnyRp::$variant(rp) => rp.on_message(now, msg, rl, rng)),* }
            }
            pub fn on_send(&mut self, now: SimTime, bytes: u64, rl: &mut RateLimiter, rng: &mut SimRng) -> RpOutput {
                match self { $(AnyRp::$variant(rp) => rp.on_send(now, bytes, rl, rng)),* }
            }
            pub fn on_timer(&mut self, now: SimTime, rl: &mut RateLimiter, rng: &mut SimRng) -> RpOutput {
                match self { $(AnyRp::$variant(rp) => rp.on_timer(now, rl, rng)),* }
            }
            pub fn tag(&self) -> Option<u32> {
                match self { $(AnyRp::$variant(rp) => rp.tag()),* }
            }
            pub fn outlives_release(&mut self) -> bool {
                match self { $(AnyRp::$variant(rp) => rp.outlives_release()),* }
            }
        }
    };
}

registry! {
    None => none::NoneParams,
    Bcn => bcn::BcnParams,
    E2cm => e2cm::E2cmParams,
    Qcn => qcn::QcnParams,
    Qcn3pt => qcn3pt::Qcn3ptParams,
    QcnSonar => qcn_sonar::SonarParams,
    QcnPlus => qcn_plus::PlusParams,
    Dcqcn => dcqcn::DcqcnParams,
    Fecn => fecn::FecnParams,
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Scheme `name` from `params` (its parameters, or any map of them) with `over`'s keys
    /// replaced, as the engine builds it: the schemes' tests reach their hooks through it.
    pub(crate) fn scheme_with(
        name: &str,
        params: impl serde::Serialize,
        over: serde_json::Value,
    ) -> Scheme {
        let mut params = serde_json::to_value(params)
            .unwrap()
            .as_object()
            .cloned()
            .unwrap();
        for (k, v) in over.as_object().unwrap() {
            params.insert(k.clone(), v.clone());
        }
        Scheme::from_config(&CmConfig {
            scheme: name.into(),
            params,
        })
        .unwrap()
    }

    #[test]
    fn a_cp_acts_on_the_departures_of_charged_frames_of_the_kinds_asked() {
        let frame = |kind: FrameKind, counted: bool| Frame {
            kind,
            counted,
            ..Frame::data(1, 2, 1500, SimTime::ZERO)
        };
        let pause = FrameKind::Pause {
            xoff: true,
            class: 0,
        };
        // (kind, counted): what Every, Probes and Nothing act on
        for (kind, counted, every, probes) in [
            (FrameKind::Data, true, true, false),
            (FrameKind::Probe, true, true, true),
            (FrameKind::Data, false, false, false),
            (FrameKind::Probe, false, false, false),
            (FrameKind::Control, false, false, false),
            (pause, false, false, false),
        ] {
            let f = frame(kind, counted);
            assert_eq!(OnDequeue::Every.acts_on(&f), every, "{kind:?} {counted}");
            assert_eq!(OnDequeue::Probes.acts_on(&f), probes, "{kind:?} {counted}");
            assert!(!OnDequeue::Nothing.acts_on(&f), "{kind:?} {counted}");
        }
        assert_eq!(OnDequeue::every_if(true), OnDequeue::Every);
        assert_eq!(OnDequeue::every_if(false), OnDequeue::Nothing);
    }

    fn cfg(scheme: &str, params: serde_json::Value) -> CmConfig {
        CmConfig {
            scheme: scheme.into(),
            params: params.as_object().cloned().unwrap_or_default(),
        }
    }

    #[test]
    fn an_rp_output_asks_nothing_only_when_every_part_is_empty() {
        assert!(RpOutput::default().asks_nothing());
        let asks = [
            RpOutput {
                timer: Some(SimTime::ZERO),
                ..RpOutput::default()
            },
            RpOutput {
                release: true,
                ..RpOutput::default()
            },
            RpOutput {
                probe: Some(CmPayload::default()),
                ..RpOutput::default()
            },
        ];
        assert!(asks.iter().all(|out| !out.asks_nothing()));
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

    #[test]
    fn parameter_checks_name_the_key_and_the_bound() {
        assert_eq!(positive("qeq", 1e-9), Ok(()));
        for v in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            assert_eq!(positive("qeq", v), Err(format!("qeq = {v}: must be > 0")));
        }
        for v in [0.0, 0.5, 1.0] {
            assert_eq!(fraction("g", v), Ok(()));
        }
        for v in [-1e-9, 1.0 + 1e-9, f64::NAN] {
            assert_eq!(fraction("g", v), Err(format!("g = {v}: must be in [0, 1]")));
        }
    }

    #[test]
    fn every_scheme_names_its_table_when_a_parameter_is_wrong() {
        // each scheme's own check, reached through the registry as a scenario reaches it
        let with = |base: serde_json::Value, over: serde_json::Value| {
            let mut m = base.as_object().cloned().unwrap();
            m.extend(over.as_object().cloned().unwrap());
            serde_json::Value::Object(m)
        };
        let qcn = qcn::tests::json;
        for (scheme, params, key) in [
            (
                "qcn",
                with(qcn(), serde_json::json!({"qeq": 0.0})),
                "qeq = 0",
            ),
            (
                "qcn",
                with(qcn(), serde_json::json!({"min_dec": 2.0})),
                "min_dec = 2",
            ),
            (
                "qcn3pt",
                with(
                    qcn(),
                    serde_json::json!({"refp": 2.0, "de_rule": "q_above_qeq"}),
                ),
                "refp = 2",
            ),
            (
                "dcqcn",
                with(dcqcn::tests::json(), serde_json::json!({"g": 2.0})),
                "g = 2",
            ),
            (
                "dcqcn",
                with(dcqcn::tests::json(), serde_json::json!({"bc": -1.0})),
                "bc = -1",
            ),
        ] {
            let e = Scheme::from_config(&cfg(scheme, params))
                .unwrap_err()
                .to_string();
            assert!(e.starts_with(&format!("cm ({scheme}) = {key}")), "{e}");
            assert!(e.ends_with(": the parameters of that scheme"), "{e}");
        }
    }
}
