//! Metrics: time-binned series (struct-of-arrays columns) and exact window summaries
//! (spec/contract.md "summary.json" and "series"). Recorders are updated by the simulator at the
//! instant something happens; nothing here schedules events. Window means use exact event
//! times, not bins; queue statistics are exact time integrals over the window.

use crate::time::{SimTime, PS_PER_S};
use std::cell::Cell;

/// The measurement window [t0, t1) in picoseconds.
#[derive(Clone, Copy, Debug)]
pub struct Window {
    pub t0: u64,
    pub t1: u64,
}

impl Window {
    #[inline]
    pub fn contains(&self, t: SimTime) -> bool {
        t.0 >= self.t0 && t.0 < self.t1
    }
    /// Length of [a, b) ∩ window.
    #[inline]
    pub fn overlap(&self, a: SimTime, b: SimTime) -> u64 {
        let lo = a.0.max(self.t0);
        let hi = b.0.min(self.t1);
        hi.saturating_sub(lo)
    }
    pub fn len_s(&self) -> f64 {
        (self.t1 - self.t0) as f64 / PS_PER_S as f64
    }
}

/// Binning of the run into `n` bins of `width` ps (the last one may be shorter).
///
/// Records arrive in nearly nondecreasing time, so [`Bins::index`] remembers the last bin it
/// found: a record in the same bin costs two comparisons instead of a 64-bit division (several
/// records per frame).
#[derive(Clone, Debug)]
pub struct Bins {
    pub width: u64,
    n: usize,
    pub end: u64,
    /// The last bin found: [start, stop) in ps and its index.
    last: Cell<(u64, u64, usize)>,
}

impl Bins {
    pub fn new(width: u64, end: u64) -> Self {
        Bins {
            width,
            n: end.div_ceil(width).max(1) as usize,
            end,
            last: Cell::new((1, 0, 0)), // an empty interval: nothing found yet
        }
    }
    /// The number of bins (at least one).
    pub fn count(&self) -> usize {
        self.n
    }
    /// Keep at most `n` bins (a run that ended before its cap).
    pub fn truncate(&mut self, n: usize) {
        self.n = self.n.min(n);
        self.last.set((1, 0, 0));
    }
    /// The bin of instant `t` (the last bin holds everything after it).
    #[inline]
    pub fn index(&self, t: SimTime) -> usize {
        let (start, stop, i) = self.last.get();
        if t.0 >= start && t.0 < stop {
            return i;
        }
        let i = ((t.0 / self.width) as usize).min(self.n - 1);
        let start = i as u64 * self.width;
        let stop = if i + 1 == self.n {
            u64::MAX
        } else {
            start + self.width
        };
        self.last.set((start, stop, i));
        i
    }
    pub fn len_ps(&self, i: usize) -> u64 {
        let start = i as u64 * self.width;
        (start + self.width).min(self.end.max(start + 1)) - start
    }
}

/// A byte counter per bin plus its window total. Bins are allocated as time reaches them (a
/// run's memory follows what it simulated, not its cap: issue 13); [`Counter::fit`] gives the
/// series its final length.
#[derive(Clone, Debug, Default)]
pub struct Counter {
    pub bins: Vec<u64>,
    pub window: u64,
    pub total: u64,
}

impl Counter {
    pub fn new() -> Self {
        Counter::default()
    }
    #[inline]
    pub fn add(&mut self, bins: &Bins, window: &Window, t: SimTime, amount: u64) {
        self.add_at(bins.index(t), window.contains(t), amount);
    }

    /// Add at a bin index and window membership computed once for several counters.
    #[inline]
    pub fn add_at(&mut self, bin: usize, in_window: bool, amount: u64) {
        match self.bins.get_mut(bin) {
            Some(b) => *b += amount,
            None => self.grow_to(bin, amount),
        }
        self.total += amount;
        if in_window {
            self.window += amount;
        }
    }
}

impl Counter {
    #[cold]
    fn grow_to(&mut self, bin: usize, amount: u64) {
        self.bins.resize(bin + 1, 0);
        self.bins[bin] = amount;
    }

    /// Give the series exactly `n` bins (zero where nothing was counted).
    pub fn fit(&mut self, n: usize) {
        self.bins.resize(n, 0);
    }
}

/// Grow `v` with zeros so that index `i` exists (bins are allocated as time reaches them).
#[inline]
pub fn slot(v: &mut Vec<u64>, i: usize) -> &mut u64 {
    if i >= v.len() {
        v.resize(i + 1, 0);
    }
    &mut v[i]
}

