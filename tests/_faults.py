"""Injected run failures for the tests of what a sweep, check or reproduction does when a run
fails (as a crashed worker or an engine error would make it): the real engine runs every other
run. And Ctrl-C while runs are in flight (:func:`interrupt_after_the_first_run`)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import cnsim.catalog
import cnsim.runner
import pytest
from cnsim.executors import LocalExecutor

Progress = Callable[[int, int, int], None]


def fail_runs(monkeypatch: pytest.MonkeyPatch, when: Callable[[Any], bool]) -> Callable[..., Any]:
    """Make ``cnsim.runner.run`` raise "injected failure" for each scenario ``when`` picks;
    returns the real ``run`` (to put back in the middle of a test)."""
    real_run = cnsim.runner.run

    def flaky(scen: Any, *args: Any, **kwargs: Any) -> Any:
        if when(scen):
            raise RuntimeError("injected failure")
        return real_run(scen, *args, **kwargs)

    monkeypatch.setattr(cnsim.runner, "run", flaky)
    return real_run


def long_links(scen: Any) -> bool:
    """Links longer than 10 us."""
    return bool(scen.resolved.doc.links.delay > 10**7)


def interrupt_after_the_first_run(start: Callable[[LocalExecutor, Progress], Any]) -> None:
    """``start(executor, progress)`` on a two-thread executor, with Ctrl-C (KeyboardInterrupt,
    which it must raise) as soon as one run is done, others in flight or queued. Then whatever
    the executor still runs (it went on, before commands closed it on an interrupt) completes, so
    that what the test reads afterwards is final."""

    def interrupt(done: int, _total: int, _failed: int) -> None:
        if done >= 1:
            raise KeyboardInterrupt

    pool = LocalExecutor(2)
    try:
        with pytest.raises(KeyboardInterrupt):
            start(pool, interrupt)
    finally:
        if pool._pool is not None:  # still running (it was, before the fix): let its runs complete
            pool._pool.shutdown(wait=True)
        pool.close()


def catalog_run_ids(folder: Path) -> list[str]:
    """The run ids ``folder/catalog.duckdb`` holds, sorted."""
    con = cnsim.catalog.connect(folder)
    try:
        return sorted(r[0] for r in con.execute("SELECT run_id FROM runs").fetchall())
    finally:
        con.close()
