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
