"""The command line's parts (cnsim.cli), one by one: how each failure maps to an exit status and a
line, the progress bars a terminal gets, the run's summary table, the checks of the benchmark
options and output file, the folders a sweep, check or reproduction resumes, and the messages of
an interrupted command."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import cnsim
import pytest
import typer
from _faults import fail_runs, long_links
from cnsim.cli import (
    Terminated,
    _bench_out,
    _bench_rounds,
    _bench_scale,
    _check_folder_refusal,
    _executor_options,
    _guard,
    _is_run_id,
    _progress_bar,
    _refuse_runs_outside,
    _reproduce_folder_refusal,
    _scale_sizes,
    _stopped,
    _summary_table,
    _sweep_folder_refusal,
    _sweep_progress,
    _visible,
    _write_bench_json,
    app,
)
from cnsim.errors import EngineError, ScenarioError
from cnsim.reproduce import get_deck
from cnsim.runner import EngineMissing
from cnsim.sweep import SweepSpec
from typer.testing import CliRunner

pytest.importorskip("cnsim._core")

runner = CliRunner()


def exit_of(error: BaseException, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """The exit status and the stderr of ``error`` raised inside the guard."""
    with pytest.raises(typer.Exit) as caught, _guard():
        raise error
    return caught.value.exit_code, capsys.readouterr().err


# --- failures to exit statuses --------------------------------------------------------------


def test_each_failure_has_its_exit_status_and_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert exit_of(ScenarioError("cm.gd: bad"), capsys) == (2, "cm.gd: bad\n")
    assert exit_of(EngineMissing("no engine; build it"), capsys) == (1, "cnsim: no engine; build it\n")
    assert exit_of(BrokenPipeError(), capsys) == (0, "")  # the reader of `cnsim show | head` left
    missing = FileNotFoundError(2, "No such file or directory", "/no/such/file")
    assert exit_of(missing, capsys) == (2, "cnsim: I/O error /no/such/file: No such file or directory\n")
    assert exit_of(OSError("the disk said no"), capsys) == (2, "cnsim: I/O error: the disk said no\n")
    code, err = exit_of(EngineError("queue underflow"), capsys)
    assert code == 70 and err.startswith("cnsim: internal error: queue underflow. This is a bug in cnsim")
    assert exit_of(KeyboardInterrupt(), capsys) == (130, "cnsim: interrupted; the run was stopped and nothing was written.\n")
    assert exit_of(Terminated(), capsys) == (143, "cnsim: terminated (SIGTERM); the run was stopped and nothing was written.\n")
    with _guard():  # nothing raised, nothing said
        pass
    assert capsys.readouterr() == ("", "")


def test_an_interrupted_command_names_its_folder_only_when_it_wrote_one(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "out"
    folder.mkdir()  # made, nothing in it yet
    _stopped(KeyboardInterrupt(), folder, "cnsim check kd")
    assert capsys.readouterr().err == "cnsim: interrupted; nothing was written.\n"
    (folder / "runs").mkdir()
    _stopped(Terminated(), folder, "cnsim check kd")
    assert capsys.readouterr().err == (f"cnsim: terminated (SIGTERM); completed runs are kept in {folder}. "
                                       f"Resume with: cnsim check kd --out {folder}\n")


def test_executor_options_are_checked_before_anything_is_planned() -> None:
    for executor, workers in (("local", None), ("process", 1), ("dask", 2)):
        _executor_options(executor, workers, None)
    with pytest.raises(ScenarioError, match=r"^--executor: 'threads' is not an executor; allowed: local, process, dask$"):
        _executor_options("threads", None, None)
    with pytest.raises(ScenarioError, match=r"^--workers: must be at least 1 \(given 0\)$"):
        _executor_options("local", 0, None)
    with pytest.raises(ScenarioError, match="--scheduler ' ': an empty value"):
        _executor_options("dask", None, " ")


# --- progress bars ----------------------------------------------------------------------------


def test_a_runs_progress_bar_only_on_a_terminal_and_in_simulated_seconds(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _progress_bar(10**12, quiet=True) == (None, None)
    monkeypatch.setattr("sys.stdout.isatty", lambda: False)
    assert _progress_bar(10**12, quiet=False) == (None, None)
    monkeypatch.setattr("sys.stdout.isatty", lambda: True)
    assert _progress_bar(10**12, quiet=True) == (None, None)
    bar, update = _progress_bar(250 * 10**9, quiet=False)
    (task,) = bar.tasks
    assert task.total == 0.25 and task.completed == 0
    update(125 * 10**9, 250 * 10**9)
    assert task.completed == 0.125


def test_a_sweeps_progress_bar_counts_runs_and_failures(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _sweep_progress(True, "s") == (None, None)
    monkeypatch.setattr("sys.stdout.isatty", lambda: False)
    assert _sweep_progress(False, "s") == (None, None)
    monkeypatch.setattr("sys.stdout.isatty", lambda: True)
    bar, factory = _sweep_progress(False, "the label")
    first = factory("study-a")
    factory("")  # no name: the command's label
    assert [t.description for t in bar.tasks] == ["study-a", "the label"]
    assert bar.tasks[0].total is None
    first(3, 10, 0)
    assert (bar.tasks[0].completed, bar.tasks[0].total, bar.tasks[0].fields["failed"]) == (3, 10, "")
    first(5, 10, 2)
    assert (bar.tasks[0].completed, bar.tasks[0].fields["failed"]) == (5, "2 failed")


# --- the run's summary table ----------------------------------------------------------------


@pytest.fixture(scope="module")
def kd_run() -> cnsim.Result:
    return cnsim.run("kd-symmetric-single-hs", duration="20ms", set={"metrics.window": ["5ms", "20ms"]})


def rows(table: Any) -> dict[str, str]:
    return dict(zip(table.columns[0]._cells, table.columns[1]._cells, strict=True))


def test_the_run_table_shows_the_window_the_headline_and_the_folder(kd_run: cnsim.Result) -> None:
    table = _summary_table(kd_run, Path("results/x"))
    assert table.title == "kd-symmetric-single-hs — scheme none, seed 1"
    shown = rows(table)
    assert list(shown) == ["window", "aggregate (Gb/s)", "hot port (Gb/s), S1/EP4", "hot queue mean (KB)", "drops (frames)",
                           "paused fraction", "Jain (vs max-min)", "wall time", "results"]
    from cnsim.labels import fmt

    s = kd_run.summary
    assert shown["window"] == "[0.005, 0.02] s"
    assert shown["hot queue mean (KB)"] == fmt(s["queue_bytes"]["hot"]["mean"] / 1000)
    assert shown["drops (frames)"] == fmt(s["drops"]["frames"])
    assert shown["Jain (vs max-min)"] == fmt(s["fairness"]["jain"])
    assert shown["wall time"] == f"{fmt(kd_run.manifest['wall_s'])} s" and shown["results"] == "results/x"


def test_the_run_table_leaves_out_what_a_run_does_not_have(kd_run: cnsim.Result) -> None:
    summary = {**kd_run.summary, "window_s": [0.0], "fairness": {"jain": None},
               "deadlock": {"t_s": 0.0125, "cycle": ["S1/EP0", "S2/EP1", "S1/EP0"]}}
    shown = rows(_summary_table(cnsim.Result(kd_run.scenario, summary, manifest=kd_run.manifest), None))
    assert "window" not in shown and "Jain (vs max-min)" not in shown and "results" not in shown
    assert shown["PAUSE deadlock"] == "at 0.0125 s: S1/EP0 -> S2/EP1 -> S1/EP0"
    assert shown["paused fraction"] == "0"  # a metric that is 0 is shown, not left out
    del summary["window_s"]
    summary["deadlock"] = None
    shown = rows(_summary_table(cnsim.Result(kd_run.scenario, summary, manifest=kd_run.manifest), None))
    assert "window" not in shown and "PAUSE deadlock" not in shown


# --- the benchmark's options and file -------------------------------------------------------


def test_the_benchmarks_file_must_be_a_writable_file_path(tmp_path: Path) -> None:
    _bench_out(tmp_path / "new.json")
    (tmp_path / "old.json").write_text("{}")
    _bench_out(tmp_path / "old.json")  # a file is replaced
    with pytest.raises(ScenarioError, match=r"^--out '\.' \(or an empty value\): names a folder"):
        _bench_out(Path("."))
    with pytest.raises(ScenarioError, match="is a folder; give the path of a JSON file"):
        _bench_out(tmp_path)
    os.mkfifo(tmp_path / "pipe")
    with pytest.raises(ScenarioError, match="pipe: exists and is not a regular file"):
        _bench_out(tmp_path / "pipe")
    with pytest.raises(ScenarioError, match="the folder .*missing does not exist"):
        _bench_out(tmp_path / "missing" / "b.json")
    with pytest.raises(ScenarioError, match=r"^--out /proc/b.json: cannot write into /proc \(No such file or directory\); give another path$"):
        _bench_out(Path("/proc/b.json"))


def test_scale_sizes_are_buildable_host_counts_given_once() -> None:
    from cnsim.bench import MAX_HOSTS, SIZES

    assert _scale_sizes(None) == SIZES == (16, 128, 512, 2048)
    assert _scale_sizes("2,128,512") == (2, 128, 512)
    with pytest.raises(ScenarioError, match="host count 1 is out of range; allowed: 2 to"):
        _scale_sizes("1")
    assert _scale_sizes("128") == (128,)
    with pytest.raises(ScenarioError, match=f"host count {MAX_HOSTS + 1} is out of range"):
        _scale_sizes(f"16,{MAX_HOSTS + 1}")
    with pytest.raises(ScenarioError, match="expected host counts separated by commas"):
        _scale_sizes("16;128")
    with pytest.raises(ScenarioError, match=r"above that 2·k² \(512, 2048, 8192, \.\.\.\)"):
        _scale_sizes("300")
    with pytest.raises(ScenarioError, match=f"no merged-top two-level fat tree has {MAX_HOSTS} hosts"):
        _scale_sizes(str(MAX_HOSTS))  # in range, yet no fat tree of that size
    with pytest.raises(ScenarioError, match="a size is repeated"):
        _scale_sizes("16,16")
    with pytest.raises(ScenarioError, match="an empty value"):
        _scale_sizes("")


def test_rounds_from_one_to_a_hundred() -> None:
    _bench_rounds(1)
    _bench_rounds(100)
    for bad in (0, 101):
        with pytest.raises(ScenarioError, match=rf"^--rounds {bad}: a whole number of rounds from 1 to 100$"):
            _bench_rounds(bad)


def test_the_scale_benchmarks_table_and_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "scale.json"
    for bad in (999.0, 1.0001e10):
        with pytest.raises(ScenarioError, match=re.escape(f"--events {bad:g}: about how many events per size; allowed: 1e3 to 1e10")):
            _bench_scale("16", bad, out)
    _bench_scale("16", 1e3, out)
    text = capsys.readouterr().out
    assert "scale benchmark: ~1e+03 events per size" in text and "median" not in text and "rounds" not in text
    doc = json.loads(out.read_text())
    assert doc["events_target"] == 1e3 and doc["rounds"] == 1 and [p["hosts"] for p in doc["sizes"]] == [16]
    (p,) = doc["sizes"]
    (cells,) = table_rows(text)
    assert cells == ["16", p["topology"], f"{p['sim_s']:.4g}", f"{p['events']:,.0f}", f"{p['events_per_s'] / 1e6:.2f}",
                     f"{p['frames_per_s'] / 1e6:.2f}", f"{p['sim_s_per_wall_s']:.4g}", f"{p['wall_s_per_sim_s']:.4g}",
                     f"{p['peak_rss_mib']:.0f}", "1.00", f"{p['loop_events_per_s'] / 1e6:.2f}", "1.00"]
    assert out.read_text().endswith("}\n") and sorted(p.name for p in tmp_path.iterdir()) == ["scale.json"]
    _bench_scale("16,2", 2e3, out, rounds=2)
    text = capsys.readouterr().out
    assert "~2e+03 events per size, median of 2 interleaved rounds" in text and "M ev/s rounds" in text
    doc = json.loads(out.read_text())
    assert doc["rounds"] == 2 and [len(p["events_per_s_rounds"]) for p in doc["sizes"]] == [2, 2]
    for cells, p in zip(table_rows(text), doc["sizes"], strict=True):
        low, high = min(p["events_per_s_rounds"]) / 1e6, max(p["events_per_s_rounds"]) / 1e6
        assert cells[0] == str(p["hosts"]) and cells[-1] == f"{low:.2f}–{high:.2f}"


def table_rows(text: str) -> list[list[str]]:
    """The body rows of a rich table as printed: cells between the vertical bars."""
    return [[c.strip() for c in line.strip().strip("│").split("│")] for line in text.splitlines()
            if line.strip().startswith("│") and line.strip("│ ")[:1].isdigit()]


def test_the_scale_benchmarks_default_event_count(tmp_path: Path) -> None:
    out = tmp_path / "scale.json"
    res = runner.invoke(app, ["bench", "--scale", "--sizes", "16", "--out", str(out)])
    assert res.exit_code == 0, res.output
    doc = json.loads(out.read_text())
    assert doc["events_target"] == 3e6 and doc["rounds"] == 1


def test_one_scenarios_benchmark_prints_its_rates() -> None:
    res = runner.invoke(app, ["bench", "kd-symmetric-single-hs", "--duration", "5ms"])
    assert res.exit_code == 0, res.output
    text = res.stdout
    assert text.startswith("scenario           kd-symmetric-single-hs (scheme none, 0.005 s simulated)\n")
    value = {line[:19].strip(): line[19:].strip() for line in text.splitlines()}  # a label, then its value from column 20
    assert list(value) == ["scenario", "wall time", "events/s", "frames/s", "sim s per wall s", "peak memory"]
    assert float(value["wall time"].removesuffix(" s")) > 0
    assert int(value["events/s"].replace(",", "")) > 10**5 and int(value["frames/s"].replace(",", "")) > 10**4
    assert float(value["sim s per wall s"]) > 0.001
    assert 10 < float(value["peak memory"].removesuffix(" MiB")) < 4000


def test_the_start_up_benchmark_runs_five_rounds_by_default(tmp_path: Path) -> None:
    out = tmp_path / "s.json"
    res = runner.invoke(app, ["bench", "--startup", "--duration", "1ms", "--out", str(out)])
    assert res.exit_code == 0, res.output
    doc = json.loads(out.read_text())
    assert len(doc["rounds"]) == 5 and doc["command"] == ["cnsim", "run", "zhb-og-single-hop", "--duration", "1ms", "--no-plots", "--quiet"]
    assert res.stdout.startswith("start-up benchmark: cnsim run zhb-og-single-hop --duration 1ms --no-plots --quiet, 5 rounds ")
    process = [r["process_s"] for r in doc["rounds"]]
    (line,) = [line for line in res.stdout.splitlines() if line.startswith("whole process")]
    assert line == f"whole process      {doc['median']['process_s']:.3f} s   {min(process):.3f}–{max(process):.3f}"


def test_the_start_up_benchmark_of_a_scenario_given_once(tmp_path: Path) -> None:
    out = tmp_path / "s.json"
    res = runner.invoke(app, ["bench", "kd-symmetric-single-hs", "--startup", "--duration", "1ms", "--rounds", "2",
                              "--set", "cm.scheme=bcn", "--out", str(out)])
    assert res.exit_code == 0, res.output
    doc = json.loads(out.read_text())
    assert doc["command"] == ["cnsim", "run", "kd-symmetric-single-hs", "--duration", "1ms", "--set", "cm.scheme=bcn", "--no-plots", "--quiet"]
    assert ", 2 rounds (a fresh interpreter" in res.stdout
    engine = [r["engine_s"] for r in doc["rounds"]]
    (line,) = [line for line in res.stdout.splitlines() if line.startswith("engine")]
    assert line == f"engine             {doc['median']['engine_s']:.3f} s   {min(engine):.3f}–{max(engine):.3f}"
    res = runner.invoke(app, ["bench", "--startup", "--duration", "1ms", "--rounds", "1", "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert ", 1 round (a fresh interpreter" in res.stdout
    (line,) = [line for line in res.stdout.splitlines() if line.startswith("engine")]
    assert line == f"engine             {json.loads(out.read_text())['median']['engine_s']:.3f} s   "  # one round: no range


def test_a_benchmark_file_is_written_whole_or_not_at_all(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "b.json"
    _write_bench_json(out, {"a": [1, 2]})
    assert out.read_text() == '{\n  "a": [\n    1,\n    2\n  ]\n}\n' and capsys.readouterr().out == f"results: {out}\n"
    (tmp_path / "taken").mkdir()  # renaming over a folder fails: the partial file goes
    with pytest.raises(OSError):
        _write_bench_json(tmp_path / "taken", {"a": 1})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b.json", "taken"]


# --- the folders commands resume ------------------------------------------------------------


def test_a_run_id_is_sixteen_lowercase_hex_digits() -> None:
    assert _is_run_id("0123456789abcdef")
    for name in ("0123456789abcde", "0123456789abcdef0", "0123456789ABCDEF", "0123456789abcdeg"):
        assert not _is_run_id(name)


def test_hidden_names_are_an_interrupted_commands_temporary_files(tmp_path: Path) -> None:
    for name in ("a", ".partial", "b"):
        (tmp_path / name).write_text("")
    assert _visible(tmp_path) == {"a", "b"}


def test_a_checks_folder_is_one_with_checks_json_or_only_run_folders(tmp_path: Path) -> None:
    (tmp_path / "runs" / "0123456789abcdef").mkdir(parents=True)
    assert _check_folder_refusal(tmp_path) is None  # interrupted before checks.json
    (tmp_path / "runs" / "notes").mkdir()
    assert _check_folder_refusal(tmp_path) == "it holds no checks.json and no run folders of a check"
    (tmp_path / "checks.json").write_text("{}")
    assert _check_folder_refusal(tmp_path) is None
    for name in ("a", "b", "c", "d"):
        (tmp_path / name).write_text("")
    assert _check_folder_refusal(tmp_path) == "it holds files that `cnsim check` does not write (a, b, c, ...)"
    (tmp_path / "d").unlink()
    assert _check_folder_refusal(tmp_path) == "it holds files that `cnsim check` does not write (a, b, c)"
    for name in ("b", "c"):
        (tmp_path / name).unlink()
    assert _check_folder_refusal(tmp_path) == "it holds files that `cnsim check` does not write (a)"
    empty = tmp_path / "e"
    (empty / "runs").mkdir(parents=True)
    assert _check_folder_refusal(empty) is None  # an empty runs folder: nothing but its own


def test_a_reproductions_folder_is_its_own_decks(tmp_path: Path) -> None:
    kd = get_deck("kd")
    assert _reproduce_folder_refusal(tmp_path, kd, False) == "it holds no deck.json and no study of the deck"
    (tmp_path / "kd-qeq150-delay").mkdir()
    assert _reproduce_folder_refusal(tmp_path, kd, False) == "it holds no deck.json and no study of the deck"
    (tmp_path / "kd-qeq150-delay" / "sweep.json").write_text("{}")
    assert _reproduce_folder_refusal(tmp_path, kd, False) is None  # interrupted in its first study
    (tmp_path / "deck.json").write_text(json.dumps({"deck": "kd", "quick": True}))
    assert _reproduce_folder_refusal(tmp_path, kd, True) is None
    assert _reproduce_folder_refusal(tmp_path, kd, False) == "it holds the output of `cnsim reproduce kd --quick`, not of `cnsim reproduce kd`"
    (tmp_path / "deck.json").write_text(json.dumps({"deck": "zhb"}))
    assert _reproduce_folder_refusal(tmp_path, kd, False) == "it holds the output of `cnsim reproduce zhb`, not of `cnsim reproduce kd`"
    (tmp_path / "deck.json").write_text("[]")
    assert _reproduce_folder_refusal(tmp_path, kd, False) == "its deck.json does not read back"
    (tmp_path / "notes.txt").write_text("")
    assert _reproduce_folder_refusal(tmp_path, kd, False) == "it holds files that `cnsim reproduce kd` does not write (notes.txt)"
    for name in ("a", "b", "c"):
        (tmp_path / name).write_text("")
    assert _reproduce_folder_refusal(tmp_path, kd, False) == "it holds files that `cnsim reproduce kd` does not write (a, b, c, ...)"
    (tmp_path / "notes.txt").unlink()
    assert _reproduce_folder_refusal(tmp_path, kd, False) == "it holds files that `cnsim reproduce kd` does not write (a, b, c)"


def test_a_sweep_resumes_only_in_its_own_folder(tmp_path: Path) -> None:
    spec = SweepSpec("mine", "kd-symmetric-single-hs", axes={"links.delay": ["4us"]})
    given = tmp_path / "given"
    given.mkdir()
    assert _sweep_folder_refusal(given, spec) == "holds no sweep (sweep.json)"
    (given / "sweep.json").write_text(json.dumps({"spec": {**spec.to_dict(), "seeds": [1, 2]}}))
    assert _sweep_folder_refusal(given, spec).startswith("holds sweep 'mine' with other settings (pass --extend")
    assert _sweep_folder_refusal(given, spec, extend=True) is None
    (given / "sweep.json").write_text(json.dumps({"spec": {**spec.to_dict(), "name": "theirs"}}))
    assert _sweep_folder_refusal(given, spec, extend=True) == "holds another sweep ('theirs') than 'mine'"
    (given / "sweep.json").write_text(json.dumps({"spec": spec.to_dict()}))
    assert _sweep_folder_refusal(given, spec) is None
    (given / "sweep.json").write_text("{not json")
    assert _sweep_folder_refusal(given, spec) == "its sweep.json does not read back (a damaged sweep folder)"
    (given / "sweep.json").write_text(json.dumps({"spec": ["not", "a", "spec"]}))
    assert _sweep_folder_refusal(given, spec) == "holds another sweep (None) than 'mine'"


def test_extend_names_the_runs_it_would_drop_whatever_their_params_json_holds(tmp_path: Path) -> None:
    """--extend's refusal names the runs a new plan drops by their params.json: one that holds a
    JSON list (or params that are not a table) ended in "AttributeError: 'list' object has no
    attribute 'get'"; one run is "1 of them is", not "are"."""
    for name, text in (("aaa", "[1]"), ("bbb", '{"params": [1], "seed": 2}')):
        (tmp_path / "runs" / name).mkdir(parents=True)
        (tmp_path / "runs" / name / "params.json").write_text(text)
    with pytest.raises(ScenarioError, match=r"and 2 of them are not in the new plan: aaa \(seed \?\); bbb \(seed 2\)\."):
        _refuse_runs_outside(tmp_path, [])
    (tmp_path / "runs" / "bbb" / "params.json").unlink()
    (tmp_path / "runs" / "bbb").rmdir()
    with pytest.raises(ScenarioError, match=r"and 1 of them is not in the new plan: aaa"):
        _refuse_runs_outside(tmp_path, [])