/// Exact tracker of a piecewise-constant level (a queue in bytes): time-weighted mean and
/// standard deviation and the maximum over the window, and the value and maximum of each bin.
#[derive(Clone, Debug)]
pub struct LevelTracker {
    pub name: String,
    value: u64,
    last: SimTime,
    integral: u128,
    integral_sq: u128,
    max_window: u64,
    cur_bin: usize,
    bin_max: u64,
    /// Integrals of the level and its square over the current bin so far (byte·ps, byte²·ps).
    bin_integral: u128,
    bin_integral_sq: u128,
    pub end_values: Vec<f64>,
    pub max_values: Vec<f64>,
    /// Per closed bin: the integrals of the level and of its square, so that the statistics of
    /// any window made of whole bins are exact (`windows.*` in summary.json) and the series
    /// can give each bin's time average.
    pub bin_integrals: Vec<u128>,
    pub bin_integrals_sq: Vec<u128>,
}

impl LevelTracker {
    pub fn new(name: String) -> Self {
        LevelTracker {
            name,
            value: 0,
            last: SimTime::ZERO,
            integral: 0,
            integral_sq: 0,
            max_window: 0,
            cur_bin: 0,
            bin_max: 0,
            bin_integral: 0,
            bin_integral_sq: 0,
            end_values: Vec::new(),
            max_values: Vec::new(),
            bin_integrals: Vec::new(),
            bin_integrals_sq: Vec::new(),
        }
    }

    /// The level changes to `new` at `now` (non-decreasing `now`).
    #[inline]
    pub fn set(&mut self, bins: &Bins, window: &Window, now: SimTime, new: u64) {
        let dt = window.overlap(self.last, now) as u128;
        if dt > 0 {
            let v = self.value as u128;
            self.integral += v * dt;
            self.integral_sq += v * v * dt;
            self.max_window = self.max_window.max(self.value);
        }
        let b = bins.index(now);
        let v = self.value as u128;
        let mut from = self.last.0;
        // the bins before `cur_bin` are closed and stored: `end_values.len() == cur_bin`
        while self.cur_bin < b {
            let bin_end = (self.cur_bin as u64 + 1) * bins.width;
            let dt = (bin_end - from) as u128;
            self.end_values.push(self.value as f64);
            // the level held until the bin's end (from `last` < bin_end, or the whole bin)
            self.max_values.push(self.bin_max.max(self.value) as f64);
            self.bin_integrals.push(self.bin_integral + v * dt);
            self.bin_integrals_sq
                .push(self.bin_integral_sq + v * v * dt);
            self.bin_integral = 0;
            self.bin_integral_sq = 0;
            from = bin_end;
            self.cur_bin += 1;
            self.bin_max = 0;
        }
        let dt = (now.0 - from) as u128;
        if dt > 0 {
            // the level carried into this bin held for a while in it (not if it changes at the
            // bin's first instant: like the window's maximum, a level counts where it holds
            // for some time or is set)
            self.bin_max = self.bin_max.max(self.value);
        }
        self.bin_integral += v * dt;
        self.bin_integral_sq += v * v * dt;
        self.value = new;
        self.last = now;
        self.bin_max = self.bin_max.max(new);
        if window.contains(now) {
            self.max_window = self.max_window.max(new);
        }
    }

    /// Close the record at the end of the run; returns (mean, std, max) over the window.
    pub fn finish(&mut self, bins: &Bins, window: &Window, end: SimTime) -> (f64, f64, f64) {
        let v = self.value;
        self.set(bins, window, end, v);
        self.end_values.push(v as f64);
        self.max_values.push(self.bin_max as f64);
        self.bin_integrals.push(self.bin_integral);
        self.bin_integrals_sq.push(self.bin_integral_sq);
        let span = (window.t1 - window.t0) as f64;
        if span <= 0.0 {
            return (v as f64, 0.0, v as f64);
        }
        let mean = self.integral as f64 / span;
        let var = (self.integral_sq as f64 / span - mean * mean).max(0.0);
        (mean, var.sqrt(), self.max_window as f64)
    }
}

impl LevelTracker {
    /// Time-weighted mean, standard deviation and maximum over bins `[b0, b1)` (closed by
    /// `finish`), whose span is `span_ps`.
    pub fn bin_range_stats(&self, b0: usize, b1: usize, span_ps: u64) -> (f64, f64, f64) {
        if b1 <= b0 || span_ps == 0 {
            return (f64::NAN, f64::NAN, f64::NAN);
        }
        let int: u128 = self.bin_integrals[b0..b1].iter().sum();
        let int_sq: u128 = self.bin_integrals_sq[b0..b1].iter().sum();
        let span = span_ps as f64;
        let mean = int as f64 / span;
        let var = (int_sq as f64 / span - mean * mean).max(0.0);
        let max = self.max_values[b0..b1].iter().copied().fold(0.0, f64::max);
        (mean, var.sqrt(), max)
    }

    /// Each closed bin's time average of the level.
    pub fn bin_means(&self, bins: &Bins) -> Vec<f64> {
        self.bin_integrals
            .iter()
            .enumerate()
            .map(|(i, &int)| int as f64 / bins.len_ps(i) as f64)
            .collect()
    }
}

/// A level sampled at bin ends (rate-limiter rates): NaN where the level is undefined.
#[derive(Clone, Debug)]
pub struct SampledLevel {
    pub name: String,
    value: f64,
    cur_bin: usize,
    pub end_values: Vec<f64>,
}

