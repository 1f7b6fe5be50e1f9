"""Bad input that used to escape as a traceback or another exception type (an input audit):
deep or long expressions, keys and TOML files (RecursionError), a bad Dask scheduler address,
huge values echoed whole, a UTF-8 byte-order mark, Result.save over a finished run folder, and
API calls given the wrong types or damaged run folders. Each must end in exit status 2 with a
short message on the command line, or :class:`cnsim.ScenarioError` in Python."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import cnsim
import cnsim.catalog
import pytest
from _cli import refused, runner
from _fake_engine import engine_result
from cnsim import Result, ScenarioError, load
from cnsim.cli import app
from cnsim.errors import format_value
from cnsim.expr import MAX_CHARS, MAX_DEPTH, ExprError, parse_expr

BASE = "zhb-og-single-hop"


# --- expressions: long and deep ----------------------------------------------------------------


def test_a_very_long_expression_is_refused_without_recursion() -> None:
    text = "+".join(["1KB"] * 20000)
    refused(["show", BASE, "--set", f"switch.memory_per_port={text}"], "switch.memory_per_port", "too long", f"at most {MAX_CHARS}")


def test_deeply_parenthesised_expression_is_refused() -> None:
    refused(["show", BASE, "--set", "switch.memory_per_port=" + "(" * 3000 + "1KB" + ")" * 3000], "switch.memory_per_port", "too long")
    text = "(" * (MAX_DEPTH + 1) + "1KB" + ")" * (MAX_DEPTH + 1)
    refused(["show", BASE, "--set", f"switch.memory_per_port={text}"], "switch.memory_per_port", "too deep", f"more than {MAX_DEPTH}")


def test_expressions_within_the_limits_still_evaluate() -> None:
    terms = (MAX_CHARS - 1) // 2 + 1  # "1+1+…+1", just within the limit
    assert parse_expr("+".join(["1"] * terms)).evaluate(lambda _: 0.0) == terms
    assert parse_expr("(" * MAX_DEPTH + "2" + ")" * MAX_DEPTH).evaluate(lambda _: 0.0) == 2.0
    assert parse_expr("-" * 301 + "3").evaluate(lambda _: 0.0) == -3.0
    assert parse_expr("- -x - +y").evaluate({"x": 5.0, "y": 1.0}.__getitem__) == 4.0
    assert parse_expr("1 - 2 - 3").evaluate(lambda _: 0.0) == -4.0  # still left to right
    assert parse_expr("2*w").names == {"w"} and parse_expr(" 2*w ") == parse_expr("2*w")
    with pytest.raises(ExprError, match="too long"):
        parse_expr("1" * (MAX_CHARS + 1))


def test_expression_messages_quote_a_long_text_only_in_part() -> None:
    with pytest.raises(ExprError) as err:
        parse_expr("1+" * 100 + "?")
    assert "characters)" in str(err.value) and len(str(err.value)) < 200


# --- dotted keys and nesting -------------------------------------------------------------------


def test_a_dotted_key_with_hundreds_of_parts_is_refused() -> None:
    key = ".".join(["a"] * 500)
    refused(["show", BASE, "--set", f"{key}=1"], "a.a.a", "more than 32 parts")
    with pytest.raises(ScenarioError, match="more than 32 parts"):
        load(BASE).set(".".join(["a"] * 2000), 1)


def test_a_deeply_nested_set_value_is_refused() -> None:
    refused(["show", BASE, "--set", "topology.legacy=" + "[" * 5000 + "]" * 5000], "--set", "nested too deeply")
    deep: list = []
    for _ in range(40):
        deep = [deep]
    with pytest.raises(ScenarioError, match="nested more than 32 levels"):
        load(BASE).set("topology.legacy", deep)
    loop: list = []
    loop.append(loop)
    with pytest.raises(ScenarioError, match="nested more than 32 levels"):
        load(BASE).set("topology.legacy", loop)
    with pytest.raises(ScenarioError, match="nested more than 32 levels"):
        cnsim.Scenario({"a": deep}, "mine")


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("array", "a = " + "[" * 5000 + "]" * 5000),
        ("inline", "x = " + "{a = " * 3000 + "1" + "}" * 3000),
        ("headers", "[" + ".".join(["t"] * 5000) + "]"),
        ("middling", "a = " + "[" * 40 + "]" * 40),
        ("longint", "seed = " + "1" * 5000),
    ],
)
def test_deeply_nested_scenario_files_are_refused(tmp_path: Path, name: str, text: str) -> None:
    path = tmp_path / f"{name}.toml"
    path.write_text(text + "\n", encoding="utf-8")
    refused(["run", str(path), "--out", str(tmp_path / "out")], str(path))
    with pytest.raises(ScenarioError, match=f"{name}.toml"):
        cnsim.load(path)


# --- huge values, byte-order marks -------------------------------------------------------------


def test_a_huge_string_is_not_echoed_whole(tmp_path: Path) -> None:
    text = load(BASE).to_toml()
    big = "x" * 1_000_000
    cases = {
        "value": text.replace("[topology]", f'[topology]\nzzz = "{big}"', 1),
        "key": text.replace("[topology]", f"[topology]\n{big} = 1", 1),
        "scheme": text.replace('scheme = "none"', f'scheme = "{big}"', 1),
        "duration": text.replace('duration = "600ms"', f'duration = "{big}"', 1),
    }
    for name, doc in cases.items():
        path = tmp_path / f"{name}.toml"
        path.write_text(doc, encoding="utf-8")
        err = refused(["show", str(path)])
        assert "1,000,0" in err, err  # the length is named


def test_format_value_cuts_long_values() -> None:
    assert format_value("abc") == '"abc"'
    shown = format_value("y" * 10_000)
    assert shown.startswith('"yyy') and "(10,000 characters)" in shown and len(shown) < 100
    assert len(format_value(10**400)) < 100
    assert "too large" in format_value([10**5000])
    assert ScenarioError("z" * 100_000).args[0].endswith("(100,000 characters)")


def test_a_byte_order_mark_is_skipped(tmp_path: Path) -> None:
    text = load(BASE).to_toml()
    plain, marked = tmp_path / "plain" / "s.toml", tmp_path / "marked" / "s.toml"
    for path, head in ((plain, ""), (marked, "\ufeff")):
        path.parent.mkdir()
        path.write_text(head + text, encoding="utf-8")
    res = runner.invoke(app, ["show", str(marked)])
    assert res.exit_code == 0, res.output
    assert cnsim.load(marked).to_toml() == cnsim.load(plain).to_toml()


# --- Dask scheduler ----------------------------------------------------------------------------


@pytest.mark.parametrize("address", ["not an address", "tcp://127.0.0.1:notaport", "foo://bar:1"])
def test_a_bad_scheduler_address_is_refused(tmp_path: Path, address: str) -> None:
    pytest.importorskip("distributed")
    from cnsim.executors import make_executor

    with pytest.raises(ScenarioError, match="--scheduler"):
        make_executor("dask", scheduler=address)
    spec = tmp_path / "tiny.toml"
    spec.write_text(f'name = "tiny"\nbase = "{BASE}"\n[set]\n"cm.scheme" = "bcn"\nduration = "2ms"\n[axes]\n"cm.w" = [0.5, 2]\n')
    refused(["sweep", str(spec), "--executor", "dask", "--scheduler", address, "--out", str(tmp_path / "sw")], "--scheduler", "tcp://host:8786")


def test_a_refused_scheduler_leaves_no_client_to_the_garbage_collector() -> None:
    # A Client that failed to start and is collected later closes itself under its loop
    # runner's lock, which hung the suite once when the collection ran inside distributed's own
    # locked code; the refusal collects it at once.
    distributed = pytest.importorskip("distributed")
    import gc

    from cnsim.executors import make_executor

    def clients() -> set[int]:
        return {id(o) for o in gc.get_objects() if isinstance(o, distributed.Client)}

    before = clients()  # any an earlier test of this worker keeps
    for address in ["not an address", "tcp://127.0.0.1:notaport", "foo://bar:1"]:
        with pytest.raises(ScenarioError, match="--scheduler"):
            make_executor("dask", scheduler=address)
        left = clients() - before
        assert not left, f"{address}: {len(left)} Client(s) left for a later collection"


# --- the Python API: types, run folders, series, catalog ---------------------------------------


@pytest.mark.parametrize("overrides", ["cm.scheme=bcn", [("cm.scheme", "bcn")], {1: 2}, {None: 1}])
def test_run_refuses_set_of_the_wrong_type(overrides: object) -> None:
    with pytest.raises(ScenarioError, match="set: must be a mapping|key .*: must be a string"):
        cnsim.run(BASE, set=overrides)  # type: ignore[arg-type]


def test_scenario_set_refuses_a_key_that_is_not_a_string() -> None:
    for key in (None, 1, ["cm", "scheme"]):
        with pytest.raises(ScenarioError, match="must be a string"):
            load(BASE).set(key, 1)  # type: ignore[arg-type]


def _result(tmp_path: Path) -> tuple[Result, Path]:
    scen = load("kd-symmetric-single-hs").validate()
    r = Result.from_engine(scen, engine_result(scen), manifest={"wall_s": 1.0})
    return r, r.save(tmp_path / "run", plots=False)


def test_save_refuses_a_finished_run_folder_unless_forced(tmp_path: Path) -> None:
    r, folder = _result(tmp_path)
    before = (folder / "summary.json").read_text()
    (folder / "summary.json").write_text("{}")
    with pytest.raises(ScenarioError, match="not empty; pass force=True"):
        r.save(folder, plots=False)
    assert (folder / "summary.json").read_text() == "{}"
    (folder / "stale.txt").write_text("old")
    assert r.save(folder, plots=False, force=True) == folder
    assert (folder / "summary.json").read_text() == before and not (folder / "stale.txt").exists()
    empty = tmp_path / "empty"
    empty.mkdir()
    r.save(empty, plots=False)  # an existing empty folder is fine (the CLI saves into one)
    assert (empty / "summary.json").is_file()
    loaded = Result.load(folder)  # a loaded result re-saved over its own folder keeps its series
    assert loaded.scenario.id == "kd-symmetric-single-hs" != folder.name  # the id is the summary's, not the folder's
    assert loaded.summary == r.summary and loaded.fair_gbps == r.fair_gbps and loaded.manifest == {"wall_s": 1.0}
    queue = loaded.series("queue")
    loaded.save(folder, plots=False, force=True)
    assert Result.load(folder).series("queue").equals(queue)
    assert not [p for p in tmp_path.iterdir() if "partial" in p.name]


def test_save_to_a_path_that_cannot_be_a_folder(tmp_path: Path) -> None:
    r, _ = _result(tmp_path)
    afile = tmp_path / "afile"
    afile.write_text("x")
    with pytest.raises(ScenarioError, match="is a file"):
        r.save(afile, plots=False)
    with pytest.raises(ScenarioError, match="cannot write") as err:
        r.save(afile / "below", plots=False)
    # the message names the path that failed and why, in words
    assert str(err.value) == f"{afile / 'below'}: cannot write the run folder ({afile / 'below' / 'series'}: Not a directory); choose another folder"
    with pytest.raises(ScenarioError, match="cannot write"):
        r.save("/proc/cnsim-no-such-folder", plots=False)


def test_load_refuses_what_is_not_a_run_folder(tmp_path: Path) -> None:
    _, folder = _result(tmp_path)
    afile = tmp_path / "afile"
    afile.write_text("x")
    with pytest.raises(ScenarioError, match="does not exist"):
        Result.load(tmp_path / "nope")
    with pytest.raises(ScenarioError, match="is a file"):
        Result.load(afile)
    for junk, fragment in [
        (b"", "empty"),
        (b"{", "not valid JSON"),
        (b"[1, 2]", "a JSON list"),
        (b"null", "a JSON null"),
        (b"\xff\xfe", "not UTF-8"),
        (b'{"throughput_gbps": 5}', "damaged"),
    ]:
        bad = tmp_path / "bad"
        shutil.rmtree(bad, ignore_errors=True)
        shutil.copytree(folder, bad)
        (bad / "summary.json").write_bytes(junk)
        with pytest.raises(ScenarioError, match=fragment):
            Result.load(bad)
    (bad / "summary.json").write_text(json.dumps(json.loads((folder / "summary.json").read_text())))
    (bad / "manifest.json").write_text("[1]")
    assert Result.load(bad).manifest == {}
    (bad / "scenario.toml").write_text((folder / "scenario.toml").read_text() + "\nbogus_key = 1\n")
    with pytest.raises(ScenarioError, match="^" + re.escape(f"{bad / 'scenario.toml'}: kd-symmetric-single-hs: metrics.bogus_key: unknown key")):
        Result.load(bad)  # a scenario that no longer validates is blamed on its file
    if Path("/proc/self/mem").is_file():  # a file whose read fails (root reads any permission)
        (bad / "scenario.toml").unlink()
        (bad / "scenario.toml").symlink_to("/proc/self/mem")
        with pytest.raises(ScenarioError, match="^" + re.escape(f"{bad}: cannot be read (Input/output error)") + "$"):
            Result.load(bad)
        (bad / "scenario.toml").unlink()
    (bad / "scenario.toml").write_text("not toml [")
    with pytest.raises(ScenarioError, match="scenario.toml: not valid TOML"):
        Result.load(bad)
    (bad / "scenario.toml").unlink()
    with pytest.raises(ScenarioError, match="no scenario.toml"):
        Result.load(bad)
    (bad / "summary.json").unlink()
    with pytest.raises(ScenarioError, match="no summary.json"):
        Result.load(bad)


def test_series_refuses_unknown_kinds_and_damaged_files(tmp_path: Path) -> None:
    r, folder = _result(tmp_path)
    loaded = Result.load(folder)
    for result in (r, loaded):
        for kind in ("nope", None, "../summary", 5):
            with pytest.raises(ScenarioError, match="unknown; kinds: throughput") as err:
                result.series(kind)  # type: ignore[arg-type]
            assert isinstance(err.value, KeyError)  # as before, for callers that catch KeyError
    (folder / "series" / "queue.parquet").write_bytes(b"junk")
    with pytest.raises(ScenarioError, match="queue.parquet: damaged: not a readable Parquet file"):
        Result.load(folder).series("queue")


def test_catalog_runs_refuses_a_file_that_is_not_a_catalog(tmp_path: Path) -> None:
    afile = tmp_path / "hostname"
    afile.write_text("myhost\n")
    with pytest.raises(ScenarioError, match="not a run catalog"):
        cnsim.catalog.runs(afile)
    _result(tmp_path)
    cnsim.catalog.build(tmp_path)
    assert cnsim.catalog.runs(tmp_path).num_rows == 1
    with pytest.raises(ScenarioError, match="where_sql 'nope = 1'"):
        cnsim.catalog.runs(tmp_path, "nope = 1")


def test_paths_of_the_wrong_type_are_refused(tmp_path: Path) -> None:
    r, _ = _result(tmp_path)
    with pytest.raises(ScenarioError, match="must be a path"):
        r.save(None)  # type: ignore[arg-type]
    with pytest.raises(ScenarioError, match="must be a path"):
        Result.load(5)  # type: ignore[arg-type]
    with pytest.raises(ScenarioError, match="where must be"):
        cnsim.catalog.runs(None)  # type: ignore[arg-type]
    with pytest.raises(ScenarioError, match="where_sql: must be"):
        cnsim.catalog.runs(tmp_path, 5)  # type: ignore[arg-type]
