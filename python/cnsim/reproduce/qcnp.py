"""Deck S1 — "Toward a Scalable and Robust QCN" (Gusat, Minkenberg, Luijten et al., Nov 2007;
scenarios.md §3): ECM vs QCN vs QCN-SONAR, and QCN+.

Part one, one ``<id>-grid`` study per catalog id (qcnp-og-single-hop, qcnp-ig-baseline,
qcnp-ig-100-sources, qcnp-20-stage, qcnp-parking-lot): the M/PAUSE variants {M = 150 KB, PAUSE
off} and {M = 1.5 MB, PAUSE on} × the "RTT" label (the one-way link delay, I-14) × ECM-Q / QCN /
QCN-SONAR. Figures as in the slides, one set per M/PAUSE variant: hot queue, aggregate and
hot-port throughput versus time (one panel per RTT, one curve per scheme); frame drops,
throughput and underrun versus RTT; per-flow throughput at the smallest RTT with the max-min
fair share (parking lot: also the proportional share 1.67/3.33 Gb/s). The backup slides'
drift off beside on (``qcnp-og-drift``).

Part two (QCN+): ``qcnp-ig-rtt-sweep`` (PS-QCNP-RTT on the IG baseline: hot queue and hot-port
throughput versus RTT per scheme and W), ``qcnp-ig-rtt-ps`` (QCN at 500 us against the sampling
rate), ``qcnp-og-w-sweep`` (QCN on the OG hotspot over W) and
``qcnp-og-00-rtt-sweep`` (QCN on the OG hotspot with and without (0,0) over RTT).
"""

from __future__ import annotations

from typing import Any

from ..units import parse_time
from . import Deck, Study
from .figures import FlowFigure, MetricFigure, Subset, SummaryTable, TimeFigure, label_value, scheme_label, switch_label

_SCHEMES = {"none": "no CM", "bcn": "ECM-Q", "qcn": "QCN", "qcn-sonar": "QCN-SONAR", "qcn-plus": "QCN+"}


def _us(value: Any) -> str:
    us = parse_time(value) / 1e6 if isinstance(value, str) else float(value) * 1e6
    return f"{us / 1000:g} ms" if us >= 1000 else f"{us:g} us"


def qcnp_label(key: str, value: Any) -> str:
    """The deck's names: ECM-Q / QCN / QCN-SONAR / QCN+, "RTT" (the one-way link delay), PAUSE on/off."""
    if key == "cm.scheme":
        return scheme_label(_SCHEMES, value)
    if key == "links.delay":
        return "RTT =" if value in ("", None) else f"RTT = {_us(value)}"
    if key == "switch.pause":
        return switch_label("PAUSE", value)
    if key == "switch.memory_per_port":
        return "M =" if value in ("", None) else f"M = {value}"
    if key == "cm.bcn00":
        return "(0,0) =" if value in ("", None) else ("with (0,0)" if value else "without (0,0)")
    return label_value(key, value)


_TABLE = ["aggregate", "hot_port", "q_mean", "q_std", "q_max", "drops", "paused", "cm_mbps", "underrun", "jain"]

#: the x axis of a figure against links.delay: the legends and panels keep the deck's "RTT = 5 us",
#: but an axis titled "RTT" alone reads as a round trip, and the label is one way (I-14)
_RTT_AXIS = "RTT label = one-way link delay d (single-hop loop 2d)"

#: the M/PAUSE variants of part one (zipped in the grid specs)
_VARIANTS = [("m150", "150KB", False, "M = 150 KB, PAUSE off"), ("m1500-pause", "1.5MB", True, "M = 1.5 MB, PAUSE on")]


