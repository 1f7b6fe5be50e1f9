"""A fixed-step delay-differential-equation solver, vectorised over a parameter grid.

spec/algorithms.md §11 "Solver notes": the method of steps with the classical fourth-order
Runge–Kutta scheme (RK4) at a fixed step ``h``, a ring buffer of the state history, and the
delayed state ``x(t − τ)`` interpolated in that history; projections (queue at 0 and at the
buffer size, rates at their bounds) are applied to every stage and after every step.

The state is an array of shape ``(P, n)``: ``P`` grid points (parameter combinations) integrated
at once, ``n`` state variables. Each grid point has its own delay ``τ_p`` (a per-point history
index), all share the time step. The right-hand side receives the current state and the
delayed state and returns the derivative::

    rhs(t, x, x_delayed) -> dx/dt          # arrays of shape (P, n)

Interpolation in the history is cubic Hermite (values and derivatives at the grid points, so
the delayed terms keep the fourth-order accuracy of RK4 on smooth problems) or linear (safer
next to the non-smooth points of the projections). When ``τ_p`` is shorter than the step the
delayed time falls inside the step being taken: the delayed value is then interpolated
linearly between the state at the start of the step and the stage state (exact for τ = 0).
Before ``t0`` the history is constant (``x_hist``, spec: "Initial history: constant").
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import NDArray

__all__ = ["DdeSolution", "solve_dde"]

Array = NDArray[np.float64]
Rhs = Callable[[float, Array, Array], Array]
Projection = Callable[[float, Array], Array]


@dataclass
class DdeSolution:
    """Recorded trajectory: ``t`` (T,), ``x`` (T, P, n)."""

    t: Array
    x: Array


def solve_dde(
    rhs: Rhs,
    x0: Array,
    tau: Array | float,
    t_end: float,
    h: float,
    *,
    t0: float = 0.0,
    x_hist: Array | None = None,
    project: Projection | None = None,
    record_every: int = 1,
    interpolation: Literal["hermite", "linear"] = "hermite",
) -> DdeSolution:
    """Integrate ``x' = rhs(t, x(t), x(t − τ))`` from ``t0`` to ``t_end`` with step ``h``.

    ``x0``: initial state ``(P, n)`` (a 1-D array is one grid point); ``tau``: delay per grid
    point ``(P,)`` or a scalar, ≥ 0; ``x_hist``: the constant history before ``t0`` (default
    ``x0``); ``project(t, x)`` returns ``x`` mapped onto the admissible set (applied to every
    RK stage and to every accepted step); every ``record_every``-th step is recorded (the first
    and the last always are).
    """
    x = np.array(x0, dtype=np.float64, copy=True)
    if x.ndim == 1:
        x = x[None, :]
    P, n = x.shape
    taus = np.broadcast_to(np.asarray(tau, dtype=np.float64), (P,)).copy()
    if np.any(taus < 0) or not np.all(np.isfinite(taus)):
        raise ValueError("delays must be finite and >= 0")
    if not (np.isfinite(h) and h > 0) or not (np.isfinite(t_end) and np.isfinite(t0) and t_end > t0):
        raise ValueError("need a finite h > 0 and finite t0 < t_end")  # (the fluid models estimate steps first: .work)
    hist0 = x.copy() if x_hist is None else np.broadcast_to(np.asarray(x_hist, dtype=np.float64), (P, n)).copy()
    proj: Projection = project if project is not None else (lambda _t, y: y)
    x = proj(t0, x)
    steps = int(np.ceil((t_end - t0) / h - 1e-9))
    # ring buffer of states and derivatives at the grid times t0 + k*h
    depth = int(np.ceil(taus.max() / h)) + 3
    xs = np.zeros((depth, P, n))
    fs = np.zeros((depth, P, n))
    rows = np.arange(P)
    hermite = interpolation == "hermite"

    rec_t: list[float] = []
    rec_x: list[Array] = []

    def interp(sh: Array, k: int, r: NDArray[np.int64]) -> Array:
        """History interpolation at (fractional) step times ``sh`` in [0, k] for rows ``r``."""
        j = np.clip(np.floor(sh).astype(np.int64), 0, k - 1) if k > 0 else np.zeros(sh.shape, np.int64)
        th = (sh - j)[:, None]
        j0 = j % depth
        j1 = (j + 1) % depth
        x0_, x1_ = xs[j0, r], xs[j1, r]
        if not hermite:
            return x0_ + th * (x1_ - x0_)
        f0, f1 = fs[j0, r], fs[j1, r]
        th2 = th * th
        th3 = th2 * th
        return (
            (2 * th3 - 3 * th2 + 1) * x0_
            + (th3 - 2 * th2 + th) * h * f0
            + (-2 * th3 + 3 * th2) * x1_
            + (th3 - th2) * h * f1
        )

    def delayed(k: int, c: float, x_stage: Array) -> Array:
        """x(t_k + c*h - tau_p) for every p, with the step k's start state in slot k % depth."""
        s = (k + c) - taus / h  # delayed time in steps since t0
        smin, smax = s.min(), s.max()
        if smin >= 0.0 and smax <= k:  # fast path: every point in the recorded history
            recorded: Array = interp(s, k, rows)
            return recorded
        if smin > k and c > 0:  # fast path: every delay shorter than this stage's offset
            xk = xs[k % depth]
            ahead: Array = xk + ((s - k) / c)[:, None] * (x_stage - xk)
            return ahead
        out = np.empty((P, n))
        before = s < 0.0
        inside = s > k  # inside the current step (tau < c*h)
        hist = ~(before | inside)
        if before.any():
            out[before] = hist0[before]
        if inside.any():
            # linear between the start of the step and the stage state (tau < h)
            th = ((s[inside] - k) / c)[:, None] if c > 0 else np.zeros((int(inside.sum()), 1))
            xk = xs[k % depth][inside]
            out[inside] = xk + th * (x_stage[inside] - xk)
        if hist.any():
            out[hist] = interp(s[hist], k, rows[hist])
        # a grid point exactly at the start of the step (s == k) is taken from the buffer
        return out

    t = t0
    for k in range(steps + 1):
        slot = k % depth
        xs[slot] = x
        if k > 0:
            # A delay shorter than the step puts k1's delayed time between t_{k-1} and t_k, where
            # Hermite interpolation needs the derivative at t_k: k1 itself, not known yet. Until
            # it is, the slot holds the slope at t_k of the quadratic through x_{k-1}, f_{k-1}
            # and x_k (the cubic then reduces to that quadratic), not a value from `depth` steps
            # ago. Delays of a step or more never read it (their weight there is 0).
            prev = (k - 1) % depth
            fs[slot] = 2.0 * (x - xs[prev]) / h - fs[prev]
        # k1 at the grid point; stored for Hermite interpolation
        xd1 = delayed(k, 0.0, x)
        k1 = rhs(t, x, xd1)
        fs[slot] = k1
        if k % record_every == 0 or k == steps:
            rec_t.append(t)
            rec_x.append(x.copy())
        if k == steps:
            break
        x2 = proj(t + h / 2, x + (h / 2) * k1)
        k2 = rhs(t + h / 2, x2, delayed(k, 0.5, x2))
        x3 = proj(t + h / 2, x + (h / 2) * k2)
        k3 = rhs(t + h / 2, x3, delayed(k, 0.5, x3))
        x4 = proj(t + h, x + h * k3)
        k4 = rhs(t + h, x4, delayed(k, 1.0, x4))
        x = proj(t + h, x + (h / 6) * (k1 + 2 * k2 + 2 * k3 + k4))
        t = t0 + (k + 1) * h
    return DdeSolution(t=np.array(rec_t), x=np.stack(rec_x))
