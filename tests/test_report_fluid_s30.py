"""Robustness of `cnsim report DIR` on damaged results folders and of `cnsim fluid` on inputs the
fluid model cannot integrate (docs/robustness.md): exit 2 with one line naming the file or key,
the value and what is allowed — never a traceback, a hang or a silently empty / NaN result."""

from __future__ import annotations

import json
import math
import shutil
import warnings
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from cnsim.cli import app
from cnsim.errors import ResourceError, ScenarioError
from typer.testing import CliRunner

runner = CliRunner()


def _report(folder: Path) -> Any:
    res = runner.invoke(app, ["report", str(folder)])
    assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)
    return res


def _refused(res: Any, *needles: str) -> str:
    """The one-line message of a refusal (exit 2, no traceback) holding every needle."""
    assert res.exit_code == 2, res.output
    assert "Traceback" not in res.output
    text = res.output.strip()
    assert "\n" not in text, text
    for needle in needles:
        assert needle in text, (needle, text)
    return text


# --------------------------------------------------------------------------- cnsim report: runs


@pytest.fixture(scope="module")
def good_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A complete run folder (figures drawn), written by `cnsim run`."""
    pytest.importorskip("cnsim._core")
    out = tmp_path_factory.mktemp("good") / "run"
    res = runner.invoke(app, ["run", "kd-symmetric-single-hs", "--duration", "3ms", "--out", str(out), "--quiet"])
    assert res.exit_code == 0, res.output
    return out


def _copy(good: Path, tmp_path: Path, figures: bool = True) -> Path:
    folder = tmp_path / "damaged"
    shutil.copytree(good, folder)
    (folder / "report.html").unlink()
    if not figures:
        for png in folder.glob("*.png"):
            png.unlink()
    return folder


def _edit_summary(folder: Path, **changes: Any) -> None:
    summary = json.loads((folder / "summary.json").read_text())
    summary.update(changes)
    (folder / "summary.json").write_text(json.dumps(summary))


def test_a_good_run_folder_still_reports(good_run: Path, tmp_path: Path) -> None:
    folder = _copy(good_run, tmp_path, figures=False)
    res = _report(folder)
    assert res.exit_code == 0, res.output
    assert (folder / "report.html").read_text().count('class="cnsim-figure"') == 3


@pytest.mark.parametrize("figures", [True, False])
@pytest.mark.parametrize(
    ("text", "needles"),
    [
        ("[1,2]", ["summary.json", "[1, 2]", "JSON object"]),
        ("{bad", ["summary.json", "not valid JSON"]),
        ("", ["summary.json", "empty"]),
        ("{}", ["summary.json", '"scenario" is missing']),
    ],
)
def test_a_damaged_summary_json_is_refused(good_run: Path, tmp_path: Path, text: str, needles: list[str], figures: bool) -> None:
    folder = _copy(good_run, tmp_path, figures)
    (folder / "summary.json").write_text(text)
    _refused(_report(folder), *needles)
    assert not (folder / "report.html").exists()


@pytest.mark.parametrize("figures", [True, False])
@pytest.mark.parametrize(
    ("changes", "needles"),
    [
        ({"throughput_gbps": "x"}, ['"throughput_gbps" is "x"', "table of throughputs"]),
        ({"throughput_gbps": {"aggregate": 1.0, "per_flow": {"EP0->EP4": "x"}}}, ["throughput_gbps.per_flow.EP0->EP4", '"x"']),
        ({"queue_bytes": [1]}, ['"queue_bytes" is [1]']),
        ({"drops": {"frames": "many"}}, ['"drops.frames" is "many"', "a number or null"]),
        ({"window_s": "all"}, ['"window_s" is "all"', "two numbers"]),
        ({"seed": 1.5}, ['"seed" is 1.5', "whole number"]),
    ],
)
def test_a_summary_of_the_wrong_shape_is_refused(good_run: Path, tmp_path: Path, changes: dict[str, Any], needles: list[str],
                                                 figures: bool) -> None:
    folder = _copy(good_run, tmp_path, figures)
    _edit_summary(folder, **changes)
    _refused(_report(folder), "summary.json", *needles)


def test_a_missing_summary_is_told_apart_from_a_damaged_one(good_run: Path, tmp_path: Path) -> None:
    folder = _copy(good_run, tmp_path)
    (folder / "summary.json").unlink()
    _refused(_report(folder), "summary.json: missing", "did not finish")


@pytest.mark.parametrize("left", ["scenario.toml", "series"])
def test_either_a_scenario_or_series_marks_an_unfinished_run(tmp_path: Path, left: str) -> None:
    if left == "series":
        (tmp_path / "series").mkdir()
    else:
        (tmp_path / left).write_text('duration = "1ms"\n')
    _refused(_report(tmp_path), f"{tmp_path / 'summary.json'}: missing", "looks like a run folder", "did not finish")


def test_a_check_folder_is_reported_from_its_record(tmp_path: Path) -> None:
    (tmp_path / "checks.json").write_text(json.dumps({"decks": [], "checks": [], "tally": {}}))
    res = _report(tmp_path)
    assert res.exit_code == 0, res.output
    assert (tmp_path / "report.html").is_file()


def test_a_scenario_toml_of_random_bytes_is_refused(good_run: Path, tmp_path: Path) -> None:
    folder = _copy(good_run, tmp_path)
    (folder / "scenario.toml").write_bytes(bytes(range(128, 256)) * 4)
    _refused(_report(folder), "scenario.toml", "not UTF-8")


def test_a_scenario_toml_that_is_not_toml_or_does_not_resolve_is_refused(good_run: Path, tmp_path: Path) -> None:
    folder = _copy(good_run, tmp_path)
    (folder / "scenario.toml").write_text("[[[ not toml")
    _refused(_report(folder), "scenario.toml", "not valid TOML")
    folder = _copy(good_run, tmp_path / "b", figures=False)
    text = (folder / "scenario.toml").read_text()
    (folder / "scenario.toml").write_text(text.replace("seed = 1", 'seed = "abc"', 1))
    _refused(_report(folder), "scenario.toml", "seed", "abc")


@pytest.mark.parametrize("figures", [True, False])
def test_a_junk_series_file_is_refused(good_run: Path, tmp_path: Path, figures: bool) -> None:
    folder = _copy(good_run, tmp_path, figures)
    (folder / "series" / "throughput.parquet").write_text("junk")
    _refused(_report(folder), "series/throughput.parquet", "not a Parquet file", "t_s, entity, gbps")


def test_a_series_with_other_columns_is_refused(good_run: Path, tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder = _copy(good_run, tmp_path, figures=False)
    pq.write_table(pa.table({"x": [1.0]}), folder / "series" / "queue.parquet")
    _refused(_report(folder), "series/queue.parquet", "no column t_s, queue, bytes")
    pq.write_table(pa.table({}), folder / "series" / "queue.parquet")
    _refused(_report(folder), "series/queue.parquet", "no column t_s, queue, bytes (it has none)")


def test_an_empty_series_file_is_called_empty(good_run: Path, tmp_path: Path) -> None:
    folder = _copy(good_run, tmp_path, figures=False)
    (folder / "series" / "drops.parquet").write_bytes(b"")
    _refused(_report(folder), f"{folder / 'series' / 'drops.parquet'}: damaged: empty; expected the drops series")


def test_a_scenario_that_no_longer_resolves_is_named_once(good_run: Path, tmp_path: Path) -> None:
    """Result.load already names scenario.toml; the report does not wrap its message again."""
    folder = _copy(good_run, tmp_path, figures=False)
    text = (folder / "scenario.toml").read_text()
    (folder / "scenario.toml").write_text(text.replace("seed = 1", 'seed = "abc"', 1))
    text = _refused(_report(folder))
    assert text.count("scenario.toml") == 1 and "does not resolve" not in text


def test_a_junk_figure_and_a_junk_manifest_are_refused(good_run: Path, tmp_path: Path) -> None:
    folder = _copy(good_run, tmp_path)
    (folder / "queue.png").write_text("junk")
    _refused(_report(folder), "queue.png", "not a PNG image")
    folder = _copy(good_run, tmp_path / "b")
    (folder / "manifest.json").write_text('{"wall_s": 1')
    _refused(_report(folder), "manifest.json", "not valid JSON")


def test_a_failed_sweep_run_still_reports_its_error(tmp_path: Path) -> None:
    """A legitimately partial folder: a sweep's failed run holds error.json and params.json only."""
    folder = tmp_path / "failed"
    folder.mkdir()
    (folder / "params.json").write_text(json.dumps({"run_id": "abc", "sweep": "s", "params": {"cm.w": 2}}))
    (folder / "error.json").write_text(json.dumps({"error": "boom happened", "traceback": "tb"}))
    res = _report(folder)
    assert res.exit_code == 0, res.output
    assert "boom happened" in (folder / "report.html").read_text()
    (folder / "error.json").write_text("[")
    _refused(_report(folder), "error.json", "not valid JSON")


