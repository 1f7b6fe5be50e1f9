"""BCN and QCN fluid models (spec/algorithms.md §11.1 and §11.2), integrated on a grid.

Units: rates in bit/s, queue and feedback in bytes, time in seconds. Per grid point the state
is ``[q, λ_1 … λ_G]`` (BCN) or ``[q, R_C,1 … R_C,G, R_T,1 … R_T,G]`` (QCN), one rate per *group*
of identical hot flows (:class:`~cnsim.fluid.params.FlowGroup`; the shipped scenarios have one
group, so N_h identical flows are one state variable with multiplicity N_h).

BCN (§11.1, "Implementable DDE"), with A(t) = Σ_f λ_f(t) the CP's arrival rate:

* dq/dt = (A(t) − μ(t))/8, projected onto [0, Q_buffer];
* Fb(t) = −[(q − Qeq) + w·Δ(t)·dq/dt], Δ(t) = L/(p_s·A(t)), clamped to ±(2w+1)·Qeq
  (BCN_MAX: −Fbmax when q ≥ Qmc; D3's gate: no negative feedback while q ≤ Qeq when
  ``negative_only_above_qeq``; oversampling D5 multiplies p_s while q > Qeq);
* per flow, with the message rate m_f(t) = p_s·s_f(t − τ)/L (s_f the sending rate):
  dλ_f/dt = m_f·Gi·Ru·Fb(t − τ) if Fb(t − τ) > 0, m_f·ln(1 + Gd·Fb(t − τ))·λ_f(t) if < 0
  (§11.1 writes the first-order form m_f·Gd·Fb·λ_f, available as ``decrease="linear"``), plus
  the drift (D18) where configured; λ_f is projected onto [Rmin, R_line] (see ``sources``).

Quantised feedback (fb_bits) is modelled by its mean: the gains per quantum are converted to
gains per byte (× (2^b − 1)/Fbmax). Positive feedback reaches every hot flow (a flow that
has been decreased carries the tag; with the rates capped at the offered rate an untagged flow
gains nothing from it anyway).

QCN (§11.2, re-derived), with σ = p(Fb)·1[Fb < 0] the probability that a frame triggers a CNM
(p from the sampling rule: "table", "linear", "random", "interval"), r = R_C(t − τ)/L the frame
rate and g(σ, B) = σ/((1 − σ)^(−B) − 1) (→ 1/B as σ → 0) the rate of B-frame cycle completions
per frame:

* dR_T/dt = −(R_T − R_C)·r·σ·u + R_AI·r·[g(σ, BC)·(1 − σ)^(F·BC) + g(σ, T·r)·(1 − σ)^(F·T·r)],
  with u = 1 for ``target_update = "always"`` (§11.2 as written) and, for D8's default
  ``"after_increase"`` (TR := CR only if a stage counter is non-zero, i.e. a byte-counter cycle
  or a timer period completed since the previous CNM), u = (1 − σ)^min(BC, T·r): the probability
  that the geometric gap between two CNMs reaches a full cycle;
* dR_C/dt = −min(Gd'·|Fb|, min_dec)·R_C·r·σ + ((R_T − R_C)/2)·r·[g(σ, BC) + g(σ, T·r)];
* σ and Fb at t − τ; the second term of each bracket is the timer (T = ``cm.timer``);
* dq/dt and Fb as for BCN; Gd' = gd·(2^b − 1)/Fbmax per byte.

Not modelled: QCN's hyper-active increase and the TR/8 clamp (EFR), BCN(0,0), PAUSE (the projection at Q_buffer stands
in for it), drops, and the randomness of sampling (the model follows the mean).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from . import work
from .grid import FluidRun, _cycles, _Grid, _integrate
from .params import FluidParams

__all__ = ["FluidRun", "simulate", "bcn_equilibrium", "step_size", "step_limits"]

#: smallest per-message factor 1 + Gd·Fb in the log decrease (ln 1e-3 = −6.9 ≈ to the floor)
_FLOOR = work.LOG_FLOOR

Array = NDArray[np.float64]


#: the candidates of :func:`step_size` with what sets each (in :mod:`.work`, which estimates a run)
step_limits = work.step_limits


def step_size(p: FluidParams) -> float:
    """The fixed step: min(1/(20 ω_c), Δ/2, 1/(fastest decay rate), hot window/1000).

    §11 solver notes give min(τ, 1/(20 ω_c), Δ/4). τ is left out because the solver
    interpolates inside the step when τ < h (a 3 us loop does not force 3 us steps), and Δ/2
    replaces Δ/4: the model averages over samples, nothing in it changes faster than Δ, and
    1/(20 ω_c) already resolves the loop (tests/test_fluid.py checks that halving h changes
    the trajectories by less than 1 %). With a gain so large that ω_c overflows it is 0
    (:func:`.work.check` refuses that).
    """
    return float(min(value for value, _ in step_limits(p)))



def simulate(params: FluidParams | list[FluidParams], *, t_start: float = 0.0, t_end: float | None = None,
             h: float | None = None, record_dt: float = 1e-4,
             sources: str = "backlog", decrease: str = "log", force: bool = False) -> FluidRun:
    """Integrate the scheme's fluid model for every grid point from ``t_start`` to ``t_end``.

    ``sources``: ``"backlog"`` (default) models each source's queue of not-yet-sent traffic (the
    VOQ, unlimited in the shipped scenarios): a flow sends at its limiter rate λ while it has a
    backlog, at min(λ, offered) otherwise, and λ lives in [Rmin, R_line] (a limiter is created
    at the line rate, D7, and may climb above the offered rate, as in the packet simulator).
    ``decrease`` (BCN): ``"log"`` (default) lets the log-rate drift by ln(1 + Gd·Fb) per
    message — the exact mean-field limit of multiplicative steps, so a message with Gd·|Fb| ≥ 1
    sends the rate to the Rmin floor (the packet engine's step 1.2 of §3.3); ``"linear"`` is
    §11.1's first-order form m·Gd·Fb·λ. Both agree to first order near equilibrium (same
    linearisation); they differ when Gd·|Fb| is not small (zhb's onset: Gd·Fbmax = 1.25).

    ``"clamp"`` is §11's simpler reading: no backlog, λ projected onto [Rmin, min(R_line,
    offered)]. Both have the same equilibrium and linearisation; they differ in the transients
    (the onset overshoot, the drain of the backlog after the hotspot).

    Initial state and history: q = 0, no backlog, λ at its ceiling; ``t_start`` must lie before
    the congestion starts (nothing happens until then, so the trajectory is extended back to
    t = 0 with that state).
    ``h`` defaults to the smallest :func:`step_size` of the grid; states are recorded every
    ``record_dt`` (at least every step).

    The work is estimated first (:mod:`.work`): an integration of more than
    :data:`.work.MAX_WORK` steps, or one that would not fit in memory, raises
    :class:`~cnsim.errors.ResourceError` unless ``force``.
    """
    plist = [params] if isinstance(params, FluidParams) else list(params)
    if plist[0].scheme == "dcqcn":  # §11.3 has its own state and equations
        from .dcqcn import simulate_dcqcn

        return simulate_dcqcn(plist, t_start=t_start, t_end=t_end, h=h, record_dt=record_dt, sources=sources, force=force)
    if sources not in ("backlog", "clamp"):
        raise ValueError(f"sources must be 'backlog' or 'clamp', not {sources!r}")
    t_end = float(max(p.duration_s for p in plist) if t_end is None else t_end)
    est = work.check(work.estimate(plist, t_start=t_start, t_end=t_end, h=h, record_dt=record_dt, sources=sources),
                     force=force, what=plist[0].scenario)
    g = _Grid(plist)
    h = est.h
    P, G = g.P, g.G
    qcn = g.scheme == "qcn"
    backlog = sources == "backlog"
    if decrease not in ("log", "linear"):
        raise ValueError(f"decrease must be 'log' or 'linear', not {decrease!r}")
    log_decrease = decrease == "log"
    # state layout: q | λ (R_C) | R_T (QCN) | source backlog b (backlog mode), G columns each
    i_lam = slice(1, 1 + G)
    i_rt = slice(1 + G, 1 + 2 * G) if qcn else None
    i_b = slice(1 + (2 if qcn else 1) * G, 1 + (3 if qcn else 2) * G) if backlog else None
    n = 1 + G * ((2 if qcn else 1) + (1 if backlog else 0))
    top = g.line if backlog else g.upper  # the rate limiter's ceiling
    x0 = np.zeros((P, n))
    x0[:, i_lam] = top
    if i_rt is not None:
        x0[:, i_rt] = g.line
    tau = g.tau_s
    L = g.frame_bits
    lam_lo = np.minimum(g.rmin, top)
    rt_lo = np.minimum(g.rmin, g.line)
    uniform_tau = bool(np.all(tau == tau[0]))

    def sending(x: Array, act: Array) -> tuple[Array, NDArray[np.bool_]]:
        """(sending rate per flow, flow present) from a state and the activity at its time."""
        lam = x[:, i_lam]
        if not backlog:
            return lam * act, act > 0
        b = x[:, i_b]
        off = g.offered * act
        send = np.where(b > 0.0, lam, np.minimum(lam, off))
        return send, (act > 0) | (b > 0.0)

    def project(t: float, x: Array) -> Array:
        t = float(t)
        x = x.copy()
        x[:, :1] = np.minimum(np.maximum(x[:, :1], 0.0), g.buffer_bytes)
        act = g.active(t) > 0
        present = act
        if i_b is not None:
            x[:, i_b] = np.minimum(np.maximum(x[:, i_b], 0.0), g.backlog_cap)
            present = act | (x[:, i_b] > 0.0)
        x[:, i_lam] = np.where(present, np.minimum(np.maximum(x[:, i_lam], lam_lo), top), top)
        if i_rt is not None:
            x[:, i_rt] = np.where(present, np.minimum(np.maximum(x[:, i_rt], rt_lo), g.line), g.line)
        return x

    def fb_at(q: Array, agg: Array, mu: Array) -> Array:
        p = g.sampling_p(np.zeros_like(q), q)
        fb = g.feedback(q, agg, mu, p)
        if g.sampling in ("linear", "table"):  # the sampling interval follows Fb: one fixed-point pass
            fb = g.feedback(q, agg, mu, g.sampling_p(fb, q))
        return fb

    def rhs(t: float, x: Array, xd: Array) -> Array:
        t = float(t)
        q = x[:, :1]
        lam = x[:, i_lam]
        act = g.active(t)
        send, present = sending(x, act)
        agg = g.total(send)
        dx = np.empty_like(x)
        dq = (agg - g.mu(t)) / 8.0
        dx[:, :1] = np.where(((q <= 0.0) & (dq < 0.0)) | ((q >= g.buffer_bytes) & (dq > 0.0)), 0.0, dq)
        if i_b is not None:
            db = g.offered * act - send
            dx[:, i_b] = np.where((x[:, i_b] >= g.backlog_cap) & (db > 0), 0.0, db) / 8.0
        on = present.astype(np.float64)
        td = t - float(tau[0, 0]) if uniform_tau else t - tau
        qd = xd[:, :1]
        sendd, _ = sending(xd, g.active(td))
        aggd = g.total(sendd)
        fbd = fb_at(qd, aggd, g.mu(td))
        if not qcn:
            if g.neg_gate.any():
                fbd = np.where(g.neg_gate & (fbd < 0) & (qd <= g.qeq), 0.0, fbd)
            m = g.sampling_p(fbd, qd) * sendd / L  # messages per second per flow
            if log_decrease:  # per message λ ← λ·(1 + Gd·Fb): the log-rate drifts by ln(1 + Gd·Fb)
                md = m * lam * np.log(np.maximum(1.0 + g.gd * np.minimum(fbd, 0.0), _FLOOR))
            else:  # §11.1 as written: the first-order form, exact near equilibrium
                md = m * g.gd * fbd * lam
            dlam = np.where(fbd > 0, m * g.gi * g.ru * fbd, md) + g.drift_bps_per_s
            dx[:, i_lam] = dlam * on
            return dx
        rt = x[:, i_rt]
        sigma = np.where(fbd < 0, g.sampling_p(fbd, qd), 0.0)
        r = sendd / L
        cnm = r * sigma
        bc = r * _cycles(sigma, g.bc_frames)
        ai = np.exp(g.f_stages * g.bc_frames * np.log1p(-np.minimum(sigma, 0.999999)))
        tframes = g.timer_s * r
        if np.any(g.timer_s > 0):
            tm = np.where((g.timer_s > 0) & (r > 0), r * _cycles(sigma, np.maximum(tframes, 1e-300)), 0.0)
            ai_t = np.exp(g.f_stages * tframes * np.log1p(-np.minimum(sigma, 0.999999)))
        else:
            tm = np.zeros_like(r)
            ai_t = tm
        dec = np.minimum(g.gd * np.abs(fbd), g.min_dec)
        # D8: TR := CR on a CNM only if an increase event happened since the previous CNM, i.e.
        # if the gap between the two CNMs (geometric, in frames) reached BC frames or T·r frames
        if g.after_increase:
            gap = np.minimum(g.bc_frames, np.where(g.timer_s > 0, tframes, np.inf))
            cnm_upd = cnm * np.exp(gap * np.log1p(-np.minimum(sigma, 0.999999)))
        else:
            cnm_upd = cnm
        drt = -(rt - lam) * cnm_upd + g.r_ai * (bc * ai + tm * ai_t) + g.drift_bps_per_s
        drc = -dec * lam * cnm + 0.5 * (rt - lam) * (bc + tm) + g.drift_bps_per_s
        dx[:, i_lam] = drc * on
        dx[:, i_rt] = drt * on
        return dx

    times, xs = _integrate(rhs, project, x0, g, t_start=t_start, t_end=t_end, h=h, record_dt=record_dt)
    queue = xs[:, :, 0]
    rates = np.stack([sending(xs[i], g.active(t))[0] for i, t in enumerate(times)])
    agg = np.sum(g.count[None] * rates, axis=2)
    mu_t = np.stack([g.mu(t)[:, 0] if np.ndim(g.mu(t)) else np.full(P, g.mu(t)) for t in times])
    fb = np.stack([fb_at(queue[i][:, None], agg[i][:, None], np.broadcast_to(mu_t[i], (P,))[:, None])[:, 0]
                   for i in range(times.size)])
    return FluidRun(params=plist, t=times, queue=queue, rates=rates, limiter=xs[:, :, i_lam],
                    target=xs[:, :, i_rt] if i_rt is not None else None,
                    backlog=xs[:, :, i_b] if i_b is not None else None, fb=fb, aggregate=agg, h=h)


def bcn_equilibrium(p: FluidParams) -> dict[str, Any]:
    """The fixed point of §11.1: q = Qeq, every hot flow at λ0 = μ/N_h (Fb = 0).

    Valid when every hot flow offers more than λ0 and λ0 ≥ Rmin; otherwise the flows that
    offer less are not limited and the rest share what is left (reported as ``limited = False``).
    """
    lam0 = p.fair_bps
    offered = min(g.offered_bps for g in p.groups)
    return {
        "queue_bytes": p.qeq,
        "rate_bps": lam0,
        "limited": bool(offered > lam0 and lam0 >= p.rmin),
    }
