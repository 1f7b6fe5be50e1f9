"""Sweeps (cnsim.sweep, cnsim.executors, cnsim.catalog): spec expansion, content-hash run ids,
bad specs (exit 2), failures recorded, resume after a really killed coordinator, and identical
tables from the local pool and Dask.

Runs use the real engine on kd-symmetric-single-hs shortened to 20–60 ms (tens of ms of wall time each).
"""

from __future__ import annotations

import datetime
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import cnsim.catalog
import cnsim.runner
import pyarrow.parquet as pq
import pytest
from _faults import catalog_run_ids, fail_runs, interrupt_after_the_first_run
from cnsim import ScenarioError
from cnsim.cli import app
from cnsim.sweep import expand, load_spec, parse_spec, points, run_id_of, run_sweep, shipped_sweeps
from typer.testing import CliRunner

runner = CliRunner()
KD = "kd-symmetric-single-hs"


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_expansion_grid_zip_seeds_and_expressions() -> None:
    spec = parse_spec(
        {
            "name": "x",
            "base": "zhb-og-single-hop",
            "seeds": [1, 2],
            "set": {"cm": {"scheme": "bcn"}},  # a nested table is a dotted key
            "axes": {"switch.buffer": ["shared", "partitioned"], "cm": {"w": [0.5, 2.0, 10.0]}},
            "zip": {"cm.gd": ["2.5*gd0", "5*gd0"], "cm.gi": ["1000*gd0", "2000*gd0"]},
        }
    )
    assert spec.set == {"cm.scheme": "bcn"} and list(spec.axes) == ["switch.buffer", "cm.w"]
    pts = points(spec)
    assert len(pts) == 2 * 3 * 2
    assert pts[0] == {"switch.buffer": "shared", "cm.w": 0.5, "cm.gd": "2.5*gd0", "cm.gi": "1000*gd0"}
    assert pts[1] == {"switch.buffer": "shared", "cm.w": 0.5, "cm.gd": "5*gd0", "cm.gi": "2000*gd0"}
    assert pts[2]["cm.w"] == 2.0 and pts[-1]["switch.buffer"] == "partitioned"
    tasks = expand(spec)
    assert len(tasks) == 24 and [t.seed for t in tasks[:2]] == [1, 2]
    assert len({t.run_id for t in tasks}) == 24
    # expressions are evaluated per run: gd0 = 0.5/((2W+1) Qeq) follows the swept W
    by_point = {(t.params["cm.w"], t.params["cm.gd"], t.seed): t for t in tasks if t.params["switch.buffer"] == "shared"}
    for w in (0.5, 2.0, 10.0):
        scen = cnsim.runner.prepare("zhb-og-single-hop", by_point[(w, "2.5*gd0", 1)].overrides, 1)
        assert scen.lower()["cm"]["gd"] == pytest.approx(2.5 * 0.5 / ((2 * w + 1) * 150_000), rel=1e-9)


def test_run_ids_are_content_hashes() -> None:
    a = cnsim.runner.prepare(KD, {"links.delay": "4us"}, 1)
    b = cnsim.runner.prepare(KD, {"links.delay": "4000ns"}, 1)  # same resolved scenario
    c = cnsim.runner.prepare(KD, {"links.delay": "4us"}, 2)
    d = cnsim.runner.prepare(KD, {"links.delay": "5us"}, 1)
    assert run_id_of(a) == run_id_of(b)
    assert len({run_id_of(a), run_id_of(c), run_id_of(d)}) == 3
    assert len(run_id_of(a)) == 16 and int(run_id_of(a), 16) >= 0


def test_shipped_specs_expand() -> None:
    ids = shipped_sweeps()
    for sid in ("zhb-og-gd-sweep", "zhb-og-m-sweep", "zhb-og-gi-grid", "kd-qeq150-delay", "kd-qeq24-w"):
        assert sid in ids
    assert len(expand(load_spec("zhb-og-gd-sweep"))) == 14
    assert len(expand(load_spec("zhb-og-gi-grid"))) == 15
    m = expand(load_spec("zhb-og-m-sweep"))  # Qeq = M/4 and 150 KB coincide at M = 600 KB: one run, two rows
    assert len(m) == 8 and len({t.run_id for t in m}) == 7
    kd = expand(load_spec("kd-qeq24-w"))
    assert [t.params for t in kd] == [
        {"links.delay": "100us", "cm.w": 8.0},
        {"links.delay": "250us", "cm.w": 64.0},
        {"links.delay": "4us", "cm.w": 64.0},
    ]


def test_s0_case4_and_case7_grids_use_the_gd0_their_slide_prints() -> None:
    """Cases 4 and 7 of S0 run Gd in {1, 2.5, 5, 10} x Gd0 with the Gd0 the Case 4 slide prints,
    1/((2W+1)Qeq) (I-1's "unit" rule; docs/decisions.md), Qeq = M/4 and Gi = 400 Gd; the check
    deck's run sets are the shipped grids, run for run."""
    from cnsim.check.spec import load_decks

    deck_sets = load_decks(["zhb"])[0].runs
    for sid, run_set in (("zhb-og-n128-grid", "n128"), ("zhb-sweeping-hotspot-grid", "sweep_bcn")):
        spec = load_spec(sid)
        tasks = expand(spec)
        assert len(tasks) == 12
        for t in tasks:
            k = float(str(t.params["cm.gd"]).removesuffix("*gd0"))
            qeq = float(str(t.params["switch.memory_per_port"]).removesuffix("KB")) * 1e3 / 4
            cm = cnsim.runner.prepare(spec.base, t.overrides, 1).lower()["cm"]
            assert cm["gd"] == pytest.approx(k / (5 * qeq), rel=1e-12)
            assert cm["gi"] == pytest.approx(400 * cm["gd"], rel=1e-12)
            if k == 1:  # targets.md B3, "alternative Case 4 definition"
                printed = {37_500.0: 5.3333e-6, 75_000.0: 2.6667e-6, 150_000.0: 1.3333e-6}[qeq]
                assert cm["gd"] == pytest.approx(printed, rel=1e-4)
        checked = deck_sets[run_set].spec
        assert checked.base == spec.base
        assert [t.run_id for t in expand(checked)] == [t.run_id for t in tasks]


