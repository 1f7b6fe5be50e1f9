"""Deck S4 — ECM vs QCN-2pt vs QCN-3pt evaluation ("Topologies & Workloads", 2007;
scenarios.md §6). One ``<id>-grid`` study (scheme x PAUSE) per eval- catalog id; the tables give
drops, throughput, % time paused and signalling overhead per scheme. Studies stay pending until
their sweep specs are shipped.
"""

from __future__ import annotations

from . import Deck, Study
from .figures import SummaryTable, TimeFigure

_TABLE = ["aggregate", "hot_port", "drops", "paused", "cm_mbps", "cm_frames", "q_mean", "jain"]


def _study(sweep: str, title: str) -> Study:
    return Study(
        sweep=sweep,
        title=title,
        figures=[
            TimeFigure(f"{sweep}-aggregate", f"{title}: aggregate throughput vs time", "aggregate"),
            TimeFigure(f"{sweep}-queue", f"{title}: hot queue length vs time", "hot_queue"),
        ],
        tables=[SummaryTable(f"{title}: drops, throughput, % time paused, signalling overhead per scheme", _TABLE)],
    )


DECK = Deck(
    name="eval",
    title="ECM vs QCN-2pt vs QCN-3pt evaluation",
    source="Deck S4: unnamed evaluation deck, Topologies & Workloads, 2007",
    studies=[
        _study("eval-baseline-grid", "Baseline"),
        _study("eval-sh-og-2g-grid", "Single hop, output-generated, 2 Gb/s hotspot"),
        _study("eval-sh-og-0.5g-grid", "Single hop, output-generated, 0.5 Gb/s hotspot"),
        _study("eval-sh-og-0g-grid", "Single hop, output-generated, 0 Gb/s hotspot"),
        _study("eval-mh-og-2g-grid", "Multi-hop, output-generated, 2 Gb/s hotspot"),
        _study("eval-mh-og-0.5g-grid", "Multi-hop, output-generated, 0.5 Gb/s hotspot"),
        _study("eval-mh-og-0g-grid", "Multi-hop, output-generated, 0 Gb/s hotspot"),
        _study("eval-fat-tree-64-grid", "4-ary 3-tree, 64 hosts"),
    ],
    quick_set={"duration": "0.2s"},
)
