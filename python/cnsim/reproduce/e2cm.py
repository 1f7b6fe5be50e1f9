"""Deck S3 — "E2CM updates" (Minkenberg & Gusat, May 2007; scenarios.md §5): E2CM (end-to-end
probing on top of ECM) with and without PAUSE.

One ``<id>-grid`` study per e2cm- catalog id: no CM / ECM / E2CM × PAUSE on/off × traffic
"Bernoulli" (TG-GEO, mean flow size 1,500 B: every flow one frame, the catalog default) and
"Bursty" (mean 60,000 B). The fat trees run ECM and E2CM again with BCN(0,0) on at 300 KB
(``<id>-bcn00-grid``), the other setting S3 names. The mixed-speed studies also run "probing only" (E2CM with its BCN
feedback off, ``cm.bcn = false``, a parameter of the e2cm scheme only, hence the separate
``<id>-probing-grid`` specs). Figures as in the slides: per-flow and per-node throughput with
the max-min fair shares, aggregate throughput and hot queue versus time, drops, completed flows
and flow completion time (FCT) per scheme and PAUSE setting.
"""

from __future__ import annotations

from typing import Any

from . import Deck, Study
from .figures import FlowFigure, MetricFigure, Subset, SummaryTable, TimeFigure, label_value, scheme_label, switch_label

_SCHEMES = {"none": "no CM", "bcn": "ECM", "e2cm": "E2CM"}
_TRAFFIC = {"1500B": "Bernoulli", "60000B": "Bursty"}


def e2cm_label(key: str, value: Any) -> str:
    """The deck's names: no CM / ECM / E2CM, PAUSE on/off, Bernoulli (mean 1,500 B) / Bursty (60,000 B)."""
    if key == "cm.scheme":
        return scheme_label(_SCHEMES, value)
    if key == "switch.pause":
        return switch_label("PAUSE", value)
    if key == "traffic.mean_size":
        return "traffic =" if value in ("", None) else _TRAFFIC.get(str(value), f"mean {value}")
    return label_value(key, value)


_TABLE = ["aggregate", "hot_port", "q_mean", "q_max", "drops", "paused", "cm_mbps", "completed", "incomplete", "fct_mean", "fct_p99", "jain",
          "maxmin_err"]


def _grid(sweep: str, title: str, text: str, per_flow: bool = True, per_node: bool = False, quick_axes: dict[str, list[Any]] | None = None,
          probing: bool = False, quick_set: dict[str, Any] | None = None) -> Study:
    what = "E2CM probing only" if probing else "no CM, ECM and E2CM"
    figures: list[Any] = [
        TimeFigure(f"{sweep}-aggregate", f"{title}: aggregate throughput vs time", "aggregate", facet="traffic.mean_size",
                   caption=f"Aggregate throughput versus time, {what} with and without PAUSE; one panel per traffic type "
                           "(sources stop at {stop}, then the network drains)."),
        TimeFigure(f"{sweep}-queue", f"{title}: hot queue vs time", "hot_queue", facet="traffic.mean_size",
                   caption="Length of the hot queue versus time; the hotspot (if any) is shaded."),
    ]
    for size, traffic in _TRAFFIC.items():
        where = {"traffic.mean_size": [size]}
        if per_flow:
            figures.append(Subset(FlowFigure(f"{sweep}-per-flow-{traffic.lower()}", f"{title}, {traffic}: per-flow throughput",
                                             caption=f"{traffic} traffic: mean throughput of each flow over the window; "
                                                     "dashed: the max-min fair share."), where))
        if per_node:
            figures.append(Subset(FlowFigure(f"{sweep}-per-node-{traffic.lower()}", f"{title}, {traffic}: per-node throughput", nodes=True,
                                             caption=f"{traffic} traffic: mean throughput delivered to each node over the window; dashed: "
                                                     "the sum of the max-min fair shares of the flows into the node."), where))
        if not probing:
            figures.append(Subset(MetricFigure(f"{sweep}-summary-{traffic.lower()}", f"{title}, {traffic}: drops, completed flows, FCT",
                                               "cm.scheme", ["drops", "completed", "fct_mean", "aggregate"], legend="switch.pause",
                                               caption=f"{traffic} traffic: frame drops, completed flows, mean flow completion time and "
                                                       "aggregate throughput per scheme, with and without PAUSE."), where))
    return Study(sweep=sweep, title=title, text=text, figures=figures,
                 tables=[SummaryTable(f"{title}: throughput, drops, completed flows and FCT per scheme, PAUSE setting and traffic", _TABLE,
                                      per_flow=per_flow)],
                 quick_axes=quick_axes if quick_axes is not None else ({} if probing else {"cm.scheme": ["none", "e2cm"]}),
                 quick_set=quick_set or {})