@pytest.mark.parametrize("qeq", [150_000.0, 24_000.0])
def test_kd_w_rows_recompute_the_gains_and_the_initial_rows_keep_them(qeq: float) -> None:
    """Kwan & Ding's W rows (scenarios.md I-23): kd-qeq*-w recomputes Gd = 0.5/((2W+1)Qeq) and
    Gi = 0.1·(rate/Ru)/((2W+1)Qeq) for each W; the -initial comparison keeps the W = 2 values."""
    name = "kd-qeq150-w" if qeq == 150_000.0 else "kd-qeq24-w"
    for sid, fixed in ((name, False), (f"{name}-initial", True)):
        spec = load_spec(sid)
        tasks = expand(spec)
        assert len(tasks) == 3
        for t in tasks:
            cm = cnsim.runner.prepare(spec.base, t.overrides, 1).lower()["cm"]
            w = 2.0 if fixed else float(t.params["cm.w"])
            assert cm["w"] == float(t.params["cm.w"]) and cm["qeq"] == qeq
            assert cm["gd"] == pytest.approx(0.5 / ((2 * w + 1) * qeq), rel=1e-12)
            assert cm["gi"] == pytest.approx(0.1 * (10e9 / 1e6) / ((2 * w + 1) * qeq), rel=1e-12)


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        ('name = "x"\nbase = "kd-symmetric-single-hs"\nbogus = 1\n[axes]\n"links.delay" = ["4us"]\n', "bogus: unknown key of a sweep spec"),
        ('name = "x"\nbase = "kd-symmetric-single-hs"\n[axes]\n"links.delay" = []\n', "axes.links.delay: empty axis"),
        ('name = "x"\nbase = "no-such-scenario"\n[axes]\n"links.delay" = ["4us"]\n', "unknown base scenario 'no-such-scenario'"),
        ('name = "x"\nbase = "kd-symmetric-single-hs"\n[axes]\n"links.dleay" = ["4us"]\n', "links.dleay"),
        ('name = "x"\nbase = "kd-symmetric-single-hs"\n[zip]\n"links.delay" = ["4us", "8us"]\n"cm.w" = [2.0]\n', "equal lengths"),
        ('name = "x"\nbase = "kd-symmetric-single-hs"\n[set]\n"cm.scheme" = "bcn"\n[axes]\n"cm.w" = [2.0, -1.0]\n', "cm.w"),
        ('name = "x"\nbase = "kd-symmetric-single-hs"\n[axes]\n"links.delay" = "4us"\n', "must be a list"),
    ],
)
def test_bad_specs_exit_2(tmp_path: Path, body: str, fragment: str) -> None:
    spec = _write(tmp_path / "bad.toml", body)
    res = runner.invoke(app, ["sweep", str(spec), "--out", str(tmp_path / "out"), "--quiet"])
    assert res.exit_code == 2, res.output
    assert fragment in res.output
    assert "Traceback" not in res.output
    assert not (tmp_path / "out" / "runs").exists()  # nothing ran


def test_unknown_sweep_id_exit_2(tmp_path: Path) -> None:
    res = runner.invoke(app, ["sweep", "no-such-sweep", "--out", str(tmp_path)])
    assert res.exit_code == 2 and "unknown sweep 'no-such-sweep'" in res.output


def _small_spec(tmp_path: Path, seeds: str = "[1]", n: int = 2, duration: str = "0.03s") -> Path:
    delays = ", ".join(f'"{4 * (i + 1)}us"' for i in range(n))
    return _write(
        tmp_path / "small.toml",
        f'name = "small"\nbase = "{KD}"\nseeds = {seeds}\n[set]\n"cm.scheme" = "bcn"\nduration = "{duration}"\n'
        f'[axes]\n"links.delay" = [{delays}]\n[zip]\n"cm.w" = [2.0, 8.0]\n"cm.qeq" = ["150KB", "24KB"]\n',
    )


def test_sweep_cli_writes_runs_table_and_catalog_then_resumes(tmp_path: Path) -> None:
    spec = _small_spec(tmp_path, seeds="[1, 2]")
    out = tmp_path / "out"
    res = runner.invoke(app, ["sweep", str(spec), "--out", str(out), "--workers", "2"])
    assert res.exit_code == 0, res.output
    assert "8 runs (0 already done, 8 run, 0 failed)" in res.output
    table = pq.read_table(out / "sweep.parquet")
    assert table.num_rows == 8
    for col in ("run_id", "seed", "links.delay", "cm.w", "cm.qeq", "status", "throughput_gbps.aggregate", "queue_bytes.hot.mean", "manifest.wall_s"):
        assert col in table.column_names, col
    rows = table.to_pylist()
    assert {r["status"] for r in rows} == {"ok"}
    assert len({r["run_id"] for r in rows}) == 8
    for r in rows:  # the run folder is a complete run folder
        folder = out / r["path"]
        assert {"scenario.toml", "summary.json", "manifest.json", "params.json"} <= {p.name for p in folder.iterdir()}
        assert json.loads((folder / "summary.json").read_text())["seed"] == r["seed"]
    # the catalog: runs and series views
    con = cnsim.catalog.connect(out)
    try:
        assert con.execute("SELECT count(*) FROM runs WHERE status = 'ok' AND sweep = 'small'").fetchone() == (8,)
        n_bins = con.execute("SELECT count(DISTINCT run_id), count(*) FROM queue").fetchone()
        assert n_bins == (8, 8 * 30)
        agg = con.execute('SELECT avg("throughput_gbps.aggregate") FROM runs').fetchone()[0]
        assert agg == pytest.approx(sum(r["throughput_gbps.aggregate"] for r in rows) / 8)
    finally:
        con.close()
    # a second start runs nothing
    res = runner.invoke(app, ["sweep", str(spec), "--out", str(out)])
    assert res.exit_code == 0 and "8 runs (8 already done, 0 run, 0 failed)" in res.output


