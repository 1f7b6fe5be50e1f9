"""``cnsim report DIR``: (re)build ``DIR/report.html`` from the results on disk, whatever the
folder holds — a deck reproduction (``deck.json``, :mod:`cnsim.reproduce`), a check folder
(``checks.json``, :mod:`cnsim.check`), a sweep
(``sweep.json``) or a run (``summary.json``). It sits above both the reports and the decks, so
that neither imports the other."""

from __future__ import annotations

from pathlib import Path

from .check.report import write_checks_report
from .errors import ScenarioError
from .report import write_run_report, write_sweep_report
from .reproduce import write_deck_report
from .rundir import ERROR_FILE, SUMMARY_FILE, SWEEP_PLAN_FILE

__all__ = ["build_report"]


def build_report(folder: str | Path) -> Path:
    """(Re)build ``folder/report.html`` from results on disk (a deck, a sweep or a run folder)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ScenarioError(f"{folder}: no such folder (give a run, sweep or reproduction folder)")
    if (folder / "deck.json").is_file():
        return write_deck_report(folder)
    if (folder / "checks.json").is_file():
        return write_checks_report(folder)
    if (folder / SWEEP_PLAN_FILE).is_file():
        return write_sweep_report(folder)
    if (folder / SUMMARY_FILE).is_file() or (folder / ERROR_FILE).is_file():
        return write_run_report(folder)
    raise ScenarioError(
        f"{folder}: not a results folder: it holds no deck.json (a reproduction), checks.json (cnsim check), "
        "sweep.json (a sweep) or summary.json (a run)"
    )
