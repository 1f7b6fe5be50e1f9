"""The run folder (cnsim.rundir): reading its JSON files, telling a finished run from a damaged
or missing one, publishing it under its run id, and the rows and columns a sweep table or the
catalog is made of."""

from __future__ import annotations

import errno
import json
import shutil
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from _scenarios import scen
from cnsim import ScenarioError
from cnsim._version import RESULTS_VERSION
from cnsim.results import SERIES_KINDS
from cnsim.rundir import (
    ERROR_FILE,
    MANIFEST_FILE,
    PARAMS_FILE,
    SCENARIO_FILE,
    SERIES_DIR,
    SERIES_NAMES,
    SUMMARY_FILE,
    damaged,
    find_run_folders,
    flatten,
    parquet_whole,
    publish,
    read_json,
    read_json_checked,
    read_run,
    reading_series,
    results_version,
    rows_table,
    run_complete,
    run_current,
    run_id_of,
    run_reusable,
)
from cnsim.rundir import _column as column


def write(path: Path, doc: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def finished(folder: Path, scenario: str, results: str = str(RESULTS_VERSION)) -> Path:
    """A finished run folder: its summary, the manifest naming the results version that made it,
    and its series files."""
    write(folder / MANIFEST_FILE, {"versions": {"cnsim": "0.1.0", "results": results}})
    (folder / SCENARIO_FILE).write_text('duration = "1ms"\n', encoding="utf-8")
    for name in SERIES_NAMES:
        series_file(folder, name)
    return write(folder / SUMMARY_FILE, {"scenario": scenario})


# ---- reading the JSON files


def test_read_json_is_none_for_a_missing_or_unreadable_file(tmp_path: Path) -> None:
    assert read_json(write(tmp_path / "a.json", {"x": [1, 2]})) == {"x": [1, 2]}
    assert read_json(tmp_path / "missing.json") is None
    (tmp_path / "cut.json").write_text('{"x": [1,', encoding="utf-8")
    assert read_json(tmp_path / "cut.json") is None
    (tmp_path / "latin.json").write_bytes(b'"caf\xe9"')
    assert read_json(tmp_path / "latin.json") is None
    assert read_json(tmp_path) is None  # a folder is not a file to read


def test_damaged_names_the_file_the_problem_and_what_it_should_hold() -> None:
    err = damaged(Path("r/summary.json"), "empty", "a summary", "run it again")
    assert isinstance(err, ScenarioError)
    assert str(err) == "r/summary.json: damaged: empty; expected a summary. run it again"
    assert str(damaged(Path("s.json"), "empty", "a plan")) == "s.json: damaged: empty; expected a plan."


def test_read_json_checked_tells_a_damaged_file_from_a_missing_one(tmp_path: Path) -> None:
    assert read_json_checked(tmp_path / "missing.json") is None
    assert read_json_checked(tmp_path) is None  # not a file
    assert read_json_checked(write(tmp_path / "ok.json", [1, "a"])) == [1, "a"]

    def refusal(name: str, content: bytes, **kw: str) -> str:
        (tmp_path / name).write_bytes(content)
        with pytest.raises(ScenarioError) as err:
            read_json_checked(tmp_path / name, **kw)
        return str(err.value)

    path = tmp_path / "latin.json"
    assert refusal("latin.json", b'{"a": "caf\xe9"}') == (
        f"{path}: damaged: not UTF-8 text (byte 0xe9 at offset 10); expected a JSON document written by cnsim.")
    path = tmp_path / "empty.json"
    assert refusal("empty.json", b" \n", expected="a plan", fix="Delete it.") == (
        f"{path}: damaged: empty; expected a plan. Delete it.")
    path = tmp_path / "cut.json"
    assert refusal("cut.json", b'{\n  "a": [1,') == (
        f"{path}: damaged: not valid JSON (Expecting value at line 2 column 11); expected a JSON document written by cnsim.")
    huge = refusal("huge.json", b"1" * 5000)  # past Python's limit on the digits of an int
    assert huge.startswith(f"{tmp_path / 'huge.json'}: damaged: not valid JSON (") and "digits" in huge


# ---- a finished run and its id


def test_a_run_is_complete_only_with_a_summary_object_naming_its_scenario(tmp_path: Path) -> None:
    assert not run_complete(tmp_path / "none")
    assert not run_complete(tmp_path)  # a folder without summary.json
    write(tmp_path / SUMMARY_FILE, ["scenario"])
    assert not run_complete(tmp_path)
    write(tmp_path / SUMMARY_FILE, {"seed": 1})
    assert not run_complete(tmp_path)
    (tmp_path / SUMMARY_FILE).write_text('{"scenario": "x", "seed"', encoding="utf-8")
    assert not run_complete(tmp_path)
    write(tmp_path / SUMMARY_FILE, {"scenario": "x"})
    assert run_complete(tmp_path)


def series_file(folder: Path, kind: str = "queue") -> Path:
    path = folder / SERIES_DIR / f"{kind}.parquet"
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table({"t_s": [0.0, 0.1], "queue": ["sw.p1", "sw.p1"], "bytes": [1.0, 2.0]}), path)
    return path


