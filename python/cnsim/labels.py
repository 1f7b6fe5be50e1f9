"""The one table of metric labels (issue 11): how each summary metric is named, where it lives in
summary.json and how it is scaled for display — read by the terminal table of ``cnsim run``,
the reports, the deck figures and tables, and Jupyter's view of a result — and the one way a
number is written in a table cell (:func:`fmt`).
"""

from __future__ import annotations

from typing import Any

__all__ = ["METRICS", "HEADLINE", "scaled", "summary_value", "fmt"]

#: name → (label, dotted summary key, scale)
METRICS: dict[str, tuple[str, str, float]] = {
    "aggregate": ("aggregate (Gb/s)", "throughput_gbps.aggregate", 1.0),
    "hot_port": ("hot port (Gb/s)", "throughput_gbps.hot_port", 1.0),
    "q_mean": ("hot queue mean (KB)", "queue_bytes.hot.mean", 1e-3),
    "q_std": ("hot queue std (KB)", "queue_bytes.hot.std", 1e-3),
    "q_max": ("hot queue max (KB)", "queue_bytes.hot.max", 1e-3),
    "drops": ("drops (frames)", "drops.frames", 1.0),
    "paused_fraction": ("paused fraction", "paused_fraction", 1.0),
    "paused": ("% time paused", "paused_fraction", 100.0),
    "cm_mbps": ("CM overhead (Mb/s)", "cm.mbps", 1.0),
    "cm_frames": ("CM frames", "cm.frames", 1.0),
    "jain": ("Jain (vs max-min)", "fairness.jain", 1.0),
    "maxmin_err": ("max-min rel. error", "fairness.maxmin_rel_error", 1.0),
    "underrun": ("hot-port underrun", "underrun", 1.0),
    "util": ("bottleneck utilisation", "bottleneck_utilisation", 1.0),
    "completed": ("completed flows", "fct_ms.completed", 1.0),
    "incomplete": ("incomplete flows", "fct_ms.incomplete", 1.0),
    "fct_mean": ("FCT mean (ms)", "fct_ms.mean", 1.0),
    "fct_p99": ("FCT p99 (ms)", "fct_ms.p99", 1.0),
    "src_drops": ("source drops (frames)", "source_drops.frames", 1.0),
}

#: the headline metrics of a run, in the order run and sweep tables show them
HEADLINE: list[tuple[str, str, float]] = [
    METRICS[name] for name in ("aggregate", "hot_port", "q_mean", "q_max", "q_std", "drops", "paused_fraction", "cm_mbps", "jain")
]


def _get(summary: dict[str, Any], dotted: str) -> Any:
    cur: Any = summary
    for part in dotted.split("."):
        if not isinstance(cur, dict) or part not in cur:
            return None
        cur = cur[part]
    return cur


def scaled(value: Any, scale: float) -> Any:
    """A number scaled for display (anything else unchanged)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and scale != 1.0:
        return value * scale
    return value


def summary_value(summary: dict[str, Any], dotted: str, scale: float = 1.0) -> Any:
    """The value at a dotted key of summary.json, scaled for display (None if absent)."""
    return scaled(_get(summary, dotted), scale)


def fmt(value: Any) -> str:
    """A table cell: numbers with 4–5 significant digits, None as a dash."""
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}" if abs(value) >= 10_000 else str(value)
    if isinstance(value, float):
        if value != value:
            return "–"
        if value == 0:
            return "0"
        if abs(value) >= 1e5 or abs(value) < 1e-3:
            return f"{value:.4g}"
        return f"{value:.4f}".rstrip("0").rstrip(".") if abs(value) < 10 else f"{value:,.3f}".rstrip("0").rstrip(".")
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(fmt(v) for v in value) + "]"
    return str(value)
