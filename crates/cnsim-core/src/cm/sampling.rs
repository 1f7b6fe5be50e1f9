//! Sampling at the congestion point (algorithms.md §1.2, §5.2): which frames are sampling
//! instants. One sampler per CP; it sees every admitted data frame as it arrives (q includes
//! it), or, with `sample_at = "departure"` (§1.2's switch, [CODE:pcn-qcn]), every data frame as
//! it starts to leave (q still includes it).
//!
//! * `random`: each frame independently with probability `ps` (BCN in seed 000: 2 %).
//! * `interval`: every `sample_bytes` of arriving data (Kwan & Ding: one frame per 75 KB).
//! * `jitter`: `sample_bytes` + U(−J, +J) per interval (seed 004: 75 000 ± 5 000 B).
//! * `table`: QCN's feedback-dependent byte interval (§5.2 table), ±15 % uniform jitter.
//! * `linear`: per-frame probability rising linearly with |Fb| from `pmin` to `pmax`.
//!
//! Oversampling (D5): while q > Qeq the probability is multiplied (the byte interval divided) by
//! the oversampling factor. The byte counters count down by the arriving frame's length; the
//! next interval starts when the counter reaches zero or below (§5.2 step 2).

use rand::Rng;
use serde::{Deserialize, Serialize};

use crate::engine::SimRng;

/// QCN's sampling intervals in bytes, indexed by the three high bits of the 6-bit QntzFb (§5.2).
pub const QCN_TABLE: [f64; 8] = [
    150_000.0, 75_000.0, 50_000.0, 37_500.0, 30_000.0, 25_000.0, 21_500.0, 18_500.0,
];
/// The table's uniform jitter: interval × U(0.85, 1.15).
pub const TABLE_JITTER: f64 = 0.15;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SamplingMode {
    Random,
    Interval,
    Jitter,
    Table,
    Linear,
}

/// Where the CP counts and samples frames (§1.2: "sample on arrival; make it a switch").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SamplePoint {
    /// At admission to the output queue (the default, [CODE:linux-qcn-qdisc]).
    Arrival,
    /// When the frame starts to leave the output queue ([CODE:pcn-qcn]).
    Departure,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SamplingParams {
    pub mode: SamplingMode,
    pub at: SamplePoint,
    pub ps: f64,
    pub sample_bytes: f64,
    pub sample_jitter: f64,
    pub pmin: f64,
    pub pmax: f64,
    pub oversample_factor: f64,
}

#[derive(Clone, Debug)]
pub struct Sampler {
    pub params: SamplingParams,
    /// Bytes left before the next sampling instant (byte-based modes).
    pub bytes_left: f64,
    /// Current per-frame probability (linear mode).
    pub p: f64,
}

impl Sampler {
    pub fn new(params: SamplingParams, rng: &mut SimRng) -> Self {
        let mut s = Sampler {
            params,
            bytes_left: 0.0,
            p: params.pmin,
        };
        s.bytes_left = match params.mode {
            SamplingMode::Table => QCN_TABLE[0] * table_jitter(rng),
            _ => s.base_interval(rng),
        };
        s
    }

    fn base_interval(&self, rng: &mut SimRng) -> f64 {
        match self.params.mode {
            SamplingMode::Jitter if self.params.sample_jitter > 0.0 => {
                self.params.sample_bytes
                    + rng.gen_range(-self.params.sample_jitter..=self.params.sample_jitter)
            }
            _ => self.params.sample_bytes,
        }
    }

    /// Is the arrival of a frame of `len` bytes a sampling instant? `congested` = q > Qeq
    /// (oversampling applies then).
    pub fn is_sample(&mut self, len: u64, congested: bool, rng: &mut SimRng) -> bool {
        let k = if congested {
            self.params.oversample_factor
        } else {
            1.0
        };
        match self.params.mode {
            SamplingMode::Random => rng.gen::<f64>() < (self.params.ps * k).min(1.0),
            SamplingMode::Linear => rng.gen::<f64>() < (self.p * k).min(1.0),
            SamplingMode::Interval | SamplingMode::Jitter | SamplingMode::Table => {
                // oversampling divides the interval: count the frame k times over
                self.bytes_left -= len as f64 * k;
                self.bytes_left <= 0.0
            }
        }
    }

    /// After a sampling instant, set up the next interval. `severity` is |Fb|/Fbmax in [0, 1] when
    /// Fb < 0 and 0 otherwise (linear mode); `table_index` is floor(QntzFb·8/2^b) (table mode).
    pub fn next(&mut self, severity: f64, table_index: usize, rng: &mut SimRng) {
        match self.params.mode {
            SamplingMode::Random => {}
            SamplingMode::Linear => {
                self.p = self.params.pmin
                    + (self.params.pmax - self.params.pmin) * severity.clamp(0.0, 1.0);
            }
            SamplingMode::Interval | SamplingMode::Jitter => {
                self.bytes_left = self.base_interval(rng)
            }
            SamplingMode::Table => {
                self.bytes_left = QCN_TABLE[table_index.min(7)] * table_jitter(rng)
            }
        }
    }
}

