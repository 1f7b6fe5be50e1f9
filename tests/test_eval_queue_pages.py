"""The eval deck's queue figures carry the deck's own unit beside KB: its figures and parameters
are unitless 64-byte pages (algorithms.md D1: ECM Qeq 375 = 24 KB, QCN Qeq 409 = 26.2 KB), so a
hot queue read off a cnsim figure in KB could not be set beside the deck's without a conversion."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from cnsim.reproduce import get_deck
from cnsim.reproduce.figures import Point, Subset, TimeFigure, label_value


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


def test_every_eval_queue_figure_has_the_pages_axis() -> None:
    figs = [f.figure if isinstance(f, Subset) else f for s in get_deck("eval").studies for f in s.figures]
    queues = [f for f in figs if isinstance(f, TimeFigure) and f.quantity == "hot_queue"]
    assert queues and all(f.pages and "64-byte pages" in f.caption for f in queues)
