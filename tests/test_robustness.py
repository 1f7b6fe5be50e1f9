"""Issue 13: nothing a user types crashes, hangs or eats the machine, and nothing a run wrote is
lost. One test per case found by trying cnsim as a new user would; they run the real command
(``python -m cnsim.cli`` in a subprocess where exit codes and signals matter)."""

from __future__ import annotations

import copy
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import cnsim
import pyarrow.parquet as pq
import pytest
from cnsim import budget, outdir
from cnsim.cli import app
from cnsim.errors import ResourceError, ScenarioError
from cnsim.runner import prepare
from typer.testing import CliRunner

pytest.importorskip("cnsim._core")

runner = CliRunner()


def cnsim_cmd(*args: str, cwd: Path, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cnsim.cli", *args], cwd=cwd, capture_output=True, text=True, timeout=timeout)


def assert_refused(res: subprocess.CompletedProcess[str], *fragments: str) -> None:
    assert res.returncode == 2, res.stderr
    assert "Traceback" not in res.stderr and "panicked" not in res.stderr, res.stderr
    for f in fragments:
        assert f in res.stderr, res.stderr


# ---- resources: refused up front, within a second, with the estimate ----------------------


@pytest.mark.parametrize(
    ("args", "fragments"),
    [
        (["--set", "metrics.bin=1ps"], ["refused before it started", "peak memory", "--force"]),
        (["--duration", "1e7s"], ["duration", "out of range", "1000000s"]),
        (["--duration", "5000s"], ["refused before it started", "events"]),
        (["--set", "topology.nodes=10000000"], ["topology.nodes", "at most 65536"]),
        (["--set", "links.rate=1e16"], ["links.rate", "out of range", "1600Gbps"]),
        (["--set", "links.delay=1e308s"], ["links.delay", "out of range"]),
        (["--set", "switch.memory_per_port=99999999999999999999999999MB"], ["switch.memory_per_port", "out of range"]),
    ],
)
def test_oversized_runs_are_refused_within_a_second(tmp_path: Path, args: list[str], fragments: list[str]) -> None:
    started = time.perf_counter()
    res = cnsim_cmd("run", "zhb-og-single-hop", "--quiet", "--no-plots", *args, cwd=tmp_path)
    assert_refused(res, *fragments)
    assert not (tmp_path / "results").exists()
    # the whole process, interpreter start included, stays well under the second
    assert time.perf_counter() - started < 10


def test_estimate_matches_the_offered_load() -> None:
    """zhb-og-single-hop: 16 sources × 0.85 × 10 Gb/s × 0.6 s / 12,000 bit = 6.8 M frames, five
    events each, and a PAUSE deadlock check every 2.5 ms from 10 ms on (236)."""
    est = budget.estimate(prepare("zhb-og-single-hop").lower())
    assert est.frames == pytest.approx(6.8e6)
    assert est.bins == 600 and est.nodes == 16 and est.ports == 32
    assert est.events == pytest.approx(6.8e6 * 5 + 236)


def test_the_backlog_estimate_follows_the_voq_stores_chunks() -> None:
    """A hotspot from 0.1 s with unlimited adapter ingress: every frame generated after it may
    wait in a VOQ, its time one of 23 or more in a 64-byte chunk of the engine's VOQ store on the
    generators' grid, or of 11 where a grid 1 ns off the others leaves the store wide."""
    core = prepare("zhb-og-single-hop").lower()
    frames = 16 * 0.85 * 10e9 * 0.5 / 12_000
    assert budget.grid_unit(core) == 1_200_000
    assert budget.estimate(core).backlog_bytes == pytest.approx(frames * 64 / 23, rel=1e-6)
    core["traffic"]["sources"][3]["start_ps"] = 1_000
    assert budget.grid_unit(core) is None
    assert budget.estimate(core).backlog_bytes == pytest.approx(frames * 64 / 11, rel=1e-6)


@pytest.mark.parametrize("sid", cnsim.scenarios())
def test_the_budgets_grid_unit_is_the_engines(sid: str) -> None:
    """The estimate's bytes per waiting frame follow the layout the engine chooses: the same
    unit for every shipped scenario, for one whose sources start 0.1 s apart (a third of a
    slot) and for one 1 ns off (none: the wide layout)."""
    from cnsim import _core

    core = prepare(sid).lower()  # a copy of the lowered config, free to change
    sources = core["traffic"]["sources"]
    variants = [copy.deepcopy(core)]
    for start in (100_000_000_000, 1_000):
        sources[-1]["start_ps"] = start
        variants.append(copy.deepcopy(core))
    for variant in variants:
        engine = _core.Simulation(json.dumps(variant)).voq_time_unit()
        assert budget.grid_unit(variant) == engine, [s.get("start_ps") for s in variant["traffic"]["sources"]]


def test_budget_refuses_by_memory_and_events_unless_forced() -> None:
    core = prepare("zhb-og-single-hop", set={"metrics.bin": "1us"}).lower()
    with pytest.raises(ResourceError, match="peak memory"):
        budget.check(core, memory=2**30)
    assert budget.check(core, force=True, memory=2**30).bins == 600_000
    big = prepare("zhb-og-single-hop", set={"metrics.bin": "1s"}, duration="20000s").lower()
    with pytest.raises(ResourceError, match="events"):
        budget.check(big)


def test_show_prints_the_estimate() -> None:
    res = runner.invoke(app, ["show", "zhb-og-single-hop"])
    assert res.exit_code == 0
    assert res.stdout.startswith("# estimate: 16 nodes, 32 ports, 600 bins")


#: Shipped scenarios whose peak memory exceeds 1 GB, and only through the source backlog: with
#: unlimited adapter ingress (AD-UNSPEC: no Bernoulli arrival is ever lost) and PAUSE hogging
#: without CM, every frame the network cannot take waits in a VOQ (docs/robustness.md: 2.7 GiB
#: measured for zhb-ft-5stage).
SOURCE_BACKLOG_OVER_1_GB = {"zhb-ft-5stage"}


@pytest.mark.parametrize("sid", cnsim.scenarios())
def test_every_shipped_scenario_is_estimated_under_1_gb(sid: str) -> None:
    """Issue 13: peak memory of every shipped scenario stays under 1 GB (estimate; measured
    values are in docs/robustness.md) — apart from the frames a source may hold by the model."""
    est = budget.check(prepare(sid).lower())
    assert est.memory_bytes - est.backlog_bytes < 10**9, est.describe()
    assert (est.memory_bytes >= 10**9) == (sid in SOURCE_BACKLOG_OVER_1_GB), est.describe()


def test_a_long_cap_is_not_allocated_up_front(tmp_path: Path) -> None:
    """`--duration` far beyond what a run-to-completion scenario needs used to preallocate every
    bin of every counter (exit 134 at 10^7 s): bins now grow with the simulated time."""
    res = runner.invoke(
        app,
        ["run", "e2cm-mixed-speed-ig", "--duration", "100000s", "--set", "traffic.stop=2ms", "--set", "metrics.bin=1us", "--force", "--quiet", "--no-plots", "--out", str(tmp_path / "r")],
    )
    assert res.exit_code == 0, res.output
    summary = json.loads((tmp_path / "r" / "summary.json").read_text())
    assert summary["duration_s"] < 1.0  # the run ended when its flows completed


# ---- bad input: a message, never a traceback ----------------------------------------------


def test_engine_errors_cross_the_boundary_by_kind() -> None:
    """One exception type per kind (crates/cnsim-py): a refused value carries its key, a core
    config off the schema is an internal error, never a bare ValueError string to parse."""
    from cnsim import _core
    from cnsim.errors import EngineError
    from cnsim.runner import _front_end_error

    scen = prepare("zhb-og-single-hop")
    cfg = json.loads(scen.core_json())
    cfg["traffic"]["frame_size"] = 10
    with pytest.raises(_core.ConfigError) as info:
        _core.Simulation(json.dumps(cfg))
    message, key, value, expected = info.value.args
    assert (key, value) == ("traffic.frame_size", "10") and "64" in expected
    mapped = _front_end_error(_core, scen, info.value)
    assert isinstance(mapped, ScenarioError) and mapped.problems[0].key == "traffic.frame_size"
    with pytest.raises(_core.EngineError, match="invalid core config"):
        _core.Simulation("{")
    assert isinstance(_front_end_error(_core, scen, _core.EngineError("x")), EngineError)
    assert issubclass(_core.Interrupted, RuntimeError) and not issubclass(_core.Interrupted, ValueError)
    # the same from the config as a dict (how the runner hands it over): a refused value with
    # its key, a dict off the schema or an object that is no config an internal error
    with pytest.raises(_core.ConfigError) as info:
        _core.Simulation(cfg)
    assert info.value.args[1:3] == ("traffic.frame_size", "10")
    for off_schema in [{**cfg, "bogus": 1}, {**cfg, "seed": "one"}, {**cfg, "seed": 2**70}, {k: v for k, v in cfg.items() if k != "seed"}, 5, None, [cfg]]:
        with pytest.raises(_core.EngineError, match="invalid core config"):
            _core.Simulation(off_schema)


def test_the_engine_reads_the_config_alike_as_json_and_as_a_dict() -> None:
    """The runner hands the engine the front end's dict, without JSON between them: the same
    config must give the same run as its JSON text (summary and every series, byte for byte)."""
    from cnsim import _core

    scen = prepare("zhb-og-multi-hop", {"cm.scheme": "qcn", "switch.pfc_classes": 2}, duration="3ms")
    a = _core.Simulation(scen.core_json()).run()
    b = _core.Simulation(scen.core_config()).run()
    assert a["summary"] == b["summary"] and a["series"] == b["series"]
    assert json.loads(a["summary"])["conservation"]["delivered"] > 0



def test_non_utf8_file(tmp_path: Path) -> None:
    (tmp_path / "bad.toml").write_bytes(b"\xff\xfe duration = 1")
    assert_refused(cnsim_cmd("run", "bad.toml", cwd=tmp_path), "not a UTF-8 text file")


def test_an_oversized_file_is_refused_unread(tmp_path: Path) -> None:
    """A 3 GB file once took 42 s and 6 GB before "not valid TOML" (a sparse file here: no disk)."""
    from cnsim.scenario.loading import MAX_FILE_BYTES

    with open(tmp_path / "big.toml", "wb") as f:
        f.truncate(MAX_FILE_BYTES + 1)
    for command in ("run", "sweep"):
        assert_refused(cnsim_cmd(command, "big.toml", cwd=tmp_path), "big.toml: 32 MB; scenario and sweep files of at most 32 MB are read")
    # a file of exactly the limit is read (and found not to be TOML)
    from cnsim.scenario.loading import read_text

    with open(tmp_path / "big.toml", "r+b") as f:
        f.truncate(MAX_FILE_BYTES)
    assert len(read_text(tmp_path / "big.toml")) == MAX_FILE_BYTES


def test_empty_file(tmp_path: Path) -> None:
    (tmp_path / "empty.toml").write_text("")
    assert_refused(cnsim_cmd("run", "empty.toml", cwd=tmp_path), "empty")


def test_a_sweep_spec_given_as_a_scenario_is_named_as_such(tmp_path: Path) -> None:
    """A sweep spec run as a scenario, or a sweep whose base is itself, listed each of the
    spec's keys as an unknown scenario key."""
    (tmp_path / "s.toml").write_text('name = "s"\nbase = "s.toml"\n[axes]\n"cm.scheme" = ["none"]\n')
    for command in ("run", "sweep"):
        done = cnsim_cmd(command, "s.toml", cwd=tmp_path)
        assert_refused(done, "s.toml: a sweep spec (it names a `base` scenario), not a scenario; `cnsim sweep")
        assert "unknown key" not in done.stderr


def test_list_where_a_scalar_is_expected(tmp_path: Path) -> None:
    assert_refused(cnsim_cmd("run", "zhb-og-single-hop", "--set", 'cm.scheme=["qcn"]', cwd=tmp_path), "cm.scheme", "unknown scheme")


@pytest.mark.parametrize(("key", "value", "fragment"), [
    ("traffic.load", True, r"expected a fraction \(in \[0, 1\]\)"),  # once read as load 1.0
    ("seed", True, "expected an integer"),
    ("seed", "5", "expected an integer"),
    ("hotspots.0.rate", False, "expected a fraction"),  # once a 0 Gb/s hotspot
    ("switch.pause", "off", "expected true or false"),  # once PAUSE off
    ("topology.fat_tree.radix", "4", "expected an integer"),
    ("links", 5, r"expected a table of keys \(`cnsim keys links` lists them\)"),
    ("traffic.flows", 5, "expected a list of tables of keys"),
    ("traffic.loads", {"1": "x"}, r"traffic\.loads\.1: expected a fraction \(in \[0, 1\]\)"),  # a table's value: pydantic's words
])
def test_a_value_of_the_wrong_type_is_refused_not_converted(key: str, value: object, fragment: str) -> None:
    sid = "e2cm-fat-tree-16" if key.startswith("topology.fat_tree") else "zhb-og-single-hop"
    with pytest.raises(ScenarioError, match=fragment) as err:
        prepare(sid, set={key: value})
    assert key in str(err.value)


def test_switch_named_like_a_node_is_a_message() -> None:
    with pytest.raises(ScenarioError, match="both a node and a switch"):
        prepare("zhb-og-multi-hop", set={"topology.switches": ["S1", "8", "S3", "S4", "S5"]})


def test_unlinked_node_is_a_message() -> None:
    with pytest.raises(ScenarioError, match="exactly one link"):
        prepare("zhb-og-multi-hop", set={"topology.switches": ["S0", "S2", "S3", "S4", "S5"]})


def test_a_network_in_pieces_is_a_message() -> None:
    """A switch without links, or a part of the graph on its own, is named (it once reached the
    watermarks as an empty max(), or the engine as "a connected network")."""
    with pytest.raises(ScenarioError, match=r"the network is not connected: S6 cannot be reached from S1"):
        prepare("zhb-og-multi-hop", set={"topology.switches": ["S1", "S2", "S3", "S4", "S5", "S6"]})
    links = [{"a": "S1", "b": n} for n in ("1", "2")] + [{"a": "S2", "b": n} for n in ("3", "4")]
    with pytest.raises(ScenarioError, match=r"not connected: S2, 3, 4 cannot be reached from S1"):
        prepare("zhb-og-multi-hop", set={"topology.nodes": 4, "topology.switches": ["S1", "S2"], "topology.links": links,
                                         "traffic.flows": [], "hotspots": [], "metrics.hot_port": None, "metrics.queues": []})


def test_a_message_names_the_first_problems_and_counts_the_rest() -> None:
    flows = [{"src": "1", "dst": f"x{i}", "rate": "1Gbps"} for i in range(500)]
    with pytest.raises(ScenarioError) as err:
        prepare("zhb-og-single-hop", set={"traffic.flows": flows})
    text = str(err.value)
    assert text.count("traffic.flows.") == 20 and text.endswith("... and 480 more problems.")
    assert len(err.value.problems) == 500
    assert len(text) < 20_000
    # exactly as many as are written out: no count of the rest
    with pytest.raises(ScenarioError) as err:
        prepare("zhb-og-single-hop", set={"traffic.flows": flows[:20]})
    assert str(err.value).count("traffic.flows.") == 20 and "more problems" not in str(err.value)


def test_bad_out_is_refused_before_simulating(tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("x")
    started = time.perf_counter()
    res = cnsim_cmd("run", "zhb-og-single-hop", "--duration", "10s", "--out", "afile", "--quiet", cwd=tmp_path)
    assert_refused(res, "is a file")
    assert time.perf_counter() - started < 10  # 10 simulated seconds were not run first


def test_a_symbolic_link_out_is_refused_before_simulating(tmp_path: Path) -> None:
    """The run once simulated, then failed to replace the link ("Cannot call rmtree on a symbolic
    link") and threw the results away."""
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    started = time.perf_counter()
    res = cnsim_cmd("run", "zhb-og-single-hop", "--duration", "10s", "--out", "link", "--quiet", cwd=tmp_path)
    assert_refused(res, "--out link: is a symbolic link")
    assert time.perf_counter() - started < 10


def test_unwritable_out_is_refused_before_simulating(tmp_path: Path) -> None:
    res = cnsim_cmd("run", "zhb-og-single-hop", "--duration", "10s", "--out", "/proc/cnsim-results", "--quiet", cwd=tmp_path)
    assert_refused(res, "--out /proc/cnsim-results", "cannot write")


def test_a_closed_pipe_ends_quietly(tmp_path: Path) -> None:
    """`cnsim show … | head -1`: the reader leaves early; no "Broken pipe" message, no traceback
    (the 400 KB output is far beyond what a pipe buffers)."""
    proc = subprocess.Popen([sys.executable, "-m", "cnsim.cli", "show", "scale-ft-2048", "--core"], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=0)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.read(10)
    proc.stdout.close()
    err = proc.stderr.read().decode()
    proc.stderr.close()
    assert proc.wait(timeout=60) == 0, err
    assert "Traceback" not in err and "Broken pipe" not in err, err


def test_io_error_while_writing_is_a_message(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A full disk (ENOSPC injected into the save) ends in one line and exit 2, no traceback,
    and nothing under the final name."""
    import errno

    def full(*_a: object, **_k: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device", str(tmp_path / "r" / "summary.json"))

    monkeypatch.setattr(cnsim.results.Result, "save", full)
    res = runner.invoke(app, ["run", "zhb-og-single-hop", "--duration", "1ms", "--quiet", "--out", str(tmp_path / "r")])
    assert res.exit_code == 2
    assert "I/O error" in res.output and "No space left on device" in res.output
    assert not (tmp_path / "r").exists() and not list(tmp_path.glob(".r.partial-*"))


# ---- results are never lost or silently overwritten ---------------------------------------


def test_two_runs_in_the_same_second_write_two_folders(tmp_path: Path) -> None:
    procs = [
        subprocess.Popen([sys.executable, "-m", "cnsim.cli", "run", "kd-symmetric-single-hs", "--duration", "1ms", "--no-plots", "--quiet"], cwd=tmp_path)
        for _ in range(2)
    ]
    assert [p.wait(60) for p in procs] == [0, 0]
    folders = sorted((tmp_path / "results").iterdir())
    assert len(folders) == 2
    assert all((f / "summary.json").is_file() for f in folders)


def test_default_names_are_unique() -> None:
    assert len({outdir.default_name("x") for _ in range(200)}) == 200


def test_existing_out_is_refused_unless_force(tmp_path: Path) -> None:
    out = tmp_path / "run"
    out.mkdir()
    (out / "stale.png").write_text("old figure")
    res = cnsim_cmd("run", "kd-symmetric-single-hs", "--duration", "1ms", "--out", "run", "--quiet", "--no-plots", cwd=tmp_path)
    assert_refused(res, "not empty", "--force")
    assert (out / "stale.png").is_file()
    res = cnsim_cmd("run", "kd-symmetric-single-hs", "--duration", "1ms", "--out", "run", "--quiet", "--no-plots", "--force", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert not (out / "stale.png").exists()  # replaced, no stale figures
    assert json.loads((out / "summary.json").read_text())["scenario"] == "kd-symmetric-single-hs"


def _default_sigint() -> None:
    """In the child: Ctrl-C does what it does at a terminal. A test runner started in the
    background (`cmd &` in a script) inherits SIGINT ignored, and Python then rightly leaves it
    ignored — the behaviour under test would not be exercised."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.parametrize(("sig", "status", "word"), [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated")])