impl SampledLevel {
    pub fn new(name: String) -> Self {
        SampledLevel {
            name,
            value: f64::NAN,
            cur_bin: 0,
            end_values: Vec::new(),
        }
    }
    pub fn set(&mut self, bins: &Bins, now: SimTime, value: f64) {
        let b = bins.index(now);
        while self.cur_bin < b {
            self.end_values.push(self.value);
            self.cur_bin += 1;
        }
        self.value = value;
    }
    pub fn finish(&mut self, bins: &Bins, end: SimTime) {
        let v = self.value;
        self.set(bins, end, v);
        self.end_values.push(v);
    }
}

/// At most this many named windows (`windows.*` in summary.json: all, ss, tr, rec).
pub const MAX_NAMED_WINDOWS: usize = 4;

/// Paused time of one transmitter, in the main window and in each named window.
#[derive(Clone, Copy, Debug, Default)]
pub struct PauseRecord {
    pub window_ps: u64,
    pub paused_in_window: bool,
    pub named_ps: [u64; MAX_NAMED_WINDOWS],
    /// Bit i: paused at some instant of named window i.
    pub named_paused: u8,
}

/// Time-binned series of one kind, entity-major, ready for the Python side.
#[derive(Clone, Debug, Default)]
pub struct Series {
    pub entities: Vec<String>,
    pub columns: Vec<(String, Vec<f64>)>,
}

impl Series {
    pub fn new(columns: &[&str]) -> Self {
        Series {
            entities: Vec::new(),
            columns: columns
                .iter()
                .map(|c| (c.to_string(), Vec::new()))
                .collect(),
        }
    }
    pub fn push(&mut self, entity: String, values: &[&[f64]]) {
        self.entities.push(entity);
        for (col, v) in self.columns.iter_mut().zip(values) {
            col.1.extend_from_slice(v);
        }
    }
}

/// Bytes per bin → Gb/s per bin.
pub fn gbps_bins(bins: &Bins, bytes: &[u64]) -> Vec<f64> {
    bytes
        .iter()
        .enumerate()
        .map(|(i, &b)| b as f64 * 8.0 / (bins.len_ps(i) as f64 / PS_PER_S as f64) / 1e9)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_remembered_bin_agrees_with_the_division_in_any_order() {
        let mut bins = Bins::new(10, 45); // 5 bins, the last one 5 ps long
        let times = [0, 9, 10, 3, 44, 45, 1_000, 19, 20, 20, 39, 40, 0, u64::MAX];
        for t in times {
            let expected = ((t / 10) as usize).min(4);
            assert_eq!(bins.index(SimTime(t)), expected, "t = {t}");
        }
        bins.truncate(2);
        for t in [5, 15, 25, 1_000] {
            assert_eq!(
                bins.index(SimTime(t)),
                ((t / 10) as usize).min(1),
                "t = {t}"
            );
        }
    }

    #[test]
    fn level_tracker_is_exact() {
        let bins = Bins::new(10, 40);
        let w = Window { t0: 10, t1: 30 };
        let mut q = LevelTracker::new("q".into());
        q.set(&bins, &w, SimTime(5), 100); // 100 on [5, 15)
        q.set(&bins, &w, SimTime(15), 300); // 300 on [15, 25)
        q.set(&bins, &w, SimTime(25), 0); // 0 on [25, 40)
        let (mean, std, max) = q.finish(&bins, &w, SimTime(40));
        // window [10, 30): 100 for 5, 300 for 10, 0 for 5 → mean 175
        assert!((mean - 175.0).abs() < 1e-9);
        let var = (100.0f64.powi(2) * 5.0 + 300.0f64.powi(2) * 10.0) / 20.0 - 175.0 * 175.0;
        assert!((std - var.sqrt()).abs() < 1e-9);
        assert_eq!(max, 300.0);
        assert_eq!(q.end_values, vec![100.0, 300.0, 0.0, 0.0]);
        assert_eq!(q.max_values, vec![100.0, 300.0, 300.0, 0.0]);
    }

    #[test]
    fn counters_bin_and_window() {
        let bins = Bins::new(10, 25);
        assert_eq!(bins.count(), 3);
        assert_eq!(bins.len_ps(2), 5);
        let w = Window { t0: 10, t1: 20 };
        let mut c = Counter::new();
        c.add(&bins, &w, SimTime(0), 1);
        assert_eq!(c.bins, vec![1], "bins are allocated as time reaches them");
        for t in [9, 10, 19, 20, 25] {
            c.add(&bins, &w, SimTime(t), 1);
        }
        assert_eq!(c.bins, vec![2, 2, 2]);
        assert_eq!(c.window, 2);
        assert_eq!(c.total, 6);
    }
}

pub mod recorder;
pub use recorder::Recorder;
pub mod fct;
pub mod summary;
pub use fct::{FlowTracker, NO_FLOW};
