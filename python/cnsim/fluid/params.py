"""The fluid model's parameters, derived from a scenario (spec/algorithms.md §11, §3–5).

A single-bottleneck scenario (one switch; the congestion point is the switch egress feeding the
scenario's hot node, ``metrics.hot_port``) gives:

* the hot flows: every source that sends to the hot node, grouped by offered rate and activity
  window (uniform traffic: load·C/(N−1) per flow; named flows: their rate while active);
* the service rate μ(t) of the hot port: its link rate, times the hotspot's rate fraction inside
  a hotspot window (output-generated scenarios); the link rate for input-generated ones;
* the loop delay τ = source → CP → source: the data frame's serialisation on the source link,
  the propagation delay both ways and the control frame's serialisation (§11 solver notes; the
  CP samples a frame when its last bit is received, D14, and the control frame is generated
  then, D6, with strict priority so it does not queue); out-of-band feedback replaces the way
  back by ``feedback_delay``;
* the sampling probability p_s per frame (random sampling: ``ps``; interval sampling: L/S);
* DCQCN (§11.3): the loop delay τ* runs CP → NP → RP (marked at dequeue, the frame still
  crosses the hot link before its destination turns the mark into a CNP), the RED profile, the
  NP's CNP interval τ, the alpha timer τ', T, B, F, R_AI; its "set point" ``qeq`` is the
  model's own fixed point q* (DCQCN has no Qeq parameter);
* the scheme's gains, set point, bounds, the buffer size of the hot queue, and how much a
  source's VOQ can hold (``nic.ingress``: unlimited, per VOQ, or shared; the fluid backlog is
  capped there, the excess counts as source drops).

Everything is in base units: bytes, bit/s, seconds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..errors import ScenarioError
from ..scenario import Scenario, load

__all__ = ["FlowGroup", "FluidParams", "FLUID_SCHEMES", "fluid_params"]

#: schemes with a fluid model (algorithms.md §11.1, §11.2, §11.3)
FLUID_SCHEMES = ("bcn", "qcn", "dcqcn")

_PS = 1e-12


@dataclass(frozen=True)
class FlowGroup:
    """``count`` identical hot flows offering ``offered_bps`` while ``start_s <= t < stop_s``."""

    flows: tuple[str, ...]  # "<src>-><dst>"
    offered_bps: float
    line_bps: float  # the source's link rate (R_line)
    start_s: float
    stop_s: float

    @property
    def count(self) -> int:
        return len(self.flows)


@dataclass(frozen=True)
class FluidParams:
    """Everything the BCN and QCN fluid models need (base units)."""

    scenario: str
    scheme: str
    groups: tuple[FlowGroup, ...]
    link_bps: float  # hot port link rate
    mu_windows: tuple[tuple[float, float, float], ...]  # (start_s, end_s, fraction) of hotspots
    frame_bytes: float
    tau_s: float  # loop delay
    buffer_bytes: float  # the hot queue's ceiling (projection)
    backlog_cap_bytes: float  # what a source's VOQ can hold (inf: unlimited); the rest is dropped
    duration_s: float
    window_s: tuple[float, float]
    # CP
    w: float
    qeq: float
    ps: float  # sampling probability per frame (mean)
    sampling: str
    pmin: float = 0.01
    pmax: float = 0.1
    oversample: float = 1.0
    fbmax: float = 0.0  # (2w+1)·Qeq, bytes
    fb_quanta: float = 0.0  # 2^b − 1 when feedback is quantised, else 0
    bcn_max: bool = False
    qmc: float = float("inf")
    negative_only_above_qeq: bool = False
    # RP (BCN)
    gd: float = 0.0  # per byte of Fb (converted from per quantum)
    gi: float = 0.0  # per byte of Fb, for the hot sources' link rate
    ru: float = 1e6
    rmin: float = 1e6
    drift_bps_per_s: float = 0.0
    # RP (QCN)
    bc_frames: float = 100.0
    timer_s: float = 0.0
    f_stages: float = 5.0
    r_ai: float = 5e6
    min_dec: float = 0.5
    # DCQCN (§11.3; also bc_frames, timer_s, f_stages, r_ai, rmin, pmax = RED Pmax)
    kmin: float = 0.0
    kmax: float = 0.0
    g: float = 1.0 / 256
    alpha_timer_s: float = 55e-6
    cnp_interval_s: float = 50e-6
    extra: dict[str, Any] = field(default_factory=dict)

    # ------------------------------------------------------------------ derived figures
    @property
    def n_hot(self) -> int:
        return sum(g.count for g in self.groups)

    @property
    def frame_bits(self) -> float:
        return 8.0 * self.frame_bytes

    @property
    def hot_window_s(self) -> tuple[float, float]:
        """Where the hot port is overloaded: the hotspot window, else the hot flows' activity."""
        if self.mu_windows:
            return self.mu_windows[0][0], self.mu_windows[0][1]
        return max(g.start_s for g in self.groups), min(g.stop_s for g in self.groups)

    @property
    def mu_bps(self) -> float:
        """Service rate while the hot port is congested."""
        if self.mu_windows:
            return self.link_bps * self.mu_windows[0][2]
        return self.link_bps

    @property
    def fair_bps(self) -> float:
        """λ0 = μ/N_h (the equilibrium rate when every hot flow offers more than that)."""
        return self.mu_bps / self.n_hot

    @property
    def maxmin_bps(self) -> tuple[float, ...]:
        """The max-min fair share of one flow of each group at the congested hot port: the
        groups' offers water-filled over μ (groups not active in :attr:`hot_window_s` get 0).
        It is :attr:`fair_bps` (μ/N_h) only when every hot flow offers more than that; where
        some offer less (zhb-ig-single-hop: 11 light flows at 0.567 Gb/s beside 4 heavy ones)
        they keep their offer and the others share the rest (0.567 and 0.942 Gb/s, not 0.667)."""
        from ..fairness import water_fill

        lo, hi = self.hot_window_s
        active = [i for i, g in enumerate(self.groups) if g.start_s < hi and g.stop_s > lo]
        demands = {(i, k): self.groups[i].offered_bps for i in active for k in range(self.groups[i].count)}
        shares = water_fill(demands, {f: ["hot"] for f in demands}, {"hot": self.mu_bps})
        return tuple(shares[(i, 0)] if i in active else 0.0 for i in range(len(self.groups)))

    @property
    def sample_spacing_s(self) -> float:
        """Δ = L/(p_s·μ): the time between two samples at equilibrium (inf when nothing is
        sampled: DCQCN with RED's Pmax = 0 marks only above Kmax)."""
        rate = self.ps * self.mu_bps
        return self.frame_bits / rate if rate > 0 else math.inf

    def with_(self, **changes: Any) -> FluidParams:
        """A copy with fields changed (``tau_s``, ``w``, ``gd`` …); fbmax follows w and qeq."""
        new = replace(self, **changes)
        if new.scheme == "dcqcn":  # the reference queue is the model's fixed point: it follows
            if "qeq" not in changes:
                new = replace(new, qeq=fixed_point(new)["queue_bytes"])
            return new
        if ("w" in changes or "qeq" in changes) and "fbmax" not in changes:
            new = replace(new, fbmax=(2 * new.w + 1) * new.qeq)
        return new

    def to_dict(self) -> dict[str, Any]:
        return {
            "scenario": self.scenario,
            "scheme": self.scheme,
            "n_hot": self.n_hot,
            "offered_gbps": [g.offered_bps / 1e9 for g in self.groups],
            "mu_gbps": self.mu_bps / 1e9,
            # per group as offered_gbps: the max-min share, which a group offering less than
            # μ/N_h keeps (its offer); equal_share_gbps is μ/N_h, the symmetric operating point
            # the linearisation and the QCN equilibrium assume (docs/fluid.md)
            "fair_share_gbps": [share / 1e9 for share in self.maxmin_bps],
            "equal_share_gbps": self.fair_bps / 1e9,
            "frame_bytes": self.frame_bytes,
            "tau_s": self.tau_s,
            "buffer_bytes": self.buffer_bytes,
            "backlog_cap_bytes": self.backlog_cap_bytes if self.backlog_cap_bytes != float("inf") else None,
            "w": self.w,
            "qeq_bytes": self.qeq,
            "ps": self.ps,
            "sampling": self.sampling,
            "sample_spacing_s": self.sample_spacing_s,
            "gd_per_byte": self.gd,
            "gi_per_byte": self.gi,
            "ru_bps": self.ru,
            "rmin_bps": self.rmin,
            "hot_window_s": list(self.hot_window_s),
            **({"bc_frames": self.bc_frames, "timer_s": self.timer_s, "f": self.f_stages,
                "r_ai_bps": self.r_ai, "min_dec": self.min_dec} if self.scheme == "qcn" else {}),
            **({"kmin_bytes": self.kmin, "kmax_bytes": self.kmax, "pmax": self.pmax, "g": self.g,
                "alpha_timer_s": self.alpha_timer_s, "cnp_interval_s": self.cnp_interval_s,
                "bc_frames": self.bc_frames, "timer_s": self.timer_s, "f": self.f_stages,
                "r_ai_bps": self.r_ai} if self.scheme == "dcqcn" else {}),
        }


