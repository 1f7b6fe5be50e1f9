"""Figures of a trajectory: window means and the dominant oscillation period.

Used alike on fluid trajectories and on the packet simulator's binned queue series, so the two
are measured the same way (spec/algorithms.md §11: "Underdamped oscillation period ~ 2π/ω_c").
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

__all__ = ["dominant_period", "window_mask", "ringing_period", "prominent_maxima", "onset_period"]

Array = NDArray[np.float64]


def window_mask(t: Array, window: tuple[float, float]) -> NDArray[np.bool_]:
    """Samples with window[0] <= t < window[1]."""
    return (t >= window[0]) & (t < window[1])


def dominant_period(t: Array, x: Array, *, min_corr: float = 0.2) -> float | None:
    """The lag of the autocorrelation's first peak after its first zero crossing: the largest
    value of its first positive lobe, refined by a parabola through it and its neighbours.

    ``t`` uniformly spaced. The autocorrelation is unbiased (lag k sums n − k products, so each
    lag is divided by n − k: a plain sum would pull the peak of an oscillation towards shorter
    lags) and searched over the first half of the series. Returns None when the series is flat
    (its std at most 1e-9 of its largest magnitude, or of 1), when no positive lobe starts and
    ends within that half, or when the peak's correlation is below ``min_corr`` (no significant
    oscillation).
    """
    x = np.asarray(x, dtype=np.float64)
    n = x.size
    if n < 8 or float(np.std(x)) <= 1e-9 * max(1.0, float(np.max(np.abs(x)))):
        return None
    x = x - float(np.mean(x))
    half = n // 2
    spec = np.fft.rfft(x, 2 * n)  # padded to 2n: the linear, not the circular, autocorrelation
    ac = np.fft.irfft(spec * np.conj(spec))[:half] / (n - np.arange(half))
    ac = ac / ac[0]
    below = np.nonzero(ac < 0)[0]
    if below.size == 0:
        return None
    back = np.nonzero(ac[below[0]:] >= 0)[0]
    if back.size == 0:
        return None
    start = int(below[0] + back[0])
    ends = np.nonzero(ac[start:] < 0)[0]
    if ends.size == 0:  # the lobe runs past the half searched: its peak may lie beyond
        return None
    k = start + int(np.argmax(ac[start:start + int(ends[0])]))
    if ac[k] < min_corr:
        return None
    # the peak lies inside the lobe, so both neighbours exist and the parabola opens downwards
    a, b, c = ac[k - 1], ac[k], ac[k + 1]
    return float((k + 0.5 * (a - c) / (a - 2 * b + c)) * (t[1] - t[0]))


def ringing_period(t: Array, x: Array, level: float, *, min_amplitude: float) -> float | None:
    """Median spacing of the upward crossings of ``level`` by ``x`` (with hysteresis).

    For a transient that rings and decays (a stable fluid loop after the hotspot starts):
    crossings count only once ``x`` has gone below ``level − min_amplitude`` since the last one.
    None with fewer than two crossings.
    """
    ups: list[float] = []
    armed = bool(x.size and x[0] < level - min_amplitude)  # a series may start below the level
    for i in range(1, x.size):
        if x[i] < level - min_amplitude:
            armed = True
        elif armed and x[i - 1] < level <= x[i]:
            frac = (level - x[i - 1]) / (x[i] - x[i - 1])
            ups.append(float(t[i - 1] + frac * (t[i] - t[i - 1])))
            armed = False
    if len(ups) < 2:
        return None
    return float(np.median(np.diff(ups)))


def prominent_maxima(t: Array, x: Array, *, smooth_s: float = 5e-4, drop: float = 0.2) -> list[float]:
    """Times of the maxima of ``x`` that stand out: after a moving average over ``smooth_s``, a
    maximum counts once the series has fallen ``drop`` × (its range) below it, and the next one
    only after it has risen as much above the minimum in between (hysteresis). ``t`` uniform."""
    x = np.asarray(x, dtype=np.float64)
    if x.size < 3:
        return []
    k = max(1, int(round(smooth_s / (t[1] - t[0]))))
    xs = np.convolve(x, np.ones(k) / k, mode="same") if k > 1 else x
    h = drop * float(np.max(xs) - np.min(xs))
    if h <= 0:
        return []
    out: list[float] = []
    rising, ext, at = True, xs[0], 0
    for i, v in enumerate(xs):
        if rising:
            if v > ext:
                ext, at = v, i
            elif v < ext - h:
                out.append(float(t[at]))
                rising, ext, at = False, v, i
        elif v < ext:
            ext, at = v, i
        elif v > ext + h:
            rising, ext, at = True, v, i
    return out


def onset_period(t: Array, x: Array, *, smooth_s: float = 5e-4, drop: float = 0.2) -> float | None:
    """The ringing period of a transient: the time from its first prominent maximum (the onset
    overshoot) to the next (:func:`prominent_maxima`). None with fewer than two."""
    peaks = prominent_maxima(t, x, smooth_s=smooth_s, drop=drop)
    return peaks[1] - peaks[0] if len(peaks) >= 2 else None
