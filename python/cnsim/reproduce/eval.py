"""Deck S4 — ECM vs QCN-2pt vs QCN-3pt evaluation ("Topologies & Workloads", 2007;
scenarios.md §6).

One ``<id>-grid`` study (no CM / ECM / QCN-2pt / QCN-3pt × PAUSE on/off) per eval- catalog id.
Each hotspot severity gets the deck's table — aggregate throughput, frames dropped, % time
paused, signalling overhead, hot-queue mean and bottleneck utilisation per scheme, with and
without PAUSE (averaged over the whole run, like the deck) — and the hot-port queue and
aggregate throughput versus time per scheme. The baseline adds the hot-port queue of QCN-2pt and
QCN-3pt with and without extra fast recovery (``eval-baseline-efr``; ``cm.efr`` is a QCN
parameter, hence a spec of its own) and QCN-2pt with byte- and packet-based sampling
(``eval-baseline-sampling``); the fat tree runs its 2 Gb/s hotspot with and without PAUSE and its
0.5 Gb/s hotspot without PAUSE (``eval-fat-tree-64-0.5g``), the two cases the deck shows.
"""

from __future__ import annotations

from typing import Any

from . import Deck, Study
from .figures import MetricFigure, SummaryTable, TimeFigure, label_value, scheme_label, switch_label

_SCHEMES = {"none": "no CM", "bcn": "ECM", "qcn": "QCN-2pt", "qcn3pt": "QCN-3pt"}
_SWITCHES = {"switch.pause": "PAUSE", "cm.efr": "EFR"}


def eval_label(key: str, value: Any) -> str:
    """The deck's names: NOCM / ECM / QCN-2pt / QCN-3pt, PAUSE on/off, EFR on/off."""
    if key == "cm.scheme":
        return scheme_label(_SCHEMES, value)
    if key in _SWITCHES:
        return switch_label(_SWITCHES[key], value)
    return label_value(key, value)


_TABLE = ["aggregate", "drops", "paused", "cm_mbps", "cm_frames", "q_mean", "util", "hot_port", "jain"]

#: the deck drew its queues without a unit, in 64-byte pages (algorithms.md D1)
_PAGES = ("Left axis KB (1000 B), right axis 64-byte pages, the deck's own unit (D1: ECM Qeq 375 pages = 24 KB, "
          "QCN Qeq 409 pages = 26.2 KB).")


def _grid(sweep: str, title: str, text: str = "", quick_axes: dict[str, list[Any]] | None = None,
          quick_set: dict[str, Any] | None = None, pause: bool | None = None, hotspot: bool = True) -> Study:
    """A scheme grid; ``pause`` None when the sweep runs PAUSE on and off (a panel each), else the
    one setting its spec fixes (no PAUSE panel or legend: a key the sweep does not vary would
    label them "PAUSE =")."""
    facet = "switch.pause" if pause is None else None
    setting = ", with and without PAUSE" if pause is None else f", PAUSE {'on' if pause else 'off'}"
    return Study(
        sweep=sweep,
        title=title,
        text=text,
        figures=[
            TimeFigure(f"{sweep}-queue", f"{title}: hot-port queue vs time", "hot_queue", facet=facet, pages=True,
                       caption=f"Length of the hot-port queue versus time, one curve per scheme{setting}"
                               f"{'; the hotspot is shaded' if hotspot else ''}. {_PAGES}"),
            TimeFigure(f"{sweep}-aggregate", f"{title}: aggregate throughput vs time", "aggregate", facet=facet,
                       caption=f"Aggregate throughput versus time, one curve per scheme{setting}."),
            MetricFigure(f"{sweep}-table", f"{title}: tier-1 metrics per scheme", "cm.scheme", ["aggregate", "drops", "paused", "cm_mbps"],
                         legend=facet,
                         caption=f"Aggregate throughput, frames dropped, % time paused and signalling overhead per scheme{setting} "
                                 "(whole-run averages; without PAUSE nothing is retransmitted, so throughput is overstated)."),
        ],
        tables=[SummaryTable(f"{title}: drops, throughput, % time paused, signalling overhead per scheme", _TABLE)],
        quick_axes=quick_axes or {"cm.scheme": list(_SCHEMES)},  # every scheme, also in --quick
        quick_set=quick_set or {},
    )


def _baseline(sweep: str, title: str, text: str, curves: str) -> Study:
    """A study of QCN on the baseline: its hot-port queue per variant and a table."""
    return Study(
        sweep=sweep,
        title=f"Baseline: {title}",
        text=text,
        figures=[TimeFigure(f"{sweep}-queue", f"Baseline: hot-port queue, {title}", "hot_queue", pages=True,
                            caption=f"Hot-port queue (S1/H5) versus time for {curves}. {_PAGES}")],
        tables=[SummaryTable(f"Baseline: {title}", ["aggregate", "hot_port", "q_mean", "q_std", "q_max", "drops", "paused", "cm_mbps",
                                                    "jain"])],
        quick_set={"duration": "0.1s"},
    )