#: (1 − p) is evaluated as exp(n·log1p(−p)) with p capped here (p = 1 above Kmax)
_P_CAP = 0.999999


def _cycles(sigma: float, frames: float) -> float:
    """σ/((1 − σ)^(−n) − 1): completions of an n-frame cycle per frame (→ 1/n as σ → 0); the
    scalar form of :func:`.grid._cycles`."""
    x = min(-frames * math.log1p(-min(sigma, _P_CAP)), 700.0)
    return 1.0 / max(frames, 1e-300) if x < 1e-9 else sigma / math.expm1(x)


# --------------------------------------------------------------------------- DCQCN fixed point
# Here rather than in .dcqcn: the fixed point is DCQCN's reference queue, a derived figure of
# the parameters (as fbmax is for BCN and QCN), and .dcqcn builds on this module.


def _terms(p: float, r: float, fp: FluidParams) -> tuple[float, float, float, float, float, float]:
    """(a, α target, b, c, d, e) of the model at marking probability p and frame rate r."""
    lg = math.log1p(-min(p, _P_CAP))
    a = -math.expm1(fp.cnp_interval_s * r * lg)
    alpha = -math.expm1(fp.alpha_timer_s * r * lg)
    b = _cycles(p, fp.bc_frames)
    d = _cycles(p, fp.timer_s * r)
    c = b * math.exp(fp.f_stages * fp.bc_frames * lg)
    e = d * math.exp(fp.f_stages * fp.timer_s * r * lg)
    return a, alpha, b, c, d, e


