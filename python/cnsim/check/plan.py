"""Which runs the selected checks need, and how ``--quick`` shortens them.

A run set of a deck becomes one sweep spec (:class:`cnsim.sweep.SweepSpec`) when at least one
selected check measures a run metric on it; the sweep machinery expands it into run tasks with
content-hash run ids (:func:`cnsim.sweep.expand`), so a run two checks or two calls share is
simulated once and found again in ``DIR/runs/<run_id>/``.

Added to every needed run set:

* ``seeds``: 1..N — N = 3 (§A: "run at least 3 random seeds"), 1 with ``--quick``, or ``--seeds N``;
* ``metrics.bin = 10us`` when a measure on it needs §A's 10 us sampling (std, period, ...), and
  then ``metrics.per_flow = "none"`` unless a measure reads per-flow series (they would be large);
* with ``--quick`` only: the run set's own ``quick`` overrides, and ``duration`` cut to the end
  of the latest window its checks measure (the simulation is causal, so every value measured in
  those windows is the same as in the full-length run of the same seed). A run set measured over
  the whole run (window ``all``) or from summary.json (``main``, FCT) keeps its full duration.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..errors import ScenarioError
from ..runner import prepare
from ..signals import named_windows
from ..sweep import MAX_RUNS, RunTask, SweepSpec, count_runs, expand
from ..units import PS_PER_S
from .extract import FINE_BIN, hot_times
from .spec import Check, Deck, RunSet

__all__ = ["FULL_SEEDS", "QUICK_SEEDS", "Plan", "PlannedSet", "make_plan", "check_plan_size"]

FULL_SEEDS = 3
QUICK_SEEDS = 1
_MARGIN_S = 0.002
#: metrics that read per-flow series or summary keys derived from them
_NEEDS_FLOWS = {"flow", "cv", "summary"}  # a little past the last window, so its last bin is complete


@dataclass
class PlannedSet:
    """A run set as it will run: its spec (seeds and automatic overrides included) and tasks."""

    deck: str
    name: str
    spec: SweepSpec
    tasks: list[RunTask]
    changes: dict[str, Any] = field(default_factory=dict)  # what the planner added (documented in checks.json)


@dataclass
class Plan:
    sets: dict[tuple[str, str], PlannedSet]
    quick: bool
    seeds: int

    @property
    def tasks(self) -> list[RunTask]:
        """Every task once (first occurrence of each run id)."""
        seen: dict[str, RunTask] = {}
        for s in self.sets.values():
            for t in s.tasks:
                seen.setdefault(t.run_id, t)
        return list(seen.values())


def _latest_end(rs: RunSet, checks: list[Check], overrides: dict[str, Any]) -> float | None:
    """End (s) of the latest window the checks measure on ``rs``; None when the whole run is needed."""
    scen = prepare(rs.spec.base, overrides)
    duration = scen.resolved.doc.duration / PS_PER_S
    t_on, t_off = hot_times(scen)
    windows = named_windows(t_on, t_off, duration)
    latest = 0.0
    for check in checks:
        for m in check.measures.values():
            if m.run != rs.name or m.source == "scenario":
                continue
            if m.source == "summary" or m.window in ("all", "main"):
                return None
            if isinstance(m.window, tuple):
                end = m.window[1]
            elif m.window in windows:
                end = windows[m.window][1]
            else:
                return None  # let the full run say the window is missing
            latest = max(latest, end)
    return latest if 0 < latest + _MARGIN_S < duration else None


def check_plan_size(by_deck: dict[str, Deck], needed: list[tuple[str, str]], n_seeds: int, given: bool) -> int:
    """The runs the needed run sets take at ``n_seeds`` seeds, counted before anything is
    expanded; above :data:`cnsim.sweep.MAX_RUNS` a ScenarioError (naming ``--seeds`` when given)."""
    per_seed = sum(count_runs(by_deck[deck].runs[name].spec.with_changes(seeds=[1])) for deck, name in needed)
    total = per_seed * n_seeds
    if total > MAX_RUNS:
        fits = MAX_RUNS // per_seed
        what = f"--seeds {n_seeds}: " if given else ""
        advice = f"give at most --seeds {fits:,} here, or select fewer checks" if fits >= 1 else "select fewer checks"
        raise ScenarioError(
            f"{what}the selected checks need {total:,} runs ({per_seed:,} points × {n_seeds:,} seeds), more than the "
            f"limit of {MAX_RUNS:,} runs; {advice} (a deck, --only)"
        )
    return total


def make_plan(decks: list[Deck], checks: list[Check], runs_dir: str, quick: bool = False,
              seeds: int | None = None) -> Plan:
    """The run sets ``checks`` need, expanded into tasks under ``runs_dir``."""
    n_seeds = seeds if seeds is not None else (QUICK_SEEDS if quick else FULL_SEEDS)
    by_deck = {d.name: d for d in decks}
    needed = list(dict.fromkeys((c.deck, m.run) for c in checks if not c.pending
                                for m in c.measures.values() if m.source != "scenario"))
    check_plan_size(by_deck, needed, n_seeds, seeds is not None)
    sets: dict[tuple[str, str], PlannedSet] = {}
    for key in needed:
        deck, name = key
        rs = by_deck[deck].runs[name]
        users = [c for c in checks if c.deck == deck and any(m.run == name for m in c.measures.values())]
        changes: dict[str, Any] = {}
        mine = [m for c in users for m in c.measures.values() if m.run == name]
        if any(m.fine for m in mine):
            changes["metrics.bin"] = FINE_BIN
            if "metrics.per_flow" not in rs.spec.set and not any(m.metric.split(":")[0] in _NEEDS_FLOWS for m in mine):
                changes["metrics.per_flow"] = "none"  # 10 us series of every flow would be large and unused
        if quick:
            changes.update(rs.quick)
            end = _latest_end(rs, users, {**rs.spec.set, **changes})
            if end is not None:
                changes["duration"] = f"{round((end + _MARGIN_S) * 1e6)}us"
        spec = rs.spec.with_changes(set=changes, seeds=list(range(1, n_seeds + 1)))
        spec.name = rs.spec.name
        sets[key] = PlannedSet(deck, name, spec, expand(spec, runs_dir), changes)
    return Plan(sets, quick, n_seeds)