def test_the_report_of_cnsim_run_needs_no_pyarrow() -> None:
    """The checks run on every `cnsim run` (its report.html): the series are checked by their
    Parquet magic bytes, without pyarrow (issue 14)."""
    import subprocess
    import sys

    code = "import sys, cnsim.report; assert 'pyarrow' not in sys.modules"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


# --------------------------------------------------------------------------- cnsim report: sweeps, decks


def _sweep_folder(tmp_path: Path, plan: str) -> Path:
    folder = tmp_path / "sweep"
    (folder / "runs").mkdir(parents=True)
    (folder / "sweep.json").write_text(plan)
    return folder


def test_a_damaged_sweep_plan_is_refused(tmp_path: Path) -> None:
    _refused(_report(_sweep_folder(tmp_path / "a", "{bad")), "sweep.json", "not valid JSON")
    _refused(_report(_sweep_folder(tmp_path / "b", '{"spec": [1]}')), "sweep.json", '"spec" is [1]')
    _refused(_report(_sweep_folder(tmp_path / "c", '{"spec": {"axes": 3}}')), "sweep.json", '"spec.axes" is 3')
    _refused(_report(_sweep_folder(tmp_path / "d", "[]")), "sweep.json", "the document is []")


_PLAN = json.dumps({"spec": {"name": "s", "base": "kd-symmetric-single-hs", "axes": {"cm.scheme": ["none", "bcn"]}},
                    "source": "s.toml", "runs": [{"run_id": "a"}, {"run_id": "b"}]})


