"""The metrics `cnsim check` measures (cnsim/check/extract.py), each against a run folder whose
series are analytic, so every value is known exactly: the windows a run offers, the throughput,
queue, drop, control and pause metrics, the hotspot's onset, reach and recovery, settling, the
sweeping hotspot's epochs, the summary keys, the scenario metrics, and every reason a metric is
unavailable (the check is then not_run, never given a made-up value)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from cnsim.check.extract import METRICS, MetricUnavailable, RunData, ScenarioData, metric_def
from cnsim.results import dump_json
from cnsim.runner import prepare

MS = 1e-3
T_ON, T_OFF, DURATION = 0.1, 0.5, 0.6  # zhb-og-single-hop's hotspot and length
PERIOD = 3.4e-3  # of the synthetic queue's oscillation


def _write_run(folder: Path, scenario: str, changes: dict[str, Any] | None, summary: dict[str, Any],
               series: dict[str, pa.Table]) -> RunData:
    scen = prepare(scenario, changes, 1)
    folder.mkdir(parents=True)
    (folder / "scenario.toml").write_text(scen.to_toml(), encoding="utf-8")
    (folder / "summary.json").write_text(dump_json({"scenario": scen.id, "seed": 1, **summary}), encoding="utf-8")
    (folder / "series").mkdir()
    for kind, table in series.items():
        pq.write_table(table, folder / "series" / f"{kind}.parquet")
    return RunData(folder)


def _long(column: str, entities: dict[str, np.ndarray], t: np.ndarray, value: str = "gbps",
          extra: dict[str, dict[str, np.ndarray]] | None = None) -> pa.Table:
    """A long-format series: one block of rows per entity, as the engine writes them."""
    names = list(entities)
    cols: dict[str, Any] = {"t_s": np.tile(t, len(names)), column: [n for n in names for _ in t],
                            value: np.concatenate([entities[n] for n in names])}
    for name, per_entity in (extra or {}).items():
        cols[name] = np.concatenate([per_entity[n] for n in names])
    return pa.table(cols)


T_BIN = np.arange(1, 601) * MS  # 1 ms bins, reported at their ends
T_Q = np.arange(1, 60_001) * 10e-6  # queue samples every 10 us


def _hot_port(t: np.ndarray) -> np.ndarray:
    """10 Gb/s, 2 in the hotspot; after it a 3 ms line-rate drain, 3 Gb/s, then 8.6 from 0.54 s."""
    return np.select([t <= T_ON + 1e-9, t <= T_OFF + 1e-9, t <= 0.503 + 1e-9, t <= 0.540 + 1e-9], [10.0, 2.0, 10.0, 3.0], 8.6)


def _queue(t: np.ndarray) -> np.ndarray:
    """Empty until the hotspot, then a growing oscillation around 150 KB."""
    s = np.clip(t - T_ON, 0.0, None)
    return np.where(t <= T_ON + 1e-9, 0.0, 150e3 + 50e3 * (1 + s) * np.sin(2 * np.pi * s / PERIOD))


@pytest.fixture(scope="module")
def og(tmp_path_factory: pytest.TempPathFactory) -> RunData:
    t = T_BIN
    aggregate = np.select([t <= T_ON + 1e-9, t <= 0.130 + 1e-9], [100.0, 40.0], 80.0)
    flow3 = np.where((t > 0.300 + 1e-9) & (t <= 0.310 + 1e-9), 1.0, 5.0)  # one dip, at 0.3 s
    flow10 = np.where(np.arange(t.size) % 2 == 0, 1.0, 3.0)  # alternates 1, 3 every ms
    throughput = _long("entity", {"aggregate": aggregate, "port:S1/1": _hot_port(t), "node:1": np.full(t.size, 2.5),
                                  "flow:2->1": np.full(t.size, 1.0), "flow:3->1": flow3, "flow:10->1": flow10}, t)
    q = _queue(T_Q)
    queue = _long("queue", {"S1/1": q}, T_Q, "bytes", {"bytes_max": {"S1/1": q + 1000.0}})
    in_first_hotspot_100ms = (t > T_ON + 1e-9) & (t <= 0.2 + 1e-9)
    drops = _long("entity", {"network": np.where(in_first_hotspot_100ms, 1.0, 0.0), "source": np.full(t.size, 2.0)}, t, "frames")
    cm = _long("entity", {"all": np.full(t.size, 1000.0)}, t, "bytes", {"frames": {"all": np.full(t.size, 10.0)}})
    pause = _long("entity", {"all": np.where((t > T_ON + 1e-9) & (t <= T_OFF + 1e-9), 0.25, 0.0)}, t, "fraction")
    summary = {"duration_s": DURATION, "window_s": [0.2, 0.5], "paused_fraction": 0.125, "underrun": 0.0625,
               "fct_ms": {"mean": 3.5, "incomplete": 2}, "throughput_gbps": {"aggregate": 97.5},
               "nothing": None, "flag": True, "name": "x"}
    return _write_run(tmp_path_factory.mktemp("og") / "run", "zhb-og-single-hop", {"cm.scheme": "bcn"}, summary,
                      {"throughput": throughput, "queue": queue, "drops": drops, "cm": cm, "pause": pause})


def measure(run: RunData, name: str, window: str | tuple[float, float] = "all", **args: Any) -> Any:
    d, arg = metric_def(name)
    return d.fn(run, run.window(window), args, arg)


def _samples(window: tuple[float, float]) -> np.ndarray:
    """The queue samples a window holds (t0 < t <= t1), by index: sample k is at k·10 us."""
    return _queue(T_Q)[round(window[0] / 10e-6):round(window[1] / 10e-6)]


# ------------------------------------------------------------------------------------------
# Windows and lookups
# ------------------------------------------------------------------------------------------


def test_a_run_offers_the_windows_of_section_a_and_its_measurement_window(og: RunData) -> None:
    assert og.scenario.id == "zhb-og-single-hop"
    assert og.t_on == pytest.approx(T_ON) and og.t_off == pytest.approx(T_OFF) and og.duration == DURATION
    assert og.window("main") == (0.2, 0.5)  # summary.json's window_s
    assert og.window("ss") == pytest.approx((0.2, 0.5)) and og.window("tr") == pytest.approx((0.1, 0.15))
    assert og.window("rec") == pytest.approx((0.5, 0.6)) and og.window("after") == pytest.approx((0.5, 0.6))
    assert og.window((0.25, 0.6)) == (0.25, 0.6)  # a window may end exactly at the run's end
    with pytest.raises(MetricUnavailable, match=r"window \[0.25, 0.61\] s ends after the run \(0.6 s\)"):
        og.window((0.25, 0.61))
    with pytest.raises(MetricUnavailable, match="window 'nope' does not exist in this run .it is empty inside the run"):
        og.window("nope")
    assert og.hot_port == "S1/1" and og.queue_name({}) == "S1/1" and og.queue_name({"queue": "S1/2"}) == "S1/2"


def test_a_run_without_hotspot_has_only_the_whole_run(tmp_path: Path) -> None:
    run = _write_run(tmp_path / "kd", "kd-symmetric-single-hs", None, {"duration_s": 0.2}, {})
    assert run.t_on is None and set(run.windows) == {"all"}  # no window_s: no "main" either
    with pytest.raises(MetricUnavailable, match="the run has no hotspot or time-limited overload"):
        run.window("ss")
    with pytest.raises(MetricUnavailable, match="the run recorded no queue series"):
        measure(run, "q_mean")
    for name, why in [("onset", "onset: the run has no hotspot"), ("recovery", "recovery: the run has no hotspot end"),
                      ("reach", "reach: the run has no hotspot")]:
        with pytest.raises(MetricUnavailable, match=why):
            measure(run, name, level=1.0)
    with pytest.raises(MetricUnavailable, match="settle: the scheme has no qeq and the check gives no target"):
        measure(run, "settle")
    with pytest.raises(MetricUnavailable, match="epochs: the scheme has no qeq"):
        measure(run, "epochs_unconverged")


def test_the_run_length_comes_from_the_summary_or_else_the_scenario(tmp_path: Path) -> None:
    assert _write_run(tmp_path / "a", "zhb-og-single-hop", None, {}, {}).duration == DURATION
    cut = _write_run(tmp_path / "b", "zhb-og-single-hop", None, {"duration_s": 0.55}, {})
    assert cut.duration == 0.55 and cut.window("after") == pytest.approx((0.5, 0.55))


def test_an_incomplete_run_folder_is_unavailable_not_an_error(tmp_path: Path) -> None:
    (tmp_path / "half").mkdir()
    (tmp_path / "half" / "summary.json").write_text("{}", encoding="utf-8")
    with pytest.raises(MetricUnavailable, match="half: not a complete run folder"):
        RunData(tmp_path / "half")


def test_series_lookups_name_what_is_missing(og: RunData) -> None:
    assert og.names("queue") == ["S1/1"]
    assert og.entities("throughput", "flow:*->1") == ["flow:2->1", "flow:3->1", "flow:10->1"]  # natural order
    with pytest.raises(MetricUnavailable, match="throughput series has no entity matching 'flow:\\*->9'"):
        og.entities("throughput", "flow:*->9")
    with pytest.raises(MetricUnavailable, match=r"no entity 'flow:4->1' \(per-flow series are recorded for the flows metrics.per_flow selects\)"):
        measure(og, "flow:4->1")
    with pytest.raises(MetricUnavailable, match=r"throughput series has no entity 'node:9'$"):
        measure(og, "node:9")
    og.release_series()
    assert measure(og, "node:1") == pytest.approx(2.5)  # read again after the release


def test_summary_keys_are_numbers_or_unavailable(og: RunData) -> None:
    assert measure(og, "summary:throughput_gbps.aggregate") == 97.5
    assert measure(og, "paused") == 0.125 and measure(og, "underrun") == 0.0625
    assert measure(og, "fct_mean_ms") == 3.5 and measure(og, "fct_incomplete") == 2.0
    for key, why in [("fct_ms.hot.mean", "has no key 'fct_ms.hot.mean'"), ("nothing", "'nothing' is null in this run"),
                     ("flag", "'flag' is not a number \\(True\\)"), ("name", "'name' is not a number \\('x'\\)"),
                     ("throughput_gbps.aggregate.x", "has no key")]:
        with pytest.raises(MetricUnavailable, match=why):
            measure(og, f"summary:{key}")


def test_metric_names_and_their_arguments() -> None:
    assert metric_def("hot_port") == (METRICS["hot_port"], "")
    assert metric_def("flow:2->1") == (METRICS["flow"], "2->1")
    assert metric_def("summary:a:b") == (METRICS["summary"], "a:b")  # the argument is the rest
    for bad in ("nope", "flow", "flow:", "hot_port:x", "q_std:S1/1"):
        with pytest.raises(KeyError):
            metric_def(bad)


# ------------------------------------------------------------------------------------------
# Throughput, queue, counts
# ------------------------------------------------------------------------------------------


def test_throughput_metrics_are_window_means(og: RunData) -> None:
    assert measure(og, "aggregate", "ss") == pytest.approx(80.0)
    assert measure(og, "aggregate", "tr") == pytest.approx((30 * 40 + 20 * 80) / 50)
    assert measure(og, "hot_port", "ss") == pytest.approx(2.0)
    assert measure(og, "hot_port", "all") == pytest.approx((100 * 10 + 400 * 2 + 3 * 10 + 37 * 3 + 60 * 8.6) / 600)
    assert measure(og, "port:S1/1", "tr") == pytest.approx(2.0)
    assert measure(og, "hot_port", (0.0995, 0.1005)) == pytest.approx(6.0)  # half a bin at 10, half at 2
    flows = measure(og, "flow:*->1", "ss")
    assert list(flows) == pytest.approx([1.0, (290 * 5 + 10 * 1) / 300, 2.0])  # 2->1, 3->1, 10->1
    signal = METRICS["hot_port"].signal(og, {}, "")  # type: ignore[misc]
    assert signal.ylabel == "port:S1/1 (Gb/s)" and signal.v[0] == 10.0 and signal.t.size == 600
    assert METRICS["flow"].signal(og, {}, "*->1") is None  # a glob has no single curve  # type: ignore[misc]


def test_queue_statistics_use_the_samples_inside_the_window(og: RunData) -> None:
    ss = (0.2, 0.5)
    assert measure(og, "q_mean", "ss") == pytest.approx(float(np.mean(_samples(ss))), rel=1e-12)
    assert measure(og, "q_std", "ss") == pytest.approx(float(np.std(_samples(ss))), rel=1e-12)
    assert measure(og, "q_p2p", "ss") == pytest.approx(float(np.ptp(_samples(ss))), rel=1e-12)
    assert measure(og, "q_slope", "ss") == pytest.approx(float(np.polyfit(T_Q[20_000:50_000], _samples(ss), 1)[0]), rel=1e-9)
    # before the hotspot the queue is empty: every statistic is exact
    assert measure(og, "q_mean", (0.0, 0.1)) == 0.0 and measure(og, "q_p2p", (0.0, 0.1)) == 0.0
    for name in ("q_mean", "q_std", "q_p2p"):
        with pytest.raises(MetricUnavailable, match="no queue samples inside the window"):
            measure(og, name, (0.1, 0.100005))  # half a sample interval
    with pytest.raises(MetricUnavailable, match="fewer than two queue samples"):
        measure(og, "q_slope", (0.1, 0.10001))
    two = _queue(T_Q[10_000:10_002])  # the samples at 100.01 and 100.02 ms
    assert measure(og, "q_slope", (0.1, 0.10002)) == pytest.approx((two[1] - two[0]) / 10e-6, rel=1e-6)
    with pytest.raises(MetricUnavailable, match="queue series has no entity 'S1/2'"):
        measure(og, "q_mean", queue="S1/2")
    signal = METRICS["q_mean"].signal(og, {}, "")  # type: ignore[misc]
    assert signal.ylabel == "queue S1/1 (KB)" and signal.v[-1] == pytest.approx(_queue(T_Q)[-1] / 1e3)


def test_queue_maximum_reads_the_bins_that_overlap_the_window(og: RunData) -> None:
    """bytes_max at t is the maximum of the bin (t - 10 us, t]: the window (t0, t1] holds the bins
    that end after t0, not the one that ends at t0."""
    ss = (0.2, 0.5)
    assert measure(og, "q_max", "ss") == pytest.approx(float(np.max(_samples(ss))) + 1000.0, rel=1e-12)
    rising = (0.1 + PERIOD / 8, 0.1 + PERIOD / 4)  # q rises through the window: its last bin holds the maximum
    assert measure(og, "q_max", rising) == pytest.approx(float(_queue(np.array([rising[1]]))[0]) + 1000.0, rel=1e-12)
    falling = (0.1 + PERIOD / 4, 0.1 + 3 * PERIOD / 8)  # q falls: the first bin after t0 holds it
    first = float(_queue(np.array([falling[0] + 10e-6]))[0])
    assert measure(og, "q_max", falling) == pytest.approx(first + 1000.0, rel=1e-12)
    with pytest.raises(MetricUnavailable, match="no queue samples inside the window"):
        measure(og, "q_max", (0.2, 0.2 + 1e-13))


def test_counts_are_window_sums(og: RunData) -> None:
    assert measure(og, "drops", "tr") == pytest.approx(50.0)  # one a ms from the hotspot's start to 0.2 s
    assert measure(og, "drops", "ss") == 0.0
    assert measure(og, "source_drops", "ss") == pytest.approx(600.0)
    assert measure(og, "drops", (0.1995, 0.2005)) == pytest.approx(0.5)  # a bin cut by the window counts pro rata
    assert measure(og, "cm_mbps", "ss") == pytest.approx(8.0, rel=1e-12)  # 1000 B a ms
    assert measure(og, "cm_mbps", "tr") == pytest.approx(8.0, rel=1e-12)
    assert measure(og, "paused_all", "ss") == pytest.approx(0.25)
    assert measure(og, "paused_all", "all") == pytest.approx(0.25 * 400 / 600)
    signal = METRICS["source_drops"].signal(og, {}, "")  # type: ignore[misc]
    assert signal.ylabel == "cumulative source drops (frames)" and signal.v[-1] == 1200.0 and signal.v[0] == 2.0


def test_time_cv_of_the_matching_flows(og: RunData) -> None:
    # 2->1 and 3->1 are constant in (0.1, 0.2] (CV 0); 10->1 alternates 1, 3 (CV 1/2)
    assert measure(og, "cv:*->1", (0.1, 0.2)) == pytest.approx(0.5 / 3)
    assert measure(og, "cv:10->1", (0.1, 0.2)) == pytest.approx(0.5)
    assert measure(og, "cv:10->1", (0.1, 0.2), bin_s=2e-3) == pytest.approx(0.0, abs=1e-12)  # pairs average to 2
    # the 3->1 dip lies in (0.3, 0.31]: inside this window, its CV counts; bins are 1 ms
    dip = np.where((T_BIN[300:400] > 0.3 + 1e-9) & (T_BIN[300:400] <= 0.31 + 1e-9), 1.0, 5.0)
    assert measure(og, "cv:3->1", (0.3, 0.4)) == pytest.approx(float(np.std(dip) / np.mean(dip)))
    assert measure(og, "cv:3->1", (0.31, 0.4)) == pytest.approx(0.0, abs=1e-12)  # the window starts after the dip


# ------------------------------------------------------------------------------------------
# The hotspot's dynamics
# ------------------------------------------------------------------------------------------


def test_period_and_onset_of_the_hot_queue(og: RunData) -> None:
    assert measure(og, "period", "ss") == pytest.approx(PERIOD, rel=1e-3)
    assert measure(og, "onset", "tr") == pytest.approx(PERIOD / 4, abs=1e-9)  # the first crest
    # a drop of 60 % is never reached (q stays above 100 KB): the time of the largest sample, the last crest in tr
    last_crest = PERIOD / 4 + PERIOD * math.floor((0.05 - PERIOD / 4) / PERIOD)
    assert measure(og, "onset", "tr", drop=0.6) == pytest.approx(last_crest, abs=1e-9)


def test_recovery_waits_for_a_sustained_return(og: RunData) -> None:
    # the 3 ms drain at 10 Gb/s is not a recovery; 8.6 Gb/s from 0.540 s on, for good, is
    assert measure(og, "recovery", "after", level=8.5) == pytest.approx(0.041)
    # 60 ms are left for a 65 ms hold: the return lasts to the end of the record, which cuts the
    # hold short without breaking it, so it counts (results version 3; T-Z14 counted it "never")
    assert measure(og, "recovery", "after", level=8.5, hold=0.065) == pytest.approx(0.041)
    assert measure(og, "recovery", "after", level=9.5) == math.inf
    # with floor 0.3 the 3 Gb/s stretch counts as holding: the drain's first bin already recovers
    assert measure(og, "recovery", "after", level=9.5, floor=0.3) == pytest.approx(0.001)
    assert measure(og, "recovery", (0.5, 0.53), level=8.5) == math.inf  # the window ends before it
    assert measure(og, "recovery", "after", level=8.5, entity="node:1") == math.inf
    assert measure(og, "recovery", "after", level=2.0, entity="node:1", bin_s=2e-3) == pytest.approx(0.002)
    with pytest.raises(MetricUnavailable, match="recovery: the check gives no level"):
        measure(og, "recovery", "after")


def test_reach_times_the_fall_and_the_return(og: RunData) -> None:
    # the aggregate falls to 40 at the hotspot's start and is back at 80 (>= 0.9 x its ss mean) at 0.131 s
    assert measure(og, "reach", "ss") == pytest.approx(0.031)
    assert measure(og, "reach", "ss", fraction=0.45) == pytest.approx(0.0)  # 40 >= 0.45 x 80: it never fell
    assert measure(og, "reach", "ss", entity="flow:2->1") == 0.0  # constant: nothing to recover
    # 3->1 dips at 0.3 s, after the window tr ends: no loss inside the window
    assert measure(og, "reach", "tr", entity="flow:3->1") == 0.0
    assert measure(og, "reach", "ss", entity="flow:3->1") == pytest.approx(0.211)  # the dip, then its end at 0.311 s


def test_settle_time_around_qeq_or_a_target(og: RunData) -> None:
    # Qeq = 150 KB, tolerance ±20 % = ±30 KB: the oscillation of ±50 KB never settles
    assert measure(og, "settle", "ss") == math.inf
    # with a tolerance of 60 % it stays inside from its first sample on
    assert measure(og, "settle", "ss", tol=0.6) == pytest.approx(10e-6)
    # around 200 KB ± 20 % ([160, 240] KB) the crests stay inside for about a third of a period each
    assert measure(og, "settle", "ss", target=200e3) == math.inf  # 5 ms never
    crest = measure(og, "settle", "ss", target=200e3, hold=0.5e-3)
    assert 0.0 < crest < PERIOD


def test_unconverged_epochs_of_a_sweeping_hotspot(tmp_path: Path) -> None:
    """Each of the eight 50 ms epochs is judged on its own port over its last 10 and 20 ms: at
    Qeq and flat (converged), off Qeq, or still sloping."""
    scen = prepare("zhb-sweeping-hotspot", {"cm.scheme": "bcn"}, 1)
    qeq = float(scen.resolved.cm["qeq"])
    t = T_Q
    ports: dict[str, np.ndarray] = {}
    # per epoch: a level (x Qeq), a slope (x Qeq per s) through Qeq 5 ms before the epoch's end, or
    # a step from x Qeq to Qeq 30 ms before it
    shapes: list[tuple[str, float]] = [("step", 0.5), ("level", 0.7), ("level", 1.3), ("level", 1.2),
                                       ("slope", -30.0), ("slope", 5.0), ("level", 0.75), ("level", 1.25)]
    for k, (shape, x) in enumerate(shapes):
        end = 0.15 + 0.05 * k
        # a slope only over the last 20 ms (flat before), so that a longer fit would see less of it
        ramp = qeq + x * qeq * (np.clip(t, end - 0.020, None) - (end - 0.005))
        step = np.where(t <= end - 0.030, x * qeq, qeq)  # at Qeq for the epoch's last 30 ms only
        ports[f"S1/{k + 1}"] = {"level": np.full(t.size, x * qeq), "slope": ramp, "step": step}[shape]
    queue = _long("queue", ports, t, "bytes", {"bytes_max": ports})
    run = _write_run(tmp_path / "sweep", "zhb-sweeping-hotspot", {"cm.scheme": "bcn"}, {"duration_s": DURATION},
                     {"queue": queue})
    # unconverged: epochs 2 (0.7 Qeq), 3 (1.3 Qeq) and 5 (falling 30 % of Qeq per 10 ms); the band's
    # edges 0.75 and 1.25 Qeq and a slope of 5 % per 10 ms count as converged
    assert measure(run, "epochs_unconverged") == 3.0
    short = _write_run(tmp_path / "short", "zhb-sweeping-hotspot", {"cm.scheme": "bcn", "duration": "0.4s"},
                       {"duration_s": 0.4}, {"queue": queue})
    with pytest.raises(MetricUnavailable, match="epochs: a hotspot ends after the run"):
        measure(short, "epochs_unconverged")


# ------------------------------------------------------------------------------------------
# Scenario metrics (no run)
# ------------------------------------------------------------------------------------------


def test_scenario_metrics_need_no_run() -> None:
    data = ScenarioData(prepare("zhb-og-single-hop", {"cm.scheme": "bcn"}, 1))

    def scenario_metric(name: str, **args: Any) -> Any:
        d, arg = metric_def(name)
        assert d.source == "scenario"
        return d.fn(data, args, arg)

    assert scenario_metric("param:switch.memory_per_port") == 600e3
    assert scenario_metric("param:cm.gd") == pytest.approx(1.6667e-6)
    for key, why in [("switch.nope", "has no such key"), ("cm.scheme", "'bcn' is not a number"),
                     ("switch.memory_per_port.x", "has no such key")]:
        with pytest.raises(MetricUnavailable, match=why):
            scenario_metric(f"param:{key}")
    # 2 Gb/s into node 1 from 15 sources in the hotspot; before it, 85 % of 10 Gb/s over 15 destinations
    assert scenario_metric("fair:2->1") == pytest.approx(2.0 / 15)
    assert scenario_metric("fair:2->1", window=[0.0, 0.1]) == pytest.approx(8.5 / 15)
    assert scenario_metric("fair:2->3") == pytest.approx(8.5 / 15)
    into1 = scenario_metric("fair:1?->1")
    assert list(into1) == pytest.approx([2.0 / 15] * 7)  # 10->1 ... 16->1
    with pytest.raises(MetricUnavailable, match="fair:1->1: no such flow"):
        scenario_metric("fair:1->1")
    with pytest.raises(MetricUnavailable, match=r"fair:9\?->1: no flow of the scenario matches"):
        scenario_metric("fair:9?->1")
    assert scenario_metric("fluid:period_s") > 0
    with pytest.raises(MetricUnavailable, match="the linear BCN model has no numeric figure 'nope'"):
        scenario_metric("fluid:nope")
    assert scenario_metric("lag_delay_ku") == pytest.approx(2.262, abs=1e-3)  # τ = T
    assert scenario_metric("lag_delay_ku", tau_over_t=0.5) == pytest.approx(3.807, abs=1e-3)
