"""``cnsim fluid``: the fluid model of a scenario, its stability figures, figures and files.

spec/contract.md "Fluid model output" (and, for DCQCN, algorithms.md §11.3): ``DIR/fluid.json`` (scheme, queue_mean_bytes,
rate_mean_gbps, phase_margin_rad, crossover_rad_s, period_s, stable, and more),
``DIR/fluid.parquet`` (``t_s, quantity, value``), the figures (``fluid.png``, the stability
maps ``stability_map_w_tau.png`` and ``stability_map_gd_ps.png`` for BCN) and, with
``compare``, the packet run of the same scenario in ``DIR/packet/`` and ``compare.png`` with
both on one plot, and the agreement figures in ``fluid.json["compare"]``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from ..errors import ScenarioError
from ..results import dump_json
from ..scenario import Scenario
from . import work
from .analysis import dominant_period, onset_period, ringing_period, window_mask
from .dcqcn import linear_modes
from .grid import FluidRun
from .linear import MAP_AXES, bcn_linear, bcn_phase_margin_grid, w_needed
from .models import bcn_equilibrium, simulate
from .params import FluidParams, default_scheme, fluid_params

__all__ = ["fluid_study", "write_outputs", "stability_map", "FluidStudy"]

#: the packet run of --compare records the queue in 100 us bins (periods of a few ms)
COMPARE_BIN = "100us"


class FluidStudy:
    """The fluid run of one scenario plus its figures (and the packet run, if compared)."""

    def __init__(self, params: FluidParams, run: FluidRun, summary: dict[str, Any], packet: Any = None) -> None:
        self.params = params
        self.run = run
        self.summary = summary
        self.packet = packet


def _fluid_span(p: FluidParams) -> tuple[float, float]:
    """Integrate from a little before the congestion starts to 0.1 s after it ends (or through
    the measurement window, when it starts later than that)."""
    lo, hi = p.hot_window_s
    t0, t1 = max(0.0, lo - 0.005), min(p.duration_s, hi + 0.1)
    if p.window_s[0] >= t1:
        t1 = min(p.duration_s, p.window_s[1])
    return t0, t1


def _fluid_figures(p: FluidParams, run: FluidRun) -> dict[str, Any]:
    """Window means and the oscillation period of the fluid trajectory."""
    t, q, lam = run.t, run.queue[:, 0], run.rates[:, 0, 0]
    m = window_mask(t, p.window_s)
    out: dict[str, Any] = {
        "queue_mean_bytes": float(np.mean(q[m])) if m.any() else None,
        "queue_std_bytes": float(np.std(q[m])) if m.any() else None,
        "rate_mean_gbps": float(np.mean(lam[m]) / 1e9) if m.any() else None,
        "aggregate_mean_gbps": float(np.mean(run.aggregate[m, 0]) / 1e9) if m.any() else None,
        "underrun_fraction": float(np.mean(q[m] <= 0.0)) if m.any() else None,
    }
    period = dominant_period(t[m], q[m]) if m.sum() > 16 and out["queue_std_bytes"] and out["queue_std_bytes"] > 0.01 * p.qeq else None
    kind = "limit cycle" if period else None
    if period is None:
        lo, hi = p.hot_window_s
        hm = window_mask(t, (lo, hi))
        period = ringing_period(t[hm], q[hm], p.qeq, min_amplitude=0.02 * p.qeq)
        kind = "decaying transient" if period else None
    if p.scheme == "dcqcn":
        # §11.3: the loop rings below its fixed point while α settles, so the onset's first
        # return is the trajectory's period when there is no limit cycle
        lo, hi = p.hot_window_s
        hm = window_mask(t, (lo, hi))
        out["onset_period_s"] = onset_period(t[hm], q[hm])
        if kind is None and out["onset_period_s"]:
            period, kind = out["onset_period_s"], "onset ringing"
    out["period_s"] = period
    out["oscillation"] = kind
    return out


def _check_trajectory(p: FluidParams, run: FluidRun) -> None:
    """Refuse a trajectory that is not finite (a NaN or an overflow): its figures would be NaN."""
    for name, values in (("queue", run.queue), ("rate", run.rates), ("aggregate", run.aggregate)):
        bad = ~np.isfinite(values)
        if bad.any():
            t = float(run.t[int(np.argmax(bad.reshape(bad.shape[0], -1).any(axis=1)))])
            raise ScenarioError(
                f"{p.scenario}: the {p.scheme} fluid model's {name} is not finite from t = {t:.6g} s: the parameters "
                f"are outside what the model integrates (gd = {p.gd:g}, gi = {p.gi:g} per byte, w = {p.w:g}, "
                f"ps = {p.ps:g}); change them, or use the packet simulator (cnsim run)"
            )


def fluid_study(
    scenario: str | Path | Scenario,
    set: dict[str, Any] | None = None,
    *,
    compare: bool = False,
    seed: int | None = None,
    duration: Any = None,
    force: bool = False,
) -> FluidStudy:
    """Integrate the scheme's fluid model for ``scenario``; with ``compare`` also run the packet
    simulator on the same scenario (queue binned at 100 us unless ``metrics.bin`` is set).

    Both are estimated before anything runs: an integration over :data:`.work.MAX_WORK` steps
    (:mod:`.work`) or a packet run over :mod:`cnsim.budget`'s bounds raises
    :class:`~cnsim.errors.ResourceError` (exit 2) unless ``force``."""
    overrides = dict(set or {})
    if duration is not None:
        overrides["duration"] = duration
    preset = default_scheme(scenario, overrides)
    if preset is not None:
        overrides["cm.scheme"] = preset  # the packet run of --compare takes the same scheme
    p = fluid_params(scenario, overrides)
    t0, t1 = _fluid_span(p)
    work.check(work.estimate([p], t_start=t0, t_end=t1), force=force, what=p.scenario)
    pset = dict(overrides)
    if compare:
        from .. import budget
        from ..runner import prepare

        if "metrics.bin" not in pset:
            pset["metrics.bin"] = COMPARE_BIN
        budget.check(prepare(scenario, pset, seed).lower(), force=force)  # before the fluid model runs
    x_run = simulate(p, t_start=t0, t_end=t1, force=force)
    _check_trajectory(p, x_run)
    summary: dict[str, Any] = {"scheme": p.scheme, "scenario": p.scenario, "parameters": p.to_dict()}
    fl = _fluid_figures(p, x_run)
    if fl["queue_mean_bytes"] is None:
        raise ScenarioError(
            f"{p.scenario}: the measurement window {list(p.window_s)} s holds no point of the fluid trajectory "
            f"({t0:g} to {t1:g} s); allowed: a metrics.window that overlaps the congestion"
        )
    summary.update({"queue_mean_bytes": fl["queue_mean_bytes"], "rate_mean_gbps": fl["rate_mean_gbps"]})
    summary["fluid"] = fl
    if p.scheme == "bcn":
        lin = bcn_linear(p)
        summary.update({k: lin[k] for k in ("phase_margin_rad", "crossover_rad_s", "period_s", "stable")})
        # the W this loop delay needs (scenario re-resolved at each W: expression gains follow it)
        lin["w_needed"] = w_needed(scenario, p.tau_s, overrides)
        summary["linear"] = lin
        summary["equilibrium"] = bcn_equilibrium(p)
    elif p.scheme == "dcqcn":
        # §11.3: no phase margin; period from the trajectory, small-signal modes at the fixed point
        lin = linear_modes(p)
        summary.update({"phase_margin_rad": None, "crossover_rad_s": None, "period_s": fl["period_s"],
                        "stable": fl["oscillation"] != "limit cycle" and lin["stable"] is not False})
        summary["linear"] = {k: v for k, v in lin.items() if k != "fixed_point"}
        summary["equilibrium"] = lin["fixed_point"]
    else:
        # §11 solver notes: QCN has no linearisation here; period and stability from the trajectory
        summary.update({"phase_margin_rad": None, "crossover_rad_s": None, "period_s": fl["period_s"],
                        "stable": fl["oscillation"] != "limit cycle"})
        summary["equilibrium"] = {"queue_bytes": p.qeq, "rate_bps": p.fair_bps}
    packet = None
    if compare:
        from ..api import run as packet_run  # the public run: its folder gets its page too

        packet = packet_run(scenario, set=pset, seed=seed, force=force)
        summary["compare"] = _agreement(p, summary, packet)
    return FluidStudy(p, x_run, summary, packet)


def _packet_series(p: FluidParams, packet: Any) -> dict[str, Any]:
    """The packet run's hot queue (t, bytes) and mean per-flow throughput of the hot flows."""
    hp = packet.scenario.resolved.hot_port
    q = packet.series("queue")
    q = q.filter(pc.equal(q["queue"], hp))
    tq, bq = q["t_s"].to_numpy(), q["bytes"].to_numpy()
    th = packet.series("throughput")
    flows = [f"flow:{f}" for g in p.groups for f in g.flows]
    th = th.filter(pc.is_in(th["entity"], pa.array(flows)))
    per_flow: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    if th.num_rows:
        ent = np.asarray(th["entity"].to_pylist(), dtype=object)
        t = th["t_s"].to_numpy()
        v = th["gbps"].to_numpy()
        dt = float(np.median(np.diff(np.unique(t)))) if np.unique(t).size > 1 else 1e-3
        k = max(1, int(round(1e-3 / dt)))  # smooth to 1 ms: a 133 Mb/s flow sends a frame per 90 us
        for name in flows:
            m = ent == name
            if m.any():
                vv = np.convolve(v[m], np.ones(k) / k, mode="same")
                per_flow[name.removeprefix("flow:")] = (t[m], vv)
    return {"t_queue": tq, "queue": bq, "per_flow": per_flow}


