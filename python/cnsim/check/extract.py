"""Metric extraction: a named metric of targets.md, in a window, from a run folder or a scenario.

The registry :data:`METRICS` maps a metric name (``hot_port``, ``q_std``, ``flow:2->1``, ...) to a
:class:`MetricDef`: what it measures, where it comes from and how. Three sources:

* ``series`` — computed here from the run's saved series (:mod:`cnsim.signals`) in any §A
  window (``all``, ``ss``, ``tr``, ``rec``, ``last100``, ``after``, ``main`` or ``[t0, t1]``);
* ``summary`` — read from summary.json; only for the run's measurement window ``main`` (the engine
  computes it there, exactly);
* ``scenario`` — needs no run: the resolved scenario's parameters, its max-min fair shares
  (:mod:`cnsim.fairness`) and the BCN loop's linear figures (:mod:`cnsim.fluid.linear`).

A metric that a run cannot give (a key the engine does not write yet, a flow not recorded, a
window outside the run) raises :class:`MetricUnavailable` with the reason; the check's verdict is
then ``not_run`` — a value is never invented. Metrics whose §A definition samples every 10 us
(``fine = True``) make the planner record their runs with ``metrics.bin = 10us``.
"""

from __future__ import annotations

import fnmatch
import json
import math
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.compute as pc
import pyarrow.parquet as pq

from .. import signals as m
from ..rundir import SCENARIO_FILE, SERIES_DIR, SUMMARY_FILE, reading_series
from ..scenario import Scenario
from ..scenario.hot import hot_span_ps
from ..units import PS_PER_S

__all__ = ["METRICS", "MetricDef", "MetricUnavailable", "RunData", "ScenarioData", "Signal", "hot_times", "metric_def"]

#: the sampling interval of §A's "std" and oscillation period
FINE_BIN = "10us"

#: a throughput drawn in a failed check's figure is averaged over bins at least this wide (s):
#: in the 10 us bins of a fine run a port carries one frame or two (1.2 or 2.4 Gb/s at a 2 Gb/s
#: hotspot with 1500 B frames), and the line would fill the band between them
FIGURE_RATE_BIN_S = 1e-3


class MetricUnavailable(Exception):
    """The metric cannot be computed from what the run recorded (the reason is the message)."""


@dataclass
class Signal:
    """A time series to draw in a failed check's figure."""

    t: np.ndarray
    v: np.ndarray
    ylabel: str


Value = float | np.ndarray


@dataclass(frozen=True)
class MetricDef:
    """One metric: its unit, its source and its function."""

    name: str
    unit: str
    doc: str
    source: str  # "series" | "summary" | "scenario"
    fn: Callable[..., Value]
    fine: bool = False  # needs 10 us samples (§A)
    signal: Callable[..., Signal | None] | None = None
    pattern: bool = False  # the name is a prefix "<name>:<argument>"


# ------------------------------------------------------------------------------------------
# Hotspot times and windows of a resolved scenario
# ------------------------------------------------------------------------------------------


def hot_times(scen: Scenario) -> tuple[float | None, float | None]:
    """(t_on, t_off) of §A in seconds (:func:`cnsim.scenario.resolution.hot_span_ps`)."""
    t_on, t_off = hot_span_ps(scen.resolved.doc)
    s = float(PS_PER_S)
    return (None if t_on is None else t_on / s), (None if t_off is None else t_off / s)


# ------------------------------------------------------------------------------------------
# Scenario-level data (no run needed)
# ------------------------------------------------------------------------------------------


class ScenarioData:
    """A resolved scenario, for ``scenario`` metrics."""

    def __init__(self, scen: Scenario) -> None:
        self.scenario = scen

    def param(self, dotted: str) -> float:
        doc = tomllib.loads(self.scenario.to_toml())
        cur: Any = doc
        for part in dotted.split("."):
            if not isinstance(cur, dict) or part not in cur:
                raise MetricUnavailable(f"param:{dotted}: the resolved scenario has no such key")
            cur = cur[part]
        if isinstance(cur, bool) or not isinstance(cur, (int, float)):
            raise MetricUnavailable(f"param:{dotted}: the resolved value {cur!r} is not a number")
        return float(cur)