def test_signals_stop_a_run_cleanly(tmp_path: Path, sig: int, status: int, word: str) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "cnsim.cli", "run", "zhb-og-single-hop", "--duration", "30s", "--quiet", "--no-plots", "--out", "run"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_default_sigint,
    )
    time.sleep(4)  # inside the engine
    proc.send_signal(sig)
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode == status, err
    assert word in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "run").exists() and not list(tmp_path.glob(".run.partial-*"))


@pytest.mark.parametrize(("sig", "status", "word"), [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated")])
def test_signals_while_the_command_starts_end_it_in_one_line(tmp_path: Path, sig: int, status: int, word: str) -> None:
    """A signal while the command line's modules are imported (about 0.3 s: pydantic and the
    scenario schema, typer, the engine) ends the command as later: one line, 130 or 143, no
    traceback. The child signals itself from inside the import of pydantic, so the moment is
    exact (numpy is imported later, while the engine runs: a signal then stops the run)."""
    code = (
        "import builtins, os, signal\n"
        "real = builtins.__import__\n"
        "def hook(name, *args, **kwargs):\n"
        f"    if name == 'pydantic':\n        builtins.__import__ = real\n        os.kill(os.getpid(), {int(sig)})\n"
        "    return real(name, *args, **kwargs)\n"
        "builtins.__import__ = hook\n"
        "from cnsim._entry import main\n"
        "main()\n"
    )
    res = subprocess.run([sys.executable, "-c", code, "run", "zhb-og-single-hop", "--duration", "1ms", "--out", "run"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=60, preexec_fn=_default_sigint)
    assert res.returncode == status, res.stderr
    assert word in res.stderr and "while starting" in res.stderr and len(res.stderr.strip().splitlines()) == 1, res.stderr
    assert not (tmp_path / "run").exists()


def test_a_signal_while_the_results_are_imported_stops_the_run(tmp_path: Path) -> None:
    """numpy and the results module are imported while the engine runs: a Ctrl-C then stops the
    engine and ends the command as any interrupted run does."""
    code = (
        "import builtins, os, signal\n"
        "real = builtins.__import__\n"
        "def hook(name, *args, **kwargs):\n"
        "    if name == 'numpy':\n        builtins.__import__ = real\n        os.kill(os.getpid(), signal.SIGINT)\n"
        "    return real(name, *args, **kwargs)\n"
        "builtins.__import__ = hook\n"
        "from cnsim._entry import main\n"
        "main()\n"
    )
    res = subprocess.run([sys.executable, "-c", code, "run", "zhb-og-single-hop", "--duration", "30s", "--force", "--out", "run"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=60, preexec_fn=_default_sigint)
    assert res.returncode == 130, res.stderr
    assert res.stderr.strip() == "cnsim: interrupted; the run was stopped and nothing was written."
    assert not (tmp_path / "run").exists()


def test_interrupt_in_python_does_not_abort_the_interpreter(tmp_path: Path) -> None:
    """A Ctrl-C during cnsim.run used to end the process with SIGABRT (134) at exit."""
    code = (
        "import os, signal, threading, cnsim\n"
        "threading.Timer(2, lambda: os.kill(os.getpid(), signal.SIGINT)).start()\n"
        "try:\n    cnsim.run('zhb-og-single-hop', duration='30s')\nexcept KeyboardInterrupt:\n    print('stopped')\n"
    )
    res = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=60, preexec_fn=_default_sigint)
    assert res.returncode == 0 and res.stdout.strip() == "stopped", res.stderr


# ---- sweeps ---------------------------------------------------------------------------------


def _small_sweep(tmp_path: Path, duration: str = "2ms") -> Path:
    spec = tmp_path / "s.toml"
    spec.write_text(f'name = "s"\nbase = "kd-symmetric-single-hs"\n[set]\nduration = "{duration}"\n[axes]\n"cm.scheme" = ["none", "bcn", "qcn"]\n')
    return spec


def test_corrupted_summary_is_detected_and_rerun(tmp_path: Path) -> None:
    from cnsim.sweep import run_sweep

    spec = _small_sweep(tmp_path)
    first = run_sweep(spec, tmp_path / "out", workers=1, catalog=False)
    assert first.table.num_rows == 3
    victim = sorted((tmp_path / "out" / "runs").iterdir())[0]
    (victim / "summary.json").write_text('{"scenario": "kd-sym')  # truncated
    again = run_sweep(spec, tmp_path / "out", workers=1, catalog=False)
    assert again.repaired == [victim.name] and again.ran == 1 and again.reused == 2
    assert again.table.num_rows == 3 and set(again.table.column("status").to_pylist()) == {"ok"}


def test_a_run_with_a_damaged_series_file_is_rerun_before_the_catalog_reads_it(tmp_path: Path) -> None:
    """A truncated series file (a full disk, a killed copy) made the catalog's DuckDB view, and so
    the resumed sweep, fail with a traceback; the run is now run again, and the catalog built."""
    from cnsim import catalog
    from cnsim.sweep import run_sweep

    spec = _small_sweep(tmp_path)
    run_sweep(spec, tmp_path / "out", workers=1)
    victim = sorted((tmp_path / "out" / "runs").iterdir())[2]
    queue = victim / "series" / "queue.parquet"
    queue.write_bytes(queue.read_bytes()[:-100])
    again = run_sweep(spec, tmp_path / "out", workers=1)
    assert again.repaired == [victim.name] and again.ran == 1 and again.reused == 2
    assert pq.read_table(queue).num_rows > 0
    con = catalog.connect(tmp_path / "out")
    try:
        assert con.sql("SELECT count(DISTINCT run_id) FROM queue").fetchall() == [(3,)]
    finally:
        con.close()


def test_cli_reports_repaired_runs(tmp_path: Path) -> None:
    spec = _small_sweep(tmp_path)
    assert cnsim_cmd("sweep", str(spec), "--out", "out", "--quiet", "--workers", "1", cwd=tmp_path).returncode == 0
    victim = sorted((tmp_path / "out" / "runs").iterdir())[1]
    (victim / "summary.json").write_text("garbage")
    res = cnsim_cmd("sweep", str(spec), "--out", "out", "--quiet", "--workers", "1", cwd=tmp_path)
    assert res.returncode == 0 and "corrupted or partial" in res.stderr and victim.name in res.stderr


def test_lost_process_worker_fails_only_its_run(tmp_path: Path) -> None:
    """Kill one worker process mid-run: its run is retried alone, every run still completes."""
    from cnsim.executors import LocalExecutor
    from cnsim.sweep import run_sweep

    spec = _small_sweep(tmp_path, duration="80ms")
    pool = LocalExecutor(2, "process")
    killed: list[int] = []

    def kill_a_worker(done: int, _total: int, _failed: int) -> None:
        procs = getattr(pool._pool, "_processes", None) or {}
        if not killed and procs:
            pid = next(iter(procs))
            os.kill(pid, signal.SIGKILL)
            killed.append(pid)

    try:
        result = run_sweep(spec, tmp_path / "out", executor=pool, progress=kill_a_worker, catalog=False)
    finally:
        pool.close()
    assert killed, "no worker was killed"
    assert result.failed == [] and result.table.num_rows == 3
    assert set(result.table.column("status").to_pylist()) == {"ok"}


def test_catalog_runs_and_stale_files(tmp_path: Path) -> None:
    from cnsim import catalog
    from cnsim.sweep import run_sweep

    run_sweep(_small_sweep(tmp_path), tmp_path / "out", workers=1, catalog=False)
    stale = tmp_path / "out" / ".catalog.duckdb.deadbeef"
    stale.write_text("left by a killed build")
    old = time.time() - 3600
    os.utime(stale, (old, old))
    catalog.build(tmp_path / "out")
    assert not stale.exists()
    table = catalog.runs(tmp_path / "out")
    assert table.num_rows == 3 and set(table.column("scheme").to_pylist()) == {"none", "bcn", "qcn"}


# ---- conveniences --------------------------------------------------------------------------


def test_version() -> None:
    res = runner.invoke(app, ["--version"])
    assert res.exit_code == 0 and res.stdout.strip() == f"cnsim {cnsim.__version__}"


def test_list_sweeps() -> None:
    from cnsim.sweep import shipped_sweeps

    res = runner.invoke(app, ["list", "--sweeps"])
    assert res.exit_code == 0
    lines = res.stdout.strip().splitlines()
    assert [line.split("  ", 1)[0] for line in lines] == shipped_sweeps()
    assert all(line.split("  ", 1)[1] == line.split("  ", 1)[1].strip() != "" for line in lines)


def test_a_flow_whose_inherited_stop_comes_before_its_start_is_refused() -> None:
    # a flow starting at 5 ms inherits traffic.stop = 3 ms: an empty interval, refused as when
    # both times are the flow's own (it generated nothing, silently, until the audit of the traffic)
    flows = [{"src": "H1", "dst": "H5", "rate": "5Gbps", "start": "5ms"}]
    with pytest.raises(ScenarioError, match="stop comes before start"):
        prepare("eval-baseline", set={"traffic.flows": flows, "traffic.stop": "3ms"})
    # a flow that starts at traffic.start inherits its stop without complaint
    prepare("eval-baseline", set={"traffic.flows": flows[:0] + [{"src": "H1", "dst": "H5", "rate": "5Gbps"}], "traffic.stop": "3ms"})


def test_a_load_that_is_the_only_traffic_needs_the_uniform_pattern() -> None:
    # pattern "none" (the default) sends only the named flows: a scenario written as
    # `load = 0.85` without its pattern, and without flows, sent nothing, silently (a traffic
    # audit); beside named flows the load is ignored, as documented, and not an error
    no_flows = {"traffic.pattern": "none", "traffic.flows": [], "hotspots": []}
    with pytest.raises(ScenarioError, match=r'traffic\.load: a load needs pattern = "uniform".*nothing would send.*\(given 0\.85\)'):
        prepare("zhb-og-single-hop", set=no_flows)
    prepare("zhb-og-single-hop", set={**no_flows, "traffic.load": 0})  # no load: nothing to lose
    refused = runner.invoke(app, ["show", "zhb-og-single-hop", "--set", "traffic.pattern=none"])
    assert refused.exit_code == 2 and "traffic.load" in refused.output and "Traceback" not in refused.output
    # the contract's `--set traffic.load=0.5` on a scenario of named flows: accepted, the flows send
    prepare("kd-symmetric-single-hs", set={"traffic.load": 0.85})
    assert runner.invoke(app, ["show", "kd-symmetric-single-hs", "--set", "traffic.load=0.5"]).exit_code == 0
