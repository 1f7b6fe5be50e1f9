//! Units in types: simulated time is an integer count of picoseconds, rates are bit/s, sizes bytes
//! (DESIGN.md principle 2). No floating point reaches an event timestamp: serialisation times are
//! computed in integer arithmetic and rounded up.

use std::fmt;
use std::ops::{Add, AddAssign, Sub};

/// Picoseconds per second.
pub const PS_PER_S: u64 = 1_000_000_000_000;

/// A simulated instant (or duration), in picoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SimTime(pub u64);

impl SimTime {
    pub const ZERO: SimTime = SimTime(0);
    pub const NEVER: SimTime = SimTime(u64::MAX);

    pub const fn ps(ps: u64) -> Self {
        SimTime(ps)
    }
    pub const fn ns(ns: u64) -> Self {
        SimTime(ns * 1_000)
    }
    pub const fn us(us: u64) -> Self {
        SimTime(us * 1_000_000)
    }
    pub const fn ms(ms: u64) -> Self {
        SimTime(ms * 1_000_000_000)
    }
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / PS_PER_S as f64
    }
    pub fn saturating_sub(self, other: SimTime) -> SimTime {
        SimTime(self.0.saturating_sub(other.0))
    }
}

impl Add for SimTime {
    type Output = SimTime;
    fn add(self, rhs: SimTime) -> SimTime {
        SimTime(self.0 + rhs.0)
    }
}
impl AddAssign for SimTime {
    fn add_assign(&mut self, rhs: SimTime) {
        self.0 += rhs.0;
    }
}
impl Sub for SimTime {
    type Output = SimTime;
    fn sub(self, rhs: SimTime) -> SimTime {
        SimTime(self.0 - rhs.0)
    }
}
impl fmt::Display for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} s", self.as_secs_f64())
    }
}

/// A link or service rate in bit/s.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct BitRate(pub u64);

impl BitRate {
    pub const fn gbps(g: u64) -> Self {
        BitRate(g * 1_000_000_000)
    }
    pub fn as_f64(self) -> f64 {
        self.0 as f64
    }
    /// The rate scaled by a fraction (hotspot service rates), rounded to the nearest bit/s.
    pub fn scaled(self, fraction: f64) -> BitRate {
        BitRate((self.0 as f64 * fraction).round() as u64)
    }
}

/// Time to serialise `bytes` at `rate`, rounded up to the next picosecond.
/// 1500 B at 10 Gb/s is exactly 1.2 us.
pub fn tx_time(bytes: u64, rate: BitRate) -> SimTime {
    debug_assert!(rate.0 > 0, "tx_time at rate 0");
    let bits = bytes as u128 * 8 * PS_PER_S as u128;
    let r = rate.0 as u128;
    SimTime(bits.div_ceil(r) as u64)
}

/// Time to send `bytes` at a rate-limiter rate given as f64 bit/s (rates of rate limiters are
/// real numbers, D7). Rounded up so that a limiter never sends faster than its rate.
pub fn tx_time_f64(bytes: u64, rate_bps: f64) -> SimTime {
    let ps = (bytes as f64 * 8.0 * PS_PER_S as f64 / rate_bps).ceil();
    SimTime(ps as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serialisation_times_are_exact() {
        assert_eq!(tx_time(1500, BitRate::gbps(10)), SimTime::ns(1200));
        assert_eq!(tx_time(64, BitRate::gbps(10)), SimTime::ps(51_200));
        assert_eq!(tx_time(1500, BitRate::gbps(2)), SimTime::us(6));
        assert_eq!(tx_time(1500, BitRate::gbps(1)), SimTime::us(12));
        // rounds up: 1 byte at 3 bit/s is 8/3 s
        assert_eq!(tx_time(1, BitRate(3)), SimTime(2_666_666_666_667));
    }

    #[test]
    fn limiter_times_round_up() {
        assert_eq!(tx_time_f64(1500, 2.5e9), SimTime::us(4) + SimTime::ns(800));
        assert!(tx_time_f64(1500, 3.0e9).0 >= 4_000_000);
    }
}
