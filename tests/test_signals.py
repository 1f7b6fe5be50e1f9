"""The signal measurements of ``cnsim.signals`` at their edges: a start that is not 0, values
exactly at a level or a band's edge, a stretch that exactly fits its hold, records of the
shortest length allowed. (tests/test_check.py has their typical cases; these pin down what a
looser test lets drift by a bin or a sample: found by mutation testing, docs/testing.md.)"""

from __future__ import annotations

import math

import numpy as np
import pytest
from cnsim import signals as m

MS = 1e-3
T = np.arange(1, 101) * MS  # bins of 1 ms ending at 1, 2, ..., 100 ms


def at(*pairs: tuple[float, float], base: float = 0.0) -> np.ndarray:
    """A series over ``T``: ``base`` everywhere but the bins ending at the given times (ms)."""
    v = np.full(T.size, base)
    for end_ms, value in pairs:
        v[round(end_ms) - 1] = value
    return v


def test_bin_width_of_empty_single_and_late_series() -> None:
    assert m.bin_width([]) == 0.0
    assert m.bin_width([0.005]) == 0.005  # one bin, from 0
    assert m.bin_width([0.003, 0.004, 0.005]) == pytest.approx(0.001)  # a series cut to a window


def test_rebin_drops_the_incomplete_last_group_and_never_narrows() -> None:
    t, v = m.rebin(T[:10], np.arange(10.0), 3 * MS)
    assert list(t) == pytest.approx([3 * MS, 6 * MS, 9 * MS])
    assert list(v) == [1.0, 4.0, 7.0]
    t, v = m.rebin(T[:10], np.arange(10.0), 0.3 * MS)
    assert list(t) == list(T[:10]) and list(v) == list(np.arange(10.0))


def test_window_sum_weighs_each_bin_by_its_share_of_the_window() -> None:
    # half of bin 1, bins 2 and 3, half of bin 4 (bin i holds i)
    assert m.window_sum(T[:10], np.arange(10.0), (0.0015, 0.0045)) == pytest.approx(0.5 + 2 + 3 + 2)


def test_bins_overlapping_a_window_exclude_those_that_only_touch_it() -> None:
    # bins of 1 ms ending at 1..10 ms; bin i covers ((i - 1) ms, i ms]
    assert list(np.nonzero(m.bins_overlapping(T[:10], (0.002, 0.0045)))[0] + 1) == [3, 4, 5]
    assert list(np.nonzero(m.bins_overlapping(T[:10], (0.002, 0.004)))[0] + 1) == [3, 4]
    assert list(np.nonzero(m.bins_overlapping(T[:10], (0.0, 0.0005)))[0] + 1) == [1]
    assert not m.bins_overlapping(T[:10], (0.004, 0.004 + 1e-13)).any()


def test_first_peak_after_a_late_start() -> None:
    # a first peak of 10 at 20 ms, a fall to exactly 80 % of it, then a higher maximum at 30 ms
    v = at((20, 10.0), (21, 8.0), (30, 20.0), base=1.0)
    assert m.first_peak_time(T, v, 0.01, 0.05) == pytest.approx(0.01, abs=1e-12)
    # a plateau peaks at its first sample
    v = at((20, 10.0), (21, 10.0), (22, 8.0), (30, 20.0), base=1.0)
    assert m.first_peak_time(T, v, 0.01, 0.05) == pytest.approx(0.01, abs=1e-12)
    # a fall to exactly 1 − drop of the peak counts
    v = at((20, 10.0), (21, 7.5), (30, 20.0), base=9.0)
    assert m.first_peak_time(T, v, 0.01, 0.05, drop=0.25) == pytest.approx(0.01, abs=1e-12)
    # no fall of 20 % before the end: the time of the maximum
    v = at((20, 10.0), (21, 8.5), (30, 20.0), base=9.0)
    assert m.first_peak_time(T, v, 0.01, 0.03) == pytest.approx(0.02, abs=1e-12)


def test_crossing_counts_from_the_first_bin_starting_at_start_and_at_the_level_itself() -> None:
    # the bin ending at 20 ms lies before the start; the one ending at 25 ms is exactly at the level
    v = at((20, 9.0), (25, 8.5), base=2.0)
    assert m.crossing_time(T, v, 0.02, 8.5) == pytest.approx(0.005, abs=1e-12)
    v = at((20, 1.0), (25, 2.0), base=5.0)
    assert m.crossing_time(T, v, 0.02, 2.0, above=False) == pytest.approx(0.005, abs=1e-12)


