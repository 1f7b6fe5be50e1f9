"""Deck S0 — Zurich Hotspot Benchmark, BCN sensitivity analysis II (Minkenberg & Gusat, Jan 2007;
scenarios.md §2).

Single-hop studies on ``zhb-og-single-hop`` (case 1 with and without BCN, and the sensitivity
sweeps over Gd, Gi, N, W, M, M = 150 KB with Psample, and the Gd × Gi grid), each with the
slides' quantities: hot queue length versus time for each parameter value, aggregate and
hot-port throughput versus time, and a summary table (throughput, hot queue, drops, % time
paused, signalling overhead). The multi-hop, dual-CP, sweeping-hotspot, IG and N = 128 cases
follow, each a grid over its own catalogue scenario (Cases 4 and 7 with the Gd0 their slide
prints, docs/decisions.md, and their no-BCN curves; the IG case with and without BCN).
"""

from __future__ import annotations

from typing import Any

from . import Deck, Study
from .figures import FlowFigure, MetricFigure, SummaryTable, TimeFigure, label_value

_TABLE = ["aggregate", "hot_port", "q_mean", "q_std", "q_max", "drops", "paused", "cm_mbps", "underrun", "jain"]


#: Case 1's single switch: the hot port and its service during the hotspot, and the aggregate's
#: offered load and max-min ideal (B1), as the figures' captions give them.
_CASE1 = ("S1/1", "2 Gb/s during the hotspot", " (offered 136 Gb/s; ideal during the hotspot 129.5 Gb/s)")


def _study(sweep: str, title: str, text: str = "", facet: str | None = None,
           where: tuple[str, str, str] = _CASE1, **kw: Any) -> Study:
    """A study's three time figures and its table; ``where`` = (hot port, its service, the
    aggregate's offered load and ideal) for the captions."""
    hot, service, aggregate = where
    figures = [
        TimeFigure(f"{sweep}-queue", f"{title}: hot queue length vs time", "hot_queue", facet=facet,
                   caption=f"Length of the hot queue ({hot}, the congestion point) versus time; the hotspot is shaded."),
        TimeFigure(f"{sweep}-aggregate", f"{title}: aggregate throughput vs time", "aggregate", facet=facet,
                   caption=f"Aggregate throughput delivered to all nodes versus time{aggregate}."),
        TimeFigure(f"{sweep}-hot-port", f"{title}: hot-port throughput vs time", "hot_port", facet=facet,
                   caption=f"Throughput of the hot port {hot} versus time ({service})."),
    ]
    extra = kw.pop("extra", [])
    return Study(sweep=sweep, title=title, text=text, figures=[*figures, *extra],
                 tables=[SummaryTable(f"{title}: summary over {{window}}", _TABLE)], **kw)


_N128 = ("S1/1", "2 Gb/s during the hotspot", " (offered 1,088 Gb/s; ideal during the hotspot 1,081.5 Gb/s)")
_SWEEPING = ("S1/n of the hotspot's node n", "2 Gb/s, the hotspot moving every 50 ms", _CASE1[2])
_IG = ("S1/1", "its 10 Gb/s link", " (ideal during the hotspot 105.8 Gb/s)")


def _unit_gd0(key: str, value: Any) -> str:
    """Labels of the studies that run the Case 4 slide's Gd0 = 1/((2W+1)Qeq) (``cm.gd0_rule =
    "unit"``, I-1), twice the Gd0 of the other studies: "Gd = 1·Gd0" would read as the same gain
    as theirs."""
    text = label_value(key, value)
    return f"{text} (unit rule)" if key == "cm.gd" and "gd0" in str(value) else text


def _flows(sweep: str) -> FlowFigure:
    return FlowFigure(f"{sweep}-per-flow", "per-flow throughput over the window",
                      caption="Per-flow throughput over the window, no BCN and BCN; dashed: the max-min fair share.")


