"""The run folder, the one layout every part of cnsim reads and writes (contract "A run folder"):
its file names, reading its JSON files, whether a run is complete, its content id, and the
rows a sweep table or the catalog is made of. `cnsim run`, the sweep engine, the catalog, the
reports and the deck reproductions all go through here.

A run folder holds ``scenario.toml``, ``summary.json``, ``manifest.json``, ``series/*.parquet``
(and, drawn on request, figures and ``report.html``); a sweep's run folders
(``<sweep>/runs/<run_id>/``) add ``params.json`` and, for a failed run, ``error.json``. A sweep
folder holds ``sweep.json`` (the plan) and ``sweep.parquet`` (the table).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import uuid
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._version import RESULTS_VERSION
from .errors import ScenarioError, shorten
from .scenario import Scenario

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = [
    "SUMMARY_FILE",
    "MANIFEST_FILE",
    "SCENARIO_FILE",
    "PARAMS_FILE",
    "ERROR_FILE",
    "SERIES_DIR",
    "SERIES_NAMES",
    "REPORT_FILE",
    "FIGURE_FILES",
    "SWEEP_PLAN_FILE",
    "SWEEP_TABLE_FILE",
    "TMP_PREFIX",
    "read_json",
    "read_json_checked",
    "damaged",
    "reading_series",
    "run_complete",
    "parquet_whole",
    "run_current",
    "results_version",
    "run_reusable",
    "publish",
    "write_text_atomic",
    "run_id_of",
    "flatten",
    "read_run",
    "rows_table",
    "find_run_folders",
]

SUMMARY_FILE = "summary.json"
MANIFEST_FILE = "manifest.json"
SCENARIO_FILE = "scenario.toml"
SERIES_DIR = "series"
#: the series every run writes into SERIES_DIR, one ``<name>.parquet`` each, empty or not (their
#: columns: cnsim.results.SERIES_KINDS, a layer above this one)
SERIES_NAMES = ("throughput", "queue", "drops", "pause", "cm", "rates")
REPORT_FILE = "report.html"
#: the default figures of a run folder (drawn by cnsim.plots)
FIGURE_FILES = ("throughput.png", "queue.png", "per_flow.png")
#: files of a run folder written by a sweep (besides the run folder of contract "A run folder")
PARAMS_FILE = "params.json"
ERROR_FILE = "error.json"
SWEEP_PLAN_FILE = "sweep.json"
SWEEP_TABLE_FILE = "sweep.parquet"
#: prefix of a run folder being written (renamed to its run id when complete)
TMP_PREFIX = ".tmp-"


def read_json(path: Path) -> Any:
    """The JSON document at ``path``, or None when it is missing or does not parse (for the
    sweep engine, to which both mean "run it again"; a reader that must tell a damaged file
    from a missing one uses :func:`read_json_checked`)."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def damaged(path: Path, problem: str, expected: str, fix: str = "") -> ScenarioError:
    """The bad-input error (exit 2) for a damaged file of a results folder: one line naming the
    file, what is wrong with it and what it should hold (and, with ``fix``, what to do)."""
    return ScenarioError(f"{path}: damaged: {problem}; expected {expected}." + (f" {fix}" if fix else ""))


@contextmanager
def reading_series(path: Path, fix: str) -> Iterator[None]:
    """Read the series file ``path`` inside this block: pyarrow's failure on a file damaged
    inside (a flipped byte in a page: its ends are whole, :func:`parquet_whole` passes it) becomes
    the bad-input error naming the file and what to do (``fix``). It was pyarrow's own text, as
    "cnsim: I/O error: Couldn't deserialize thrift: … Deserializing page header failed." on two
    lines, naming no file. An error of the file system (it has an errno) goes on as it is."""
    import pyarrow as pa

    try:
        yield
    except (OSError, pa.ArrowException) as err:
        if isinstance(err, OSError) and err.errno is not None:
            raise
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise damaged(path, f"it does not read as Parquet ({shorten(first, 120)})", "the series a run writes", fix) from None


