"""Every catalog scenario on the engine, briefly; FCT accounting; runs to completion; scale.

Needs the engine with fat trees, geometric flows, runs to completion and the moving hot port
(docs/core-config.md); skipped without ``cnsim._core``. The catalog runs time-compressed: every
time of the scenario (duration, hotspot windows, flow starts and stops, traffic stop, measurement
window) is divided by the same factor so that the run covers ~12 ms of simulated time and still
passes through every phase of the deck's timeline; the two largest fat trees run 1 ms as they are.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("cnsim._core")

import cnsim  # noqa: E402
from cnsim import load  # noqa: E402
from cnsim.scenario import Scenario  # noqa: E402

MS = 1_000_000_000  # ps
TARGET_PS = 12 * MS
PLAIN_1MS = {"zhb-ft-5stage", "scale-ft-2048", "ring-6-deadlock"}  # (the ring stops moving within ms)


def conserved(summary: dict[str, Any]) -> dict[str, Any]:
    c = summary["conservation"]
    assert c["generated"] == c["delivered"] + c["dropped"] + c["source_dropped"] + c["in_flight_counted"], c
    assert c["in_flight"] == c["in_flight_counted"], c
    return c


def compressed(sid: str, target_ps: int = TARGET_PS) -> Scenario:
    """``sid`` with every time divided by duration/target (see the module doc)."""
    scen = load(sid)
    doc = scen.resolved.doc
    f = doc.duration / target_ps

    def t(x: int) -> str:
        return f"{round(x / f)}ps"

    scen.set("duration", t(doc.duration))
    w = doc.metrics.window
    if isinstance(w, tuple):
        scen.set("metrics.window", [t(w[0]), t(w[1])])
    for i, h in enumerate(doc.hotspots):
        scen.set(f"hotspots.{i}.start", t(h.start)).set(f"hotspots.{i}.end", t(h.end))
    scen.set("traffic.start", t(doc.traffic.start))
    if doc.traffic.stop is not None:
        scen.set("traffic.stop", t(doc.traffic.stop))
    for i, fl in enumerate(doc.traffic.flows):
        if fl.start is not None:
            scen.set(f"traffic.flows.{i}.start", t(fl.start))
        if fl.stop is not None:
            scen.set(f"traffic.flows.{i}.stop", t(fl.stop))
    return scen.validate()


@pytest.mark.parametrize("sid", cnsim.scenarios())
def test_catalog_scenario_runs_briefly_with_conservation(sid: str, tmp_path: Path) -> None:
    scen = load(sid).set("duration", "1ms").set("metrics.window", ["0s", "1ms"]) if sid in PLAIN_1MS else compressed(sid)
    r = cnsim.run(scen)
    s = r.summary
    c = conserved(s)
    assert c["delivered"] > 0
    assert s["throughput_gbps"]["aggregate"] > 0
    core = scen.lower()
    assert s["duration_s"] <= core["duration_ps"] / 1e12 + 1e-12
    if core["run_to_completion"]:
        # NOTE: the e2cm entries use mean 1500 B (single-frame flows): needs the engine to track them
        assert s["fct_ms"] is not None, "engine: no FCT for single-frame geometric flows"
    if scen.resolved.per_flow and r.fair_gbps:
        assert s["fairness"]["jain"] is not None
    r.save(tmp_path / "run", plots=sid == "qcnp-parking-lot")  # one figure set: the fair-share lines
    if sid == "qcnp-parking-lot":
        assert (tmp_path / "run" / "per_flow.png").stat().st_size > 0


def test_run_to_completion_leaves_nothing_in_flight() -> None:
    scen = compressed("e2cm-fat-tree-16", 40 * MS)  # sources stop at 20 ms, hotspot 2-10 ms, cap 80 ms
    r = cnsim.run(scen)
    s = r.summary
    c = conserved(s)
    assert c["in_flight"] == 0 and c["in_flight_counted"] == 0
    assert c["generated"] == c["delivered"] + c["dropped"]
    assert 0.02 <= s["duration_s"] < 0.08  # ended when the last frame was delivered, before the cap
    assert r.manifest["sim_s"] == s["duration_s"]  # the manifest's speed counts the simulated time run, not the cap
    assert c["dropped"] == 0  # lossless: PAUSE on
    # NOTE: fct_ms needs the engine to track single-frame geometric flows (mean 1500 B; see
    # test_fct_of_single_frame_flows_is_the_exact_path_latency)
    assert s["fct_ms"] is not None, "engine: no FCT for single-frame geometric flows"
    assert s["fct_ms"]["completed"] > 0 and s["fct_ms"]["incomplete"] == 0


FCT_DOC = """
description = "one flow source across one switch"
duration = "1s"
[topology]
nodes = 2
[links]
rate = "10Gbps"
delay = "{delay}"
[traffic]
pattern = "none"
flows = [{{ src = "1", dst = "2", rate = "0.1Gbps" }}]
sizes = "geometric"
mean_size = "{mean}"
stop = "50ms"
run_to_completion = true
[metrics]
hot_port = "S1/2"
"""


def test_a_run_to_completion_measures_the_window_its_end_needs() -> None:
    """Contract "Measurement window" applied to the end of a run that finishes before its cap
    (80 ms here; the run ends at about 20 ms): the "run" rule measures [end/10, end], a window
    past the end falls back to it, a window that reaches past the end is cut there, and a
    window inside the run is kept."""
    scen = compressed("e2cm-fat-tree-16", 40 * MS)
    cases = [
        ("run", lambda end: [end / 10, end]),
        (["30ms", "60ms"], lambda end: [end / 10, end]),
        (["5ms", "60ms"], lambda end: [0.005, end]),
        (["2ms", "10ms"], lambda end: [0.002, 0.01]),
    ]
    for window, want in cases:
        s = cnsim.run(scen.copy().set("metrics.window", window)).summary
        end = s["duration_s"]
        assert 0.02 <= end < 0.08
        assert s["window_s"] == pytest.approx(want(end), abs=1e-12), window


def test_a_run_to_completion_is_made_again_only_when_its_window_starts_elsewhere(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The engine measures the window as the run goes: a window only cut at the run's end was
    measured already (one run), one whose start the rule moves must be measured again (two)."""
    from cnsim import runner

    calls: list[int] = []
    simulate = runner._simulate

    def counted(*args: Any) -> Any:
        calls.append(1)
        return simulate(*args)

    monkeypatch.setattr(runner, "_simulate", counted)
    scen = compressed("e2cm-fat-tree-16", 40 * MS)
    for window, runs in [("run", 2), (["5ms", "60ms"], 1), (["2ms", "10ms"], 1)]:
        calls.clear()
        cnsim.run(scen.copy().set("metrics.window", window))
        assert len(calls) == runs, window