DECK = Deck(
    name="zhb",
    title="Zurich Hotspot Benchmark: BCN sensitivity analysis",
    source="Deck S0: Minkenberg & Gusat, Zurich Hotspot Benchmark (ZHB): BCN Sensitivity Analysis II, IBM ZRL, Jan 2007",
    studies=[
        _study("zhb-og-single-hop-grid", "Case 1: output-generated single-hop hotspot", "No BCN and BCN (PS-BCN-ZHB), shared and partitioned memory.",
               facet="switch.buffer"),
        _study("zhb-og-gd-sweep", "Gd sensitivity", "Gd = m x Gd0 (Gd0 = 6.6667e-7), Gi = 6.6667e-4 fixed; shared and partitioned.",
               facet="switch.buffer",
               extra=[MetricFigure("zhb-og-gd-sweep-metrics", "Gd sensitivity: window means", "cm.gd", ["aggregate", "q_std"], legend="switch.buffer")]),
        _study("zhb-og-gi-sweep", "Gi sensitivity, fixed Gd and W", "Shared memory; Gi = m x Gd as printed and m x 400 Gd as intended (I-2)."),
        _study("zhb-og-n-sweep", "N sensitivity (partitioned memory)", "N = 8, 16, 32 nodes.",
               where=(_CASE1[0], _CASE1[1], " (ideal during the hotspot 61.5, 129.5 and 265.5 Gb/s at N = 8, 16 and 32)")),
        _study("zhb-og-w-sweep-scaled", "W sensitivity, gains scaled with 1/(2W+1)", facet="switch.buffer"),
        _study("zhb-og-w-sweep-fixed", "W sensitivity, fixed gains", facet="switch.buffer"),
        _study("zhb-og-m-sweep", "Memory size sensitivity", "M = 150 ... 1200 KB/port; Qeq = M/4 and Qeq = 150 KB (I-21).", facet="cm.qeq"),
        _study("zhb-og-m150-gd-sweep", "Gd sensitivity at M = 150 KB/port", "Qeq = 37.5 KB, Gd0 = 2.6667e-6, Gi = 400 Gd; Psample 2 % and 10 %.",
               facet="cm.ps"),
        _study("zhb-og-gi-grid", "Gi sensitivity at M = 600 KB/port", "Gd in {0.1, 1, 10} x Gd0; Gi in {1, 5, 20, 100, 500} x Gd.", facet="cm.gd"),
        # the other ZHB cases, each over its own catalogue scenario
        _study("zhb-og-n128-grid", "Case 4: high-degree single-stage hotspot (N = 128)",
               "M x Gd in {1, 2.5, 5, 10} x Gd0 with the slide's Gd0 = 1/((2W+1)Qeq) (I-1), Gi = 400 Gd.", facet="switch.memory_per_port",
               where=_N128, quick_axes={"switch.memory_per_port": ["600KB"], "cm.gd": ["2.5*gd0"]}, labeler=_unit_gd0),
        _study("zhb-og-n128-none", "Case 4 without BCN (N = 128)", "The slide's Ps = 0 % curves: no BCN, M in {150, 300, 600} KB/port.",
               where=_N128, quick_axes={"switch.memory_per_port": ["600KB"]}),
        _study("zhb-og-multi-hop-grid", "Case 2: output-generated multi-hop hotspot", extra=[_flows("zhb-og-multi-hop-grid")],
               where=("S3/7", "2 Gb/s during the hotspot", " (ideal during the hotspot 23 Gb/s: culprits 0.5, victims 7 Gb/s each)")),
        _study("zhb-og-multi-hop-bg-grid", "Case 3: multi-hop hotspot with background traffic", extra=[_flows("zhb-og-multi-hop-bg-grid")],
               where=("S3/7", "0.5 Gb/s during the hotspot", " (ideal during the hotspot 28.5 Gb/s)")),
        _study("zhb-dual-cp-light-heavy-grid", "Case 5: dual CP, light then heavy", extra=[_flows("zhb-dual-cp-light-heavy-grid")],
               where=("S2/8", "its 10 Gb/s link, shared by the four flows into node 8", "")),
        _study("zhb-dual-cp-heavy-light-grid", "Case 6: dual CP, heavy then light", extra=[_flows("zhb-dual-cp-heavy-light-grid")],
               where=("S1/S2", "its 10 Gb/s link, the first congestion point", "")),
        _study("zhb-sweeping-hotspot-grid", "Case 7: sweeping hotspot (M x Gd multipliers)",
               "Gd in {1, 2.5, 5, 10} x Gd0 with Case 4's Gd0 = 1/((2W+1)Qeq) (I-1), Gi = 400 Gd.", facet="switch.memory_per_port",
               where=_SWEEPING, quick_axes={"switch.memory_per_port": ["600KB"], "cm.gd": ["1*gd0", "10*gd0"]}, labeler=_unit_gd0),
        _study("zhb-sweeping-hotspot-none", "Case 7 without BCN", "The slide's Ps = 0 % curves: no BCN, M in {150, 300, 600} KB/port.",
               where=_SWEEPING, quick_axes={"switch.memory_per_port": ["600KB"]}),
        _study("zhb-ig-single-hop-grid", "Input-generated single-hop hotspot", "No BCN and BCN (PS-BCN-ZHB), shared and partitioned memory.",
               facet="switch.buffer", where=_IG, extra=[_flows("zhb-ig-single-hop-grid")]),
        _study("zhb-ig-gd-sweep", "Input-generated single-hop hotspot, Gd sensitivity", where=_IG),
    ],
    # quick: 0.12 s with the hotspot at 0.02–0.10 s and the window [0.05, 0.10] s (the full run is
    # 0.6 s, hotspot 0.1–0.5 s, window [0.2, 0.5] s)
    quick_set={
        "duration": "0.12s",
        "hotspots.0.start": "0.02s",
        "hotspots.0.end": "0.1s",
        "metrics.window": ["0.05s", "0.1s"],
    },
    notes=["Links 1 us (scenarios.md §2 proposal); case 1: node 1 served at 20 % during the hotspot. Full runs: hotspots and hot "
           "flows from 0.1 to 0.5 s, window [0.2, 0.5] s, for the sweeping hotspot (case 7) [0.1, 0.5] s (scenarios.md §8); the "
           "tables name their runs' window."],
)
