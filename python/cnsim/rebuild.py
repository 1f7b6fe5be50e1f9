"""``cnsim report DIR``: (re)build ``DIR/report.html`` from the results on disk, whatever the
folder holds — a deck reproduction (``deck.json``, :mod:`cnsim.reproduce`), a check folder
(``checks.json``, :mod:`cnsim.check`), a sweep
(``sweep.json``) or a run (``summary.json``). It sits above both the reports and the decks, so
that neither imports the other.

A damaged folder is bad input (exit 2): a file that is there but does not read (truncated or
overwritten JSON, a scenario.toml that is not UTF-8 TOML, a series that is not Parquet) is
named with what it should hold; a file that is missing is told apart from one that is damaged.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from .check.report import write_checks_report
from .errors import ScenarioError, format_value
from .report import write_run_report, write_sweep_report
from .reproduce import write_deck_report
from .rundir import ERROR_FILE, SCENARIO_FILE, SERIES_DIR, SUMMARY_FILE, SWEEP_PLAN_FILE, damaged, read_json_checked

__all__ = ["build_report"]

_DECK_FIX = "Reproduce the deck again (`cnsim reproduce DECK --out NEWDIR`)."
_CHECKS_FIX = "Run the checks again (`cnsim check DECK --out NEWDIR`)."


def _object_file(path: Path, expected: str, fix: str) -> None:
    """Refuse a JSON file that is there but is not a JSON object (truncated, overwritten)."""
    doc = read_json_checked(path, expected, fix)
    if doc is not None and not isinstance(doc, dict):
        raise damaged(path, f"the document is {format_value(doc)}", expected, fix)


def build_report(folder: str | Path) -> Path:
    """(Re)build ``folder/report.html`` from results on disk (a deck, a sweep or a run folder)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ScenarioError(f"{folder}: no such folder (give a run, sweep or reproduction folder)")
    if (folder / "deck.json").is_file():
        _object_file(folder / "deck.json", "the reproduction's record (a JSON object)", _DECK_FIX)
        _object_file(folder / "checks" / "checks.json", "the checks' record (a JSON object)", _DECK_FIX)
        return _guarded(folder / "deck.json", _DECK_FIX, lambda: write_deck_report(folder))
    if (folder / "checks.json").is_file():
        _object_file(folder / "checks.json", "the checks' record (a JSON object)", _CHECKS_FIX)
        return _guarded(folder / "checks.json", _CHECKS_FIX, lambda: write_checks_report(folder))
    if (folder / SWEEP_PLAN_FILE).is_file():
        return write_sweep_report(folder)
    if (folder / SUMMARY_FILE).is_file() or (folder / ERROR_FILE).is_file():
        return write_run_report(folder)
    if (folder / SCENARIO_FILE).is_file() or (folder / SERIES_DIR).is_dir():
        raise ScenarioError(
            f"{folder / SUMMARY_FILE}: missing: {folder} looks like a run folder ({SCENARIO_FILE} or {SERIES_DIR}/) "
            "but the run did not finish; run it again (`cnsim run ID --out DIR --force`)"
        )
    raise ScenarioError(
        f"{folder}: not a results folder: it holds no deck.json (a reproduction), checks.json (cnsim check), "
        "sweep.json (a sweep) or summary.json (a run)"
    )


def _guarded(record: Path, fix: str, write: Callable[[], Path]) -> Path:
    """Write a deck's or a check folder's page; a record whose parts have another shape than
    the one cnsim writes (a list where a table belongs, a missing field) is refused, naming it."""
    try:
        return write()
    except ScenarioError:
        raise
    except (KeyError, TypeError, AttributeError, IndexError, ValueError) as err:
        raise damaged(record, f"it does not read as cnsim wrote it ({type(err).__name__}: {err})",
                      "the record written by cnsim", fix) from None
