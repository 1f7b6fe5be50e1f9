"""Writing the resolved scenario as TOML (contract "A run folder": ``scenario.toml``).

The output is a valid scenario document that loads back to the same core config: every key
present with its resolved value, sizes as integer bytes, rates as integer bit/s, times as exact
strings with units (``"1us"``), and every value computed from an expression or an ``auto`` rule
written as a number with the rule kept in a comment (contract "Expressions"). A small writer of
our own is used because ``tomli_w`` cannot write comments.
"""

from __future__ import annotations

import json
import re
from typing import Any

from .._version import __version__
from ..cmparams import SCHEMES
from ..expr import Expr
from ..units import format_time
from .resolver import Resolved

__all__ = ["resolved_toml", "toml_value", "toml_key"]

_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def toml_key(key: str) -> str:
    """A bare key when possible, else a quoted one."""
    return key if _BARE_KEY.match(key) else json.dumps(key)


def toml_value(value: Any) -> str:
    """One TOML value (inline tables and arrays included)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if value != value:
            return "nan"
        if value in (float("inf"), float("-inf")):
            return "inf" if value > 0 else "-inf"
        text = repr(value)
        return text if any(c in text for c in ".en") else text + ".0"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{toml_key(str(k))} = {toml_value(v)}" for k, v in value.items()) + "}"
    return json.dumps(str(value))


class _Writer:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def table(self, name: str, array: bool = False) -> None:
        if self.lines and self.lines[-1] != "":
            self.lines.append("")
        self.lines.append(f"[[{name}]]" if array else f"[{name}]")

    def kv(self, key: str, value: Any, comment: str = "") -> None:
        if value is None:
            return
        line = f"{toml_key(key)} = {toml_value(value)}"
        if comment:
            line += f"  # {comment}"
        self.lines.append(line)

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


def _cm_value(kind: str, value: Any) -> Any:
    if kind in ("time", "time_or_auto") and isinstance(value, int):
        return format_time(value)
    return value


def resolved_toml(r: Resolved, presets: dict[str, Any], sid: str) -> str:
    """The resolved scenario ``r`` (id ``sid``) as TOML text; ``presets`` as the file gave them."""
    doc = r.doc
    w = _Writer()
    w.lines.append(f"# cnsim {__version__}: resolved scenario {sid!r} (defaults filled in)")
    w.kv("description", doc.description)
    w.kv("seed", doc.seed)
    w.kv("duration", format_time(doc.duration))

    topo = doc.topology
    w.table("topology")
    w.kv("kind", topo.kind)
    if topo.kind != "fat_tree":  # a fat tree's hosts follow from its shape
        w.kv("nodes", topo.nodes)
    if topo.kind == "graph":
        w.kv("switches", topo.switches)
        links = []
        for link in topo.links:
            entry: dict[str, Any] = {"a": link.a, "b": link.b}
            if link.rate is not None:
                entry["rate"] = link.rate
            if link.delay is not None:
                entry["delay"] = format_time(link.delay)
            links.append(entry)
        w.kv("links", links)
    if topo.fat_tree is not None:
        w.kv("fat_tree", topo.fat_tree.model_dump())
    w.kv("legacy", topo.legacy)
    w.kv("routing", r.network.routing if r.network is not None else topo.routing or "shortest")

    w.table("links")
    w.kv("rate", doc.links.rate, "bit/s")
    w.kv("delay", format_time(doc.links.delay), "one-way propagation")

    sw = doc.switch
    w.table("switch")
    w.kv("buffer", sw.buffer)
    w.kv("memory_per_port", r.memory_per_port, _expr_note(r.switch_exprs.get("memory_per_port"), "bytes"))
    w.kv("oq_limit", "none" if r.oq_limit is None else r.oq_limit, _expr_note(r.switch_exprs.get("oq_limit")))
    w.kv("processing_delay", format_time(r.processing_delay_ps), _expr_note(r.switch_exprs.get("processing_delay")))
    w.kv("pause", sw.pause)
    xoffs = {t["xoff"] for t in r.thresholds.values()}
    xons = {t["xon"] for t in r.thresholds.values()}
    if len(xoffs) == 1 and len(xons) == 1:
        w.kv("xoff", xoffs.pop(), r.xoff_note or _expr_note(r.switch_exprs.get("xoff"), "bytes"))
        w.kv("xon", xons.pop(), r.xon_note or _expr_note(r.switch_exprs.get("xon"), "bytes"))
    else:  # switches of different sizes: keep the rule, the core config has the numbers
        xoff_rule = sw.xoff.text if isinstance(sw.xoff, Expr) else sw.xoff  # per-switch values
        w.kv("xoff", xoff_rule if isinstance(xoff_rule, str) else r.thresholds[next(iter(r.thresholds))]["xoff"])
        w.kv("xon", "auto" if sw.xon == "auto" else r.thresholds[next(iter(r.thresholds))]["xon"])
    w.kv("xon_rule", sw.xon_rule)
    w.kv("pfc_classes", sw.pfc_classes)
    w.kv("cp_ports", sw.cp_ports if isinstance(sw.cp_ports, str) else list(sw.cp_ports))

    nic = doc.nic
    w.table("nic")
    w.kv("ingress", nic.ingress)
    w.kv("ingress_size", nic.ingress_size)
    w.kv("on_full", nic.on_full)
    w.kv("egress_buffer", r.egress_buffer, "one frame" if nic.egress_buffer is None else "bytes")
    w.kv("egress_xoff", r.egress_xoff, "auto" if nic.egress_xoff == "auto" else "")
    w.kv("egress_xon", r.egress_xon, "auto" if nic.egress_xon == "auto" else "")
    w.kv("processing_delay", format_time(nic.processing_delay))

    tr = doc.traffic
    w.table("traffic")
    w.kv("frame_size", tr.frame_size)
    w.kv("pattern", tr.pattern)
    w.kv("load", tr.load)
    if tr.loads:
        w.kv("loads", dict(tr.loads))
    flows = []
    for f in tr.flows:
        entry = {"src": f.src, "dst": f.dst, "rate": f.rate}
        if f.start is not None:
            entry["start"] = format_time(f.start)
        if f.stop is not None:
            entry["stop"] = format_time(f.stop)
        if f.priority is not None:
            entry["priority"] = f.priority
        flows.append(entry)
    w.kv("flows", flows)
    w.kv("sizes", tr.sizes)
    w.kv("mean_size", tr.mean_size)
    w.kv("start", format_time(tr.start))
    w.kv("stop", None if tr.stop is None else format_time(tr.stop))
    w.kv("run_to_completion", tr.run_to_completion)
    w.kv("priority", tr.priority)

    for h in doc.hotspots:
        w.table("hotspots", array=True)
        w.kv("node", h.node)
        w.kv("rate", h.rate)
        w.kv("start", format_time(h.start))
        w.kv("end", format_time(h.end))

    w.table("cm")
    w.kv("scheme", r.scheme)
    params = SCHEMES[r.scheme]
    for name, value in r.cm.items():
        expr = r.cm_exprs.get(name)
        w.kv(name, _cm_value(params[name].kind, value), f"= {expr}" if expr else "")
    for scheme, table in presets.items():
        w.table(f"cm.presets.{toml_key(scheme)}")
        for name, value in table.items():
            w.kv(name, value)

    m = doc.metrics
    w.table("metrics")
    w.kv("bin", format_time(m.bin))
    w.kv("window", [format_time(t) for t in r.window_ps], r.window_note)
    w.kv("hot_port", r.hot_port)
    w.kv("queues", r.queues)
    w.kv("per_flow", m.per_flow)
    w.kv("deadlock_threshold", format_time(m.deadlock_threshold))
    w.kv("stop_on_deadlock", m.stop_on_deadlock)
    return w.text()


def _expr_note(expr: str | None, default: str = "") -> str:
    return f"= {expr}" if expr else default
