"""The run catalog: an embedded DuckDB file indexing every run folder under a results folder.

``build(root)`` scans ``root`` for run folders (contract "A run folder"; a sweep's are
``<sweep>/runs/<run_id>/``, a ``cnsim run``'s anywhere) and writes ``root/catalog.duckdb`` with

* ``runs`` — one row per run: ``run_id`` (the content hash of :func:`cnsim.rundir.run_id_of`),
  ``sweep``, ``sweep_dir``, ``scenario``, ``scheme``, ``seed``, ``status`` (``ok``/``failed``),
  ``error``, ``path`` (absolute), ``params`` (JSON of the swept keys), ``summary`` and
  ``manifest`` (JSON), and every scalar summary metric as a column named by its dotted key
  (``"throughput_gbps.aggregate"``; per-node and per-flow maps stay in the JSON);
* ``sweeps`` — one row per sweep folder: name, folder, base scenario, the spec (JSON), runs;
* views ``throughput``, ``queue``, ``drops``, ``pause``, ``cm``, ``rates`` — the Parquet series
  of every run in long format with its ``run_id`` (read in place, nothing copied).

The run folders are the source of truth: the catalog is rebuilt from them (into a temporary file
renamed over the old one), only by the coordinating process. Query it in SQL
(``duckdb results/catalog.duckdb``) or from Python with :func:`connect` / :func:`runs`.
"""

from __future__ import annotations

import json
import os
import time
import tomllib
import uuid
from pathlib import Path
from typing import Any

import pyarrow as pa

from .errors import ScenarioError, format_value, shorten
from .results import SERIES_KINDS
from .rundir import (
    ERROR_FILE,
    MANIFEST_FILE,
    PARAMS_FILE,
    SCENARIO_FILE,
    SERIES_DIR,
    SUMMARY_FILE,
    SWEEP_PLAN_FILE,
    damaged,
    find_run_folders,
    flatten,
    parquet_whole,
    read_json,
    rows_table,
    run_id_of,
)

__all__ = ["CATALOG_FILE", "build", "connect", "runs", "find_run_folders"]

CATALOG_FILE = "catalog.duckdb"
_MAP_KEYS = ("throughput_gbps.per_node.", "throughput_gbps.per_flow.")


def _content_id(folder: Path, scenario_id: str | None) -> str:
    """The content hash of a run folder that was not written by a sweep (``cnsim run``)."""
    from .scenario import Scenario

    try:
        doc = tomllib.loads((folder / SCENARIO_FILE).read_text(encoding="utf-8"))
        return run_id_of(Scenario(doc, scenario_id or folder.name, str(folder)))
    except Exception:  # noqa: BLE001 - a folder from another version: index it by name
        return folder.name


def _run_row(folder: Path, root: Path) -> dict[str, Any]:
    params = read_json(folder / PARAMS_FILE) or {}
    summary = read_json(folder / SUMMARY_FILE)
    error = read_json(folder / ERROR_FILE)
    manifest = read_json(folder / MANIFEST_FILE) or {}
    sweep_dir = folder.parent.parent if folder.parent.name == "runs" and PARAMS_FILE in os.listdir(folder) else None
    row: dict[str, Any] = {
        "run_id": params.get("run_id") or _content_id(folder, (summary or {}).get("scenario")),
        "sweep": params.get("sweep"),
        "sweep_dir": str(sweep_dir.relative_to(root)) if sweep_dir is not None else None,
        "scenario": (summary or {}).get("scenario") or params.get("base"),
        "scheme": (summary or {}).get("scheme"),
        "seed": params.get("seed", (summary or {}).get("seed")),
        "status": "ok" if summary is not None else "failed",
        "error": None if summary is not None else (error or {}).get("error"),
        "path": str(folder.resolve()),
        "params": json.dumps(params.get("params") or {}, sort_keys=True),
        "summary": json.dumps(summary, sort_keys=True) if summary is not None else None,
        "manifest": json.dumps(manifest, sort_keys=True),
        "wall_s": manifest.get("wall_s"),
    }
    for key, value in flatten(summary or {}).items():
        if key in ("scenario", "scheme", "seed") or key.startswith(_MAP_KEYS):
            continue
        row[key] = value
    return row


def _sweep_rows(root: Path) -> list[dict[str, Any]]:
    rows = []
    for path in sorted(root.rglob(SWEEP_PLAN_FILE)):
        doc = read_json(path) or {}
        spec = doc.get("spec") or {}
        rows.append(
            {
                "name": spec.get("name"),
                "sweep_dir": str(path.parent.relative_to(root)),
                "base": spec.get("base"),
                "spec": json.dumps(spec, sort_keys=True),
                "runs": len(doc.get("runs") or []),
            }
        )
    return rows


def _first_line(err: Exception, limit: int = 200) -> str:
    """The first line of a DuckDB error (its message; the rest is a caret under the SQL)."""
    return shorten(str(err).splitlines()[0] if str(err) else type(err).__name__, limit)


