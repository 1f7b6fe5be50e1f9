"""Self-contained HTML reports (issue "The report"; contract "A run folder": ``report.html``).

One page per run folder, per sweep folder and per reproduced deck: the figures (PNG embedded as
``data:`` URIs), the summary tables and the resolved parameters, readable offline — the page
loads nothing from the network and runs no script but a three-line check that records whether
every figure decoded (``data-figures-loaded`` on ``<body>``, read by the browser test).

:func:`cnsim.rebuild.build_report` picks the kind from what a folder holds. The page model
is plain data (:class:`Page`, :class:`Section`), rendered by one Jinja2 template
(``templates/report.html.j2``).
"""

from __future__ import annotations

import base64
import functools
import json
import struct
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._version import __version__
from ..labels import HEADLINE, fmt, scaled, summary_value
from ..results import Result
from ..rundir import FIGURE_FILES, REPORT_FILE, SERIES_DIR, find_run_folders, flatten, read_json, run_complete

if TYPE_CHECKING:
    import jinja2

__all__ = [
    "Figure",
    "Table",
    "Block",
    "Section",
    "Page",
    "render",
    "write_page",
    "figure",
    "write_run_reports",
    "write_run_report",
    "write_sweep_report",
    "summary_rows",
    "summary_value",
    "REPORT_FILE",
]



@dataclass
class Figure:
    """An embedded image: ``src`` is a data: URI."""

    title: str
    src: str
    width: int
    height: int
    caption: str = ""


@dataclass
class Table:
    title: str
    columns: list[str]
    rows: list[list[Any]]
    text_columns: list[int] = field(default_factory=lambda: [0])


@dataclass
class Block:
    """A collapsible preformatted block (resolved parameters, specs)."""

    title: str
    text: str
    open: bool = False


@dataclass
class Section:
    title: str
    anchor: str
    text: list[str] = field(default_factory=list)
    figures: list[Figure] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    blocks: list[Block] = field(default_factory=list)
    status: str = ""  # "", "done", "pending", "failed"


@dataclass
class Page:
    title: str
    subtitle: list[str] = field(default_factory=list)
    sections: list[Section] = field(default_factory=list)


def _png_size(data: bytes) -> tuple[int, int]:
    if data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) >= 24:
        width, height = struct.unpack(">II", data[16:24])
        return int(width), int(height)
    return 800, 450


def figure(path: str | Path, title: str | None = None, caption: str = "", scale: float = 1.0) -> Figure:
    """Embed the PNG at ``path``."""
    data = Path(path).read_bytes()
    width, height = _png_size(data)
    src = "data:image/png;base64," + base64.b64encode(data).decode("ascii")
    return Figure(title or Path(path).stem, src, int(width * scale), int(height * scale), caption)


@functools.cache
def _template() -> jinja2.Template:
    """The page template, compiled once per process: compiling it took longer than rendering a
    run's page, and `cnsim sweep --plots` renders one page per run."""
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("cnsim.report", "templates"),
        autoescape=jinja2.select_autoescape(["html", "j2"]),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    return env.get_template("report.html.j2")


def render(page: Page) -> str:
    """The page as HTML text."""
    generated = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    return _template().render(page=page, version=__version__, generated=generated)


def write_page(page: Page, path: str | Path) -> Path:
    path = Path(path)
    path.write_text(render(page), encoding="utf-8")
    return path


# ------------------------------------------------------------------------------------------
# Formatting helpers
# ------------------------------------------------------------------------------------------


def summary_rows(summary: dict[str, Any]) -> list[list[Any]]:
    """summary.json as (key, value) rows; per-node and per-flow maps as one row each entry."""
    return [[key, fmt(value)] for key, value in flatten(summary).items()]


# ------------------------------------------------------------------------------------------
# Run reports
# ------------------------------------------------------------------------------------------


def ensure_run_figures(folder: Path, draw: bool = True) -> list[Path]:
    """The run's default figures: those in the folder, else (with ``draw``) drawn from its series."""
    existing = [folder / name for name in FIGURE_FILES if (folder / name).is_file()]
    if existing or not draw:
        return existing
    from ..plots import save_figures  # matplotlib is imported only where figures are drawn

    if not run_complete(folder) or not (folder / SERIES_DIR).is_dir():
        return []
    return save_figures(Result.load(folder), folder)


_CAPTIONS = {
    "throughput": "Aggregate and hot-port throughput versus time; the hotspot window is shaded, the measurement window dotted.",
    "queue": "Hot queue length versus time (the congestion point), with the other recorded queues.",
    "per_flow": "Per-flow throughput versus time; dashed: the max-min fair share over the measurement window.",
}


