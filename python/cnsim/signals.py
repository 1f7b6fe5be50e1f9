"""Signal metrics of targets.md §A on binned series (issue 12, item 2): periods, onsets,
settling and recovery times, time statistics.

Pure functions on numpy arrays, independent of run folders, so each one is tested against
analytic inputs (tests/test_check.py: a pure sine's period, a step's settle time, ...).
:func:`cnsim.results.build_summary` applies them to a run's series for summary.json's
``dynamics``; :mod:`cnsim.check.extract` to the series of a run folder for the checks.

Series conventions (spec/contract.md "series"): a *binned* signal (throughput in Gb/s, drop and
CM counts) holds one value per bin, reported at the bin's end ``t``; bin *i* covers
``[t_i − width, t_i]``. A *sampled* signal (queue bytes) is the value at the bin's end. The
queue statistics of §A ("std" = time std of a signal sampled every 10 us) use the samples inside
the window, so runs that need them are recorded with ``metrics.bin = 10us``.

Windows (§A): ``all`` = the whole run; ``ss`` = [t_on + 0.1 s, t_off]; ``tr`` = [t_on, t_on +
50 ms]; ``rec`` = [t_off, t_off + 100 ms]; ``last100`` = [t_off − 100 ms, t_off] (T-Z15, "the last
100 ms of the hotspot"); ``after`` = [t_off, end of the run], the horizon of a recovery *time* (a
first-passage time is not cut at W_rec's 100 ms: a port that comes back after 150 ms has a time,
not ``inf``). :func:`named_windows` builds them from the hotspot (or traffic) times.

Times that never happen inside the run (a queue that never settles, a port that never recovers)
are ``inf``, so "A recovers more slowly than B" holds when A never recovers and B does; a
quantity that does not exist (no oscillation in a flat queue) is ``nan``, which fails every
comparison.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "WINDOW_NAMES",
    "Window",
    "bin_width",
    "bins_overlapping",
    "crossing_time",
    "sustained_time",
    "first_peak_time",
    "jain",
    "lag_delay_ultimate_gain",
    "linear_slope",
    "named_windows",
    "rebin",
    "samples_in",
    "settle_time",
    "spectral_period",
    "time_cv",
    "time_std",
    "window_mean",
    "window_sum",
]

Array = NDArray[np.float64]
Window = tuple[float, float]

#: window names a check may use (§A), besides an explicit ``[t0, t1]`` and ``main``
WINDOW_NAMES = ("all", "ss", "tr", "rec", "last100", "after")
_EPS = 1e-12


def named_windows(t_on: float | None, t_off: float | None, duration: float, settle: float = 0.1,
                  transient: float = 0.05, recovery: float = 0.1) -> dict[str, Window]:
    """§A windows of a run of ``duration`` s whose hotspot (or offered overload) is [t_on, t_off].

    Without a hotspot only ``all`` exists. Windows are clipped to the run; one that is empty after
    clipping is left out (the caller says which window is missing).
    """
    out: dict[str, Window] = {"all": (0.0, duration)}
    if t_on is None:
        return out
    end = duration if t_off is None else min(t_off, duration)
    candidates = {
        "ss": (t_on + settle, end),
        "tr": (t_on, min(t_on + transient, duration)),
        "rec": (end, min(end + recovery, duration)),
        "last100": (max(t_on, end - recovery), end),
        "after": (end, duration),
    }
    for name, (a, b) in candidates.items():
        if b - a > _EPS:
            out[name] = (a, b)
    return out


def bin_width(t_end: ArrayLike) -> float:
    """The bin width of a series reported at bin ends (the first bin starts at 0)."""
    t = np.asarray(t_end, dtype=np.float64)
    if t.size == 0:
        return 0.0
    if t.size == 1:
        return float(t[0])
    return float(np.median(np.diff(t)))


def _overlap(t_end: Array, width: float, window: Window) -> Array:
    """Fraction of each bin that lies inside the window."""
    start = t_end - width
    inside = np.clip(np.minimum(t_end, window[1]) - np.maximum(start, window[0]), 0.0, None)
    return inside / width if width > 0 else np.zeros_like(t_end)


def window_mean(t_end: ArrayLike, values: ArrayLike, window: Window) -> float:
    """Time mean of a binned rate over the window (bins weighted by their overlap); nan if empty."""
    t = np.asarray(t_end, dtype=np.float64)
    v = np.asarray(values, dtype=np.float64)
    w = _overlap(t, bin_width(t), window)
    total = float(np.sum(w))
    return float(np.sum(w * v) / total) if total > _EPS else math.nan


def window_sum(t_end: ArrayLike, values: ArrayLike, window: Window) -> float:
    """Sum of a binned count over the window (a bin cut by the window counts pro rata)."""
    t = np.asarray(t_end, dtype=np.float64)
    v = np.asarray(values, dtype=np.float64)
    return float(np.sum(_overlap(t, bin_width(t), window) * v))


def in_window(t: ArrayLike, window: Window) -> NDArray[np.bool_]:
    """Which sample times lie inside the window (t0 < t <= t1)."""
    t = np.asarray(t, dtype=np.float64)
    return (t > window[0] + _EPS) & (t <= window[1] + _EPS)


def bins_overlapping(t_end: ArrayLike, window: Window) -> NDArray[np.bool_]:
    """Which bins of a series reported at bin ends share more than a picosecond with the window
    (a bin that only touches it, such as the one ending at its start, does not)."""
    t = np.asarray(t_end, dtype=np.float64)
    width = bin_width(t)
    return _overlap(t, width, window) * width > _EPS


def samples_in(t: ArrayLike, values: ArrayLike, window: Window) -> tuple[Array, Array]:
    """The samples of a sampled signal taken inside the window (t0 < t <= t1)."""
    t = np.asarray(t, dtype=np.float64)
    v = np.asarray(values, dtype=np.float64)
    mask = in_window(t, window)
    return t[mask], v[mask]


def time_std(values: ArrayLike) -> float:
    """Standard deviation of uniformly spaced samples (population std); nan if empty."""
    v = np.asarray(values, dtype=np.float64)
    return float(np.std(v)) if v.size else math.nan


def time_cv(values: ArrayLike) -> float:
    """Coefficient of variation std/mean of uniformly spaced samples; nan for a zero mean.

    The same reductions as ``np.std(v) / np.mean(v)`` (the same floats), without their
    per-call overhead: summary.json computes one per recorded flow, 4 million at 2,048 hosts
    with ``metrics.per_flow = "all"``.
    """
    v = np.asarray(values, dtype=np.float64)
    n = v.size
    if n == 0:
        return math.nan
    mean = np.add.reduce(v) / n
    if not abs(mean) > _EPS:
        return math.nan
    x = v - mean
    return float(math.sqrt(np.add.reduce(x * x) / n) / mean)


def rebin(t_end: ArrayLike, values: ArrayLike, width: float) -> tuple[Array, Array]:
    """Means of a binned rate over coarser bins of ``width`` (a whole multiple of the bin width)."""
    t = np.asarray(t_end, dtype=np.float64)
    v = np.asarray(values, dtype=np.float64)
    w0 = bin_width(t)
    if w0 <= 0 or width <= w0 * (1 + 1e-9):
        return t, v
    k = round(width / w0)
    n = (t.size // k) * k
    return t[k - 1:n:k], v[:n].reshape(-1, k).mean(axis=1)


def spectral_period(t: ArrayLike, values: ArrayLike, min_cycles: float = 2.0) -> float:
    """The period (s) of the dominant peak of the spectrum of uniformly sampled ``values``.

    The mean and linear trend are removed and a Hann window applied; the peak bin (DC excluded,
    periods longer than 1/``min_cycles`` of the record ignored) is refined by parabolic
    interpolation of the log magnitude. nan for a flat signal or fewer than 8 samples.
    """
    t = np.asarray(t, dtype=np.float64)
    x = np.asarray(values, dtype=np.float64)
    n = x.size
    if n < 8:
        return math.nan
    dt = float(np.median(np.diff(t)))
    x = x - np.polyval(np.polyfit(np.arange(n), x, 1), np.arange(n))
    if float(np.std(x)) <= 1e-9 * max(1.0, float(np.max(np.abs(values)))):
        return math.nan
    spec = np.abs(np.fft.rfft(x * np.hanning(n)))
    freqs = np.fft.rfftfreq(n, dt)
    first = max(1, math.ceil(min_cycles))  # bin k holds k cycles per record
    if first >= spec.size - 1:
        return math.nan
    k = first + int(np.argmax(spec[first:]))
    shift = 0.0
    if first < k < spec.size - 1:
        a, b, c = np.log(spec[k - 1:k + 2] + 1e-300)
        den = a - 2 * b + c
        shift = 0.5 * (a - c) / den if den != 0 else 0.0
    f = freqs[k] + shift * (freqs[1] - freqs[0])
    return float(1.0 / f) if f > 0 else math.nan


def first_peak_time(t: ArrayLike, values: ArrayLike, start: float, end: float, drop: float = 0.2) -> float:
    """Time after ``start`` of the first peak of a sampled signal in [start, end].

    A peak is a sample after which the signal falls by at least ``drop`` × its value before it
    exceeds it again; when the signal only grows, the time of its maximum. nan without samples.
    """
    tt, v = samples_in(t, values, (start, end))
    if v.size == 0:
        return math.nan
    best = 0
    for i in range(v.size):
        if v[i] > v[best]:
            best = i
        elif v[best] > 0 and v[i] <= (1 - drop) * v[best]:
            return float(tt[best] - start)
    return float(tt[int(np.argmax(v))] - start)


def crossing_time(t_end: ArrayLike, values: ArrayLike, start: float, level: float, above: bool = True) -> float:
    """Time after ``start`` until the first bin starting at or after ``start`` reaches ``level``.

    ``above``: value >= level (else value <= level). The time is measured to the end of that bin;
    inf when it never happens in the run.
    """
    t = np.asarray(t_end, dtype=np.float64)
    v = np.asarray(values, dtype=np.float64)
    width = bin_width(t)
    mask = t - width >= start - _EPS
    hit = (v >= level) if above else (v <= level)
    idx = np.nonzero(mask & hit)[0]
    return float(t[idx[0]] - start) if idx.size else math.inf


def sustained_time(t_end: ArrayLike, values: ArrayLike, start: float, level: float, hold: float,
                   floor: float = 0.9) -> float:
    """Time after ``start`` until a binned signal reaches ``level`` and then stays >= ``floor``·level for ``hold`` s.

    Measured to the end of the first bin of that stretch; inf when there is no such stretch. (A
    port that drains a backlog at line rate right after a hotspot and then falls back has not
    recovered yet.) A stretch that lasts to the end of the record counts even if the record cuts
    it shorter than ``hold``: nothing breaks it, and a port that reached the level before the end
    is not "never" (T-Z14's runs end 100 ms after the hotspot).
    """
    t = np.asarray(t_end, dtype=np.float64)
    v = np.asarray(values, dtype=np.float64)
    width = bin_width(t)
    mask = t - width >= start - _EPS
    t, v = t[mask], v[mask]
    ok = v >= floor * level
    n = t.size
    i = 0
    while i < n:
        if v[i] < level:
            i += 1
            continue
        j = i
        while j + 1 < n and ok[j + 1]:
            j += 1
        if t[j] - (t[i] - width) >= hold - _EPS or j == n - 1:
            return float(t[i] - start)
        i = j + 1
    return math.inf


def settle_time(t: ArrayLike, values: ArrayLike, start: float, target: float, tol: float = 0.2,
                hold: float = 0.005) -> float:
    """Time after ``start`` at which a sampled signal first stays within ±``tol``·target for ``hold`` s.

    inf when it never does within the record (the hold must fit inside the record).
    """
    t = np.asarray(t, dtype=np.float64)
    v = np.asarray(values, dtype=np.float64)
    mask = t >= start - _EPS
    t, v = t[mask], v[mask]
    if t.size == 0:
        return math.inf
    inside = np.abs(v - target) <= tol * abs(target)
    i = 0
    n = t.size
    while i < n:
        if not inside[i]:
            i += 1
            continue
        j = i
        while j + 1 < n and inside[j + 1]:
            j += 1
        if t[j] - t[i] >= hold - _EPS:
            return float(t[i] - start)
        i = j + 1
    return math.inf


def linear_slope(t: ArrayLike, values: ArrayLike) -> float:
    """Least-squares slope (units per s); nan with fewer than two samples."""
    t = np.asarray(t, dtype=np.float64)
    v = np.asarray(values, dtype=np.float64)
    if t.size < 2:
        return math.nan
    return float(np.polyfit(t, v, 1)[0])


def jain(values: ArrayLike, axis: int = -1) -> Array | float:
    """Jain's fairness index (Σx)²/(n·Σx²) along ``axis`` (§A)."""
    x = np.asarray(values, dtype=np.float64)
    if x.ndim == 0:
        return 1.0
    n = x.shape[axis]
    num = np.sum(x, axis=axis) ** 2
    den = n * np.sum(x * x, axis=axis)
    out = np.where(den > 0, num / np.where(den > 0, den, 1.0), math.nan)
    return float(out) if np.ndim(out) == 0 else out


def lag_delay_ultimate_gain(tau_over_t: float) -> float:
    """Ultimate gain of the loop K·e^(−sτ)/(1 + sT) (targets.md T-Q25, I-13).

    The phase crossover ω solves atan(ωT) + ωτ = π; the loop is unstable above
    K_u = sqrt(1 + (ωT)²). Solved for x = ωT by bisection on atan(x) + x·(τ/T) = π.
    """
    if tau_over_t <= 0:
        return math.inf
    lo, hi = 0.0, math.pi / tau_over_t + 10.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if math.atan(mid) + mid * tau_over_t < math.pi:
            lo = mid
        else:
            hi = mid
    x = 0.5 * (lo + hi)
    return math.sqrt(1.0 + x * x)