#: --quick on the fat trees (the largest networks of the deck): sources stop at 0.15 s, cap 0.2 s
_FT_QUICK = {"traffic.stop": "0.15s", "duration": "0.2s"}


DECK = Deck(
    name="e2cm",
    title="E2CM: end-to-end probing on top of ECM",
    source="Deck S3: Minkenberg & Gusat, E2CM updates, May 29 2007",
    studies=[
        _grid("e2cm-non-cm-domain-grid", "Managing across a non-CM domain",
              "Hot flows 1-4 -> 6 and the lukewarm 5 -> 7 (10 Gb/s each) share S4 -> S5 inside the legacy (non-CM) bridge S4: max-min "
              "2.0 Gb/s each; only E2CM probes can see that hotspot. The five sources offer 50 Gb/s until {stop} to one 10 Gb/s "
              "link, five times what it carries: with the cap at {duration} most flows are still incomplete when the run ends, so "
              "completed flows and FCT here cover the flows that finished by then (cnsim check e2cm runs the full case with a cap "
              "every flow finishes by; docs/decisions.md).", per_node=True),
        _grid("e2cm-fat-tree-16-grid", "Fat tree, 16 nodes",
              "Radix-4 merged-top fat tree; 50 % uniform TG-GEO load; node 1 served at 10 % over {hotspot}.", per_flow=False,
              quick_set=_FT_QUICK),
        _grid("e2cm-fat-tree-32-grid", "Fat tree, 32 nodes",
              "Radix-4 merged-top fat tree; 50 % uniform TG-GEO load; node 1 served at 10 % over {hotspot}.", per_flow=False,
              quick_axes={"cm.scheme": ["none", "e2cm"], "switch.pause": [True]}, quick_set=_FT_QUICK),
        _grid("e2cm-fat-tree-16-bcn00-grid", "Fat tree, 16 nodes, BCN(0,0) on",
              "The same with BCN(0,0) on at 300 KB (S3 runs the fat trees with it on and off): ECM and E2CM.", per_flow=False,
              quick_axes={"cm.scheme": ["e2cm"], "switch.pause": [True]}, quick_set=_FT_QUICK),
        _grid("e2cm-fat-tree-32-bcn00-grid", "Fat tree, 32 nodes, BCN(0,0) on",
              "The same with BCN(0,0) on at 300 KB: ECM and E2CM.", per_flow=False,
              quick_axes={"cm.scheme": ["e2cm"], "switch.pause": [True]}, quick_set=_FT_QUICK),
        _grid("e2cm-mixed-speed-og-grid", "Mixed speed, output-generated",
              "Ten 0.5 Gb/s hot flows 1..10 -> 11 (node 11 served at 10 % over {hotspot}); node 11 sends 5 Gb/s back; stated max-min "
              "0.1 Gb/s per hot flow.", per_node=True),
        _grid("e2cm-mixed-speed-og-probing-grid", "Mixed speed, output-generated: probing only",
              "E2CM with BCN feedback off (cm.bcn = false): rate limiters driven by the probes alone.", per_node=True, probing=True),
        _grid("e2cm-mixed-speed-ig-grid", "Mixed speed, input-generated",
              "11 -> 1 at 5 Gb/s into node 1's 1 Gb/s link; nodes 1-10 send 0.5 Gb/s uniformly; stated max-min 62.5 MB/s for 11 -> 1 "
              "(water-filling: 68.75 MB/s, I-10).", per_node=True),
        _grid("e2cm-mixed-speed-ig-probing-grid", "Mixed speed, input-generated: probing only",
              "E2CM with BCN feedback off (cm.bcn = false).", per_node=True, probing=True),
    ],
    # quick: sources stop at 0.2 s and the run is capped at 0.3 s (full: stop 1.0 s, cap 2.0 s)
    quick_set={"traffic.stop": "0.2s", "duration": "0.3s"},
    labeler=e2cm_label,
    notes=["Traffic TG-GEO: 'Bernoulli' = mean flow size 1,500 B (every flow one frame), 'Bursty' = mean 60,000 B; in the full runs "
           "sources stop at 1.0 s and the run continues until every frame is delivered (hard cap 2.0 s).",
           "PAUSE on/off is the switches' PAUSE (141.5/131.5 KB per input in the fat trees and the non-CM domain; the mixed-speed "
           "switches' shared memory pauses at the sum over their ports, scenarios.md §1.1); the adapters' egress PAUSE stays on (S3)."],
)
