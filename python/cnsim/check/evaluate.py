"""Verdicts: each check's measures from its runs, its conditions, and pass | fail | not_run.

A measure's value has one entry per selected point of its run set (in the run set's point order),
the seeds of a point combined by the measure's rule (``mean`` as §A asks, or ``max``/``min`` for
"every run" checks); a glob metric adds an axis of entities. A check is

* ``not_run`` when it is pending, a run it needs is missing or failed, or a metric cannot be
  computed from what the runs recorded (the reason says which) — never a made-up value;
* ``pass`` when every condition holds, else ``fail`` (the reason lists the conditions that fail).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..runner import prepare
from ..runtask import RunTask
from ..signals import jain
from .condition import ConditionError
from .extract import MetricUnavailable, RunData, ScenarioData, metric_def
from .plan import Plan
from .spec import Check, Deck, Measure

__all__ = ["FAIL", "NOT_RUN", "PASS", "Evaluator", "MeasureValue", "Verdict"]

PASS, FAIL, NOT_RUN = "pass", "fail", "not_run"


@dataclass
class MeasureValue:
    """A measure's value with the points and run folders it came from."""

    name: str
    value: np.ndarray
    points: list[dict[str, Any]]
    runs: list[list[str]]  # per point: the run ids of its seeds


@dataclass
class Verdict:
    check: Check
    verdict: str
    reason: str = ""
    values: dict[str, MeasureValue] = field(default_factory=dict)

    @property
    def runs(self) -> list[str]:
        ids = dict.fromkeys(r for v in self.values.values() for point in v.runs for r in point)
        return [f"runs/{r}" for r in ids]

    def measured_text(self) -> str:
        return "; ".join(f"{name} = {format_values(v.value)}" for name, v in self.values.items())


def format_values(value: np.ndarray) -> str:
    """Compact text of a measure: 4 significant digits, lists in brackets."""
    def one(x: float) -> str:
        if math.isnan(x):
            return "nan"
        if math.isinf(x):
            return "never" if x > 0 else "-inf"
        return f"{x:.4g}"

    arr = np.asarray(value, dtype=np.float64)
    if arr.ndim == 0:
        return one(float(arr))
    if arr.ndim == 1:
        return one(float(arr[0])) if arr.size == 1 else "[" + ", ".join(one(float(x)) for x in arr) + "]"
    return "[" + ", ".join(format_values(row) for row in arr) + "]"


_COMBINE: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "mean": lambda a: np.mean(a, axis=0),
    "max": lambda a: np.max(a, axis=0),
    "min": lambda a: np.min(a, axis=0),
}


#: a run's value reduced over its entities (Measure.per_run), before the seeds are combined
_PER_RUN: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "jain": lambda a: np.asarray(jain(a), dtype=np.float64),
}