def _agreement(p: FluidParams, summary: dict[str, Any], packet: Any) -> dict[str, Any]:
    s = packet.summary
    hot = (s.get("queue_bytes") or {}).get("hot") or {}
    ser = _packet_series(p, packet)
    m = window_mask(ser["t_queue"], p.window_s)
    pk_period = dominant_period(ser["t_queue"][m], ser["queue"][m]) if m.sum() > 16 else None
    per_flow = ((s.get("throughput_gbps") or {}).get("per_flow") or {})
    hot_flows = [f for g in p.groups for f in g.flows]
    rates = [per_flow[f] for f in hot_flows if f in per_flow]
    fl = summary["fluid"]
    fluid_period = fl["period_s"] or summary.get("linear", {}).get("damped_period_s")
    out = {
        "packet": {
            "queue_mean_bytes": hot.get("mean"),
            "queue_std_bytes": hot.get("std"),
            "rate_mean_gbps": float(np.mean(rates)) if rates else None,
            "hot_port_gbps": (s.get("throughput_gbps") or {}).get("hot_port"),
            "period_s": pk_period,
            "drops": (s.get("drops") or {}).get("frames"),
        },
        "fluid_period_s": fluid_period,
    }
    if p.scheme == "dcqcn":
        lo, hi = p.hot_window_s
        hm = window_mask(ser["t_queue"], (lo, hi))
        out["packet"]["onset_period_s"] = onset_period(ser["t_queue"][hm], ser["queue"][hm])
    if hot.get("mean") is not None and fl["queue_mean_bytes"] is not None:
        out["queue_mean_rel_diff"] = (fl["queue_mean_bytes"] - hot["mean"]) / hot["mean"] if hot["mean"] else None
    if pk_period and fluid_period:
        out["period_ratio_fluid_over_packet"] = fluid_period / pk_period
    return out


