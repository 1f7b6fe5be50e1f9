"""The scale benchmark (issue 14): the same workload shape at growing sizes, each run for about
the same number of events, to show how the engine's speed holds as the network grows.

The workload is ``scale-ft-2048``'s: 85 % uniform Bernoulli load, 1500 B frames, 10 Gb/s links
of 1 us, partitioned 600 KB switch memory with PAUSE, no congestion management, no hotspot.
16 and 128 hosts hang off one switch; 512 and 2,048 hosts form merged-top two-level fat trees
(radix 32 and 64, d-mod-k routing). Each size runs in a fresh process (so that its peak memory
is its own) for the simulated time the resource estimate (:mod:`cnsim.budget`) expects to take
``events`` events, and reports events/s, delivered frames/s, simulated seconds per wall second,
wall seconds per simulated second, peak memory and its events/s relative to the smallest size,
each for the whole engine run and for its event loop alone (the engine's event rate, without
the build from the config and the summary at the end, which take milliseconds per thousand
hosts whatever the run's length).

On a shared machine one run's speed varies by tens of percent; ``rounds`` runs every size that
many times, the sizes interleaved (so that a slow spell hits all sizes alike), and reports per
size the round of median events/s, with every round's events/s beside it.
"""

from __future__ import annotations

import json
import math
import statistics
import subprocess
import sys
from dataclasses import asdict, dataclass
from typing import Any

from . import budget
from .errors import EngineError, ResourceError
from .units import PS_PER_S

__all__ = ["SIZES", "MAX_HOSTS", "ScalePoint", "scale_document", "check_scale", "run_scale", "StartupRound", "run_startup", "machine", "describe_machine"]

#: the sizes of the scale benchmark (hosts)
SIZES = (16, 128, 512, 2048)
#: the largest size accepted (the physical range of a scenario: at most 65,536 nodes)
MAX_HOSTS = 65_536
BASE = "scale-ft-2048"


#: where Linux describes the caches of the first core: one folder per cache, with its level, type
#: and size (``48K``)
_CACHE_DIR = "/sys/devices/system/cpu/cpu0/cache"
_CACHE_NAMES = {"Data": "d", "Instruction": "i", "Unified": ""}


def _read(path: str) -> str | None:
    """A small text file's content, stripped (``None`` if it cannot be read)."""
    try:
        with open(path, encoding="utf-8") as f:
            return f.read().strip()
    except OSError:
        return None


def _cpu_model(cpuinfo: str = "/proc/cpuinfo") -> str:
    """The CPU's model name (Linux's ``/proc/cpuinfo``, else the platform's processor string)."""
    import platform

    for line in (_read(cpuinfo) or "").splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "model name" and value.strip():
            return value.strip()
    return platform.processor()


def _size_bytes(text: str) -> int | None:
    """``48K``, ``2048K``, ``260M`` or ``1G`` in bytes (binary units, as sysfs writes them)."""
    text = text.strip()
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:].upper(), 1)
    digits = text[:-1] if scale > 1 else text
    return int(digits) * scale if digits.isdigit() else None


def _caches(folder: str = _CACHE_DIR) -> dict[str, int]:
    """The first core's caches by name (``L1d``, ``L1i``, ``L2``, ``L3``) and size in bytes: what a
    core keeps close decides how the engine's speed falls with the network's size. Empty where the
    platform does not say."""
    import os

    caches: dict[str, int] = {}
    try:
        entries = sorted(os.listdir(folder))
    except OSError:
        return caches
    for entry in entries:
        level, kind, size = (_read(os.path.join(folder, entry, name)) for name in ("level", "type", "size"))
        nbytes = _size_bytes(size) if size else None
        if level and kind in _CACHE_NAMES and nbytes:
            caches[f"L{level}{_CACHE_NAMES[kind]}"] = nbytes
    return caches


