"""Issue 14: `cnsim bench --scale` runs the same workload at several sizes in fresh processes
and reports their speed and memory (a tiny configuration here; docs/performance.md has the
real one)."""

from __future__ import annotations

import json
import os
import platform
import time
from pathlib import Path

import cnsim
import pytest
from cnsim import budget
from cnsim.bench import _caches, _cpu_model, _size_bytes, describe_machine, scale_document
from cnsim.cli import app
from typer.testing import CliRunner

pytest.importorskip("cnsim._core")
runner = CliRunner()


def test_scale_documents_keep_the_workload_and_change_the_size() -> None:
    small, tree = scale_document(16, 0.01), scale_document(512)
    assert small["topology"] == {"kind": "star", "nodes": 16} and small["duration"] == "10000us"
    assert tree["topology"]["fat_tree"] == {"radix": 32, "levels": 2, "merged_top": True}
    for doc in (small, tree):
        assert doc["traffic"]["load"] == 0.85 and doc["switch"]["pause"] is True and doc["cm"]["scheme"] == "none"
    with pytest.raises(ValueError, match="no merged-top"):
        scale_document(1000)


def test_up_to_128_hosts_a_star_above_a_merged_top_fat_tree() -> None:
    assert scale_document(128)["topology"] == {"kind": "star", "nodes": 128}
    assert scale_document(128)["metrics"]["hot_port"] == "S1/1"
    tree = scale_document(200)  # 2·10²: radix 20
    assert tree["topology"] == {"kind": "fat_tree", "fat_tree": {"radix": 20, "levels": 2, "merged_top": True}, "routing": "dmodk"}
    assert tree["metrics"] == {"window": "run", "hot_port": "L0.0/0", "queues": [], "per_flow": "none"}
    assert scale_document(162)["topology"]["fat_tree"]["radix"] == 18
    assert scale_document(522_242)["topology"]["fat_tree"]["radix"] == 1022  # the largest radix tried
    for hosts in (129, 130, 524_288):
        with pytest.raises(ValueError, match=f"^no merged-top two-level fat tree has {hosts} hosts"):
            scale_document(hosts)


def test_a_duration_is_whole_microseconds_in_ten_bins_and_at_least_ten() -> None:
    doc = scale_document(16, 1.23456e-5)
    assert (doc["duration"], doc["metrics"]["bin"]) == ("13us", "1300ns")
    doc = scale_document(16, 3e-6)
    assert (doc["duration"], doc["metrics"]["bin"]) == ("10us", "1000ns")
    whole = scale_document(16)  # no duration given: the scenario's own, and its default bin
    assert whole["duration"] == "1.0s" and "bin" not in whole["metrics"]
    assert scale_document(16)["description"] == "scale benchmark: 16 hosts"


def test_a_point_is_read_off_the_runs_manifest() -> None:
    from cnsim.bench import _point

    manifest = {"sim_s": 0.002, "wall_s": 0.5, "events": 3e6, "events_per_s": 6e6, "frames_per_s": 1e6,
                "sim_s_per_wall_s": 0.004, "peak_rss_bytes": 3 * 2**20, "loop_s": 0.4, "loop_events_per_s": 7.5e6}
    point = _point(128, manifest)
    assert (point.hosts, point.topology, point.sim_s, point.events, point.wall_s) == (128, "one switch", 0.002, 3e6, 0.5)
    assert (point.events_per_s, point.frames_per_s, point.sim_s_per_wall_s) == (6e6, 1e6, 0.004)
    assert (point.wall_s_per_sim_s, point.peak_rss_mib, point.loop_s, point.loop_events_per_s) == (250.0, 3.0, 0.4, 7.5e6)
    assert (point.ratio, point.loop_ratio, point.events_per_s_rounds) == (1.0, 1.0, ())
    assert _point(200, manifest).topology == "fat tree (2 lv)"
    assert _point(16, {**manifest, "sim_s": 0.0}).wall_s_per_sim_s == float("inf")