# --------------------------------------------------------------------------- files and figures
def _long_table(study: FluidStudy) -> pa.Table:
    run, p = study.run, study.params
    fb_name = "mark_probability" if p.scheme == "dcqcn" else "fb_bytes"
    cols: list[tuple[str, np.ndarray]] = [("queue_bytes", run.queue[:, 0]), (fb_name, run.fb[:, 0]),
                                         ("aggregate_gbps", run.aggregate[:, 0] / 1e9)]
    for gi, g in enumerate(p.groups):
        suffix = "" if len(p.groups) == 1 else f":{g.flows[0]}"
        cols.append((f"rate_gbps{suffix}", run.rates[:, 0, gi] / 1e9))
        if run.target is not None:
            cols.append((f"target_rate_gbps{suffix}", run.target[:, 0, gi] / 1e9))
        if run.alpha is not None:
            cols.append((f"alpha{suffix}", run.alpha[:, 0, gi]))
    t = run.t
    return pa.table({
        "t_s": np.concatenate([t for _ in cols]),
        "quantity": pa.array(np.repeat([c[0] for c in cols], t.size).tolist(), pa.string()),
        "value": np.concatenate([c[1] for c in cols]),
    })


def _save(fig: Figure, path: Path) -> None:
    FigureCanvasAgg(fig)
    fig.savefig(path, dpi=110)


