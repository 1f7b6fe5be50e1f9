"""The modern comparison (issue 15; cnsim's own study): the 802.1Qau schemes against DCQCN.

No CM, ECM (the ``bcn`` preset of each entry), QCN, DCQCN (algorithms.md §7, the paper's
constants) and FECN (§6, the published pseudo-code's defaults) on the benchmark's hotspots — the ZHB single-hop and multi-hop output-generated
hotspots, both dual-congestion-point cases, the parking lot and the 2,048-host fat tree — plus
the 2-to-1 incast DCQCN was designed around (with the NIC-style ``dcqcn-nic`` preset too). Each
study: hot queue, aggregate and hot-port throughput versus time, one curve per scheme; per-flow
throughput with the max-min fair share (parking lot: also the proportional share); a summary
table. One ``modern-<id>`` sweep per entry (``python/cnsim/sweeps/``).
"""

from __future__ import annotations

from typing import Any

from . import Deck, Study
from .figures import FlowFigure, SummaryTable, TimeFigure, label_value, scheme_label

_SCHEMES = {"none": "no CM", "bcn": "ECM", "qcn": "QCN", "dcqcn": "DCQCN", "fecn": "FECN", "dcqcn-nic": "DCQCN (NIC)"}
#: the schemes of each study's sweep beyond the default four (python/cnsim/sweeps/modern-*.toml)
_QUICK_SCHEMES = {"dcqcn-incast-2to1": list(_SCHEMES)}
_TABLE = ["aggregate", "hot_port", "q_mean", "q_std", "q_max", "drops", "paused", "cm_mbps", "jain", "maxmin_err"]


def modern_label(key: str, value: Any) -> str:
    """Scheme names as the literature writes them."""
    if key == "cm.scheme":
        return scheme_label(_SCHEMES, value)
    return label_value(key, value)


def _study(base: str, title: str, text: str, *, flows: bool = True, proportional: bool = False,
           quick_set: dict[str, Any] | None = None, quick_axes: dict[str, list[Any]] | None = None) -> Study:
    sweep = f"modern-{base}"
    figures: list[Any] = [
        TimeFigure(f"{sweep}-queue", f"{title}: hot queue length vs time", "hot_queue",
                   caption="Length of the hot queue versus time, one curve per scheme; the hotspot (if any) is shaded."),
        TimeFigure(f"{sweep}-aggregate", f"{title}: aggregate throughput vs time", "aggregate",
                   caption="Aggregate throughput delivered to all nodes versus time."),
        TimeFigure(f"{sweep}-hot-port", f"{title}: hot-port throughput vs time", "hot_port",
                   caption="Throughput of the hot port versus time."),
    ]
    if flows:
        figures.append(FlowFigure(f"{sweep}-per-flow", f"{title}: per-flow throughput", proportional=proportional,
                                  caption="Mean throughput of each flow over the window, per scheme; dashed: the max-min fair share"
                                          + (", dotted: the proportionally fair share." if proportional else ".")))
    # --quick keeps every scheme (the comparison is the point); shorter runs come from quick_set
    return Study(sweep=sweep, title=title, text=text, figures=figures,
                 tables=[SummaryTable(f"{title}: window means per scheme", _TABLE, per_flow=flows)],
                 quick_set=quick_set or {}, quick_axes=quick_axes or {"cm.scheme": _QUICK_SCHEMES.get(base, list(_SCHEMES)[:5])})


#: --quick on the ZHB entries: 0.12 s with the hotspot (or the flows) at 0.02–0.10 s
_ZHB_QUICK = {"duration": "0.12s", "hotspots.0.start": "0.02s", "hotspots.0.end": "0.1s", "metrics.window": ["0.05s", "0.1s"]}
_ZHB_FLOWS_QUICK = {"duration": "0.12s", "traffic.start": "0.02s", "traffic.stop": "0.1s", "metrics.window": ["0.05s", "0.1s"]}

DECK = Deck(
    name="modern",
    title="The 802.1Qau schemes and DCQCN on the same benchmark",
    source="cnsim's own study (issue 15): DCQCN after Zhu et al., SIGCOMM 2015 (algorithms.md §7)",
    labeler=modern_label,
    studies=[
        _study("dcqcn-incast-2to1", "2-to-1 incast", "H1 and H2 at 10 Gb/s into H3: fair share 5 Gb/s each; DCQCN keeps the queue "
               "in its RED band (5–200 KB), the NIC-style preset lower.",
               quick_set={"duration": "0.05s", "metrics.window": ["0.02s", "0.05s"]}),
        _study("zhb-og-single-hop", "ZHB case 1: output-generated single-hop hotspot", "16 nodes at 85 % uniform load, node 1 drained "
               "at 20 % over {hotspot}; partitioned 600 KB/port with PAUSE.", flows=False, quick_set=_ZHB_QUICK),
        _study("zhb-og-multi-hop", "ZHB case 2: output-generated multi-hop hotspot", "Four culprits and three victims on a chain of five "
               "switches; max-min shares 0.5 and 7 Gb/s.", quick_set=_ZHB_QUICK),
        _study("zhb-dual-cp-light-heavy", "ZHB case 5: dual congestion point, light then heavy", "Max-min shares 2.5 and 7.5 Gb/s.",
               quick_set=_ZHB_FLOWS_QUICK),
        _study("zhb-dual-cp-heavy-light", "ZHB case 6: dual congestion point, heavy then light", "Max-min shares 2.5 and 7.5 Gb/s.",
               quick_set=_ZHB_FLOWS_QUICK),
        _study("qcnp-parking-lot", "Parking lot", "Hot flows 1–4 to node 9 cross two congestion points shared with cold flows: "
               "max-min 2 Gb/s per hot flow, proportional 1.67/3.33 Gb/s.", proportional=True,
               quick_set={"duration": "0.3s", "metrics.window": ["0.1s", "0.3s"]}),
        _study("scale-ft-2048", "2,048-host fat tree at 85 % uniform load", "Merged-top ZRL fat tree, d-mod-k routing; {duration} per "
               "scheme (no FECN: per-flow probes and limiters for 4 million flows).", flows=False, quick_set={"duration": "5ms", "metrics.window": ["2ms", "5ms"]},
               quick_axes={"cm.scheme": ["none", "dcqcn"]}),
    ],
)
