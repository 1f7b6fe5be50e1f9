"""What every fluid model shares (docs/fluid.md): the grid of parameter points one integration
runs at once (:class:`_Grid`: per point and flow group the offered load, line rate, loop delay,
service windows, buffer and backlog caps), the record of its trajectories (:class:`FluidRun`)
and the cycle-completion rate of the QCN-style byte counters and timers (:func:`_cycles`).
:mod:`.models` (BCN, QCN) and :mod:`.dcqcn` build on it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from .dde import solve_dde
from .params import FluidParams

__all__ = ["FluidRun"]

Array = NDArray[np.float64]


@dataclass
class FluidRun:
    """Trajectories of a grid of fluid models: ``t`` (T,), ``queue`` (T, P) bytes,
    ``rates`` (T, P, G) sending rate b/s per flow of each group, ``limiter`` (T, P, G) the rate
    limiter's rate λ (QCN: R_C), ``target`` (QCN R_T or None), ``backlog`` (T, P, G) bytes
    waiting at each source (or None), ``fb`` (T, P) bytes (instantaneous Fb), ``aggregate``
    (T, P) b/s into the CP."""

    params: list[FluidParams]
    t: Array
    queue: Array
    rates: Array
    limiter: Array
    target: Array | None
    backlog: Array | None
    fb: Array
    aggregate: Array
    h: float
    #: DCQCN: α (T, P, G); its ``fb`` is the marking probability p(q)
    alpha: Array | None = None


class _Grid:
    """The numeric fields of a list of FluidParams as (P, 1) / (P, G) arrays."""

    # one (P, 1) column per numeric parameter, set from FluidParams by name in __init__
    w: Array
    qeq: Array
    ps: Array
    oversample: Array
    fbmax: Array
    qmc: Array
    gd: Array
    gi: Array
    ru: Array
    rmin: Array
    drift_bps_per_s: Array
    bc_frames: Array
    timer_s: Array
    f_stages: Array
    r_ai: Array
    min_dec: Array
    pmin: Array
    pmax: Array
    buffer_bytes: Array
    frame_bits: Array
    link_bps: Array
    tau_s: Array
    backlog_cap_bytes: Array

    def __init__(self, params: list[FluidParams]) -> None:
        p0 = params[0]
        G = len(p0.groups)
        if any(len(p.groups) != G or p.scheme != p0.scheme for p in params):
            raise ValueError("every grid point needs the same scheme and number of flow groups")

        def col(name: str) -> Array:
            return np.array([[float(getattr(p, name))] for p in params])

        self.P, self.G = len(params), G
        self.scheme = p0.scheme
        for name in ("w", "qeq", "ps", "oversample", "fbmax", "qmc", "gd", "gi", "ru", "rmin", "drift_bps_per_s",
                     "bc_frames", "timer_s", "f_stages", "r_ai", "min_dec", "pmin", "pmax", "buffer_bytes",
                     "frame_bits", "link_bps", "tau_s", "backlog_cap_bytes"):
            setattr(self, name, col(name))
        self.backlog_cap = self.backlog_cap_bytes
        self.bcn_max = np.array([[p.bcn_max] for p in params])
        self._no_os = bool(np.all(self.oversample == 1.0))
        self._any_max = bool(self.bcn_max.any())
        self.neg_gate = np.array([[p.negative_only_above_qeq] for p in params])
        self.sampling = p0.sampling
        self.after_increase = p0.extra.get("target_update", "always") == "after_increase"
        self.count = np.array([[g.count for g in p.groups] for p in params], dtype=np.float64)
        self.offered = np.array([[g.offered_bps for g in p.groups] for p in params])
        self.line = np.array([[g.line_bps for g in p.groups] for p in params])
        self.start = np.array([[g.start_s for g in p.groups] for p in params])
        self.stop = np.array([[g.stop_s for g in p.groups] for p in params])
        self.upper = np.minimum(self.offered, self.line)
        hw = [p.mu_windows[0] if p.mu_windows else (0.0, 0.0, 1.0) for p in params]
        self.h_start = np.array([[w[0]] for w in hw])
        self.h_end = np.array([[w[1]] for w in hw])
        self.h_frac = np.array([[w[2]] for w in hw])

        self.uniform_windows = bool(np.all(self.h_start == self.h_start[0]) and np.all(self.h_end == self.h_end[0])
                                    and np.all(self.start == self.start[0]) and np.all(self.stop == self.stop[0]))
        self._mu_in = self.link_bps * self.h_frac
        self._ones = np.ones((self.P, G))
        self._zeros = np.zeros((self.P, G))

    def mu(self, t: Array | float) -> Array:
        """Service rate (P, 1) at time(s) t (scalar or (P, 1))."""
        if isinstance(t, float) and self.uniform_windows:
            return self._mu_in if self.h_start[0, 0] <= t < self.h_end[0, 0] else self.link_bps
        inside = (t >= self.h_start) & (t < self.h_end)
        return self.link_bps * np.where(inside, self.h_frac, 1.0)

    def active(self, t: Array | float) -> Array:
        """(P, G) 1.0 where the group's flows are sending at time(s) t."""
        if isinstance(t, float) and self.uniform_windows and self.G == 1:
            return self._ones if self.start[0, 0] <= t < self.stop[0, 0] else self._zeros
        return ((t >= self.start) & (t < self.stop)).astype(np.float64)

    def total(self, send: Array) -> Array:
        """Σ over groups of count × per-flow rate, (P, 1)."""
        if self.G == 1:
            return self.count * send
        summed: Array = np.sum(self.count * send, axis=1, keepdims=True)
        return summed

    def sampling_p(self, fb: Array, q: Array) -> Array:
        """Per-frame sampling probability (P, 1) given the last feedback and the queue."""
        if self.sampling == "linear":
            neg = np.minimum(np.maximum(-fb / self.fbmax, 0.0), 1.0)
            return self.pmin + (self.pmax - self.pmin) * neg
        if self.sampling == "table":
            quanta = np.floor(np.clip(-fb, 0.0, None) * 63.0 / self.fbmax)
            idx = np.minimum(np.floor(quanta / 8.0), 7).astype(np.int64)
            table = np.array([150.0, 75.0, 50.0, 37.5, 30.0, 25.0, 21.5, 18.5]) * 1000.0 * 8.0
            return np.minimum(self.frame_bits / table[idx], 1.0)
        if self._no_os:
            return self.ps
        return self.ps * np.where(q > self.qeq, self.oversample, 1.0)

    def feedback(self, q: Array, agg: Array, mu: Array, p: Array) -> Array:
        """Fb (P, 1) from queue, arrival rate, service rate and sampling probability."""
        dq = (agg - mu) / 8.0
        dq = np.where(((q <= 0.0) & (dq < 0.0)) | ((q >= self.buffer_bytes) & (dq > 0.0)), 0.0, dq)
        spacing = self.frame_bits / (p * np.maximum(agg, 1.0))
        fb = -((q - self.qeq) + self.w * spacing * dq)
        fb = np.minimum(np.maximum(fb, -self.fbmax), self.fbmax)
        if not self._any_max:
            return fb
        return np.where(self.bcn_max & (q >= self.qmc), -self.fbmax, fb)