def _grid(sweep: str, title: str, text: str, rtts: list[str], proportional: bool = False, hot: str = "hot queue",
          quick_rtts: list[str] | None = None, quick_set: dict[str, Any] | None = None) -> Study:
    figures: list[Any] = []
    for tag, m, pause, vtitle in _VARIANTS:
        where: dict[str, list[Any]] = {"switch.memory_per_port": [m], "switch.pause": [pause]}
        figures += [
            Subset(TimeFigure(f"{sweep}-queue-{tag}", f"{title}, {vtitle}: {hot} length vs time", "hot_queue", facet="links.delay",
                              caption=f"{vtitle}. Length of the {hot} versus time, one panel per RTT label, one curve per scheme; "
                                      "the hotspot is shaded."), where),
            Subset(TimeFigure(f"{sweep}-aggregate-{tag}", f"{title}, {vtitle}: aggregate throughput vs time", "aggregate",
                              facet="links.delay", caption=f"{vtitle}. Aggregate throughput delivered to all nodes versus time."), where),
            Subset(TimeFigure(f"{sweep}-hot-port-{tag}", f"{title}, {vtitle}: hot-port throughput vs time", "hot_port",
                              facet="links.delay", caption=f"{vtitle}. Throughput of the hot port versus time."), where),
            Subset(MetricFigure(f"{sweep}-vs-rtt-{tag}", f"{title}, {vtitle}: drops, throughput and underrun vs RTT", "links.delay",
                                ["drops", "aggregate", "hot_port", "underrun"], legend="cm.scheme", xlabel=_RTT_AXIS,
                                caption=f"{vtitle}. Frame drops, aggregate and hot-port throughput and hot-port underrun over the "
                                        "window, per scheme, versus the RTT label."), where),
        ]
    share = "max-min fair share (dashed) and proportional share (dotted, 1.67 / 3.33 Gb/s)" if proportional else "max-min fair share (dashed)"
    figures.append(Subset(FlowFigure(f"{sweep}-per-flow", f"{title}: per-flow throughput at RTT = {_us(rtts[0])}", proportional=proportional,
                                     caption=f"Mean throughput of each flow over the window at the smallest RTT label, per scheme and "
                                             f"M/PAUSE variant; {share}."), {"links.delay": [rtts[0]]}))
    return Study(
        sweep=sweep,
        title=title,
        text=text,
        figures=figures,
        tables=[SummaryTable(f"{title}: drops, throughput, % time paused, signalling overhead per scheme", _TABLE, per_flow=proportional)],
        # quick: the M = 150 KB / PAUSE off variant, the smallest and largest RTT, every scheme
        quick_axes={"switch.memory_per_port": ["150KB"], "switch.pause": [False], "links.delay": quick_rtts or [rtts[0], rtts[-1]]},
        quick_set=quick_set or {},
    )


def _rtt_sweep() -> Study:
    sweep = "qcnp-ig-rtt-sweep"
    figures: list[Any] = []
    for scheme, name in (("qcn", "QCN"), ("bcn", "ECM-Q"), ("qcn-plus", "QCN+")):
        where = {"cm.scheme": [scheme]}
        figures += [
            Subset(MetricFigure(f"{sweep}-{scheme}-vs-rtt", f"{name}: hot queue and hot-port throughput vs link RTT", "links.delay",
                                ["q_mean", "q_std", "hot_port"], legend="cm.w", xlabel=_RTT_AXIS,
                                caption=f"{name} (PS-QCNP-RTT): mean and standard deviation of the hot queue and hot-port throughput "
                                        "over the window versus the link RTT label (RP<->CP loop = 2 x), one curve per W."), where),
            Subset(TimeFigure(f"{sweep}-{scheme}-queue", f"{name}: hot queue vs time per link RTT", "hot_queue", facet="links.delay",
                              caption=f"{name}: hot queue (S1/6) versus time, one panel per link RTT, one curve per W; "
                                      "Qeq = 375 KB."), where),
        ]
    figures.append(Subset(TimeFigure(f"{sweep}-hot-port-w2", "W = 2: hot-port throughput vs time per link RTT", "hot_port",
                                     facet="links.delay", caption="Hot-port throughput versus time at W = 2, one curve per scheme."),
                          {"cm.w": [2.0]}))
    return Study(
        sweep=sweep,
        title="QCN+: RTT sweep on the IG baseline (PS-QCNP-RTT)",
        text="M = 1.5 MB/port (Qeq = M/4 = 375 KB, Qmc = 1.5 MB), PAUSE off, unlimited input buffers; hotspot {hotspot}; "
             "link RTT label d in {2, 20, 50, 200, 500 us, 1 ms} (one-way link delay, loop 2d); W in {2, 8, 32}; "
             "ECM-Q (Ps 1 %), QCN (Ps 1-10 %), QCN+.",
        figures=figures,
        tables=[SummaryTable("RTT sweep: hot queue and hot-port throughput per scheme, W and RTT",
                             ["hot_port", "aggregate", "q_mean", "q_std", "q_max", "drops", "cm_mbps", "underrun"])],
        quick_axes={"cm.w": [2.0, 32.0], "links.delay": ["2us", "200us", "1ms"]},
    )