def read_json_checked(path: Path, expected: str = "a JSON document written by cnsim", fix: str = "") -> Any:
    """The JSON document at ``path``; None when there is no such file; a :class:`ScenarioError`
    naming the file (exit 2) when it is there but is not UTF-8 JSON (truncated, overwritten)."""
    if not path.is_file():
        return None
    data = path.read_bytes()  # other I/O errors (permissions) propagate as OSError, with the file name
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise damaged(path, f"not UTF-8 text (byte 0x{data[err.start]:02x} at offset {err.start})", expected, fix) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        what = "empty" if not text.strip() else f"not valid JSON ({err.msg} at line {err.lineno} column {err.colno})"
        raise damaged(path, what, expected, fix) from None
    except ValueError as err:  # e.g. a number too long to convert
        raise damaged(path, f"not valid JSON ({err})", expected, fix) from None


def run_complete(folder: Path) -> bool:
    """A finished run folder: its summary.json reads as a JSON object (a truncated or
    corrupted file, or a folder without one, is not finished)."""
    summary = read_json(folder / SUMMARY_FILE)
    return isinstance(summary, dict) and "scenario" in summary


#: the four bytes a Parquet file starts and ends with
_PARQUET_MAGIC = b"PAR1"


def parquet_whole(path: Path) -> bool:
    """Whether the Parquet file at ``path`` is whole: its magic at both ends and a footer (the
    file's metadata, never empty) that fits in it. Reads twelve bytes, without pyarrow (a run's
    page does not import it, issue 14): it finds a truncated, emptied or overwritten file (the
    damage a full disk or a killed copy leaves), not a flipped byte inside, which reading finds."""
    try:
        with path.open("rb") as f:
            head = f.read(4)
            size = f.seek(0, os.SEEK_END)
            if size < 12:
                return False
            f.seek(size - 8)
            tail = f.read(8)
    except OSError:
        return False
    footer = int.from_bytes(tail[:4], "little")
    return head == _PARQUET_MAGIC and tail[4:] == _PARQUET_MAGIC and 0 < footer <= size - 12


def results_version(folder: Path) -> str | None:
    """The version of the results a run folder's manifest names (``versions.results``; "0" for a
    manifest written before the results had a version), or None when the manifest is missing or
    does not read: damage, not another version."""
    manifest = read_json(folder / MANIFEST_FILE)
    if not isinstance(manifest, dict):
        return None
    versions = manifest.get("versions")
    version = versions.get("results") if isinstance(versions, dict) else None
    return version if isinstance(version, str) else "0"


def run_current(folder: Path) -> bool:
    """Whether the run folder was made by this version of the results (its manifest's
    ``versions.results`` is :data:`RESULTS_VERSION`): a run made before a change to the model or
    to its measurements holds results this cnsim would not give."""
    return results_version(folder) == str(RESULTS_VERSION)


def run_reusable(folder: Path) -> bool:
    """A finished run a sweep keeps instead of running it again: complete, made by this version
    of the results (an older run is run again: the run id names the scenario and seed, not the
    model), its scenario.toml there, and every series file there and whole (a damaged or missing
    one — a partial copy, a file removed — is run again, not left for the catalog, the pages and
    the checks to trip on)."""
    return (run_complete(folder) and run_current(folder) and (folder / SCENARIO_FILE).is_file()
            and all(parquet_whole(folder / SERIES_DIR / f"{name}.parquet") for name in SERIES_NAMES))


def write_text_atomic(path: Path, text: str) -> None:
    """Write ``path`` whole or not at all: into a hidden sibling, renamed over it when written. A
    sweep's ``sweep.json`` and a reproduction's ``deck.json`` are rewritten at every start (the
    deck's after every study) and read back to decide whether a folder may be resumed: one cut
    short by Ctrl-C, SIGTERM or ``kill -9`` made the folder "damaged", resumable only with
    ``--force``, which deletes its runs."""
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def publish(tmp: Path, final: Path) -> None:
    """Rename the completed temporary folder into place (replacing a failed or damaged attempt)."""
    if final.exists():
        if run_reusable(final):  # someone else completed it: keep theirs
            shutil.rmtree(tmp, ignore_errors=True)
            return
        shutil.rmtree(final, ignore_errors=True)
    os.replace(tmp, final)


def run_id_of(scen: Scenario) -> str:
    """Content hash of the resolved scenario and seed: sha256 of the sorted core config + id."""
    core = scen.core_config()
    canonical = json.dumps({"scenario": scen.id, "seed": core.get("seed"), "core": core}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]


