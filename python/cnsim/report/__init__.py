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
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._version import __version__
from ..errors import ScenarioError, format_value, missing
from ..labels import HEADLINE, fmt, scaled, summary_value
from ..results import SERIES_KINDS, Result
from ..rundir import (
    ERROR_FILE,
    FIGURE_FILES,
    MANIFEST_FILE,
    PARAMS_FILE,
    REPORT_FILE,
    SCENARIO_FILE,
    SERIES_DIR,
    SUMMARY_FILE,
    SWEEP_PLAN_FILE,
    SWEEP_TABLE_FILE,
    damaged,
    find_run_folders,
    flatten,
    parquet_whole,
    read_json_checked,
    run_complete,
    write_text_atomic,
)

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
    "summary_problem",
    "missing_scenario_notice",
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


_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def figure(path: str | Path, title: str | None = None, caption: str = "", scale: float = 1.0) -> Figure:
    """Embed the PNG at ``path`` (a file that is not a PNG image is refused, naming it)."""
    data = Path(path).read_bytes()
    if data[:8] != _PNG_SIGNATURE or len(data) < 24:
        raise damaged(Path(path), "not a PNG image" if data else "empty", "a PNG figure",
                      "Remove or replace it (`cnsim report` draws a run folder's missing figures again from its series).")
    width, height = _png_size(data)
    src = "data:image/png;base64," + base64.b64encode(data).decode("ascii")
    return Figure(title or Path(path).stem, src, int(width * scale), int(height * scale), caption)


@functools.cache
def _template() -> jinja2.Template:
    """The page template, compiled once per process: compiling it took longer than rendering a
    run's page, and `cnsim sweep --plots` renders one page per run. Across processes the
    compiled code is kept in Jinja's bytecode cache (:func:`_bytecode_cache`)."""
    return _environment(_bytecode_cache()).get_template("report.html.j2")


def _environment(cache: jinja2.BytecodeCache | None) -> jinja2.Environment:
    import jinja2

    return jinja2.Environment(
        loader=jinja2.PackageLoader("cnsim.report", "templates"),
        autoescape=jinja2.select_autoescape(["html", "j2"]),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        bytecode_cache=cache,
    )


def _bytecode_cache(directory: str | None = None) -> jinja2.BytecodeCache | None:
    """Jinja's file cache of compiled templates (in ``directory``, by default Jinja's private
    per-user folder under the temporary directory), so that a process loads the page's code
    instead of compiling the template: every ``cnsim run`` writes a page, and compiling it took
    8–13 ms of a 10 ms run's 0.3 s outside the engine (issue 14; loading it takes 0.7 ms). An entry is keyed by the
    template's source checksum and Jinja's version, so an edited template or another Jinja
    compiles afresh. The cache is an optimisation only: a folder that cannot be made, written or
    read, or an entry that does not load, means the template is compiled as before."""
    from jinja2.bccache import Bucket, FileSystemBytecodeCache

    class TolerantCache(FileSystemBytecodeCache):
        def load_bytecode(self, bucket: Bucket) -> None:
            try:
                super().load_bytecode(bucket)
            except Exception:  # a damaged entry: compile, and the dump replaces it
                bucket.reset()

        def dump_bytecode(self, bucket: Bucket) -> None:
            try:
                super().dump_bytecode(bucket)
            except OSError:
                pass

    try:
        return TolerantCache(directory)
    except (OSError, RuntimeError):  # Jinja refuses a default folder it cannot make private
        return None


def load_template() -> None:
    """Load the page template ahead of the first page: `cnsim run` does it while the engine
    runs, so that Jinja's import and the template's load cost no wall time on a second core."""
    _template()


def render(page: Page) -> str:
    """The page as HTML text."""
    generated = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    return _template().render(page=page, version=__version__, generated=generated)


def write_page(page: Page, path: str | Path) -> Path:
    """Render ``page`` to ``path``, whole or not at all: a check or reproduction folder is
    resumed in place, and its report.html, rewritten on every start, was left empty or cut short
    by a command killed while writing it."""
    path = Path(path)
    write_text_atomic(path, render(page))
    return path


# ------------------------------------------------------------------------------------------
# Formatting helpers
# ------------------------------------------------------------------------------------------


#: rows of one map (per node, per flow …) shown on a run's page; the rest are counted
MAX_MAP_ROWS = 64


