"""Deck S3 — "E2CM updates" (Minkenberg & Gusat, May 2007; scenarios.md §5): ECM vs E2CM with
and without PAUSE. One ``<id>-grid`` study (scheme x PAUSE) per e2cm- catalog id, pending until
the sweep spec and base scenario are shipped.
"""

from __future__ import annotations

from . import Deck, Study
from .figures import FlowFigure, SummaryTable, TimeFigure

_TABLE = ["aggregate", "hot_port", "q_mean", "drops", "paused", "cm_mbps", "jain", "maxmin_err"]


def _study(sweep: str, title: str) -> Study:
    return Study(
        sweep=sweep,
        title=title,
        figures=[
            TimeFigure(f"{sweep}-aggregate", f"{title}: aggregate throughput vs time", "aggregate"),
            TimeFigure(f"{sweep}-hot-port", f"{title}: hot-port throughput vs time", "hot_port"),
            FlowFigure(f"{sweep}-per-flow", f"{title}: per-flow throughput with the max-min fair share"),
        ],
        tables=[SummaryTable(f"{title}: per scheme and PAUSE setting", _TABLE)],
    )


DECK = Deck(
    name="e2cm",
    title="E2CM: end-to-end probing on top of ECM",
    source="Deck S3: Minkenberg & Gusat, E2CM updates, May 29 2007",
    studies=[
        _study("e2cm-non-cm-domain-grid", "Managing across a non-CM domain"),
        _study("e2cm-fat-tree-16-grid", "Fat tree, 16 nodes"),
        _study("e2cm-fat-tree-32-grid", "Fat tree, 32 nodes"),
        _study("e2cm-mixed-speed-og-grid", "Mixed speed, output-generated"),
        _study("e2cm-mixed-speed-ig-grid", "Mixed speed, input-generated"),
    ],
    quick_set={"traffic.stop": "0.2s", "duration": "0.3s"},
)