def flatten(obj: Any, prefix: str = "") -> dict[str, Any]:
    """Nested dicts → dotted keys (lists kept as values)."""
    out: dict[str, Any] = {}
    if isinstance(obj, dict):
        for key, value in obj.items():
            dotted = f"{prefix}.{key}" if prefix else str(key)
            if isinstance(value, dict):
                out.update(flatten(value, dotted))
            else:
                out[dotted] = value
    return out


def read_run(folder: Path) -> dict[str, Any] | None:
    """One row of a sweep table from a run folder (None for a folder that is not a run)."""
    params = read_json(folder / PARAMS_FILE) or {}
    summary = read_json(folder / SUMMARY_FILE)
    error = read_json(folder / ERROR_FILE)
    if summary is None and error is None:
        return None
    row: dict[str, Any] = {
        "run_id": params.get("run_id", folder.name),
        "sweep": params.get("sweep"),
        "seed": params.get("seed", (summary or {}).get("seed")),
        "status": "ok" if summary is not None else "failed",
        "error": None if summary is not None else (error or {}).get("error"),
    }
    for key, value in (params.get("params") or {}).items():
        row[key] = value
    if summary is not None:
        for key, value in flatten(summary).items():
            if key not in ("seed",):
                row[key] = value
        row.update(manifest_columns(read_json(folder / MANIFEST_FILE) or {}))
    return row


#: the manifest's wall-clock figures a sweep table carries (contract "summary.json")
MANIFEST_KEYS = ("wall_s", "sim_s_per_wall_s", "events_per_s", "peak_rss_bytes", "host")


def manifest_columns(manifest: dict[str, Any]) -> dict[str, Any]:
    """A run's ``manifest.*`` columns: its wall-clock figures and, flattened, its versions —
    the contract sends both to sweep tables, so that a table says which cnsim made each row."""
    columns = {f"manifest.{key}": manifest[key] for key in MANIFEST_KEYS if key in manifest}
    versions = manifest.get("versions")
    if isinstance(versions, dict):
        columns.update(flatten(versions, "manifest.versions"))
    return columns


#: the columns of a run table that hold text (the others hold a run's numbers or its parameters)
TEXT_COLUMNS = ("run_id", "sweep", "status", "error", "path")


def _column(values: list[Any], text: bool = False) -> pa.Array[Any]:
    """One column with a single type: numbers stay numbers; mixed with text, all text. A column
    with no value at all (no run failed: `error`; a metric no run measured) is typed as text or
    as a number, not as Arrow's null type, so that the tables of two sweeps concatenate."""
    import pyarrow as pa  # only tables need it; a run folder does not (issue 14)

    present = [v for v in values if v is not None]
    if not present:
        return pa.array(values, type=pa.string() if text else pa.float64())
    if any(isinstance(v, str) for v in present) and not all(isinstance(v, str) for v in present):
        values = [None if v is None else (v if isinstance(v, str) else json.dumps(v)) for v in values]
    elif any(isinstance(v, (dict, list)) for v in present) and not all(isinstance(v, list) for v in present):
        values = [None if v is None else json.dumps(v, sort_keys=True) for v in values]
    elif present and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in present):
        if any(isinstance(v, float) for v in present):
            values = [None if v is None else float(v) for v in values]
    try:
        array: pa.Array[Any] = pa.array(values)
        return array
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return pa.array([None if v is None else json.dumps(v, sort_keys=True) for v in values], type=pa.string())


def rows_table(rows: list[dict[str, Any]], first: Iterable[str] = ()) -> pa.Table:
    """Rows (dicts) → a table with the union of columns, ``first`` columns leading."""
    import pyarrow as pa

    order: dict[str, None] = dict.fromkeys(first)
    for row in rows:
        order.update(dict.fromkeys(row))
    columns = {name: _column([row.get(name) for row in rows], name in TEXT_COLUMNS) for name in order}
    return pa.table(columns) if columns else pa.table({"run_id": pa.array([], pa.string())})


def find_run_folders(root: Path) -> list[Path]:
    """Run folders under ``root`` (a folder with summary.json or a sweep's error.json), sorted."""
    found: list[Path] = []
    for here, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "series")
        if SUMMARY_FILE in files or (ERROR_FILE in files and PARAMS_FILE in files):
            found.append(Path(here))
            dirs[:] = []
    return sorted(found)
