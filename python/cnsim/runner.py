"""Running one scenario on the Rust engine (spec/contract.md "Python": ``cnsim.run``).

The engine (``cnsim._core``) runs in a worker thread with the GIL released; the calling thread
polls ``progress_ps()`` for a progress callback and turns Ctrl-C into ``interrupt()``
(DESIGN.md "The GIL and Ctrl-C"). The engine raises one exception type per kind (crates/cnsim-py):
``ConfigError`` (a configuration it refuses, with its key) becomes :class:`ScenarioError`,
``Interrupted`` becomes ``KeyboardInterrupt`` and ``EngineError`` (a bug) :class:`EngineError`.
"""

from __future__ import annotations

import json
import os
import platform
import resource
import socket
import sys
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from . import budget
from ._version import RESULTS_VERSION, __version__
from .engine import engine
from .errors import EngineError, EngineMissing, Problem, ScenarioError, format_value
from .scenario import Scenario, load, measurement_window
from .units import PS_PER_S

if TYPE_CHECKING:  # imported while the engine runs (``_simulate``): numpy is a tenth of the start
    from .results import Result

__all__ = ["run", "prepare", "engine", "EngineMissing"]

Progress = Callable[[int, int], None]
_POLL_S = 0.1


def prepare(
    scenario: str | Path | Scenario,
    set: dict[str, Any] | None = None,
    seed: int | None = None,
    duration: Any = None,
) -> Scenario:
    """Load ``scenario`` and apply overrides, seed and duration; validates (ScenarioError)."""
    scen = load(scenario)
    scen.set_many(set)
    if seed is not None:
        scen.set("seed", seed)
    if duration is not None:
        scen.set("duration", duration)
    return scen.validate()


def _front_end_error(core: ModuleType, scen: Scenario, err: BaseException) -> BaseException:
    """The front end's exception for an engine exception (one type per kind, see the module doc)."""
    if isinstance(err, core.ConfigError):
        message, key, value, expected = err.args
        problem = Problem(key, value, f"the engine refused it: {expected}")
        return ScenarioError(f"{scen.id}: {problem.render()}", [problem])
    if isinstance(err, core.EngineError):
        return EngineError(f"{scen.id}: {err}")
    return err


def _peak_rss_bytes() -> int:
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(rss if sys.platform == "darwin" else rss * 1024)


def _numpy_version() -> str:
    import numpy as np

    return np.__version__


def _versions(core: ModuleType | None) -> dict[str, str]:
    versions = {
        "cnsim": __version__,
        "results": str(RESULTS_VERSION),
        "python": platform.python_version(),
        "numpy": _numpy_version(),
    }
    if core is not None and hasattr(core, "version"):
        versions["core"] = str(core.version())
    return versions