# ------------------------------------------------------------------------------------------
# Run folders
# ------------------------------------------------------------------------------------------


#: what to do with a series file damaged inside (rundir.reading_series)
_SERIES_FIX = "Delete its run folder: `cnsim check` (or `cnsim reproduce`) runs it again."


class RunData(ScenarioData):
    """A run folder: its summary, resolved scenario, §A windows and series (read lazily)."""

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)
        try:
            self.summary: dict[str, Any] = json.loads((self.folder / SUMMARY_FILE).read_text(encoding="utf-8"))
            doc = tomllib.loads((self.folder / SCENARIO_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError) as err:
            raise MetricUnavailable(f"{self.folder.name}: not a complete run folder ({err})") from None
        super().__init__(Scenario(doc, str(self.summary.get("scenario") or self.folder.name), str(self.folder)))
        self.duration = float(self.summary.get("duration_s") or self.scenario.resolved.doc.duration / PS_PER_S)
        self.t_on, self.t_off = hot_times(self.scenario)
        self.windows = m.named_windows(self.t_on, self.t_off, self.duration)
        main = self.summary.get("window_s")
        if isinstance(main, list) and len(main) == 2:
            self.windows["main"] = (float(main[0]), float(main[1]))
        self._names: dict[str, list[str]] = {}
        self._entities: dict[tuple[str, str], tuple[np.ndarray, dict[str, np.ndarray]]] = {}

    # ---- lookups ---------------------------------------------------------------------------

    def window(self, spec: str | tuple[float, float]) -> tuple[float, float]:
        if isinstance(spec, tuple):
            if spec[1] > self.duration + 1e-12:
                raise MetricUnavailable(f"window [{spec[0]:g}, {spec[1]:g}] s ends after the run ({self.duration:g} s)")
            return spec
        if spec not in self.windows:
            why = "the run has no hotspot or time-limited overload" if self.t_on is None else "it is empty inside the run"
            raise MetricUnavailable(f"window {spec!r} does not exist in this run ({why})")
        return self.windows[spec]

    def _path(self, kind: str) -> Path:
        path = self.folder / SERIES_DIR / f"{kind}.parquet"
        if not path.is_file():
            raise MetricUnavailable(f"the run recorded no {kind} series")
        return path

    def _entity_column(self, kind: str) -> str:
        """The name of a series kind's entity column (entity, queue or flow)."""
        with reading_series(self._path(kind), _SERIES_FIX):
            return str(pq.read_schema(self._path(kind)).names[1])

    def release_series(self) -> None:
        """Drop the series read so far (a full check reads hundreds of runs with 10 us bins);
        the summary and the scenario stay."""
        self._names.clear()
        self._entities.clear()

    def names(self, kind: str) -> list[str]:
        """The entities of one series kind (only the entity column is read)."""
        if kind not in self._names:
            with reading_series(self._path(kind), _SERIES_FIX):
                column = pq.read_table(self._path(kind), columns=[self._entity_column(kind)]).column(0)
            self._names[kind] = [str(n) for n in pc.unique(column).to_pylist()]
        return list(self._names[kind])

    def entity(self, kind: str, name: str, column: str) -> tuple[np.ndarray, np.ndarray]:
        """(t, values) of one entity's column. Only that entity's rows are read (the series are
        entity-major, so the row-group statistics skip the rest): series with 10 us bins are
        large, and a check may read hundreds of runs."""
        key = (kind, name)
        if key not in self._entities:
            with reading_series(self._path(kind), _SERIES_FIX):
                rows = pq.read_table(self._path(kind), filters=[(self._entity_column(kind), "==", name)])
            if rows.num_rows == 0:
                hint = " (per-flow series are recorded for the flows metrics.per_flow selects)" if name.startswith("flow:") else ""
                raise MetricUnavailable(f"{kind} series has no entity {name!r}{hint}")
            self._entities[key] = (rows.column("t_s").to_numpy(),
                                   {c: rows.column(c).to_numpy(zero_copy_only=False) for c in rows.column_names[2:]})
        t, cols = self._entities[key]
        return t, cols[column]

    def entities(self, kind: str, pattern: str) -> list[str]:
        found = sorted((e for e in self.names(kind) if fnmatch.fnmatchcase(e, pattern)), key=_natural)
        if not found:
            raise MetricUnavailable(f"{kind} series has no entity matching {pattern!r}")
        return found

    @property
    def hot_port(self) -> str:
        return self.scenario.resolved.hot_port

    def queue_name(self, args: dict[str, Any]) -> str:
        return str(args.get("queue") or self.hot_port)

    def summary_value(self, dotted: str) -> float:
        cur: Any = self.summary
        for part in dotted.split("."):
            if not isinstance(cur, dict) or part not in cur:
                raise MetricUnavailable(f"summary.json has no key {dotted!r} (not produced by the engine yet)")
            cur = cur[part]
        if cur is None:
            raise MetricUnavailable(f"summary.json key {dotted!r} is null in this run")
        if isinstance(cur, bool) or not isinstance(cur, (int, float)):
            raise MetricUnavailable(f"summary.json key {dotted!r} is not a number ({cur!r})")
        return float(cur)


def _natural(name: str) -> list[Any]:
    import re

    return [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", name)]


# ------------------------------------------------------------------------------------------
# Metric functions: fn(run, window, args, arg) → float | array
# ------------------------------------------------------------------------------------------


def _thr(entity_of: Callable[[RunData, str], str]) -> Callable[..., Value]:
    def fn(run: RunData, window: tuple[float, float], args: dict[str, Any], arg: str) -> Value:
        name = entity_of(run, arg)
        if any(c in name for c in "*?["):
            ents = run.entities("throughput", name)
            return np.array([m.window_mean(*run.entity("throughput", e, "gbps"), window) for e in ents])
        return m.window_mean(*run.entity("throughput", name, "gbps"), window)

    return fn


def _thr_signal(entity_of: Callable[[RunData, str], str]) -> Callable[..., Signal | None]:
    def fn(run: RunData, args: dict[str, Any], arg: str) -> Signal | None:
        name = entity_of(run, arg)
        if any(c in name for c in "*?["):
            return None
        t, v = run.entity("throughput", name, "gbps")
        coarse_t, coarse_v = m.rebin(t, v, FIGURE_RATE_BIN_S)
        if coarse_t.size == t.size:
            return Signal(t, v, f"{name} (Gb/s)")
        return Signal(coarse_t, coarse_v, f"{name} (Gb/s, {FIGURE_RATE_BIN_S * 1e3:g} ms means)")

    return fn


def _queue(run: RunData, args: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    return run.entity("queue", run.queue_name(args), "bytes")


def _queue_signal(run: RunData, args: dict[str, Any], arg: str) -> Signal:
    t, v = _queue(run, args)
    return Signal(t, v / 1e3, f"queue {run.queue_name(args)} (KB)")


def _q_stat(stat: Callable[[np.ndarray], float]) -> Callable[..., Value]:
    def fn(run: RunData, window: tuple[float, float], args: dict[str, Any], arg: str) -> Value:
        _, v = m.samples_in(*_queue(run, args), window)
        if v.size == 0:
            raise MetricUnavailable("no queue samples inside the window")
        return stat(v)

    return fn


def _q_max(run: RunData, window: tuple[float, float], args: dict[str, Any], arg: str) -> Value:
    """The largest ``bytes_max`` of the bins that overlap the window: the sample at t is the
    maximum over the bin (t - width, t], so the bin that ends at the window's start is outside it
    and one that ends after its end, but starts before it, is inside."""
    t, v = run.entity("queue", run.queue_name(args), "bytes_max")
    inside = v[m.bins_overlapping(t, window)]
    if inside.size == 0:
        raise MetricUnavailable("no queue samples inside the window")
    return float(np.max(inside))


def _count(kind: str, entity: str, column: str) -> Callable[..., Value]:
    def fn(run: RunData, window: tuple[float, float], args: dict[str, Any], arg: str) -> Value:
        return m.window_sum(*run.entity(kind, entity, column), window)

    return fn


def _count_signal(kind: str, entity: str, column: str, label: str) -> Callable[..., Signal]:
    def fn(run: RunData, args: dict[str, Any], arg: str) -> Signal:
        t, v = run.entity(kind, entity, column)
        return Signal(t, np.cumsum(v), f"cumulative {label}")

    return fn


def _cm_mbps(run: RunData, window: tuple[float, float], args: dict[str, Any], arg: str) -> Value:
    bits = m.window_sum(*run.entity("cm", "all", "bytes"), window) * 8
    return bits / (window[1] - window[0]) / 1e6


def _paused_all(run: RunData, window: tuple[float, float], args: dict[str, Any], arg: str) -> Value:
    return m.window_mean(*run.entity("pause", "all", "fraction"), window)


def _cv(run: RunData, window: tuple[float, float], args: dict[str, Any], arg: str) -> Value:
    """Mean over the matching flows of the time CV of their throughput in 1 ms bins (T-Q08)."""
    width = float(args.get("bin_s", 1e-3))
    out = []
    for e in run.entities("throughput", f"flow:{arg}"):
        t, v = m.rebin(*run.entity("throughput", e, "gbps"), width)
        mask = (t - width >= window[0] - 1e-12) & (t <= window[1] + 1e-12)
        out.append(m.time_cv(v[mask]))
    return float(np.mean(out))


def _period(run: RunData, window: tuple[float, float], args: dict[str, Any], arg: str) -> Value:
    t, v = m.samples_in(*_queue(run, args), window)
    return m.spectral_period(t, v)


def _onset(run: RunData, window: tuple[float, float], args: dict[str, Any], arg: str) -> Value:
    if run.t_on is None:
        raise MetricUnavailable("onset: the run has no hotspot")
    t, v = _queue(run, args)
    return m.first_peak_time(t, v, run.t_on, window[1], float(args.get("drop", 0.2)))


def _recovery(run: RunData, window: tuple[float, float], args: dict[str, Any], arg: str) -> Value:
    """Time after t_off until the former hot port (or ``entity``) carries ``level`` Gb/s again.

    "Again" means for good: from there on at least ``floor`` (0.9) × level for ``hold`` (10 ms), so
    the line-rate drain of a backlog right after the hotspot does not count as recovery. inf when
    that does not happen inside the window (the decks' recovery checks use ``after``: up to the
    end of the run, so a slow recovery has a time rather than W_rec's "never").
    """
    if run.t_off is None:
        raise MetricUnavailable("recovery: the run has no hotspot end")
    if "level" not in args:
        raise MetricUnavailable("recovery: the check gives no level (args.level, Gb/s)")
    entity = str(args.get("entity") or f"port:{run.hot_port}")
    t, v = run.entity("throughput", entity, "gbps")
    t, v = m.rebin(t, v, float(args.get("bin_s", 1e-3)))
    t, v = t[t <= window[1] + 1e-9], v[t <= window[1] + 1e-9]
    return m.sustained_time(t, v, run.t_off, float(args["level"]), float(args.get("hold", 0.01)),
                            float(args.get("floor", 0.9)))


def _reach(run: RunData, window: tuple[float, float], args: dict[str, Any], arg: str) -> Value:
    """Time after t_on until the aggregate (or ``entity``) is back at ``fraction`` of its mean in ``window``.

    The clock runs from the hotspot start to the first bin at or above the level after the signal
    first fell below it; 0 when it never fell below (no loss to recover from).
    """
    if run.t_on is None:
        raise MetricUnavailable("reach: the run has no hotspot")
    entity = str(args.get("entity") or "aggregate")
    t, v = run.entity("throughput", entity, "gbps")
    level = float(args.get("fraction", 0.9)) * m.window_mean(t, v, window)
    t, v = m.rebin(t, v, float(args.get("bin_s", 1e-3)))
    dip = m.crossing_time(t, v, run.t_on, level, above=False)
    if not math.isfinite(dip) or run.t_on + dip > window[1]:
        return 0.0
    return dip + m.crossing_time(t, v, run.t_on + dip, level)


def _settle(run: RunData, window: tuple[float, float], args: dict[str, Any], arg: str) -> Value:
    """Time from the window start until q stays within ±tol of Qeq (or ``target``) for ``hold`` s."""
    target = float(args["target"]) if "target" in args else float(run.scenario.resolved.cm.get("qeq") or math.nan)
    if not math.isfinite(target):
        raise MetricUnavailable("settle: the scheme has no qeq and the check gives no target")
    t, v = _queue(run, args)
    t, v = m.samples_in(t, v, window)
    return m.settle_time(t, v, window[0], target, float(args.get("tol", 0.2)), float(args.get("hold", 0.005)))


def _q_slope(run: RunData, window: tuple[float, float], args: dict[str, Any], arg: str) -> Value:
    t, v = m.samples_in(*_queue(run, args), window)
    if v.size < 2:
        raise MetricUnavailable("fewer than two queue samples inside the window")
    return m.linear_slope(t, v)


def _p2p(run: RunData, window: tuple[float, float], args: dict[str, Any], arg: str) -> Value:
    _, v = m.samples_in(*_queue(run, args), window)
    if v.size == 0:
        raise MetricUnavailable("no queue samples inside the window")
    return float(np.max(v) - np.min(v))


def _unconverged_epochs(run: RunData, window: tuple[float, float], args: dict[str, Any], arg: str) -> Value:
    """T-Z23: hotspot epochs whose hot queue has not converged at the epoch's end.

    An epoch (each hotspot of the scenario) is unconverged when the mean of its queue over the
    last 10 ms is outside [0.75, 1.25]·Qeq, or the least-squares slope over its last 20 ms exceeds
    10 % of Qeq per 10 ms.
    """
    qeq = float(run.scenario.resolved.cm.get("qeq") or math.nan)
    if not math.isfinite(qeq):
        raise MetricUnavailable("epochs: the scheme has no qeq")
    net = run.scenario.resolved.network
    if net is None:  # only a scenario that does not resolve has none
        raise MetricUnavailable("epochs: the scenario has no network")
    count = 0
    for h in run.scenario.resolved.doc.hotspots:
        t1 = h.end / PS_PER_S
        if t1 > run.duration + 1e-12:
            raise MetricUnavailable("epochs: a hotspot ends after the run")
        port = net.feeding_port(h.node)
        t, v = run.entity("queue", port, "bytes")
        _, last10 = m.samples_in(t, v, (t1 - 0.010, t1))
        ts, last20 = m.samples_in(t, v, (t1 - 0.020, t1))
        mean = float(np.mean(last10)) if last10.size else math.nan
        slope = abs(m.linear_slope(ts, last20)) * 0.010
        if not (0.75 * qeq <= mean <= 1.25 * qeq) or slope > 0.10 * qeq:
            count += 1
    return float(count)


def _summary(run: RunData, window: tuple[float, float], args: dict[str, Any], arg: str) -> Value:
    return run.summary_value(arg)


def _summary_key(key: str) -> Callable[..., Value]:
    def fn(run: RunData, window: tuple[float, float], args: dict[str, Any], arg: str) -> Value:
        return run.summary_value(key)

    return fn


# ---- scenario metrics: fn(data, args, arg) -------------------------------------------------


def _param(data: ScenarioData, args: dict[str, Any], arg: str) -> Value:
    return float(data.param(arg))


def _fair(data: ScenarioData, args: dict[str, Any], arg: str) -> Value:
    """Max-min fair share over the scenario's window, or over ``args.window`` = [t0, t1] s."""
    from ..fairness import fair_shares

    scen = data.scenario
    if "window" in args:
        t0, t1 = (float(x) for x in args["window"])
        scen = scen.copy().set("metrics.window", [f"{t0!r}s", f"{t1!r}s"])
    shares = fair_shares(scen.resolved)
    if shares is None:
        raise MetricUnavailable("fair: no reference allocation for this scenario")
    if any(c in arg for c in "*?["):
        # a glob over "<src>-><dst>": one share per matching flow, in natural order (as `flow:`)
        names = sorted((f"{s}->{d}" for s, d in shares if fnmatch.fnmatchcase(f"{s}->{d}", arg)), key=_natural)
        if not names:
            raise MetricUnavailable(f"fair:{arg}: no flow of the scenario matches")
        return np.array([shares[tuple(n.split("->", 1))] / 1e9 for n in names])  # type: ignore[index]
    src, _, dst = arg.partition("->")
    if (src, dst) not in shares:
        raise MetricUnavailable(f"fair:{arg}: no such flow in the scenario")
    return shares[(src, dst)] / 1e9


def _fluid(data: ScenarioData, args: dict[str, Any], arg: str) -> Value:
    from ..fluid.linear import bcn_linear
    from ..fluid.params import fluid_params

    out = bcn_linear(fluid_params(data.scenario))
    value = out.get(arg)
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        raise MetricUnavailable(f"fluid:{arg}: the linear BCN model has no numeric figure {arg!r}")
    return float(value)


def _lag_delay(data: ScenarioData | None, args: dict[str, Any], arg: str) -> Value:
    return m.lag_delay_ultimate_gain(float(args.get("tau_over_t", 1.0)))


def _hot(run: RunData, arg: str) -> str:
    return f"port:{run.hot_port}"


_Q = _queue_signal
METRICS: dict[str, MetricDef] = {
    d.name: d
    for d in [
        MetricDef("aggregate", "Gb/s", "throughput delivered to all sinks", "series",
                  _thr(lambda r, a: "aggregate"), signal=_thr_signal(lambda r, a: "aggregate")),
        MetricDef("hot_port", "Gb/s", "throughput delivered by the hot port (metrics.hot_port)", "series",
                  _thr(_hot), signal=_thr_signal(_hot)),
        MetricDef("node", "Gb/s", "throughput delivered to node <name>", "series",
                  _thr(lambda r, a: f"node:{a}"), signal=_thr_signal(lambda r, a: f"node:{a}"), pattern=True),
        MetricDef("flow", "Gb/s", "throughput of flow <src>-><dst> (glob patterns give one value per flow)", "series",
                  _thr(lambda r, a: f"flow:{a}"), signal=_thr_signal(lambda r, a: f"flow:{a}"), pattern=True),
        MetricDef("port", "Gb/s", "throughput of port <switch>/<neighbour>", "series",
                  _thr(lambda r, a: f"port:{a}"), signal=_thr_signal(lambda r, a: f"port:{a}"), pattern=True),
        MetricDef("q_mean", "B", "mean of the hot queue (or args.queue), samples in the window", "series",
                  _q_stat(lambda v: float(np.mean(v))), signal=_Q),
        MetricDef("q_std", "B", "time std of the hot queue sampled every 10 us (§A)", "series",
                  _q_stat(m.time_std), fine=True, signal=_Q),
        MetricDef("q_max", "B", "maximum of the hot queue in the window", "series", _q_max, signal=_Q),
        MetricDef("q_slope", "B/s", "least-squares slope of the hot queue in the window (growth trend)", "series",
                  _q_slope, signal=_Q),
        MetricDef("q_p2p", "B", "peak-to-trough of the hot queue in the window (10 us samples)", "series",
                  _p2p, fine=True, signal=_Q),
        MetricDef("period", "s", "dominant oscillation period of the hot queue: spectral peak, 10 us samples (§A)",
                  "series", _period, fine=True, signal=_Q),
        MetricDef("onset", "s", "time from the hotspot start to the first hot-queue peak (window end bounds the search)",
                  "series", _onset, fine=True, signal=_Q),
        MetricDef("settle", "s", "time from the window start until q stays within ±tol·Qeq of Qeq for hold s",
                  "series", _settle, fine=True, signal=_Q),
        MetricDef("recovery", "s", "time after the hotspot until the former hot port (args.entity) carries args.level Gb/s for good (10 ms at >= 90 %)",
                  "series", _recovery, signal=_thr_signal(_hot)),
        MetricDef("reach", "s", "time after the hotspot start until the aggregate reaches args.fraction of its window mean",
                  "series", _reach, signal=_thr_signal(lambda r, a: "aggregate")),
        MetricDef("epochs_unconverged", "epochs", "sweeping-hotspot epochs whose queue has not converged (T-Z23)",
                  "series", _unconverged_epochs),
        MetricDef("drops", "frames", "frames dropped inside the network in the window", "series",
                  _count("drops", "network", "frames"), signal=_count_signal("drops", "network", "frames", "network drops (frames)")),
        MetricDef("source_drops", "frames", "frames refused by a full NIC ingress buffer in the window", "series",
                  _count("drops", "source", "frames"), signal=_count_signal("drops", "source", "frames", "source drops (frames)")),
        MetricDef("cm_mbps", "Mb/s", "bits/s of control frames in the window", "series", _cm_mbps,
                  signal=_count_signal("cm", "all", "bytes", "CM bytes")),
        MetricDef("paused_all", "fraction", "paused share of every transmitter in the window", "series", _paused_all),
        MetricDef("cv", "1", "mean over flows <glob> of the time CV of their throughput in 1 ms bins", "series", _cv,
                  pattern=True),
        MetricDef("summary", "", "a number of summary.json by dotted key (the run's measurement window)", "summary",
                  _summary, pattern=True),
        MetricDef("paused", "fraction", "% time paused of §A (links paused at least once), summary paused_fraction",
                  "summary", _summary_key("paused_fraction")),
        MetricDef("underrun", "fraction", "share of the window the hot port idles while hot traffic is offered",
                  "summary", _summary_key("underrun")),
        MetricDef("fct_mean_ms", "ms", "mean flow completion time of completed flows", "summary",
                  _summary_key("fct_ms.mean")),
        MetricDef("fct_incomplete", "flows", "flows that never complete", "summary", _summary_key("fct_ms.incomplete")),
        MetricDef("param", "", "a resolved scenario parameter by dotted key (base units)", "scenario", _param, pattern=True),
        MetricDef("fair", "Gb/s", "max-min fair share of flow <src>-><dst> (water-filling, cnsim.fairness) over the window or args.window; a glob gives one share per flow", "scenario",
                  _fair, pattern=True),
        MetricDef("fluid", "", "a figure of the linear BCN model of the scenario (cnsim.fluid.linear.bcn_linear)",
                  "scenario", _fluid, pattern=True),
        MetricDef("lag_delay_ku", "1", "ultimate gain of K e^(-s tau)/(1+sT) at args.tau_over_t (T-Q25)", "scenario",
                  _lag_delay),
    ]
}


def metric_def(name: str) -> tuple[MetricDef, str]:
    """(definition, argument) of a metric name; KeyError for an unknown one."""
    head, sep, arg = name.partition(":")
    d = METRICS.get(head)
    if d is None or d.pattern != bool(sep) or (sep and not arg):
        raise KeyError(name)
    return d, arg