def test_a_parquet_file_is_whole_with_its_magic_at_both_ends_and_a_footer_that_fits(tmp_path: Path) -> None:
    path = series_file(tmp_path)
    data = path.read_bytes()
    assert parquet_whole(path)
    footer = int.from_bytes(data[-8:-4], "little")
    cases = {
        "truncated": data[:-1],
        "cut in half": data[: len(data) // 2],
        "emptied": b"",
        "too short for two magics": b"PAR1PAR1",
        "zeroed": bytes(len(data)),
        "no leading magic": b"PAR0" + data[4:],
        "no trailing magic": data[:-4] + b"PAR0",
        "a footer longer than the file": data[:-8] + (len(data) - 11).to_bytes(4, "little") + b"PAR1",
    }
    for what, content in cases.items():
        path.write_bytes(content)
        assert not parquet_whole(path), what
    path.write_bytes(b"PAR1" + (0).to_bytes(4, "little") + b"PAR1")  # twelve bytes, no metadata
    assert not parquet_whole(path)
    path.write_bytes(b"PAR1" + b"m" + (1).to_bytes(4, "little") + b"PAR1")  # the smallest that fits
    assert parquet_whole(path)
    path.write_bytes(data[:-8] + (len(data) - 12).to_bytes(4, "little") + b"PAR1")  # a footer filling the rest
    assert parquet_whole(path) and footer < len(data) - 12
    assert not parquet_whole(tmp_path / "missing.parquet")
    assert not parquet_whole(tmp_path)  # a folder


def test_a_run_is_reusable_when_complete_and_every_series_file_is_whole(tmp_path: Path) -> None:
    finished(tmp_path, "x")
    assert run_reusable(tmp_path)
    throughput = tmp_path / SERIES_DIR / "throughput.parquet"
    throughput.write_bytes(throughput.read_bytes()[:-3])
    assert run_complete(tmp_path) and not run_reusable(tmp_path)
    (tmp_path / SUMMARY_FILE).unlink()
    series_file(tmp_path, "throughput")
    assert not run_reusable(tmp_path)


def test_a_run_whose_series_file_was_removed_is_not_reused(tmp_path: Path) -> None:
    # every run writes all its series, empty or not: a missing one is outside damage (a partial
    # copy), which a resumed sweep ran again only when the file was there but cut (contract audit)
    for name in SERIES_NAMES:
        folder = tmp_path / name
        finished(folder, "x")
        (folder / SERIES_DIR / f"{name}.parquet").unlink()
        assert run_complete(folder) and run_current(folder) and not run_reusable(folder), name
    finished(tmp_path / "bare", "x")
    shutil.rmtree(tmp_path / "bare" / SERIES_DIR)
    assert not run_reusable(tmp_path / "bare")
    # nor is one without its scenario.toml (the run folder's record of what ran; sweep audit)
    finished(tmp_path / "untold", "x")
    (tmp_path / "untold" / SCENARIO_FILE).unlink()
    assert run_complete(tmp_path / "untold") and not run_reusable(tmp_path / "untold")


def test_the_series_a_run_must_hold_are_the_kinds_a_run_writes() -> None:
    assert SERIES_NAMES == tuple(SERIES_KINDS)


def test_a_run_is_reusable_only_when_this_version_of_the_results_made_it(tmp_path: Path) -> None:
    """The run id names the scenario and seed, not the model: a run made before a change to the
    results (or after, by a newer cnsim) is complete but not current, and is run again."""
    assert run_current(finished(tmp_path / "now", "x").parent) and run_reusable(tmp_path / "now")
    for name, results in (("older", str(RESULTS_VERSION - 1)), ("newer", str(RESULTS_VERSION + 1))):
        folder = finished(tmp_path / name, "x", results).parent
        assert run_complete(folder) and not run_current(folder) and not run_reusable(folder)
    before = write(tmp_path / "unversioned" / SUMMARY_FILE, {"scenario": "x"}).parent  # no manifest
    write(before / MANIFEST_FILE, {"versions": {"cnsim": "0.1.0", "core": "0.1.0"}})  # made before the key
    assert run_complete(before) and not run_current(before) and results_version(before) == "0"
    (before / MANIFEST_FILE).write_text("{", encoding="utf-8")  # a manifest that does not read back
    assert not run_current(before) and results_version(before) is None  # damage, not a version
    (before / MANIFEST_FILE).unlink()
    assert not run_current(before) and results_version(before) is None


def test_publish_renames_into_place_and_keeps_a_run_someone_else_finished(tmp_path: Path) -> None:
    tmp, final = tmp_path / ".tmp-a", tmp_path / "a"
    finished(tmp, "mine")
    publish(tmp, final)
    assert not tmp.exists() and json.loads((final / SUMMARY_FILE).read_text())["scenario"] == "mine"

    finished(tmp, "second")
    publish(tmp, final)  # the finished run stays, the second attempt goes
    assert not tmp.exists() and json.loads((final / SUMMARY_FILE).read_text())["scenario"] == "mine"

    failed = tmp_path / "b"
    write(failed / ERROR_FILE, {"error": "boom"})
    finished(tmp, "retry")
    publish(tmp, failed)  # a failed attempt is replaced, not merged into
    assert sorted(p.name for p in failed.iterdir()) == [MANIFEST_FILE, SCENARIO_FILE, SERIES_DIR, SUMMARY_FILE]

    series = series_file(final)
    series.write_bytes(b"")  # finished, but a series file was lost since
    finished(tmp, "rerun")
    series_file(tmp)
    publish(tmp, final)
    assert json.loads((final / SUMMARY_FILE).read_text())["scenario"] == "rerun" and parquet_whole(series)

    older = tmp_path / "c"
    finished(older, "before", str(RESULTS_VERSION - 1))  # finished by an earlier model
    finished(tmp, "now")
    publish(tmp, older)
    assert json.loads((older / SUMMARY_FILE).read_text())["scenario"] == "now"


def test_the_run_id_is_a_content_hash_of_the_scenario_and_seed() -> None:
    a = run_id_of(scen("qcn"))
    assert len(a) == 16 and int(a, 16) >= 0
    assert run_id_of(scen("qcn")) == a
    assert run_id_of(scen("qcn", seed=2)) != a
    assert run_id_of(scen("bcn")) != a


# ---- rows of a sweep table


def test_flatten_makes_dotted_keys_of_nested_tables() -> None:
    assert flatten({"a": 1, "b": {"c": [1, 2], "d": {"e": None}}}) == {"a": 1, "b.c": [1, 2], "b.d.e": None}
    assert flatten({"a": {"b": 1}}, "x") == {"x.a.b": 1}
    assert flatten({1: {2: "v"}}) == {"1.2": "v"}
    assert flatten({"a": {}}) == {}  # an empty table has no keys to show
    assert flatten([1, 2]) == {}
    assert flatten(3) == {}


def test_a_folder_without_summary_or_error_is_not_a_run(tmp_path: Path) -> None:
    write(tmp_path / PARAMS_FILE, {"run_id": "r"})
    assert read_run(tmp_path) is None


def test_a_failed_run_is_a_row_with_its_error_and_parameters(tmp_path: Path) -> None:
    write(tmp_path / PARAMS_FILE, {"run_id": "r1", "sweep": "s", "seed": 3, "params": {"cm.gi": 4.0}})
    write(tmp_path / ERROR_FILE, {"error": "EngineError: boom", "traceback": "..."})
    assert read_run(tmp_path) == {
        "run_id": "r1", "sweep": "s", "seed": 3, "status": "failed", "error": "EngineError: boom", "cm.gi": 4.0}


def test_a_finished_run_is_a_row_of_its_parameters_summary_and_timings(tmp_path: Path) -> None:
    write(tmp_path / PARAMS_FILE, {"run_id": "r2", "sweep": "s", "seed": 5, "params": {"cm.gi": 2.0, "seed": 5}})
    write(tmp_path / SUMMARY_FILE, {"scenario": "x", "seed": 5, "drops": {"frames": 0}})
    write(tmp_path / ERROR_FILE, {"error": "an earlier attempt"})  # a summary wins over an old error
    write(tmp_path / MANIFEST_FILE, {"wall_s": 1.5, "events_per_s": 2e7, "host": "h", "python": "3.12"})
    assert read_run(tmp_path) == {
        "run_id": "r2", "sweep": "s", "seed": 5, "status": "ok", "error": None, "cm.gi": 2.0,
        "scenario": "x", "drops.frames": 0, "manifest.wall_s": 1.5, "manifest.events_per_s": 2e7, "manifest.host": "h"}


def test_a_finished_runs_row_carries_the_manifests_versions(tmp_path: Path) -> None:
    """Contract: wall-clock figures *and versions* go to manifest.json and, in sweep tables, to
    columns prefixed ``manifest.``."""
    write(tmp_path / SUMMARY_FILE, {"scenario": "x", "seed": 1})
    write(tmp_path / MANIFEST_FILE, {"wall_s": 0.5, "versions": {"cnsim": "0.1.0", "results": "4"}})
    row = read_run(tmp_path)
    assert row is not None
    assert row["manifest.versions.cnsim"] == "0.1.0" and row["manifest.versions.results"] == "4"
    assert row["manifest.wall_s"] == 0.5


def test_a_run_outside_a_sweep_takes_its_id_from_the_folder_and_its_seed_from_the_summary(tmp_path: Path) -> None:
    folder = tmp_path / "og-20261129"
    write(folder / SUMMARY_FILE, {"scenario": "og", "seed": 9})
    assert read_run(folder) == {"run_id": "og-20261129", "sweep": None, "seed": 9, "status": "ok", "error": None,
                                "scenario": "og"}


# ---- columns of a sweep table


def test_numbers_stay_numbers_and_a_float_makes_the_column_floats() -> None:
    assert column([1, None, 2]).type == pa.int64()
    floats = column([1, None, 2.5])
    assert floats.type == pa.float64() and floats.to_pylist() == [1.0, None, 2.5]
    # a column no run has a value in is a number column (a metric) or text (error, status), not
    # Arrow's null type: the tables of a sweep where nothing failed and one where a run did
    # concatenate
    assert column([None, None]).type == pa.float64()
    assert column([None, None], text=True).type == pa.string()
    ok = rows_table([{"run_id": "a", "error": None, "x.recovery_s": None}])
    failed = rows_table([{"run_id": "b", "error": "boom", "x.recovery_s": 0.5}])
    both = pa.concat_tables([ok, failed])
    assert both.column("error").to_pylist() == [None, "boom"] and both.column("x.recovery_s").type == pa.float64()
    # an int past int64 beside a float: made a float here, where Arrow would refuse the column
    assert column([10**20, 0.5]).to_pylist() == [1e20, 0.5]


def test_text_mixed_with_anything_makes_the_column_text() -> None:
    mixed = column(["qcn", 1, None, [1, 2], {"b": 1, "a": 2}])
    assert mixed.type == pa.string()
    assert mixed.to_pylist() == ["qcn", "1", None, "[1, 2]", '{"b": 1, "a": 2}']


def test_tables_mixed_in_a_column_are_written_as_json() -> None:
    tables = column([{"b": 1, "a": 2}, None, [3]])
    assert tables.to_pylist() == ['{"a": 2, "b": 1}', None, "[3]"]
    lists = column([[1], [2, 3], None])
    assert lists.type == pa.list_(pa.int64()) and lists.to_pylist() == [[1], [2, 3], None]


def test_a_column_arrow_cannot_type_falls_back_to_json_text() -> None:
    assert column([True, 1]).to_pylist() == ["true", "1"]
    assert column([True, None, False]).type == pa.bool_()
    assert column([True, 1.5]).to_pylist() == ["true", "1.5"]  # a flag is not a number to widen


def test_rows_table_has_every_column_of_every_row_with_the_first_leading() -> None:
    table = rows_table([{"b": 1, "run_id": "x"}, {"c": "z", "run_id": "y"}], first=["run_id", "status"])
    assert table.column_names == ["run_id", "status", "b", "c"]
    assert table.to_pylist() == [{"run_id": "x", "status": None, "b": 1, "c": None},
                                 {"run_id": "y", "status": None, "b": None, "c": "z"}]
    empty = rows_table([])
    assert empty.column_names == ["run_id"] and empty.num_rows == 0 and empty.schema.field("run_id").type == pa.string()


# ---- finding run folders


def test_run_folders_are_found_in_order_without_looking_inside_one(tmp_path: Path) -> None:
    write(tmp_path / "b" / SUMMARY_FILE, {})
    write(tmp_path / "b" / "inner" / SUMMARY_FILE, {})  # inside a run folder: not another run
    write(tmp_path / "a" / "runs" / "r2" / PARAMS_FILE, {})
    write(tmp_path / "a" / "runs" / "r2" / ERROR_FILE, {})  # a failed run of a sweep
    write(tmp_path / "a" / "runs" / "r1" / SUMMARY_FILE, {})
    write(tmp_path / "a" / "runs" / "lone" / ERROR_FILE, {})  # an error without params: not a run
    write(tmp_path / "a" / ".tmp-r3" / SUMMARY_FILE, {})  # being written
    write(tmp_path / "c" / "series" / SUMMARY_FILE, {})  # a run's series folder holds no runs
    assert find_run_folders(tmp_path) == [tmp_path / "a" / "runs" / "r1", tmp_path / "a" / "runs" / "r2", tmp_path / "b"]
    assert find_run_folders(tmp_path / "b") == [tmp_path / "b"]
    assert find_run_folders(tmp_path / "nowhere") == []


def test_reading_a_damaged_series_names_the_file_and_only_the_first_line_of_the_failure() -> None:
    """pyarrow's failure inside a series file becomes bad input naming the file (its first line,
    cut to 120 characters); an error of the file system, which has an errno, goes on as it is."""
    path = Path("r/series/queues.parquet")
    with pytest.raises(ScenarioError) as err, reading_series(path, "Run it again."):
        raise pa.ArrowInvalid("Couldn't deserialize thrift: bad\nDeserializing page header failed.")
    assert str(err.value) == (f"{path}: damaged: it does not read as Parquet (Couldn't deserialize thrift: bad); "
                              "expected the series a run writes. Run it again.")
    with pytest.raises(ScenarioError) as err, reading_series(path, ""):
        raise OSError("x" * 121)  # an OSError without an errno is pyarrow's
    assert f"(x{'x' * 99}… (121 characters))" in str(err.value)
    with pytest.raises(ScenarioError, match=r"\(ArrowInvalid\)"), reading_series(path, ""):
        raise pa.ArrowInvalid("")
    with pytest.raises(PermissionError) as denied, reading_series(path, ""):
        raise PermissionError(errno.EACCES, "Permission denied", str(path))
    assert denied.value.errno == errno.EACCES