def summary_rows(summary: dict[str, Any]) -> list[list[Any]]:
    """summary.json as (key, value) rows; per-node and per-flow maps as one row each entry, up
    to :data:`MAX_MAP_ROWS` per map and then one row counting the rest (``per_flow = "all"``
    on 2,048 hosts records 4 million flows: summary.json has them all, a page cannot)."""
    rows: list[list[Any]] = []
    shown: dict[str, int] = {}
    hidden: dict[str, int] = {}
    for key, value in flatten(summary).items():
        parent = key.rpartition(".")[0]
        if shown.get(parent, 0) >= MAX_MAP_ROWS:
            if parent not in hidden:
                rows.append([f"{parent}.…", ""])
                hidden[parent] = len(rows) - 1
            shown[parent] += 1
            continue
        shown[parent] = shown.get(parent, 0) + 1
        rows.append([key, fmt(value)])
    for parent, at in hidden.items():
        more = shown[parent] - MAX_MAP_ROWS
        rows[at][1] = f"{more:,} more in summary.json"
    return rows


# ------------------------------------------------------------------------------------------
# Run reports
# ------------------------------------------------------------------------------------------


#: what to do with a damaged run folder
_RUN_FIX = "Run it again (`cnsim run ID --out DIR --force`; in a sweep, resume the sweep after removing the run folder)."


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _number_or_null(value: Any) -> bool:
    return value is None or _is_number(value)


def summary_problem(summary: Any) -> tuple[str, Any, str] | None:
    """The first thing a report cannot read in a run's summary.json: ``(key, value, what is
    allowed)`` (the value :func:`cnsim.errors.missing` for an absent key), or None when it is
    fine. Checks the contract's required keys (``scenario``, ``scheme``, ``seed``,
    ``duration_s``, ``window_s``, ``throughput_gbps``) and the type of every part the page,
    the figures and the fairness figures read."""
    if not isinstance(summary, dict):
        return "(document)", summary, 'a JSON object ({"scenario": …, "scheme": …, "throughput_gbps": {…}, …}, contract "summary.json")'
    checks: list[tuple[str, Callable[[Any], bool], str]] = [
        ("scenario", lambda v: isinstance(v, str) and v != "", "the scenario id (text)"),
        ("scheme", lambda v: isinstance(v, str), 'the scheme name (text, e.g. "bcn")'),
        ("seed", lambda v: isinstance(v, int) and not isinstance(v, bool), "a whole number"),
        ("duration_s", _is_number, "the simulated time in seconds (a number)"),
        ("window_s", lambda v: isinstance(v, list) and len(v) == 2 and all(_is_number(x) for x in v),
         "the measurement window [start_s, end_s] (two numbers)"),
        ("throughput_gbps", lambda v: isinstance(v, dict),
         'a table of throughputs in Gb/s ({"aggregate": …, "hot_port": …, "per_node": {…}, "per_flow": {…}})'),
    ]
    for key, ok, allowed in checks:
        value = summary.get(key, missing())
        if value is missing():
            return key, value, f"{allowed}; the key is required"
        if not ok(value):
            return key, value, allowed
    tp = summary["throughput_gbps"]
    for key in ("aggregate", "hot_port"):
        if not _number_or_null(tp.get(key)):
            return f"throughput_gbps.{key}", tp[key], "a number (Gb/s) or null"
    for key in ("per_node", "per_flow", "per_source_sent"):
        table = tp.get(key)
        if table is None:
            continue
        if not isinstance(table, dict):
            return f"throughput_gbps.{key}", table, "a table of numbers (Gb/s) by name"
        for name, value in table.items():
            if not _number_or_null(value):
                return f"throughput_gbps.{key}.{name}", value, "a number (Gb/s) or null"
    for key in ("queue_bytes", "drops", "cm", "fairness"):
        if summary.get(key) is not None and not isinstance(summary[key], dict):
            return key, summary[key], "a table (JSON object) or null"
    for _label, dotted, _scale in HEADLINE:
        value = summary_value(summary, dotted)
        if not _number_or_null(value):
            return dotted, value, "a number or null"
    return None


def _check_summary(path: Path, summary: Any) -> dict[str, Any]:
    """``summary`` when a report can read it, else the error naming the file and the key."""
    found = summary_problem(summary)
    if found is None:
        return dict(summary)
    key, value, allowed = found
    given = "is missing" if value is missing() else f"is {format_value(value)}"
    raise damaged(path, f"the document {given}" if key == "(document)" else f'"{key}" {given}', allowed, _RUN_FIX)


def _read_object(path: Path, expected: str, fix: str) -> dict[str, Any] | None:
    """A JSON object file of a results folder: None when missing, refused when damaged."""
    doc = read_json_checked(path, expected, fix)
    if doc is not None and not isinstance(doc, dict):
        raise damaged(path, f"the document is {format_value(doc)}", expected, fix)
    return doc


def _read_text(path: Path, expected: str, fix: str) -> str | None:
    """A text file of a results folder: None when missing, refused when it is not UTF-8."""
    if not path.is_file():
        return None
    data = path.read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise damaged(path, f"not UTF-8 text (byte 0x{data[err.start]:02x} at offset {err.start})", expected, fix) from None