def _sql_str(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def build(root: str | Path, name: str = CATALOG_FILE) -> Path:
    """(Re)build ``root/catalog.duckdb`` from the run folders under ``root``; returns its path."""
    import duckdb

    root = Path(root).resolve()
    folders = find_run_folders(root)
    for series in (f / SERIES_DIR / f"{kind}.parquet" for f in folders for kind in SERIES_KINDS):
        if series.exists() and not parquet_whole(series):  # DuckDB would refuse the whole view
            raise damaged(series, "not a whole Parquet file (truncated or overwritten)", "the series a run writes",
                          "Delete its run folder: `cnsim sweep` and `cnsim check` run it again.")
    table = rows_table([_run_row(f, root) for f in folders], ["run_id", "sweep", "sweep_dir", "scenario", "scheme", "seed", "status", "error", "path"])
    sweeps = rows_table(_sweep_rows(root), ["name", "sweep_dir", "base", "spec", "runs"])
    final = root / name
    _remove_stale(root, name)
    tmp = root / f".{name}.{uuid.uuid4().hex[:8]}"
    con = duckdb.connect(str(tmp))
    ok = False
    try:
        con.register("runs_arrow", table)
        con.execute("CREATE TABLE runs AS SELECT * FROM runs_arrow")
        con.unregister("runs_arrow")
        con.register("sweeps_arrow", sweeps)
        con.execute("CREATE TABLE sweeps AS SELECT * FROM sweeps_arrow")
        con.unregister("sweeps_arrow")
        for kind in SERIES_KINDS:
            if not any((f / SERIES_DIR / f"{kind}.parquet").is_file() for f in folders):
                continue
            glob = _sql_str(f"{root.as_posix()}/**/series/{kind}.parquet")
            suffix = _sql_str(f"/series/{kind}\\.parquet$")
            try:
                con.execute(
                    f"CREATE VIEW {kind} AS SELECT r.run_id, s.* EXCLUDE (filename) "
                    f"FROM read_parquet({glob}, filename = true) s "
                    f"JOIN runs r ON r.path = regexp_replace(s.filename, {suffix}, '')"
                )
            except duckdb.Error as err:  # whole at both ends, damaged inside
                raise ScenarioError(
                    f"{root}: the {kind} series of its runs cannot be read ({_first_line(err)}); delete the run folder "
                    "that holds the damaged file: `cnsim sweep` and `cnsim check` run it again"
                ) from None
        con.execute("CHECKPOINT")
        ok = True
    finally:
        con.close()
        if not ok:  # leave no half-built catalog behind
            for leftover in (tmp, Path(str(tmp) + ".wal")):
                leftover.unlink(missing_ok=True)
    os.replace(tmp, final)
    Path(str(tmp) + ".wal").unlink(missing_ok=True)
    return final


#: A temporary catalog older than this was left by a builder that died (kill -9).
_STALE_S = 600.0


def _remove_stale(root: Path, name: str) -> None:
    """Delete temporary catalogs (``.catalog.duckdb.<hex>[.wal]``) that a killed build left."""
    now = time.time()
    for path in root.glob(f".{name}.*"):
        try:
            if now - path.stat().st_mtime > _STALE_S:
                path.unlink()
        except OSError:
            continue


def connect(where: str | Path = "results", read_only: bool = True) -> Any:
    """A DuckDB connection to the catalog in folder ``where`` (or the file itself); a path that
    holds no catalog, or a file that is not one, is a :class:`ScenarioError`."""
    import duckdb

    if not isinstance(where, (str, os.PathLike)):
        raise ScenarioError(f"catalog: where must be a results folder or a catalog file (given {format_value(where)})")
    path = Path(where)
    try:
        if path.is_dir():
            path = path / CATALOG_FILE
        is_file = path.is_file()
    except OSError as err:  # a name longer than the file system takes (ENAMETOOLONG), and the like
        raise ScenarioError(f"{shorten(str(path))}: cannot be looked up ({err.strerror or err}); give a results folder or its "
                            "catalog.duckdb") from None
    if not is_file:
        raise ScenarioError(f"{path}: no run catalog here; a sweep writes one, or call cnsim.catalog.build(folder)")
    try:
        return duckdb.connect(str(path), read_only=read_only)
    except duckdb.Error as err:
        raise ScenarioError(
            f"{path}: not a run catalog (DuckDB cannot open it: {_first_line(err, 160)}); "
            "give a results folder or its catalog.duckdb, or rebuild it with cnsim.catalog.build(folder)"
        ) from None


def runs(where: str | Path = "results", where_sql: str | None = None) -> pa.Table:
    """The ``runs`` table (optionally filtered by an SQL condition) as a pyarrow Table."""
    import duckdb

    if where_sql is not None and not isinstance(where_sql, str):
        raise ScenarioError(f"where_sql: must be an SQL condition in a string, e.g. \"scheme = 'bcn'\" (given {format_value(where_sql)})")
    con = connect(where)
    try:
        query = "SELECT * FROM runs" + (f" WHERE {where_sql}" if where_sql else "") + " ORDER BY sweep_dir, path"
        try:
            relation = con.sql(query)
            # DuckDB 2 reads a relation with to_arrow_table(); 1.x has only arrow() (a Table there)
            fetch = getattr(relation, "to_arrow_table", None) or relation.arrow
            table: pa.Table = fetch()
        except duckdb.Error as err:
            first = _first_line(err, 200)
            if where_sql:
                raise ScenarioError(
                    f"where_sql {shorten(where_sql)!r}: the catalog query failed ({first}); "
                    "give an SQL condition on the columns of the runs table, e.g. \"scheme = 'bcn'\""
                ) from None
            raise ScenarioError(f"{where}: not a run catalog: its runs table cannot be read ({first}); rebuild it with cnsim.catalog.build(folder)") from None
        return table
    finally:
        con.close()