def fixed_point(fp: FluidParams) -> dict[str, Any]:
    """The equilibrium of equations 1–3 with every hot flow at R* = μ/N_h: the marking
    probability p*, α*, R_T − R_C and the queue q* = RED⁻¹(p*) (Kmax when p* ≥ Pmax: the
    queue then sits at the step of the profile). ``limited`` is False when a hot flow offers
    less than R* (then no fixed point of this kind: the queue stays empty)."""
    rate = fp.fair_bps
    r = rate / fp.frame_bits
    limited = min(g.offered_bps for g in fp.groups) > rate

    def excess(p: float) -> float:
        """Decrease minus increase of R_C at the fixed point of α and R_T (positive: too much marking)."""
        a, alpha, b, c, d, e = _terms(p, r, fp)
        gap = fp.r_ai * r * (c + e) * fp.cnp_interval_s / a
        return rate * alpha * a / (2 * fp.cnp_interval_s) - 0.5 * gap * r * (b + d)

    lo, hi = 1e-12, _P_CAP
    for _ in range(200):  # bisection in log p (the excess grows with p)
        mid = math.sqrt(lo * hi)
        if excess(mid) > 0:
            hi = mid
        else:
            lo = mid
    p = math.sqrt(lo * hi)
    a, alpha, *_ = _terms(p, r, fp)
    b, c, d, e = _terms(p, r, fp)[2:]
    if fp.kmax <= fp.kmin or p >= fp.pmax:
        q = fp.kmax
    else:
        q = fp.kmin + p / fp.pmax * (fp.kmax - fp.kmin)
    return {
        "mark_probability": p,
        "queue_bytes": q if limited else 0.0,
        "rate_bps": rate,
        "alpha": alpha,
        "target_gap_bps": fp.r_ai * r * (c + e) * fp.cnp_interval_s / a,
        "cnp_per_s": a / fp.cnp_interval_s,
        "limited": bool(limited),
    }