def run(
    scenario: str | Path | Scenario,
    set: dict[str, Any] | None = None,
    seed: int | None = None,
    duration: Any = None,
    progress: Progress | None = None,
    force: bool = False,
    meanwhile: Callable[[], object] | None = None,
) -> Result:
    """Simulate ``scenario`` (id, path or :class:`Scenario`) and return a :class:`Result`.

    ``set`` maps dotted keys to values (as ``--set``); ``seed`` and ``duration`` override the
    scenario's; ``progress(sim_ps, total_ps)`` is called about ten times a second;
    ``meanwhile()`` is called once in the calling thread while the engine runs (the command line
    loads the report's template there). Raises :class:`ScenarioError` for bad input,
    :class:`EngineMissing` without the engine and ``KeyboardInterrupt`` when interrupted. A run
    that would exceed the machine is refused before it starts (:class:`ResourceError`,
    :mod:`cnsim.budget`) unless ``force``.
    """
    if progress is not None and not callable(progress):  # it is first called a tenth of a second into the run
        raise ScenarioError(f"progress: must be a function progress(sim_ps, total_ps) (given {format_value(progress)})")
    scen = prepare(scenario, set, seed, duration)
    budget.check(scen.core_config(), force=force)
    core = engine()
    raw, wall = _simulate(core, scen, progress, meanwhile)
    loop = float(raw["loop_s"])
    after = _window_after_the_end(scen, raw)
    if after is not None:
        # the scenario names the window measured, so that what is computed from it (the max-min
        # reference's demands, the figures' window) covers the same span; the window is measured
        # as the run goes, so when its start moves the same deterministic run is made again
        window, again = after
        scen = scen.copy().set("metrics.window", [f"{window[0]}ps", f"{window[1]}ps"])
        if again:
            raw, more = _simulate(core, scen, progress, None)
            loop += float(raw["loop_s"])
            wall += more
    from .results import Result  # loaded by _simulate while the engine ran

    result = Result.from_engine(scen, raw)
    # the simulated time run (a run to completion may end before its cap) and its events: every
    # engine summary holds both, as it holds the frames delivered
    sim_s = float(result.summary["duration_s"])
    events = float(result.summary["engine"]["events"])
    frames = float(result.summary["conservation"]["delivered"])
    result.manifest = {
        "scenario": scen.id,
        "source": scen.source,
        "wall_s": wall,
        "sim_s": sim_s,
        "sim_s_per_wall_s": sim_s / wall if wall > 0 else None,
        "events": events,
        "events_per_s": events / wall if wall > 0 else None,
        # the event loop alone: the engine's event rate, without its build from the core config
        # and its summary, which cost milliseconds per thousand hosts whatever the run's length
        "loop_s": loop,
        "loop_events_per_s": events / loop if loop > 0 else None,
        "frames_delivered": frames,
        "frames_per_s": frames / wall if wall > 0 else None,
        "peak_rss_bytes": _peak_rss_bytes(),
        "versions": _versions(core),
        "host": socket.gethostname(),
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
        "timestamp": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    return result


def _simulate(
    core: Any, scen: Scenario, progress: Progress | None, meanwhile: Callable[[], object] | None
) -> tuple[Any, float]:
    """Run the engine on ``scen`` in a worker thread (Ctrl-C interrupts it): its raw result and
    the engine's wall time, its build and its run (the engine's ``run_s``, which leaves out its
    waits for the GIL while this thread imports what the results need)."""
    started = time.perf_counter()
    try:
        sim = core.Simulation(scen.core_config())
    except Exception as err:
        raise _front_end_error(core, scen, err) from None
    built = time.perf_counter() - started
    total_ps = scen.resolved.doc.duration
    box: dict[str, Any] = {}
    done = threading.Event()

    def work() -> None:
        try:
            box["result"] = sim.run()
        except BaseException as err:  # handed to the calling thread
            box["error"] = err
        finally:
            done.set()

    worker = threading.Thread(target=work, name="cnsim-engine", daemon=True)
    worker.start()
    # Wait on an Event, not on Thread.join: a join interrupted by Ctrl-C can make later joins
    # return while the engine thread still runs, and the interpreter then aborts at exit (134).
    try:
        # what the results need (numpy: a tenth of a short run's start-up) is imported while the
        # engine runs, on another core
        from . import results  # noqa: F401

        if meanwhile is not None:
            meanwhile()
        while not done.wait(_POLL_S):
            if progress is not None:
                progress(int(sim.progress_ps()), total_ps)
    except BaseException:  # Ctrl-C, or what this thread did meanwhile failed: stop the engine
        sim.interrupt()
        _wait_through_interrupts(done)
        raise
    if "error" in box:
        failure: BaseException = box["error"]
        if isinstance(failure, core.Interrupted):
            raise KeyboardInterrupt from None
        raise _front_end_error(core, scen, failure) from None
    return box["result"], built + float(box["result"]["run_s"])


def _window_after_the_end(scen: Scenario, raw: Any) -> tuple[tuple[int, int], bool] | None:
    """The window a run to completion that ended before its cap measured or needs (contract
    "Measurement window", applied to the end of the run), if it differs from the one resolved
    for the cap, and whether the run must be made again for it: the engine measured the resolved
    window clipped to the end, which is the one needed unless the rule moves its start."""
    doc = scen.resolved.doc
    if not doc.traffic.run_to_completion:  # only such a run can end early: no summary parse
        return None
    end_ps = _end_ps(raw)
    if end_ps is None or end_ps >= doc.duration:
        return None
    wanted, _ = measurement_window(doc, end_ps)
    measured = scen.resolved.window_ps
    if wanted == measured:
        return None
    return wanted, (measured[0], min(measured[1], end_ps)) != wanted


def _end_ps(raw: Any) -> int | None:
    """The simulated end of a raw engine result, ps."""
    summary = raw.get("summary") if isinstance(raw, dict) else None
    doc = json.loads(summary) if isinstance(summary, (str, bytes)) else summary
    end_s = doc.get("duration_s") if isinstance(doc, dict) else None
    return None if end_s is None else round(float(end_s) * PS_PER_S)


def _wait_through_interrupts(done: threading.Event) -> None:
    """Wait for the engine thread to stop, even through further Ctrl-C presses."""
    while True:
        try:
            if done.wait(_POLL_S):
                return
        except KeyboardInterrupt:
            continue