def test_bench_scale_writes_every_size(tmp_path: Path) -> None:
    out = tmp_path / "scale.json"
    res = runner.invoke(app, ["bench", "--scale", "--sizes", "16,32", "--events", "50000", "--out", str(out)])
    assert res.exit_code == 0, res.output
    data = json.loads(out.read_text())
    assert [p["hosts"] for p in data["sizes"]] == [16, 32]
    first, second = data["sizes"]
    assert first["ratio"] == 1.0 and second["ratio"] == pytest.approx(second["events_per_s"] / first["events_per_s"])
    for p in data["sizes"]:
        assert 20_000 < p["events"] < 500_000  # "about" the target: the estimate is coarse
        assert p["events_per_s"] > 0 and p["peak_rss_mib"] > 10
        assert p["wall_s_per_sim_s"] == pytest.approx(1 / p["sim_s_per_wall_s"], rel=1e-9)
        # the event loop alone: part of the run's wall time, so at least its event rate
        assert 0 < p["loop_s"] <= p["wall_s"] and p["loop_events_per_s"] == pytest.approx(p["events"] / p["loop_s"])
    assert first["loop_ratio"] == 1.0
    assert second["loop_ratio"] == pytest.approx(second["loop_events_per_s"] / first["loop_events_per_s"])
    assert "vs first" in res.output and "loop M ev/s" in res.output
    # the machine it ran on, in the file and on the terminal
    host = data["machine"]
    assert host["cores"] == os.cpu_count() and host["memory_bytes"] == budget.physical_memory() > 0
    assert host["cpu"] and host["python"] == platform.python_version() and host["cnsim"] == cnsim.__version__
    assert f"machine: {describe_machine(host)}" in res.output


def test_bench_scale_rounds_report_the_median_round(tmp_path: Path) -> None:
    out = tmp_path / "scale.json"
    args = ["bench", "--scale", "--sizes", "16,32", "--events", "20000", "--rounds", "3", "--out", str(out)]
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    data = json.loads(out.read_text())
    assert data["rounds"] == 3
    first, second = data["sizes"]
    for p in data["sizes"]:
        rates = p["events_per_s_rounds"]
        assert len(rates) == 3 and p["events_per_s"] == sorted(rates)[1]
        # the point is that round's: its frames/s and wall time belong to the same run
        assert p["sim_s_per_wall_s"] == pytest.approx(p["sim_s"] / p["wall_s"], rel=1e-6)
    assert second["ratio"] == pytest.approx(second["events_per_s"] / first["events_per_s"])
    assert "median of 3 interleaved rounds" in res.output and "M ev/s rounds" in res.output


def test_bench_scale_bad_sizes_exit_2() -> None:
    assert runner.invoke(app, ["bench", "--scale", "--sizes", "16,x"]).exit_code == 2
    assert runner.invoke(app, ["bench", "--scale", "--sizes", "1000"]).exit_code == 2
    res = runner.invoke(app, ["bench", "--scale", "--rounds", "0"])
    assert res.exit_code == 2 and "--rounds" in res.output


def test_bench_startup_times_whole_runs_in_fresh_interpreters(tmp_path: Path) -> None:
    """Issue 14's start-up target measured by the benchmark: each round is a whole `cnsim run`
    in its own interpreter; the engine's part comes from the run's manifest, the rest is outside
    the engine, and the peak memory is the child's."""
    out = tmp_path / "startup.json"
    started = time.perf_counter()
    res = runner.invoke(app, ["bench", "--startup", "--duration", "1ms", "--rounds", "2", "--out", str(out)])
    elapsed = time.perf_counter() - started
    assert res.exit_code == 0, res.output
    for label in ("whole process", "engine", "outside the engine", "peak memory"):
        assert label in res.output
    doc = json.loads(out.read_text())
    assert doc["command"][:5] == ["cnsim", "run", "zhb-og-single-hop", "--duration", "1ms"]
    assert len(doc["rounds"]) == 2
    for r in doc["rounds"]:
        assert r["process_s"] > r["engine_s"] > 0
        assert r["outside_s"] == pytest.approx(r["process_s"] - r["engine_s"])
        assert 10 < r["peak_rss_mib"] < 4096, "the child's peak, in MiB"
    assert sum(r["process_s"] for r in doc["rounds"]) < elapsed  # both rounds within the command's time
    outside = sorted(r["outside_s"] for r in doc["rounds"])
    assert doc["median"]["outside_s"] == pytest.approx(sum(outside) / 2)
    assert doc["machine"]["cores"] == os.cpu_count() and describe_machine(doc["machine"]) in res.output


