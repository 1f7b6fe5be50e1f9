"""What an integration of the fluid model will cost, estimated before it starts (docs/fluid.md
"Solver"; the counterpart of :mod:`cnsim.budget` for ``cnsim run``).

The solver takes fixed steps h (:func:`.models.step_size`, :func:`.dcqcn.step_size`) from
``t_start`` to ``t_end``: ``steps = (t_end − t_start)/h``, each four evaluations of the
right-hand side on the whole grid — about 0.5 to 2.5 ms on the project's 2-core machine for up
to a thousand grid points, whatever the scheme (numpy's per-call cost dominates on such small
arrays). The ring buffer of the history holds ``τ/h + 3`` states, and every ``record_dt`` a
state is recorded (from t = 0: the constant state before ``t_start`` is recorded too) and
post-processed in Python.

An integration is refused (:class:`~cnsim.errors.ResourceError`, exit 2) when its work exceeds
:data:`MAX_WORK` steps (about 15 to 40 minutes; the longest catalogue use, QCN on
qcnp-ig-baseline, is 6·10^4 steps and a minute), or its memory would exceed
:data:`cnsim.budget.MEMORY_SHARE` of the machine; ``force=True`` runs it anyway. A step that is
zero or not finite (a gain so large that the loop's crossover overflows) is refused even then.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..budget import MEMORY_SHARE, human_bytes, human_time, physical_memory
from ..errors import ResourceError, ScenarioError
from .linear import bcn_gains
from .params import FluidParams
from .stability import crossover

__all__ = ["FluidEstimate", "estimate", "check", "step_limits", "dcqcn_step_limits", "MAX_WORK", "SECONDS_PER_STEP", "FORCE_HINT"]

#: smallest per-message factor 1 + Gd·Fb in BCN's log decrease (ln 1e-3 = −6.9 ≈ to the floor)
LOG_FLOOR = 1e-3

#: Refuse integrations above this many steps (weighted by the grid size, :attr:`FluidEstimate.work`).
MAX_WORK = 1.0e6
#: Wall time of one step used for the estimate (1 to 2.5 ms measured on the 2-core machine).
SECONDS_PER_STEP = 1.5e-3
#: Wall time of post-processing one recorded state, in steps.
_RECORD_COST = 0.05
#: Grid points × state variables at which a step costs twice the one-point step.
_GRID_DOUBLING = 4000.0
#: Bytes kept per recorded state besides the numbers: array headers and list slots.
_RECORD_OVERHEAD = 600.0
#: What the message tells a ``cnsim fluid`` user to do to integrate anyway.
FORCE_HINT = "pass --force to integrate it anyway"


@dataclass(frozen=True)
class FluidEstimate:
    """What one integration will cost (see the module doc)."""

    scheme: str
    points: int
    state: int  # state variables per grid point
    h: float
    t_start: float
    t_end: float
    steps: float
    history: float  # states in the delay's ring buffer
    records: float
    memory_bytes: float
    limit: str  # what sets the step (text naming the keys)

    @property
    def work(self) -> float:
        """Steps weighted by the grid's size, plus the post-processing of the records."""
        return self.steps * (1.0 + self.points * self.state / _GRID_DOUBLING) + _RECORD_COST * self.records

    @property
    def wall_s(self) -> float:
        return self.work * SECONDS_PER_STEP

    def describe(self) -> str:
        grid = f"{self.points:,} grid points × " if self.points > 1 else ""
        return (f"{_count(self.steps)} steps of h = {self.h:.3g} s over {self.t_end - self.t_start:.4g} s "
                f"({grid}{self.state} state variables; h is {self.limit}), {_count(self.history)} states of delay history, "
                f"{_count(self.records)} recorded states; about {human_time(self.wall_s)} at ~{SECONDS_PER_STEP * 1e3:g} ms a step "
                f"and {human_bytes(self.memory_bytes)} of memory")


def _count(x: float) -> str:
    return f"{x:,.0f}" if x < 1e7 else f"{x:.3g}"


def step_limits(p: FluidParams) -> list[tuple[float, str]]:
    """The candidates of :func:`.models.step_size` (BCN, QCN), each with what sets it (the scenario keys, for a
    message that says what to change)."""
    L = p.frame_bits
    off = max(g.offered_bps for g in p.groups)
    with np.errstate(over="ignore", invalid="ignore"):  # a huge gain: K, ω_c = inf, h = 0 (refused by .work)
        k_md, k_ai, tw, _ = (float(v) for v in bcn_gains(p))  # QCN has no gi: K_AI = 0
        wc = float(max(crossover(k_md if k_md > 0 else 1e-9, tw), crossover(k_ai if k_ai > 0 else 1e-9, tw)))
    pmax = max(p.ps * p.oversample, p.pmax if p.sampling in ("linear", "table") else 0.0)
    m_max = pmax * off / L  # messages per second per flow at the offered rate
    rate = m_max * max(-math.log(max(1.0 - p.gd * p.fbmax, LOG_FLOOR)), 1.0 if p.scheme == "qcn" else 0.0)
    lo, hi = p.hot_window_s
    gains = "cm.gd, cm.gi, cm.ps" if p.scheme == "bcn" else "cm.gd, cm.ps"
    cands = [
        (1.0 / (20.0 * wc) if wc > 0 else math.inf,
         f"1/(20·ω_c) with the loop's crossover ω_c = {wc:.4g} rad/s, which grows with the gains ({gains}), the Qdelta weight (cm.w) and the link rate"),
        (p.sample_spacing_s / 2.0, f"half the sampling interval Δ = L/(p_s·μ) = {p.sample_spacing_s:.4g} s (cm.ps or cm.sample_bytes, and the link rate)"),
        (max(hi - lo, 1e-3) / 1000.0, f"a thousandth of the hotspot window ({hi - lo:.4g} s)"),
    ]
    if rate > 0:
        cands.append((1.0 / rate, f"1/(fastest decrease rate) = 1/{rate:.4g} per s (cm.gd and Fbmax: cm.w, cm.qeq; cm.ps)"))
    return cands


