"""Runs side by side share the machine (stop 31): a worker count whose runs in flight would
together exceed memory is refused with exit 2 and the count that fits, before anything is
written or started. Each run alone is still checked by the run budget (tests/test_robustness.py).

The machine's memory is replaced by a small one (``budget.physical_memory``), so the refusals do
not depend on the machine the tests run on; nothing here simulates.
"""

from __future__ import annotations

from pathlib import Path

import cnsim.budget as budget
import pytest
from cnsim.cli import app
from cnsim.errors import ResourceError
from cnsim.executors import LocalExecutor
from cnsim.runtask import RunTask
from cnsim.sweep import load_spec, plan
from typer.testing import CliRunner

GIB = 2**30
BASE = 120 * 2**20  # the Python process itself, as budget counts it

runner = CliRunner()


def test_the_largest_runs_in_flight_are_counted() -> None:
    runs = [GIB] * 8
    # processes: every worker holds a run and its own interpreter; 3 x 1 GiB fit in 80 % of 4 GiB
    with pytest.raises(ResourceError, match=r"--workers 8: 8 runs at once \(a process each\).*8\.0 GiB.*give --workers 3 or fewer"):
        budget.check_parallel(runs, 8, shared_process=False, memory=4 * GIB)
    budget.check_parallel(runs, 3, shared_process=False, memory=4 * GIB)
    # threads: one interpreter for all
    with pytest.raises(ResourceError, match=r"\(threads of one process\) would need about 7\.2 GiB"):
        budget.check_parallel(runs, 8, shared_process=True, memory=4 * GIB)
    # only as many runs as there are can be in flight, however many workers
    budget.check_parallel([GIB, GIB], 10_000, shared_process=False, memory=4 * GIB)
    # the largest runs are the ones counted
    with pytest.raises(ResourceError, match="give --workers 1 or fewer"):
        budget.check_parallel([100, 3 * GIB, 100, GIB], 2, shared_process=False, memory=4 * GIB + GIB // 2)
    budget.check_parallel([100, 3 * GIB, 100, GIB], 1, shared_process=False, memory=4 * GIB + GIB // 2)
    # a run too large to run at all is the run budget's refusal; here the advice is one worker
    with pytest.raises(ResourceError, match="give --workers 1"):
        budget.check_parallel([8 * GIB, 8 * GIB], 2, shared_process=False, memory=4 * GIB)


def test_worker_processes_alone_are_counted() -> None:
    # runs of unknown size (0) still cost their worker's interpreter when each is a process
    with pytest.raises(ResourceError, match="give --workers 6 or fewer"):
        budget.check_parallel([0] * 10, 10, shared_process=False, memory=GIB)
    budget.check_parallel([0] * 10, 10, shared_process=True, memory=GIB)


@pytest.fixture
def small_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(budget, "physical_memory", lambda: GIB)


def write_sweep(tmp_path: Path, seeds: int) -> Path:
    spec = tmp_path / "tiny.toml"
    spec.write_text(
        f'name = "tiny"\nbase = "zhb-og-single-hop"\nseeds = {list(range(1, seeds + 1))}\n[set]\nduration = "1ms"\n'
    )
    return spec


def test_sweep_refuses_workers_whose_runs_do_not_fit_together(tmp_path: Path, small_machine: None) -> None:
    spec = write_sweep(tmp_path, 8)
    out = tmp_path / "out"
    res = runner.invoke(app, ["sweep", str(spec), "--workers", "8", "--executor", "process", "--out", str(out)])
    assert res.exit_code == 2, res.output
    assert "Traceback" not in res.output
    assert "--workers 8: 8 runs at once (a process each)" in res.output
    assert "give --workers 6 or fewer" in res.output
    assert not out.exists(), "refused before anything was written"


def test_the_executors_check_their_runs_in_flight(tmp_path: Path, small_machine: None) -> None:
    tasks = plan(load_spec(str(write_sweep(tmp_path, 8))), tmp_path / "out")
    assert all(t.memory_bytes > BASE for t in tasks), "every planned run carries its estimate"
    # eight threads share one interpreter: the small runs fit
    sizes = [t.memory_bytes for t in tasks]
    LocalExecutor(8, "thread").check_memory(sizes)
    with pytest.raises(ResourceError, match="give --workers 6 or fewer"):
        LocalExecutor(8, "process").check_memory(sizes)
    # map_runs checks before it starts a single worker
    with pytest.raises(ResourceError):
        next(iter(LocalExecutor(8, "process").map_runs(tasks)))
    assert not (tmp_path / "out").exists()


def test_check_refuses_too_many_workers_before_writing(tmp_path: Path, small_machine: None) -> None:
    out = tmp_path / "checks"
    res = runner.invoke(app, ["check", "kd", "--quick", "--workers", "64", "--executor", "process", "--out", str(out)])
    assert res.exit_code == 2, res.output
    assert "runs at once (a process each)" in res.output and "or fewer" in res.output
    assert not out.exists()
    # nor does --force clear a folder before the refusal
    out.mkdir()
    (out / "keep.txt").write_text("not a check's")
    res = runner.invoke(app, ["check", "kd", "--quick", "--workers", "64", "--executor", "process", "--out", str(out), "--force"])
    assert res.exit_code == 2 and (out / "keep.txt").is_file(), res.output


def test_reproduce_refuses_too_many_workers_before_writing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the kd deck's studies have four runs each (--quick): four processes must not fit
    monkeypatch.setattr(budget, "physical_memory", lambda: GIB // 2)
    out = tmp_path / "deck"
    out.mkdir()
    (out / "keep.txt").write_text("not this deck's")
    res = runner.invoke(app, ["reproduce", "kd", "--quick", "--workers", "64", "--executor", "process", "--out", str(out), "--force"])
    assert res.exit_code == 2, res.output
    assert "runs at once (a process each)" in res.output and "or fewer" in res.output
    assert (out / "keep.txt").is_file(), "refused before --force cleared the folder"


def test_a_local_dask_cluster_too_large_for_the_machine_is_not_started(small_machine: None) -> None:
    pytest.importorskip("distributed")
    from cnsim.executors import DaskExecutor

    with pytest.raises(ResourceError, match=r"--workers 64: 64 runs at once \(a process each\)"):
        DaskExecutor(None, 64)


def test_a_task_without_an_estimate_counts_as_its_worker_alone() -> None:
    task = RunTask(run_id="x", base="b", overrides={}, seed=1, params={}, index=0, runs_dir="r", sweep="s")
    assert task.memory_bytes == 0
    budget.check_parallel([task.memory_bytes] * 4, 4, shared_process=False, memory=GIB)