def _trajectory_figure(study: FluidStudy, with_packet: bool) -> Figure:
    """The hot queue (KB) over the per-flow rate (Gb/s), with Qeq (or DCQCN's fixed point and
    marking thresholds), the fair share, the overload and the measurement window."""
    p, run = study.params, study.run
    fig = Figure(figsize=(9, 6.5), layout="constrained")
    axq, axr = fig.subplots(2, 1, sharex=True)
    if with_packet and study.packet is not None:
        ser = _packet_series(p, study.packet)
        axq.plot(ser["t_queue"], ser["queue"] / 1e3, color="tab:gray", lw=0.7, label=f"packet ({study.packet.scenario.resolved.doc.metrics.bin / 1e6:g} us bins)")
        for i, (tt, vv) in enumerate(ser["per_flow"].values()):
            axr.plot(tt, vv, color="tab:gray", lw=0.5, alpha=0.6,
                     label="packet: per-flow throughput (1 ms average)" if i == 0 else None)
    axq.plot(run.t, run.queue[:, 0] / 1e3, color="tab:blue", lw=1.3, label="fluid model")
    if p.scheme == "dcqcn":
        axq.axhline(p.qeq / 1e3, color="tab:green", ls="--", lw=1, label=f"fixed point q* = {p.qeq / 1e3:.4g} KB")
        for k, name in ((p.kmin, "Kmin"), (p.kmax, "Kmax")):
            axq.axhline(k / 1e3, color="tab:purple", ls=":", lw=1, label=f"{name} = {k / 1e3:g} KB")
    else:
        axq.axhline(p.qeq / 1e3, color="tab:green", ls="--", lw=1, label=f"Qeq = {p.qeq / 1e3:g} KB")
    axr.plot(run.t, run.rates[:, 0, 0] / 1e9, color="tab:blue", lw=1.3, label="fluid: per-flow sending rate")
    if run.target is not None:
        axr.plot(run.t, run.target[:, 0, 0] / 1e9, color="tab:orange", lw=1, label="fluid: target rate R_T")
    # the max-min share of the plotted group (rates[:, 0, 0]), not μ/N_h: a group that offers
    # less than μ/N_h keeps its offer and leaves the rest to the others
    share = p.maxmin_bps[0]
    which = f" (max-min, of the {p.groups[0].count} flows drawn)" if len(p.groups) > 1 else ""
    axr.axhline(share / 1e9, color="tab:green", ls="--", lw=1, label=f"fair share {share / 1e9:.3g} Gb/s{which}")
    for ax in (axq, axr):
        lo, hi = p.hot_window_s
        ax.axvspan(lo, hi, color="tab:red", alpha=0.06)
        for t in p.window_s:
            ax.axvline(t, color="0.5", ls=":", lw=1)
        ax.grid(True, alpha=0.3)
        ax.legend(loc="upper right", fontsize=8)
    axq.set_ylabel("hot queue (KB)")
    axr.set_ylabel("rate (Gb/s)")
    axr.set_xlabel("time (s)")
    s = study.summary
    pm = s.get("phase_margin_rad")
    pm_txt = f"PM = {pm:.3f} rad, " if pm is not None else ""
    per = s.get("period_s")
    title = f"{p.scenario} — {p.scheme} fluid model: {pm_txt}{'stable' if s.get('stable') else 'unstable'}"
    if per:
        title += f", period {per * 1e3:.2f} ms"
    axq.set_title(title, fontsize=10)
    axq.set_xlim(0, p.duration_s)
    return fig


