"""The local executors and the factory the CLI options reach (cnsim.executors): their options
checked, every task's outcome yielded once, a run that fails recorded as its own folder, and a
closed executor starting nothing. The executors' agreement on a sweep's table is
test_sweep.py's; a worker killed mid-run is test_robustness.py's."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import cnsim.executors as executors
import pytest
from cnsim import ScenarioError
from cnsim.executors import LocalExecutor, default_workers, make_executor
from cnsim.rundir import ERROR_FILE, SUMMARY_FILE, read_json
from cnsim.runtask import RunOutcome, RunTask

pytest.importorskip("cnsim._core")


def tasks(runs: Path, *overrides: dict[str, object]) -> list[RunTask]:
    return [RunTask(run_id=f"r{i}", base="zhb-og-single-hop", overrides={"duration": "1ms", **o}, seed=1, params={},
                    index=i, runs_dir=str(runs), sweep="t") for i, o in enumerate(overrides)]


def refusal(*args: object) -> str:
    with pytest.raises(ScenarioError) as err:
        make_executor(*args)  # type: ignore[arg-type]
    return str(err.value)


def test_default_workers_are_the_cores_this_process_may_use(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    assert default_workers() == len(os.sched_getaffinity(0)) >= 1
    monkeypatch.setattr(executors.os, "sched_getaffinity", lambda _pid: {3})  # pinned to one core
    assert default_workers() == 1
    monkeypatch.setattr(executors.os, "sched_getaffinity", lambda _pid: set())  # never fewer than one
    assert default_workers() == 1


def test_the_factory_makes_the_executor_each_option_names() -> None:
    local = make_executor("local", 3)
    assert isinstance(local, LocalExecutor) and (local.kind, local.workers, local.name) == ("thread", 3, "local (3 threads)")
    one = make_executor("process", 1)
    assert isinstance(one, LocalExecutor) and (one.kind, one.workers, one.name) == ("process", 1, "local (1 process)")
    assert make_executor().workers == default_workers()
    assert make_executor("local", 2).name == "local (2 threads)"
    assert make_executor("process", 2).name == "local (2 processes)"


def test_bad_executor_options_are_refused_naming_what_is_allowed() -> None:
    assert refusal("slurm") == "--executor: 'slurm' is not an executor; allowed: local, process, dask"
    assert refusal("local", None, "tcp://h:8786") == "--scheduler: only with --executor dask"
    assert refusal("local", 0) == "--workers: must be at least 1 (given 0)"
    assert refusal("process", -2) == "--workers: must be at least 1 (given -2)"
    with pytest.raises(ScenarioError, match=r"^local executor kind: 'fiber' is not allowed; allowed: thread, process$"):
        LocalExecutor(2, "fiber")


@pytest.mark.parametrize("kind", ["thread", "process"])
def test_every_task_yields_one_outcome_and_a_run_folder(tmp_path: Path, kind: str) -> None:
    work = tasks(tmp_path, {}, {"cm.scheme": "qcn"}, {"cm.gi": 1.0}, {"seed": 2})
    with LocalExecutor(2, kind) as pool:
        outcomes = {o.run_id: o for o in pool.map_runs(work)}
    assert sorted(outcomes) == ["r0", "r1", "r2", "r3"]
    assert {rid: o.status for rid, o in outcomes.items()} == {"r0": "ok", "r1": "ok", "r2": "failed", "r3": "ok"}
    assert (outcomes["r2"].error or "").startswith("ScenarioError: zhb-og-single-hop: cm.gi:")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r0", "r1", "r2", "r3"]
    assert (tmp_path / "r2" / ERROR_FILE).is_file() and (tmp_path / "r3" / SUMMARY_FILE).is_file()


def test_no_tasks_start_no_pool(tmp_path: Path) -> None:
    pool = LocalExecutor(2, "process")
    assert list(pool.map_runs([])) == []
    assert pool._pool is None


def test_an_error_outside_the_run_is_recorded_as_a_lost_worker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A fault the run's own handling cannot catch (here injected into the worker function)
    fails that run alone, with a folder saying so; the other runs go on."""
    real = executors.execute_run

    def flaky(task: RunTask, stop: object = None) -> RunOutcome:
        if task.run_id == "r1":
            raise MemoryError("no room")
        return real(task, stop)  # type: ignore[arg-type]

    monkeypatch.setattr(executors, "execute_run", flaky)
    with LocalExecutor(2, "thread") as pool:
        outcomes = {o.run_id: o for o in pool.map_runs(tasks(tmp_path, {}, {}, {}))}
    assert {rid: o.status for rid, o in outcomes.items()} == {"r0": "ok", "r1": "failed", "r2": "ok"}
    assert outcomes["r1"].error == "worker lost: MemoryError: no room"
    assert read_json(tmp_path / "r1" / ERROR_FILE) == {"error": "worker lost: MemoryError: no room", "traceback": ""}


