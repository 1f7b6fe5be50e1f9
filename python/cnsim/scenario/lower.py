"""Lowering a resolved scenario to the core config of docs/core-config.md (base units: ps,
bit/s, bytes) — the JSON handed to the Rust engine."""

from __future__ import annotations

from typing import Any

from ..cmparams import BCN_FAMILY, ENGINE_SCHEME, SCHEMES
from ..errors import ScenarioError
from .fields import CORE_CONFIG_VERSION
from .resolver import Resolved

# --------------------------------------------------------------------------------------------
# Lowering: docs/core-config.md
# --------------------------------------------------------------------------------------------


def _lower_cm(r: Resolved) -> dict[str, Any]:
    """``cm`` block: ``scheme`` then every parameter; rates as ``*_bps``, times as ``*_ps``."""
    # a preset of another scheme runs as that scheme (dcqcn-nic: dcqcn with rp = "nic", §7.4)
    out: dict[str, Any] = {"scheme": ENGINE_SCHEME.get(r.scheme, r.scheme)}
    params = SCHEMES[r.scheme]
    for name, value in r.cm.items():
        kind = params[name].kind
        if name == "k_scale":  # DCQCN: the rate its thresholds are for, when they scale
            if value == "link":
                out["k_rate_bps"] = r.doc.links.rate
        elif kind == "rate":
            out[f"{name}_bps"] = value
        elif kind in ("time", "time_or_auto"):
            out[f"{name}_ps"] = None if value == "auto" else value
        else:
            out[name] = value
    if r.scheme in BCN_FAMILY:
        out["gi_rate_bps"] = r.doc.links.rate  # gi is stated for links.rate (contract)
    return out


def _priority(cls: int) -> dict[str, int]:
    """A source's PFC class; class 0 is left out (the engine's default), so that configs
    without PFC stay as they were (and so do their run ids)."""
    return {"priority": cls} if cls else {}


def lower_core(r: Resolved, sid: str) -> dict[str, Any]:
    doc = r.doc
    net = r.network
    if net is None:  # unreachable: resolution raises first
        raise ScenarioError(f"{sid}: the topology could not be built")
    tr = doc.traffic
    geometric = tr.sizes == "geometric"
    # TG-GEO: a flow arrives per slot with probability load/mean_frames (docs/core-config.md)
    mean_frames = (tr.mean_size or tr.frame_size) / tr.frame_size if geometric else 1.0
    sizes = {"sizes": tr.sizes, "mean_frames": mean_frames}
    sources: list[dict[str, Any]] = []
    if tr.pattern == "uniform":
        for node in r.nodes:
            load = tr.loads.get(node, tr.load)
            if load > 0:
                sources.append({"node": node, "load": load, "dst": None, "start_ps": tr.start, "stop_ps": tr.stop, **sizes,
                                **_priority(tr.priority)})
    for f in tr.flows:
        sources.append(
            {
                "node": f.src,
                "load": f.rate / net.node_rate(f.src),
                "dst": f.dst,
                "start_ps": f.start if f.start is not None else tr.start,
                "stop_ps": f.stop if f.stop is not None else tr.stop,
                **sizes,
                **_priority(f.priority if f.priority is not None else tr.priority),
            }
        )
    if net.fat_tree is not None:
        ft = net.fat_tree
        topology: dict[str, Any] = {
            "switches": [],
            "nodes": list(net.nodes),
            "links": [],
            "legacy": list(doc.topology.legacy),
            "routing": net.routing,
            "fat_tree": {
                "radix": ft.radix,
                "levels": ft.levels,
                "merged_top": ft.merged_top,
                "rate_bps": doc.links.rate,
                "delay_ps": doc.links.delay,
            },
        }
    else:
        topology = {
            "switches": list(net.switches),
            "nodes": list(net.nodes),
            "links": [{"a": link.a, "b": link.b, "rate_bps": link.rate_bps, "delay_ps": link.delay_ps} for link in net.links],
            "legacy": list(doc.topology.legacy),
            "routing": net.routing,
            "fat_tree": None,
        }
    sw = doc.switch
    nic = doc.nic
    return {
        "version": CORE_CONFIG_VERSION,
        "seed": doc.seed,
        "duration_ps": doc.duration,
        "run_to_completion": doc.traffic.run_to_completion,
        "topology": topology,
        "switch": {
            "buffer": sw.buffer,
            "memory_per_port": r.memory_per_port,
            "oq_limit": r.oq_limit,
            "processing_delay_ps": r.processing_delay_ps,
            "pause": sw.pause,
            **({"pfc_classes": sw.pfc_classes} if sw.pfc_classes else {}),
            **({"cp_ports": list(sw.cp_ports)} if isinstance(sw.cp_ports, list) else {}),
            "thresholds": {name: dict(t) for name, t in r.thresholds.items()},
        },
        "nic": {
            "ingress": nic.ingress,
            "ingress_size": nic.ingress_size,
            "on_full": nic.on_full,
            "egress_buffer": r.egress_buffer,
            "egress_xoff": r.egress_xoff,
            "egress_xon": r.egress_xon,
            "processing_delay_ps": nic.processing_delay,
        },
        "traffic": {"frame_size": tr.frame_size, "sources": sources},
        "hotspots": [{"node": h.node, "rate": h.rate, "start_ps": h.start, "end_ps": h.end} for h in doc.hotspots],
        "cm": _lower_cm(r),
        "metrics": {
            "bin_ps": doc.metrics.bin,
            "window_ps": list(r.window_ps),
            "hot_nodes": list(r.hot_nodes),
            "windows": [{"name": k, "start_ps": a, "end_ps": b} for k, (a, b) in r.windows_ps.items()],
            "hot_port": r.hot_port,
            "queues": list(r.queues),
            "per_flow": [list(p) for p in r.per_flow],
            "deadlock_threshold_ps": doc.metrics.deadlock_threshold,
            "stop_on_deadlock": doc.metrics.stop_on_deadlock,
        },
    }


