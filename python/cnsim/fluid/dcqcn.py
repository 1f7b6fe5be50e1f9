"""DCQCN fluid model (spec/algorithms.md §11.3: Zhu et al., SIGCOMM 2015; "ECN or Delay",
CoNEXT 2016, eq. 11), integrated on a grid with the solver of :mod:`.dde`.

Units as in :mod:`.models`: rates b/s, queue bytes, time s; L = frame size in bits. Per group
of identical hot flows the state is R_C (the limiter), R_T (the target) and α, plus the source
backlog (``sources="backlog"``, as for BCN and QCN). With r = s(t − τ*)/L the frame rate of a
flow's sending rate s, p = RED(q(t − τ*)) (§7.1), τ the NP's CNP interval, τ' the alpha timer,
T the rate-increase timer, B the byte counter in frames, F the fast-recovery stages and
g(σ, n) = σ/((1 − σ)^(−n) − 1) the completions of an n-frame cycle per frame
(:func:`.grid._cycles`):

* a = 1 − (1 − p)^(τ·r): the probability of at least one mark in a CNP interval (CNPs per
  second: a/τ);
* b = g(p, B), d = g(p, T·r): byte-counter and timer cycles per frame; c = b·(1 − p)^(F·B),
  e = d·(1 − p)^(F·T·r): the share of them past F stages (active increase);

1. dα/dt = (g/τ')·[1 − (1 − p)^(τ'·r) − α]
2. dR_T/dt = −(R_T − R_C)·a/τ + R_AI·r·(c + e)
3. dR_C/dt = −R_C·α·a/(2τ) + ((R_T − R_C)/2)·r·(b + d)
4. dq/dt = (Σ_f s_f − μ)/8, projected onto [0, Q_buffer].

R_C is projected onto [Rmin, R_line], R_T onto [Rmin, R_line], α onto [0, 1]. The model has
neither HAI nor the TR/8 clamp, takes RT := RC on every CNP (``clamp_target``), and its NP
sends at most one CNP per interval with the probability a (both NP modes of §7.2 have that
mean). :func:`fixed_point` solves 1–3 at R_C = μ/N for p* and maps it through the RED
profile to q* (the small-p approximation of §11.3, p* ≈ ∛(R_AI·(1/B + 1/(T·R*))²/(τ'·R*²)),
is close but not exact).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from . import work
from .grid import FluidRun, _cycles, _Grid, _integrate
from .params import _P_CAP, FluidParams, fixed_point

__all__ = ["fixed_point", "linear_modes", "simulate_dcqcn", "red", "step_size", "step_limits"]

Array = NDArray[np.float64]


def red(q: Array | float, kmin: Array | float, kmax: Array | float, pmax: Array | float) -> Array:
    """The marking probability of §7.1 at queue ``q`` (bytes)."""
    q = np.asarray(q, dtype=np.float64)
    band = np.where(np.asarray(kmax) > np.asarray(kmin), np.asarray(kmax) - np.asarray(kmin), 1.0)
    return np.where(q <= kmin, 0.0, np.where(q <= kmax, pmax * (q - kmin) / band, 1.0))


#: the candidates of :func:`step_size` with what sets each (in :mod:`.work`, which estimates a run)
step_limits = work.dcqcn_step_limits


def step_size(fp: FluidParams) -> float:
    """A tenth of the shortest of the CNP interval, the alpha timer and the increase timer (the
    model's fastest rates are 1/τ, g/τ' and 1/T), and at most a thousandth of the hot window."""
    return float(min(value for value, _ in step_limits(fp)))



class _Model:
    """The state layout, projection and right-hand side of the model for a grid of points."""

    def __init__(self, plist: list[FluidParams], sources: str) -> None:
        if sources not in ("backlog", "clamp"):
            raise ValueError(f"sources must be 'backlog' or 'clamp', not {sources!r}")
        g = self.g = _Grid(plist)
        P, G = g.P, g.G

        def col(name: str) -> Array:
            return np.array([[float(getattr(p, name))] for p in plist])

        self.kmin, self.kmax, self.pmax, self.gain = col("kmin"), col("kmax"), col("pmax"), col("g")
        self.t_cnp, self.t_alpha = col("cnp_interval_s"), col("alpha_timer_s")
        # state layout: q | R_C | R_T | α | source backlog (backlog mode), G columns each
        self.i_c, self.i_t, self.i_a = slice(1, 1 + G), slice(1 + G, 1 + 2 * G), slice(1 + 2 * G, 1 + 3 * G)
        self.i_b = slice(1 + 3 * G, 1 + 4 * G) if sources == "backlog" else None
        self.n = 1 + G * (4 if sources == "backlog" else 3)
        self.top = g.line if sources == "backlog" else g.upper
        self.x0 = np.zeros((P, self.n))
        self.x0[:, self.i_c] = self.top
        self.x0[:, self.i_t] = g.line
        self.x0[:, self.i_a] = np.array([[p.extra.get("alpha_init", 1.0)] for p in plist])
        self.lo_c = np.minimum(g.rmin, self.top)
        self.lo_t = np.minimum(g.rmin, g.line)
        self.uniform_tau = bool(np.all(g.tau_s == g.tau_s[0]))

    def sending(self, x: Array, act: Array) -> tuple[Array, NDArray[np.bool_]]:
        """(sending rate per flow, flow present) from a state and the activity at its time."""
        rc = x[:, self.i_c]
        if self.i_b is None:
            return np.asarray(rc * act, dtype=np.float64), act > 0
        b = x[:, self.i_b]
        send = np.where(b > 0.0, rc, np.minimum(rc, self.g.offered * act))
        return send, (act > 0) | (b > 0.0)

    def project(self, t: float, x: Array) -> Array:
        g = self.g
        x = x.copy()
        x[:, :1] = np.minimum(np.maximum(x[:, :1], 0.0), g.buffer_bytes)
        present = g.active(float(t)) > 0
        if self.i_b is not None:
            x[:, self.i_b] = np.minimum(np.maximum(x[:, self.i_b], 0.0), g.backlog_cap)
            present = present | (x[:, self.i_b] > 0.0)
        x[:, self.i_c] = np.where(present, np.minimum(np.maximum(x[:, self.i_c], self.lo_c), self.top), self.top)
        x[:, self.i_t] = np.where(present, np.minimum(np.maximum(x[:, self.i_t], self.lo_t), g.line), g.line)
        x[:, self.i_a] = np.minimum(np.maximum(x[:, self.i_a], 0.0), 1.0)
        return x

    def rhs(self, t: float, x: Array, xd: Array) -> Array:
        g = self.g
        t = float(t)
        q, rc, rt, al = x[:, :1], x[:, self.i_c], x[:, self.i_t], x[:, self.i_a]
        act = g.active(t)
        send, present = self.sending(x, act)
        dx = np.empty_like(x)
        dq = (g.total(send) - g.mu(t)) / 8.0
        dx[:, :1] = np.where(((q <= 0.0) & (dq < 0.0)) | ((q >= g.buffer_bytes) & (dq > 0.0)), 0.0, dq)
        if self.i_b is not None:
            db = g.offered * act - send
            dx[:, self.i_b] = np.where((x[:, self.i_b] >= g.backlog_cap) & (db > 0), 0.0, db) / 8.0
        on = present.astype(np.float64)
        td = t - float(g.tau_s[0, 0]) if self.uniform_tau else t - g.tau_s
        sendd, _ = self.sending(xd, g.active(td))
        p = red(xd[:, :1], self.kmin, self.kmax, self.pmax)
        r = sendd / g.frame_bits
        lg = np.log1p(-np.minimum(p, _P_CAP))
        a = -np.expm1(self.t_cnp * r * lg)
        alpha_target = -np.expm1(self.t_alpha * r * lg)
        b = r * _cycles(p, g.bc_frames)
        tframes = np.maximum(g.timer_s * r, 1e-300)
        d = np.where(r > 0, r * _cycles(p, tframes), 0.0)
        c = b * np.exp(g.f_stages * g.bc_frames * lg)
        e = d * np.exp(g.f_stages * tframes * lg)
        dx[:, self.i_a] = self.gain / self.t_alpha * (alpha_target - al) * on
        dx[:, self.i_t] = (-(rt - rc) * a / self.t_cnp + g.r_ai * (c + e)) * on
        dx[:, self.i_c] = (-rc * al * a / (2.0 * self.t_cnp) + 0.5 * (rt - rc) * (b + d)) * on
        return dx


def simulate_dcqcn(plist: list[FluidParams], *, t_start: float = 0.0, t_end: float | None = None, h: float | None = None,
                   record_dt: float = 1e-4, sources: str = "backlog", force: bool = False) -> FluidRun:
    """Integrate the DCQCN fluid model for every grid point (see :func:`.models.simulate` for
    ``t_start``, ``record_dt``, ``sources`` and ``force``). Initial state: q = 0, no backlog, R_C = R_T = the
    line rate, α = ``alpha_init``. ``FluidRun.fb`` holds the marking probability p(q)."""
    m = _Model(plist, sources)
    g = m.g
    t_end = float(max(p.duration_s for p in plist) if t_end is None else t_end)
    est = work.check(work.estimate(plist, t_start=t_start, t_end=t_end, h=h, record_dt=record_dt, sources=sources),
                     force=force, what=plist[0].scenario)
    h = est.h
    times, xs = _integrate(m.rhs, m.project, m.x0, g, t_start=t_start, t_end=t_end, h=h, record_dt=record_dt)
    queue = xs[:, :, 0]
    rates = np.stack([m.sending(xs[i], g.active(float(t)))[0] for i, t in enumerate(times)])
    agg = np.sum(g.count[None] * rates, axis=2)
    marks = red(queue, m.kmin[:, 0][None], m.kmax[:, 0][None], m.pmax[:, 0][None])
    return FluidRun(params=plist, t=times, queue=queue, rates=rates, limiter=xs[:, :, m.i_c], target=xs[:, :, m.i_t],
                    backlog=xs[:, :, m.i_b] if m.i_b is not None else None, fb=marks, aggregate=agg, h=h,
                    alpha=xs[:, :, m.i_a])


def linear_modes(fp: FluidParams) -> dict[str, Any]:
    """The model linearised at its :func:`fixed_point`: the roots s of
    det(s·I − A0 − A1·e^(−s·τ*)) = 0 (A0, A1 the Jacobians of the right-hand side in the current
    and the delayed state, by central differences), started from the eigenvalues of A0 + A1 and
    refined by Newton's method. Reports every root, whether all have Re s < 0 (``stable``), and
    the least-damped oscillatory root's period 2π/Im s (``damped_period_s``) and decay rate
    −Re s. None where the fixed point is not inside the RED band (p* ≥ Pmax: the queue sits at
    the step of the profile, where the model is not differentiable) or no flow is limited."""
    fx = fixed_point(fp)
    if not fx["limited"] or fx["mark_probability"] >= fp.pmax or fp.kmax <= fp.kmin:
        return {"fixed_point": fx, "modes": None, "stable": None, "damped_period_s": None, "decay_rate_per_s": None}
    m = _Model([fp], "clamp")
    lo, hi = fp.hot_window_s
    t = 0.5 * (lo + hi)
    x = np.zeros((1, m.n))
    x[0, 0] = fx["queue_bytes"]
    x[0, m.i_c] = fx["rate_bps"]
    x[0, m.i_t] = fx["rate_bps"] + fx["target_gap_bps"]
    x[0, m.i_a] = fx["alpha"]
    scale = np.abs(x[0]) * 1e-6 + 1e-9

    def jac(delayed: bool) -> Array:
        cols = []
        for k in range(m.n):
            dx = np.zeros_like(x)
            dx[0, k] = scale[k]
            if delayed:
                f1, f0 = m.rhs(t, x, x + dx), m.rhs(t, x, x - dx)
            else:
                f1, f0 = m.rhs(t, x + dx, x), m.rhs(t, x - dx, x)
            cols.append((f1 - f0)[0] / (2 * scale[k]))
        return np.array(cols).T

    a0, a1 = jac(False), jac(True)
    tau = fp.tau_s
    eye = np.eye(m.n)

    def char(s: complex) -> complex:
        return complex(np.linalg.det(s * eye - a0 - a1 * np.exp(-s * tau)))

    roots = []
    for s in np.linalg.eigvals(a0 + a1):
        s = complex(s)
        for _ in range(50):
            ds = 1e-7 * max(abs(s), 1.0)
            f = char(s)
            step = f / ((char(s + ds) - f) / ds)
            s -= step
            if abs(step) < 1e-10 * max(abs(s), 1.0):
                break
        roots.append(s)
    osc = [s for s in roots if s.imag > 1e-9 * max(abs(s), 1.0)]
    least = max(osc, key=lambda s: s.real) if osc else None
    return {
        "fixed_point": fx,
        "modes": [[s.real, s.imag] for s in sorted(roots, key=lambda s: -s.real)],
        "stable": bool(all(s.real < 0 for s in roots)),
        "damped_period_s": 2 * math.pi / least.imag if least is not None else None,
        "decay_rate_per_s": -least.real if least is not None else None,
    }
