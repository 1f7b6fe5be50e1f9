"""What ``cnsim fluid`` reports of a trajectory and writes (cnsim.fluid.report), driven by
trajectories written by hand: window means, the oscillation and its period by kind, the
refusal of a trajectory that is not finite, the long table of fluid.parquet, and the agreement
figures of --compare against a real packet run."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import cnsim
import numpy as np
import pyarrow.compute as pc
import pytest
from cnsim import ScenarioError
from cnsim.fluid import bcn_equilibrium, bcn_linear, fluid_params, w_needed
from cnsim.fluid.analysis import dominant_period, window_mask
from cnsim.fluid.dcqcn import linear_modes
from cnsim.fluid.grid import FluidRun
from cnsim.fluid.linear import MAP_AXES
from cnsim.fluid.params import FlowGroup, FluidParams
from cnsim.fluid.report import (
    FluidStudy,
    _agreement,
    _check_trajectory,
    _fluid_figures,
    _fluid_span,
    _long_table,
    _map_ranges,
    _packet_series,
    _trajectory_figure,
    fluid_study,
    stability_map,
    write_outputs,
)
from cnsim.results import Result

#: zhb-og-single-hop with QCN: window 0.2–0.5 s, hot port overloaded 0.1–0.5 s, Qeq 150 KB
QCN = fluid_params("zhb-og-single-hop", {"cm.scheme": "qcn"})
DT = 1e-4
T = np.arange(0.0, 0.6, DT)


def trajectory(p: FluidParams, q: np.ndarray, *, rate: float = 1e9, target: bool = False, alpha: bool = False,
               groups: int = 1) -> FluidRun:
    n = q.size
    rates = np.full((n, 1, groups), rate)
    rates[:, 0, 0] += np.arange(n)  # the first group's rate rises by 1 b/s a step
    return FluidRun(params=[p], t=T[:n], queue=q.reshape(n, 1), rates=rates, limiter=rates.copy(),
                    target=rates * 2 if target else None, backlog=None, fb=np.full((n, 1), -5.0),
                    aggregate=np.full((n, 1), 2e9), h=DT, alpha=np.full((n, 1, groups), 0.25) if alpha else None)


def test_the_window_means_are_over_the_measurement_window_only() -> None:
    q = np.where(T < 0.2, 1e6, 150_000.0)  # a huge queue before the window counts for nothing
    fl = _fluid_figures(QCN, trajectory(QCN, q))
    inside = np.arange(T.size)[window_mask(T, QCN.window_s)]
    assert fl["queue_mean_bytes"] == 150_000.0 and fl["queue_std_bytes"] == 0.0
    assert fl["rate_mean_gbps"] == pytest.approx((1e9 + inside.mean()) / 1e9, rel=1e-12)
    assert fl["aggregate_mean_gbps"] == 2.0 and fl["underrun_fraction"] == 0.0
    assert (fl["period_s"], fl["oscillation"]) == (None, None)


def test_the_underrun_is_the_window_share_of_an_empty_queue() -> None:
    q = np.where(np.arange(T.size) % 40 < 10, 0.0, 200_000.0)  # empty a quarter of every 4 ms
    fl = _fluid_figures(QCN, trajectory(QCN, q))
    assert fl["underrun_fraction"] == 0.25
    assert fl["queue_mean_bytes"] == pytest.approx(150_000.0, rel=1e-12)
    assert fl["period_s"] == pytest.approx(0.004, rel=0.01) and fl["oscillation"] == "limit cycle"
    q[np.arange(T.size) % 40 == 9] = 0.5  # half a byte waiting is not an empty queue
    assert _fluid_figures(QCN, trajectory(QCN, q))["underrun_fraction"] == 0.225


@pytest.mark.parametrize(("amplitude", "kind"), [(0.015, "limit cycle"), (0.014, None)])
def test_a_limit_cycle_needs_a_std_over_one_percent_of_qeq(amplitude: float, kind: str | None) -> None:
    """A sine of amplitude A has std A/√2: 1.5 % of Qeq is over the 1 % bar, 1.4 % under it (and
    under the 2 % a ringing must reach, so nothing is reported)."""
    q = QCN.qeq * (1 + amplitude * np.sin(2 * np.pi * T / 0.005))
    fl = _fluid_figures(QCN, trajectory(QCN, q))
    assert fl["queue_std_bytes"] == pytest.approx(amplitude * QCN.qeq / np.sqrt(2), rel=1e-3)
    assert fl["oscillation"] == kind
    assert fl["period_s"] == (pytest.approx(0.005, rel=0.01) if kind else None)


@pytest.mark.parametrize(("samples", "kind"), [(17, "limit cycle"), (16, "decaying transient")])
def test_a_limit_cycle_is_read_from_more_than_16_samples_of_the_window(samples: int, kind: str) -> None:
    """A 4-sample period throughout: 17 samples in the window show it as a limit cycle; with 16
    the window is too short to read, and the crossings over the whole overload give the period."""
    q = QCN.qeq * (1 + 0.5 * np.sin(2 * np.pi * np.arange(T.size) / 4 + 0.3))
    window = (0.20005, 0.20005 + samples * DT)  # between samples: exactly that many inside
    assert window_mask(T, window).sum() == samples
    fl = _fluid_figures(replace(QCN, window_s=window), trajectory(QCN, q))
    assert fl["oscillation"] == kind and fl["period_s"] == pytest.approx(4 * DT, rel=0.02)


def test_a_ringing_that_dies_before_the_window_is_a_decaying_transient() -> None:
    """Flat in the window; after the hotspot starts (0.1 s) it rings at 6 ms, decaying in 20 ms."""
    s = T - 0.1
    ring = np.where((s >= 0) & (T < 0.2), -60_000 * np.cos(2 * np.pi * s / 0.006) * np.exp(-s / 0.02), 0.0)
    fl = _fluid_figures(QCN, trajectory(QCN, QCN.qeq + ring))
    assert fl["queue_std_bytes"] == 0.0
    assert fl["oscillation"] == "decaying transient" and fl["period_s"] == pytest.approx(0.006, rel=0.02)


def test_a_window_the_trajectory_does_not_reach_has_no_figures() -> None:
    fl = _fluid_figures(replace(QCN, window_s=(0.7, 0.8)), trajectory(QCN, np.full(T.size, 1.0)))
    assert {k: fl[k] for k in ("queue_mean_bytes", "queue_std_bytes", "rate_mean_gbps", "aggregate_mean_gbps",
                               "underrun_fraction", "period_s", "oscillation")} == dict.fromkeys(
        ("queue_mean_bytes", "queue_std_bytes", "rate_mean_gbps", "aggregate_mean_gbps", "underrun_fraction",
         "period_s", "oscillation"))


def test_dcqcn_reports_the_onset_ringing_as_its_period_when_there_is_no_limit_cycle() -> None:
    """§11.3: an overshoot at the onset and maxima every 4 ms after it, never below the fixed
    point (so no ringing about it), then flat."""
    p = fluid_params("dcqcn-incast-2to1", {"cm.scheme": "dcqcn"})  # window 0.05–0.2 s, overloaded from 0
    ring = np.where(T < 0.05, 40_000 * np.exp(-T / 0.008) * (1 + np.sin(2 * np.pi * T / 0.004)), 0.0)
    fl = _fluid_figures(p, trajectory(p, p.qeq + ring))
    assert fl["onset_period_s"] == pytest.approx(0.004, rel=0.05)
    assert (fl["oscillation"], fl["period_s"]) == ("onset ringing", fl["onset_period_s"])
    cycle = p.qeq * (1 + 0.2 * np.sin(2 * np.pi * T / 0.003))
    fl = _fluid_figures(p, trajectory(p, cycle))
    assert fl["oscillation"] == "limit cycle" and fl["period_s"] == pytest.approx(0.003, rel=0.01)
    assert fl["onset_period_s"] == pytest.approx(0.003, rel=0.05)  # still reported beside it


def test_other_schemes_report_no_onset_period() -> None:
    assert "onset_period_s" not in _fluid_figures(QCN, trajectory(QCN, np.full(T.size, QCN.qeq)))


@pytest.mark.parametrize("field", ["rates", "aggregate"])
def test_a_rate_or_aggregate_that_is_not_finite_is_refused_from_its_first_bad_step(field: str) -> None:
    run = trajectory(QCN, np.full(T.size, QCN.qeq), groups=2)
    getattr(run, field)[37:, 0, ...] = np.inf
    getattr(run, field)[40, 0, ...] = np.nan
    name = {"rates": "rate", "aggregate": "aggregate"}[field]
    with pytest.raises(ScenarioError) as err:
        _check_trajectory(QCN, run)
    assert str(err.value) == (
        f"zhb-og-single-hop: the qcn fluid model's {name} is not finite from t = 0.0037 s: the parameters are outside "
        f"what the model integrates (gd = {QCN.gd:g}, gi = {QCN.gi:g} per byte, w = {QCN.w:g}, ps = {QCN.ps:g}); "
        "change them, or use the packet simulator (cnsim run)")


def test_a_finite_trajectory_passes() -> None:
    _check_trajectory(QCN, trajectory(QCN, np.full(T.size, QCN.qeq)))


# --------------------------------------------------------------------------- fluid.parquet


def quantities(study: FluidStudy) -> dict[str, np.ndarray]:
    table = _long_table(study)
    assert table.column_names == ["t_s", "quantity", "value"]
    names = table.column("quantity").to_pylist()
    out = {}
    for name in dict.fromkeys(names):
        rows = table.filter(pc.equal(table["quantity"], name))
        assert rows.column("t_s").to_numpy().tolist() == T[:5].tolist()
        out[name] = rows.column("value").to_numpy()
    return out


def test_the_long_table_holds_each_quantity_over_time_in_its_unit() -> None:
    run = trajectory(QCN, np.arange(5.0) * 1e3, target=True)
    cols = quantities(FluidStudy(QCN, run, {}))
    assert list(cols) == ["queue_bytes", "fb_bytes", "aggregate_gbps", "rate_gbps", "target_rate_gbps"]
    assert cols["queue_bytes"].tolist() == [0.0, 1e3, 2e3, 3e3, 4e3]
    assert cols["fb_bytes"].tolist() == [-5.0] * 5
    assert cols["aggregate_gbps"].tolist() == [2.0] * 5
    assert cols["rate_gbps"].tolist() == [(1e9 + i) / 1e9 for i in range(5)]
    assert cols["target_rate_gbps"].tolist() == [2 * (1e9 + i) / 1e9 for i in range(5)]


def test_dcqcn_groups_are_named_by_their_first_flow_with_the_marking_probability_and_alpha() -> None:
    p = fluid_params("dcqcn-incast-2to1", {"cm.scheme": "dcqcn"})
    g = p.groups[0]
    two = replace(p, groups=(FlowGroup(g.flows[:1], g.offered_bps, g.line_bps, g.start_s, g.stop_s),
                             FlowGroup(g.flows[1:], g.offered_bps, g.line_bps, g.start_s, g.stop_s)))
    cols = quantities(FluidStudy(two, trajectory(two, np.zeros(5), target=True, alpha=True, groups=2), {}))
    assert list(cols) == ["queue_bytes", "mark_probability", "aggregate_gbps",
                          "rate_gbps:H1->H3", "target_rate_gbps:H1->H3", "alpha:H1->H3",
                          "rate_gbps:H2->H3", "target_rate_gbps:H2->H3", "alpha:H2->H3"]
    assert cols["rate_gbps:H2->H3"].tolist() == [1.0] * 5 and cols["alpha:H2->H3"].tolist() == [0.25] * 5


# --------------------------------------------------------------------------- --compare


@pytest.fixture(scope="module")
def kd_packet() -> tuple[FluidParams, Result]:
    """kd-symmetric-single-hs with BCN and a 201 us loop: the packet queue oscillates at ~3.6 ms."""
    overrides = {"cm.scheme": "bcn", "links.delay": "100us"}
    packet = cnsim.run("kd-symmetric-single-hs", set={**overrides, "metrics.bin": "100us"})
    return fluid_params("kd-symmetric-single-hs", overrides), packet


def test_the_packet_series_are_the_hot_queue_and_the_hot_flows_smoothed_to_1_ms(kd_packet: tuple[FluidParams, Result]) -> None:
    p, packet = kd_packet
    ser = _packet_series(p, packet)
    q = packet.series("queue")
    hot = q.filter(pc.equal(q["queue"], "S1/EP4"))
    assert ser["t_queue"].tolist() == hot["t_s"].to_numpy().tolist() and ser["queue"].tolist() == hot["bytes"].to_numpy().tolist()
    assert sorted(ser["per_flow"]) == ["EP0->EP4", "EP1->EP4", "EP2->EP4", "EP3->EP4"]
    th = packet.series("throughput")
    raw = th.filter(pc.equal(th["entity"], "flow:EP0->EP4"))["gbps"].to_numpy()
    t, smooth = ser["per_flow"]["EP0->EP4"]
    assert t.size == raw.size == smooth.size
    middle = slice(50, raw.size - 50)  # ten 100 us bins a millisecond: a ten-bin moving average
    assert smooth[middle] == pytest.approx(np.convolve(raw, np.ones(10) / 10, mode="same")[middle], rel=1e-12)
    assert np.std(smooth[middle]) < np.std(raw[middle])


def test_the_agreement_compares_the_packet_runs_figures_with_the_fluids(kd_packet: tuple[FluidParams, Result]) -> None:
    p, packet = kd_packet
    s = packet.summary
    summary = {"fluid": {"queue_mean_bytes": 140_000.0, "period_s": 0.0036}}
    out = _agreement(p, summary, packet)
    ser = _packet_series(p, packet)
    m = window_mask(ser["t_queue"], p.window_s)
    period = dominant_period(ser["t_queue"][m], ser["queue"][m])
    assert period is not None and 0.003 < period < 0.004
    flows = s["throughput_gbps"]["per_flow"]
    assert out == {
        "packet": {
            "queue_mean_bytes": s["queue_bytes"]["hot"]["mean"],
            "queue_std_bytes": s["queue_bytes"]["hot"]["std"],
            "rate_mean_gbps": pytest.approx(np.mean([flows[f] for f in ("EP0->EP4", "EP1->EP4", "EP2->EP4", "EP3->EP4")]), rel=1e-12),
            "hot_port_gbps": s["throughput_gbps"]["hot_port"],
            "period_s": period,
            "drops": s["drops"]["frames"],
        },
        "fluid_period_s": 0.0036,
        "queue_mean_rel_diff": pytest.approx((140_000.0 - s["queue_bytes"]["hot"]["mean"]) / s["queue_bytes"]["hot"]["mean"], rel=1e-12),
        "period_ratio_fluid_over_packet": pytest.approx(0.0036 / period, rel=1e-12),
    }


def test_without_a_fluid_period_the_linear_damped_period_is_compared(kd_packet: tuple[FluidParams, Result]) -> None:
    p, packet = kd_packet
    out = _agreement(p, {"fluid": {"queue_mean_bytes": 1.0, "period_s": None}, "linear": {"damped_period_s": 0.0035}}, packet)
    assert out["fluid_period_s"] == 0.0035 and out["period_ratio_fluid_over_packet"] == pytest.approx(0.0035 / out["packet"]["period_s"])
    out = _agreement(p, {"fluid": {"queue_mean_bytes": 1.0, "period_s": None}}, packet)
    assert out["fluid_period_s"] is None and "period_ratio_fluid_over_packet" not in out


def test_a_packet_run_without_a_hot_queue_has_no_relative_difference(kd_packet: tuple[FluidParams, Result]) -> None:
    p, packet = kd_packet
    summary = {"fluid": {"queue_mean_bytes": 1.0, "period_s": 0.0036}}
    empty = Result(packet.scenario, {**packet.summary, "queue_bytes": {"hot": {"mean": 0.0, "std": 0.0}}}, packet.raw_series)
    assert _agreement(p, summary, empty)["queue_mean_rel_diff"] is None
    unknown = Result(packet.scenario, {**packet.summary, "queue_bytes": {}}, packet.raw_series)
    out = _agreement(p, summary, unknown)
    assert "queue_mean_rel_diff" not in out and out["packet"]["queue_mean_bytes"] is None


# --------------------------------------------------------------------------- the study and its files


def test_a_bcn_study_compared_with_its_packet_run(tmp_path: Path) -> None:
    """BCN: the linear verdict and the W the loop needs beside the trajectory's figures; the
    packet run records its queue in 100 us bins unless told otherwise; the files it writes."""
    study = fluid_study("kd-symmetric-single-hs", {"cm.scheme": "bcn"}, duration="50ms", compare=True)
    s, fl = study.summary, study.summary["fluid"]
    lin = bcn_linear(study.params)
    assert (s["scheme"], s["scenario"], s["parameters"]) == ("bcn", "kd-symmetric-single-hs", study.params.to_dict())
    assert (s["queue_mean_bytes"], s["rate_mean_gbps"]) == (fl["queue_mean_bytes"], fl["rate_mean_gbps"])
    assert {k: s[k] for k in ("phase_margin_rad", "crossover_rad_s", "period_s", "stable")} == {
        k: lin[k] for k in ("phase_margin_rad", "crossover_rad_s", "period_s", "stable")}
    assert s["linear"]["w_needed"] == w_needed("kd-symmetric-single-hs", study.params.tau_s, {"cm.scheme": "bcn", "duration": "50ms"})
    assert s["equilibrium"] == bcn_equilibrium(study.params)
    assert study.packet.scenario.resolved.doc.metrics.bin == 100_000_000  # ps
    assert set(s["compare"]) >= {"packet", "fluid_period_s", "queue_mean_rel_diff"}

    written = write_outputs(study, tmp_path, plots=True, maps=())
    assert [p.name for p in written] == ["fluid.json", "fluid.parquet", "packet", "fluid.png", "compare.png"]
    assert json.loads((tmp_path / "fluid.json").read_text())["maps"] == []
    assert (tmp_path / "packet" / "summary.json").is_file()
    # a whole run folder (contract "run folder"), its page included, as `cnsim.run(...).save()`
    assert "kd-symmetric-single-hs" in (tmp_path / "packet" / "report.html").read_text()


def test_a_dcqcn_study_reports_its_small_signal_modes_and_fixed_point() -> None:
    """§11.3: no phase margin; the period is the trajectory's (here the onset ringing), stable
    unless a limit cycle or an unstable mode; the fixed point is the equilibrium."""
    study = fluid_study("dcqcn-incast-2to1", {"cm.scheme": "dcqcn"}, duration="30ms")
    s, fl = study.summary, study.summary["fluid"]
    modes = linear_modes(study.params)
    assert (s["phase_margin_rad"], s["crossover_rad_s"]) == (None, None)
    assert fl["oscillation"] == "onset ringing" and s["period_s"] == fl["period_s"] == fl["onset_period_s"]
    assert s["stable"] is True and modes["stable"] is True
    assert s["linear"] == {k: v for k, v in modes.items() if k != "fixed_point"} and "fixed_point" not in s["linear"]
    assert s["equilibrium"] == modes["fixed_point"]


def test_a_qcn_study_takes_period_and_stability_from_its_trajectory(tmp_path: Path) -> None:
    study = fluid_study("kd-symmetric-single-hs", {"cm.scheme": "qcn", "metrics.bin": "200us"}, duration="50ms", compare=True)
    s, p = study.summary, study.params
    assert (s["phase_margin_rad"], s["crossover_rad_s"]) == (None, None) and "linear" not in s
    assert s["period_s"] == s["fluid"]["period_s"] and s["stable"] is (s["fluid"]["oscillation"] != "limit cycle")
    assert s["equilibrium"] == {"queue_bytes": p.qeq, "rate_bps": p.fair_bps}
    assert study.packet.scenario.resolved.doc.metrics.bin == 200_000_000  # the scenario's own bin kept
    alone = fluid_study("kd-symmetric-single-hs", {"cm.scheme": "qcn"}, duration="50ms")
    assert alone.packet is None and "compare" not in alone.summary
    assert [p.name for p in write_outputs(alone, tmp_path, plots=False)] == ["fluid.json", "fluid.parquet"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fluid.json", "fluid.parquet"]


# --------------------------------------------------------------------------- figures


def lines(ax: Any) -> dict[str, Any]:
    return {line.get_label(): line for line in ax.get_lines()}


def test_the_trajectory_figure_draws_the_queue_in_kb_and_the_rates_in_gbps() -> None:
    q = QCN.qeq + 1e3 * np.arange(T.size)
    study = FluidStudy(QCN, trajectory(QCN, q, target=True), {"phase_margin_rad": None, "stable": True, "period_s": 0.0099})
    fig = _trajectory_figure(study, with_packet=True)  # no packet run: nothing of one drawn
    axq, axr = fig.axes
    top, bottom = lines(axq), lines(axr)
    assert sorted(name for name in top if not name.startswith("_")) == ["Qeq = 150 KB", "fluid model"]
    assert top["fluid model"].get_ydata().tolist() == (q / 1e3).tolist()
    assert list(top["Qeq = 150 KB"].get_ydata()) == [150.0, 150.0]
    # the two lines without a label: the measurement window's ends
    assert sorted(list(line.get_xdata())[0] for name, line in top.items() if name.startswith("_")) == list(QCN.window_s)
    assert bottom["fluid: per-flow sending rate"].get_ydata().tolist() == ((1e9 + np.arange(T.size)) / 1e9).tolist()
    assert bottom["fluid: target rate R_T"].get_ydata()[0] == 2.0
    assert list(bottom["fair share 0.133 Gb/s"].get_ydata()) == [QCN.fair_bps / 1e9] * 2
    assert (axq.get_ylabel(), axr.get_ylabel(), axr.get_xlabel()) == ("hot queue (KB)", "rate (Gb/s)", "time (s)")
    assert axq.get_title() == "zhb-og-single-hop — qcn fluid model: stable, period 9.90 ms"
    assert axq.get_xlim() == (0.0, QCN.duration_s)
    span = axq.patches[0]  # where the hot port is overloaded (a Rectangle or, before matplotlib 3.9, a Polygon)
    xs = span.get_patch_transform().transform(span.get_path().vertices)[:, 0]
    assert (xs.min(), xs.max()) == pytest.approx(QCN.hot_window_s)


def test_the_title_gives_the_phase_margin_and_an_unstable_loop_says_so() -> None:
    study = FluidStudy(QCN, trajectory(QCN, np.zeros(T.size)), {"phase_margin_rad": -0.0512, "stable": False, "period_s": None})
    assert _trajectory_figure(study, with_packet=False).axes[0].get_title() == (
        "zhb-og-single-hop — qcn fluid model: PM = -0.051 rad, unstable")


def test_dcqcn_draws_its_fixed_point_and_marking_thresholds() -> None:
    p = fluid_params("dcqcn-incast-2to1", {"cm.scheme": "dcqcn"})
    top = lines(_trajectory_figure(FluidStudy(p, trajectory(p, np.zeros(T.size)), {}), with_packet=False).axes[0])
    assert list(top[f"fixed point q* = {p.qeq / 1e3:.4g} KB"].get_ydata()) == [p.qeq / 1e3] * 2
    assert list(top["Kmin = 5 KB"].get_ydata()) == [5.0, 5.0] and list(top["Kmax = 200 KB"].get_ydata()) == [200.0, 200.0]
    assert not any(name.startswith("Qeq") for name in top)


def test_the_compare_figure_draws_the_packet_queue_and_flows_in_grey(kd_packet: tuple[FluidParams, Result]) -> None:
    p, packet = kd_packet
    study = FluidStudy(p, trajectory(p, np.zeros(T.size)), {}, packet)
    axq, axr = _trajectory_figure(study, with_packet=True).axes
    ser = _packet_series(p, packet)
    assert lines(axq)["packet (100 us bins)"].get_ydata().tolist() == (ser["queue"] / 1e3).tolist()
    grey = [line for line in axr.get_lines() if line.get_color() == "tab:gray"]
    assert len(grey) == 4 and grey[0].get_label() == "packet: per-flow throughput (1 ms average)"
    assert "packet (100 us bins)" not in lines(_trajectory_figure(study, with_packet=False).axes[0])


def test_the_stability_maps_span_fixed_ranges_and_the_gains_either_side_of_the_scenario() -> None:
    p = fluid_params("kd-symmetric-single-hs", {"cm.scheme": "bcn"})
    assert _map_ranges(p) == {
        "w": (0.1, 64.0), "tau": (1e-6, 2e-3), "gd": (p.gd / 30, p.gd * 30), "gi": (p.gi / 30, p.gi * 30),
        "ps": (0.002, 0.2), "n_hot": (1, 256), "mu": (0.5e9, 1e11)}  # 20 x 10 Gb/s capped at 100
    assert set(_map_ranges(p)) == set(MAP_AXES)
    assert _map_ranges(replace(p, link_bps=1e9))["mu"] == (5e7, 2e10)


def test_a_window_starting_where_the_integration_would_end_extends_it() -> None:
    """The span runs to 0.1 s after the overload ends; a window starting exactly there (or later)
    would hold no point, so the integration runs through the window instead."""
    long = replace(QCN, duration_s=2.0)
    t0, t1 = _fluid_span(long)
    assert (t0, t1) == pytest.approx((0.095, 0.6))
    assert _fluid_span(replace(long, window_s=(t1, 1.5))) == (t0, 1.5)
    assert _fluid_span(replace(long, window_s=(0.5, 1.5))) == (t0, t1)  # it starts inside: unchanged


def test_a_map_around_gains_too_large_to_span_is_refused(tmp_path: Path) -> None:
    """30x a gain of 1e307 overflows to infinity: no range to map (gd = 0 is
    test_report_fluid_s30.py's)."""
    p = fluid_params("kd-symmetric-single-hs", {"cm.scheme": "bcn"})
    with pytest.raises(ValueError, match=r"^stability_map: the gd axis around 1e\+307 has no range to map \(3\.33333e\+305 to inf\)$"):
        stability_map(replace(p, gd=1e307), "gd", "ps", tmp_path / "m.png", n=4)
    assert not (tmp_path / "m.png").exists()


# The fluid figure's fair-share line is the max-min share of the flows whose rate it draws, not
# μ/N_h: in zhb-ig-single-hop the 11 light flows (0.567 Gb/s offered, the rate drawn) and the 4
# heavy ones (8.5 Gb/s) share node 1's 10 Gb/s link as 0.567 / 0.942 Gb/s (targets.md B1), while
# μ/N_h = 10/15 = 0.667 Gb/s is the share of neither.


def run_of(p: FluidParams, n: int = 50) -> FluidRun:
    t = np.linspace(0.0, p.duration_s, n)
    rates = np.full((n, 1, len(p.groups)), 1e9)
    return FluidRun(params=[p], t=t, queue=np.full((n, 1), p.qeq), rates=rates, limiter=rates.copy(), target=None,
                    backlog=None, fb=np.zeros((n, 1)), aggregate=np.full((n, 1), 1e10), h=t[1] - t[0])


def fair_line(p: FluidParams) -> Any:
    axr = _trajectory_figure(FluidStudy(p, run_of(p), {"stable": True}), with_packet=False).axes[1]
    (line,) = [ln for ln in axr.get_lines() if str(ln.get_label()).startswith("fair share")]
    return line


def test_the_share_of_each_group_is_water_filled() -> None:
    ig = fluid_params("zhb-ig-single-hop", {"cm.scheme": "bcn"})
    by_offer = dict(zip((g.offered_bps for g in ig.groups), ig.maxmin_bps, strict=True))
    assert by_offer[8.5e9] == pytest.approx((10e9 - 11 * 8.5e9 / 15) / 4, rel=1e-9)  # 0.9417 Gb/s
    assert by_offer[8.5e9 / 15] == pytest.approx(8.5e9 / 15, rel=1e-9)  # 0.567: demand-limited
    og = fluid_params("zhb-og-single-hop", {"cm.scheme": "bcn"})
    (share,) = og.maxmin_bps
    assert share == pytest.approx(og.fair_bps, rel=1e-12)  # every flow offers more than μ/N_h


def test_a_group_outside_the_hot_window_gets_no_share() -> None:
    """A group that stops when the hotspot starts, or starts when it ends, does not share the hot
    port (a group is active while start_s <= t < stop_s)."""
    import dataclasses

    og = fluid_params("zhb-og-single-hop", {"cm.scheme": "bcn"})
    lo, hi = og.hot_window_s
    (group,) = og.groups
    before = dataclasses.replace(group, start_s=0.0, stop_s=lo)
    after = dataclasses.replace(group, start_s=hi, stop_s=hi + 1.0)
    shares = dataclasses.replace(og, groups=(group, before, after)).maxmin_bps
    assert shares == (pytest.approx(og.maxmin_bps[0], rel=1e-12), 0.0, 0.0)


def test_the_line_is_the_drawn_groups_max_min_share() -> None:
    ig = fluid_params("zhb-ig-single-hop", {"cm.scheme": "bcn"})
    line = fair_line(ig)
    assert list(line.get_ydata()) == [pytest.approx(ig.maxmin_bps[0] / 1e9, rel=1e-12)] * 2
    assert ig.maxmin_bps[0] != pytest.approx(ig.fair_bps, rel=1e-3)  # μ/N_h = 0.667 Gb/s was drawn
    assert f"of the {ig.groups[0].count} flows drawn" in line.get_label()
    og = fluid_params("zhb-og-single-hop", {"cm.scheme": "bcn"})
    assert fair_line(og).get_label() == "fair share 0.133 Gb/s"