def test_a_window_cut_by_the_runs_end_is_the_window_its_figures_use() -> None:
    """A run to completion that ends inside its window measured the window up to its end, and
    its result's scenario says so: the max-min reference's demands are averaged over the same
    span as the measured rates (a stop-57 audit found 3.48 for a max-min error of 0.016, the
    demands averaged over the whole window while the flows ran for a third of it)."""
    scen = compressed("e2cm-fat-tree-16", 40 * MS)
    cut = cnsim.run(scen.copy().set("metrics.window", ["5ms", "60ms"]))
    end_ps = round(cut.summary["duration_s"] * 1e12)
    assert end_ps < 60 * 10**9 and cut.scenario.resolved.window_ps == (5 * 10**9, end_ps)
    exact = cnsim.run(scen.copy().set("metrics.window", ["5ms", f"{end_ps}ps"]))
    assert exact.summary["window_s"] == cut.summary["window_s"]
    assert cut.summary["fairness"] == exact.summary["fairness"]


def test_the_last_bin_ends_where_the_run_ends(tmp_path: Path) -> None:
    """A run to completion stops inside its last bin, whose rate is over the part it ran: its
    t_s is the run's end (it was the full bin's end, after the run; summing rate × bin width
    then overstated the bytes)."""
    path = tmp_path / "fct.toml"
    path.write_text(FCT_DOC.format(delay="3us", mean="60000B"))
    r = cnsim.run(cnsim.load(path).set("metrics.bin", "3ms"))
    end = r.summary["duration_s"]
    t = sorted(set(r.series("throughput").column("t_s").to_pylist()))
    assert end % 0.003 > 1e-6 and t[-1] == pytest.approx(end, abs=1e-12) and t[-2] < end
    assert t[-2] == pytest.approx(0.003 * (len(t) - 1), abs=1e-12)


