"""Smoke tests against the real engine (skipped when cnsim._core is not built).

The lead adds the end-to-end checks; these only check that the Python front and the engine
agree on the interface of docs/core-config.md.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("cnsim._core")

import cnsim  # noqa: E402
from cnsim.results import SERIES_KINDS  # noqa: E402


def test_engine_accepts_every_catalog_entry_as_lowered() -> None:
    from cnsim import _core

    for sid in cnsim.scenarios():
        _core.Simulation(cnsim.load(sid).core_json())  # raises ValueError if refused


def test_short_run_summary_and_series(tmp_path: Path) -> None:
    r = cnsim.run("kd-symmetric-single-hs", duration="20ms")
    s = r.summary
    for key in ("scenario", "scheme", "seed", "duration_s", "window_s", "throughput_gbps", "queue_bytes", "drops", "fairness", "engine"):
        assert key in s
    assert set(r.kinds) <= set(SERIES_KINDS)
    assert r.series("throughput").num_rows > 0
    assert r.manifest["frames_delivered"] == s["conservation"]["delivered"] > 0
    # the wall time is this run's: it holds the event loop's and is not a clock reading
    assert 0 < r.manifest["loop_s"] <= r.manifest["wall_s"] < 60
    assert r.manifest["sim_s_per_wall_s"] == r.manifest["sim_s"] / r.manifest["wall_s"] and r.manifest["sim_s"] == 0.02
    out = r.save(tmp_path / "run", plots=False)
    assert json.loads((out / "summary.json").read_text())["scenario"] == "kd-symmetric-single-hs"


def test_the_engines_wall_time_leaves_out_what_the_caller_does_meanwhile() -> None:
    """Issue 14: `cnsim run` imports what the results need while the engine runs (on another
    core), so a short run's start-up overlaps its simulation; the manifest's wall time stays the
    engine's own, even when the calling thread holds the GIL for longer than the run lasts."""
    calls: list[float] = []

    def busy() -> None:
        started = time.perf_counter()
        while time.perf_counter() - started < 0.3:  # pure Python: holds the GIL
            pass
        calls.append(time.perf_counter() - started)

    r = cnsim.run("kd-symmetric-single-hs", duration="1ms", meanwhile=busy)
    assert len(calls) == 1
    assert 0 < r.manifest["loop_s"] <= r.manifest["wall_s"] < 0.3 <= calls[0]


def test_a_failure_meanwhile_stops_the_engine_before_it_is_raised() -> None:
    import threading

    def failing() -> None:
        raise RuntimeError("the template could not be read")

    with pytest.raises(RuntimeError, match="template"):
        cnsim.run("kd-symmetric-single-hs", duration="2s", meanwhile=failing)
    assert not [t for t in threading.enumerate() if t.name == "cnsim-engine"]


def test_the_runner_leaves_numpy_to_the_engines_run() -> None:
    """What the results need (numpy: a tenth of a short run's start-up) is imported while the
    engine runs, so importing the runner and resolving a scenario must not import it."""
    code = (
        "import sys\n"
        "from cnsim.runner import prepare\n"
        "prepare('kd-symmetric-single-hs').core_config()\n"
        "assert 'numpy' not in sys.modules, 'numpy was imported before the engine ran'\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