def _efr() -> Study:
    return _baseline("eval-baseline-efr", "QCN with and without EFR",
                     "QCN-2pt and QCN-3pt (PS-EVAL-QCN) with extra fast recovery on (the preset) and off; PAUSE on.",
                     "QCN-2pt and QCN-3pt with and without EFR")


def _sampling() -> Study:
    return _baseline("eval-baseline-sampling", "QCN-2pt with byte- and packet-based sampling",
                     "QCN-2pt (PS-EVAL-QCN) sampling by byte intervals (§5.2's table) and per frame (the preset's Fb-dependent "
                     "probability); PAUSE on.",
                     "QCN-2pt with byte-based (table) and packet-based (linear) sampling")


# quick for the largest network of the deck: 0.1 s, the hotspot at 0.03-0.08 s
_FAT_TREE_QUICK = {"duration": "0.1s", "hotspots.0.start": "0.03s", "hotspots.0.end": "0.08s", "metrics.window": ["0s", "0.1s"]}

_SH = "One bridge, H0..H9 at 85 % uniform; H0's service drops to {rate} over {{hotspot}} (hotspot degree 9, severity {sev})."
_MH = ("5-switch chain, H1-H6 at 25 %, H7-H10 at 40 % uniform; H6 served at {rate} over {{hotspot}} (degree 9, severity {sev}; "
       "the four chain queues toward S4 are recorded; the CP is H6's egress, switch.cp_ports).")

DECK = Deck(
    name="eval",
    title="ECM vs QCN-2pt vs QCN-3pt evaluation",
    source="Deck S4: unnamed evaluation deck, Topologies & Workloads, 2007",
    studies=[
        _grid("eval-baseline-grid", "Baseline", "H1-H4 at 5 Gb/s each to H5 through one bridge (2:1 overload); {duration}; window {window}.",
              quick_set={"duration": "0.1s"}, hotspot=False),
        _efr(),
        _sampling(),
        _grid("eval-sh-og-2g-grid", "Single hop, output-generated, 2 Gb/s hotspot", _SH.format(rate="2 Gb/s", sev="4.25:1")),
        _grid("eval-sh-og-0.5g-grid", "Single hop, output-generated, 0.5 Gb/s hotspot", _SH.format(rate="0.5 Gb/s", sev="17:1")),
        _grid("eval-sh-og-0g-grid", "Single hop, output-generated, 0 Gb/s hotspot", _SH.format(rate="0 Gb/s", sev="inf")),
        _grid("eval-mh-og-2g-grid", "Multi-hop, output-generated, 2 Gb/s hotspot", _MH.format(rate="2 Gb/s", sev="1.58:1")),
        _grid("eval-mh-og-0.5g-grid", "Multi-hop, output-generated, 0.5 Gb/s hotspot", _MH.format(rate="0.5 Gb/s", sev="6.33:1")),
        _grid("eval-mh-og-0g-grid", "Multi-hop, output-generated, 0 Gb/s hotspot", _MH.format(rate="0 Gb/s", sev="inf")),
        _grid("eval-fat-tree-64-grid", "4-ary 3-tree, 64 hosts, 2 Gb/s hotspot",
              "48 switches (radix 8), D-mod-k routing; 85 % uniform; host 0 served at 2 Gb/s over {hotspot} (degree 63, severity 4.25:1).",
              # quick: two schemes, PAUSE on
              quick_axes={"cm.scheme": ["none", "qcn"], "switch.pause": [True]},
              quick_set=_FAT_TREE_QUICK),
        _grid("eval-fat-tree-64-0.5g", "4-ary 3-tree, 64 hosts, 0.5 Gb/s hotspot without PAUSE",
              "As the 2 Gb/s study, host 0 served at 0.5 Gb/s over {hotspot} (severity 17:1), PAUSE off: the deck's second fat-tree case.",
              quick_axes={"cm.scheme": ["none", "qcn"]}, quick_set=_FAT_TREE_QUICK, pause=False),
    ],
    # quick: 0.2 s with the hotspot at 0.05-0.15 s (full: 1.0 s, hotspot 0.1-0.5 s, whole-run averages)
    quick_set={"duration": "0.2s", "hotspots.0.start": "0.05s", "hotspots.0.end": "0.15s", "metrics.window": ["0s", "0.2s"]},
    labeler=eval_label,
    notes=["CN-SIM bridge: 150 KB per input, PAUSE 130/110 KB; NIC (AD-CNSIM): per-destination VOQs that never block one "
           "another, the 150 KB NIC buffer is the PAUSE-able output buffer (scenarios.md §1.2, docs/decisions.md); "
           "links 0.5 us, bridge and NIC processing 1 us each. Table averages over the whole run, like the deck."],
)