def test_extend_names_the_first_three_runs_it_would_drop_by_a_short_id(tmp_path: Path) -> None:
    """Up to three runs left out are named, each by the first 12 digits of its run id; of more,
    the first three, then how many more."""
    ids = [f"{i:x}" * 16 for i in range(10, 15)]  # aaaa…, bbbb…, …: 16-digit run ids
    for i, run_id in enumerate(ids[:3]):
        (tmp_path / "runs" / run_id).mkdir(parents=True)
        (tmp_path / "runs" / run_id / "params.json").write_text(json.dumps({"params": {"links.delay": "4us"}, "seed": i}))
    named = "; ".join(f"{run_id[:12]} (links.delay = 4us, seed {i})" for i, run_id in enumerate(ids[:3]))
    with pytest.raises(ScenarioError) as three:
        _refuse_runs_outside(tmp_path, [])
    assert f"and 3 of them are not in the new plan: {named}. Put their values" in str(three.value)
    for run_id in ids[3:]:
        (tmp_path / "runs" / run_id).mkdir()
    with pytest.raises(ScenarioError) as five:
        _refuse_runs_outside(tmp_path, [])
    assert f"and 5 of them are not in the new plan: {named} and 2 more. Put their values" in str(five.value)


# --- what the sweep and reproduce commands print and how they end ----------------------------