def _integrate(rhs: Callable[[float, Array, Array], Array], project: Callable[[float, Array], Array], x0: Array,
               g: _Grid, *, t_start: float, t_end: float, h: float, record_dt: float) -> tuple[Array, Array]:
    """(recorded times, states) of a model integrated from ``t_start`` with linear history,
    recorded every ``record_dt`` (at least every step) and extended back to t = 0 with the
    initial state: the models start before anything happens, so nothing happens before t_start."""
    every = max(1, int(round(record_dt / h)))
    sol = solve_dde(rhs, x0, g.tau_s[:, 0], t_end, h, t0=t_start, project=project, record_every=every,
                    interpolation="linear")
    xs, times = sol.x, sol.t
    if t_start > 0:  # the constant state before t_start
        pre = np.arange(0.0, t_start, record_dt)
        times = np.concatenate([pre, times])
        xs = np.concatenate([np.repeat(xs[:1], pre.size, axis=0), xs])
    return times, xs


def _cycles(sigma: Array, frames: Array) -> Array:
    """g(σ, B) = σ/((1 − σ)^(−B) − 1): cycle completions per frame, → 1/B as σ → 0."""
    x = np.minimum(-frames * np.log1p(-np.minimum(sigma, 0.999999)), 700.0)
    small = x < 1e-9
    return np.where(small, 1.0 / np.maximum(frames, 1e-300), sigma / np.where(small, 1.0, np.expm1(x)))
