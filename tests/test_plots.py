"""A run's default figures (cnsim.plots) read back from what they draw: the aggregate and the hot
port in Gb/s, the queues in KB with the hot one marked, each flow with its max-min fair share
over the window, the hotspot and window marked, and the axes' span and labels."""

from __future__ import annotations

from typing import Any

import cnsim
import matplotlib.colors
import numpy as np
import pyarrow.compute as pc
import pytest
from cnsim.plots import _per_flow, _queue, _throughput, figure_png, save_figures

pytest.importorskip("cnsim._core")


@pytest.fixture(scope="module")
def og() -> cnsim.Result:
    """zhb-og-single-hop with QCN, cut to 0.15 s: the hotspot (from 0.1 s) is on."""
    return cnsim.run("zhb-og-single-hop", set={"cm.scheme": "qcn", "duration": "150ms", "metrics.per_flow": "hot"})


def lines(ax: Any) -> dict[str, Any]:
    return {line.get_label(): line for line in ax.get_lines()}


def series(result: cnsim.Result, kind: str, entity: str, column: str) -> tuple[np.ndarray, np.ndarray]:
    table = result.series(kind)
    rows = table.filter(pc.equal(table[table.column_names[1]], entity))
    return rows["t_s"].to_numpy(), rows[column].to_numpy()


def test_the_throughput_figure_draws_the_aggregate_and_the_hot_port_in_gbps(og: cnsim.Result) -> None:
    (ax,) = _throughput(og).axes
    drawn = lines(ax)
    assert [name for name in drawn if not name.startswith("_")] == ["aggregate", "hot port S1/1"]
    t, v = series(og, "throughput", "port:S1/1", "gbps")
    assert drawn["hot port S1/1"].get_xdata().tolist() == t.tolist() and drawn["hot port S1/1"].get_ydata().tolist() == v.tolist()
    assert (ax.get_xlabel(), ax.get_ylabel(), ax.get_title()) == ("time (s)", "throughput (Gb/s)", "zhb-og-single-hop — scheme qcn")
    assert ax.get_xlim() == pytest.approx((0.0, 0.15)) and ax.get_ylim()[0] == 0.0
    # the measurement window's ends, unlabelled, and the hotspot's span with its node and rate
    window = sorted(line.get_xdata()[0] for name, line in drawn.items() if name.startswith("_"))
    assert window == pytest.approx([w / 1e12 for w in og.scenario.resolved.window_ps])
    (span,) = ax.patches
    assert span.get_label() == "hotspot 1 at 20%"  # node 1 served at a fifth of its rate
    xs = span.get_patch_transform().transform(span.get_path().vertices)[:, 0]
    assert (xs.min(), xs.max()) == pytest.approx((0.1, 0.5))


def test_the_queue_figure_draws_each_queue_in_kb_the_hot_one_first_in_red(og: cnsim.Result) -> None:
    (ax,) = _queue(og).axes
    drawn = lines(ax)
    hot = og.scenario.resolved.queues[0]
    t, b = series(og, "queue", hot, "bytes")
    line = drawn[f"{hot} (hot)"]
    assert line.get_ydata().tolist() == (b / 1000.0).tolist() and line.get_color() == "tab:red"
    assert ax.get_ylabel() == "queue (KB)"


def test_the_per_flow_figure_draws_each_flow_and_its_fair_share_over_the_window(og: cnsim.Result) -> None:
    (ax,) = _per_flow(og).axes
    drawn = lines(ax)
    flows = [name for name in drawn if "->" in name]
    # fifteen hot flows: more than twelve, so only the first twelve are named, and every flow's
    # share is drawn once per distinct value in grey (the fifteen hot flows share one value)
    assert len(og.fair_gbps) == 15 and len([line for line in ax.get_lines() if len(line.get_xdata()) > 2]) == 15
    assert flows == [f"{src}->1" for src in range(2, 14)]
    assert "max-min fair share" in drawn
    t0, t1 = (w / 1e12 for w in og.scenario.resolved.window_ps)
    (share,) = {round(f, 9) for f in og.fair_gbps.values()}
    (segment,) = ax.collections
    (((x0, y0), (x1, y1)),) = segment.get_segments()
    assert (x0, x1) == pytest.approx((t0, t1)) and y0 == y1 == pytest.approx(share)
    # a few flows: a dashed share each, in its flow's colour
    few = cnsim.run("zhb-og-multi-hop", set={"duration": "30ms", "metrics.window": ["10ms", "30ms"]})
    (ax,) = _per_flow(few).axes
    named = {line.get_label(): line for line in ax.get_lines() if "->" in line.get_label()}
    assert len(ax.collections) == len(named) == len(few.fair_gbps)
    for segment in ax.collections:
        (((_, y), _),) = segment.get_segments()
        assert any(y == pytest.approx(few.fair_gbps[n]) and segment.get_color()[0].tolist()[:3] ==
                   list(matplotlib.colors.to_rgb(line.get_color())) for n, line in named.items())
    assert ax.get_ylabel() == "per-flow throughput (Gb/s)"