def _read_scenario_toml(folder: Path) -> str | None:
    """The run's resolved scenario.toml (None if absent); refused when it is not UTF-8 TOML."""
    import tomllib

    path = folder / SCENARIO_FILE
    text = _read_text(path, "the resolved scenario (TOML)", _RUN_FIX)
    if text is not None:
        try:
            tomllib.loads(text)
        except tomllib.TOMLDecodeError as err:
            raise damaged(path, f"not valid TOML ({err})", "the resolved scenario (TOML)", _RUN_FIX) from None
    return text


def _check_series(folder: Path) -> None:
    """Refuse a series file that is not a Parquet file (the magic bytes and footer length; read
    without pyarrow, which a run's page does not need — issue 14)."""
    directory = folder / SERIES_DIR
    if not directory.is_dir():
        return
    for path in sorted(directory.glob("*.parquet")):
        if not parquet_whole(path):
            size = path.stat().st_size
            kind = path.stem
            cols = SERIES_KINDS.get(kind)
            what = f"the {kind} series (Parquet: t_s, {cols[0]}, {', '.join(cols[1])})" if cols else "a Parquet series"
            raise damaged(path, "empty" if size == 0 else f"not a Parquet file ({size} bytes)", what, _RUN_FIX)


def ensure_run_figures(folder: Path, draw: bool = True) -> list[Path]:
    """The run's default figures: those in the folder, else (with ``draw``) drawn from its series."""
    existing = [folder / name for name in FIGURE_FILES if (folder / name).is_file()]
    if existing or not draw:
        return existing
    if not run_complete(folder) or not (folder / SERIES_DIR).is_dir() or not (folder / SCENARIO_FILE).is_file():
        return []
    import pyarrow as pa

    from ..plots import save_figures  # matplotlib is imported only where figures are drawn

    try:
        result = Result.load(folder)
    except ScenarioError as err:  # the resolved scenario no longer validates (edited by hand, another version)
        if str(folder) in str(err):  # already names the file
            raise
        raise damaged(folder / SCENARIO_FILE, f"it does not resolve ({err})", "the resolved scenario the run simulated", _RUN_FIX) from None
    import pyarrow.parquet as pq

    for kind, (entity, values) in SERIES_KINDS.items():  # the columns the figures read
        path = folder / SERIES_DIR / f"{kind}.parquet"
        if not path.is_file():
            continue
        expected = f"the {kind} series (Parquet: t_s, {entity}, {', '.join(values)})"
        try:
            names = pq.read_schema(path).names
        except (pa.ArrowException, OSError) as err:
            raise damaged(path, f"not a readable Parquet file ({err})", expected, _RUN_FIX) from None
        lacking = [c for c in ("t_s", entity, values[0]) if c not in names]
        if lacking:
            raise damaged(path, f"no column {', '.join(lacking)} (it has {', '.join(names) or 'none'})", expected, _RUN_FIX)
    try:
        return save_figures(result, folder)
    except (pa.ArrowException, KeyError, IndexError) as err:  # a series file that reads but holds something else
        raise damaged(folder / SERIES_DIR, f"a series does not read ({type(err).__name__}: {err})",
                      "the series written by `cnsim run` (contract \"series\")", _RUN_FIX) from None


_CAPTIONS = {
    "throughput": "Aggregate and hot-port throughput versus time; the hotspot window is shaded, the measurement window dotted.",
    "queue": "Hot queue length versus time (the congestion point), with the other recorded queues.",
    "per_flow": "Per-flow throughput versus time; dashed: the max-min fair share over the measurement window.",
}


def run_page(folder: Path, draw: bool = True) -> Page:
    """The page of one run folder. A damaged file (JSON that does not parse or has the wrong
    shape, a scenario.toml that is not UTF-8 TOML, a series that is not Parquet, a figure that
    is not a PNG) is refused with a :class:`ScenarioError` naming it; missing optional files
    (params.json, manifest.json, figures) are not an error."""
    summary_doc = read_json_checked(folder / SUMMARY_FILE, "the run's summary (a JSON object)", _RUN_FIX)
    summary = _check_summary(folder / SUMMARY_FILE, summary_doc) if summary_doc is not None else None
    params = _read_object(folder / PARAMS_FILE, "the sweep point of this run (a JSON object)", _RUN_FIX) or {}
    error = _read_object(folder / ERROR_FILE, 'the failed run\'s error (a JSON object {"error": …, "traceback": …})', _RUN_FIX)
    manifest = _read_object(folder / MANIFEST_FILE, "the run's manifest (a JSON object)", _RUN_FIX) or {}
    if summary is None and error is None:
        raise ScenarioError(f"{folder / SUMMARY_FILE}: missing: the run did not finish (a run folder holds "
                            f"{SUMMARY_FILE}, a failed sweep run {ERROR_FILE}). {_RUN_FIX}")
    scenario_text = _read_scenario_toml(folder)
    _check_series(folder)
    title = f"{(summary or {}).get('scenario') or params.get('base') or folder.name}"
    subtitle = []
    if summary:
        subtitle.append(f"scheme {summary.get('scheme')} · seed {summary.get('seed')} · window {fmt(summary.get('window_s'))} s · {fmt(summary.get('duration_s'))} s simulated")
    if params:
        point = params.get("params")
        subtitle.append(f"sweep {params.get('sweep')} · run {params.get('run_id')} · "
                        + (", ".join(f"{k} = {v}" for k, v in point.items()) if isinstance(point, dict) else ""))
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
    if scenario_text is not None:
        blocks.append(Block("scenario.toml (resolved)", scenario_text, open=False))
    if manifest:
        blocks.append(Block("manifest.json (wall time, speed, versions)", json.dumps(manifest, indent=2, sort_keys=True)))
    params_section = Section("Resolved parameters", "parameters", blocks=blocks)
    if scenario_text is None and summary:
        params_section.text.append(missing_scenario_notice(folder))
    page.sections.append(params_section)
    return page