fn table_jitter(rng: &mut SimRng) -> f64 {
    rng.gen_range(1.0 - TABLE_JITTER..=1.0 + TABLE_JITTER)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng::{stream, StreamKind};

    fn params(mode: SamplingMode) -> SamplingParams {
        SamplingParams {
            mode,
            at: SamplePoint::Arrival,
            ps: 0.02,
            sample_bytes: 75_000.0,
            sample_jitter: 5_000.0,
            pmin: 0.01,
            pmax: 0.1,
            oversample_factor: 1.0,
        }
    }

    #[test]
    fn interval_sampling_fires_every_50_frames_of_1500_bytes() {
        let mut rng = stream(1, StreamKind::CongestionPoint, 0);
        let mut s = Sampler::new(params(SamplingMode::Interval), &mut rng);
        let mut hits = vec![];
        for i in 1..=200 {
            if s.is_sample(1500, false, &mut rng) {
                hits.push(i);
                s.next(0.0, 0, &mut rng);
            }
        }
        assert_eq!(hits, vec![50, 100, 150, 200]);
    }

    #[test]
    fn oversampling_divides_the_interval() {
        let mut rng = stream(1, StreamKind::CongestionPoint, 0);
        let mut p = params(SamplingMode::Interval);
        p.oversample_factor = 5.0;
        let mut s = Sampler::new(p, &mut rng);
        let hits = (1..=100).filter(|_| {
            let h = s.is_sample(1500, true, &mut rng);
            if h {
                s.next(0.0, 0, &mut rng);
            }
            h
        });
        assert_eq!(hits.count(), 10);
    }

    #[test]
    fn oversampling_multiplies_the_per_frame_probabilities() {
        // D5: while congested the probability is k·p (capped at 1); uncongested it is p
        let n = 200_000;
        for mode in [SamplingMode::Random, SamplingMode::Linear] {
            let mut rng = stream(4, StreamKind::CongestionPoint, 0);
            let mut p = params(mode);
            p.oversample_factor = 5.0;
            let mut s = Sampler::new(p, &mut rng);
            // Random: ps = 2 %; Linear: p starts at pmin = 1 %
            let base = if mode == SamplingMode::Random {
                0.02
            } else {
                0.01
            };
            for (congested, want) in [(false, base), (true, 5.0 * base)] {
                let hits = (0..n)
                    .filter(|_| s.is_sample(1500, congested, &mut rng))
                    .count();
                let rate = hits as f64 / n as f64;
                assert!(
                    (rate - want).abs() < 0.1 * want,
                    "{mode:?} {congested}: {rate}"
                );
            }
        }
        // the product is capped at 1: every frame
        let mut rng = stream(4, StreamKind::CongestionPoint, 0);
        let mut p = params(SamplingMode::Random);
        p.oversample_factor = 80.0;
        let mut s = Sampler::new(p, &mut rng);
        assert!((0..1000).all(|_| s.is_sample(1500, true, &mut rng)));
    }

    #[test]
    fn random_and_table_rates_match_their_means() {
        let mut rng = stream(2, StreamKind::CongestionPoint, 0);
        let mut s = Sampler::new(params(SamplingMode::Random), &mut rng);
        let n = 200_000;
        let hits = (0..n)
            .filter(|_| s.is_sample(1500, false, &mut rng))
            .count();
        assert!((hits as f64 / n as f64 - 0.02).abs() < 0.002);
        let mut s = Sampler::new(params(SamplingMode::Table), &mut rng);
        let mut hits = 0;
        for _ in 0..n {
            if s.is_sample(1500, false, &mut rng) {
                hits += 1;
                s.next(0.0, 3, &mut rng); // 37.5 KB: one frame in 25
            }
        }
        assert!((hits as f64 / n as f64 - 0.04).abs() < 0.002, "{hits}");
        // each table interval is exactly the entry times one U(0.85, 1.15) draw
        for (index, bytes) in QCN_TABLE.iter().enumerate() {
            let mut twin = rng.clone();
            s.next(0.0, index, &mut rng);
            let want = bytes * twin.gen_range(1.0 - TABLE_JITTER..=1.0 + TABLE_JITTER);
            assert_eq!(s.bytes_left, want);
        }
    }

    #[test]
    fn jitter_stays_within_its_bounds_and_linear_follows_severity() {
        let mut rng = stream(3, StreamKind::CongestionPoint, 0);
        let mut s = Sampler::new(params(SamplingMode::Jitter), &mut rng);
        let (mut lo, mut hi) = (f64::MAX, 0.0f64);
        for _ in 0..1000 {
            // exactly sample_bytes + U(−J, +J), one draw per interval
            let mut twin = rng.clone();
            s.next(0.0, 0, &mut rng);
            assert_eq!(s.bytes_left, 75_000.0 + twin.gen_range(-5_000.0..=5_000.0));
            assert!((70_000.0..=80_000.0).contains(&s.bytes_left));
            (lo, hi) = (lo.min(s.bytes_left), hi.max(s.bytes_left));
        }
        assert!(
            lo < 70_500.0 && hi > 79_500.0,
            "the jitter spans ±J: {lo} {hi}"
        );
        // J = 0: the plain interval, and no draw
        let mut p = params(SamplingMode::Jitter);
        p.sample_jitter = 0.0;
        let mut s = Sampler::new(p, &mut rng);
        let mut twin = rng.clone();
        s.next(0.0, 0, &mut rng);
        assert_eq!(s.bytes_left, 75_000.0);
        assert_eq!(rng.gen::<u64>(), twin.gen::<u64>());
        let mut s = Sampler::new(params(SamplingMode::Linear), &mut rng);
        s.next(0.5, 0, &mut rng);
        assert!((s.p - 0.055).abs() < 1e-12);
        s.next(2.0, 0, &mut rng);
        assert!((s.p - 0.1).abs() < 1e-12);
    }
}