def test_sustained_from_the_first_bin_at_the_level_with_the_floor_inclusive() -> None:
    level = 10.0
    # from 10 ms: the first bin at exactly the level, then two at exactly the 90 % floor: 3 ms
    v = at((10, level), (11, level), (12, 9.0), (13, 9.0), base=0.0)
    assert m.sustained_time(T, v, 0.01, level, hold=3 * MS) == pytest.approx(0.001, abs=1e-12)
    # a stretch one bin short of the hold, and a stretch that starts before the start, do not count
    assert m.sustained_time(T, v, 0.01, level, hold=4 * MS) == math.inf


def test_settle_from_the_first_sample_with_the_band_edges_inclusive() -> None:
    target = 10.0
    # from 10.5 ms: inside the ±20 % band from the first sample (12 and 8 are its edges) to 17 ms
    v = at((11, 12.0), (12, 8.0), (13, 12.0), (14, 8.0), (15, 12.0), (16, 10.0), (17, 10.0))
    assert m.settle_time(T, v, 0.0105, target, hold=5 * MS) == pytest.approx(0.0005, abs=1e-12)
    # after one sample outside, the settling time is the next sample's
    v[10] = 13.0
    assert m.settle_time(T, v, 0.0105, target, hold=5 * MS) == pytest.approx(0.0015, abs=1e-12)
    assert m.settle_time([], [], 0.0, target) == math.inf
    # a stretch is read sample by sample: one sample outside ends it
    v = at((11, 10.0), (12, 10.0), (13, 0.0), *((ms, 10.0) for ms in range(14, 21)))
    assert m.settle_time(T, v, 0.0105, target, hold=5 * MS) == pytest.approx(0.0035, abs=1e-12)


def test_spectral_period_at_the_edges_of_the_spectrum() -> None:
    n, dt = 400, 10e-6
    t = np.arange(1, n + 1) * dt
    record = n * dt
    i = np.arange(n)
    # two cycles per record: the lowest frequency the default min_cycles keeps, not refined
    two = np.sin(2 * np.pi * 2 * i / n)
    assert m.spectral_period(t, two) == pytest.approx(record / 2, rel=1e-12)
    # one cycle counts only when asked for
    one = np.sin(2 * np.pi * i / n)
    assert m.spectral_period(t, one, min_cycles=1) == pytest.approx(record, rel=1e-12)
    # the Nyquist frequency: the highest bin, not refined
    alternating = np.where(i % 2 == 0, 1.0, -1.0)
    assert m.spectral_period(t, alternating) == pytest.approx(2 * dt, rel=1e-12)
    # a trend 100 times the oscillation is removed, not doubled
    period = record / 7.4
    steep = np.sin(2 * np.pi * t / period) + 100 * t / record
    assert m.spectral_period(t, steep) == pytest.approx(period, rel=0.02)
    # eight samples are enough; a min_cycles that leaves no bin inside the spectrum is not
    assert m.spectral_period(t[:8], two[::50]) == pytest.approx(8 * dt / 2, rel=1e-12)
    assert math.isnan(m.spectral_period(t[:8], two[::50], min_cycles=4))


def test_slope_jain_and_gain_at_their_edges() -> None:
    assert m.linear_slope([0.0, 2.0], [1.0, 5.0]) == pytest.approx(2.0)
    assert math.isnan(m.linear_slope([1.0], [1.0]))
    assert m.jain(3.0) == 1.0
    assert math.isnan(float(m.jain([0.0, 0.0])))
    assert m.lag_delay_ultimate_gain(0.0) == math.inf
    assert m.lag_delay_ultimate_gain(-1.0) == math.inf


def test_a_stretch_may_end_with_the_record() -> None:
    # inside (and at the level) from 95 ms to the last sample, 100 ms: exactly the 5 ms hold
    v = np.where(T >= 0.095 - 1e-9, 10.0, 0.0)
    assert m.settle_time(T, v, 0.05, 10.0, hold=5 * MS) == pytest.approx(0.045, abs=1e-12)
    assert m.sustained_time(T, v, 0.05, 10.0, hold=6 * MS) == pytest.approx(0.045, abs=1e-12)  # bins from 94 ms
    # the record cuts the stretch shorter than the hold: it still counts (nothing broke it), where
    # the same stretch ended by a bin below the floor does not
    assert m.sustained_time(T, v, 0.05, 10.0, hold=7 * MS) == pytest.approx(0.045, abs=1e-12)
    assert m.sustained_time(T[:-1], v[:-1], 0.05, 10.0, hold=7 * MS) == pytest.approx(0.045, abs=1e-12)
    v[-1] = 0.0
    assert m.sustained_time(T, v, 0.05, 10.0, hold=7 * MS) == math.inf