def test_a_sweep_stopped_before_any_run_folder_still_reports(tmp_path: Path) -> None:
    folder = tmp_path / "sweep"
    folder.mkdir()
    (folder / "sweep.json").write_text(_PLAN)
    res = _report(folder)
    assert res.exit_code == 0, res.output
    assert "0 run folders complete, 2 runs planned" in (folder / "report.html").read_text()


def test_an_interrupted_sweep_still_reports(tmp_path: Path) -> None:
    """Contract: a sweep stopped before its table was written (sweep.json, runs/ partial)."""
    folder = _sweep_folder(tmp_path, _PLAN)
    res = _report(folder)
    assert res.exit_code == 0, res.output
    html = (folder / "report.html").read_text()
    assert "No sweep.parquet yet" in html and "0 run folders complete, 2 runs planned" in html


def test_a_junk_sweep_table_is_refused(tmp_path: Path) -> None:
    folder = _sweep_folder(tmp_path, _PLAN)
    (folder / "sweep.parquet").write_text("junk")
    _refused(_report(folder), "sweep.parquet", "not a readable Parquet table", "Resume the sweep")


@pytest.mark.parametrize(
    ("name", "text", "needles"),
    [
        ("deck.json", "{bad", ["deck.json", "not valid JSON"]),
        ("deck.json", "[1]", ["deck.json", "the document is [1]"]),
        ("deck.json", '{"studies": [1]}', ["deck.json", "does not read as cnsim wrote it"]),
        ("checks.json", "{bad", ["checks.json", "not valid JSON"]),
        ("checks.json", "[1]", ["checks.json", "the document is [1]"]),
    ],
)
def test_a_damaged_deck_or_check_record_is_refused(tmp_path: Path, name: str, text: str, needles: list[str]) -> None:
    (tmp_path / name).write_text(text)
    _refused(_report(tmp_path), *needles)


def test_a_decks_damaged_check_record_is_refused_before_its_page_is_drawn(tmp_path: Path) -> None:
    (tmp_path / "deck.json").write_text("{}")
    (tmp_path / "checks").mkdir()
    (tmp_path / "checks" / "checks.json").write_text("[1]")
    _refused(_report(tmp_path), str(tmp_path / "checks" / "checks.json"), "the document is [1]", "Reproduce the deck again")


