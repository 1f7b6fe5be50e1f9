"""One run of a sweep as a worker executes it (cnsim.runtask): a finished run is published under
its run id with its parameters; a failure is a run folder holding the error, never an exception;
an interrupted run leaves nothing behind."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from cnsim.rundir import ERROR_FILE, PARAMS_FILE, SCENARIO_FILE, SUMMARY_FILE, read_run
from cnsim.runtask import RunOutcome, RunTask, execute_run, params_doc, record_failure

pytest.importorskip("cnsim._core")


def task(runs: Path, overrides: dict[str, Any], run_id: str = "r1") -> RunTask:
    return RunTask(run_id=run_id, base="zhb-og-single-hop", overrides=overrides, seed=7, params={"cm.scheme": "qcn"},
                   index=3, runs_dir=str(runs), sweep="demo")


def doc(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def test_params_doc_is_what_params_json_holds() -> None:
    t = task(Path("runs"), {"duration": "1ms"})
    assert params_doc(t) == {"run_id": "r1", "sweep": "demo", "base": "zhb-og-single-hop", "seed": 7, "index": 3,
                             "params": {"cm.scheme": "qcn"}, "overrides": {"duration": "1ms"}}


def timed(t: RunTask, stop: threading.Event | None = None) -> RunOutcome:
    """``execute_run``, checking the wall time it reports lies within the time it took."""
    started = time.perf_counter()
    outcome = execute_run(t, stop)
    assert 0 < outcome.wall_s <= time.perf_counter() - started
    return outcome


def test_a_task_and_an_outcome_default_to_no_estimate_and_no_time() -> None:
    assert task(Path("runs"), {}).memory_bytes == 0 and task(Path("runs"), {}).plots is False
    assert RunOutcome("r", "ok").wall_s == 0.0 and RunOutcome("r", "ok").error is None


def test_a_finished_run_is_published_under_its_run_id(tmp_path: Path) -> None:
    t = task(tmp_path, {"duration": "1ms", "cm.scheme": "qcn"})
    outcome = timed(t)
    assert (outcome.run_id, outcome.status, outcome.error) == ("r1", "ok", None)
    assert [p.name for p in tmp_path.iterdir()] == ["r1"]  # no temporary folder left
    folder = tmp_path / "r1"
    assert doc(folder / PARAMS_FILE) == params_doc(t)
    summary = doc(folder / SUMMARY_FILE)
    assert (summary["scheme"], summary["seed"]) == ("qcn", 7)
    assert 'scheme = "qcn"' in (folder / SCENARIO_FILE).read_text(encoding="utf-8")
    assert not (folder / ERROR_FILE).exists()
    assert read_run(folder)["status"] == "ok"  # type: ignore[index]


def test_a_run_refused_by_the_engine_budget_is_a_failed_folder_with_its_scenario(tmp_path: Path) -> None:
    outcome = timed(task(tmp_path, {"duration": "1ms", "metrics.bin": "1ps"}))
    assert outcome.status == "failed"
    assert outcome.error is not None and outcome.error.startswith("ResourceError: this run was refused before it started")
    folder = tmp_path / "r1"
    assert sorted(p.name for p in folder.iterdir()) == [ERROR_FILE, PARAMS_FILE, SCENARIO_FILE]
    error = doc(folder / ERROR_FILE)
    assert error["error"] == outcome.error and "Traceback" in error["traceback"]
    assert 'bin = "1ps"' in (folder / SCENARIO_FILE).read_text(encoding="utf-8")


def test_a_worker_with_another_version_of_the_results_refuses_the_run(tmp_path: Path) -> None:
    """A task carries its coordinator's RESULTS_VERSION (a Dask worker may run another cnsim): a
    worker that would compute other results records the run as failed, saying why, instead of
    mixing its results into the sweep."""
    import dataclasses

    from cnsim._version import RESULTS_VERSION

    assert task(tmp_path, {}).results_version == RESULTS_VERSION
    outcome = timed(dataclasses.replace(task(tmp_path, {"duration": "1ms"}), results_version=RESULTS_VERSION + 1))
    assert outcome.status == "failed"
    assert outcome.error == (f"this worker's cnsim computes version {RESULTS_VERSION} of the results and the "
                             f"sweep's coordinator version {RESULTS_VERSION + 1}: install the same cnsim on every worker")
    folder = tmp_path / "r1"
    assert doc(folder / ERROR_FILE)["error"] == outcome.error and not (folder / SUMMARY_FILE).exists()


def test_a_run_that_does_not_resolve_is_a_failed_folder_without_a_scenario(tmp_path: Path) -> None:
    outcome = timed(task(tmp_path, {"cm.gi": 2.0}))
    assert outcome.status == "failed" and outcome.error is not None
    assert outcome.error.startswith("ScenarioError: zhb-og-single-hop: cm.gi:")
    assert sorted(p.name for p in (tmp_path / "r1").iterdir()) == [ERROR_FILE, PARAMS_FILE]
    row = read_run(tmp_path / "r1")
    assert row is not None and (row["status"], row["error"], row["cm.scheme"]) == ("failed", outcome.error, "qcn")


def test_an_interrupted_run_leaves_nothing_behind(tmp_path: Path) -> None:
    stop = threading.Event()
    stop.set()
    outcome = timed(task(tmp_path, {"duration": "10s"}), stop)  # stopped at the first poll
    assert (outcome.status, outcome.error) == ("interrupted", "interrupted")
    assert list(tmp_path.iterdir()) == []


def test_a_run_with_a_stop_never_set_finishes(tmp_path: Path) -> None:
    assert execute_run(task(tmp_path, {"duration": "2ms"}), threading.Event()).status == "ok"


def test_record_failure_writes_a_failed_run_of_its_own(tmp_path: Path) -> None:
    """What the sweep engine records for a worker that died (no temporary folder to reuse)."""
    t = task(tmp_path / "runs", {"duration": "1ms"}, run_id="r9")
    record_failure(t, "WorkerLost: killed", "trace")
    folder = tmp_path / "runs" / "r9"
    assert [p.name for p in (tmp_path / "runs").iterdir()] == ["r9"]
    assert doc(folder / ERROR_FILE) == {"error": "WorkerLost: killed", "traceback": "trace"}
    assert doc(folder / PARAMS_FILE) == params_doc(t)
    assert (folder / SCENARIO_FILE).is_file()
    record_failure(t, "WorkerLost: again")  # a second failure replaces the first
    assert doc(folder / ERROR_FILE)["error"] == "WorkerLost: again"