def _bad(sid: str, message: str) -> ScenarioError:
    return ScenarioError(f"{sid}: {message}")


def _dcqcn_loop_delay(core: dict[str, Any], links: dict[str, Any], groups: tuple[FlowGroup, ...], hot: str,
                      frame: float) -> float:
    """τ* of DCQCN (§11.3): a rate change at the source reaches the CP after the data frame's
    serialisation, the propagation and the switch's processing; the mark it gets at dequeue
    reaches the NP after the frame's serialisation on the hot link and its propagation; the
    CNP (class (a), strict priority) goes back through the switch: two serialisations, two
    propagations and the processing. Out-of-band feedback replaces the CNP's way back by
    ``feedback_delay``. Marking at enqueue (``mark = "enqueue"``) also waits for the queue
    ahead of the frame; that delay is not constant and is left out here."""
    cm = core["cm"]
    cnp = float(cm["cnm_size"])
    proc = core["switch"]["processing_delay_ps"] * _PS
    hl = links[hot]
    c_hot, d_hot = float(hl["rate_bps"]), hl["delay_ps"] * _PS
    taus = []
    for g in groups:
        for f in g.flows:
            lk = links[f.split("->")[0]]
            c, d = float(lk["rate_bps"]), lk["delay_ps"] * _PS
            forward = 8 * frame / c + d + proc + 8 * frame / c_hot + d_hot
            if cm["feedback"] == "inband":
                back = 8 * cnp / c_hot + d_hot + proc + 8 * cnp / c + d
            else:
                back = cm["feedback_delay_ps"] * _PS
            taus.append(float(forward + back))
    return sum(taus) / len(taus)


def _engine_check(scen: Scenario) -> None:
    """What the engine itself refuses when it builds the simulation (no run; about a
    millisecond), as :func:`cnsim.run` would report it. Skipped without a built engine: the
    fluid model is pure numpy."""
    from ..engine import engine
    from ..errors import EngineMissing
    from ..runner import _front_end_error

    try:
        core = engine()
    except EngineMissing:
        return
    try:
        core.Simulation(scen.core_config())
    except Exception as err:  # ConfigError → ScenarioError (exit 2); EngineError → the engine's bug (exit 70)
        raise _front_end_error(core, scen, err) from None


#: the scenario keys behind a FluidParams field (for messages)
_FIELD_KEYS = {"w": "cm.w", "qeq": "cm.qeq", "ps": "cm.ps", "gd": "cm.gd", "gi": "cm.gi", "ru": "cm.ru", "rmin": "cm.rmin",
               "r_ai": "cm.r_ai", "min_dec": "cm.min_dec", "kmin": "cm.kmin", "kmax": "cm.kmax", "g": "cm.g",
               "pmin": "cm.pmin", "pmax": "cm.pmax", "fbmax": "cm.w, cm.qeq", "tau_s": "links.delay, cm.feedback_delay",
               "link_bps": "links.rate", "duration_s": "duration"}