def test_a_failed_run_of_a_sweep_is_reported_from_its_error(tmp_path: Path) -> None:
    """A sweep's failed run folder holds error.json and params.json, no summary.json."""
    (tmp_path / "error.json").write_text(json.dumps({"error": "EngineError: boom", "traceback": ""}))
    (tmp_path / "params.json").write_text(json.dumps({"run_id": "r1", "sweep": "s", "base": "zhb-og-single-hop", "seed": 1,
                                                     "index": 0, "params": {}, "overrides": {}}))
    res = _report(tmp_path)
    assert res.exit_code == 0, res.output
    assert "EngineError: boom" in (tmp_path / "report.html").read_text()


# --------------------------------------------------------------------------- cnsim fluid: gains


def _fluid(tmp_path: Path, *args: str) -> Any:
    res = runner.invoke(app, ["fluid", *args, "--quiet", "--no-plots", "--out", str(tmp_path / "out")])
    assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)
    return res


@pytest.mark.parametrize("gain", ["cm.gd=1e300", "cm.gi=1e300", "cm.gd=1e200"])
def test_a_huge_bcn_gain_is_refused_not_a_zero_division(tmp_path: Path, gain: str) -> None:
    res = _fluid(tmp_path, "zhb-og-single-hop", "--set", "cm.scheme=bcn", "--set", gain)
    text = _refused(res, "zhb-og-single-hop", "bcn fluid model")
    assert "crossover" in text  # what sets the step, with the keys to change
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(("key", "sets"), [("cm.gd", ["cm.gd=0"]), ("cm.gi", ["cm.gi=0"]),
                                           ("cm.ps", ["cm.sampling=random", "cm.ps=0"])])
