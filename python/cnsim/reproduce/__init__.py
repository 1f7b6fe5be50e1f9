"""One-command reproduction of the study decks (issue "Reproduction"; scenarios.md §2–§6, §8).

A deck is data: :class:`Deck` lists its :class:`Study` entries, each a shipped sweep id of
scenarios.md §8 with the figures and tables the slides show. ``cnsim reproduce DECK`` runs every
study whose sweep spec and base scenario exist (through :func:`cnsim.sweep.run_sweep`, one
executor for the whole deck), draws the figures into ``DIR/<sweep>/``, rebuilds the run catalog
``DIR/catalog.duckdb`` and writes ``DIR/deck.json`` and ``DIR/report.html``. A study whose base
scenario or sweep spec is not in the catalog yet is *pending*: listed in the report with the
reason, never an error; it runs once the catalog has it.

``--quick`` runs shortened versions for CI and smoke tests: the deck's ``quick_set`` overrides
(a shorter run with the hotspot and window moved earlier), at most three values per axis (first,
middle, last; or the study's own ``quick_axes``) and the first seed — each deck within 60 s on
two cores. Then the deck's checks of targets.md (:mod:`cnsim.check`) run and go into the
report, as issue 12 asks of `cnsim reproduce DECK`; they take minutes for some decks even with
``--quick`` (:func:`with_checks`: ``--no-checks`` leaves them out; the modern deck has none).

Deck modules: :mod:`.zhb`, :mod:`.qcnp`, :mod:`.kd`, :mod:`.e2cm`, :mod:`.eval`, and cnsim's own
:mod:`.modern` (the 802.1Qau schemes against DCQCN).
"""

from __future__ import annotations

import importlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ScenarioError
from ..results import dump_json
from ..rundir import write_text_atomic
from ..sweep import SweepSpec, load_spec, run_sweep, shipped_sweeps
from .figures import FlowFigure, Labeler, MetricFigure, SummaryTable, TimeFigure, fill_times, label_value, load_points

if TYPE_CHECKING:
    from ..report import Page

__all__ = ["DECKS", "Deck", "Study", "PlannedStudy", "DeckPlan", "get_deck", "plan_deck", "quick_note", "quick_spec", "reproduce",
           "study_spec", "write_deck_report", "deck_page", "study_status"]

DECKS = ("zhb", "qcnp", "kd", "e2cm", "eval", "modern")
FigureSpec = TimeFigure | MetricFigure | FlowFigure


@dataclass
class Study:
    """One study of a deck: a shipped sweep, its figures and tables."""

    sweep: str
    title: str
    figures: list[FigureSpec] = field(default_factory=list)
    tables: list[SummaryTable] = field(default_factory=list)
    text: str = ""
    quick_axes: dict[str, list[Any]] | None = None  # axes (or zip keys) replaced in --quick
    quick_set: dict[str, Any] = field(default_factory=dict)
    labeler: Labeler | None = None


@dataclass
class Deck:
    """A study deck: its studies, how to label its axes, and its --quick overrides."""

    name: str
    title: str
    source: str
    studies: list[Study]
    quick_set: dict[str, Any] = field(default_factory=dict)
    labeler: Labeler = label_value
    notes: list[str] = field(default_factory=list)


def get_deck(name: str) -> Deck:
    """The deck module's ``DECK`` (exit 2 for an unknown deck)."""
    if name not in DECKS:
        raise ScenarioError(f"unknown deck {name!r}; decks: {', '.join(DECKS)}")
    module = importlib.import_module(f"{__name__}.{name}")
    return module.DECK  # type: ignore[no-any-return]