def _w_sweep() -> Study:
    sweep = "qcnp-og-w-sweep"
    return Study(
        sweep=sweep,
        title="QCN+: W sweep on the OG single hop",
        text="QCN (PS-QCNP) on qcnp-og-single-hop (node 1 at 10 %, degree 10, M = 150 KB, PAUSE off, RTT label 5 us) over W: "
             "the slide 'W requirements conflict between IG and OG'.",
        figures=[
            TimeFigure(f"{sweep}-queue", "QCN on the OG hotspot: hot queue vs time per W", "hot_queue",
                       caption="Hot queue (S1/1) versus time, one curve per W."),
            TimeFigure(f"{sweep}-hot-port", "QCN on the OG hotspot: hot-port throughput vs time per W", "hot_port",
                       caption="Hot-port throughput versus time (1 Gb/s service during the hotspot)."),
            MetricFigure(f"{sweep}-metrics", "QCN on the OG hotspot: window means vs W", "cm.w", ["q_mean", "q_std", "hot_port", "aggregate"],
                         caption="Hot queue mean and standard deviation, hot-port and aggregate throughput over the window versus W."),
        ],
        tables=[SummaryTable("W sweep: queue and throughput per W", _TABLE)],
    )


def _00_rtt_sweep() -> Study:
    sweep = "qcnp-og-00-rtt-sweep"
    return Study(
        sweep=sweep,
        title="QCN+: QCN with and without (0,0) over RTT on the OG single hop",
        text="QCN (PS-QCNP, Psample_base 1 %) on qcnp-og-single-hop (node 1 at 10 %, degree 10, M = 150 KB, PAUSE off) "
             "with and without (0,0) (a sample at q >= Qsc = 300 KB stops the source for U(0, 1 ms); it resumes at half its "
             "rate) over the RTT label: the RTT half of the slide 'W requirements conflict between IG and OG'.",
        figures=[
            TimeFigure(f"{sweep}-queue", "QCN on the OG hotspot: hot queue vs time with and without (0,0)", "hot_queue",
                       facet="links.delay", caption="Hot queue (S1/1) versus time, one panel per RTT label, with and without (0,0)."),
            TimeFigure(f"{sweep}-hot-port", "QCN on the OG hotspot: hot-port throughput vs time with and without (0,0)", "hot_port",
                       facet="links.delay", caption="Hot-port throughput versus time (1 Gb/s service during the hotspot)."),
            MetricFigure(f"{sweep}-metrics", "QCN on the OG hotspot: window means vs RTT with and without (0,0)", "links.delay",
                         ["q_mean", "q_std", "hot_port", "drops"], legend="cm.bcn00", xlabel=_RTT_AXIS,
                         caption="Hot queue mean and standard deviation, hot-port throughput and drops over the window versus "
                                 "the RTT label."),
        ],
        tables=[SummaryTable("(0,0) over RTT: queue, throughput and drops", _TABLE)],
    )


def _drift() -> Study:
    sweep = "qcnp-og-drift"
    return Study(
        sweep=sweep,
        title="Output-generated single hop: QCN and QCN-SONAR with and without drift",
        text="The backup slides: drift on (PS-QCNP, 4 Mb/s per 20 ms) and off, M = 150 KB without PAUSE and 1.5 MB with it; "
             "RTT label 5 us; node 1 served at 10 % (1 Gb/s) over {hotspot}.",
        figures=[
            TimeFigure(f"{sweep}-hot-port", "Drift on and off: hot-port throughput vs time", "hot_port", facet="switch.memory_per_port",
                       caption="Hot-port throughput versus time, one panel per memory (150 KB without PAUSE, 1.5 MB with it), one curve "
                               "per scheme and drift; after the hotspot ({hotspot}) the drift adds to the limiters' own climb back "
                               "(without it the former hot port reaches 8 Gb/s about 30 ms later)."),
            TimeFigure(f"{sweep}-queue", "Drift on and off: hot queue vs time", "hot_queue", facet="switch.memory_per_port",
                       caption="Hot queue (S1/1) versus time, one panel per memory, one curve per scheme and drift."),
        ],
        tables=[SummaryTable("Drift on and off: throughput, queue and drops", _TABLE)],
        quick_axes={"switch.memory_per_port": ["150KB"], "switch.pause": [False]},
    )