def test_a_bcn_loop_without_gain_or_sampling_is_refused_with_the_reason(tmp_path: Path, key: str, sets: list[str]) -> None:
    args = [a for s in sets for a in ("--set", s)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = _fluid(tmp_path, "kd-symmetric-single-hs", "--set", "cm.scheme=bcn", *args)
    _refused(res, key, "fluid model", "allowed")


def test_the_linear_figures_of_a_side_without_gain_warn_nothing() -> None:
    """K = 0 (no gain on a side) and huge K: figures are null, not RuntimeWarnings on stderr."""
    from cnsim.fluid import crossover, loop_figures

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        d = loop_figures(0.0, 1e-4, 1e-5).to_dict()
        assert d["max_stable_delay_s"] is None and d["period_s"] is None
        big = loop_figures(1e200, 1e-4, 1e-5).to_dict()
    assert big["crossover_rad_s"] is not None and math.isfinite(big["crossover_rad_s"])
    assert math.isfinite(float(crossover(1e250, 1e-3)))  # the closed form without K⁴T⁴


def test_kmin_above_kmax_is_refused_by_cnsim_fluid(tmp_path: Path) -> None:
    res = _fluid(tmp_path, "dcqcn-incast-2to1", "--set", "cm.scheme=dcqcn", "--set", "cm.kmin=300KB", "--set", "cm.kmax=100KB")
    _refused(res, "cm.kmin", "kmax")


def test_what_the_engine_refuses_when_it_builds_is_refused_by_the_fluid_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """The catch-all: the engine builds the simulation (no run) and its ConfigError is exit 2."""
    import cnsim.engine as engine_mod
    from cnsim.fluid import fluid_params

    class ConfigError(ValueError):
        pass

    class EngineError(RuntimeError):
        pass

    class Simulation:
        def __init__(self, _config: str) -> None:
            raise ConfigError("cm (bcn) = x", "cm (bcn)", "x = 1", "something the engine wants")

    class Core:
        pass

    core = Core()
    core.ConfigError, core.EngineError, core.Simulation = ConfigError, EngineError, Simulation  # type: ignore[attr-defined]
    monkeypatch.setattr(engine_mod, "engine", lambda: core)
    with pytest.raises(ScenarioError, match="the engine refused it: something the engine wants"):
        fluid_params("kd-symmetric-single-hs", {"cm.scheme": "bcn"})
    fluid_params("kd-symmetric-single-hs", {"cm.scheme": "bcn"}, engine_check=False)


def test_a_trajectory_that_is_not_finite_is_refused() -> None:
    from cnsim.fluid import fluid_params
    from cnsim.fluid.grid import FluidRun
    from cnsim.fluid.report import _check_trajectory

    p = fluid_params("kd-symmetric-single-hs", {"cm.scheme": "bcn"})
    t = np.linspace(0, 0.1, 5)
    q = np.array([[0.0], [1.0], [np.nan], [np.nan], [np.nan]])
    run = FluidRun(params=[p], t=t, queue=q, rates=np.ones((5, 1, 1)), limiter=np.ones((5, 1, 1)), target=None,
                   backlog=None, fb=np.zeros((5, 1)), aggregate=np.ones((5, 1)), h=1e-3)
    with pytest.raises(ScenarioError, match=r"queue is not finite from t = 0\.05"):
        _check_trajectory(p, run)


def test_a_measurement_window_after_the_congestion_is_integrated() -> None:
    """Otherwise the window held no point and the command printed None / crashed on it."""
    from cnsim.fluid import fluid_params
    from cnsim.fluid.report import _fluid_span

    p = fluid_params("zhb-og-single-hop", {"cm.scheme": "bcn"})
    assert _fluid_span(p) == pytest.approx((0.095, 0.6))
    late = replace(p, duration_s=2.0, window_s=(1.5, 2.0))
    assert _fluid_span(late) == pytest.approx((0.095, 2.0))


def test_stability_map_refuses_an_axis_without_range(tmp_path: Path) -> None:
    from cnsim.fluid import fluid_params
    from cnsim.fluid.report import stability_map

    p = fluid_params("kd-symmetric-single-hs", {"cm.scheme": "bcn"})
    with pytest.raises(ValueError, match="gd axis"):
        stability_map(replace(p, gd=0.0), "gd", "ps", tmp_path / "m.png", n=4)


# --------------------------------------------------------------------------- cnsim fluid: work bound


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (["kd-symmetric-single-hs", "--set", "cm.scheme=bcn", "--set", "duration=1e6s"], ["3.77e+10 steps", "Shorten `duration`"]),
        (["kd-symmetric-single-hs", "--set", "cm.scheme=bcn", "--set", "duration=1e5s", "--compare"], ["steps"]),
        (["kd-symmetric-single-hs", "--set", "cm.scheme=bcn", "--set", "links.rate=1600Gbps"], ["1,207,569 steps", "crossover"]),
        (["dcqcn-incast-2to1", "--set", "cm.scheme=dcqcn", "--set", "cm.alpha_timer=100ns"], ["2e+07 steps", "cm.alpha_timer"]),
        (["kd-symmetric-single-hs", "--set", "cm.scheme=qcn", "--set", "duration=1e4s"], ["qcn fluid model", "steps"]),
    ],
)
def test_an_integration_that_would_take_hours_is_refused_up_front(tmp_path: Path, args: list[str], needles: list[str]) -> None:
    import time

    started = time.perf_counter()
    res = _fluid(tmp_path, *args)
    _refused(res, "refused before it started", "Estimate:", "--force", *needles)
    assert time.perf_counter() - started < 20
    assert not (tmp_path / "out").exists()


def test_the_packet_runs_estimate_is_checked_before_the_fluid_model_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    import cnsim.budget as budget
    import cnsim.fluid.report as report
    from cnsim.fluid.report import fluid_study

    def no_simulation(*_a: Any, **_k: Any) -> Any:
        raise AssertionError("the fluid model ran before the packet run's estimate was checked")

    monkeypatch.setattr(budget, "MAX_EVENTS", 10.0)
    monkeypatch.setattr(report, "simulate", no_simulation)
    with pytest.raises(ResourceError, match="this run was refused before it started"):
        fluid_study("kd-symmetric-single-hs", {"cm.scheme": "bcn"}, compare=True)


def test_force_skips_the_bound_but_never_a_zero_step() -> None:
    from cnsim.fluid import fluid_params, work

    p = fluid_params("kd-symmetric-single-hs", {"cm.scheme": "bcn"})
    big = work.estimate([p], t_start=0.0, t_end=1e6)
    with pytest.raises(ResourceError):
        work.check(big)
    assert work.check(big, force=True) is big
    zero = work.estimate([p], t_start=0.0, t_end=0.2, h=0.0)
    with pytest.raises(ScenarioError, match="cannot be integrated"):
        work.check(zero, force=True)
    with pytest.raises(ResourceError, match="memory"):
        work.check(work.estimate([p], t_start=0.0, t_end=0.2), memory=1000)


