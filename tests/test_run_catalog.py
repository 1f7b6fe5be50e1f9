"""The run catalog (cnsim.catalog), built over hand-written run folders: one row per run with its
ids, status and scalar metrics, one per sweep, the series as views joined to their run, stale
temporary files removed, and a clear refusal for a path or query that is not a catalog's."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from _scenarios import scen
from cnsim import ScenarioError
from cnsim.catalog import CATALOG_FILE, build, connect, runs
from cnsim.catalog import _content_id as content_id
from cnsim.catalog import _run_row as run_row
from cnsim.catalog import _sweep_rows as sweep_rows
from cnsim.rundir import ERROR_FILE, MANIFEST_FILE, PARAMS_FILE, SCENARIO_FILE, SUMMARY_FILE, SWEEP_PLAN_FILE, run_id_of

pytest.importorskip("duckdb")

SUMMARY = {"scenario": "og", "scheme": "qcn", "seed": 4,
           "throughput_gbps": {"aggregate": 9.5, "per_node": {"h1": 9.5}, "per_flow": {"1->2": 9.5}},
           "drops": {"frames": 0}}


def write(path: Path, doc: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def sweep_run(root: Path, run_id: str = "r1", summary: dict[str, Any] | None = SUMMARY) -> Path:
    folder = root / "sw" / "runs" / run_id
    write(folder / PARAMS_FILE, {"run_id": run_id, "sweep": "demo", "base": "og-base", "seed": 4, "params": {"cm.gi": 2, "cm.gd": 1}})
    if summary is not None:
        write(folder / SUMMARY_FILE, summary)
        write(folder / MANIFEST_FILE, {"wall_s": 0.5})
    else:
        write(folder / ERROR_FILE, {"error": "EngineError: boom"})
    return folder


def test_a_sweep_run_is_a_row_of_ids_json_documents_and_scalar_metrics(tmp_path: Path) -> None:
    folder = sweep_run(tmp_path)
    assert run_row(folder, tmp_path) == {
        "run_id": "r1", "sweep": "demo", "sweep_dir": "sw", "scenario": "og", "scheme": "qcn", "seed": 4,
        "status": "ok", "error": None, "path": str(folder.resolve()),
        "params": '{"cm.gd": 1, "cm.gi": 2}', "summary": json.dumps(SUMMARY, sort_keys=True),
        "manifest": '{"wall_s": 0.5}', "wall_s": 0.5,
        # per-node and per-flow maps stay in the summary's JSON; the ids are columns already
        "throughput_gbps.aggregate": 9.5, "drops.frames": 0}


def test_a_failed_sweep_run_is_named_by_its_base_scenario(tmp_path: Path) -> None:
    row = run_row(sweep_run(tmp_path, summary=None), tmp_path)
    assert (row["status"], row["error"], row["scenario"], row["scheme"], row["summary"], row["manifest"], row["wall_s"]) == (
        "failed", "EngineError: boom", "og-base", None, None, "{}", None)


def test_a_cnsim_run_is_identified_by_the_content_of_its_scenario(tmp_path: Path) -> None:
    """The id a sweep would give the same scenario and seed, so the two find each other."""
    s = scen("qcn", duration="1ms").validate()
    folder = tmp_path / "runs" / "mine"  # under a folder called runs, but no params.json: not a sweep's
    write(folder / SUMMARY_FILE, {"scenario": s.id, "scheme": "qcn", "seed": 1})
    (folder / SCENARIO_FILE).write_text(s.to_toml(), encoding="utf-8")
    row = run_row(folder, tmp_path)
    assert row["run_id"] == run_id_of(s)
    assert (row["sweep"], row["sweep_dir"], row["seed"], row["params"]) == (None, None, 1, "{}")
    assert content_id(folder, None) != run_id_of(s)  # without its scenario id the hash differs


def test_a_folder_without_a_readable_scenario_is_identified_by_its_name(tmp_path: Path) -> None:
    assert content_id(tmp_path / "gone", "og") == "gone"
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / SCENARIO_FILE).write_text("[[[", encoding="utf-8")
    assert content_id(tmp_path / "bad", "og") == "bad"


def test_sweeps_are_rows_of_their_plan(tmp_path: Path) -> None:
    write(tmp_path / "b" / SWEEP_PLAN_FILE, {"spec": {"name": "gains", "base": "og"}, "runs": [{}, {}, {}]})
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / SWEEP_PLAN_FILE).write_text("{", encoding="utf-8")  # damaged: a row with what is known
    assert sweep_rows(tmp_path) == [
        {"name": None, "sweep_dir": "a", "base": None, "spec": "{}", "runs": 0},
        {"name": "gains", "sweep_dir": "b", "base": "og", "spec": '{"base": "og", "name": "gains"}', "runs": 3}]


def test_build_indexes_runs_sweeps_and_series(tmp_path: Path) -> None:
    ok = sweep_run(tmp_path, "r1")
    sweep_run(tmp_path, "r2", summary=None)
    write(tmp_path / "sw" / SWEEP_PLAN_FILE, {"spec": {"name": "demo", "base": "og-base"}, "runs": [{}, {}]})
    (ok / "series").mkdir()
    pq.write_table(pa.table({"t_s": [0.0, 0.1], "entity": ["h1", "h1"], "gbps": [9.0, 10.0]}), ok / "series" / "throughput.parquet")

    path = build(tmp_path)
    assert path == tmp_path.resolve() / CATALOG_FILE
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temporary file left
    con = connect(tmp_path)
    try:
        assert con.sql("SELECT run_id, status FROM runs ORDER BY run_id").fetchall() == [("r1", "ok"), ("r2", "failed")]
        assert con.sql("SELECT name, runs FROM sweeps").fetchall() == [("demo", 2)]
        assert con.sql("SELECT run_id, t_s, gbps FROM throughput ORDER BY t_s").fetchall() == [("r1", 0.0, 9.0), ("r1", 0.1, 10.0)]
        views = {name for (name,) in con.sql("SELECT view_name FROM duckdb_views() WHERE NOT internal").fetchall()}
        assert views == {"throughput"}  # no view over series no run has
    finally:
        con.close()
    assert runs(tmp_path, "status = 'ok'").column("throughput_gbps.aggregate").to_pylist() == [9.5]


def test_build_removes_only_stale_temporary_catalogs(tmp_path: Path) -> None:
    stale, fresh = tmp_path / f".{CATALOG_FILE}.dead0001", tmp_path / f".{CATALOG_FILE}.live0002.wal"
    for path in (stale, fresh):
        path.write_text("left by a build", encoding="utf-8")
    os.utime(stale, (time.time() - 600.5,) * 2)  # older than the ten minutes a build may take
    os.utime(fresh, (time.time() - 599,) * 2)
    build(tmp_path)
    assert not stale.exists() and fresh.exists()  # a build still running elsewhere keeps its file
    assert runs(tmp_path).num_rows == 0


def test_a_truncated_series_file_is_refused_naming_it(tmp_path: Path) -> None:
    folder = sweep_run(tmp_path)
    queue = folder / "series" / "queue.parquet"
    queue.parent.mkdir()
    queue.write_bytes(b"PAR1")
    with pytest.raises(ScenarioError) as err:
        build(tmp_path)
    assert str(err.value) == (
        f"{queue.resolve()}: damaged: not a whole Parquet file (truncated or overwritten); expected the series a run writes. "
        "Delete its run folder: `cnsim sweep` and `cnsim check` run it again.")
    assert list(tmp_path.glob("*catalog*")) == []


def test_a_series_file_damaged_inside_is_refused_and_no_catalog_is_left(tmp_path: Path) -> None:
    folder = sweep_run(tmp_path)
    (folder / "series").mkdir()
    path = folder / "series" / "throughput.parquet"
    pq.write_table(pa.table({"t_s": [0.0], "entity": ["h1"], "gbps": [9.0]}), path)
    data = bytearray(path.read_bytes())
    footer = int.from_bytes(data[-8:-4], "little")
    data[-8 - footer:-8] = b"\xff" * footer  # the metadata garbled, the magic and its length kept
    path.write_bytes(bytes(data))
    with pytest.raises(ScenarioError, match=rf"^{tmp_path.resolve()}: the throughput series of its runs cannot be read \(.+\); "
                       "delete the run folder that holds the damaged file"):
        build(tmp_path)
    assert [p.name for p in tmp_path.iterdir()] == ["sw"]  # neither a catalog nor a temporary one


def test_a_path_that_holds_no_catalog_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError) as err:
        connect(tmp_path)
    assert str(err.value) == f"{tmp_path / CATALOG_FILE}: no run catalog here; a sweep writes one, or call cnsim.catalog.build(folder)"
    (tmp_path / "notes.txt").write_text("x" * 5000, encoding="utf-8")
    with pytest.raises(ScenarioError, match=r"notes.txt: not a run catalog \(DuckDB cannot open it: "):
        connect(tmp_path / "notes.txt")
    with pytest.raises(ScenarioError, match=r"where must be a results folder or a catalog file \(given 3\)"):
        connect(3)  # type: ignore[arg-type]


def test_a_bad_condition_is_refused_naming_it(tmp_path: Path) -> None:
    sweep_run(tmp_path)
    build(tmp_path)
    assert runs(tmp_path, "scheme = 'qcn'").num_rows == 1
    assert runs(tmp_path, "scheme = 'bcn'").num_rows == 0
    with pytest.raises(ScenarioError) as err:
        runs(tmp_path, "no_such_column > 1")
    message = str(err.value)  # DuckDB's first line: its message, without the caret under the query
    assert message.startswith("where_sql 'no_such_column > 1': the catalog query failed (") and "\n" not in message
    assert '"no_such_column"' in message
    assert message.endswith("); give an SQL condition on the columns of the runs table, e.g. \"scheme = 'bcn'\"")