def one_run_spec(tmp_path: Path) -> Path:
    path = tmp_path / "one.toml"
    path.write_text('name = "one"\nbase = "kd-symmetric-single-hs"\n[set]\nduration = "2ms"\n[axes]\n"links.delay" = ["4us", "50us"]\n')
    return path


def test_a_sweep_says_what_it_did_and_draws_each_run_with_plots(tmp_path: Path) -> None:
    out = tmp_path / "o"
    res = runner.invoke(app, ["sweep", str(one_run_spec(tmp_path)), "--out", str(out), "--workers", "1", "--plots"])
    assert res.exit_code == 0, res.output
    assert re.fullmatch(rf"sweep one: 2 runs \(0 already done, 2 run, 0 failed\) in [0-9.]+ s on local \(1 thread\) → "
                        rf"{out}/sweep.parquet, {out}/report.html\n", res.stdout)
    runs = [p for p in (out / "runs").iterdir()]
    assert len(runs) == 2 and all((p / "report.html").is_file() and (p / "throughput.png").is_file() for p in runs)
    res = runner.invoke(app, ["sweep", str(one_run_spec(tmp_path)), "--out", str(out), "--quiet"])
    assert res.exit_code == 0 and res.stdout == ""


def test_a_sweep_with_a_failed_run_names_it_and_exits_1(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fail_runs(monkeypatch, long_links)
    out = tmp_path / "o"
    res = runner.invoke(app, ["sweep", str(one_run_spec(tmp_path)), "--out", str(out), "--workers", "1", "--quiet"])
    assert res.exit_code == 1 and res.stdout == ""
    (line,) = res.stderr.splitlines()
    assert re.fullmatch(r"run [0-9a-f]{16} failed: RuntimeError: injected failure.*", line)
    assert not list((out / "runs").glob("*/report.html"))  # no --plots: no run pages



def small_deck(monkeypatch: pytest.MonkeyPatch, delays: list[str]) -> None:
    """`cnsim reproduce kd` made a deck of one study of these link delays, 5 ms runs."""
    import cnsim.reproduce as reproduce_module
    from cnsim.reproduce import Deck, Study
    from cnsim.reproduce.figures import TimeFigure

    deck = Deck("kd", "small", "test", [Study("kd-qeq150-delay", "one", quick_axes={"links.delay": delays},
                                              figures=[TimeFigure("q", "queue", "hot_queue")])],
                quick_set={"duration": "5ms", "metrics.window": ["0ms", "5ms"]})
    monkeypatch.setattr(reproduce_module, "get_deck", lambda name: deck)


def test_a_reproduction_lists_its_studies_and_replaces_a_folder_with_force(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    small_deck(monkeypatch, ["4us"])
    out = tmp_path / "r"
    out.mkdir()
    (out / "stray.txt").write_text("")
    args = ["reproduce", "kd", "--quick", "--no-checks", "--workers", "1", "--out", str(out)]
    res = runner.invoke(app, args)
    assert res.exit_code == 2 and "does not write (stray.txt)" in res.output
    res = runner.invoke(app, [*args, "--force"])
    assert res.exit_code == 0, res.output
    assert not (out / "stray.txt").exists()
    done, last = res.stdout.splitlines()
    assert re.fullmatch(r"    done  kd-qeq150-delay +1 runs, 1 figures, [0-9.]+ s", done)
    assert re.fullmatch(rf"reproduce kd: [0-9.]+ s → {out}/report.html", last)
    manifests = {p: p.read_text() for p in out.glob("kd-qeq150-delay/runs/*/manifest.json")}
    res = runner.invoke(app, [*args, "--quiet"])  # resumed: its own output, its runs reused
    assert res.exit_code == 0 and res.stdout == ""
    assert len(manifests) == 1 and {p: p.read_text() for p in manifests} == manifests  # not run again


def test_a_reproduction_with_a_failed_run_exits_1(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    small_deck(monkeypatch, ["4us", "50us"])
    fail_runs(monkeypatch, long_links)
    res = runner.invoke(app, ["reproduce", "kd", "--quick", "--no-checks", "--workers", "1", "--out", str(tmp_path / "r")])
    assert res.exit_code == 1
    assert re.match(r"    done  kd-qeq150-delay +2 runs \(1 failed\), 1 figures", res.stdout)


def test_a_fluid_study_says_its_verdict_without_plots(tmp_path: Path) -> None:
    out = tmp_path / "f"
    res = runner.invoke(app, ["fluid", "kd-symmetric-single-hs", "--set", "cm.scheme=bcn", "--no-plots", "--out", str(out)])
    assert res.exit_code == 0, res.output
    doc = json.loads((out / "fluid.json").read_text())
    assert doc["stable"] is True and "compare" not in doc
    assert res.stdout.splitlines() == [
        f"kd-symmetric-single-hs — bcn fluid model: stable, phase margin {doc['phase_margin_rad']:.3f} rad at "
        f"{doc['crossover_rad_s']:.4g} rad/s, period {doc['period_s'] * 1e3:.2f} ms",
        f"  fluid: hot queue mean {doc['queue_mean_bytes'] / 1e3:.1f} KB, per-flow rate {doc['rate_mean_gbps']:.4g} Gb/s",
        f"  results: {out}",
    ]
    assert sorted(p.name for p in out.iterdir()) == ["fluid.json", "fluid.parquet"]  # no figure


def test_show_ends_its_output_with_one_newline() -> None:
    toml = runner.invoke(app, ["show", "kd-symmetric-single-hs"])
    core = runner.invoke(app, ["show", "kd-symmetric-single-hs", "--core"])
    assert toml.exit_code == core.exit_code == 0
    assert toml.stdout.endswith("\n") and not toml.stdout.endswith("\n\n")
    assert core.stdout.endswith("}\n") and json.loads(core.stdout)["seed"] == 1
    from cnsim.runner import prepare

    assert core.stdout == prepare("kd-symmetric-single-hs", {}).core_json(indent=2) + "\n"  # indented by two


def test_check_options_are_read_in_order(tmp_path: Path) -> None:
    # `all` is every deck, not an unknown one: the next refusal is the seeds'
    res = runner.invoke(app, ["check", "all", "--seeds", "0", "--out", str(tmp_path / "c")])
    assert res.exit_code == 2 and res.output == "--seeds: must be at least 1 (given 0)\n"
    res = runner.invoke(app, ["check", "kd", "--seeds", "1", "--only", "T-Z03", "--out", str(tmp_path / "c")])
    assert res.exit_code == 2 and "unknown check id(s) T-Z03" in res.output  # one seed is allowed
    res = runner.invoke(app, ["check", "nope", "--out", str(tmp_path / "c")])
    assert res.exit_code == 2 and res.output.startswith("unknown check deck 'nope'; decks: zhb, qcnp, kd, eval, e2cm, cross, or all")


# --- in a terminal: the progress bars as a user sees them -------------------------------------


def in_terminal(args: list[str], cwd: Path) -> tuple[int, str]:
    """``cnsim ARGS`` with a pseudo-terminal as its stdin, stdout and stderr: its exit status and
    what it wrote, colours and cursor moves stripped."""
    import pty
    import subprocess
    import sys

    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-c", "from cnsim.cli import main; main()", *args], cwd=cwd,
                            stdin=slave, stdout=slave, stderr=slave, env={**os.environ, "COLUMNS": "140", "TERM": "xterm"})
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the last writer closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    text = b"".join(chunks).decode("utf-8", "replace")
    return proc.wait(timeout=60), re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text).replace("\r", "")


def test_a_run_in_a_terminal_shows_its_progress_then_its_table(tmp_path: Path) -> None:
    code, text = in_terminal(["run", "kd-symmetric-single-hs", "--duration", "5ms", "--no-plots", "--out", "r"], tmp_path)
    assert code == 0, text
    assert "simulating" in text and "/ 0.005 s" in text  # the bar, in simulated seconds
    assert "kd-symmetric-single-hs — scheme none, seed 1" in text and "│ results" in text
    assert (tmp_path / "r" / "summary.json").is_file()


def test_a_sweep_and_a_check_in_a_terminal_count_their_runs(tmp_path: Path) -> None:
    code, text = in_terminal(["sweep", str(one_run_spec(tmp_path)), "--out", "s", "--workers", "1"], tmp_path)
    assert code == 0, text
    assert re.search(r"one +━+ 2/2 runs", text) and "sweep one: 2 runs (0 already done, 2 run, 0 failed)" in text
    code, text = in_terminal(["check", "kd", "--only", "T-K16", "--quick", "--workers", "1", "--out", "c"], tmp_path)
    assert code == 0, text
    done = json.loads((tmp_path / "c" / "checks.json").read_text())["runs"]
    assert re.search(rf"check kd +━+ {done}/{done} runs", text) and "kd: 1 pass, 0 fail, 0 not_run (1 checks)" in text


def test_a_reproduction_in_a_terminal_has_a_bar_per_study(tmp_path: Path) -> None:
    code, text = in_terminal(["reproduce", "kd", "--quick", "--no-checks", "--workers", "1", "--out", "d"], tmp_path)
    assert code == 0, text
    doc = json.loads((tmp_path / "d" / "deck.json").read_text())
    for study in doc["studies"]:
        assert re.search(rf"{study['sweep']} +━+ {study['runs']}/{study['runs']} runs", text), study["sweep"]
        assert re.search(rf"done  {study['sweep']} +{study['runs']} runs, 3 figures", text)


def test_the_public_runs_save_writes_a_whole_run_folder_and_a_sweeps_run_no_page(kd_run: cnsim.Result, tmp_path: Path) -> None:
    """Contract "Python": `r.save("out/")` writes a run folder, page included ("A run folder":
    DIR/report.html); a sweep's runs (the runner's results) get no page unless asked (--plots)."""
    from cnsim.runner import run

    out = kd_run.save(tmp_path / "public", plots=False)
    assert "kd-symmetric-single-hs" in (out / "report.html").read_text()
    inner = run("kd-symmetric-single-hs", duration="5ms").save(tmp_path / "runner", plots=False)
    assert (inner / "summary.json").is_file() and not (inner / "report.html").exists()
