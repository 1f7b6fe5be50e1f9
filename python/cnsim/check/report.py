"""What ``cnsim check`` writes: ``checks.json``, ``checks.parquet``, the failure figures and the
report section (spec/contract.md "cnsim check").

One row per check: ``id, deck, class, claim, expected, measured, tolerance, verdict, runs`` plus
``reason`` (why it failed or was not run), ``source`` and ``conditions``. ``checks.json`` also holds
the tally per deck, the options and the run sets as run (their seeds and the overrides the planner
added). For each failed check, ``figures/<id>.png`` shows the signal behind each measure — the
series of every point it compares (first seed), the measurement window shaded — or, for values
that are not series, the values per point; the report embeds it beside the check's row.
"""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from ..results import dump_json
from .evaluate import FAIL, NOT_RUN, PASS, Evaluator, Verdict
from .extract import MetricUnavailable, metric_def

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = [
    "CHECKS_JSON",
    "CHECKS_PARQUET",
    "checks_sections",
    "draw_failure",
    "failure_figure",
    "rows",
    "tally",
    "write_checks_report",
    "write_results",
]

CHECKS_JSON = "checks.json"
CHECKS_PARQUET = "checks.parquet"
COLUMNS = ["id", "deck", "class", "claim", "expected", "measured", "tolerance", "verdict", "runs", "reason", "source",
           "conditions"]


def rows(verdicts: list[Verdict]) -> list[dict[str, Any]]:
    return [
        {
            "id": v.check.id,
            "deck": v.check.deck,
            "class": v.check.cls,
            "claim": v.check.claim,
            "expected": v.check.expected,
            "measured": v.measured_text(),
            "tolerance": v.check.tolerance,
            "verdict": v.verdict,
            "runs": v.runs,
            "reason": v.reason,
            "source": v.check.source,
            "conditions": [c.text for c in v.check.conditions],
        }
        for v in verdicts
    ]


def tally(row_list: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """{deck: {pass, fail, not_run, total}} in order of appearance, plus "all"."""
    out: dict[str, dict[str, int]] = {}
    for r in row_list:
        for key in (r["deck"], "all"):
            t = out.setdefault(key, {PASS: 0, FAIL: 0, NOT_RUN: 0, "total": 0})
            t[r["verdict"]] += 1
            t["total"] += 1
    if "all" in out:
        out["all"] = out.pop("all")
    return out


def _atomic_write(path: Path, write: Any) -> None:
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}")
    write(tmp)
    os.replace(tmp, path)


def write_results(out: Path, row_list: list[dict[str, Any]], meta: dict[str, Any]) -> None:
    """``checks.json`` (rows, tally, meta) and ``checks.parquet`` (the rows)."""
    doc = {**meta, "tally": tally(row_list), "checks": row_list}
    _atomic_write(out / CHECKS_JSON, lambda p: p.write_text(dump_json(doc), encoding="utf-8"))
    table = pa.table({
        **{c: pa.array([r[c] for r in row_list], pa.string()) for c in COLUMNS if c not in ("runs", "conditions")},
        "runs": pa.array([r["runs"] for r in row_list], pa.list_(pa.string())),
        "conditions": pa.array([r["conditions"] for r in row_list], pa.list_(pa.string())),
    }).select(COLUMNS)
    _atomic_write(out / CHECKS_PARQUET, lambda p: pq.write_table(table, p))


#: keys whose last part alone would mislead: "delay" is the Kwan & Ding deck's loop delay, twice
#: ``links.delay`` (a kd point at links.delay = 4us is the deck's 8 us row)
_POINT_NAMES = {"links.delay": "link delay"}


def _label(point: dict[str, Any]) -> str:
    return ", ".join(f"{_POINT_NAMES.get(k, k.split('.')[-1])}={v}" for k, v in point.items()) or "run"


def draw_failure(verdict: Verdict, evaluator: Evaluator, folder: Path) -> Path | None:
    """``folder/<id>.png`` of :func:`failure_figure`, or None when the check measured nothing."""
    fig = failure_figure(verdict, evaluator)
    if fig is None:
        return None
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{verdict.check.id}.png"
    fig.savefig(path, dpi=90)
    return path


