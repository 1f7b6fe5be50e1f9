"""Input robustness of sweep, check, reproduce and bench (stop 30): bad input is refused with
exit 2 and one message naming the option or file, before any work starts — never a traceback,
a hang, exit 1 or an option silently ignored.

Every test refuses before simulating, or simulates a few milliseconds. Cases that used to hang
run in a subprocess with a timeout, so that a regression fails instead of hanging the suite.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import cnsim.bench
import cnsim.cli
import pytest
from cnsim import outdir
from cnsim.cli import _check_folder_refusal, _reproduce_folder_refusal, _stopped, app
from cnsim.errors import ResourceError, ScenarioError
from cnsim.reproduce import get_deck
from cnsim.sweep import MAX_RUNS, count_runs, expand, load_spec, parse_spec
from typer.testing import CliRunner

runner = CliRunner()


def cnsim_cmd(*args: str, cwd: Path, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cnsim.cli", *args], cwd=cwd, capture_output=True, text=True, timeout=timeout)


def refused(res: object, *fragments: str) -> str:
    """Exit 2, no traceback, every fragment in the message; returns the message."""
    code = getattr(res, "exit_code", getattr(res, "returncode", None))
    text = getattr(res, "output", None) or (getattr(res, "stdout", "") + getattr(res, "stderr", ""))
    assert code == 2, text
    assert "Traceback" not in text, text
    for fragment in fragments:
        assert fragment in text, (fragment, text)
    return str(text)


def write_spec(folder: Path, name: str, body: str) -> Path:
    path = folder / f"{name}.toml"
    path.write_text(f'name = "{name}"\nbase = "kd-symmetric-single-hs"\n{body}', encoding="utf-8")
    return path


# ---- H2/H3: spec files that are not UTF-8 or nested thousands deep ---------------------------


def test_sweep_spec_not_utf8_is_refused_naming_the_file(tmp_path: Path) -> None:
    spec = tmp_path / "bad.toml"
    spec.write_bytes(b"\xf2\x00name = 1\n")
    refused(runner.invoke(app, ["sweep", str(spec), "--out", str(tmp_path / "o")]), str(spec), "not a UTF-8 text file")
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        ("a = " + "[" * 5000 + "]" * 5000 + "\n", "nested too deeply"),
        ("[set]\n" + ".".join(["a"] * 5000) + " = 1\n", "nested too deeply"),
        ("seeds = [" + "9" * 5000 + "]\n", "number is too long"),
    ],
)
def test_sweep_spec_nested_or_unreadable_is_refused(tmp_path: Path, body: str, fragment: str) -> None:
    spec = tmp_path / "deep.toml"
    spec.write_text(body, encoding="utf-8")
    refused(runner.invoke(app, ["sweep", str(spec), "--out", str(tmp_path / "o")]), str(spec), fragment)


def test_sweep_spec_with_a_byte_order_mark_loads(tmp_path: Path) -> None:
    spec = tmp_path / "bom.toml"
    spec.write_text('\ufeffname = "bom"\nbase = "kd-symmetric-single-hs"\n', encoding="utf-8")
    assert load_spec(spec).name == "bom"


# ---- M1: a grid too large to expand ---------------------------------------------------------


def test_huge_grid_is_refused_at_once_with_the_count_and_the_limit(tmp_path: Path) -> None:
    values = "[" + ", ".join(str(i) for i in range(1, 51)) + "]"
    axes = "\n".join(f'"{k}" = {values}' for k in ("cm.w", "cm.gd", "cm.gi", "cm.qeq", "cm.ru", "links.delay"))
    spec = write_spec(tmp_path, "big", f'[set]\n"cm.scheme" = "bcn"\nduration = "2ms"\n[axes]\n{axes}\n')
    started = time.perf_counter()
    res = cnsim_cmd("sweep", str(spec), "--out", "out", cwd=tmp_path)
    assert time.perf_counter() - started < 30
    refused(res, "15,625,000,000 runs", f"{MAX_RUNS:,}", "cm.w: 50 values")
    assert not (tmp_path / "out").exists()


def test_count_runs_does_not_expand() -> None:
    spec = parse_spec({"name": "x", "base": "kd-symmetric-single-hs", "seeds": [1, 2, 3],
                       "axes": {"cm.w": list(range(1000)), "links.delay": list(range(1000))},
                       "zip": {"cm.gd": [1, 2], "cm.gi": [3, 4]}})
    assert count_runs(spec) == 1000 * 1000 * 2 * 3
    with pytest.raises(ScenarioError, match="6,000,000 runs"):
        expand(spec, "/nonexistent/runs")


def test_interrupt_message_names_only_a_folder_that_exists(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "never-written"
    _stopped(cnsim.cli.Terminated(), missing, "cnsim sweep s.toml")
    err = capsys.readouterr().err
    assert "terminated (SIGTERM)" in err and "nothing was written" in err and str(missing) not in err
    (tmp_path / "done" / "runs").mkdir(parents=True)
    _stopped(KeyboardInterrupt(), tmp_path / "done", "cnsim sweep s.toml")
    err = capsys.readouterr().err
    assert f"kept in {tmp_path / 'done'}" in err and f"cnsim sweep s.toml --out {tmp_path / 'done'}" in err


# ---- M2: check --seeds without bound --------------------------------------------------------


@pytest.mark.parametrize("args", [["--seeds", "1000000"], ["--quick", "--seeds", "100000"]])
def test_check_seeds_too_many_runs_is_refused_at_once(tmp_path: Path, args: list[str]) -> None:
    started = time.perf_counter()
    res = cnsim_cmd("check", "kd", *args, "--out", "c", cwd=tmp_path)
    assert time.perf_counter() - started < 30
    refused(res, f"--seeds {args[-1]}", "runs", f"limit of {MAX_RUNS:,}", "at most --seeds")
    assert not (tmp_path / "c").exists()


# ---- M3: runs refused by their estimate are refused before the sweep starts ----------------


def test_sweep_run_over_the_estimate_is_refused_before_anything_runs(tmp_path: Path) -> None:
    spec = write_spec(tmp_path, "huge", '[set]\nduration = "1e6s"\n')
    res = runner.invoke(app, ["sweep", str(spec), "--out", str(tmp_path / "o"), "--workers", "1"])
    refused(res, "sweep huge", "refused before it started", "cnsim run kd-symmetric-single-hs")
    assert not (tmp_path / "o").exists()
    with pytest.raises(ResourceError):
        expand(load_spec(spec), "/nonexistent/runs")
    assert len(expand(load_spec(spec), "/nonexistent/runs", budget_check=False)) == 1


def test_small_sweep_still_runs(tmp_path: Path) -> None:
    spec = write_spec(tmp_path, "small", '[set]\nduration = "2ms"\n"cm.scheme" = "bcn"\n[axes]\n"cm.w" = [2, 4]\n')
    res = runner.invoke(app, ["sweep", str(spec), "--out", str(tmp_path / "o"), "--workers", "1", "--quiet"])
    assert res.exit_code == 0, res.output
    assert len(json.loads((tmp_path / "o" / "sweep.json").read_text())["runs"]) == 2


# ---- M4: check and reproduce refuse a non-empty --out that is not their own -----------------


@pytest.mark.parametrize("command", [["check", "kd", "--quick"], ["reproduce", "kd", "--quick"]])
def test_non_empty_out_of_other_files_is_refused(tmp_path: Path, command: list[str]) -> None:
    (tmp_path / "precious.txt").write_text("keep me")
    refused(runner.invoke(app, [*command, "--out", str(tmp_path)]), f"--out {tmp_path}", "precious.txt", "--force")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["precious.txt"]


def test_check_force_replaces_and_own_output_resumes(tmp_path: Path) -> None:
    out = tmp_path / "c"
    out.mkdir()
    (out / "precious.txt").write_text("x")
    args = ["check", "kd", "--only", "T-K20", "--quick", "--workers", "1", "--quiet", "--out", str(out)]  # T-K20: no run
    res = runner.invoke(app, [*args, "--force"])
    assert res.exit_code == 0, res.output
    assert not (out / "precious.txt").exists() and (out / "checks.json").is_file()
    res = runner.invoke(app, args)  # its own output: resumed without --force
    assert res.exit_code == 0, res.output


def test_a_resumed_check_runs_again_what_another_version_of_the_results_made(tmp_path: Path) -> None:
    from cnsim._version import RESULTS_VERSION

    out = tmp_path / "c"
    args = ["check", "kd", "--only", "T-K15", "--quick", "--workers", "1", "--out", str(out)]
    first = runner.invoke(app, args)
    assert first.exit_code == 0, first.output
    runs = sorted(p for p in (out / "runs").iterdir() if not p.name.startswith("."))
    assert runs and "run now)" in first.output
    manifest = json.loads((runs[0] / "manifest.json").read_text())
    manifest["versions"]["results"] = str(RESULTS_VERSION - 1)
    (runs[0] / "manifest.json").write_text(json.dumps(manifest))
    again = runner.invoke(app, args)
    assert again.exit_code == 0, again.output
    assert f"{len(runs)} runs (1 run now)" in again.stdout
    assert "1 run folder(s) were made by another version of cnsim's results and were run again" in again.stderr
    (runs[0] / "manifest.json").write_text(json.dumps(manifest))  # made by the other version again
    quiet = runner.invoke(app, [*args, "--quiet"])  # said on stderr, --quiet or not, as by cnsim sweep
    assert quiet.exit_code == 0 and quiet.stdout == "", quiet.output
    assert quiet.stderr == "1 run folder(s) were made by another version of cnsim's results and were run again\n"
    assert json.loads((runs[0] / "manifest.json").read_text())["versions"]["results"] == str(RESULTS_VERSION)
    doc = json.loads((out / "checks.json").read_text())
    assert doc["outdated"] == 1 and doc["outdated_runs"] == [runs[0].name]


def test_recognising_a_commands_own_folder(tmp_path: Path) -> None:
    check = tmp_path / "check"
    (check / "runs" / "0123456789abcdef").mkdir(parents=True)
    (check / "sweep.parquet").write_text("")
    assert _check_folder_refusal(check) is None  # interrupted before checks.json
    (check / "sweep.json").write_text("{}")  # a sweep's folder, not a check's
    assert "sweep.json" in str(_check_folder_refusal(check))
    deck = get_deck("kd")
    rep = tmp_path / "rep"
    (rep / "kd-qeq150-delay").mkdir(parents=True)
    (rep / "kd-qeq150-delay" / "sweep.json").write_text("{}")
    assert _reproduce_folder_refusal(rep, deck, quick=True) is None  # interrupted in its first study
    (rep / "deck.json").write_text(json.dumps({"deck": "kd", "quick": True}))
    assert _reproduce_folder_refusal(rep, deck, quick=True) is None
    assert "cnsim reproduce kd --quick" in str(_reproduce_folder_refusal(rep, deck, quick=False))
    (rep / "deck.json").write_text(json.dumps({"deck": "zhb", "quick": True}))
    assert "cnsim reproduce zhb" in str(_reproduce_folder_refusal(rep, deck, quick=True))


def test_reproduce_checks_of_a_deck_without_checks_is_refused_before_running(tmp_path: Path) -> None:
    refused(runner.invoke(app, ["reproduce", "modern", "--quick", "--checks", "--out", str(tmp_path / "r")]),
            "--checks", "has no checks")
    assert not (tmp_path / "r").exists()


# ---- L3: empty option values ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "fragments"),
    [
        (["run", "kd-symmetric-single-hs", "--duration", ""], ["--duration ''", "empty"]),
        (["run", "kd-symmetric-single-hs", "--duration", "  "], ["--duration", "empty"]),
        (["run", "kd-symmetric-single-hs", "--duration", "1ms", "--out", ""], ["--out", "current folder"]),
        (["run", "kd-symmetric-single-hs", "--duration", "1ms", "--force", "--out", "."], ["--out", "current folder"]),
        (["bench", "--duration", ""], ["--duration ''", "empty"]),
        (["bench", "--scale", "--sizes", ""], ["--sizes ''", "empty"]),
        (["sweep", "kd-qeq150-delay", "--out", ""], ["--out", "current folder"]),
        (["sweep", "kd-qeq150-delay", "--executor", "dask", "--scheduler", ""], ["--scheduler ''", "empty"]),
        (["check", "kd", "--out", ""], ["--out", "current folder"]),
        (["check", "kd", "--only", ""], ["--only", "empty"]),
        (["reproduce", "kd", "--out", "."], ["--out", "current folder"]),
    ],
)
def test_empty_values_are_refused_naming_the_option(tmp_path: Path, args: list[str], fragments: list[str]) -> None:
    res = cnsim_cmd(*args, cwd=tmp_path)
    refused(res, *fragments)
    assert list(tmp_path.iterdir()) == []  # nothing written into the current folder


def test_out_holding_the_current_folder_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "inner").mkdir()
    monkeypatch.chdir(tmp_path / "inner")
    with pytest.raises(ScenarioError, match="current folder or holds it"):
        outdir.choose(tmp_path, "x", force=True)
    with pytest.raises(ScenarioError, match="current folder or holds it"):
        outdir.choose(tmp_path / "inner", "x", resume=True)
    assert outdir.choose(tmp_path / "inner" / "new", "x") == tmp_path / "inner" / "new"


# ---- L4: bench options checked before the benchmark runs ------------------------------------


@pytest.fixture
def no_benchmark(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make any benchmark run fail the test: the refusals must come first."""

    def boom(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("the benchmark ran before its options were checked")

    monkeypatch.setattr(cnsim.bench, "run_scale", boom)
    monkeypatch.setattr(cnsim.bench, "run_startup", boom)
    monkeypatch.setattr(cnsim.cli, "run", boom)


@pytest.mark.usefixtures("no_benchmark")
@pytest.mark.parametrize(
    ("args", "fragments"),
    [
        (["--scale", "--sizes", "16", "--events", "1e4", "--out", "{tmp}"], ["--out", "is a folder"]),
        (["--scale", "--sizes", "16", "--events", "1e4", "--out", "/proc/cnsim-x.json"], ["--out /proc/cnsim-x.json", "cannot write"]),
        (["--scale", "--sizes", "16", "--events", "1e4", "--out", "/nonexistent/dir/x.json"], ["--out", "does not exist"]),
        (["--scale", "--sizes", "16", "--events", "1e4", "--out", ""], ["--out", "JSON file"]),
        (["eval-baseline", "--scale"], ["ID 'eval-baseline'", "not with --scale"]),
        (["--scale", "--duration", "2ms"], ["--duration", "not with --scale"]),
        (["--scale", "--set", "cm.scheme=bcn"], ["--set", "not with --scale"]),
        (["--sizes", "16", "--duration", "2ms"], ["--sizes '16'", "only with --scale"]),
        (["--events", "1e4"], ["--events", "only with --scale"]),
        (["--out", "x.json"], ["--out", "only with --scale"]),
        (["--rounds", "2"], ["--rounds", "only with --scale"]),
        (["--scale", "--sizes", "16,16"], ["--sizes", "repeated"]),
        (["--scale", "--sizes", "16,300"], ["--sizes", "300"]),
        (["--scale", "--sizes", "10000000"], ["--sizes", "65,536"]),
        (["--startup", "--scale"], ["--startup", "not with --scale"]),
        (["--startup", "--sizes", "16"], ["--sizes '16'", "only with --scale"]),
        (["--startup", "--events", "1e4"], ["--events", "only with --scale"]),
        (["--startup", "--rounds", "0"], ["--rounds 0", "from 1 to 100"]),
        (["--startup", "--out", "{tmp}"], ["--out", "is a folder"]),
        (["--startup", "--duration", ""], ["--duration ''", "empty"]),
        (["--startup", "--set", "cm.qeq=5"], ["cm.qeq", "no parameter"]),
        (["--startup", "no-such-scenario"], ["no-such-scenario", "not a catalog id"]),
    ],
)
def test_bench_options_are_checked_first(tmp_path: Path, args: list[str], fragments: list[str]) -> None:
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    refused(runner.invoke(app, ["bench", *args]), *fragments)
    assert list(tmp_path.iterdir()) == []