def _fluid_limits(sid: str, p: FluidParams) -> FluidParams:
    """Refuse what the fluid model cannot integrate although the packet engine runs it: a
    parameter that is not finite, or a BCN loop without sampling, decrease or increase."""
    for name, value in vars(p).items():
        if not isinstance(value, float) or math.isfinite(value):
            continue
        if value > 0 and name in ("qmc", "backlog_cap_bytes", "buffer_bytes"):  # no ceiling
            continue
        key = _FIELD_KEYS.get(name, f"the scenario keys behind {name}")
        raise _bad(sid, f"{key}: the fluid model's {name} = {value!r} is not a finite number; allowed: finite values")
    if p.scheme == "dcqcn":
        return p
    if not p.ps > 0:
        if p.sampling == "linear":
            raise _bad(sid, 'cm.pmin = 0 with cm.sampling = "linear": at the equilibrium (Fb = 0) the congestion point then '
                            "samples nothing, so the fluid model's loop has no gain there to integrate or linearise; "
                            "allowed: cm.pmin > 0")
        raise _bad(sid, "cm.ps = 0: the congestion point never samples a frame, so there is no feedback loop for the "
                        "fluid model to integrate; allowed: cm.ps > 0")
    if p.scheme == "bcn":
        if not p.gd > 0:
            raise _bad(sid, "cm.gd = 0: the BCN fluid model needs a decrease gain > 0 — without one the rates never fall, "
                            "the queue has no equilibrium at Qeq and the loop no phase margin to report "
                            "(the packet simulator runs it: cnsim run); allowed: cm.gd > 0")
        if not p.gi > 0:
            raise _bad(sid, "cm.gi = 0: the BCN fluid model needs an increase gain > 0 — without one the rates only fall, "
                            "never return to the fair share, and the loop has no phase margin to report "
                            "(the packet simulator runs it: cnsim run); allowed: cm.gi > 0")
    return p


def default_scheme(scenario: str | Path | Scenario, set: dict[str, Any] | None = None) -> str | None:
    """The scheme the fluid model takes when the overrides choose none: a catalogue entry runs
    without CM and carries its deck's schemes as presets, so its first preset with a fluid model
    (in file order: the deck's own scheme, BCN for S0 and S2) — ``None`` when ``cm.scheme`` is
    set, the scenario has a scheme, or no preset has a fluid model."""
    if set and "cm.scheme" in set:
        return None
    scen = load(scenario)
    if scen.resolved.scheme != "none":
        return None
    return next((s for s in scen.preset_schemes if s in FLUID_SCHEMES), None)


def fluid_params(scenario: str | Path | Scenario, set: dict[str, Any] | None = None, *,
                 engine_check: bool = True) -> FluidParams:
    """Derive :class:`FluidParams` from a scenario (id, path or object) and overrides.

    Raises :class:`ScenarioError` for a scheme without a fluid model, a scenario that is not a
    single-switch, single-bottleneck one, parameters the packet engine refuses (the front end's
    checks, and — with ``engine_check`` and a built engine — the engine building the
    simulation, without running it), and parameters the fluid model cannot take (a BCN gain of
    0, no sampling).
    """
    scen = load(scenario)
    scen.set_many(set)
    scen.validate()
    r = scen.resolved
    sid = scen.id
    if r.scheme not in FLUID_SCHEMES:
        raise _bad(sid, f"cm.scheme = {r.scheme!r} has no fluid model; the fluid models are "
                   + ", ".join(f'"{s}"' for s in FLUID_SCHEMES) + " (e.g. --set cm.scheme=bcn)")
    core = scen.core_config()  # read only: a copy of a large star's config cost more than its resolution
    if engine_check:
        _engine_check(scen)
    return _fluid_limits(sid, _fluid_params(scen, core))


