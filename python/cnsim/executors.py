"""Where the runs of a sweep execute (DESIGN.md principle 7; issue "Executors").

One interface, ``map_runs(tasks) -> iterator of RunOutcome`` in completion order, and one worker
function, :func:`cnsim.runtask.execute_run`, which writes the run folder itself. The coordinator
never sees result arrays, only outcomes, so every executor produces the same files:

* :class:`LocalExecutor` — a pool on this machine, by default one worker per core. ``kind =
  "thread"`` (default) runs the engine in threads: it releases the GIL for the whole run
  (DESIGN.md "The GIL and Ctrl-C"), so threads are truly parallel and start instantly; Ctrl-C
  stops every running engine through the progress hook. ``kind = "process"`` uses a spawn-based
  process pool (isolation from a crashing run).
* :class:`DaskExecutor` — a Dask ``distributed`` cluster: the scheduler at ``address``, or a local
  cluster started for the sweep. On SLURM/PBS start a dask-jobqueue cluster and pass its
  scheduler address (docs/sweeps.md). Workers must see the output folder (a shared file system).

Before any run starts, the runs that would be in flight together (the ``workers`` largest
estimates) are checked against this machine's memory (:func:`cnsim.budget.check_parallel`; a
remote Dask cluster's memory is its own). A run that raises inside the worker is recorded by
the worker. With processes, a worker that
dies (killed, out of memory) fails only its own run: the runs in flight when the pool broke are
retried once each, alone; one that dies again is recorded as failed. Closing a process pool
interrupts its runs in flight, as closing the threads does, and its workers end when the
coordinator is gone (``kill -9``) rather than stay behind it. A lost Dask worker is
recorded by the coordinator as a failed run. Failed runs are retried on the next start of the
sweep.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import signal
import threading
from collections import deque
from collections.abc import Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, ThreadPoolExecutor, as_completed, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from . import budget
from .errors import ScenarioError, format_value, shorten
from .runtask import RunOutcome, RunTask, execute_run, record_failure

__all__ = ["Executor", "LocalExecutor", "DaskExecutor", "make_executor", "default_workers"]


def default_workers() -> int:
    """All cores available to this process."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


class Executor:
    """The executor interface: run tasks, yield their outcomes as they complete."""

    workers: int = 1
    name: str = "executor"

    def map_runs(self, tasks: list[RunTask]) -> Iterator[RunOutcome]:  # pragma: no cover - interface
        raise NotImplementedError

    def check_memory(self, run_bytes: list[int]) -> None:
        """Refuse (:class:`~cnsim.errors.ResourceError`) if the runs of these memory estimates
        (``RunTask.memory_bytes``), as many at once as this executor runs, would exceed this
        machine's memory; :meth:`map_runs` checks its tasks first."""

    def close(self) -> None:
        """Stop running work and release the workers."""

    def __enter__(self) -> Executor:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


#: in a worker process of a process pool: the pool's stop event (set when the coordinator
#: closes the pool), through which a run in flight is interrupted
_WORKER_STOP: Any = None


def _start_worker(stop: Any) -> None:
    """The initializer of a process pool's workers: keep the pool's stop event for the runs, and
    end the worker when the coordinator is gone. A worker waits on the pool's call queue, which
    never says that the coordinator is gone: killed with ``kill -9``, the coordinator left its
    workers running their runs for nobody, then idle for ever. A run cut short leaves only its
    temporary folder, removed when the sweep is resumed.

    The worker also ignores SIGINT, as a Dask worker does (:func:`dask_setup`): Ctrl-C at a
    terminal reaches the whole process group, and a worker waiting for its next run died of it
    with a KeyboardInterrupt traceback under the command's one line. The coordinator, which gets
    the Ctrl-C too, closes the pool, and the stop event interrupts the runs in flight."""
    global _WORKER_STOP
    _WORKER_STOP = stop
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    parent = multiprocessing.parent_process()
    if parent is not None:
        def watch() -> None:
            parent.join()  # returns when the coordinator has exited, however it ended
            os._exit(1)

        threading.Thread(target=watch, name="cnsim-coordinator-watch", daemon=True).start()


def _execute_in_worker(task: RunTask) -> RunOutcome:
    """:func:`execute_run` in a worker process, interrupted when the pool's stop event is set."""
    return execute_run(task, _WORKER_STOP)


