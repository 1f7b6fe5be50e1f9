"""The BCN loop's linear figures for a scenario (spec/algorithms.md §11.1).

From :class:`~cnsim.fluid.params.FluidParams`: λ0 = μ/N_h, T_w = w·L/(p_s·μ),
K_MD = p_s·Gd·λ0²·N_h/(8L), K_AI = p_s·Gi·Ru·λ0·N_h/(8L); each side's crossover, phase margin,
period 2π/ω_c, longest stable loop delay and rightmost root (:mod:`cnsim.fluid.stability`).
"Stable" means both sides have a positive phase margin; the smaller one is reported (§11
solver notes). Also: the W needed for a given loop delay, and phase-margin maps over two
parameters (vectorised closed forms).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..scenario import Scenario
from .params import FluidParams, fluid_params
from .stability import LoopFigures, loop_figures

__all__ = ["bcn_gains", "bcn_linear", "bcn_phase_margin_grid", "w_needed", "MAP_AXES"]

Array = NDArray[np.float64]

#: parameters a stability map can vary (FluidParams field → label)
MAP_AXES: dict[str, str] = {
    "w": "derivative weight W",
    "tau": "loop delay τ (s)",
    "gd": "Gd (per byte)",
    "gi": "Gi (per byte)",
    "ps": "sampling probability p_s",
    "n_hot": "hot flows N_h",
    "mu": "service rate μ (b/s)",
}


def bcn_gains(p: FluidParams, **over: ArrayLike) -> tuple[Array, Array, Array, Array]:
    """(K_MD, K_AI, T_w, τ), with any of ``w, tau, gd, gi, ps, n_hot, mu`` overridden by arrays."""
    w = np.asarray(over.get("w", p.w), dtype=np.float64)
    tau = np.asarray(over.get("tau", p.tau_s), dtype=np.float64)
    gd = np.asarray(over.get("gd", p.gd), dtype=np.float64)
    gi = np.asarray(over.get("gi", p.gi), dtype=np.float64)
    ps = np.asarray(over.get("ps", p.ps), dtype=np.float64)
    n = np.asarray(over.get("n_hot", p.n_hot), dtype=np.float64)
    mu = np.asarray(over.get("mu", p.mu_bps), dtype=np.float64)
    L = p.frame_bits
    lam0 = mu / n
    k_md = ps * gd * lam0**2 * n / (8 * L)
    k_ai = ps * gi * p.ru * lam0 * n / (8 * L)
    t_w = w * L / (ps * mu)
    return k_md, k_ai, t_w, tau


def bcn_linear(p: FluidParams) -> dict[str, Any]:
    """Both sides' figures and the overall verdict, as a JSON-able dict."""
    k_md, k_ai, t_w, tau = bcn_gains(p)
    md: LoopFigures = loop_figures(k_md, t_w, tau)
    ai: LoopFigures = loop_figures(k_ai, t_w, tau)
    sides = {"md": md.to_dict(), "ai": ai.to_dict()}
    limiting = "md" if float(md.phase_margin_rad) <= float(ai.phase_margin_rad) else "ai"
    lim = sides[limiting]
    tau_max = min(float(md.max_stable_delay_s), float(ai.max_stable_delay_s))
    return {
        "phase_margin_rad": lim["phase_margin_rad"],
        "crossover_rad_s": lim["crossover_rad_s"],
        "period_s": lim["period_s"],
        "damped_period_s": lim["damped_period_s"],
        "limiting_side": limiting,
        "stable": bool(float(md.phase_margin_rad) > 0 and float(ai.phase_margin_rad) > 0),
        "max_stable_delay_s": tau_max,
        # a limit cycle switching between the sides: half a period on each (§11.1, last bullet)
        "switched_period_s": float(np.pi / np.sqrt(k_md) + np.pi / np.sqrt(k_ai)) if k_md > 0 and k_ai > 0 else None,
        "sides": sides,
    }


def bcn_phase_margin_grid(p: FluidParams, **axes: ArrayLike) -> Array:
    """The smaller phase margin of the two sides over broadcast parameter arrays."""
    from .stability import phase_margin

    k_md, k_ai, t_w, tau = bcn_gains(p, **axes)
    return np.minimum(phase_margin(k_md, t_w, tau), phase_margin(k_ai, t_w, tau))


def w_needed(
    scenario: str | Path | Scenario,
    tau_s: float,
    set: dict[str, Any] | None = None,
    *,
    w_max: float = 128.0,
    margin: float = 0.0,
) -> dict[str, Any]:
    """The smallest W whose phase margin at loop delay ``tau_s`` exceeds ``margin``.

    W is set on the scenario (``cm.w``) and the parameters re-resolved, so gains written as
    expressions of W follow it and printed gains stay fixed (as the decks did, I-23). Returns
    ``{"w": W or None, "best_w", "best_phase_margin_rad"}``; W is None when no W up to
    ``w_max`` is stable (with fixed gains ω_c grows with W and τ_max peaks at a finite W).
    """
    base = dict(set or {})

    def pm(w: float) -> float:
        p = fluid_params(scenario, {**base, "cm.w": w}, engine_check=False).with_(tau_s=tau_s)
        return float(bcn_linear(p)["phase_margin_rad"])

    ws = np.geomspace(0.05, w_max, 120)
    pms = np.array([pm(float(w)) for w in ws])
    best = int(np.argmax(pms))
    out: dict[str, Any] = {"tau_s": tau_s, "best_w": float(ws[best]), "best_phase_margin_rad": float(pms[best]), "w": None}
    ok = np.nonzero(pms > margin)[0]
    if ok.size:
        i = int(ok[0])
        if i == 0:
            out["w"] = float(ws[0])
        else:
            lo, hi = float(ws[i - 1]), float(ws[i])
            for _ in range(30):
                mid = 0.5 * (lo + hi)
                lo, hi = (lo, mid) if pm(mid) > margin else (mid, hi)
            out["w"] = hi
    return out
