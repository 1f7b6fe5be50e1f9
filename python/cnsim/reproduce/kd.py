"""Deck S2 — Kwan & Ding, "Update on Effects of Delay on BCN for Symmetric Topology w/ Single Hot
Spot" (Mar 2007): BCN under control-loop delay on ``kd-symmetric-single-hs`` (scenarios.md §4).

Four studies, the rows of the deck's tables: ``kd-qeq150-delay``, ``kd-qeq150-w``,
``kd-qeq24-delay``, ``kd-qeq24-w`` (the W rows with Gd and Gi recomputed for each W, I-23), and
the W rows again with the W = 2 gains (``kd-qeq150-w-initial``, ``kd-qeq24-w-initial``), the
comparison I-23 keeps. The deck's "delay" is the control-loop delay, 2 x
``links.delay`` (the sweeps vary ``links.delay``; the legends show the loop delay). Figures as in
the slides: queue size at the CP versus time for each delay (or delay and W), throughput of the
EP4 link versus time, per-source throughput with the fair share (2.5 Gb/s) drawn in; the table
has drops, throughput and per-source throughput per row.
"""

from __future__ import annotations

from typing import Any

from ..units import parse_time
from . import Deck, Study
from .figures import FlowFigure, SummaryTable, TimeFigure, label_value


def kd_label(key: str, value: Any) -> str:
    """The deck's names: loop delay = 2 x links.delay, in microseconds."""
    if key == "links.delay":
        if value in ("", None):
            return "loop delay ="
        return f"loop delay = {2 * parse_time(value) / 1e6:g} us"
    return label_value(key, value)


_TABLE = ["aggregate", "hot_port", "q_mean", "q_std", "q_max", "drops", "cm_mbps", "jain", "maxmin_err"]


_DELAYS = ["4us", "50us", "100us", "250us"]


def _study(sweep: str, title: str, text: str) -> Study:
    return Study(
        sweep=sweep,
        title=title,
        text=text,
        quick_axes={"links.delay": _DELAYS} if sweep.endswith("-delay") else None,  # runs are cheap: keep every row
        figures=[
            TimeFigure(f"{sweep}-queue", f"{title}: queue at the CP (S1/EP4) vs time", "hot_queue",
                       caption="Queue size at the congestion point versus time, one curve per row of the deck's table."),
            TimeFigure(f"{sweep}-throughput", f"{title}: throughput of the EP4 link vs time", "hot_port",
                       caption="Throughput of the hot link (S1 to EP4) versus time; 10 Gb/s is full utilisation."),
            FlowFigure(f"{sweep}-per-source", f"{title}: per-source throughput over the window",
                       caption="Mean throughput of each source over the window; dashed: the max-min fair share (2.5 Gb/s)."),
        ],
        tables=[SummaryTable(f"{title}: drops, throughput, per-source throughput", _TABLE, per_flow=True)],
    )


DECK = Deck(
    name="kd",
    title="BCN under control-loop delay (Kwan & Ding, symmetric topology, single hotspot)",
    source="Deck S2: Kwan & Ding, Update on Effects of Delay on BCN for Symmetric Topology w/ Single Hot Spot, Mar 2007",
    studies=[
        _study("kd-qeq150-delay", "Qeq = 150 KB, W = 2", "PS-BCN-KD (Gd = 6.6667e-7, Gi = 1.3333e-3), loop delay 8, 100, 200, 500 us."),
        _study("kd-qeq150-w", "Qeq = 150 KB, larger W", "Gd and Gi recomputed for each W from the deck's formulas (scenarios.md I-23)."),
        _study("kd-qeq150-w-initial", "Qeq = 150 KB, larger W, gains of W = 2",
               "The same rows with Gd and Gi kept at their W = 2 values: the comparison I-23 asks for."),
        _study("kd-qeq24-delay", "Qeq = 24 KB, W = 2", "PS-BCN-KD recomputed at Qeq = 24 KB: Gd = 4.1667e-6, Gi = 8.3333e-3."),
        _study("kd-qeq24-w", "Qeq = 24 KB, larger W", "Gd and Gi recomputed for each W from the deck's formulas (I-23)."),
        _study("kd-qeq24-w-initial", "Qeq = 24 KB, larger W, gains of W = 2",
               "The same rows with Gd and Gi kept at their W = 2 values: the comparison I-23 asks for."),
    ],
    # quick: 100 ms instead of 200 ms (the window [20, 200] ms is clipped to [20, 100] ms)
    quick_set={"duration": "0.1s"},
    labeler=kd_label,
    notes=["Loop delay = 2 x links.delay (kd-symmetric-single-hs: one switch, five endpoints)."],
)
