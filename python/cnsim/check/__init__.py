"""``cnsim check``: every numbered check of targets.md, run and judged (issue 12).

The checks are data (:mod:`.spec`, one TOML file per deck in ``decks/``); this package

1. loads and validates them (:mod:`.spec`),
2. plans the runs they need — run sets of a deck as sweep specs, seeds per §A, ``--quick``
   shortening — (:mod:`.plan`),
3. runs what is missing through the sweep machinery (:func:`cnsim.sweep.expand`, an executor of
   :mod:`cnsim.executors`, :func:`cnsim.sweep.execute_run`): each run in ``DIR/runs/<run_id>/``,
   cached by its content hash, so a second call (or an interrupted one) only runs what is missing,
4. measures (:mod:`.extract`, :mod:`.metrics`) and judges each check (:mod:`.evaluate`,
   :mod:`.condition`),
5. writes ``DIR/checks.json``, ``DIR/checks.parquet``, ``DIR/figures/<id>.png`` for failed checks,
   ``DIR/sweep.parquet`` + ``DIR/catalog.duckdb`` (the runs) and ``DIR/report.html`` (:mod:`.report`).

See docs/fidelity.md for how to run it and what it found.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ScenarioError
from .evaluate import FAIL, NOT_RUN, PASS, Evaluator, Verdict
from .plan import Plan, make_plan
from .report import draw_failure, rows, tally, write_checks_report, write_results
from .spec import Check, Deck, deck_names, load_decks

__all__ = ["FAIL", "NOT_RUN", "PASS", "CheckPlan", "deck_names", "load_decks", "plan_checks", "run_checks", "select", "tally_line"]

Progress = Callable[[int, int, int], None]


def select(decks: list[Deck], only: list[str] | None = None) -> list[Check]:
    """The checks of ``decks``, or just the ids in ``only`` (an unknown id is exit-2 input)."""
    checks = [c for d in decks for c in d.checks]
    if not only:
        return checks
    known = {c.id for c in checks}
    unknown = list(dict.fromkeys(i for i in only if i not in known))
    if unknown:
        # ids are upper case: `t-k15` is T-K15 written in lower case, not a typo to guess at; an
        # id with spaces around it (`' T-K15'`) is told so, not that it should be upper case
        meant = {i: i.strip().upper() for i in unknown if i.strip().upper() in known}
        why = "ids are upper case" if all(i == i.strip() for i in meant) else "ids are upper case, without spaces"
        hint = f"; {why}: --only {' --only '.join(dict.fromkeys(meant.values()))}" if meant else "; ids look like T-K15"
        raise ScenarioError(f"--only: unknown check id(s) {', '.join(unknown)} in the selected decks "
                            f"({', '.join(d.name for d in decks)}){hint}")
    return [c for c in checks if c.id in set(only)]


def _execute(plan: Plan, out: Path, executor: Any, progress: Progress | None) -> tuple[int, int, list[str], list[str], list[tuple[str, str]]]:
    """Run the plan's missing runs; returns (total, run now, the run folders run again because another version
    of the results made them, the run folders run again because they were damaged, failed)."""
    from ..sweep import clean_stale, run_tasks, runs_to_do

    runs = out.resolve() / "runs"
    runs.mkdir(parents=True, exist_ok=True)
    clean_stale(runs)
    tasks = plan.tasks
    todo, repaired, outdated = runs_to_do(runs, tasks)
    failed = run_tasks(executor, todo, len(tasks) - len(todo), len(tasks), progress)  # interrupted: executor closed
    return len(tasks), len(todo), outdated, repaired, failed


@dataclass
class CheckPlan:
    """What :func:`plan_checks` found: the decks, the selected checks and their runs."""

    decks: list[Deck]
    checks: list[Check]
    plan: Plan


def plan_checks(
    decks: list[str] | None,
    out: str | Path,
    quick: bool = False,
    seeds: int | None = None,
    only: list[str] | None = None,
) -> CheckPlan:
    """Load, select and plan the checks to run into ``out``: every run resolved and estimated,
    nothing written (bad input raises ScenarioError before any work starts)."""
    if seeds is not None and seeds < 1:
        raise ScenarioError(f"--seeds: must be at least 1 (given {seeds})")
    blank = next((i for i in only or [] if not i.strip()), None)
    if blank is not None:
        raise ScenarioError(f"--only {blank!r}: an empty check id; give ids like --only T-K15")
    loaded = load_decks(decks)
    checks = select(loaded, only)
    runs_dir = Path(out).resolve() / "runs"
    return CheckPlan(loaded, checks, make_plan(loaded, checks, str(runs_dir), quick=quick, seeds=seeds))


def run_checks(
    decks: list[str] | None,
    out: str | Path,
    quick: bool = False,
    seeds: int | None = None,
    executor: Any = None,
    workers: int | None = None,
    only: list[str] | None = None,
    progress: Progress | None = None,
    catalog: bool = True,
    planned: CheckPlan | None = None,
) -> dict[str, Any]:
    """Run and judge the checks of ``decks`` (None: all) into ``out``; returns the checks.json
    document. ``planned`` is :func:`plan_checks` of the same arguments (default: planned here)."""
    from ..executors import LocalExecutor
    from ..sweep import rebuild_table

    started = time.perf_counter()
    if planned is None:
        planned = plan_checks(decks, out, quick=quick, seeds=seeds, only=only)
    loaded, checks, plan = planned.decks, planned.checks, planned.plan
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    runs_dir = out.resolve() / "runs"
    own = executor is None
    if executor is None:
        executor = LocalExecutor(workers)
    try:
        total, ran, outdated, repaired, failed = _execute(plan, out, executor, progress)
    finally:
        if own:
            executor.close()
        if plan.tasks:
            rebuild_table(out, plan.tasks)
            if catalog:
                from ..catalog import build

                build(out)
    evaluator = Evaluator(plan, runs_dir, loaded)
    verdicts: list[Verdict] = []
    for deck in loaded:
        for check in (c for c in checks if c.deck == deck.name):
            verdict = evaluator.evaluate(check)
            verdicts.append(verdict)
            if verdict.verdict == FAIL:
                draw_failure(verdict, evaluator, out / "figures")
            evaluator.release_series()
        evaluator.forget()
    row_list = rows(verdicts)
    meta = {
        "decks": [d.name for d in loaded],
        "quick": quick,
        "seeds": plan.seeds,
        "only": list(dict.fromkeys(only or [])),  # an id given twice is judged (and listed) once
        "executor": getattr(executor, "name", "?"),
        "runs": total,
        "ran": ran,
        "outdated": len(outdated),
        "outdated_runs": outdated,
        "repaired": repaired,
        "failed_runs": [list(f) for f in failed],
        "wall_s": time.perf_counter() - started,
        "run_sets": [
            {"deck": s.deck, "name": s.name, "base": s.spec.base, "runs": len({t.run_id for t in s.tasks}),
             "added": s.changes, "spec": s.spec.to_dict()}
            for s in plan.sets.values()
        ],
    }
    write_results(out, row_list, meta)
    write_checks_report(out)
    return {**meta, "tally": tally(row_list), "checks": row_list}


def tally_line(deck: str, counts: dict[str, int]) -> str:
    """``kd: 4 pass, 1 fail, 1 not_run (6 checks)``."""
    return (f"{deck}: {counts.get(PASS, 0)} pass, {counts.get(FAIL, 0)} fail, {counts.get(NOT_RUN, 0)} not_run "
            f"({counts.get('total', 0)} checks)")