def test_a_failed_startup_round_reports_the_runs_own_message(tmp_path: Path) -> None:
    from cnsim.bench import run_startup
    from cnsim.errors import EngineError

    with pytest.raises(EngineError, match=r"failed \(exit 2\).*not a catalog id"):
        run_startup(["no-such-scenario", "--duration", "1ms"], 1, str(tmp_path))
    assert [p.name for p in tmp_path.iterdir()] == ["round-1.stderr"]  # the child's stderr, kept beside its run


def test_each_startup_round_writes_its_own_run_folder(tmp_path: Path) -> None:
    from cnsim.bench import run_startup

    (r1, r2) = run_startup(["zhb-og-single-hop", "--duration", "1ms"], 2, str(tmp_path))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["round-1", "round-1.stderr", "round-2", "round-2.stderr"]
    for i, r in enumerate((r1, r2), start=1):
        manifest = json.loads((tmp_path / f"round-{i}" / "manifest.json").read_text())
        assert r.engine_s == manifest["wall_s"]
        # the child's peak (wait4, KiB) is at least what the run saw of itself
        assert r.peak_rss_mib * 2**20 >= manifest["peak_rss_bytes"]


def test_the_machine_is_read_off_the_cpu_and_cache_descriptions(tmp_path: Path) -> None:
    """A benchmark's file names its machine: the CPU model from /proc/cpuinfo (else the
    platform's), and the first core's caches from sysfs by level and type, in bytes."""
    assert [_size_bytes(t) for t in ("48K", "2048K", "260M", "1G", "512", "", "4X", "K")] == [
        48 << 10, 2 << 20, 260 << 20, 1 << 30, 512, None, None, None]
    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nvendor_id\t: Foo\nmodel name\t: Foo Bar 9000\n\nprocessor\t: 1\nmodel name\t: Foo Bar 9000\n")
    assert _cpu_model(str(info)) == "Foo Bar 9000"
    assert _cpu_model(str(tmp_path / "missing")) == platform.processor()
    caches = tmp_path / "cache"
    for index, (level, kind, size) in enumerate([("1", "Data", "48K"), ("1", "Instruction", "32K"), ("2", "Unified", "2048K"), ("3", "Unified", "260M")]):
        folder = caches / f"index{index}"
        folder.mkdir(parents=True)
        for name, value in (("level", level), ("type", kind), ("size", size)):
            (folder / name).write_text(value + "\n")
    (caches / "index9").mkdir()  # a cache that says nothing is left out
    for name, (level, kind, size) in {"index7": ("4", "Trace", "8M"), "index8": ("2", "Unified", "?")}.items():
        (caches / name).mkdir()  # ... as are a cache of a type without a name and one of no size
        for field, value in (("level", level), ("type", kind), ("size", size)):
            (caches / name / field).write_text(value + "\n")
    (caches / "uevent").write_text("")
    assert _caches(str(caches)) == {"L1d": 48 << 10, "L1i": 32 << 10, "L2": 2 << 20, "L3": 260 << 20}
    assert _caches(str(tmp_path / "none")) == {}
    line = describe_machine({"cpu": "Foo Bar 9000", "cores": 2, "caches_bytes": {"L2": 2 << 20}, "memory_bytes": 24 << 30})
    assert line == "Foo Bar 9000, 2 cores, L2 2.0 MiB, 24.0 GiB memory"
