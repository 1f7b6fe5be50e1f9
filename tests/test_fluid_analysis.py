"""The figures `cnsim fluid` reads off a trajectory (`cnsim/fluid/analysis.py`): the window, the
dominant period of an oscillation, the ringing period of a decaying transient and the onset's
prominent maxima. The same functions measure the fluid trajectory and the packet run's binned
queue (docs/fluid.md), so they are checked here on signals whose answer is known exactly."""

from __future__ import annotations

import numpy as np
import pytest
from cnsim.fluid.analysis import dominant_period, onset_period, prominent_maxima, ringing_period, window_mask

DT = 1e-5


def _sine(n: int, period_samples: float, offset: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """A sine of ``period_samples`` samples at 10 us, from t = 0.1 s (the time axis need not start
    at 0)."""
    t = 0.1 + np.arange(n) * DT
    return t, offset + np.sin(2 * np.pi * t / (period_samples * DT))


def test_the_window_is_half_open() -> None:
    t = np.array([0.0, 1.0, 2.0, 3.0, 4.0])
    assert window_mask(t, (1.0, 3.0)).tolist() == [False, True, True, False, False]


@pytest.mark.parametrize(("n", "period_samples", "rel"), [(2000, 20.25, 2e-4), (2000, 20.5, 5e-4), (400, 20.5, 2e-3), (100, 30.0, 1e-2)])
def test_the_dominant_period_of_a_sine_is_its_period(n: int, period_samples: float, rel: float) -> None:
    """Between samples (20.25 and 20.5 samples a period), on a mean far from zero, and on short
    series. At 20.5 samples the lag of two periods (41) is a whole number of samples and a plain
    maximum over all lags would pick it: the first lobe's peak is the period. On 100 samples
    (3.3 periods) the phase the series starts at moves the answer by up to 1 %; a biased
    autocorrelation (the plain sum over n − k products) would add 1.1 % more, all short. Without
    the parabola the answer is a whole number of samples (1.2 % off at 20.25)."""
    t, x = _sine(n, period_samples, offset=3.0)
    assert dominant_period(t, x) == pytest.approx(period_samples * DT, rel=rel)


def test_a_damped_oscillation_gives_its_period() -> None:
    """x = e^(−t/8 ms)·cos(2πt/1.37 ms), 40 ms at 10 us. The decay tilts each lobe of the
    autocorrelation towards shorter lags, by about T²/(4π²·8 ms) = 0.4 % of the period at first
    order: 0.8 % short in all."""
    t = np.arange(4000) * DT
    x = np.exp(-t / 8e-3) * np.cos(2 * np.pi * t / 1.37e-3)
    assert dominant_period(t, x) == pytest.approx(1.37e-3 * (1 - 0.008), rel=1e-3)


def test_no_dominant_period_without_an_oscillation_in_the_half_searched() -> None:
    """Flat, too short (fewer than 8 samples: eight give a rough period of 2.2 samples, seven
    none), noise, a period longer than half the series (the first positive lobe runs past the
    half searched) and a ramp (no zero crossing back up) have none."""
    t, x = _sine(1000, 20.0)
    assert dominant_period(t, np.full(1000, 4.2)) is None
    t8, x8 = _sine(8, 2.2)
    assert dominant_period(t8, x8) == pytest.approx(2.2 * DT, rel=0.1)
    assert dominant_period(t8[:7], x8[:7]) is None
    noise = np.random.default_rng(1).normal(size=1000)
    assert dominant_period(t, noise) is None
    assert dominant_period(t, noise, min_corr=-1.0) is not None  # only the threshold refused it
    t100, slow = _sine(100, 60.0)
    assert dominant_period(t100, slow) is None
    ramp = np.arange(1000.0)
    assert dominant_period(t, ramp) is None  # negative from lag 367 on
    assert dominant_period(t[:9], ramp[:9]) is None  # never negative in its first 4 lags


def test_a_level_with_rounding_noise_is_flat_but_a_small_swing_is_not() -> None:
    """Flat means a std of at most 1e-9 of the series' magnitude: a 150 KB queue swinging by
    ±1e-5 B is flat, by ±1e-3 B (std 7e-4 B, over 1e-9 × 150 KB = 1.5e-4 B) it oscillates. Around
    zero the floor is 1e-9 itself: ±2.1e-9 (std 1.5e-9) oscillates."""
    t, x = _sine(1000, 25.0)
    assert dominant_period(t, 150e3 + 1e-5 * x) is None
    assert dominant_period(t, 150e3 + 1e-3 * x) == pytest.approx(25 * DT, rel=1e-3)
    assert dominant_period(t, 1e-9 * x) is None
    assert dominant_period(t, 2.1e-9 * x) == pytest.approx(25 * DT, rel=1e-3)


def test_ringing_period_is_the_median_spacing_of_the_upward_crossings() -> None:
    """Upward crossings of the level, interpolated between samples: −2 → 1 crosses 0 two thirds
    of the way, −2 → 3 two fifths of the way; a sample exactly at the level is a crossing."""
    t = np.arange(7.0)
    assert ringing_period(t[:5], np.array([0.0, -2.0, 1.0, -2.0, 3.0]), 0.0, min_amplitude=1.0) == pytest.approx(3.4 - 5 / 3)
    assert ringing_period(t[:4], np.array([-2.0, 0.0, -2.0, 0.0]), 0.0, min_amplitude=1.0) == 2.0
    # around a level of 5: the same crossings shifted up
    assert ringing_period(t[:5], np.array([5.0, 3.0, 6.0, 3.0, 8.0]), 5.0, min_amplitude=1.0) == pytest.approx(3.4 - 5 / 3)


def test_ringing_crossings_count_only_after_a_dip_of_the_minimum_amplitude() -> None:
    """The dip to −0.5 between the second and third samples is smaller than the minimum
    amplitude (1): the crossing after it does not count, so the spacing is 4, not 2. A dip to
    exactly −1 does not arm a crossing either; one below it does."""
    t = np.arange(7.0)
    assert ringing_period(t, np.array([0.0, -2.0, 1.0, -0.5, 1.0, -2.0, 1.0]), 0.0, min_amplitude=1.0) == pytest.approx(4.0)
    assert ringing_period(t, np.array([0.0, -2.0, 1.0, -1.0, 1.0, -2.0, 1.0]), 0.0, min_amplitude=1.0) == pytest.approx(4.0)
    assert ringing_period(t, np.array([0.0, -2.0, 1.0, -1.01, 1.0, -2.0, 1.0]), 0.0, min_amplitude=1.0) == pytest.approx(2.0)
    # the first sample arms a crossing only when it is itself below the level by the amplitude
    assert ringing_period(t, np.array([0.5, -0.5, 1.0, -2.0, 1.0, -2.0, 1.0]), 0.0, min_amplitude=1.0) == pytest.approx(2.0)
    assert ringing_period(t, np.array([-1.0, 1.0, 1.0, -2.0, 1.0, -2.0, 1.0]), 0.0, min_amplitude=1.0) == pytest.approx(2.0)
    ups = [0.6, 3 + 2 / 3, 5 + 2 / 3]  # −1.5 → 1 crosses 0 at 0.6
    assert ringing_period(t, np.array([-1.5, 1.0, 1.0, -2.0, 1.0, -2.0, 1.0]), 0.0, min_amplitude=1.0) == pytest.approx(
        float(np.median(np.diff(ups))))


def test_ringing_of_a_decaying_transient_and_too_few_crossings() -> None:
    """x = Qeq + A·e^(−t/5 ms)·sin(2πt/1.337 ms) crosses Qeq upwards at every whole period (the
    first, at the start, is not armed), each between two samples at its own phase (the period
    is 133.7 samples); crossings stop once the swing is under the minimum amplitude, and one
    crossing alone gives no period."""
    t = 0.1 + np.arange(3000) * DT
    x = 150e3 + 60e3 * np.exp(-(t - 0.1) / 5e-3) * np.sin(2 * np.pi * (t - 0.1) / 1.337e-3)
    assert ringing_period(t, x, 150e3, min_amplitude=3e3) == pytest.approx(1.337e-3, rel=1e-4)
    assert ringing_period(t, x, 150e3, min_amplitude=59e3) is None
    assert ringing_period(t, np.full(3000, 150e3), 150e3, min_amplitude=3e3) is None


def test_prominent_maxima_need_a_fall_of_the_drop_between_them() -> None:
    """Range 10.5: with drop 0.2 a maximum needs a fall of 2.1 after it and the next a rise of
    2.1 above the minimum in between, so 10 (followed by 9) and 2 (followed by 1) are not
    maxima; with drop 0.05 (0.525) they are. A maximum the series never falls from is not one."""
    t = np.arange(9.0)
    x = np.array([0.0, 10.0, 9.0, 10.5, 0.0, 2.0, 1.0, 7.0, 0.0])
    assert prominent_maxima(t, x, smooth_s=1.0) == [3.0, 7.0]
    assert prominent_maxima(t, x, smooth_s=1.0, drop=0.05) == [1.0, 3.0, 5.0, 7.0]
    assert prominent_maxima(t, x + 100.0, smooth_s=1.0) == [3.0, 7.0]  # the range, not the level
    assert prominent_maxima(t[:8], x[:8], smooth_s=1.0) == [3.0]
    assert prominent_maxima(t, np.full(9, 3.0), smooth_s=1.0) == []
    assert prominent_maxima(t[:2], x[:2], smooth_s=1.0) == []
    assert prominent_maxima(t[:3], np.array([0.0, 10.0, 0.0]), smooth_s=1.0) == [1.0]  # three samples are enough
    # a series that starts at its maximum; on a time axis that does not start at 0
    assert prominent_maxima(t[:4] + 0.5, np.array([10.0, 0.0, 10.0, 0.0]), smooth_s=1.0) == [0.5, 2.5]


def test_a_maximum_after_a_rise_smaller_than_the_drop_is_not_prominent() -> None:
    """Range 12, drop 0.2 (2.4): after the maximum at 1 the series falls to 0, rises by 1 and
    falls to −2; that bump is not a maximum, the rise of 12 to the sample at 5 is."""
    t = np.arange(7.0)
    assert prominent_maxima(t, np.array([0.0, 10.0, 0.0, 1.0, -2.0, 10.0, 0.0]), smooth_s=1.0) == [1.0, 5.0]


def test_the_onset_period_is_read_through_a_moving_average() -> None:
    """A 4 ms sine with an alternating ±0.5 at every sample on top: unsmoothed, every other
    sample is a maximum; the 0.5 ms moving average (50 samples of 10 us) removes the alternation
    and leaves the sine's maxima, 4 ms apart. With fewer than two maxima there is no period."""
    t = 0.1 + np.arange(1200) * DT
    x = np.sin(2 * np.pi * (t - 0.1) / 4e-3) + 0.5 * (-1.0) ** np.arange(1200)
    assert len(prominent_maxima(t, x, smooth_s=DT)) > 100
    peaks = prominent_maxima(t, x)
    assert len(peaks) == 3 and peaks[0] == pytest.approx(0.101, abs=DT)
    assert onset_period(t, x) == pytest.approx(4e-3, abs=DT / 2)
    assert onset_period(t[:800], x[:800]) == pytest.approx(4e-3, abs=DT / 2)  # exactly two maxima
    assert onset_period(t[:400], x[:400]) is None
    # two samples are the shortest average: it removes the alternation too
    assert len(prominent_maxima(t, x, smooth_s=2 * DT)) == 3