def test_a_zero_step_names_the_qdelta_weight_and_a_huge_one_alone_integrates() -> None:
    """A zero step's message blamed only the gains and the link rate; it names cm.w too. A huge
    cm.w alone no longer gives one: kd's gains are normalised to Fbmax = (2w + 1)·Qeq, so
    K ∝ 1/w while T_w ∝ w, and the crossover is the limit K·T_w (520.8 rad/s) where K·T_w²
    overflowed (stop 61); it integrates (`cnsim fluid … --set cm.w=1e300`: 506 KB, stable)."""
    from cnsim.fluid import fluid_params, work

    p = fluid_params("kd-symmetric-single-hs", {"cm.scheme": "bcn", "cm.gd": 1e300})
    h, why = min(work.step_limits(p))
    assert h == 0 and "the Qdelta weight (cm.w)" in why
    p = fluid_params("kd-symmetric-single-hs", {"cm.scheme": "bcn", "cm.w": 1e300})
    (h_wc, why_wc), *_ = work.step_limits(p)
    assert h_wc == pytest.approx(1 / (20 * 520.8333), rel=1e-6) and "ω_c = 520.8 rad/s" in why_wc
    assert work.estimate([p], t_start=0.0, t_end=0.2).h == pytest.approx(3e-5)


def test_simulate_itself_refuses_a_hopeless_integration() -> None:
    """The Python API too (cnsim.fluid.simulate), not only the command."""
    from cnsim.fluid import fluid_params, simulate

    p = fluid_params("kd-symmetric-single-hs", {"cm.scheme": "bcn"})
    with pytest.raises(ResourceError, match="steps"):
        simulate(p, t_end=1e4)
    with pytest.raises(ResourceError, match="steps"):
        simulate([p] * 4, t_end=0.2, h=1e-8)
    q = fluid_params("dcqcn-incast-2to1", {"cm.scheme": "dcqcn"})
    with pytest.raises(ResourceError, match="dcqcn fluid model"):
        simulate(q, t_end=1e4)


_FLUID_SCENARIOS = ["zhb-og-single-hop", "zhb-og-n128", "zhb-ig-single-hop", "qcnp-og-single-hop", "qcnp-ig-baseline",
                    "qcnp-ig-100-sources", "kd-symmetric-single-hs", "eval-baseline", "eval-sh-og-2g", "eval-sh-og-0.5g",
                    "dcqcn-incast-2to1"]


def test_every_catalogue_fluid_use_stays_well_under_the_bound() -> None:
    """Every scenario docs/fluid.md lists, with each fluid scheme, at its longest loop of the docs
    (links.delay = 250 us) and zhb's largest gain (10·Gd0): at most a third of the bound."""
    from cnsim.fluid import fluid_params, work
    from cnsim.fluid.report import _fluid_span

    worst = 0.0
    for sid in _FLUID_SCENARIOS:
        for scheme in ("bcn", "qcn", "dcqcn"):
            for extra in ({}, {"links.delay": "250us"}, {"cm.gd": "10*gd0"} if scheme == "bcn" else {}):
                try:
                    p = fluid_params(sid, {"cm.scheme": scheme, **extra}, engine_check=False)
                except ScenarioError:
                    continue  # e.g. DCQCN on a scenario whose rp is not the paper's
                t0, t1 = _fluid_span(p)
                est = work.estimate([p], t_start=t0, t_end=t1)
                worst = max(worst, est.work)
                assert est.memory_bytes < 2**30, (sid, scheme, extra)
    assert 1e4 < worst < work.MAX_WORK / 2.5


def test_a_runs_page_shows_a_large_map_in_part_and_counts_the_rest() -> None:
    from cnsim.report import MAX_MAP_ROWS, summary_rows

    flows = {f"{i}->{i + 1}": float(i) for i in range(200)}
    rows = summary_rows({"scheme": "none", "throughput_gbps": {"aggregate": 1.0, "per_flow": flows}})
    keys = [k for k, _ in rows]
    assert keys[:2] == ["scheme", "throughput_gbps.aggregate"]
    per_flow = [k for k in keys if k.startswith("throughput_gbps.per_flow.")]
    assert len(per_flow) == MAX_MAP_ROWS + 1
    assert rows[-1] == ["throughput_gbps.per_flow.…", f"{200 - MAX_MAP_ROWS:,} more in summary.json"]