class Evaluator:
    """Evaluates checks against the runs of a plan under ``runs_dir``."""

    def __init__(self, plan: Plan, runs_dir: Path, decks: list[Deck]) -> None:
        self.plan = plan
        self.decks = {d.name: d for d in decks}
        self.runs_dir = Path(runs_dir)
        self._runs: dict[str, RunData] = {}
        self._scenarios: dict[str, ScenarioData] = {}

    def forget(self) -> None:
        """Drop cached run data (series can be large)."""
        self._runs.clear()

    def release_series(self) -> None:
        """Drop the series of the cached runs, keep their summaries: called after every check,
        so that memory holds the series of one check's runs, not of a whole deck's (a full
        `cnsim check all` ran out of 24 GB with per-deck caching)."""
        for run in self._runs.values():
            run.release_series()

    def run_data(self, run_id: str) -> RunData:
        """The run folder ``runs_dir/<run_id>`` (cached); MetricUnavailable if it has no results."""
        if run_id not in self._runs:
            folder = self.runs_dir / run_id
            if not (folder / "summary.json").is_file():
                error = folder / "error.json"
                if error.is_file():
                    msg = json.loads(error.read_text(encoding="utf-8")).get("error", "failed")
                    raise MetricUnavailable(f"run {run_id} failed: {msg}")
                raise MetricUnavailable(f"run {run_id} has not run")
            self._runs[run_id] = RunData(folder)
        return self._runs[run_id]

    def _scenario(self, task: RunTask) -> ScenarioData:
        key = task.run_id
        if key not in self._scenarios:
            self._scenarios[key] = ScenarioData(prepare(task.base, task.overrides, task.seed))
        return self._scenarios[key]

    def _static_tasks(self, check: Check, m: Measure) -> list[RunTask]:
        """Tasks of a run set that is not in the plan (only scenario metrics use it): seed 1."""
        from ..sweep import expand

        spec = self.decks[check.deck].runs[m.run].spec.with_changes(seeds=[1])
        return expand(spec, str(self.runs_dir))

    def measure(self, check: Check, m: Measure) -> MeasureValue:
        definition, arg = metric_def(m.metric)
        planned = self.plan.sets.get((check.deck, m.run))
        tasks = planned.tasks if planned is not None else self._static_tasks(check, m)
        groups: dict[int, list[RunTask]] = {}
        point_of: dict[int, dict[str, Any]] = {}
        order: list[int] = []
        seen_points: list[dict[str, Any]] = []
        for t in tasks:
            if any(t.params.get(k) != v for k, v in m.where.items()):
                continue
            if t.params not in seen_points:
                seen_points.append(t.params)
            idx = seen_points.index(t.params)
            if idx not in groups:
                groups[idx] = []
                order.append(idx)
                point_of[idx] = t.params
            groups[idx].append(t)
        values: list[np.ndarray] = []
        runs: list[list[str]] = []
        for idx in order:
            group = groups[idx]
            if definition.source == "scenario":
                v = np.asarray(definition.fn(self._scenario(group[0]), m.args, arg), dtype=np.float64)
                values.append(v)
                runs.append([])
                continue
            per_seed = []
            for task in group:
                run = self.run_data(task.run_id)
                window = run.window(m.window)
                value = np.asarray(definition.fn(run, window, m.args, arg), dtype=np.float64)
                per_seed.append(_PER_RUN[m.per_run](value) if m.per_run else value)
            shapes = {p.shape for p in per_seed}
            if len(shapes) > 1:
                raise MetricUnavailable(f"{m.name}: the seeds of a point give different entity sets")
            values.append(_COMBINE[m.seeds](np.stack(per_seed)))
            runs.append([t.run_id for t in group])
        if not values:
            raise MetricUnavailable(f"{m.name}: no run point matches where = {m.where}")
        if len({v.shape for v in values}) > 1:
            raise MetricUnavailable(f"{m.name}: the points give different entity sets")
        return MeasureValue(m.name, np.stack(values), [point_of[i] for i in order], runs)

    def evaluate(self, check: Check) -> Verdict:
        if check.pending:
            return Verdict(check, NOT_RUN, f"pending: {check.pending}")
        values: dict[str, MeasureValue] = {}
        missing: list[str] = []
        for name, m in check.measures.items():
            try:
                values[name] = self.measure(check, m)
            except MetricUnavailable as err:
                missing.append(f"{name}: {err}")
        if missing:
            return Verdict(check, NOT_RUN, "; ".join(missing), values)
        env = {k: v.value for k, v in values.items()}
        failed: list[str] = []
        for cond in check.conditions:
            try:
                holds, _ = cond.evaluate(env)
            except ConditionError as err:
                return Verdict(check, NOT_RUN, f"condition cannot be evaluated: {err}", values)
            if not holds:
                failed.append(cond.text)
        if failed:
            return Verdict(check, FAIL, "does not hold: " + " · ".join(failed), values)
        return Verdict(check, PASS, "", values)