def machine() -> dict[str, Any]:
    """The machine a benchmark runs on, for its results file: the CPU's model, its cores, the first
    core's caches, physical memory, the platform and the versions of Python and cnsim. The engine's
    speed at 2,048 hosts differs by a quarter between makes of CPU with the same core count
    (docs/performance.md), so a number means little without them."""
    import os
    import platform

    from . import __version__

    return {
        "cpu": _cpu_model(),
        "cores": os.cpu_count(),
        "caches_bytes": _caches(),
        "memory_bytes": budget.physical_memory(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "cnsim": __version__,
    }


def describe_machine(m: dict[str, Any]) -> str:
    """One line of :func:`machine`: ``Intel(R) Xeon(R) Processor, 2 cores, L1d 48 KiB, L2 2.0 MiB, …``."""
    parts = [m.get("cpu") or "unknown CPU", f"{m.get('cores')} cores"]
    parts += [f"{name} {budget.human_bytes(size)}" for name, size in (m.get("caches_bytes") or {}).items()]
    if m.get("memory_bytes"):
        parts.append(f"{budget.human_bytes(m['memory_bytes'])} memory")
    return ", ".join(parts)


@dataclass(frozen=True)
class ScalePoint:
    """One size of the scale benchmark."""

    hosts: int
    topology: str
    sim_s: float
    events: float
    wall_s: float
    events_per_s: float
    frames_per_s: float
    sim_s_per_wall_s: float
    wall_s_per_sim_s: float
    peak_rss_mib: float
    #: events/s over the smallest size's events/s
    ratio: float = 1.0
    #: the event loop alone (the manifest's ``loop_s``): without building the engine from its
    #: config and computing its summary, a fixed cost that grows with the network
    loop_s: float = 0.0
    loop_events_per_s: float = 0.0
    #: loop events/s over the smallest size's
    loop_ratio: float = 1.0
    #: events/s of every round, in run order (the point is the round of median events/s)
    events_per_s_rounds: tuple[float, ...] = ()


def scale_document(hosts: int, duration_s: float | None = None) -> dict[str, Any]:
    """``scale-ft-2048``'s document with the topology for ``hosts`` hosts (and the duration)."""
    import tomllib
    from importlib import resources

    doc = tomllib.loads((resources.files("cnsim") / "scenarios" / f"{BASE}.toml").read_text(encoding="utf-8"))
    if hosts <= 128:
        doc["topology"] = {"kind": "star", "nodes": hosts}
        hot = "S1/1"
    else:
        radix = next((r for r in range(2, 1024, 2) if 2 * (r // 2) ** 2 == hosts), None)
        if radix is None:
            raise ValueError(f"no merged-top two-level fat tree has {hosts} hosts (2·k² for an integer k)")
        doc["topology"] = {"kind": "fat_tree", "fat_tree": {"radix": radix, "levels": 2, "merged_top": True}, "routing": "dmodk"}
        hot = "L0.0/0"
    doc["metrics"] = {"window": "run", "hot_port": hot, "queues": [], "per_flow": "none"}
    doc["description"] = f"scale benchmark: {hosts} hosts"
    if duration_s is not None:
        us = max(math.ceil(duration_s * 1e6), 10)  # whole microseconds, ten whole-ns bins
        doc["duration"] = f"{us}us"
        doc["metrics"]["bin"] = f"{us * 100}ns"
    return doc


def _duration_for(hosts: int, events: float) -> float:
    """Simulated seconds expected to take ``events`` events (from the resource estimate)."""
    from .scenario import Scenario

    scen = Scenario(scale_document(hosts), f"scale-{hosts}", "bench")
    est = budget.estimate(scen.core_config())
    per_s = est.events / (scen.resolved.doc.duration / PS_PER_S)
    return max(events / per_s, 1e-4)


def check_scale(sizes: tuple[int, ...], events: float) -> None:
    """Estimate every size before any of them runs (:func:`cnsim.budget.check`, as each child
    process will): a size the machine cannot hold is refused with :class:`ResourceError` naming
    ``--sizes``, instead of failing after the sizes before it have run."""
    from .scenario import Scenario

    for hosts in sizes:
        scen = Scenario(scale_document(hosts, _duration_for(hosts, events)), f"scale-{hosts}", "bench")
        try:
            budget.check(scen.core_config(), force_hint="give smaller --sizes or fewer --events")
        except ResourceError as err:
            raise ResourceError(f"--sizes: the size of {hosts:,} hosts at about {events:.3g} events: {err}") from None


def _measure(hosts: int, events: float) -> dict[str, Any]:
    """One size in a fresh process (``python -m cnsim.bench DOC``): its manifest."""
    doc = scale_document(hosts, _duration_for(hosts, events))
    proc = subprocess.run([sys.executable, "-m", "cnsim.bench", json.dumps(doc)], capture_output=True, text=True)
    if proc.returncode != 0:
        raise EngineError(f"the scale benchmark at {hosts} hosts failed: {proc.stderr.strip()}")
    manifest: dict[str, Any] = json.loads(proc.stdout)
    return manifest


def _point(hosts: int, m: dict[str, Any]) -> ScalePoint:
    """A size's point from one run's manifest."""
    sim_s, wall = float(m["sim_s"]), float(m["wall_s"])
    return ScalePoint(
        hosts=hosts,
        topology="one switch" if hosts <= 128 else "fat tree (2 lv)",
        sim_s=sim_s,
        events=float(m["events"]),
        wall_s=wall,
        events_per_s=float(m["events_per_s"]),
        frames_per_s=float(m["frames_per_s"]),
        sim_s_per_wall_s=float(m["sim_s_per_wall_s"]),
        wall_s_per_sim_s=wall / sim_s if sim_s > 0 else float("inf"),
        peak_rss_mib=float(m["peak_rss_bytes"]) / 2**20,
        loop_s=float(m["loop_s"]),
        loop_events_per_s=float(m["loop_events_per_s"]),
    )


def run_scale(sizes: tuple[int, ...] = SIZES, events: float = 3e6, rounds: int = 1) -> list[ScalePoint]:
    """Run every size for about ``events`` events, ``rounds`` times with the sizes interleaved;
    per size the round of median events/s (the lower median for an even count). The first size
    is the reference of the ratio."""
    runs: dict[int, list[ScalePoint]] = {h: [] for h in sizes}
    for _ in range(rounds):
        for hosts in sizes:
            runs[hosts].append(_point(hosts, _measure(hosts, events)))
    points: list[ScalePoint] = []
    for hosts in sizes:
        rates = [p.events_per_s for p in runs[hosts]]
        median = next(p for p in runs[hosts] if p.events_per_s == statistics.median_low(rates))
        first = points[0] if points else median
        ratios = {"ratio": median.events_per_s / first.events_per_s, "loop_ratio": median.loop_events_per_s / first.loop_events_per_s}
        points.append(ScalePoint(**{**asdict(median), **ratios, "events_per_s_rounds": tuple(rates)}))
    return points


@dataclass(frozen=True)
class StartupRound:
    """One `cnsim run` of the start-up benchmark, in its own interpreter."""

    #: the whole process, from its launch to its exit
    process_s: float
    #: the engine's part (the run's manifest ``wall_s``)
    engine_s: float
    #: everything else: the interpreter's start, imports, resolution, engine build, summary and
    #: output (``process_s - engine_s``)
    outside_s: float
    #: the process's peak resident memory
    peak_rss_mib: float


#: the start-up benchmark launches the CLI as the ``cnsim`` console script does, with the
#: interpreter and the package of the benchmark itself (not whichever ``cnsim`` is on PATH)
_CLI = "import sys; from cnsim._entry import main; sys.exit(main())"


def run_startup(run_args: list[str], rounds: int, folder: str) -> list[StartupRound]:
    """The start-up benchmark (issue 14: at most 0.3 s outside the engine for a 10 ms run, a
    16-host run under 60 MiB): ``cnsim run RUN_ARGS --no-plots --quiet`` ``rounds`` times, each
    in a fresh interpreter writing its run folder under ``folder``, timed from launch to exit;
    the engine's part is the run's own manifest. Peak memory is the child's (``wait4``), or the
    manifest's where the platform has no ``wait4``."""
    import os
    import time
    from pathlib import Path

    out: list[StartupRound] = []
    for i in range(rounds):
        target = Path(folder) / f"round-{i + 1}"
        argv = [sys.executable, "-c", _CLI, "run", *run_args, "--no-plots", "--quiet", "--out", str(target)]
        log = Path(folder) / f"round-{i + 1}.stderr"  # a file, not a pipe: a child never blocks on it
        with open(log, "wb") as stderr:
            t0 = time.perf_counter()
            proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=stderr)
            rss: int | None = None
            if hasattr(os, "wait4"):
                _, status, usage = os.wait4(proc.pid, 0)
                process_s = time.perf_counter() - t0
                proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here: Popen must not wait
                rss = usage.ru_maxrss * (1 if sys.platform == "darwin" else 1024)
            else:  # pragma: no cover (every platform cnsim is built on has wait4)
                proc.wait()
                process_s = time.perf_counter() - t0
        if proc.returncode != 0:
            err = log.read_text(encoding="utf-8", errors="replace").strip()
            raise EngineError(f"the start-up benchmark's `cnsim run` failed (exit {proc.returncode}): {err}")
        manifest = json.loads((target / "manifest.json").read_text(encoding="utf-8"))
        engine_s = float(manifest["wall_s"])
        peak = rss if rss is not None else int(manifest["peak_rss_bytes"])
        out.append(StartupRound(process_s, engine_s, process_s - engine_s, peak / 2**20))
    return out


def _run_one(doc_json: str) -> None:
    """The child process of one size: run the document, print its manifest as JSON."""
    from .runner import run
    from .scenario import Scenario

    doc = json.loads(doc_json)
    result = run(Scenario(doc, f"scale-{doc['description'].split()[-2]}", "bench"))
    print(json.dumps(result.manifest))


if __name__ == "__main__":  # pragma: no cover (a child of run_scale; tested through it)
    _run_one(sys.argv[1])