def missing_scenario_notice(folder: Path) -> str:
    """What a run page says (and ``cnsim report`` warns) when the run's resolved scenario is gone."""
    return (f"{folder / SCENARIO_FILE} is missing: the parameters this run simulated are unknown, so its results "
            "cannot be reproduced from this folder. Run the scenario again to have it written.")


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


#: what to do with a sweep folder whose plan or table is damaged
_SWEEP_FIX = "Run the sweep again into a new folder (`cnsim sweep SPEC --out NEWDIR`)."


def _sweep_plan(folder: Path) -> dict[str, Any]:
    """The sweep's plan (sweep.json), refused when damaged: not JSON, or not the object
    {"spec": {…}, "runs": […]} the sweep engine writes before it runs anything."""
    path = folder / SWEEP_PLAN_FILE
    expected = 'the sweep\'s plan (a JSON object {"spec": {…}, "source": …, "runs": […]})'
    plan = _read_object(path, expected, _SWEEP_FIX)
    if plan is None:  # build_report picks a sweep only when sweep.json is there
        raise ScenarioError(f"{path}: missing: not a sweep folder")
    spec = plan.get("spec", missing())
    if not isinstance(spec, dict):
        given = "is missing" if spec is missing() else f"is {format_value(spec)}"
        raise damaged(path, f'"spec" {given}', "the sweep spec as a JSON object", _SWEEP_FIX)
    for key in ("axes", "zip"):
        if spec.get(key) is not None and not isinstance(spec[key], dict):
            raise damaged(path, f'"spec.{key}" is {format_value(spec[key])}', "a table of swept keys (JSON object) or null", _SWEEP_FIX)
    runs = plan.get("runs")
    if runs is not None and not isinstance(runs, list):
        raise damaged(path, f'"runs" is {format_value(runs)}', "the list of the sweep's runs", _SWEEP_FIX)
    return plan


def sweep_page(folder: Path) -> Page:
    """The page of a sweep folder: its table (sweep.parquet) and spec. A sweep stopped before
    its table was written (an interrupted coordinator) is a page that says so, with the runs
    completed so far; a damaged sweep.json or sweep.parquet is refused, naming the file."""
    plan = _sweep_plan(folder)
    spec = plan["spec"]
    keys = [*(spec.get("axes") or {}), *(spec.get("zip") or {})]
    page = Page(
        title=f"cnsim sweep — {spec.get('name', folder.name)}",
        subtitle=[str(spec.get("description") or ""), f"base {spec.get('base')} · {len(plan.get('runs') or [])} runs · seeds {spec.get('seeds')}"],
    )
    figs = sorted(folder.glob("*.png"))
    if figs:
        page.sections.append(Section("Figures", "figures", figures=[figure(p) for p in figs]))
    sec = Section("Sweep table", "table")
    table_path = folder / SWEEP_TABLE_FILE
    if table_path.is_file():
        import pyarrow as pa
        import pyarrow.parquet as pq  # a run's page (written by every `cnsim run`) needs no pyarrow

        try:
            table = pq.read_table(table_path)
        except (pa.ArrowException, OSError) as err:
            raise damaged(table_path, f"not a readable Parquet table ({err})", "the sweep table written by `cnsim sweep`",
                          "Resume the sweep (`cnsim sweep SPEC --out DIR`): the table is rebuilt from the run folders.") from None
        sec.tables.append(sweep_table(table, keys))
    else:
        done = len([p for p in find_run_folders(folder / "runs") if run_complete(p)]) if (folder / "runs").is_dir() else 0
        sec.text.append(f"No sweep.parquet yet: the sweep has not finished ({done} run folders complete, "
                        f"{len(plan.get('runs') or [])} runs planned); resume it with the same command and --out to build the table.")
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