def _map_ranges(p: FluidParams) -> dict[str, tuple[float, float]]:
    """The span of each of :data:`MAP_AXES` a stability map covers: fixed spans for W, the loop
    delay, p_s and N_h; 30x either side of the scenario's gains and 20x of its service rate
    (at most 100 Gb/s)."""
    return {
        "w": (0.1, 64.0), "tau": (1e-6, 2e-3), "gd": (p.gd / 30, p.gd * 30), "gi": (p.gi / 30, p.gi * 30),
        "ps": (0.002, 0.2), "n_hot": (1, 256), "mu": (p.mu_bps / 20, min(p.mu_bps * 20, 1e11)),
    }


def stability_map(p: FluidParams, x: str, y: str, path: Path, n: int = 160) -> dict[str, Any]:
    """Phase margin (smaller side) over two of :data:`MAP_AXES`, around the scenario's point."""
    centre = {"w": p.w, "tau": p.tau_s, "gd": p.gd, "gi": p.gi, "ps": p.ps, "n_hot": p.n_hot, "mu": p.mu_bps}
    ranges = _map_ranges(p)
    for axis in (x, y):
        lo, hi = ranges[axis]
        if not (0 < lo < hi < np.inf):
            raise ValueError(f"stability_map: the {axis} axis around {centre[axis]:g} has no range to map ({lo:g} to {hi:g})")
    xs = np.geomspace(*ranges[x], n)
    ys = np.geomspace(*ranges[y], n)
    X, Y = np.meshgrid(xs, ys)
    pm = bcn_phase_margin_grid(p, **{x: X, y: Y})
    fig = Figure(figsize=(7, 5.5), layout="constrained")
    ax = fig.subplots()
    lim = float(min(max(np.nanmax(pm), 0.2), np.pi / 2))  # colour range set by the stable side
    mesh = ax.pcolormesh(X, Y, np.clip(pm, -lim, lim), cmap="RdBu", vmin=-lim, vmax=lim, shading="auto")
    fig.colorbar(mesh, ax=ax, label="phase margin (rad), smaller of AI and MD")
    ax.contour(X, Y, pm, levels=[0.0], colors="k", linewidths=1.5)
    ax.plot([centre[x]], [centre[y]], marker="*", color="gold", markeredgecolor="k", markersize=14, label="this scenario")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(MAP_AXES[x])
    ax.set_ylabel(MAP_AXES[y])
    ax.set_title(f"{p.scenario} — BCN linear stability (black: PM = 0; blue: stable)", fontsize=10)
    ax.legend(loc="lower left", fontsize=8)
    _save(fig, path)
    return {"x": x, "y": y, "file": path.name}


def write_outputs(study: FluidStudy, out: Path, *, plots: bool = True,
                  maps: tuple[tuple[str, str], ...] = (("w", "tau"), ("gd", "ps"))) -> list[Path]:
    """Write fluid.json, fluid.parquet, the figures and (compared) the packet run folder."""
    out.mkdir(parents=True, exist_ok=True)
    written = [out / "fluid.json", out / "fluid.parquet"]
    pq.write_table(_long_table(study), out / "fluid.parquet")
    if study.packet is not None:
        study.packet.save(out / "packet", plots=plots)
        written.append(out / "packet")
    if plots:
        _save(_trajectory_figure(study, with_packet=False), out / "fluid.png")
        written.append(out / "fluid.png")
        if study.packet is not None:
            _save(_trajectory_figure(study, with_packet=True), out / "compare.png")
            written.append(out / "compare.png")
        if study.params.scheme == "bcn":
            study.summary["maps"] = []
            for x, y in maps:
                path = out / f"stability_map_{x}_{y}.png"
                study.summary["maps"].append(stability_map(study.params, x, y, path))
                written.append(path)
    (out / "fluid.json").write_text(dump_json(study.summary), encoding="utf-8")
    return written