def run_page(folder: Path, draw: bool = True) -> Page:
    """The page of one run folder."""
    summary = read_json(folder / "summary.json")
    params = read_json(folder / "params.json") or {}
    error = read_json(folder / "error.json")
    manifest = read_json(folder / "manifest.json") or {}
    title = f"{(summary or {}).get('scenario') or params.get('base') or folder.name}"
    subtitle = []
    if summary:
        subtitle.append(f"scheme {summary.get('scheme')} · seed {summary.get('seed')} · window {fmt(summary.get('window_s'))} s · {fmt(summary.get('duration_s'))} s simulated")
    if params:
        subtitle.append(f"sweep {params.get('sweep')} · run {params.get('run_id')} · " + ", ".join(f"{k} = {v}" for k, v in (params.get("params") or {}).items()))
    page = Page(title=f"cnsim run — {title}", subtitle=subtitle)
    if error and not summary:
        page.sections.append(Section("Error", "error", text=[str(error.get("error"))], status="failed",
                                     blocks=[Block("traceback", str(error.get("traceback") or ""))]))
    if summary:
        figs = ensure_run_figures(folder, draw)
        sec = Section("Figures", "figures", figures=[figure(p, p.stem, _CAPTIONS.get(p.stem, "")) for p in figs])
        if not figs:
            sec.text.append("No figures: the run folder has no series (or figures were not requested).")
        page.sections.append(sec)
        headline = [[label, fmt(summary_value(summary, key, scale))] for label, key, scale in HEADLINE]
        per_flow = summary_value(summary, "throughput_gbps.per_flow") or {}
        tables = [Table("Headline metrics (measurement window)", ["metric", "value"], headline)]
        if per_flow:
            tables.append(Table("Per-flow throughput (Gb/s)", ["flow", "Gb/s"], [[k, fmt(v)] for k, v in per_flow.items()]))
        tables.append(Table("summary.json", ["key", "value"], summary_rows(summary)))
        page.sections.append(Section("Summary", "summary", tables=tables))
    blocks = []
    if (folder / "scenario.toml").is_file():
        blocks.append(Block("scenario.toml (resolved)", (folder / "scenario.toml").read_text(encoding="utf-8"), open=False))
    if manifest:
        blocks.append(Block("manifest.json (wall time, speed, versions)", json.dumps(manifest, indent=2, sort_keys=True)))
    page.sections.append(Section("Resolved parameters", "parameters", blocks=blocks))
    return page


def write_run_report(folder: str | Path, draw: bool = True) -> Path:
    """Write ``folder/report.html`` for a run folder."""
    folder = Path(folder)
    return write_page(run_page(folder, draw), folder / REPORT_FILE)


# ------------------------------------------------------------------------------------------
# Sweep reports
# ------------------------------------------------------------------------------------------


def sweep_table(table: Any, keys: list[str], limit: int = 400) -> Table:
    """The sweep table's parameters and headline metrics (one row per point and seed)."""
    names = set(table.column_names)
    cols = ["run_id", *keys, "seed", "status"] + [label for label, key, _ in HEADLINE if key in names]
    rows = []
    data = table.to_pylist()[:limit]
    for r in data:
        row = [r.get("run_id"), *[fmt(r.get(k)) for k in keys], fmt(r.get("seed")), r.get("status") if r.get("status") == "ok" else f"failed: {r.get('error')}"]
        row += [fmt(scaled(r.get(key), scale)) for _label, key, scale in HEADLINE if key in names]
        rows.append(row)
    return Table(f"Runs ({table.num_rows})", cols, rows, text_columns=[0, *range(1, len(keys) + 1), len(keys) + 2])


def sweep_page(folder: Path) -> Page:
    plan = read_json(folder / "sweep.json") or {}
    spec = plan.get("spec") or {}
    keys = [*(spec.get("axes") or {}), *(spec.get("zip") or {})]
    page = Page(
        title=f"cnsim sweep — {spec.get('name', folder.name)}",
        subtitle=[spec.get("description") or "", f"base {spec.get('base')} · {len(plan.get('runs') or [])} runs · seeds {spec.get('seeds')}"],
    )
    figs = sorted(folder.glob("*.png"))
    if figs:
        page.sections.append(Section("Figures", "figures", figures=[figure(p) for p in figs]))
    sec = Section("Sweep table", "table")
    if (folder / "sweep.parquet").is_file():
        import pyarrow.parquet as pq  # a run's page (written by every `cnsim run`) needs no pyarrow

        sec.tables.append(sweep_table(pq.read_table(folder / "sweep.parquet"), keys))
    else:
        sec.text.append("No sweep.parquet yet: the sweep has not run.")
    page.sections.append(sec)
    page.sections.append(Section("Spec", "spec", blocks=[Block("sweep spec (flattened)", json.dumps(spec, indent=2), open=True)]))
    return page


def write_sweep_report(folder: str | Path) -> Path:
    folder = Path(folder)
    return write_page(sweep_page(folder), folder / REPORT_FILE)


def write_run_reports(folder: str | Path) -> list[Path]:
    """``report.html`` in every run folder under ``folder`` that has none yet (a sweep's runs,
    after ``cnsim sweep --plots``: the sweep engine itself draws no pages)."""
    return [write_run_report(run) for run in find_run_folders(Path(folder)) if not (run / REPORT_FILE).is_file()]
