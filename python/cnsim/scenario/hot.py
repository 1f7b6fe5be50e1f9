"""What is hot in a scenario: the hotspot span and the named windows of targets.md §A, and the
nodes whose incoming flows are *hot* (summary.json's ``fct_ms.hot``, docs/metrics.md)."""

from __future__ import annotations

from ..topology import Network
from .schema import ScenarioDoc

__all__ = ["RECOVERY_PS", "SETTLE_PS", "TRANSIENT_PS", "hot_nodes", "hot_span_ps", "named_windows_ps"]


#: §A: W_ss starts this long after the hotspot, W_tr lasts this long from it, W_rec this long after it
SETTLE_PS, TRANSIENT_PS, RECOVERY_PS = 100 * 10**9, 50 * 10**9, 100 * 10**9


def hot_span_ps(doc: ScenarioDoc) -> tuple[int | None, int | None]:
    """(t_on, t_off) of targets.md §A in ps: the hotspots' span, else the span of time-limited
    offered traffic (named flows with a start, or the traffic's start and stop); ``None`` where
    the scenario has none."""
    if doc.hotspots:
        return min(h.start for h in doc.hotspots), max(h.end for h in doc.hotspots)
    starts = [f.start for f in doc.traffic.flows if f.start]
    stops = [f.stop for f in doc.traffic.flows if f.stop is not None]
    if starts:
        return min(starts), (max(stops) if stops else None)
    if doc.traffic.start:
        return doc.traffic.start, doc.traffic.stop
    return None, None


def named_windows_ps(doc: ScenarioDoc) -> dict[str, tuple[int, int]]:
    """The named windows of §A, clipped to the run: ``all`` = the run; with a hotspot (or a
    time-limited overload) [t_on, t_off], also ``ss`` = [t_on + 100 ms, t_off], ``tr`` =
    [t_on, t_on + 50 ms] and ``rec`` = [t_off, t_off + 100 ms]. A window empty after clipping
    is left out."""
    dur = doc.duration
    out = {"all": (0, dur)}
    t_on, t_off = hot_span_ps(doc)
    if t_on is None:
        return out
    end = dur if t_off is None else min(t_off, dur)
    for name, (a, b) in {
        "ss": (t_on + SETTLE_PS, end),
        "tr": (t_on, t_on + TRANSIENT_PS),
        "rec": (end, end + RECOVERY_PS),
    }.items():
        a, b = min(a, dur), min(b, dur)
        if b > a:
            out[name] = (a, b)
    return out


def hot_nodes(doc: ScenarioDoc, nodes: list[str], net: Network | None, hot_node: str | None) -> list[str]:
    """Nodes whose incoming flows are hot: each hotspot's node, the node behind the hot port, and
    every node offered more than its link rate (an input-generated hotspot: the uniform sources'
    share plus the named flows into it). Linear in the nodes and flows."""
    hot = {h.node for h in doc.hotspots}
    if hot_node is not None:
        hot.add(hot_node)
    if net is not None and len(nodes) > 1:
        loads = {n: doc.traffic.loads.get(n, doc.traffic.load) * net.node_rate(n) for n in nodes}
        uniform = sum(loads.values()) if doc.traffic.pattern == "uniform" else 0.0
        offered = {n: (uniform - (loads[n] if uniform else 0.0)) / (len(nodes) - 1) for n in nodes}
        for f in doc.traffic.flows:
            offered[f.dst] = offered.get(f.dst, 0.0) + f.rate
        hot.update(n for n in nodes if offered.get(n, 0.0) > net.node_rate(n) * (1 + 1e-9))
    return [n for n in nodes if n in hot]
