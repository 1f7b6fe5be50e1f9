"""The deck reproductions' figure and table kinds (cnsim.reproduce.figures) read back from what
they draw: the curves' data in their units against the run folders' series, the legends and
panels the swept keys make, the seed drawn, the hotspot's span, the bars and their fair shares,
a subset's points, and the summary table's cells."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from cnsim import Result
from cnsim.executors import LocalExecutor
from cnsim.labels import fmt
from cnsim.reproduce import DECKS, get_deck, study_status
from cnsim.reproduce.figures import (
    MAX_FLOW_LEGEND,
    FlowFigure,
    MetricFigure,
    Point,
    Subset,
    SummaryTable,
    TimeFigure,
    _colors,
    _flows_window,
    _hotspots,
    _kb_to_pages,
    _natural,
    _new,
    _num,
    _pages_to_kb,
    _scenario_doc,
    _seconds,
    label_value,
    load_points,
    scheme_label,
    switch_label,
)
from cnsim.reproduce.kd import kd_label
from cnsim.scenario import load
from cnsim.sweep import SweepSpec, run_sweep

pytest.importorskip("cnsim._core")

GD = ["gd0", "4*gd0"]
BUFFERS = ["shared", "partitioned"]


@pytest.fixture(scope="module")
def zhb(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """zhb-og-single-hop with BCN, 30 ms with the hotspot on from 10 to 20 ms: two gains, two
    buffer kinds, two seeds (eight runs, about a second)."""
    out = tmp_path_factory.mktemp("zhb")
    spec = SweepSpec(name="zhb-test", base="zhb-og-single-hop", seeds=[1, 2],
                     set={"duration": "30ms", "hotspots.0.start": "10ms", "hotspots.0.end": "20ms",
                          "metrics.window": ["5ms", "30ms"], "cm.scheme": "bcn"},
                     axes={"cm.gd": GD, "switch.buffer": BUFFERS})
    result = run_sweep(spec, out, executor=LocalExecutor(1), catalog=False)
    assert result.total == 8 and not result.failed
    return out


@pytest.fixture(scope="module")
def kd(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """kd-symmetric-single-hs without CM for 30 ms at two link delays, one seed: four flows into EP4."""
    out = tmp_path_factory.mktemp("kd")
    spec = SweepSpec(name="kd-test", base="kd-symmetric-single-hs", seeds=[1],
                     set={"duration": "30ms", "metrics.window": ["10ms", "30ms"]}, axes={"links.delay": ["4us", "50us"]})
    assert not run_sweep(spec, out, executor=LocalExecutor(1), catalog=False).failed
    return out


def series(folder: Path, kind: str, entity: str, column: str) -> tuple[list[float], list[float]]:
    table = Result.load(folder).series(kind)
    rows = table.filter(pc.equal(table[table.column_names[1]], entity))
    return rows["t_s"].to_pylist(), rows[column].to_pylist()


def named_lines(ax: Any) -> dict[str, Any]:
    return {line.get_label(): line for line in ax.get_lines()}


def span_x(patch: Any) -> tuple[float, float]:
    xs = patch.get_patch_transform().transform(patch.get_path().vertices)[:, 0]
    return float(xs.min()), float(xs.max())


# --- labels and small helpers ---------------------------------------------------------------


def test_a_label_names_the_key_and_writes_expressions_the_decks_way() -> None:
    assert label_value("cm.scheme", "none") == "no CM"
    assert label_value("cm.scheme", "bcn") == "BCN"
    assert label_value("cm.scheme", "qcn-3pt") == "QCN-3PT"
    assert label_value("cm.gd", "2.5*gd0") == "Gd = 2.5·Gd0"
    assert label_value("cm.gi", "gd/4") == "Gi = Gd / 4"  # a word, not a part of one: gd0 stays whole above
    assert label_value("cm.qeq", "m/4") == "Qeq = M / 4"
    assert label_value("cm.w", "qeq*2") == "W = Qeq·2"
    assert label_value("cm.ps", 0.01) == "Ps = 1 %"
    assert label_value("cm.ps", 1) == "Ps = 100 %"
    assert label_value("cm.ps", "0.01") == "Ps = 0.01"  # a string is written as given
    assert label_value("cm.w", 2.0) == "W = 2"
    assert label_value("cm.gd", 1e-6) == "Gd = 1e-06"
    assert label_value("topology.nodes", 64) == "N = 64"
    assert label_value("switch.buffer", "shared") == "shared"
    assert label_value("links.delay", "4us") == "link delay = 4us"
    assert label_value("traffic.load", 0.5) == "load = 0.5"  # an unnamed key: its last part
    assert label_value("cm.gd", "") == "Gd = "  # the axis title's form: the figures strip " ="
    assert label_value("switch.buffer", "") == ""


def test_the_kd_deck_labels_the_loop_delay() -> None:
    assert kd_label("links.delay", "4us") == "loop delay = 8 us"
    assert kd_label("links.delay", "250us") == "loop delay = 500 us"
    assert kd_label("links.delay", "") == kd_label("links.delay", None) == "loop delay ="
    assert kd_label("cm.w", 8) == "W = 8"


def test_each_deck_names_schemes_switches_and_delays_its_own_way() -> None:
    from cnsim.reproduce.e2cm import e2cm_label
    from cnsim.reproduce.eval import eval_label
    from cnsim.reproduce.modern import modern_label
    from cnsim.reproduce.qcnp import qcnp_label

    assert scheme_label({"bcn": "ECM"}, "bcn") == "ECM" and scheme_label({}, "qcn-plus") == "QCN-PLUS"
    assert scheme_label({}, "") == scheme_label({}, None) == "scheme ="
    assert switch_label("PAUSE", True) == "PAUSE on" and switch_label("PAUSE", False) == "PAUSE off"
    assert switch_label("EFR", "") == switch_label("EFR", None) == "EFR ="
    # S1 calls BCN "ECM-Q" and the one-way link delay "RTT"
    assert [qcnp_label("cm.scheme", s) for s in ("none", "bcn", "qcn", "qcn-sonar", "qcn-plus", "dcqcn", "")] == [
        "no CM", "ECM-Q", "QCN", "QCN-SONAR", "QCN+", "DCQCN", "scheme ="]
    assert [qcnp_label("links.delay", d) for d in ("2us", "250us", "1ms", 5e-6, "")] == [
        "RTT = 2 us", "RTT = 250 us", "RTT = 1 ms", "RTT = 5 us", "RTT ="]
    assert qcnp_label("links.delay", "999us") == "RTT = 999 us"
    assert [qcnp_label("switch.pause", v) for v in (True, False, None)] == ["PAUSE on", "PAUSE off", "PAUSE ="]
    assert [qcnp_label("switch.memory_per_port", v) for v in ("150KB", "")] == ["M = 150KB", "M ="]
    assert [qcnp_label("cm.bcn00", v) for v in (True, False, None)] == ["with (0,0)", "without (0,0)", "(0,0) ="]
    assert qcnp_label("cm.gd", "gd0") == "Gd = Gd0"
    # S3: ECM and E2CM, Bernoulli and bursty traffic by their mean sizes
    assert [e2cm_label("cm.scheme", s) for s in ("none", "bcn", "e2cm", "qcn")] == ["no CM", "ECM", "E2CM", "QCN"]
    assert [e2cm_label("traffic.mean_size", v) for v in ("1500B", "60000B", "9000B", "")] == [
        "Bernoulli", "Bursty", "mean 9000B", "traffic ="]
    assert e2cm_label("switch.pause", True) == "PAUSE on" and e2cm_label("cm.w", 2) == "W = 2"
    # S4: QCN-2pt and -3pt, EFR
    assert [eval_label("cm.scheme", s) for s in ("none", "bcn", "qcn", "qcn3pt", "")] == [
        "no CM", "ECM", "QCN-2pt", "QCN-3pt", "scheme ="]
    assert [eval_label("cm.efr", v) for v in (True, False, "")] == ["EFR on", "EFR off", "EFR ="]
    assert eval_label("switch.pause", False) == "PAUSE off" and eval_label("traffic.load", 0.5) == "load = 0.5"
    assert [modern_label("cm.scheme", s) for s in ("dcqcn-nic", "fecn", "bcn", "qcn-sonar", None)] == [
        "DCQCN (NIC)", "FECN", "ECM", "QCN-SONAR", "scheme ="]
    assert modern_label("switch.buffer", "shared") == "shared"


def test_flow_names_sort_by_their_numbers_and_only_numbers_are_numbers() -> None:
    names = ["H10", "10->1", "H2", "2->1", "EP1->EP4", "EP0->EP4", "H2b"]
    assert sorted(names, key=_natural) == ["2->1", "10->1", "EP0->EP4", "EP1->EP4", "H2", "H2b", "H10"]
    assert _num(3) == 3.0 and _num(0.5) == 0.5
    assert all(np.isnan(_num(v)) for v in (True, False, None, "1", [1]))
    assert sorted(["b", "a10", "a9", "10", "9", ""], key=_natural) == ["", "9", "10", "a9", "a10", "b"]
    assert _seconds("10ms") == 0.01 and _seconds("2.5us") == 2.5e-6 and _seconds(0.25) == 0.25 and _seconds(1) == 1.0


def test_panels_fill_a_grid_and_hide_the_spare_ones() -> None:
    fig, axes = _new(3)
    assert len(axes) == 3 and len(fig.axes) == 4 and not fig.axes[3].get_visible()
    assert tuple(fig.get_size_inches()) == pytest.approx((12.8, 3.6 * 2 + 0.6))
    fig, axes = _new(1, ncols=3, height=3.4)
    assert len(fig.axes) == 1 and tuple(fig.get_size_inches()) == pytest.approx((6.4, 4.0))
    fig, axes = _new(5, ncols=2)
    assert len(axes) == 5 and len(fig.axes) == 6 and tuple(fig.get_size_inches())[1] == pytest.approx(3.6 * 3 + 0.6)
    # shared y by default, independent on request
    fig, axes = _new(2)
    assert axes[0].get_shared_y_axes().joined(axes[0], axes[1])
    fig, axes = _new(2, sharey=False)
    assert not axes[0].get_shared_y_axes().joined(axes[0], axes[1])


def test_ten_curves_take_the_categorical_colours_more_a_colour_scale() -> None:
    from matplotlib import colormaps

    assert _colors(10) == [colormaps["tab10"](i) for i in range(10)]
    eleven = _colors(11)
    assert eleven[0] == colormaps["viridis"](0.0) and eleven[10] == colormaps["viridis"](1.0)
    assert eleven[5] == colormaps["viridis"](0.5)
    assert _colors(1) == [colormaps["tab10"](0)]


# --- the sweep's points ---------------------------------------------------------------------


def test_points_come_in_plan_order_with_their_swept_values_and_folders(zhb: Path) -> None:
    points, keys = load_points(zhb)
    assert keys == ["cm.gd", "switch.buffer"]
    assert len(points) == 8 and all(p.ok for p in points)
    assert [(p.params["cm.gd"], p.params["switch.buffer"]) for p in points[::2]] == [
        (g, b) for g in GD for b in BUFFERS
    ]
    assert [p.row["seed"] for p in points] == [1, 2] * 4
    for p in points:
        assert p.folder == zhb / "runs" / p.row["run_id"] and (p.folder / "summary.json").is_file()
    assert not Point({"status": "failed"}, zhb, {}).ok and not Point({}, zhb, {}).ok


def test_a_sweep_without_a_table_has_no_points(tmp_path: Path) -> None:
    (tmp_path / "sweep.json").write_text('{"spec": {"axes": {"cm.gd": [1, 2]}, "zip": {"cm.gi": [3, 4]}}}')
    assert load_points(tmp_path) == ([], ["cm.gd", "cm.gi"])


# --- a series against time ------------------------------------------------------------------


def test_the_hot_queue_is_drawn_in_kb_for_the_first_seed_one_curve_per_point(zhb: Path) -> None:
    points, keys = load_points(zhb)
    fig = TimeFigure("q", "the hot queue", "hot_queue").build(points, keys, label_value)
    (ax,) = fig.axes
    drawn = named_lines(ax)
    first = [p for p in points if p.row["seed"] == 1]
    assert list(drawn) == [f"Gd = {g.replace('*', '·').replace('gd0', 'Gd0')}, {b}" for g in GD for b in BUFFERS]
    for p, line in zip(first, ax.get_lines(), strict=True):
        t, b = series(p.folder, "queue", "S1/1", "bytes")
        assert line.get_xdata().tolist() == t and line.get_ydata().tolist() == pytest.approx([v / 1000 for v in b], rel=1e-12)
    assert (ax.get_title(), ax.get_xlabel(), ax.get_ylabel()) == ("the hot queue", "time (s)", "hot queue (KB)")
    assert ax.get_ylim()[0] == 0 and not fig._suptitle
    (span,) = ax.patches  # the hotspot, once per panel
    assert span_x(span) == pytest.approx((0.01, 0.02))
    assert ax.get_legend() is not None and ax.get_legend()._ncols == 1
    assert fig.dpi == 100


def test_a_run_without_the_series_draws_an_empty_curve(zhb: Path, tmp_path: Path) -> None:
    points, keys = load_points(zhb)
    bare = tmp_path / "bare"
    bare.mkdir()
    (bare / "scenario.toml").write_text((points[0].folder / "scenario.toml").read_text())
    gone = [Point(points[0].row, bare, points[0].params), points[2]]
    for quantity in ("hot_queue", "aggregate", "hot_port"):
        (ax,) = TimeFigure("q", "t", quantity).build(gone, keys, label_value).axes
        empty, drawn = ax.get_lines()
        assert len(empty.get_xdata()) == len(empty.get_ydata()) == 0 and len(drawn.get_xdata()) > 0
        assert len(ax.patches) == 1  # the hotspot, from the first point's scenario


def _damage_inside(path: Path) -> None:
    """Flip bytes in the pages of a Parquet file, its ends kept whole (what parquet_whole sees)."""
    data = bytearray(path.read_bytes())
    for i in range(8, len(data) // 2, 7):
        data[i] ^= 0xFF
    path.write_bytes(bytes(data))


def test_a_series_damaged_inside_is_named(zhb: Path, tmp_path: Path) -> None:
    """A series file whose pages are damaged (its ends whole, so the sweep keeps it) failed the
    figure with pyarrow's text: "cnsim: I/O error: Couldn't deserialize thrift: …" on two lines,
    naming no file."""
    import shutil

    from cnsim.errors import ScenarioError

    points, keys = load_points(zhb)
    copy = tmp_path / "run"
    shutil.copytree(points[0].folder, copy)
    _damage_inside(copy / "series" / "queue.parquet")
    with pytest.raises(ScenarioError) as err:
        TimeFigure("q", "t", "hot_queue").build([Point(points[0].row, copy, points[0].params)], keys, label_value)
    assert str(err.value).startswith(f"{copy / 'series' / 'queue.parquet'}: damaged: it does not read as Parquet (")
    assert str(err.value).endswith("); expected the series a run writes. Delete its run folder: `cnsim reproduce` runs it again.")


def test_another_seed_and_the_throughputs(zhb: Path) -> None:
    points, keys = load_points(zhb)
    second = [p for p in points if p.row["seed"] == 2]
    (ax,) = TimeFigure("a", "aggregate", "aggregate", seed=2).build(points, keys, label_value).axes
    for p, line in zip(second, ax.get_lines(), strict=True):
        t, v = series(p.folder, "throughput", "aggregate", "gbps")
        assert line.get_xdata().tolist() == t and line.get_ydata().tolist() == v
    assert ax.get_ylabel() == "aggregate throughput (Gb/s)"
    (ax,) = TimeFigure("h", "hot port", "hot_port").build(points, keys, label_value).axes
    t, v = series(points[0].folder, "throughput", "port:S1/1", "gbps")
    assert ax.get_lines()[0].get_ydata().tolist() == v and ax.get_ylabel() == "hot-port throughput (Gb/s)"
    assert TimeFigure("n", "no such seed", "aggregate", seed=3).build(points, keys, label_value) is None


def test_a_facet_makes_one_panel_per_value_and_leaves_the_legend_to_the_rest(zhb: Path) -> None:
    points, keys = load_points(zhb)
    fig = TimeFigure("q", "by buffer", "hot_queue", facet="switch.buffer").build(points, keys, label_value)
    assert fig._suptitle.get_text() == "by buffer"
    shared, partitioned = fig.axes
    assert (shared.get_title(), partitioned.get_title()) == ("shared", "partitioned")
    assert list(named_lines(shared)) == ["Gd = Gd0", "Gd = 4·Gd0"]
    assert [len(ax.patches) for ax in fig.axes] == [1, 1]
    # the y range is shared and starts at 0 in every panel
    assert shared.get_ylim() == partitioned.get_ylim() and shared.get_ylim()[0] == 0
    # a legend chosen by name; none at all gives each point the name "run"
    fig = TimeFigure("q", "by gain", "hot_queue", legend=["switch.buffer"]).build(points, keys, label_value)
    assert [line.get_label() for line in fig.axes[0].get_lines()] == ["shared", "partitioned"] * 2
    fig = TimeFigure("q", "no legend", "hot_queue", legend=[]).build(points, keys, label_value)
    assert [line.get_label() for line in fig.axes[0].get_lines()] == ["run"] * 4


def test_a_figure_of_no_run_is_not_drawn(zhb: Path, tmp_path: Path) -> None:
    points, keys = load_points(zhb)
    failed = [Point({**p.row, "status": "failed"}, p.folder, p.params) for p in points]
    for kind in (TimeFigure("t", "t", "hot_queue"), MetricFigure("m", "m", "cm.gd", ["aggregate"]), FlowFigure("f", "f")):
        assert kind.build(failed, keys, label_value) is None
        assert kind.draw(failed, keys, label_value, tmp_path) is None
    assert not list(tmp_path.iterdir())
    path = TimeFigure("drawn", "t", "hot_queue").draw(points, keys, label_value, tmp_path)
    assert path == tmp_path / "drawn.png" and path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_many_curves_share_a_colour_scale_and_a_two_column_legend(zhb: Path) -> None:
    points, keys = load_points(zhb)
    seed1 = [p for p in points if p.row["seed"] == 1]
    many = [Point(p.row, p.folder, {**p.params, "cm.gd": f"{i}*gd0"}) for i, p in enumerate(seed1 * 2)]
    (ax,) = TimeFigure("q", "eight", "hot_queue").build(many, keys, label_value).axes
    assert ax.get_legend()._ncols == 2 and len(ax.get_lines()) == 8
    (ax,) = TimeFigure("q", "seven", "hot_queue").build(many[:7], keys, label_value).axes
    assert ax.get_legend()._ncols == 1 and len(ax.get_lines()) == 7


# --- a metric against a swept key -----------------------------------------------------------


def test_a_metric_against_a_swept_key_one_curve_per_legend_value(zhb: Path) -> None:
    points, keys = load_points(zhb)
    fig = MetricFigure("m", "gains", "cm.gd", ["aggregate", "q_mean"], legend="switch.buffer").build(points, keys, label_value)
    assert len(fig.axes) == 2
    aggregate, queue = fig.axes
    assert (aggregate.get_ylabel(), queue.get_ylabel()) == ("aggregate (Gb/s)", "hot queue mean (KB)")
    assert aggregate.get_xlabel() == "Gd"
    for ax, key, scale in ((aggregate, "throughput_gbps.aggregate", 1.0), (queue, "queue_bytes.hot.mean", 1e-3)):
        drawn = {name: line for name, line in named_lines(ax).items() if not name.startswith("_")}  # not the seeds' dots
        assert list(drawn) == ["shared", "partitioned"]
        for buffer, line in drawn.items():
            by_gd = [[p.row[key] * scale for p in points if p.params == {"cm.gd": gd, "switch.buffer": buffer}] for gd in GD]
            assert [len(v) for v in by_gd] == [2, 2]  # two seeds each
            assert line.get_xdata().tolist() == [0, 1]
            assert line.get_ydata().tolist() == pytest.approx([sum(v) / 2 for v in by_gd], rel=1e-12)
        assert [t.get_text() for t in ax.get_xticklabels()] == ["Gd0", "4·Gd0"]
        assert ax.get_legend() is not None
    assert not aggregate.get_shared_y_axes().joined(aggregate, queue)


def test_a_numeric_x_and_the_panel_grid(zhb: Path) -> None:
    points, keys = load_points(zhb)
    scale = {"gd0": 1.0, "4*gd0": 4.0}
    fig = MetricFigure("m", "t", "cm.gd", ["aggregate"], x_values=lambda v: scale[v]).build(points, keys, label_value)
    (ax,) = fig.axes
    line, seeds = ax.get_lines()  # no legend key: one curve of every point (a seeds' mean), and the seeds
    assert line.get_xdata().tolist() == [1.0, 1.0, 4.0, 4.0] and ax.get_legend() is None
    assert seeds.get_xdata().tolist() == [1.0] * 4 + [4.0] * 4
    assert line.get_label().startswith("_") and seeds.get_label().startswith("_")
    metrics = ["aggregate", "hot_port", "q_mean", "drops"]
    fig = MetricFigure("m", "t", "cm.gd", metrics).build(points, keys, label_value)
    assert sum(ax.get_visible() for ax in fig.axes) == 4 and len(fig.axes) == 4  # four panels on two columns
    assert tuple(fig.get_size_inches()) == pytest.approx((12.8, 3.4 * 2 + 0.6))
    fig = MetricFigure("m", "t", "cm.gd", metrics[:3]).build(points, keys, label_value)
    assert tuple(fig.get_size_inches()) == pytest.approx((6.4 * 3, 3.4 + 0.6))  # three in a row
    # an unnamed key's axis keeps its last part; a missing metric is drawn as a gap
    row = {**points[0].row, "throughput_gbps.aggregate": None}
    fig = MetricFigure("m", "t", "traffic.load", ["aggregate"]).build([Point(row, points[0].folder, {"traffic.load": 0.5})], ["traffic.load"], label_value)
    assert fig.axes[0].get_xlabel() == "load" and np.isnan(fig.axes[0].get_lines()[0].get_ydata()[0])
    fig = MetricFigure("m", "t", "switch.buffer", ["aggregate"]).build(points, keys, label_value)
    assert fig.axes[0].get_xlabel() == "switch.buffer"  # a key whose label has no name


# --- per-flow bars --------------------------------------------------------------------------


def test_per_flow_bars_with_each_flows_max_min_share(kd: Path) -> None:
    points, keys = load_points(kd)
    fig = FlowFigure("f", "per source").build(points, keys, kd_label)
    (ax,) = fig.axes
    flows = ["EP0->EP4", "EP1->EP4", "EP2->EP4", "EP3->EP4"]
    width = 0.8 / 4
    bars = ax.patches
    assert len(bars) == 8
    for i, flow in enumerate(flows):
        for j, p in enumerate(points):
            bar = bars[i * 2 + j]
            assert bar.get_height() == p.row[f"throughput_gbps.per_flow.{flow}"]
            assert bar.get_x() + bar.get_width() / 2 == pytest.approx(j + (i - 1.5) * width)
            assert bar.get_width() == pytest.approx(width)
    assert [c.get_label() for c in ax.containers] == flows
    # one dashed segment a bar at the flow's share, named once
    segments = [s for c in ax.collections for s in c.get_segments()]
    assert len(segments) == 8
    fair = Result.load(points[0].folder).fair_gbps
    assert set(fair) == set(flows) and all(v == pytest.approx(2.5) for v in fair.values())
    for (x0, y0), (x1, y1) in segments:
        assert y0 == y1 == pytest.approx(2.5) and x1 - x0 == pytest.approx(width)
    # each segment over its bar: flow by flow, point by point
    centres = [(x0 + x1) / 2 for (x0, _y0), (x1, _y1) in segments]
    assert centres == pytest.approx([j + (i - 1.5) * width for j in range(2) for i in range(4)])
    assert ax.get_legend()._ncols == 4 and fig.dpi == 100
    assert [c.get_label() for c in ax.collections].count("max-min fair share") == 1
    assert all(c.get_linestyle()[0][1] is not None for c in ax.collections)  # dashed
    assert [t.get_text() for t in ax.get_xticklabels()] == ["loop delay = 8 us", "loop delay = 100 us"]
    assert (ax.get_title(), ax.get_ylabel()) == ("per source", "throughput over the window (Gb/s)")
    assert tuple(fig.get_size_inches()) == pytest.approx((6.4, 4.2))


def test_per_node_bars_sum_the_shares_of_the_flows_into_a_node(kd: Path) -> None:
    points, keys = load_points(kd)
    (ax,) = FlowFigure("f", "per node", nodes=True).build(points, keys, kd_label).axes
    nodes = ["EP0", "EP1", "EP2", "EP3", "EP4"]
    assert [c.get_label() for c in ax.containers] == nodes
    assert [b.get_height() for b in ax.containers[4]] == [p.row["throughput_gbps.per_node.EP4"] for p in points]
    # only EP4 receives: its reference is the four shares summed, 10 Gb/s
    segments = [s for c in ax.collections for s in c.get_segments()]
    assert len(segments) == 2 and all(y0 == pytest.approx(10.0) for (_x0, y0), _ in segments)
    from cnsim.fairness import fair_shares

    shares = fair_shares(Result.load(points[0].folder).scenario.resolved)
    assert segments[0][0][1] == sum(v / 1e9 for v in shares.values())  # summed in Gb/s, as drawn


def test_the_proportional_share_is_dotted_beside_the_max_min_one(kd: Path) -> None:
    points, keys = load_points(kd)
    (ax,) = FlowFigure("f", "both", proportional=True).build(points, keys, kd_label).axes
    labels = [c.get_label() for c in ax.collections]
    assert labels.count("max-min fair share") == 1 and labels.count("proportional share") == 1
    assert len(ax.collections) == 16  # a max-min and a proportional segment per bar
    styles = {c.get_label(): c.get_linestyle()[0] for c in ax.collections if not c.get_label().startswith("_")}
    assert styles["max-min fair share"] != styles["proportional share"]
    # four equal flows on one link: both references are a quarter of it
    assert all(y0 == pytest.approx(2.5) for c in ax.collections for (_x0, y0), _ in c.get_segments())
    from cnsim.fairness import proportional_shares

    prop = proportional_shares(Result.load(points[0].folder).scenario.resolved)
    dotted = [c for c in ax.collections if c.get_linestyle()[0] == styles["proportional share"]]
    assert [c.get_segments()[0][0][1] for c in dotted[:4]] == [prop[(f"EP{i}", "EP4")] / 1e9 for i in range(4)]


def test_flows_without_a_result_or_without_columns(kd: Path, tmp_path: Path) -> None:
    points, keys = load_points(kd)
    # a run folder that no longer loads: the bars without their reference
    moved = [Point(p.row, tmp_path / "gone", p.params) for p in points]
    (ax,) = FlowFigure("f", "no refs").build(moved, keys, kd_label).axes
    assert len(ax.patches) == 8 and not ax.collections
    # no per-flow column (or only empty ones): nothing to draw
    bare = [Point({k: v for k, v in p.row.items() if "per_flow" not in k}, p.folder, p.params) for p in points]
    assert FlowFigure("f", "none").build(bare, keys, kd_label) is None
    empty = [Point({**p.row, **{k: None for k in p.row if "per_flow" in k}}, p.folder, p.params) for p in points]
    assert FlowFigure("f", "none").build(empty, keys, kd_label) is None
    # a flow only the second point recorded gets its bar there, and a gap at the first
    fewer = [Point({**points[0].row, "throughput_gbps.per_flow.EP3->EP4": None}, points[0].folder, points[0].params), points[1]]
    (ax,) = FlowFigure("f", "some").build(fewer, keys, kd_label).axes
    assert [c.get_label() for c in ax.containers] == ["EP0->EP4", "EP1->EP4", "EP2->EP4", "EP3->EP4"]
    gap, bar = ax.containers[3]
    assert np.isnan(gap.get_height()) and bar.get_height() == points[1].row["throughput_gbps.per_flow.EP3->EP4"]
    # many points widen the figure
    assert tuple(FlowFigure("f", "wide").build(points * 4, keys, kd_label).get_size_inches())[0] == pytest.approx(1.2 * 8 + 2)


# --- a subset of the points -----------------------------------------------------------------


def test_a_subset_draws_the_matching_points_and_drops_a_fixed_key_from_the_legend(zhb: Path, tmp_path: Path) -> None:
    points, keys = load_points(zhb)
    inner = TimeFigure("sub", "shared only", "hot_queue", caption="c")
    subset = Subset(inner, {"switch.buffer": ["shared"], "not.swept": [1]})
    assert (subset.title, subset.caption) == ("shared only", "c")
    (ax,) = subset.build(points, keys, label_value).axes
    assert list(named_lines(ax)) == ["Gd = Gd0", "Gd = 4·Gd0"]
    both = Subset(inner, {"switch.buffer": BUFFERS})
    assert list(named_lines(both.build(points, keys, label_value).axes[0])) == [
        f"Gd = {g}, {b}" for g in ("Gd0", "4·Gd0") for b in BUFFERS
    ]
    assert Subset(inner, {"switch.buffer": ["none"]}).build(points, keys, label_value) is None
    assert subset.draw(points, keys, label_value, tmp_path) == tmp_path / "sub.png"
    assert Subset(inner, {"switch.buffer": ["none"]}).draw(points, keys, label_value, tmp_path) is None


# --- the summary table ----------------------------------------------------------------------


def test_the_summary_table_has_the_swept_values_the_seed_and_the_metrics(zhb: Path) -> None:
    points, keys = load_points(zhb)
    columns, rows = SummaryTable("t", ["aggregate", "q_mean", "drops"]).rows(points, keys, label_value)
    assert columns == ["Gd", "memory", "seed", "aggregate (Gb/s)", "hot queue mean (KB)", "drops (frames)"]
    assert len(rows) == 8
    p = points[3]
    assert rows[3] == ["Gd0", "partitioned", "2", fmt(p.row["throughput_gbps.aggregate"]),
                       fmt(p.row["queue_bytes.hot.mean"] * 1e-3), fmt(p.row["drops.frames"])]
    assert rows[4][:2] == ["4·Gd0", "shared"]
    default = SummaryTable("t")
    assert default.metrics == ["aggregate", "hot_port", "q_mean", "q_std", "drops", "paused", "cm_mbps", "jain"]


def test_a_failed_row_says_why_and_is_padded_and_per_flow_columns_follow(kd: Path) -> None:
    points, keys = load_points(kd)
    failed = Point({"seed": 3, "status": "failed", "error": "boom"}, kd, {"links.delay": "50us"})
    columns, rows = SummaryTable("t", ["drops", "jain"], per_flow=True).rows([points[0], failed], keys, kd_label)
    flows = ["EP0->EP4", "EP1->EP4", "EP2->EP4", "EP3->EP4"]
    assert columns == ["loop delay", "seed", "drops (frames)", "Jain (vs max-min)", *(f"{f} (Gb/s)" for f in flows)]
    assert rows[0][4:] == [fmt(points[0].row[f"throughput_gbps.per_flow.{f}"]) for f in flows]
    assert rows[1] == ["100 us", "3", "failed: boom", "", "", "", "", ""]
    # a value that is not a number is shown as it is, a missing one as a dash; a bool is not scaled
    odd = Point({**points[0].row, "paused_fraction": True, "queue_bytes.hot.mean": None}, kd, {"links.delay": "4us"})
    _columns, (row,) = SummaryTable("t", ["paused", "q_mean"]).rows([odd], keys, kd_label)
    assert row[2:] == ["yes", "–"]
    # without per_flow the flows stay out; without points the table is its header
    columns, rows = SummaryTable("t", ["drops"]).rows(points, keys, kd_label)
    assert columns == ["loop delay", "seed", "drops (frames)"] and all(len(r) == 3 for r in rows)
    assert SummaryTable("t", ["drops"]).rows([], keys, kd_label) == (["loop delay", "seed", "drops (frames)"], [])


# Every panel, legend and x axis of a deck figure is a key its study sweeps: a key the sweep fixes
# has one value, None in every point, which the labelers write as "PAUSE =" (eval-fat-tree-64-0.5g
# drew a panel titled "PAUSE =" and a legend "PAUSE =", under captions saying "with and without
# PAUSE" for a study that runs PAUSE off only).


def _figures(deck: str) -> list[tuple[str, list[str], Any]]:
    out = []
    for study in get_deck(deck).studies:
        spec, _ = study_status(study)
        if spec is None:
            continue
        keys = [*spec.axes, *spec.zip]
        for f in study.figures:
            out.append((study.sweep, keys, f.figure if isinstance(f, Subset) else f))
    return out


@pytest.mark.parametrize("deck", DECKS)
def test_panels_legends_and_axes_are_swept_keys(deck: str) -> None:
    for sweep, keys, fig in _figures(deck):
        for attr in ("facet", "legend", "x"):
            value = getattr(fig, attr, None)
            for key in [value] if isinstance(value, str) else (value or []):
                assert key in keys, f"{sweep}: {fig.name}.{attr} = {key!r} is not swept ({keys})"


@pytest.mark.parametrize("deck", DECKS)
def test_with_and_without_pause_only_where_pause_is_swept(deck: str) -> None:
    for sweep, keys, fig in _figures(deck):
        if "with and without PAUSE" in fig.caption:
            assert "switch.pause" in keys, f"{sweep}: {fig.name} says 'with and without PAUSE' but runs one PAUSE setting"


def test_the_fat_tree_without_pause_says_so() -> None:
    figs = [fig for sweep, _, fig in _figures("eval") if sweep == "eval-fat-tree-64-0.5g"]
    assert figs and all("PAUSE off" in fig.caption for fig in figs)


# The time figures of the decks shade where the hot port is overloaded: the hotspot of an
# output-generated scenario, and for an input-generated hotspot or a dual congestion point (no
# [[hotspots]]) the span in which the hot flows run. Their captions say "the hotspot (0.1–0.5 s) is
# shaded" (zhb-ig-single-hop-grid, the dual-CP grids) or "the hotspot is shaded" (the qcnp IG,
# 20-stage and parking-lot grids), and nothing was shaded.


def folder_of(tmp_path: Path, scenario: str) -> Path:
    folder = tmp_path / scenario
    folder.mkdir()
    (folder / "scenario.toml").write_text(load(scenario).to_toml(), encoding="utf-8")
    _scenario_doc.cache_clear()
    return folder


@pytest.mark.parametrize(("scenario", "spans"), [
    ("zhb-og-single-hop", [(0.1, 0.5)]),          # a hotspot: as before
    ("zhb-ig-single-hop", [(0.1, 0.5)]),          # nodes 2-5 -> 1 from 0.1 to 0.5 s
    ("zhb-dual-cp-light-heavy", [(0.1, 0.5)]),    # traffic.start / stop
    ("zhb-dual-cp-heavy-light", [(0.1, 0.5)]),
    ("qcnp-ig-baseline", [(0.1, 1.0)]),           # culprits 0.1-1.0 s, the victim all along
    ("qcnp-parking-lot", [(0.1, 1.0)]),           # hot flows 0.1-1.0 s, the cold ones all along
    ("qcnp-20-stage", [(0.1, 1.0)]),
    ("eval-baseline", []),                        # flows from 0 to the end: the whole run, nothing to mark
    ("kd-symmetric-single-hs", []),
])
def test_the_shaded_spans(tmp_path: Path, scenario: str, spans: list[tuple[float, float]]) -> None:
    got = _hotspots(folder_of(tmp_path, scenario))
    assert [(round(a, 9), round(b, 9)) for a, b in got] == spans


def test_a_damaged_flow_time_shades_nothing(tmp_path: Path) -> None:
    folder = tmp_path / "bad"
    folder.mkdir()
    (folder / "scenario.toml").write_text('duration = "1s"\n[traffic]\nflows = [{src = "1", dst = "2", start = "soon"}]\n',
                                          encoding="utf-8")
    _scenario_doc.cache_clear()
    assert _hotspots(folder) == []


# A deck figure whose caption says the hotspot is shaded shades something: its study's scenario has
# a hotspot, or hot flows that start after the run does (eval-baseline's flows run from 0 to the
# end, so nothing is shaded there, under "the hotspot is shaded").


@pytest.mark.parametrize("deck", DECKS)
def test_a_caption_that_promises_shading_has_a_span_to_shade(deck: str) -> None:
    for study in get_deck(deck).studies:
        spec, _ = study_status(study)
        if spec is None:
            continue
        scen = load(spec.base).copy()
        first = {k: v[0] for k, v in {**spec.axes, **spec.zip}.items()}
        scen.set_many({**spec.set, **first})
        doc = tomllib.loads(scen.to_toml())
        shaded = bool(doc.get("hotspots")) or _flows_window(doc) is not None
        for f in study.figures:
            fig = f.figure if isinstance(f, Subset) else f
            caption = fig.caption
            if "the hotspot" in caption and "is shaded" in caption and "(if any)" not in caption:
                assert shaded, f"{study.sweep}: {fig.name} says the hotspot is shaded; {spec.base} has none"


# A deck table that names its measurement window names the one its runs used (the sweeping hotspot
# of the zhb deck averages over [0.1, 0.5] s, not the [0.2, 0.5] s of the other cases; ``--quick``
# moves every window).


def point(window: Any, status: str = "ok") -> Point:
    return Point({"status": status, "window_s": window}, Path("."), {})


def test_the_heading_names_the_window_of_the_runs() -> None:
    table = SummaryTable("Case 7: summary over {window}", ["aggregate"])
    assert table.heading([point([0.1, 0.5]), point([0.1, 0.5])]) == "Case 7: summary over [0.1, 0.5] s"
    assert table.heading([point([0.0, 1.0])]) == "Case 7: summary over [0, 1] s"
    # runs of different windows, or none that ran: no window is named
    assert table.heading([point([0.2, 0.5]), point([0.1, 0.5])]) == "Case 7: summary over each run's measurement window"
    assert table.heading([point([0.2, 0.5], status="failed")]) == "Case 7: summary over each run's measurement window"
    # a window that is not a pair (a damaged table row) names none either
    for odd in ([0.1, 0.5, 0.9], "0.1-0.5", None):
        assert table.heading([point(odd)]) == "Case 7: summary over each run's measurement window"
    assert SummaryTable("no window named", ["aggregate"]).heading([point([0.1, 0.5])]) == "no window named"


def _window_text(base: str, overrides: dict[str, Any]) -> str:
    scen = load(base).copy()
    scen.set_many(overrides)
    t0, t1 = (t / 1e12 for t in scen.resolved.window_ps)
    return f"[{t0:g}, {t1:g}] s"


@pytest.mark.parametrize("study", [s.sweep for s in get_deck("zhb").studies])
def test_each_zhb_table_names_its_studys_window(study: str) -> None:
    """Every zhb table title, once drawn, holds the window of its runs (the first point of the
    full sweep), never a window written for another case."""
    entry = next(s for s in get_deck("zhb").studies if s.sweep == study)
    spec, reason = study_status(entry)
    assert spec is not None, reason
    first = {k: v[0] for k, v in {**spec.axes, **spec.zip}.items()}
    window = _window_text(spec.base, {**spec.set, **first})
    t0, t1 = (float(x) for x in window.strip("[] s").split(", "))
    for table in entry.tables:
        title = table.heading([point([t0, t1])])
        if "summary over" in table.title:
            assert title.endswith(f"summary over {window}"), (study, title)


def test_the_sweeping_hotspot_window_is_not_the_one_of_case_1() -> None:
    """The case the fixed title got wrong: scenarios.md §8 gives zhb-sweeping-hotspot [0.1, 0.5] s."""
    assert _window_text("zhb-sweeping-hotspot", {}) == "[0.1, 0.5] s"
    for study in ("zhb-sweeping-hotspot-grid", "zhb-sweeping-hotspot-none"):
        entry = next(s for s in get_deck("zhb").studies if s.sweep == study)
        assert "[0.2, 0.5]" not in entry.tables[0].heading([point([0.1, 0.5])])


# The eval deck's queue figures carry the deck's own unit beside KB: its figures and parameters are
# unitless 64-byte pages (algorithms.md D1: ECM Qeq 375 = 24 KB, QCN Qeq 409 = 26.2 KB), so a hot
# queue read off a cnsim figure in KB could not be set beside the deck's without a conversion.


def run_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "run"
    (folder / "series").mkdir(parents=True)
    (folder / "scenario.toml").write_text('duration = "0.1s"\n[metrics]\nhot_port = "S1/H5"\n', encoding="utf-8")
    t = np.arange(1, 101) * 1e-3
    pq.write_table(pa.table({"t_s": t, "queue": ["S1/H5"] * t.size, "bytes": np.full(t.size, 24_000.0)}),
                   folder / "series" / "queue.parquet")
    return folder


def test_a_pages_axis_reads_the_queue_in_64_byte_pages(tmp_path: Path) -> None:
    pt = Point({"status": "ok", "seed": 1}, run_folder(tmp_path), {})
    fig = TimeFigure("q", "queue", "hot_queue", pages=True).build([pt], [], label_value)
    assert fig is not None
    (ax,) = fig.axes[:1]
    (right,) = ax.child_axes
    assert ax.get_ylabel() == "hot queue (KB)" and right.get_ylabel() == "hot queue (64-byte pages)"
    fig.canvas.draw()  # a secondary axis takes its limits when drawn
    lo, hi = ax.get_ylim()
    assert right.get_ylim() == pytest.approx((lo * 1000 / 64, hi * 1000 / 64))  # 24 KB = 375 pages
    plain = TimeFigure("q", "queue", "hot_queue").build([pt], [], label_value)
    assert plain is not None and not plain.axes[0].child_axes


def test_the_pages_axis_maps_both_ways() -> None:
    """The secondary axis needs the map and its inverse (matplotlib places the ticks with the
    inverse): 24 KB is 375 pages (ECM's Qeq, D1)."""
    assert _kb_to_pages(24.0) == 375.0 and _pages_to_kb(375.0) == 24.0
    kb = np.array([0.0, 1.5, 26.176, 150.0])
    assert _pages_to_kb(_kb_to_pages(kb)) == pytest.approx(kb, rel=1e-15)


def test_the_flows_window_is_where_every_named_flow_is_active() -> None:
    def doc(*flows: dict[str, Any], **traffic: Any) -> dict[str, Any]:
        return {"duration": "1s", "traffic": {"flows": list(flows), **traffic}}

    a, b = {"src": "1", "dst": "2"}, {"src": "3", "dst": "2"}
    assert _flows_window(doc({**a, "start": "0.1s"}, {**b, "start": "0.2s", "stop": "0.8s"})) == (0.2, 0.8)
    assert _flows_window(doc(a, b, start="0.1s", stop="0.5s")) == (0.1, 0.5)  # the traffic's own times
    # flows that start with the run congest all of it (no start given is the run's start, 0)
    assert _flows_window(doc(a, b)) is None and _flows_window(doc({**a, "start": "0s"})) is None
    # no time in which every flow is active
    assert _flows_window(doc({**a, "stop": "0.3s"}, {**b, "start": "0.3s"})) is None
    assert _flows_window(doc()) is None and _flows_window({"traffic": {"flows": [a]}}) is None  # no duration


def test_every_eval_queue_figure_has_the_pages_axis() -> None:
    figs = [f.figure if isinstance(f, Subset) else f for s in get_deck("eval").studies for f in s.figures]
    queues = [f for f in figs if isinstance(f, TimeFigure) and f.quantity == "hot_queue"]
    assert queues and all(f.pages and "64-byte pages" in f.caption for f in queues)


# A per-flow bar figure of many flows does not name each flow in its legend: the 100 culprits of
# qcnp-ig-100-sources made a 101-entry legend that hid the bars of half the schemes.


def points(tmp_path: Path, n: int) -> list[Point]:
    row = {"status": "ok", "seed": 1, **{f"throughput_gbps.per_flow.{i}->102": 0.1 for i in range(2, 2 + n)}}
    return [Point(dict(row), tmp_path / "no-run", {})]  # no run folder: no reference line


def legend_texts(tmp_path: Path, n: int) -> list[str]:
    fig = FlowFigure("f", "per-flow").build(points(tmp_path, n), [], label_value)
    assert fig is not None
    legend = fig.axes[0].get_legend()
    assert legend is not None
    return [t.get_text() for t in legend.get_texts()]


def test_a_few_flows_are_named_one_by_one(tmp_path: Path) -> None:
    assert legend_texts(tmp_path, 4) == ["2->102", "3->102", "4->102", "5->102"]


def test_many_flows_are_summed_up_in_one_entry(tmp_path: Path) -> None:
    texts = legend_texts(tmp_path, 100)
    assert texts == ["100 flows, 2->102 … 101->102 left to right in each group"]
    assert len(legend_texts(tmp_path, MAX_FLOW_LEGEND)) == MAX_FLOW_LEGEND


# The qcnp deck's "RTT" is its label for the one-way link delay d (I-14; the single-hop loop is
# 2d): its figures against links.delay titled their x axis "RTT", which reads as a round trip.


def test_the_qcnp_figures_against_the_link_delay_say_it_is_one_way(zhb: Path) -> None:
    from cnsim.reproduce.qcnp import qcnp_label

    against = [fig for _, _, fig in _figures("qcnp") if isinstance(fig, MetricFigure) and fig.x == "links.delay"]
    assert len(against) >= 3  # the grids' metrics, the RTT sweep's, the (0,0) sweep's
    points, keys = load_points(zhb)
    for fig in against:
        drawn = MetricFigure("m", "t", "cm.gd", ["aggregate"], xlabel=fig.xlabel).build(points, keys, qcnp_label)
        assert drawn is not None and drawn.axes[0].get_xlabel() == "RTT label = one-way link delay d (single-hop loop 2d)"
    assert qcnp_label("links.delay", "5us") == "RTT = 5 us"  # the panels and legends keep the deck's label


# A metric figure of several seeds draws one x position per swept point (the seeds' mean, each
# seed a dot beside it): it drew every (point, seed) as a position of its own, the same tick label
# twice, and joined the seeds of one point into a zigzag.


def test_the_seeds_of_a_point_make_one_position_their_mean_and_a_dot_each(zhb: Path) -> None:
    points, keys = load_points(zhb)
    shared = [p for p in points if p.params["switch.buffer"] == "shared"]
    fig = MetricFigure("m", "gains", "cm.gd", ["aggregate"]).build(shared, ["cm.gd"], label_value)
    assert fig is not None and fig._suptitle.get_text() == "gains (mean of the seeds; dots: each seed)"
    ax = fig.axes[0]
    mean, dots = ax.get_lines()
    values = [[p.row["throughput_gbps.aggregate"] for p in shared if p.params["cm.gd"] == gd] for gd in GD]
    assert mean.get_xdata().tolist() == [0, 1] and [t.get_text() for t in ax.get_xticklabels()] == ["Gd0", "4·Gd0"]
    assert mean.get_ydata().tolist() == pytest.approx([sum(v) / len(v) for v in values], rel=1e-12)
    assert dots.get_xdata().tolist() == [0, 0, 1, 1] and dots.get_ydata().tolist() == [y for v in values for y in v]
    assert dots.get_linestyle() == "None"
    one = MetricFigure("m", "gains", "cm.gd", ["aggregate"]).build([p for p in shared if p.row["seed"] == 1], ["cm.gd"], label_value)
    assert one is not None and one._suptitle.get_text() == "gains" and len(one.axes[0].get_lines()) == 1  # one seed: no dots


# Cases 4 and 7 of the zhb deck run the slide's Gd0 = 1/((2W+1)Qeq) (cm.gd0_rule = "unit"), twice
# the Gd0 of the other zhb studies: their legends and tables said "Gd = 1·Gd0" as the others do.


@pytest.mark.parametrize("study", [s.sweep for s in get_deck("zhb").studies])
def test_a_zhb_gain_in_the_unit_rules_gd0_says_so(study: str) -> None:
    deck = get_deck("zhb")
    entry = next(s for s in deck.studies if s.sweep == study)
    spec, reason = study_status(entry)
    assert spec is not None, reason
    labeler = entry.labeler or deck.labeler
    unit = spec.set.get("cm.gd0_rule") == "unit"
    assert labeler("cm.gd", "2.5*gd0") == ("Gd = 2.5·Gd0 (unit rule)" if unit else "Gd = 2.5·Gd0")
    assert labeler("cm.gd", "") == "Gd = " and labeler("switch.memory_per_port", "600KB") == "M = 600KB"
    if unit:
        _, rows = SummaryTable("t", ["aggregate"]).rows([Point({"status": "ok", "seed": 1}, Path("."), {"cm.gd": "10*gd0"})],
                                                        ["cm.gd"], labeler)
        assert rows[0][0] == "10·Gd0 (unit rule)"


# A run to completion ends when it has drained and its window is clipped there: in e2cm --quick
# the "no CM, PAUSE off" runs of e2cm-mixed-speed-ig-grid ended at 0.213 s, the others at 0.3 s,
# and one figure's bars and max-min shares were over different windows with nothing saying so.


def windowed(tmp_path: Path, windows: list[list[float]]) -> list[Point]:
    return [Point({"status": "ok", "seed": 1, "window_s": w, "duration_s": w[1], "throughput_gbps.aggregate": 1.0 + i,
                   "throughput_gbps.per_flow.2->1": 0.5}, tmp_path / "no-run", {"cm.scheme": scheme})
            for i, (w, scheme) in enumerate(zip(windows, ["none", "bcn", "e2cm"], strict=False))]


def test_a_figure_over_different_windows_says_which_run_used_which(tmp_path: Path) -> None:
    pts = windowed(tmp_path, [[0.1, 0.213], [0.1, 0.3], [0.1, 0.3]])
    note = "Measurement windows differ (runs to completion end when drained): [0.1, 0.3] s, but [0.1, 0.213] s for no CM"
    for kind in (FlowFigure("f", "per-flow"), MetricFigure("m", "t", "cm.scheme", ["aggregate"])):
        fig = kind.build(pts, ["cm.scheme"], label_value)
        assert fig is not None and fig._supxlabel is not None and fig._supxlabel.get_text() == note
        same = kind.build(windowed(tmp_path, [[0.1, 0.3]] * 3), ["cm.scheme"], label_value)
        assert same is not None and same._supxlabel is None  # one window: nothing to say
        # windows that differ for another reason (a run whose window starts later) get no cause
        other = kind.build(windowed(tmp_path, [[0.2, 0.3], [0.1, 0.3], [0.1, 0.3]]), ["cm.scheme"], label_value)
        assert other is not None and other._supxlabel is not None
        assert other._supxlabel.get_text() == "Measurement windows differ: [0.1, 0.3] s, but [0.2, 0.3] s for no CM"


# The times a deck's texts give are the ones their runs used: written by hand they said "from 0.1
# to 0.5 s" under --quick, whose runs put the hotspot at 0.02-0.10 s (zhb) or 0.05-0.15 s (eval),
# end a qcnp run at 0.3 s, and stop the e2cm sources at 0.2 s.


def run_of(tmp_path: Path, scenario: str, overrides: dict[str, Any], row: dict[str, Any]) -> Point:
    scen = load(scenario).copy()
    scen.set_many(overrides)
    folder = tmp_path / f"{scenario}-{len(list(tmp_path.iterdir()))}"
    folder.mkdir()
    (folder / "scenario.toml").write_text(scen.to_toml(), encoding="utf-8")
    _scenario_doc.cache_clear()
    return Point({"status": "ok", "seed": 1, **row}, folder, {})


def test_the_times_of_a_text_are_the_runs_own(tmp_path: Path) -> None:
    from cnsim.reproduce.figures import fill_times

    zhb = run_of(tmp_path, "zhb-og-single-hop", get_deck("zhb").quick_set, {"window_s": [0.05, 0.1], "duration_s": 0.12})
    assert fill_times("over {hotspot}; window {window}; {duration}", [zhb]) == "over 0.02–0.1 s; window [0.05, 0.1] s; 0.12 s"
    full = run_of(tmp_path, "zhb-og-single-hop", {}, {"window_s": [0.2, 0.5], "duration_s": 0.6})
    assert fill_times("over {hotspot}", [full, full]) == "over 0.1–0.5 s"
    # a run that ends before its hotspot does says so (qcnp --quick: 0.3 s of a 0.1-1.0 s hotspot)
    qcnp = run_of(tmp_path, "qcnp-og-single-hop", get_deck("qcnp").quick_set, {"window_s": [0.1, 0.3], "duration_s": 0.3})
    assert fill_times("after the hotspot ({hotspot})", [qcnp]) == "after the hotspot (0.1–1 s, the run ending at 0.3 s)"
    # a run that ends exactly when its hotspot does is not cut short
    ends = run_of(tmp_path, "zhb-og-single-hop", {}, {"window_s": [0.2, 0.5], "duration_s": 0.5})
    assert fill_times("over {hotspot}", [ends]) == "over 0.1–0.5 s"
    # input-generated: the span of the hot flows; the sources' stop and the cap of a run to completion
    assert fill_times("({hotspot})", [run_of(tmp_path, "qcnp-ig-baseline", {}, {"duration_s": 2.0})]) == "(0.1–1 s)"
    e2cm = run_of(tmp_path, "e2cm-mixed-speed-og", get_deck("e2cm").quick_set, {"duration_s": 0.21})
    assert fill_times("sources stop at {stop}, cap {duration}", [e2cm]) == "sources stop at 0.2 s, cap 0.3 s"
    # runs that disagree, or none that finished: words, not a time; other braces stay
    assert fill_times("over {hotspot}", [zhb, full]) == "over the hotspot"
    failed = Point({"status": "failed"}, zhb.folder, {})
    assert fill_times("{window}, {stop}, {duration}, {2, 20} us", [failed]) == (
        "each run's measurement window, the sources' stop, the run's length, {2, 20} us")


def test_no_deck_text_or_caption_types_a_run_time_in() -> None:
    import re

    for deck in DECKS:
        for study in get_deck(deck).studies:
            texts = [study.text, *(f.caption for f in study.figures), *(t.title for t in study.tables)]
            for text in texts:
                assert not re.search(r"\d\s?s\b", text), f"{deck}/{study.sweep}: {text!r} gives a time in seconds: fill it from the runs"


def test_a_quick_reproduction_notes_which_times_it_changed() -> None:
    from cnsim.reproduce import quick_note

    note = quick_note(get_deck("zhb"))
    assert "duration = 0.12s; hotspots.0.start = 0.02s; hotspots.0.end = 0.1s; metrics.window = [0.05s, 0.1s]" in note
    assert "the full runs'" in note
    assert "each study's own overrides" in quick_note(get_deck("modern"))  # its studies shorten their runs each


def test_a_drawn_study_has_its_runs_times_in_its_text_and_captions(zhb: Path, tmp_path: Path) -> None:
    import shutil

    from cnsim.reproduce import Study, _draw_study

    folder = tmp_path / "zhb-test"
    shutil.copytree(zhb, folder)
    study = Study(sweep="zhb-test", title="t", text="hotspot {hotspot}, window {window}",
                  figures=[TimeFigure("zhb-test-queue", "q", "hot_queue", caption="the hotspot ({hotspot}) is shaded")])
    entry: dict[str, Any] = {"figures": [], "tables": []}
    _draw_study(study, get_deck("zhb"), folder, entry)
    assert entry["text"] == "hotspot 0.01–0.02 s, window [0.005, 0.03] s"
    assert [f["caption"] for f in entry["figures"]] == ["the hotspot (0.01–0.02 s) is shaded"]
