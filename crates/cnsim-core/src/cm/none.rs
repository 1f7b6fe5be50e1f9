//! Scheme `none`: no congestion management; PAUSE (or drops) alone. It has no parameters, no
//! congestion points and no reaction points; the default no-op hooks are its whole behaviour.

use serde::{Deserialize, Serialize};

use super::{CongestionPoint, ReactionPoint};

/// `none` takes no parameters: any key under `[cm]` is an error.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoneParams {}

#[derive(Clone, Copy, Debug, Default)]
pub struct NoCp;
impl CongestionPoint for NoCp {}

#[derive(Clone, Copy, Debug, Default)]
pub struct NoRp;
impl ReactionPoint for NoRp {}

impl super::SchemeSpec for NoneParams {
    const NAME: &'static str = "none";
    type Cp = NoCp;
    type Rp = NoRp;
    type Np = ();
    fn parse(params: &serde_json::Map<String, serde_json::Value>) -> crate::error::Result<Self> {
        super::parse_params(Self::NAME, params)
    }
    fn new_cp(
        self: &std::sync::Arc<Self>,
        _cpid: u32,
        _line_rate_bps: f64,
        _rng: &mut crate::engine::SimRng,
    ) -> NoCp {
        NoCp
    }
    fn new_rp(self: &std::sync::Arc<Self>, _line_rate_bps: f64) -> NoRp {
        NoRp
    }
    fn new_np(self: &std::sync::Arc<Self>, _node: u32) {}
    fn creates_limiter(&self, _msg: &super::CmPayload) -> bool {
        false
    }
    fn frame_bytes(&self) -> u32 {
        64
    }
    fn oob_delay(&self) -> Option<crate::time::SimTime> {
        None
    }
    fn has_congestion_points(&self) -> bool {
        false
    }
}