def _rtt_ps() -> Study:
    sweep = "qcnp-ig-rtt-ps"
    return Study(
        sweep=sweep,
        title="QCN+: QCN at a 500 us RTT label against the sampling rate",
        text="PS-QCNP-RTT (M = 1.5 MB, Qeq = 375 KB, PAUSE off, unlimited input buffers) on the IG baseline at link RTT label 500 us; "
             "QCN sampling every frame with a fixed probability Ps of 1, 2, 5 or 10 % (byte cycle 1500 B / Ps).",
        figures=[
            TimeFigure(f"{sweep}-queue", "QCN at 500 us: hot queue vs time per sampling rate", "hot_queue",
                       caption="Hot queue (S1/6) versus time, one curve per sampling probability; Qeq = 375 KB."),
            MetricFigure(f"{sweep}-metrics", "QCN at 500 us: window means vs sampling rate", "cm.ps", ["q_mean", "q_std", "hot_port"],
                         caption="Hot queue mean and standard deviation and hot-port throughput over the window versus the sampling "
                                 "probability: raising it does not calm the long-delay loop."),
        ],
        tables=[SummaryTable("QCN at 500 us: queue and throughput per sampling rate", _TABLE)],
        quick_axes={"cm.ps": [0.01, 0.1]},
    )


DECK = Deck(
    name="qcnp",
    title="ECM vs QCN vs QCN-SONAR, and QCN+",
    source="Deck S1: Gusat, Minkenberg, Luijten et al., Toward a Scalable and Robust QCN, Nov 2007",
    studies=[
        _grid("qcnp-og-single-hop-grid", "Output-generated single hop",
              "One switch, N = 11, every node 85 % uniform, node 1 served at 10 % (1 Gb/s) over {hotspot}.", ["5us", "50us", "500us"]),
        _grid("qcnp-ig-baseline-grid", "Baseline input-generated hotspot",
              "Culprits 2-5 -> 6 at 5 Gb/s each ({hotspot}), victim 1 -> 7 at 5 Gb/s: fair 2.5 Gb/s per culprit, 5 Gb/s victim.",
              ["5us", "50us", "500us"]),
        _grid("qcnp-ig-100-sources-grid", "Input-generated hotspot, 100 sources",
              "100 culprits 2-101 at 5 Gb/s to node 102 ({hotspot}), victim 1 -> 103; OQ limit 1.5 MB.", ["5us", "50us", "500us"]),
        _grid("qcnp-20-stage-grid", "20-stage hotspot",
              "20-switch chain, 21 flows into node 59 (I-11, literal rules); per-hop RTT label {2, 20} us as stated for this study.",
              ["2us", "20us"], hot="hotspot queue (S19/59)",
              quick_rtts=["2us"], quick_set={"duration": "0.2s"}),  # the largest network of the deck: 60 nodes at 100 % load
        _grid("qcnp-parking-lot-grid", "Parking lot",
              "Hot flows 1-4 -> 9 cross both CPs (S1->S2, S2->S3), each shared with a cold 10 Gb/s flow; max-min 2.0 Gb/s for all, "
              "proportional 1.67 (hot) / 3.33 (cold) Gb/s. The figures show the first CP (S1/S2); the second CP queue (S2/S3) is in every run's series.",
              ["5us", "50us", "500us"], proportional=True, hot="first CP queue (S1/S2)"),
        _drift(),
        _rtt_sweep(),
        _rtt_ps(),
        _w_sweep(),
        _00_rtt_sweep(),
    ],
    # quick: 0.3 s (the hotspot 0.1-1.0 s is clipped; window [0.1, 0.3] s) instead of 2 s
    quick_set={"duration": "0.3s", "metrics.window": ["0.1s", "0.3s"]},
    labeler=qcnp_label,
    notes=["The deck's 'RTT' label is the one-way link delay d (I-14): the single-hop RP<->CP loop is 2d.",
           "Full runs: 2 s, hotspot 0.1-1.0 s, window [0.1, 1.0] s (scenarios.md §3 proposals); the study texts and tables give "
           "their runs' own times."],
)