def test_a_resumed_sweep_runs_again_what_another_version_of_the_results_made(tmp_path: Path) -> None:
    """The run id is a content hash of the scenario and seed, not of the model: a run folder whose
    manifest names another RESULTS_VERSION (made before a model change, or by a newer cnsim) is run
    again, and the sweep says so; the current ones are kept as they are."""
    from cnsim._version import RESULTS_VERSION

    spec = _small_spec(tmp_path, n=1, duration="0.005s")
    out = tmp_path / "out"
    assert runner.invoke(app, ["sweep", str(spec), "--out", str(out), "--quiet"]).exit_code == 0
    older, kept = sorted(p for p in (out / "runs").iterdir() if not p.name.startswith("."))
    manifest = json.loads((older / "manifest.json").read_text())
    assert manifest["versions"]["results"] == str(RESULTS_VERSION)
    manifest["versions"]["results"] = str(RESULTS_VERSION - 1)
    manifest["wall_s"] = -1.0  # a mark: the folder made by "the earlier model"
    (older / "manifest.json").write_text(json.dumps(manifest))
    kept_manifest = (kept / "manifest.json").read_text()
    res = runner.invoke(app, ["sweep", str(spec), "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert "2 runs (1 already done, 1 run, 0 failed)" in res.output
    assert "1 run folder(s) were made by another version of cnsim's results and were run again" in res.output
    again = json.loads((older / "manifest.json").read_text())
    assert again["versions"]["results"] == str(RESULTS_VERSION) and again["wall_s"] > 0
    assert (kept / "manifest.json").read_text() == kept_manifest  # not run again


def test_runs_to_do_sorts_the_folders_a_resume_finds(tmp_path: Path) -> None:
    """What a resumed sweep or check runs: every task whose folder is not a current, whole run;
    of those, the folders made by another version of the results (outdated) and the damaged ones
    (repaired) are removed first, each listed once; a missing or failed run is neither."""
    import pyarrow as pa
    from cnsim._version import RESULTS_VERSION
    from cnsim.rundir import SERIES_NAMES
    from cnsim.runtask import RunTask
    from cnsim.sweep import runs_to_do

    def folder(name: str, summary: str | None = None, results: str | None = None, error: bool = False) -> Path:
        f = tmp_path / name
        f.mkdir()
        if summary is not None:
            (f / "summary.json").write_text(summary)
        if results is not None:
            (f / "manifest.json").write_text(json.dumps({"versions": {"results": results}}))
        if error:
            (f / "error.json").write_text('{"error": "boom"}')
        return f

    current = folder("current", '{"scenario": "x"}', str(RESULTS_VERSION))
    (current / "scenario.toml").write_text('duration = "1ms"\n')
    (current / "series").mkdir()
    for name in SERIES_NAMES:  # a whole run has every series (rundir.run_reusable)
        pq.write_table(pa.table({"t_s": [0.0]}), current / "series" / f"{name}.parquet")
    folder("older", '{"scenario": "x"}', str(RESULTS_VERSION - 1))
    folder("damaged", '{"scenario": ', str(RESULTS_VERSION))
    folder("damaged-older", '{"scen', str(RESULTS_VERSION - 1))
    folder("failed", error=True)
    folder("unmanifested", '{"scenario": "x"}')  # its manifest gone: damage, not another version
    names = ["current", "older", "damaged", "damaged-older", "failed", "missing", "unmanifested"]
    tasks = [RunTask(run_id=n, base="b", overrides={}, seed=1, params={}, index=i, runs_dir=str(tmp_path), sweep="s")
             for i, n in enumerate(names)]
    todo, repaired, outdated = runs_to_do(tmp_path, tasks)
    assert [t.run_id for t in todo] == names[1:]
    assert outdated == ["older"]
    assert repaired == ["damaged", "damaged-older", "unmanifested"]  # a summary that does not read back: damaged, whoever made it
    assert sorted(p.name for p in tmp_path.iterdir()) == ["current", "failed"]


def test_a_sweep_resumes_only_its_own_folder(tmp_path: Path) -> None:
    """contract: a non-empty --out is refused unless it is resumed; a sweep resumes its own spec
    only, never a run folder or another sweep's folder (whose runs would mix into its table)."""
    spec = _small_spec(tmp_path, n=1, duration="0.005s")
    out = tmp_path / "out"
    assert runner.invoke(app, ["sweep", str(spec), "--out", str(out), "--quiet"]).exit_code == 0
    assert runner.invoke(app, ["sweep", str(spec), "--out", str(out), "--quiet"]).exit_code == 0  # resumed
    first = {p.name for p in (out / "runs").iterdir()}
    other = _write(tmp_path / "other.toml", spec.read_text().replace('"4us"', '"8us"'))
    res = runner.invoke(app, ["sweep", str(other), "--out", str(out), "--quiet"])
    assert res.exit_code == 2 and "holds sweep 'small' with other settings" in res.output, res.output
    run_folder = tmp_path / "run"
    assert runner.invoke(app, ["run", KD, "--duration", "1ms", "--out", str(run_folder), "--quiet", "--no-plots"]).exit_code == 0
    res = runner.invoke(app, ["sweep", str(spec), "--out", str(run_folder), "--quiet"])
    assert res.exit_code == 2 and "holds no sweep (sweep.json)" in res.output, res.output
    assert "pass --force to replace it" in res.output
    assert not (run_folder / "runs").exists()
    # --force replaces the folder (contract: "refused unless --force (replace)")
    res = runner.invoke(app, ["sweep", str(other), "--out", str(out), "--quiet", "--force"])
    assert res.exit_code == 0, res.output
    assert json.loads((out / "sweep.json").read_text())["spec"]["axes"] == {"links.delay": ["8us"]}
    now = {p.name for p in (out / "runs").iterdir()}
    assert len(now) == 2 and not now & first  # the first sweep's runs are gone


def test_a_sweep_extended_with_values_and_seeds_keeps_its_runs(tmp_path: Path) -> None:
    """--extend resumes a folder whose spec changed (docs/sweeps.md "Extending a sweep"): the runs it
    holds are reused, not rerun, and their params.json names their point in the new plan; a new plan
    that drops one of its runs, another sweep's name, and --extend beside --force are refused."""
    spec = _small_spec(tmp_path, n=1, duration="0.005s")
    out = tmp_path / "out"
    assert runner.invoke(app, ["sweep", str(spec), "--out", str(out), "--quiet"]).exit_code == 0
    first = {p.name: (p / "summary.json").stat().st_mtime_ns for p in (out / "runs").iterdir()}
    wider = _write(tmp_path / "wider.toml", spec.read_text().replace('"4us"', '"2us", "4us"').replace("seeds = [1]", "seeds = [1, 2]"))
    res = runner.invoke(app, ["sweep", str(wider), "--out", str(out), "--quiet"])
    assert res.exit_code == 2 and "holds sweep 'small' with other settings (pass --extend" in res.output, res.output
    res = runner.invoke(app, ["sweep", str(wider), "--out", str(out), "--extend", "--force", "--quiet"])
    assert res.exit_code == 2 and "--force and --extend: choose one" in res.output, res.output
    res = runner.invoke(app, ["sweep", str(wider), "--extend", "--quiet"])  # nothing to extend
    assert res.exit_code == 2 and "--extend: give the --out folder of the sweep to extend" in res.output, res.output
    res = runner.invoke(app, ["sweep", str(wider), "--out", str(out), "--extend"])
    assert res.exit_code == 0, res.output
    assert "8 runs (2 already done, 6 run, 0 failed)" in res.output
    for name, mtime in first.items():  # reused as they were
        assert (out / "runs" / name / "summary.json").stat().st_mtime_ns == mtime
    plan = json.loads((out / "sweep.json").read_text())
    assert plan["spec"]["axes"] == {"links.delay": ["2us", "4us"]} and plan["spec"]["seeds"] == [1, 2]
    for point in plan["runs"]:
        assert json.loads((out / "runs" / point["run_id"] / "params.json").read_text()) == point
    # the earlier runs were points 0 and 1; now 2us comes first and seeds are innermost
    assert sorted(p["index"] for p in plan["runs"] if p["run_id"] in first) == [4, 6]
    rows = pq.read_table(out / "sweep.parquet").to_pylist()
    assert len(rows) == 8 and {r["links.delay"] for r in rows if r["run_id"] in first} == {"4us"}
    # a plan without 4us would leave two runs out of the table but in the catalog: refused
    narrower = _write(tmp_path / "narrower.toml", wider.read_text().replace('"2us", "4us"', '"2us"'))
    res = runner.invoke(app, ["sweep", str(narrower), "--out", str(out), "--extend", "--quiet"])
    assert res.exit_code == 2 and "--extend keeps every run the folder holds, and 4 of them are not in the new plan" in res.output, res.output
    assert "links.delay = 4us" in res.output and "and 1 more" in res.output
    assert json.loads((out / "sweep.json").read_text()) == plan  # nothing changed
    renamed = _write(tmp_path / "renamed.toml", wider.read_text().replace('name = "small"', 'name = "other"'))
    res = runner.invoke(app, ["sweep", str(renamed), "--out", str(out), "--extend", "--quiet"])
    assert res.exit_code == 2 and "holds another sweep ('small') than 'other'" in res.output, res.output


def test_a_resumed_sweep_rewrites_a_damaged_or_missing_params_json(tmp_path: Path) -> None:
    """A reused run's params.json is rewritten to name its point (restamp_reused): one that is not
    UTF-8 ended every resume in a UnicodeDecodeError traceback, and one deleted stayed missing
    (the catalog then gave the run no params). Both are the point's label: written again."""
    spec = _small_spec(tmp_path, n=1, duration="0.005s")
    out = tmp_path / "out"
    assert runner.invoke(app, ["sweep", str(spec), "--out", str(out), "--quiet"]).exit_code == 0
    plan = {p["run_id"]: p for p in json.loads((out / "sweep.json").read_text())["runs"]}
    damaged, missing = sorted(plan)
    (out / "runs" / damaged / "params.json").write_bytes(b"\xff\xfe garbage")
    (out / "runs" / missing / "params.json").unlink()
    res = runner.invoke(app, ["sweep", str(spec), "--out", str(out), "--quiet"])
    assert res.exit_code == 0, (res.output, res.exception)
    for run_id in (damaged, missing):
        assert json.loads((out / "runs" / run_id / "params.json").read_text()) == plan[run_id]


def test_failing_run_is_recorded_and_retried(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = _small_spec(tmp_path)
    real_run = fail_runs(monkeypatch, lambda scen: scen.resolved.cm.get("w") == 8.0)
    out = tmp_path / "out"
    result = run_sweep(spec, out, workers=2)
    assert result.total == 4 and len(result.failed) == 2 and not result.ok
    assert all("injected failure" in error for _, error in result.failed)  # the run's own error, not just "failed"
    rows = {(r["links.delay"], r["cm.w"]): r for r in pq.read_table(out / "sweep.parquet").to_pylist()}
    assert len(rows) == 4
    assert rows[("4us", 8.0)]["status"] == "failed" and "injected failure" in rows[("4us", 8.0)]["error"]
    assert rows[("4us", 2.0)]["status"] == "ok"
    assert (out / rows[("4us", 8.0)]["path"] / "error.json").is_file()
    monkeypatch.setattr(cnsim.runner, "run", real_run)
    again = run_sweep(spec, out, workers=2)
    assert (again.reused, again.ran, again.failed) == (2, 2, [])
    assert {r["status"] for r in again.table.to_pylist()} == {"ok"}


def _done(runs: Path) -> dict[str, str]:
    """run_id → manifest text of the completed run folders."""
    if not runs.is_dir():
        return {}
    return {p.name: (p / "manifest.json").read_text() for p in runs.iterdir() if (p / "summary.json").is_file() and not p.name.startswith(".")}


def test_resume_after_kill_9_of_the_coordinator(tmp_path: Path) -> None:
    delays = ", ".join(f'"{d}us"' for d in range(2, 14))
    spec = _write(tmp_path / "kill.toml", f'name = "kill"\nbase = "{KD}"\n[set]\n"cm.scheme" = "bcn"\nduration = "0.06s"\n[axes]\n"links.delay" = [{delays}]\n')
    out = tmp_path / "out"
    proc = subprocess.Popen(
        [sys.executable, "-m", "cnsim.cli", "sweep", str(spec), "--out", str(out), "--workers", "1", "--quiet"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while len(_done(out / "runs")) < 3 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.02)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    before = _done(out / "runs")
    assert 3 <= len(before) < 12, f"the coordinator was not killed mid-sweep ({len(before)} runs done)"
    result = run_sweep(spec, out, workers=2)
    assert result.total == 12 and result.reused == len(before) and result.ran == 12 - len(before)
    after = _done(out / "runs")
    assert len(after) == 12
    for run_id, manifest in before.items():  # completed runs were not redone
        assert after[run_id] == manifest
    rows = pq.read_table(out / "sweep.parquet").to_pylist()
    assert len(rows) == 12 and len({r["run_id"] for r in rows}) == 12
    assert sorted(r["links.delay"] for r in rows) == sorted(f"{d}us" for d in range(2, 14))
    assert not [p for p in (out / "runs").iterdir() if p.name.startswith(".tmp-")]


def test_an_interrupted_sweep_stops_its_runs_before_its_table_is_written(tmp_path: Path) -> None:
    """Ctrl-C came while a run was in flight: it went on while the table and the catalog were
    rebuilt and completed after them, so the folders, sweep.parquet and catalog.duckdb told three
    different counts of the runs done. Now the executor is closed (its runs stopped) first."""
    spec = parse_spec({"name": "stop", "base": "zhb-og-single-hop", "axes": {"duration": ["5ms", "0.4s"]}})
    out = tmp_path / "out"
    # the short run is done, the long one in flight
    interrupt_after_the_first_run(lambda pool, progress: run_sweep(spec, out, executor=pool, progress=progress))
    done = sorted(_done(out / "runs"))
    assert len(done) == 1 and sorted(r["run_id"] for r in pq.read_table(out / "sweep.parquet").to_pylist()) == done
    assert catalog_run_ids(out) == done


def test_a_sweep_cut_short_while_writing_its_plan_still_resumes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """sweep.json is rewritten at every start and read back to decide whether a folder is this
    sweep's to resume: cut short while it was written (Ctrl-C, SIGTERM, kill -9), it left the
    folder "damaged", resumable only with --force, which deletes its runs."""
    spec = _small_spec(tmp_path, n=1, duration="0.005s")
    out = tmp_path / "out"
    assert runner.invoke(app, ["sweep", str(spec), "--out", str(out), "--workers", "1", "--quiet"]).exit_code == 0
    real_write = Path.write_text

    def cut_short(self: Path, text: str, *args: Any, **kwargs: Any) -> int:
        if "sweep.json" in self.name:
            real_write(self, text[: len(text) // 2], *args, **kwargs)
            raise KeyboardInterrupt
        return real_write(self, text, *args, **kwargs)

    monkeypatch.setattr(Path, "write_text", cut_short)
    with pytest.raises(KeyboardInterrupt):
        run_sweep(spec, out, workers=1)
    monkeypatch.undo()
    res = runner.invoke(app, ["sweep", str(spec), "--out", str(out), "--workers", "1"])
    assert res.exit_code == 0, res.output
    assert "2 runs (2 already done, 0 run, 0 failed)" in res.output
    assert [p.name for p in out.iterdir() if p.name.startswith(".")] == []  # no temporary file left


def _comparable(table: Any) -> list[dict[str, Any]]:
    drop = [c for c in table.column_names if c.startswith("manifest.")]
    return table.drop_columns(drop).to_pylist()


def test_local_threads_processes_and_dask_give_identical_tables(tmp_path: Path) -> None:
    from cnsim.executors import DaskExecutor, LocalExecutor

    spec = load_spec(_small_spec(tmp_path, seeds="[1, 2]"))
    tables = {}
    with LocalExecutor(1, "thread") as one:
        tables["threads-1"] = run_sweep(spec, tmp_path / "t1", executor=one).table
    with LocalExecutor(2, "thread") as two:
        tables["threads-2"] = run_sweep(spec, tmp_path / "t2", executor=two).table
    with LocalExecutor(2, "process") as procs:
        tables["processes-2"] = run_sweep(spec, tmp_path / "p2", executor=procs).table
    with DaskExecutor(None, 2) as dask:
        tables["dask-2"] = run_sweep(spec, tmp_path / "d2", executor=dask).table
    reference = _comparable(tables["threads-1"])
    assert len(reference) == 8 and all(r["status"] == "ok" for r in reference)
    for name, table in tables.items():
        assert _comparable(table) == reference, name
    # the series too (contents, not bytes)
    rid = reference[0]["run_id"]
    q1 = pq.read_table(tmp_path / "t1" / "runs" / rid / "series" / "queue.parquet")
    q2 = pq.read_table(tmp_path / "d2" / "runs" / rid / "series" / "queue.parquet")
    assert q1.equals(q2)


def test_bad_executor_options_exit_2(tmp_path: Path) -> None:
    spec = _small_spec(tmp_path)
    res = runner.invoke(app, ["sweep", str(spec), "--out", str(tmp_path / "o"), "--executor", "slurm"])
    assert res.exit_code == 2 and "--executor" in res.output
    res = runner.invoke(app, ["sweep", str(spec), "--out", str(tmp_path / "o"), "--scheduler", "tcp://x:1"])
    assert res.exit_code == 2 and "--scheduler" in res.output


def test_spec_errors_raise_scenario_error() -> None:
    with pytest.raises(ScenarioError, match="seeds"):
        parse_spec({"name": "x", "base": KD, "seeds": []})
    with pytest.raises(ScenarioError, match="both in \\[axes\\] and in \\[zip\\]"):
        parse_spec({"name": "x", "base": KD, "axes": {"cm.w": [1.0]}, "zip": {"cm.w": [1.0]}})


def test_the_spec_s_alternative_readings_ship_as_sweeps() -> None:
    """scenarios.md's named alternatives, each a sweep beside its default: S0's fixed Gi for the
    M = 150 KB Gd sweep, I-8's secondary ECM unit reading and I-9's QCN set points for S4, and
    S1's 0.2 Gb/s culprits of the 100-source hotspot."""

    def lowered(sid: str) -> list[tuple[dict[str, object], dict[str, object]]]:
        spec = load_spec(sid)
        return [(t.params, cnsim.runner.prepare(spec.base, t.overrides, 1).lower()) for t in expand(spec)]

    runs = lowered("zhb-og-m150-gd-sweep-fixed-gi")
    assert len(runs) == 14
    gd0 = 0.5 / (5 * 37_500)
    for params, low in runs:
        assert low["cm"]["gi"] == 6.6667e-4 and low["cm"]["qeq"] == 37_500
        assert low["cm"]["gd"] == pytest.approx(float(str(params["cm.gd"]).split("*")[0]) * gd0, rel=1e-12)
    ecm = [low["cm"] for _, low in lowered("eval-baseline-ecm-secondary")]
    assert [(c["qeq"], c["qmc"], c["gi"], c["gd"]) for c in ecm] == [
        (24_000, 83_200, 8.3333e-3, 4.1667e-6),
        (375_000, 1_300_000, 5.3333e-4, 2.6667e-7),
    ]
    qcn = [(p["cm.scheme"], low["cm"]["qeq"]) for p, low in lowered("eval-baseline-qcn-qeq")]
    assert sorted(qcn) == sorted((s, q) for s in ("qcn", "qcn3pt") for q in (26_176, 40_900, 409_000))
    runs = lowered("qcnp-ig-100-sources-0.2g")
    assert len(runs) == 9
    for _, low in runs:
        culprits = [s for s in low["traffic"]["sources"] if s["dst"] == "102"]
        assert len(culprits) == 100 and all(s["load"] == pytest.approx(0.02) for s in culprits)
        victim = [s for s in low["traffic"]["sources"] if s["dst"] == "103"]
        assert [s["load"] for s in victim] == [0.5]


@pytest.mark.parametrize(
    ("changes", "fragment"),
    [
        ({"name": 5}, "name: must be a non-empty string without '/', spaces or control characters (given 5)"),
        ({"name": "a\x00b"}, "name: must be a non-empty string"),  # a NUL reached the file system
        ({"name": "a\tb"}, "name: must be a non-empty string"),
        ({"name": ""}, "name: must be a non-empty string"),
        ({"name": "a b"}, "name: must be a non-empty string"),
        ({"name": "a/b"}, "name: must be a non-empty string"),
        ({"name": "a\\b"}, "name: must be a non-empty string"),
        ({"base": 5}, "base: a scenario id or file is required (given 5)"),
        ({"base": ""}, "base: a scenario id or file is required"),
        ({"seeds": "1"}, "seeds: must be a non-empty list of non-negative integers"),
        ({"seeds": [True]}, "seeds: must be a non-empty list of non-negative integers"),
        ({"seeds": [-1]}, "seeds: must be a non-empty list of non-negative integers"),
        ({"seeds": [1.5]}, "seeds: must be a non-empty list of non-negative integers"),
        ({"seeds": [3, 3]}, "seeds: repeated seed"),
        # a repeated value or zipped point made a second row of one run, as [3, 3] would
        ({"axes": {"links.delay": ["1us", "2us", "1us"]}}, 'axes.links.delay: repeated value "1us" (given ["1us", "2us", "1us"]); give each value once'),
        ({"zip": {"links.delay": ["1us", "2us", "1us"], "links.rate": ["1Gbps", "1Gbps", "1Gbps"]}},
         'zip: repeated point (links.delay = "1us", links.rate = "1Gbps"); give each point once'),
        ({"description": 5}, "description: must be a string"),
        ({"set": {"cm.w": 2.0}, "axes": {"cm.w": [1.0]}}, "cm.w: both in [set] and swept"),
        ({"set": {"cm.w": 2.0}, "zip": {"cm.w": [1.0]}}, "cm.w: both in [set] and swept"),
        ({"set": {"seed": 2}}, "seed: the seed is swept with `seeds = [...]`, not as a key"),
        # TOML keeps `"links.delay"` and `links.delay` apart; the second once replaced the first
        ({"axes": {"links.delay": ["1us", "2us"], "links": {"delay": ["3us"]}}}, "axes.links.delay: given twice"),
    ],
)
def test_spec_fields_are_checked(changes: dict[str, Any], fragment: str) -> None:
    with pytest.raises(ScenarioError) as err:
        parse_spec({"name": "x", "base": KD, **changes})
    assert fragment in str(err.value)


@pytest.mark.parametrize(
    ("changes", "fragment"),
    [
        ({"axes": {"cm.w": [1.0, 2.0], "cm.w ": [3.0]}}, "axes.cm.w : the same scenario key as axes.cm.w, written another way"),
        ({"axes": {"cm.w": [1.0, 2.0], 'cm."w"': [3.0]}}, 'axes.cm."w": the same scenario key as axes.cm.w'),
        ({"axes": {"hotspots.00.rate": [0.1, 0.5]}, "zip": {"hotspots.0.rate": [0.2]}}, "zip.hotspots.0.rate: the same scenario key as axes.hotspots.00.rate"),
        # an index of 18 digits is a number as --set reads it (a longer one is out of any list's range)
        ({"axes": {"hotspots.000000000000000000.rate": [0.1, 0.5]}, "zip": {"hotspots.0.rate": [0.2]}},
         "zip.hotspots.0.rate: the same scenario key as axes.hotspots.000000000000000000.rate"),
        ({"set": {"cm. w": 2.0}, "axes": {"cm.w": [1.0]}}, "axes.cm.w: the same scenario key as set.cm. w"),
        ({"set": {" seed": 2}}, " seed: the seed is swept with `seeds = [...]`"),
    ],
)
def test_one_key_written_two_ways_is_refused(changes: dict[str, Any], fragment: str) -> None:
    """`--set` reads `"cm.w "`, `cm."w"` and `cm.w` as one key; the spec took them for two: the
    grid multiplied by an axis that changed nothing, the later spelling overrode the other in
    every run, and the table's column of the other showed values no run had."""
    with pytest.raises(ScenarioError) as err:
        parse_spec({"name": "x", "base": "zhb-og-single-hop", "set": {"cm.scheme": "bcn", **changes.pop("set", {})}, **changes})
    assert fragment in str(err.value)


def test_a_spec_with_toml_dates_is_bad_input_not_a_traceback(tmp_path: Path) -> None:
    """TOML has dates and times, JSON not: the check for repeated values spelled each value as
    JSON and raised a TypeError (a traceback, exit 1) where the run's resolution names the bad
    value (exit 2)."""
    from cnsim.sweep import plan

    spec = tmp_path / "dates.toml"
    spec.write_text('name = "d"\nbase = "zhb-og-single-hop"\n[axes]\nduration = [1979-05-27T07:32:00Z, "1ms"]\n'
                    '[zip]\n"traffic.start" = [07:32:00, "0s"]\n"traffic.load" = [0.5, 0.6]\n', encoding="utf-8")
    with pytest.raises(ScenarioError, match="duration"):
        plan(load_spec(spec), tmp_path / "out")
    with pytest.raises(ScenarioError, match="axes.duration: repeated value"):
        parse_spec({"name": "x", "base": KD, "axes": {"duration": [datetime.date(2020, 1, 1), datetime.date(2020, 1, 1)]}})


def test_node_names_of_digits_are_names_not_indexes(tmp_path: Path) -> None:
    """Only an array's index reads "00" as "0": nodes "1" and "01" are two nodes, and their loads
    two keys (`--set traffic.loads.01=…` sets node 01's), not one key written two ways."""
    from cnsim.runner import prepare
    from cnsim.sweep import plan

    base = tmp_path / "two-names.toml"
    base.write_text('duration = "1ms"\n[topology]\nkind = "star"\nnodes = ["1", "01", "2"]\n[traffic]\npattern = "uniform"\n'
                    'load = 0.5\n[metrics]\nhot_port = "S1/1"\n', encoding="utf-8")
    spec = parse_spec({"name": "x", "base": str(base), "axes": {"traffic.loads.1": [0.1, 0.2], "traffic.loads.01": [0.3]}})
    loads = [dict(prepare(t.base, t.overrides, t.seed).resolved.doc.traffic.loads) for t in plan(spec, tmp_path / "out")]
    assert loads == [{"1": 0.1, "01": 0.3}, {"1": 0.2, "01": 0.3}]
    # the same node written two ways is still one key
    with pytest.raises(ScenarioError, match='the same scenario key as axes.traffic.loads.01'):
        parse_spec({"name": "x", "base": str(base), "axes": {"traffic.loads.01": [0.1], 'traffic.loads."01"': [0.3]}})


def test_spec_names_seeds_and_run_counts() -> None:
    from cnsim.sweep import MAX_RUNS, check_size, count_runs

    assert parse_spec({"base": KD}, "somewhere/my-sweep.toml").name == "my-sweep"  # the file's stem
    assert parse_spec({"base": KD}, "sweep:kd-w").name == "kd-w"  # a shipped sweep's id
    assert parse_spec({"base": KD, "seeds": [0]}).seeds == [0]
    spec = parse_spec({"name": "x", "base": KD, "seeds": [1, 2], "set": {"cm.scheme": "bcn"}, "axes": {"cm.w": [1.0, 2.0, 4.0]},
                       "zip": {"links.delay": ["4us", "8us"], "cm.qeq": ["150KB", "24KB"]}})
    assert count_runs(spec) == 3 * 2 * 2 == len(expand(spec))
    # the limit is inclusive; its message says what multiplies into the count
    assert MAX_RUNS == 10_000
    at_limit = parse_spec({"name": "x", "base": KD, "axes": {"cm.w": list(range(100)), "cm.qeq": list(range(100))}})
    assert check_size(at_limit) == 10_000
    over = parse_spec({"name": "x", "base": KD, "axes": {"cm.w": list(range(10_001))}})
    with pytest.raises(ScenarioError, match="sweep x: 10,001 runs \\(cm.w: 10001 values × 1 seed\\), more than the limit of 10,000"):
        check_size(over)
    with pytest.raises(ScenarioError, match="20,000 runs \\(cm.w: 100 values × cm.qeq: 100 values × 2 seeds\\)"):
        check_size(at_limit.with_changes(seeds=[1, 2]))


def test_an_unknown_sweep_names_the_shipped_ones() -> None:
    with pytest.raises(ScenarioError) as err:
        load_spec("no-such-sweep")
    assert f"Shipped sweeps: {', '.join(shipped_sweeps())}; or give the path" in str(err.value)
    assert shipped_sweeps()  # the package ships some


def test_run_sweep_reports_progress_and_keeps_the_plan_order(tmp_path: Path) -> None:
    from cnsim.sweep import plan, rebuild_table

    spec = load_spec(_small_spec(tmp_path, seeds="[1, 2]", n=1))  # 1 delay x 2 zipped points x 2 seeds
    out = tmp_path / "out"
    calls: list[tuple[int, int, int]] = []
    started = time.perf_counter()
    result = run_sweep(spec, out, workers=1, catalog=False, progress=lambda *c: calls.append(c))
    elapsed = time.perf_counter() - started
    assert result.ok and result.failed == [] and (result.total, result.reused, result.ran) == (4, 0, 4)
    assert 0 < result.wall_s <= elapsed
    assert calls == [(0, 4, 0), (1, 4, 0), (2, 4, 0), (3, 4, 0), (4, 4, 0)]  # before the first run, then after each
    order = [t.run_id for t in plan(spec, out)]
    assert order != sorted(order)  # (so that the two orders below can be told apart)
    assert result.table.column("run_id").to_pylist() == order  # the plan's order (point, then seed), not the folders'
    assert result.table.column("seed").to_pylist() == [1, 2, 1, 2]
    # without the plan, the table is rebuilt from the complete run folders, in folder order
    (out / "runs" / "zz-not-a-run").mkdir()
    shutil.copytree(out / "runs" / order[0], out / "runs" / ".staged")  # a complete run in a hidden folder
    (out / "runs" / "notes.txt").write_text("not a folder", encoding="utf-8")
    scanned = rebuild_table(out)
    assert scanned.column("run_id").to_pylist() == sorted(order)
    # a second start reuses every run and reports from there
    calls.clear()
    again = run_sweep(spec, out, workers=1, catalog=False, progress=lambda *c: calls.append(c))
    assert (again.reused, again.ran) == (4, 0) and calls == [(4, 4, 0)]


def test_spec_defaults_and_unestimated_runs() -> None:
    spec = parse_spec({"name": "x", "base": KD, "set": {"cm.scheme": "bcn"}, "axes": {"cm.w": [2.0, 4.0]}})
    assert spec.seeds == [1] and spec.description == ""
    from cnsim.sweep import SweepSpec

    assert SweepSpec(name="x", base=KD).seeds == [1]  # the dataclass's own default too
    assert all(t.memory_bytes > 0 for t in expand(spec))  # estimated as `cnsim run` would
    assert all(t.memory_bytes == 0 for t in expand(spec, budget_check=False))


def test_spec_changes_keep_what_they_do_not_replace(tmp_path: Path) -> None:
    spec = load_spec(_small_spec(tmp_path))
    same = spec.with_changes(seeds=[7])
    assert same.seeds == [7] and same.zip == spec.zip and same.axes == spec.axes and same.set == spec.set
    changed = spec.with_changes(set={"duration": "0.01s"}, axes={"links.delay": ["9us"]}, zip={"cm.w": [4.0, 16.0]})
    assert changed.set["duration"] == "0.01s" and changed.axes == {"links.delay": ["9us"]}
    assert changed.zip == {"cm.w": [4.0, 16.0], "cm.qeq": ["150KB", "24KB"]}


def test_a_sweep_without_axes_names_its_fixed_set_in_messages() -> None:
    from cnsim.errors import ResourceError

    bad = parse_spec({"name": "x", "base": KD, "set": {"cm.scheme": "bcn", "cm.w": -1.0}})
    with pytest.raises(ScenarioError, match="sweep x: the run with the fixed \\[set\\] \\(seed 1\\) is not valid"):
        expand(bad)
    huge = parse_spec({"name": "x", "base": "zhb-og-n128", "set": {"duration": "1000s"}})
    with pytest.raises(ResourceError, match="sweep x: the run with the fixed \\[set\\] \\(seed 1\\): "):
        expand(huge)


@pytest.mark.parametrize(
    ("body", "fragments"),
    [
        ('name = "x"\nbase = "no-such-scenario"\n[axes]\n"links.delay" = ["4us"]\n', ["bad sweep spec", "base: unknown base scenario"]),
        ('name = "x"\nbase = "kd-symmetric-single-hs"\n[axes]\n"cm.w" = [2.0]\n', ["the run with cm.w = 2.0", 'scheme "none" has no parameter "w"']),
    ],
)
def test_one_bad_value_in_a_spec_gets_a_one_paragraph_message(tmp_path: Path, body: str, fragments: list[str]) -> None:
    """Contract: bad input exits 2 with a one-paragraph message; a sweep's own heading does not
    split the one problem it reports into two paragraphs."""
    spec = _write(tmp_path / "bad.toml", body)
    res = runner.invoke(app, ["sweep", str(spec), "--out", str(tmp_path / "out"), "--quiet"])
    assert res.exit_code == 2, res.output
    message = res.output.strip()
    assert "\n\n" not in message, message
    assert all(f in message for f in fragments), message


def test_a_key_path_reads_indexes_of_up_to_18_digits_as_numbers() -> None:
    from cnsim.sweep import _key_path

    assert _key_path("hotspots." + "0" * 17 + "1.rate") == ("hotspots", "1", "rate")
    assert _key_path("hotspots." + "0" * 18 + "1.rate") == ("hotspots", "0" * 18 + "1", "rate")
    assert _key_path("traffic.loads.01") == ("traffic", "loads", "01")  # a node name, not an index