def _subset(values: list[Any]) -> list[int]:
    """Indices of at most three values: first, middle, last."""
    n = len(values)
    return list(range(n)) if n <= 3 else [0, n // 2, n - 1]


def quick_spec(spec: SweepSpec, study: Study, deck: Deck) -> SweepSpec:
    """The shortened version of a study's spec (``--quick``)."""
    axes = {k: [v[i] for i in _subset(v)] for k, v in spec.axes.items()}
    zipped: dict[str, list[Any]] = {}
    if spec.zip:
        idx = _subset(next(iter(spec.zip.values())))
        zipped = {k: [v[i] for i in idx] for k, v in spec.zip.items()}
    for key, values in (study.quick_axes or {}).items():
        (zipped if key in spec.zip else axes)[key] = list(values)
    quick = {**deck.quick_set, **study.quick_set}
    if not _has_hotspot(spec.base):
        # a deck's quick run moves its hotspot earlier; a base without one (input-generated,
        # dual CP) keeps its timing, and the clipped window falls back to the "run" rule
        quick = {k: v for k, v in quick.items() if not k.startswith("hotspots.") and k != "metrics.window"}
    return spec.with_changes(set=quick, axes=axes, zip=zipped, seeds=spec.seeds[:1])


def _has_hotspot(base: str) -> bool:
    from ..scenario import load

    return bool(load(base).resolved.doc.hotspots)


def study_status(study: Study) -> tuple[SweepSpec | None, str]:
    """(spec, "") when the study can run, else (None, why it is pending)."""
    if study.sweep not in shipped_sweeps():
        return None, f"the sweep spec {study.sweep} is not shipped yet"
    try:
        return load_spec(study.sweep), ""
    except ScenarioError as err:
        text = str(err)
        if "unknown base scenario" in text:
            return None, f"its base scenario is not in the catalog yet ({text.split('unknown base scenario', 1)[1].split(':')[0].strip()})"
        raise


def study_spec(study: Study, deck: Deck, quick: bool) -> tuple[SweepSpec | None, str]:
    """The spec a reproduction runs for ``study`` (its ``--quick`` version with ``quick``), or
    None and why the study is pending (:func:`study_status`)."""
    spec, reason = study_status(study)
    if spec is not None and quick:
        spec = quick_spec(spec, study, deck)
    return spec, reason


#: a progress bar's maker: ``factory(name)`` gives the hook a sweep calls with (done, total, failed)
ProgressFactory = Callable[[str], Callable[[int, int, int], None]]


@dataclass
class PlannedStudy:
    """A study as it will run: its (``--quick``) spec, or None and why it is pending."""

    study: Study
    spec: SweepSpec | None
    reason: str = ""
    #: each run's peak memory estimate (cnsim.budget), for the check of the runs in flight
    memory: list[int] = field(default_factory=list)


@dataclass
class DeckPlan:
    """A reproduction as it will run: its studies, whether the deck's checks run, and each check
    run's peak memory estimate (for the check of the runs in flight)."""

    studies: list[PlannedStudy]
    checks: bool
    check_memory: list[int] = field(default_factory=list)


def with_checks(deck_name: str, checks: bool | None) -> bool:
    """Whether a reproduction of the deck runs its checks of targets.md: by default (None) when
    the deck has checks (issue 12: `cnsim reproduce DECK` includes them in its report; the
    "modern" deck has none), never with False; True for a deck without checks is refused."""
    from ..check import deck_names

    has = get_deck(deck_name).name in deck_names()
    if checks and not has:
        raise ScenarioError(f"--checks: deck {deck_name!r} has no checks in targets.md; check decks: {', '.join(deck_names())}")
    return has if checks is None else checks


def plan_deck(deck_name: str, quick: bool = False, checks: bool | None = None) -> DeckPlan:
    """Every study of a deck resolved before anything runs: each run of each available study
    checked and estimated (:func:`cnsim.sweep.expand`), and the deck's checks planned too
    (:func:`with_checks`), so that bad input is refused (ScenarioError) before the first run,
    not after the studies before it have run. Nothing is written."""
    from ..sweep import MAX_RUNS, count_runs, expand

    deck = get_deck(deck_name)
    planned: list[PlannedStudy] = []
    for study in deck.studies:
        spec, reason = study_spec(study, deck, quick)
        planned.append(PlannedStudy(study, spec, reason))
    total = sum(count_runs(p.spec) for p in planned if p.spec is not None)
    if total > MAX_RUNS:
        raise ScenarioError(f"reproduce {deck.name}: {total:,} runs, more than the limit of {MAX_RUNS:,} runs")
    for p in planned:
        if p.spec is not None:
            p.memory = [t.memory_bytes for t in expand(p.spec, "/nonexistent/runs")]  # validation and estimate only
    if not with_checks(deck.name, checks):
        return DeckPlan(planned, False)
    from ..check import plan_checks

    check_plan = plan_checks([deck.name], "/nonexistent/checks", quick=quick)
    return DeckPlan(planned, True, [t.memory_bytes for t in check_plan.plan.tasks])


def reproduce(
    deck_name: str,
    out: str | Path,
    quick: bool = False,
    executor: Any = None,
    workers: int | None = None,
    progress: ProgressFactory | None = None,
    checks: bool | None = None,
    planned: DeckPlan | None = None,
) -> dict[str, Any]:
    """Run every available study of a deck into ``out``, then the deck's checks unless
    ``checks`` is False (:func:`with_checks`); returns the deck.json document. ``planned`` is
    :func:`plan_deck` of the same deck and options (default: planned here)."""
    from ..catalog import build
    from ..executors import LocalExecutor

    deck = get_deck(deck_name)
    if planned is None:
        planned = plan_deck(deck_name, quick=quick, checks=checks)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    own = executor is None
    if executor is None:
        executor = LocalExecutor(workers)
    started = time.perf_counter()
    notes = [*deck.notes, quick_note(deck)] if quick else deck.notes
    doc: dict[str, Any] = {"deck": deck.name, "title": deck.title, "source": deck.source, "quick": quick,
                           "notes": notes, "executor": getattr(executor, "name", "?"), "studies": []}
    try:
        for item in planned.studies:
            study, spec = item.study, item.spec
            entry: dict[str, Any] = {"sweep": study.sweep, "title": study.title, "text": fill_times(study.text, []),
                                     "status": "pending", "reason": item.reason, "figures": [], "tables": []}
            doc["studies"].append(entry)
            if spec is None:
                continue
            entry["spec"] = spec.to_dict()
            t0 = time.perf_counter()
            hook = progress(study.sweep) if progress is not None else None
            result = run_sweep(spec, out / study.sweep, executor=executor, progress=hook, catalog=False)
            entry["wall_s"] = time.perf_counter() - t0
            entry["runs"] = result.total
            entry["failed"] = [list(f) for f in result.failed]
            entry["repaired"] = result.repaired
            entry["outdated"] = result.outdated
            entry["status"] = "failed" if result.failed and len(result.failed) == result.total else "done"
            _draw_study(study, deck, out / study.sweep, entry)
            _write_deck(out, doc, started)
        if planned.checks:
            from ..check import run_checks

            hook = progress("checks") if progress is not None else None
            judged = run_checks([deck.name], out / "checks", quick=quick, executor=executor, progress=hook, catalog=False)
            doc["checks"] = judged["tally"].get(deck.name, {})
            doc["check_runs"] = {"failed": judged["failed_runs"], "repaired": judged["repaired"], "outdated": judged["outdated_runs"]}
    finally:
        if own:
            executor.close()
    _write_deck(out, doc, started)
    build(out)
    write_deck_report(out)
    return doc


def quick_note(deck: Deck) -> str:
    """The note a ``--quick`` reproduction adds to the deck's: which times it changed (the deck's
    notes give the full runs'; the study texts and tables are filled from the runs themselves)."""
    def text(value: Any) -> str:
        return f"[{', '.join(map(str, value))}]" if isinstance(value, list) else str(value)

    sets = "; ".join(f"{key} = {text(value)}" for key, value in deck.quick_set.items())
    what = f"the deck's overrides {sets}" if sets else "each study's own overrides"
    return (f"--quick: shortened runs ({what}; a study may change them further, and a scenario without a hotspot keeps its "
            "own times). The times in the notes above are the full runs'; the study texts, captions and tables give their runs' own.")


def _write_deck(out: Path, doc: dict[str, Any], started: float) -> None:
    """deck.json as it stands, with the wall time so far (rewritten after each study)."""
    doc["wall_s"] = time.perf_counter() - started
    write_text_atomic(out / "deck.json", dump_json(doc))


def _draw_study(study: Study, deck: Deck, folder: Path, entry: dict[str, Any]) -> None:
    labeler = study.labeler or deck.labeler
    points, keys = load_points(folder)
    entry["text"] = fill_times(study.text, points)
    for spec in study.figures:
        path = spec.draw(points, keys, labeler, folder)
        if path is not None:
            entry["figures"].append({"file": str(path.relative_to(folder.parent)), "title": spec.title,
                                     "caption": fill_times(spec.caption, points)})
    for table in study.tables:
        columns, rows = table.rows(points, keys, labeler)
        entry["tables"].append({"title": table.heading(points), "columns": columns, "rows": rows, "keys": len(keys)})


def write_deck_report(folder: str | Path) -> Path:
    """(Re)write ``folder/report.html`` of a reproduction from its deck.json and figures."""
    from ..report import write_page

    return write_page(deck_page(Path(folder)), Path(folder) / "report.html")


def deck_page(folder: Path) -> Page:
    """The report page of a reproduction folder: an overview of the studies, the deck's checks
    when they ran, then each study with its figures, tables, failed runs, spec and first run's
    scenario."""
    from ..labels import fmt
    from ..report import Block, Page, Section, Table, figure

    doc = json.loads((folder / "deck.json").read_text(encoding="utf-8"))
    studies = doc.get("studies") or []
    done = sum(1 for s in studies if s.get("status") == "done")
    page = Page(
        title=f"cnsim reproduce {doc.get('deck')}{' --quick' if doc.get('quick') else ''} — {doc.get('title')}",
        subtitle=[
            str(doc.get("source") or ""),
            f"{done} of {len(studies)} studies run · {sum(int(s.get('runs') or 0) for s in studies)} runs · "
            f"{fmt(doc.get('wall_s'))} s wall · executor {doc.get('executor')}",
            *(doc.get("notes") or []),
        ],
    )
    overview = Table("Studies", ["study", "title", "status", "runs", "wall (s)", "note"], [], text_columns=[0, 1, 2, 5])
    for s in studies:
        overview.rows.append([s["sweep"], s["title"], s["status"], fmt(s.get("runs")), fmt(s.get("wall_s")),
                              s.get("reason") or (f"{len(s.get('failed') or [])} failed runs" if s.get("failed") else "")])
    page.sections.append(Section("Overview", "overview", tables=[overview]))
    checks_doc = folder / "checks" / "checks.json"
    if checks_doc.is_file():
        from ..check.report import checks_sections

        page.sections.extend(checks_sections(folder / "checks", json.loads(checks_doc.read_text(encoding="utf-8"))))
    for s in studies:
        sec = Section(f"{s['sweep']}: {s['title']}", s["sweep"], status=s["status"])
        if s.get("text"):
            sec.text.append(s["text"])
        if s["status"] == "pending":
            sec.text.append(f"Pending: {s.get('reason')}. It runs automatically once the catalog has it.")
        for f in s.get("figures") or []:
            path = folder / f["file"]
            if path.is_file():
                sec.figures.append(figure(path, f.get("title"), f.get("caption") or ""))
        for t in s.get("tables") or []:
            nkeys = int(t.get("keys") or 0)
            sec.tables.append(Table(t["title"], t["columns"], t["rows"], text_columns=list(range(nkeys))))
        for run_id, error in s.get("failed") or []:
            sec.text.append(f"run {run_id} failed: {error}")
        if s.get("spec"):
            sec.blocks.append(Block("sweep spec as run (resolved parameters: see each run's scenario.toml)", json.dumps(s["spec"], indent=2)))
        base_toml = _base_toml(folder / s["sweep"])
        if base_toml:
            sec.blocks.append(Block("resolved scenario of the first run (scenario.toml)", base_toml))
        page.sections.append(sec)
    return page


def _base_toml(sweep_dir: Path) -> str:
    runs = sweep_dir / "runs"
    if not runs.is_dir():
        return ""
    try:
        plan = json.loads((sweep_dir / "sweep.json").read_text(encoding="utf-8"))
        first = (plan.get("runs") or [{}])[0].get("run_id")
        path = runs / str(first) / "scenario.toml"
        return path.read_text(encoding="utf-8") if path.is_file() else ""
    except (OSError, ValueError, IndexError):
        return ""