def failure_figure(verdict: Verdict, evaluator: Evaluator) -> Figure | None:
    """One panel per measure (at most four) showing why the check failed: each point's signal
    over time (its first run) with the measured window, or, for a measure without a signal, the
    measured values against the points."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    measures = [(name, v) for name, v in verdict.values.items()][:4]
    if not measures:
        return None
    fig = Figure(figsize=(6.4 * min(2, len(measures)), 3.6 * ((len(measures) + 1) // 2)), layout="constrained")
    FigureCanvasAgg(fig)
    cols = min(2, len(measures))
    for i, (name, mv) in enumerate(measures):
        ax = fig.add_subplot((len(measures) + 1) // 2, cols, i + 1)
        m = verdict.check.measures[name]
        definition, arg = metric_def(m.metric)
        drawn = False
        if definition.signal is not None:
            for point, run_ids in zip(mv.points, mv.runs, strict=True):
                if not run_ids:
                    continue
                try:
                    run = evaluator.run_data(run_ids[0])
                    signal = definition.signal(run, m.args, arg)
                    window = run.window(m.window)
                except MetricUnavailable:
                    continue
                if signal is None:
                    continue
                ax.plot(signal.t, signal.v, linewidth=0.8, label=_label(point))
                ax.set_ylabel(signal.ylabel)
                if not drawn:
                    ax.axvspan(window[0], window[1], color="tab:blue", alpha=0.07, label=f"window {m.window}")
                drawn = True
            if drawn:
                ax.set_xlabel("time (s)")
        if not drawn:
            values = np.asarray(mv.value, dtype=np.float64)
            flat = values.reshape(values.shape[0], -1)
            x = np.arange(flat.shape[0])
            for j in range(flat.shape[1]):
                ax.plot(x, flat[:, j], "o-" if flat.shape[1] == 1 else ".", label=None)
            ax.set_xticks(x, [_label(p) for p in mv.points], rotation=30, ha="right", fontsize=7)
            ax.set_ylabel(f"{m.metric} ({definition.unit})" if definition.unit else m.metric)
        ax.set_title(f"{name} = {m.metric} [{m.window}]", fontsize=9)
        ax.grid(True, alpha=0.3)
        if drawn and len(mv.points) <= 12:
            # a fixed corner: "best" searches every point of the 10 us series and warns about it
            ax.legend(fontsize=7, loc="upper right")
    fig.suptitle(f"{verdict.check.id}: {verdict.reason}"[:160], fontsize=9)
    return fig


def checks_sections(folder: Path, doc: dict[str, Any], prefix: str = "") -> list[Any]:
    """Report sections for a checks.json document: the tally, the table per deck, failures."""
    from ..report import Section, Table, figure

    row_list = doc.get("checks") or []
    t = doc.get("tally") or {}
    summary = Table("Tally per deck", ["deck", "pass", "fail", "not_run", "total"],
                    [[d, v.get(PASS, 0), v.get(FAIL, 0), v.get(NOT_RUN, 0), v.get("total", 0)] for d, v in t.items()])
    intro = [(f"Checks of targets.md evaluated on {doc.get('seeds')} seed(s) per point"
             f"{' (--quick: runs cut after the last window the checks measure, one seed)' if doc.get('quick') else ''}; "
             f"{doc.get('runs', 0)} runs in {doc.get('wall_s', 0):.0f} s.")]
    sections = [Section(f"{prefix}Checks: tally", "checks-tally", text=intro, tables=[summary])]
    decks = list(dict.fromkeys(r["deck"] for r in row_list))
    for deck in decks:
        sec = Section(f"{prefix}Checks: {deck}", f"checks-{deck}")
        table = Table(f"{deck}: checks", ["id", "class", "verdict", "claim", "expected", "measured", "reason"], [],
                      text_columns=[0, 1, 2, 3, 4, 5, 6])
        for r in row_list:
            if r["deck"] != deck:
                continue
            table.rows.append([r["id"], r["class"], r["verdict"], r["claim"], r["expected"], r["measured"], r["reason"]])
            png = folder / "figures" / f"{r['id']}.png"
            if r["verdict"] == FAIL and png.is_file():
                sec.figures.append(figure(png, r["id"], f"{r['id']} failed — {r['reason']} (measured: {r['measured']})"))
        sec.tables.append(table)
        sections.append(sec)
    return sections


def write_checks_report(folder: str | Path) -> Path:
    """(Re)write ``folder/report.html`` from ``folder/checks.json`` and its figures."""
    from ..report import Page, write_page

    folder = Path(folder)
    doc = json.loads((folder / CHECKS_JSON).read_text(encoding="utf-8"))
    t = (doc.get("tally") or {}).get("all") or {}
    page = Page(
        title="cnsim check — published results of the five decks (targets.md)",
        subtitle=[f"{t.get(PASS, 0)} pass · {t.get(FAIL, 0)} fail · {t.get(NOT_RUN, 0)} not run of {t.get('total', 0)} checks",
                  f"decks {', '.join(doc.get('decks') or [])} · executor {doc.get('executor')}"],
        sections=checks_sections(folder, doc),
    )
    return write_page(page, folder / "report.html")