def _fluid_params(scen: Scenario, core: dict[str, Any]) -> FluidParams:
    """:func:`fluid_params` once the scenario is checked."""
    r = scen.resolved
    sid = scen.id
    if r.scheme == "dcqcn" and core["cm"]["rp"] != "paper":
        raise _bad(sid, 'cm.rp = "nic": the DCQCN fluid model (§11.3) is the paper\'s reaction point; use cm.rp = "paper"')
    topo = core["topology"]
    if r.doc.topology.kind == "fat_tree" or len(topo["switches"]) != 1:
        what = "a fat tree" if r.doc.topology.kind == "fat_tree" else f"{len(topo['switches'])} switches"
        raise _bad(sid, f"the fluid model covers single-switch scenarios (one congestion point); this one has {what}")
    if len({h["node"] for h in core.get("hotspots", [])}) > 1:
        raise _bad(sid, "the fluid model takes one hot port; this scenario's hotspot moves between nodes")
    hot = r.hot_node
    if hot is None:
        raise _bad(sid, f"metrics.hot_port = {r.hot_port!r} does not feed a node; the fluid model needs one")
    links = {lk["b"] if lk["a"] in topo["switches"] else lk["a"]: lk for lk in topo["links"]}
    nodes = topo["nodes"]
    frame = float(core["traffic"]["frame_size"])
    end_s = core["duration_ps"] * _PS
    cm = core["cm"]

    # hot flows
    buckets: dict[tuple[float, float, float, float], list[str]] = {}
    for src in core["traffic"]["sources"]:
        node = src["node"]
        if node == hot:
            continue
        rate = float(links[node]["rate_bps"])
        if src["dst"] is None:
            offered = src["load"] * rate / (len(nodes) - 1)
        elif src["dst"] == hot:
            offered = src["load"] * rate
        else:
            continue
        start = src["start_ps"] * _PS
        stop = end_s if src["stop_ps"] is None else src["stop_ps"] * _PS
        buckets.setdefault((offered, rate, start, stop), []).append(f"{node}->{hot}")
    if not buckets:
        raise _bad(sid, f"no traffic is sent to the hot node {hot!r}; nothing for the fluid model to do")
    groups = tuple(FlowGroup(tuple(v), k[0], k[1], k[2], k[3]) for k, v in buckets.items())

    hot_link = links[hot]
    link_bps = float(hot_link["rate_bps"])
    mu_windows = tuple(
        (h["start_ps"] * _PS, h["end_ps"] * _PS, float(h["rate"])) for h in core.get("hotspots", []) if h["node"] == hot
    )
    if len(mu_windows) > 1:
        raise _bad(sid, "the fluid model takes at most one hotspot window on the hot node")
    if mu_windows and mu_windows[0][2] <= 0:
        raise _bad(sid, "a hotspot rate of 0 has no fluid equilibrium (μ = 0); use a rate > 0")
    congested_from = mu_windows[0][0] if mu_windows else max(g.start_s for g in groups)
    if congested_from >= end_s:
        what = "its hotspot starts" if mu_windows else "its hot flows all run"
        raise _bad(sid, f"duration = {end_s:g} s ends before {what} ({congested_from:g} s): nothing for the fluid model to "
                        f"integrate; allowed: a duration longer than {congested_from:g} s")

    # loop delay, averaged over the hot sources (all equal in the shipped scenarios)
    cnm = float(cm["cnm_size"])
    taus = []
    for g in groups:
        for f in g.flows:
            src = f.split("->")[0]
            lk = links[src]
            d = lk["delay_ps"] * _PS
            c = float(lk["rate_bps"])
            back = d + 8 * cnm / c if cm["feedback"] == "inband" else cm["feedback_delay_ps"] * _PS
            taus.append(8 * frame / c + d + back)
    tau = sum(taus) / len(taus)
    if r.scheme == "dcqcn":
        tau = _dcqcn_loop_delay(core, links, groups, hot, frame)

    # buffer: the hot queue's ceiling
    sw = core["switch"]
    th = sw["thresholds"][topo["switches"][0]]
    n_in = len({f.split("->")[0] for g in groups for f in g.flows})
    if sw["buffer"] == "egress":
        buf = float(sw["memory_per_port"])
    elif sw["buffer"] == "shared":
        buf = float(th["xoff"] if sw["pause"] else th["capacity"])
    else:  # partitioned: each hot input can hold up to its partition (or XOFF with PAUSE)
        buf = float(n_in * (th["xoff"] if sw["pause"] else th["capacity"]))
    if sw.get("oq_limit") is not None:
        buf = min(buf, float(sw["oq_limit"]))

    nic = core["nic"]
    if nic["ingress"] == "per_voq":
        voq = float(nic["ingress_size"]) / (len(nodes) - 1)
    elif nic["ingress"] == "shared":
        voq = float(nic["ingress_size"])
    else:
        voq = float("inf")

    if r.scheme == "dcqcn":
        # cm.k_scale = "link": Kmin/Kmax are a links.rate port's, and the hot port scales them by
        # its own rate as the engine's CP does (DcqcnParams::thresholds); a factor of 1 otherwise
        k_scale = link_bps / float(cm["k_rate_bps"]) if cm.get("k_rate_bps") is not None else 1.0
        p = FluidParams(
            scenario=sid, scheme="dcqcn", groups=groups, link_bps=link_bps, mu_windows=mu_windows,
            frame_bytes=frame, tau_s=tau, buffer_bytes=buf, backlog_cap_bytes=voq, duration_s=end_s,
            window_s=(r.window_ps[0] * _PS, r.window_ps[1] * _PS), w=0.0, qeq=0.0,
            ps=float(cm["pmax"]), sampling="red", pmax=float(cm["pmax"]), rmin=float(cm["rmin_bps"]),
            kmin=float(cm["kmin"]) * k_scale, kmax=float(cm["kmax"]) * k_scale, g=float(cm["g"]),
            alpha_timer_s=cm["alpha_timer_ps"] * _PS, cnp_interval_s=cm["cnp_interval_ps"] * _PS,
            bc_frames=float(cm["bc"]) / frame, timer_s=cm["timer_ps"] * _PS, f_stages=float(cm["f"]),
            r_ai=float(cm["r_ai_bps"]), extra={"alpha_init": float(cm["alpha_init"]), "mark": str(cm["mark"])},
        )
        return replace(p, qeq=fixed_point(p)["queue_bytes"])
    w = float(cm["w"])
    qeq = float(cm["qeq"])
    fbmax = (2 * w + 1) * qeq
    bits = int(cm["fb_bits"])
    quanta = float(2**bits - 1)  # 0 without quantisation (fb_bits = 0)
    per_byte = quanta / fbmax if quanta else 1.0  # gains per quantum → per byte of Fb
    sampling = str(cm["sampling"])
    if sampling in ("interval", "jitter"):
        ps = frame / float(cm["sample_bytes"])
    elif sampling == "table":
        ps = frame / 150_000.0  # the table's base interval (QntzFb = 0)
    elif sampling == "linear":
        ps = float(cm["pmin"])
    else:
        ps = float(cm["ps"])
    common: dict[str, Any] = dict(
        scenario=sid, scheme=r.scheme, groups=groups, link_bps=link_bps, mu_windows=mu_windows,
        frame_bytes=frame, tau_s=tau, buffer_bytes=buf, backlog_cap_bytes=voq, duration_s=end_s,
        window_s=(r.window_ps[0] * _PS, r.window_ps[1] * _PS),
        w=w, qeq=qeq, ps=ps, sampling=sampling, pmin=float(cm["pmin"]), pmax=float(cm["pmax"]),
        fbmax=fbmax, fb_quanta=quanta, rmin=float(cm["rmin_bps"]),
        drift_bps_per_s=(float(cm["drift_rate_bps"]) / (cm["drift_period_ps"] * _PS)) if cm["drift_rate_bps"] else 0.0,
    )
    if r.scheme == "bcn":
        src_rate = groups[0].line_bps
        gi_scale = src_rate / float(cm["gi_rate_bps"])
        return FluidParams(
            **common,
            oversample=float(cm["oversample_factor"]),
            bcn_max=bool(cm["bcn_max"]),
            qmc=float(cm["qmc"]) if cm["bcn_max"] else float("inf"),
            negative_only_above_qeq=bool(cm["negative_only_above_qeq"]),
            gd=float(cm["gd"]) * per_byte,
            gi=float(cm["gi"]) * per_byte * gi_scale,
            ru=float(cm["ru_bps"]),
        )
    # qcn: QntzFb has 2^b − 1 levels over Fbmax; gd is per quantum
    return FluidParams(
        **common,
        gd=float(cm["gd"]) * per_byte,
        bc_frames=float(cm["bc"]) / frame,
        timer_s=cm["timer_ps"] * _PS,
        f_stages=float(cm["f"]),
        r_ai=float(cm["r_ai_bps"]),
        min_dec=float(cm["min_dec"]),
        extra={"hai": bool(cm["hai"]), "efr": bool(cm["efr"]), "target_update": str(cm["target_update"])},
    )