def test_a_closed_process_executor_starts_nothing(tmp_path: Path) -> None:
    pool = LocalExecutor(1, "process")
    pool.close()
    assert list(pool.map_runs(tasks(tmp_path, {}))) == []
    assert list(tmp_path.iterdir()) == []


@pytest.fixture
def terminal_sigint() -> Iterator[None]:
    """Ctrl-C as at a terminal, in this process and in the workers it spawns. A test runner
    started in the background (`cmd &` in a script) inherits SIGINT ignored; Python then leaves
    it ignored, and so do the workers spawned from it (an exec keeps an ignored signal ignored):
    the SIGINT these tests send would do nothing, and the coordinator's test failed."""
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)


def _alive(pid: int) -> bool:
    """A process that exists and is not a zombie (an orphan's parent may never reap it)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def _wait_for(condition: Callable[[], bool], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.05)
    return condition()


def _workers_of(pool: LocalExecutor) -> list[int]:
    """The worker processes of a local process pool, once they have started."""
    return list(getattr(pool._pool, "_processes", None) or {})


@pytest.mark.usefixtures("terminal_sigint")
def test_closing_a_process_pool_interrupts_its_runs_in_flight(tmp_path: Path) -> None:
    """Closing a process pool waited for its runs in flight to end: SIGTERM to a `cnsim sweep
    --executor process` (its workers not signalled) took as long as the longest run in flight,
    which then completed after the sweep's table. Now they are interrupted and leave nothing."""
    long_run = tasks(tmp_path, {"duration": "20s"})  # about 40 s of wall time: interrupted long before
    pool = LocalExecutor(1, "process")
    outcomes = pool.map_runs(long_run)
    # Ctrl-C or SIGTERM to the coordinator alone (its workers are not signalled), in mid-run
    timer = threading.Timer(4, lambda: os.kill(os.getpid(), signal.SIGINT))
    try:
        timer.start()
        with pytest.raises(KeyboardInterrupt):
            next(outcomes)
        started = time.monotonic()
        pool.close()
        assert time.monotonic() - started < 10
        assert list(tmp_path.iterdir()) == []  # no run folder, no temporary one
    finally:
        timer.cancel()
        pool.close()


def _ignores_sigint(pid: int) -> bool:
    """Whether the process ignores SIGINT (its SigIgn mask in /proc)."""
    try:
        mask = Path(f"/proc/{pid}/status").read_text().split("SigIgn:")[1].split()[0]
    except (OSError, IndexError):
        return False
    return bool(int(mask, 16) & (1 << (signal.SIGINT - 1)))


@pytest.mark.usefixtures("terminal_sigint")
def test_process_workers_leave_ctrl_c_to_the_coordinator(tmp_path: Path) -> None:
    """Ctrl-C at a terminal reaches every process of the group: a process worker waiting for its
    next run died of it, printing a KeyboardInterrupt traceback under `cnsim sweep`'s one line
    (and breaking the pool), and one in mid-run gave up its run. The workers ignore SIGINT; the
    coordinator closes the pool, whose stop event interrupts the runs in flight."""
    with LocalExecutor(2, "process") as pool:
        outcomes = pool.map_runs(tasks(tmp_path, {}, {"duration": "1.5s"}))
        first = next(outcomes)  # the short run: its worker now waits for another
        workers = _workers_of(pool)
        assert len(workers) == 2
        # a worker spawned for the long run may still be starting (importing cnsim): wait until it
        # has run its initializer, which is where it starts to ignore SIGINT (a Ctrl-C before then
        # is the default's); without the fix this waits its 20 s in vain and the signal kills
        _wait_for(lambda: all(_ignores_sigint(w) for w in workers), 20)
        for worker in workers:
            os.kill(worker, signal.SIGINT)
        time.sleep(1)
        assert all(_alive(w) for w in workers), "a worker died of Ctrl-C"
        assert [first.status, *(o.status for o in outcomes)] == ["ok", "ok"]


