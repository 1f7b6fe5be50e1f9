"""Deck S1 — "Toward a Scalable and Robust QCN" (Gusat, Minkenberg, Luijten et al., Nov 2007;
scenarios.md §3): ECM vs QCN vs QCN-SONAR, and QCN+.

The studies are the sweeps of scenarios.md §8 for this deck; each stays pending until its sweep
spec and base scenario are shipped (the lead fills them in).
"""

from __future__ import annotations

from . import Deck, Study
from .figures import FlowFigure, SummaryTable, TimeFigure

_TABLE = ["aggregate", "hot_port", "q_mean", "q_std", "drops", "paused", "cm_mbps", "jain"]


def _study(sweep: str, title: str) -> Study:
    return Study(
        sweep=sweep,
        title=title,
        figures=[
            TimeFigure(f"{sweep}-queue", f"{title}: hot queue length vs time", "hot_queue"),
            TimeFigure(f"{sweep}-hot-port", f"{title}: hot-port throughput vs time", "hot_port"),
            FlowFigure(f"{sweep}-per-flow", f"{title}: per-flow throughput over the window"),
        ],
        tables=[SummaryTable(f"{title}: drops, throughput, % time paused, signalling overhead per scheme", _TABLE)],
    )


DECK = Deck(
    name="qcnp",
    title="ECM vs QCN vs QCN-SONAR, and QCN+",
    source="Deck S1: Gusat, Minkenberg, Luijten et al., Toward a Scalable and Robust QCN, Nov 2007",
    studies=[
        _study("qcnp-og-single-hop-grid", "Output-generated single hop (M/PAUSE x RTT x scheme)"),
        _study("qcnp-ig-baseline-grid", "Baseline input-generated hotspot (M/PAUSE x RTT x scheme)"),
        _study("qcnp-ig-100-sources-grid", "Input-generated hotspot, 100 sources"),
        _study("qcnp-20-stage-grid", "20-stage hotspot"),
        _study("qcnp-parking-lot-grid", "Parking lot"),
        _study("qcnp-ig-rtt-sweep", "QCN+: RTT sweep"),
        _study("qcnp-og-w-sweep", "QCN+: W sweep"),
    ],
    quick_set={"duration": "0.3s", "metrics.window": ["0.1s", "0.3s"]},
)
