"""A per-flow bar figure of many flows does not name each flow in its legend: the 100 culprits of
qcnp-ig-100-sources made a 101-entry legend that hid the bars of half the schemes."""

from __future__ import annotations

from pathlib import Path

from cnsim.reproduce.figures import MAX_FLOW_LEGEND, FlowFigure, Point, label_value


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