def dcqcn_step_limits(fp: FluidParams) -> list[tuple[float, str]]:
    """The candidates of :func:`.dcqcn.step_size`, each with what sets it (the scenario keys)."""
    lo, hi = fp.hot_window_s
    timers = min(fp.cnp_interval_s, fp.alpha_timer_s, fp.timer_s)
    return [
        (timers / 10.0, f"a tenth of the shortest of cm.cnp_interval, cm.alpha_timer and cm.timer ({timers:.4g} s)"),
        (max(hi - lo, 1e-3) / 1000.0, f"a thousandth of the hotspot window ({hi - lo:.4g} s)"),
    ]


def state_size(scheme: str, groups: int, sources: str) -> int:
    """State variables per grid point: q and, per flow group, BCN λ; QCN R_C, R_T; DCQCN R_C, R_T,
    α; plus the source backlog in ``"backlog"`` mode."""
    per_group = {"bcn": 1, "qcn": 2, "dcqcn": 3}[scheme] + (1 if sources == "backlog" else 0)
    return 1 + groups * per_group


def estimate(plist: list[FluidParams], *, t_start: float, t_end: float, h: float | None = None,
             record_dt: float = 1e-4, sources: str = "backlog") -> FluidEstimate:
    """Estimate the integration of ``plist`` (one scheme) from ``t_start`` to ``t_end`` with step
    ``h`` (default: the model's own, the smallest of the grid)."""
    p0 = plist[0]
    limits_of = dcqcn_step_limits if p0.scheme == "dcqcn" else step_limits
    if h is None:
        best = min((lim for p in plist for lim in limits_of(p)), key=lambda lim: lim[0])
        h, limit = float(best[0]), best[1]
    else:
        h, limit = float(h), "given"
    P = len(plist)
    G = len(p0.groups)
    n = state_size(p0.scheme, G, sources)
    span = max(t_end - t_start, 0.0)
    ok = math.isfinite(h) and h > 0.0
    steps = math.ceil(span / h) if ok and math.isfinite(span / h) else math.inf
    tau = max(p.tau_s for p in plist)
    history = (tau / h + 3.0) if ok else math.inf
    every = max(1, round(record_dt / h)) if ok and math.isfinite(record_dt / h) else 1
    records = max(t_start, 0.0) / record_dt + steps / every + 1.0
    per_record = 8.0 * P * (2 * n + 3 * G + 4) + _RECORD_OVERHEAD + 100.0 * (3 + 3 * G)  # + the long table's rows
    memory = 2 * 8.0 * P * n * history + per_record * records
    return FluidEstimate(scheme=p0.scheme, points=P, state=n, h=h, t_start=t_start, t_end=t_end, steps=float(steps),
                         history=history, records=records, memory_bytes=memory, limit=limit)


def check(est: FluidEstimate, *, force: bool = False, memory: int | None = None, what: str = "",
          force_hint: str = FORCE_HINT) -> FluidEstimate:
    """Raise :class:`ResourceError` when ``est`` exceeds :data:`MAX_WORK` or the machine's memory
    (unless ``force``), and :class:`ScenarioError` when its step is zero or not finite."""
    head = f"{what}: " if what else ""
    if not (math.isfinite(est.h) and est.h > 0.0):
        raise ScenarioError(
            f"{head}the {est.scheme} fluid model cannot be integrated: its step would be h = {est.h:g} s "
            f"(h is {est.limit}), so the integration would never end. Make the parameters that set it smaller "
            "(or use the packet simulator, `cnsim run`)."
        )
    if force:
        return est
    total = physical_memory() if memory is None else memory
    reasons = []
    if est.work > MAX_WORK:
        reasons.append(f"it would take more than {MAX_WORK:.0e} steps (~{human_time(MAX_WORK * SECONDS_PER_STEP)})")
    if total and est.memory_bytes > MEMORY_SHARE * total:
        reasons.append(f"its memory would exceed {MEMORY_SHARE:.0%} of this machine's {human_bytes(total)}")
    if reasons:
        raise ResourceError(
            f"{head}the {est.scheme} fluid model was refused before it started: {' and '.join(reasons)}. "
            f"Estimate: {est.describe()}. Shorten `duration` (the model integrates from just before the congestion "
            f"starts to 0.1 s after it ends) or change what sets the step; {force_hint}."
        )
    return est