def dask_setup(worker: Any) -> None:
    """Dask's preload hook (``preload=["cnsim.executors"]``), run in each worker process of the
    local cluster a sweep starts: the worker ignores SIGINT. Ctrl-C at a terminal reaches the whole
    process group, and every worker printed a KeyboardInterrupt traceback under the command's
    one-line message; the coordinator, which gets the Ctrl-C too, stops the cluster itself."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)


def _died(task: RunTask, err: BaseException) -> RunOutcome:
    message = f"worker lost: {type(err).__name__}: {err}"
    record_failure(task, message)
    return RunOutcome(task.run_id, "failed", message)


class LocalExecutor(Executor):
    """A pool of ``workers`` threads (default) or processes on this machine."""

    def __init__(self, workers: int | None = None, kind: str = "thread") -> None:
        if kind not in ("thread", "process"):
            raise ScenarioError(f"local executor kind: {kind!r} is not allowed; allowed: thread, process")
        if workers is not None and workers < 1:
            raise ScenarioError(f"--workers: must be at least 1 (given {workers})")
        self.workers = workers or default_workers()
        self.kind = kind
        self.name = f"local ({self.workers} {kind}{('es' if kind == 'process' else 's') if self.workers > 1 else ''})"
        self._stop = threading.Event()
        #: the process pools' stop event (a worker's runs watch it), made with the first pool
        self._process_stop: Any = None
        self._pool: ThreadPoolExecutor | ProcessPoolExecutor | None = None

    def map_runs(self, tasks: list[RunTask]) -> Iterator[RunOutcome]:
        if not tasks:
            return
        self.check_memory([t.memory_bytes for t in tasks])
        if self.kind == "process":
            yield from self._map_processes(tasks)
            return
        self._pool = ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="cnsim-run")
        futures: dict[Future[RunOutcome], RunTask] = {self._pool.submit(execute_run, t, self._stop): t for t in tasks}
        for fut in as_completed(futures):
            try:
                yield fut.result()
            except Exception as err:  # an error outside the run's own handling: record, go on
                yield _died(futures[fut], err)

    def check_memory(self, run_bytes: list[int]) -> None:
        budget.check_parallel(run_bytes, self.workers, shared_process=self.kind == "thread")

    def _new_process_pool(self, workers: int) -> ProcessPoolExecutor:
        context = multiprocessing.get_context("spawn")
        if self._process_stop is None:
            self._process_stop = context.Event()
        pool = ProcessPoolExecutor(max_workers=workers, mp_context=context, initializer=_start_worker, initargs=(self._process_stop,))
        self._pool = pool
        return pool

    def _map_processes(self, tasks: list[RunTask]) -> Iterator[RunOutcome]:
        """Processes, at most ``workers`` runs in flight. A worker that dies (killed, out of
        memory) breaks the whole pool, so the runs in flight at that moment are suspects: each
        is retried once, alone in a fresh one-worker pool — the run that killed its worker fails
        alone, the others complete — and the rest go on in a fresh pool."""
        queue = deque(tasks)
        while queue and not self._stop.is_set():
            pool = self._new_process_pool(self.workers)
            inflight: dict[Future[RunOutcome], RunTask] = {}
            suspects: list[RunTask] = []
            while (queue or inflight) and not suspects:
                while queue and len(inflight) < self.workers:
                    task = queue.popleft()
                    inflight[pool.submit(_execute_in_worker, task)] = task
                done, _ = wait(inflight, return_when=FIRST_COMPLETED)
                for fut in done:
                    task = inflight.pop(fut)
                    try:
                        yield fut.result()
                    except BrokenProcessPool:
                        suspects.append(task)
                    except Exception as err:
                        yield _died(task, err)
            for fut, task in inflight.items():  # their futures fail with the broken pool too
                if fut.done() and not fut.cancelled() and fut.exception() is None:
                    yield fut.result()
                else:
                    suspects.append(task)
            pool.shutdown(wait=True, cancel_futures=True)
            for task in suspects:
                if self._stop.is_set():
                    break
                yield self._alone(task)

    def _alone(self, task: RunTask) -> RunOutcome:
        """Run ``task`` in a pool of its own (the retry of a run whose worker died)."""
        pool = self._new_process_pool(1)
        try:
            return pool.submit(_execute_in_worker, task).result()
        except Exception as err:
            return _died(task, err)
        finally:
            pool.shutdown(wait=True, cancel_futures=True)

    def close(self) -> None:
        """Stop: the runs in flight are interrupted (threads and processes alike: a process
        pool's workers see its stop event; before, closing it waited for its runs to end, and
        SIGTERM to a `cnsim sweep --executor process` took as long as its longest run), then
        the workers are released."""
        self._stop.set()
        if self._process_stop is not None:
            self._process_stop.set()
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None


class DaskExecutor(Executor):
    """Runs on a Dask cluster: ``address`` of a running scheduler, or a local cluster."""

    def __init__(self, address: str | None = None, workers: int | None = None) -> None:
        try:
            from distributed import Client, LocalCluster
        except ImportError:
            raise ScenarioError(
                "--executor dask: Dask is not installed; install it with `pip install 'cnsim[dask]'`"
            ) from None
        self._cluster: Any = None
        if address:
            if not isinstance(address, str):
                raise ScenarioError(f"--scheduler: must be an address such as tcp://host:8786 (given {format_value(address)})")
            problem = None
            try:
                self._client = Client(address, timeout="20s")
            except (ValueError, TypeError) as err:  # distributed's parser: no port, unknown scheme, …
                problem = (
                    f"--scheduler: {format_value(address)} is not a Dask scheduler address ({shorten(str(err), 160)}); "
                    "give one such as tcp://host:8786"
                )
            except (OSError, TimeoutError) as err:
                problem = f"--scheduler: cannot reach the Dask scheduler at {format_value(address)} ({shorten(str(err), 160)})"
            if problem is not None:
                # A Client that failed to start is left to the garbage collector, and its
                # __del__ closes it by taking its loop runner's lock. Left to a later collection,
                # that can run inside distributed's own code while it holds the same lock, and
                # the process hangs (seen in the test suite): collect it now, outside the except
                # block whose traceback kept it alive, while no lock is held.
                gc.collect()
                raise ScenarioError(problem)
            info = self._client.scheduler_info()
            self.workers = max(1, sum(w.get("nthreads", 1) for w in info.get("workers", {}).values()))
            self.name = f"dask at {address} ({self.workers} threads)"
        else:
            n = workers or default_workers()
            budget.check_parallel([0] * n, n, shared_process=False)  # the worker processes alone
            # one single-threaded worker process per core: runs are isolated like on a cluster.
            # The scheduler always serves HTTP (health, metrics; the dashboard where bokeh is
            # installed), by default on port 8787: a second cluster on this machine (another
            # sweep) then warns and moves. A free port on this host alone never collides.
            self._cluster = LocalCluster(
                n_workers=n, threads_per_worker=1, processes=True, dashboard_address="127.0.0.1:0", silence_logs=40,
                preload=[__name__],  # dask_setup: the workers leave Ctrl-C to the coordinator
            )
            self._client = Client(self._cluster)
            self.workers = n
            self.name = f"dask local cluster ({n} worker{'s' if n > 1 else ''})"
        self._futures: list[Any] = []
        self._closed = False

    def check_memory(self, run_bytes: list[int]) -> None:
        if self._cluster is not None:  # a cluster on this machine: its workers share its memory
            budget.check_parallel(run_bytes, self.workers, shared_process=False)

    @property
    def client(self) -> Any:
        return self._client

    def map_runs(self, tasks: list[RunTask]) -> Iterator[RunOutcome]:
        if not tasks:
            return
        from distributed import as_completed as dask_completed

        self.check_memory([t.memory_bytes for t in tasks])

        futures = self._client.map(execute_run, tasks, key=[f"cnsim-run-{t.run_id}" for t in tasks], pure=False)
        self._futures = futures
        by_key = {f.key: t for f, t in zip(futures, tasks, strict=True)}
        for fut in dask_completed(futures):
            if fut.status == "error":
                yield _died(by_key[fut.key], fut.exception())
            elif fut.status == "cancelled":
                continue
            else:
                yield fut.result()
            fut.release()

    def close(self) -> None:
        """Cancel the runs not done, close the client and a local cluster. A second call does
        nothing: after Ctrl-C the command line closes the executor, then closes it again on its
        way out, and a closed client's ``cancel`` raises ("IOLoop is closed": a traceback and
        exit 1 instead of the one line and exit 130)."""
        if self._closed:
            return
        self._closed = True
        try:
            if self._futures:
                self._client.cancel(self._futures)
                self._futures = []
            self._client.close()
        finally:
            if self._cluster is not None:
                self._cluster.close()
                self._cluster = None


def make_executor(kind: str = "local", workers: int | None = None, scheduler: str | None = None) -> Executor:
    """The executor the CLI options name: ``local`` (threads), ``process`` or ``dask``."""
    if kind == "local":
        if scheduler:
            raise ScenarioError("--scheduler: only with --executor dask")
        return LocalExecutor(workers, "thread")
    if kind == "process":
        return LocalExecutor(workers, "process")
    if kind == "dask":
        return DaskExecutor(scheduler, workers)
    raise ScenarioError(f"--executor: {kind!r} is not an executor; allowed: local, process, dask")