def test_the_figures_are_written_as_pngs_by_name(og: cnsim.Result, tmp_path: Any) -> None:
    paths = save_figures(og, tmp_path)
    assert [p.name for p in paths] == ["throughput.png", "queue.png", "per_flow.png"]
    for path in paths:
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert figure_png(og, "queue.png")[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(KeyError):
        figure_png(og, "nope.png")


def test_a_long_series_is_drawn_as_its_envelope() -> None:
    """A series longer than MOST_POINTS is drawn as the smallest and largest value of each of
    MOST_POINTS / 2 chunks, in time order: a one-bin spike still shows, a chunk without values
    stays a gap; a shorter series is drawn as it is."""
    from cnsim.plots import MOST_POINTS, _thin

    t = np.arange(10 * MOST_POINTS + 3, dtype=np.float64)
    v = np.zeros_like(t)
    v[12_345] = 7.0
    v[-3] = -1.0
    v[40:60] = np.nan  # a gap inside a chunk: the chunk's other values count
    chunk = -(-len(t) // (MOST_POINTS // 2))
    v[chunk * 3:chunk * 4] = np.nan  # a whole chunk without values
    tt, vv = _thin(t, v)
    assert 0.9 * MOST_POINTS <= len(tt) <= MOST_POINTS and np.all(np.diff(tt) >= 0)
    assert np.nanmax(vv) == 7.0 and np.nanmin(vv) == -1.0 and 12_345.0 in tt.tolist()
    assert np.isnan(vv[6:8]).all() and np.isnan(vv).sum() == 2
    short = np.arange(10.0)
    assert _thin(short, short) == (short, short)
    # exactly MOST_POINTS is drawn as it is, one more is thinned
    full = np.arange(float(MOST_POINTS))
    assert _thin(full, full) == (full, full)
    over = np.arange(float(MOST_POINTS + 1))
    assert len(_thin(over, over)[0]) < MOST_POINTS + 1


def test_a_run_without_traffic_draws_its_figures_silently(tmp_path: Any) -> None:
    """Nothing to label (no flow, no hotspot): matplotlib's warnings are not the user's business
    (they were printed by every such run); the figures are written all the same."""
    import warnings

    r = cnsim.run("zhb-og-single-hop", set={"traffic.load": 0, "hotspots": [], "duration": "2ms"})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        paths = save_figures(r, tmp_path)
    assert [p.name for p in paths] == list(cnsim.plots.FIGURES) and all(p.stat().st_size > 0 for p in paths)


def test_a_moving_hot_port_is_drawn_as_its_own_series() -> None:
    """With `metrics.hot_port = "hotspot"` (D16) the figures draw the port hot at each instant,
    its own series, as the hot port and hot queue: every recorded port was labelled "hot port"
    and the first recorded queue marked hot."""
    r = cnsim.run("zhb-sweeping-hotspot", set={"duration": "160ms"})
    assert r.scenario.resolved.hot_port == "hotspot"
    (ax,) = _throughput(r).axes
    drawn = [name for name in lines(ax) if not name.startswith("_")]
    assert drawn == ["aggregate", "hot port (the one hot at each instant)"]
    t, v = series(r, "throughput", "port:hotspot", "gbps")
    assert lines(ax)["hot port (the one hot at each instant)"].get_ydata().tolist() == v.tolist()
    (ax,) = _queue(r).axes
    hot = [line for line in ax.get_lines() if line.get_color() == "tab:red"]
    assert [line.get_label() for line in hot] == ["hot port's queue (the port hot at each instant)"]
    t, q = series(r, "queue", "hotspot", "bytes")
    assert hot[0].get_ydata().tolist() == (q / 1000.0).tolist()
