"""One run of a sweep, as a worker executes it (a thread, a process or a Dask worker): the task
(picklable, no open files), what the worker reports back, and the run itself, written into a
temporary folder under ``runs_dir`` and renamed to its run id only when complete.

Reports are not written here (the sweep engine does not draw pages): ``cnsim sweep --plots``
writes each run's ``report.html`` after the sweep, from the folders.
"""

from __future__ import annotations

import shutil
import threading
import time
import traceback
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ._version import RESULTS_VERSION
from .results import dump_json
from .rundir import ERROR_FILE, PARAMS_FILE, SCENARIO_FILE, TMP_PREFIX, publish

__all__ = ["RunTask", "RunOutcome", "params_doc", "execute_run", "record_failure"]


@dataclass
class RunTask:
    """One run of a sweep: everything a worker needs (picklable, no open files)."""

    run_id: str
    base: str
    overrides: dict[str, Any]
    seed: int
    params: dict[str, Any]
    index: int
    runs_dir: str
    sweep: str
    plots: bool = False
    #: the run's peak memory estimate (cnsim.budget; 0 if not estimated), for the executors'
    #: check of the runs in flight together
    memory_bytes: int = 0
    #: the version of the results the coordinator computes (the value travels with the task): a
    #: worker with another cnsim refuses the run rather than mix its results into the sweep
    results_version: int = RESULTS_VERSION


@dataclass
class RunOutcome:
    """What a worker reports back (the run folder holds the results)."""

    run_id: str
    status: str  # "ok" | "failed" | "interrupted"
    error: str | None = None
    wall_s: float = 0.0


def params_doc(task: RunTask) -> dict[str, Any]:
    return {
        "run_id": task.run_id,
        "sweep": task.sweep,
        "base": task.base,
        "seed": task.seed,
        "index": task.index,
        "params": task.params,
        "overrides": task.overrides,
    }


def execute_run(task: RunTask, stop: threading.Event | None = None) -> RunOutcome:
    """Run one task into ``runs_dir/<run_id>/`` (temporary folder, renamed when complete).

    A failure is written as a run folder with ``error.json`` and reported, never raised; an
    interruption (``stop`` set, Ctrl-C) leaves nothing behind and reports ``"interrupted"``.
    """
    from .runner import prepare, run

    runs = Path(task.runs_dir)
    final = runs / task.run_id
    tmp = runs / f"{TMP_PREFIX}{task.run_id}-{uuid.uuid4().hex[:8]}"
    started = time.perf_counter()

    def progress(_now: int, _total: int) -> None:
        if stop is not None and stop.is_set():
            raise KeyboardInterrupt

    if task.results_version != RESULTS_VERSION:
        message = (f"this worker's cnsim computes version {RESULTS_VERSION} of the results and the sweep's "
                   f"coordinator version {task.results_version}: install the same cnsim on every worker")
        record_failure(task, message, tmp=tmp)
        return RunOutcome(task.run_id, "failed", message, time.perf_counter() - started)
    try:
        scen = prepare(task.base, task.overrides, task.seed)
        result = run(scen, progress=progress if stop is not None else None)
        result.save(tmp, plots=task.plots)
        (tmp / PARAMS_FILE).write_text(dump_json(params_doc(task)), encoding="utf-8")
        publish(tmp, final)
        return RunOutcome(task.run_id, "ok", None, time.perf_counter() - started)
    except KeyboardInterrupt:
        shutil.rmtree(tmp, ignore_errors=True)
        return RunOutcome(task.run_id, "interrupted", "interrupted", time.perf_counter() - started)
    except Exception as err:  # recorded, never stops the sweep
        message = f"{type(err).__name__}: {err}"
        record_failure(task, message, traceback.format_exc(), tmp=tmp)
        return RunOutcome(task.run_id, "failed", message, time.perf_counter() - started)


def record_failure(task: RunTask, message: str, trace: str = "", tmp: Path | None = None) -> None:
    """Write a failed run's folder: params.json, error.json and the scenario when it resolves."""
    runs = Path(task.runs_dir)
    tmp = tmp or runs / f"{TMP_PREFIX}{task.run_id}-{uuid.uuid4().hex[:8]}"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    (tmp / PARAMS_FILE).write_text(dump_json(params_doc(task)), encoding="utf-8")
    (tmp / ERROR_FILE).write_text(dump_json({"error": message, "traceback": trace}), encoding="utf-8")
    try:
        from .runner import prepare

        (tmp / SCENARIO_FILE).write_text(prepare(task.base, task.overrides, task.seed).to_toml(), encoding="utf-8")
    except Exception:  # noqa: BLE001 - the error is what we record
        pass
    publish(tmp, runs / task.run_id)