def test_process_workers_end_when_their_coordinator_is_killed(tmp_path: Path) -> None:
    """After `kill -9` of a `cnsim sweep --executor process`, its workers ran their runs on, for
    nobody, then stayed, idle, for ever (a worker waits on the pool's call queue, which never
    says the coordinator is gone)."""
    code = (
        "import sys, threading, time\n"
        "from cnsim.executors import LocalExecutor\n"
        "from cnsim.runtask import RunTask\n"
        "pool = LocalExecutor(2, 'process')\n"
        "work = [RunTask(run_id=f'r{i}', base='zhb-og-single-hop', overrides={'duration': '20s'}, seed=1, params={}, index=i,\n"
        "                runs_dir=sys.argv[1], sweep='t') for i in range(2)]\n"
        "threading.Thread(target=lambda: list(pool.map_runs(work)), daemon=True).start()\n"
        "while len(getattr(pool._pool, '_processes', None) or {}) < 2:\n"
        "    time.sleep(0.05)\n"
        "print(*pool._pool._processes, flush=True)\n"
        "time.sleep(120)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", code, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    workers: list[int] = []
    try:
        assert proc.stdout is not None
        workers = [int(w) for w in proc.stdout.readline().split()]
        assert len(workers) == 2 and all(_alive(w) for w in workers)
        time.sleep(2)  # the runs start
        proc.kill()
        proc.wait()
        assert _wait_for(lambda: not any(_alive(w) for w in workers), 10), "the workers outlived their coordinator"
    finally:
        proc.kill()
        proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()
        for w in workers:  # (before the fix) the orphans
            if _alive(w):
                os.kill(w, signal.SIGKILL)


# ---- Dask (a local cluster; a remote one is test_inputs_s30.py's refusals)


def test_a_scheduler_that_is_not_text_is_refused_before_dask_is_asked() -> None:
    pytest.importorskip("distributed")
    for given, shown in ((5, "5"), (["tcp://h:8786"], '["tcp://h:8786"]')):
        with pytest.raises(ScenarioError) as err:
            executors.DaskExecutor(given)  # type: ignore[arg-type]
        assert str(err.value) == f"--scheduler: must be an address such as tcp://host:8786 (given {shown})"


def test_a_local_cluster_checks_its_runs_together_and_closes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Its workers share this machine: runs that fit one at a time but not two at once are
    refused before any starts; closing stops the cluster."""
    pytest.importorskip("distributed")
    import cnsim.budget as budget
    from cnsim.errors import ResourceError

    dask = executors.DaskExecutor(None, 2)
    try:
        assert (dask.workers, dask.name) == (2, "dask local cluster (2 workers)")
        # a second cluster on the machine (another sweep) starts beside it: the scheduler's HTTP
        # port was a fixed 8787, and the second one warned (an error under this test suite)
        with executors.DaskExecutor(None, 1) as other:
            assert other.name == "dask local cluster (1 worker)"
        work = tasks(tmp_path, {}, {"seed": 2})
        for t in work:
            t.memory_bytes = 3 * 2**29  # 1.5 GiB
        monkeypatch.setattr(budget, "physical_memory", lambda: 3 * 2**30)  # 80 %: 2.4 GiB
        with pytest.raises(ResourceError, match="give --workers 1 or fewer"):
            next(iter(dask.map_runs(work)))
        monkeypatch.undo()
        for t in work:
            t.memory_bytes = 0
        assert [w["nthreads"] for w in dask.client.scheduler_info()["workers"].values()] == [1, 1]  # a process a run
        outcomes = sorted((o.run_id, o.status) for o in dask.map_runs(work))
        assert outcomes == [("r0", "ok"), ("r1", "ok")]
        cluster = dask._cluster
    finally:
        dask.close()
    assert dask._cluster is None and cluster.status.name == "closed"


def test_a_dask_executor_closed_twice_after_its_runs_closes_once(tmp_path: Path) -> None:
    """`cnsim sweep --executor dask` closes its executor when Ctrl-C arrives and again on its way
    out: the second close cancelled the futures on the closed client, whose "IOLoop is closed"
    turned the one line and exit 130 into a traceback and exit 1."""
    pytest.importorskip("distributed")
    dask = executors.DaskExecutor(None, 1)
    try:
        assert [o.status for o in dask.map_runs(tasks(tmp_path, {}))] == ["ok"]
    finally:
        dask.close()
    dask.close()
    assert dask._cluster is None


@pytest.mark.usefixtures("terminal_sigint")
def test_the_workers_of_a_local_cluster_leave_ctrl_c_to_the_coordinator(tmp_path: Path) -> None:
    """Ctrl-C at a terminal reaches every process of the group: each worker of the sweep's
    local cluster died of it, printing a KeyboardInterrupt traceback under `cnsim sweep`'s one
    line. The workers now ignore SIGINT; the coordinator stops the cluster."""
    pytest.importorskip("distributed")
    with executors.DaskExecutor(None, 1) as dask:
        before = dask.client.run(os.getpid)
        for pid in before.values():
            os.kill(pid, signal.SIGINT)
        time.sleep(1)
        assert dask.client.run(os.getpid) == before  # the same worker, not a restarted one
        assert [o.status for o in dask.map_runs(tasks(tmp_path, {}))] == ["ok"]


def test_a_remote_cluster_counts_its_threads_and_keeps_its_memory_to_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    """A cluster reached by its address (here one started by the test) runs as many runs at once
    as it has threads, and its machines' memory is not this one's to check."""
    distributed = pytest.importorskip("distributed")
    import cnsim.budget as budget

    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=2, processes=True,
                                       dashboard_address="127.0.0.1:0", silence_logs=40)
    try:
        with executors.DaskExecutor(cluster.scheduler_address) as remote:
            assert remote.workers == 4 and remote.name == f"dask at {cluster.scheduler_address} (4 threads)"
            monkeypatch.setattr(budget, "physical_memory", lambda: 2**30)
            remote.check_memory([2**40] * 8)  # a terabyte a run: the cluster's business
        assert cluster.status.name == "running"  # closing the executor leaves the cluster to its owner
    finally:
        cluster.close()