def test_fct_of_single_frame_flows_is_the_exact_path_latency(tmp_path: Path) -> None:
    # Each flow is one frame, alone in the network (consecutive arrivals are a full slot apart):
    # FCT = delivery of its last frame - generation of its first = 2 serialisations + 2 delays.
    # NOTE: needs the engine to track flows for sizes = "geometric" with mean_frames = 1 (the
    # engine of commit 5d94214 reports fct_ms = null there; see the report of this change).
    path = tmp_path / "fct1.toml"
    path.write_text(FCT_DOC.format(delay="3us", mean="1500B"))
    s = cnsim.run(path).summary
    conserved(s)
    fct = s["fct_ms"]
    assert fct is not None, "engine: no FCT for single-frame geometric flows"
    expected_ms = (2 * 1.2e-6 + 2 * 3e-6) * 1e3
    assert fct["completed"] > 0 and fct["incomplete"] == 0
    for key in ("mean", "p50", "p99"):
        assert fct[key] == pytest.approx(expected_ms, rel=1e-9), key
    assert s["conservation"]["in_flight"] == 0 and s["duration_s"] < 0.051


def test_fct_of_geometric_flows(tmp_path: Path) -> None:
    # n frames back to back, store and forward once: FCT = (n + 1) x 1.2 us + 2 d when alone.
    path = tmp_path / "fct40.toml"
    path.write_text(FCT_DOC.format(delay="3us", mean="60000B"))
    s = cnsim.run(path).summary
    conserved(s)
    fct = s["fct_ms"]
    assert fct is not None and fct["completed"] > 0 and fct["incomplete"] == 0
    floor_ms = (2 * 1.2e-6 + 2 * 3e-6) * 1e3  # a one-frame flow
    assert fct["p50"] >= floor_ms - 1e-12
    mean_alone_ms = ((40 + 1) * 1.2e-6 + 2 * 3e-6) * 1e3  # at 1 % load flows rarely overlap
    assert fct["mean"] == pytest.approx(mean_alone_ms, rel=0.25)
    assert s["conservation"]["in_flight"] == 0


def test_moving_hot_port_follows_the_sweeping_hotspot() -> None:
    r = cnsim.run(compressed("zhb-sweeping-hotspot"))
    s = r.summary
    conserved(s)
    # every instant of the window has one hot port, serving 20 % of 10 Gb/s
    assert s["throughput_gbps"]["hot_port"] == pytest.approx(2.0, abs=0.15)
    assert s["queue_bytes"]["hot"]["max"] > 0


@pytest.mark.skipif(os.environ.get("CNSIM_SKIP_SCALE") == "1", reason="CNSIM_SKIP_SCALE=1")
def test_scale_2048_hosts_one_ms_at_85_percent(capsys: pytest.CaptureFixture[str]) -> None:
    r = cnsim.run("scale-ft-2048", duration="1ms", set={"metrics.window": ["0s", "1ms"]})
    s = r.summary
    conserved(s)
    # 2,048 hosts x 8.5 Gb/s offered; the first microseconds fill the network
    assert s["throughput_gbps"]["aggregate"] == pytest.approx(2048 * 8.5, rel=0.03)
    m = r.manifest
    with capsys.disabled():
        print(f"\nscale-ft-2048, 1 ms at 85 %: wall {m['wall_s']:.2f} s, peak RSS {m['peak_rss_bytes'] / 2**20:.0f} MiB, "
              f"{m['events_per_s'] / 1e6:.1f} M events/s")
    assert m["peak_rss_bytes"] < 4 * 2**30
