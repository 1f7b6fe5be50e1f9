"""The command line (cli.py): list, show, run, bench; exit status 2 for bad input.

``run``/``bench`` use tests/_fake_engine.py in place of the engine: these tests check the
plumbing (arguments, files, exit codes), not simulation results.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import cnsim
import cnsim.cli
import cnsim.runner
import pytest
from _fake_engine import FakeCore
from cnsim import load
from cnsim.cli import app
from typer.testing import CliRunner

runner = CliRunner()


def test_python_m_cnsim_is_the_command_line(tmp_path: Path) -> None:
    """``python -m cnsim`` runs the console script's entry point: the same listing, and a user
    mistake exits 2 with its message and no traceback."""
    def cmd(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "cnsim", *args], cwd=tmp_path, capture_output=True, text=True, timeout=120)

    listing = cmd("list")
    assert listing.returncode == 0, listing.stderr
    assert listing.stdout == runner.invoke(app, ["list"]).stdout
    wrong = cmd("show", "no-such-scenario")
    assert wrong.returncode == 2
    assert "no-such-scenario" in wrong.stderr and "Traceback" not in wrong.stderr


def test_list() -> None:
    res = runner.invoke(app, ["list"])
    assert res.exit_code == 0
    lines = res.stdout.strip().splitlines()
    assert [line.split("  ", 1)[0] for line in lines] == cnsim.scenarios()
    for line in lines:  # exactly "<id>  <description>"
        description = line.split("  ", 1)[1]
        assert description and description == description.strip(), line


@pytest.mark.parametrize("command", ["run", "sweep", "check", "reproduce", "bench", "fluid", "show", "list"])
def test_help_shows_no_value_after_a_flag(command: str) -> None:
    """A flag takes no value (`--quiet true` is refused), so --help names none after it: typer
    printed `--quiet <bool>`. A repeatable option names what one occurrence takes."""
    res = runner.invoke(app, [command, "--help"], env={"COLUMNS": "160"})
    assert res.exit_code == 0, res.output
    assert "<bool>" not in res.output and "list[str]" not in res.output, res.output
    if command in ("sweep", "check"):
        assert "<int>" in res.output or "INTEGER" in res.output  # an option that takes a value still names its type (typer's words)
    if command in ("run", "bench", "fluid", "show"):
        assert "KEY=VALUE  Override a scenario key" in res.output, res.output


def test_show_resolved_toml_and_core() -> None:
    res = runner.invoke(app, ["show", "zhb-og-single-hop", "--set", "switch.buffer=shared"])
    assert res.exit_code == 0, res.output
    doc = tomllib.loads(res.stdout)
    assert doc["switch"]["xoff"] == 9_512_000 and doc["seed"] == 1
    res = runner.invoke(app, ["show", "zhb-og-single-hop", "--core", "--set", "cm.scheme=bcn", "--set", "cm.gd=2.5*gd0"])
    assert res.exit_code == 0, res.output
    core = json.loads(res.stdout)
    assert core["cm"]["gd"] == pytest.approx(1.6667e-6, rel=1e-4)


def test_show_file(tmp_path: Path) -> None:
    path = tmp_path / "x.toml"
    path.write_text(load("kd-symmetric-single-hs").to_toml())
    res = runner.invoke(app, ["show", str(path)])
    assert res.exit_code == 0 and "S1/EP4" in res.stdout


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["show", "zhb-og-single-hop", "--set", "switch.memroy=5"], "switch.memroy: unknown key"),
        (["show", "zhb-og-single-hop", "--set", "links.delay=5parsec"], "links.delay"),
        (["show", "zhb-og-single-hop", "--set", "links.rate=-1Gbps"], "negative"),
        (["show", "no-such-scenario"], "unknown scenario"),
        (["show", "zhb-og-single-hop", "--set", "cm.gd=1e-6"], 'scheme "none" has no parameter "gd"'),
        (["show", "zhb-og-single-hop", "--set", "novalue"], "expected KEY=VALUE"),
        (["run", "zhb-og-single-hop", "--set", "cm.scheme=bcn", "--set", "cm.nope=1"], "cm.nope"),
        (["run", "zhb-og-single-hop", "--duration", "-1s"], "duration"),
    ],
)
def test_bad_input_exits_2_without_traceback(args: list[str], fragment: str) -> None:
    res = runner.invoke(app, args)
    assert res.exit_code == 2
    assert fragment in res.stderr
    assert "Traceback" not in res.output and res.exception is None or isinstance(res.exception, SystemExit)


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> FakeCore:
    core = FakeCore()
    monkeypatch.setattr(cnsim.runner, "engine", lambda: core)
    real_prepare = cnsim.runner.prepare

    def prepare(*a, **kw):  # noqa: ANN002, ANN003
        scen = real_prepare(*a, **kw)
        core.scenario = scen
        return scen

    monkeypatch.setattr(cnsim.runner, "prepare", prepare)
    return core


def test_run_writes_folder(fake: FakeCore, tmp_path: Path) -> None:
    out = tmp_path / "run"
    res = runner.invoke(app, ["run", "kd-symmetric-single-hs", "--out", str(out), "--seed", "3", "--duration", "0.1s", "--no-plots"])
    assert res.exit_code == 0, res.output
    assert "aggregate (Gb/s)" in res.stdout and "hot port (Gb/s), S1/EP4" in res.stdout
    summary = json.loads((out / "summary.json").read_text())
    assert summary["seed"] == 3 and summary["scenario"] == "kd-symmetric-single-hs"
    assert tomllib.loads((out / "scenario.toml").read_text())["duration"] == "100ms"
    manifest = json.loads((out / "manifest.json").read_text())
    # the peak resident memory in bytes (Linux reports kilobytes): this Python process holds tens of MB
    assert manifest["versions"]["core"] == "fake-0" and manifest["peak_rss_bytes"] > 10 * 2**20
    # frames are counted by the engine's conservation, not estimated from the binned series
    assert manifest["frames_delivered"] == 990 and manifest["frames_per_s"] == pytest.approx(990 / manifest["wall_s"])
    assert manifest["events"] == 123456 and manifest["loop_events_per_s"] == pytest.approx(123456 / 0.001)
    assert manifest["events_per_s"] == pytest.approx(123456 / manifest["wall_s"])
    assert manifest["sim_s_per_wall_s"] == pytest.approx(0.1 / manifest["wall_s"])
    assert not (out / "throughput.png").exists()


def test_run_quiet_prints_nothing(fake: FakeCore, tmp_path: Path) -> None:
    res = runner.invoke(app, ["run", "kd-symmetric-single-hs", "--out", str(tmp_path / "q"), "--quiet", "--no-plots"])
    assert res.exit_code == 0 and res.stdout == ""


def test_engine_refusal_exits_2(fake: FakeCore, tmp_path: Path) -> None:
    fake.refuse = "qcn"
    res = runner.invoke(app, ["run", "kd-symmetric-single-hs", "--set", "cm.scheme=qcn", "--out", str(tmp_path / "r")])
    assert res.exit_code == 2
    assert "not implemented by the engine yet" in res.stderr
    assert not (tmp_path / "r").exists()


def test_interrupt_exits_130(fake: FakeCore, tmp_path: Path) -> None:
    fake.interrupt_run = True
    res = runner.invoke(app, ["run", "kd-symmetric-single-hs", "--out", str(tmp_path / "i")])
    assert res.exit_code == 130 and "interrupted" in res.stderr


def test_an_interrupt_after_the_run_folder_is_written_says_where_it_is(
        fake: FakeCore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """SIGTERM while the summary table prints: exit 143, and the line says the results are whole
    in their folder, not that nothing was written."""
    def interrupted(*args: object, **kwargs: object) -> None:
        raise cnsim.cli.Terminated()

    monkeypatch.setattr(cnsim.cli, "_summary_table", interrupted)
    out = tmp_path / "done"
    res = runner.invoke(app, ["run", "kd-symmetric-single-hs", "--out", str(out), "--no-plots"])
    assert res.exit_code == 143
    assert (out / "summary.json").is_file()
    assert "nothing was written" not in res.stderr and f"results are complete in {out}" in res.stderr


def test_bench(fake: FakeCore) -> None:
    res = runner.invoke(app, ["bench", "--duration", "0.05s"])
    assert res.exit_code == 0, res.output
    for word in ("events/s", "frames/s", "sim s per wall s"):
        assert word in res.stdout


def test_missing_engine_exits_1() -> None:
    try:
        import cnsim._core  # noqa: F401
    except ImportError:
        res = runner.invoke(app, ["bench"])
        assert res.exit_code == 1 and "pip install" in res.stderr
    else:
        pytest.skip("the engine is built")



def test_the_cli_imports_with_a_typer_without_display_type_rich(monkeypatch: pytest.MonkeyPatch) -> None:
    """pyproject.toml allows typer >= 0.12, whose TyperOption has no display_type_rich (typer
    0.20 has none either): the --help patch must leave such a typer alone, not end every cnsim
    command in an AttributeError at import."""
    import typer.core
    from cnsim import cli

    class OldOption:  # a TyperOption of typer 0.20: no display_type_rich
        is_flag = True

    monkeypatch.setattr(typer.core, "TyperOption", OldOption)
    cli._without_flag_type()
    assert not hasattr(OldOption, "display_type_rich")
