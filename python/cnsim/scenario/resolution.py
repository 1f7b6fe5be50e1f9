"""One resolution pass over a validated document (spec/contract.md "Schemes and presets",
"Measurement window"; scenarios.md §1.1 PAUSE watermarks with algorithms.md D12): the scheme's
parameters, expressions, watermarks, window, hot port, recorded queues and flows."""

from __future__ import annotations

from typing import Any

from ..cmparams import SCHEMES
from ..errors import Problem, missing, raise_problems
from ..topology import Network
from ..units import (
    format_rate,
    format_time,
)
from .hot import hot_nodes, named_windows_ps
from .network import build_network, per_switch
from .resolver import EvalProblem, Resolved, Resolver
from .schema import ScenarioDoc
from .watermarks import Watermarks


class Resolution:
    """One resolution pass over a validated document (collects problems, raises once)."""

    def __init__(self, doc: ScenarioDoc, scheme: str, cm: dict[str, Any], sid: str) -> None:
        self.doc, self.scheme, self.cm_raw, self.id = doc, scheme, cm, sid
        self.problems: list[Problem] = []

    def run(self) -> Resolved:
        doc = self.doc
        net, nodes = build_network(doc, self.problems)
        self.net, self.nodes = net, nodes
        self.marks = Watermarks(self.doc, net, self.problems)
        self._check_names(net, nodes)
        raise_problems(self.problems, self.id)

        res = Resolver()
        sw = doc.switch
        res.add("links.rate", "rate", doc.links.rate)
        res.add("switch.memory_per_port", "size", sw.memory_per_port)
        res.add("switch.processing_delay", "time", sw.processing_delay)
        if sw.oq_limit != "none":
            res.add("switch.oq_limit", "size", sw.oq_limit)
        params = SCHEMES[self.scheme]
        for name, value in self.cm_raw.items():
            res.add(f"cm.{name}", params[name].kind, value, params[name])
            if params[name].kind not in ("choice", "bool"):
                res.names.setdefault(name, f"cm.{name}")
        if "w" in params:
            res.add("<fbmax>", "float", lambda: self._fbmax(res))
            res.add("<gd0>", "float", lambda: (1.0 if self.cm_raw.get("gd0_rule") == "unit" else 0.5) / self._fbmax(res))
            res.names["fbmax"], res.names["gd0"] = "<fbmax>", "<gd0>"
        if sw.xoff == "auto":
            res.add("switch.xoff", "size", lambda: self.marks.global_xoff(res))
        elif per_switch(sw.xoff):  # names the switch's own "auto" or "ports": the first switch's value
            res.add("switch.xoff", "size", lambda: self.marks.xoff_at(res, None))
        else:
            res.add("switch.xoff", "size", sw.xoff)

        values: dict[str, Any] = {}
        for key in list(res.entries):
            if key.startswith("<"):
                continue
            try:
                values[key] = res.value(key)
            except EvalProblem as err:
                self.problems.append(err.problem)
        raise_problems(self.problems, self.id)

        memory = values["switch.memory_per_port"]
        proc = values["switch.processing_delay"]
        oq_limit = values.get("switch.oq_limit")
        # the memory's own checks first: the watermarks are computed from it, and a watermark
        # refused for a memory of 0 would name the consequence before the cause
        if memory == 0:
            self.problems.append(Problem("switch.memory_per_port", 0, "must be greater than zero"))
        if oq_limit is not None and oq_limit < doc.traffic.frame_size:
            self.problems.append(Problem("switch.oq_limit", oq_limit, "must hold at least one frame, or be \"none\""))
        raise_problems(self.problems, self.id)
        self.marks.check_resolved(res, memory)
        thresholds, xoff_note, xon_note = self.marks.switches(res, memory)
        egress = self.marks.nic(proc)
        window_ps, window_note = measurement_window(self.doc, self.doc.duration)
        windows_ps = named_windows_ps(doc)
        hot_port, hot_node = self._hot_port(net)
        queues = self._queues(hot_port)
        per_flow = self._per_flow(net, hot_port, hot_node)
        hot = hot_nodes(doc, nodes, net, hot_node)
        raise_problems(self.problems, self.id)

        cm = {name: values[f"cm.{name}"] for name in self.cm_raw}
        cm_exprs = {k.removeprefix("cm."): v for k, v in res.exprs.items() if k.startswith("cm.")}
        switch_exprs = {k.removeprefix("switch."): v for k, v in res.exprs.items() if k.startswith("switch.")}
        return Resolved(
            doc=doc,
            scheme=self.scheme,
            cm=cm,
            cm_exprs=cm_exprs,
            memory_per_port=memory,
            oq_limit=oq_limit,
            processing_delay_ps=proc,
            switch_exprs=switch_exprs,
            network=net,
            thresholds=thresholds,
            xoff_note=xoff_note,
            xon_note=xon_note,
            egress_buffer=egress[0],
            egress_xoff=egress[1],
            egress_xon=egress[2],
            window_ps=window_ps,
            window_note=window_note,
            windows_ps=windows_ps,
            hot_nodes=hot,
            hot_port=hot_port,
            hot_node=hot_node,
            queues=queues,
            per_flow=per_flow,
            nodes=nodes,
        )

    # ---- names ----------------------------------------------------------------------------

    def _check_names(self, net: Network | None, nodes: list[str]) -> None:
        doc, p = self.doc, self.problems
        node_set = set(nodes)
        listing = ", ".join(nodes[:20]) + (", ..." if len(nodes) > 20 else "")

        def node(key: str, name: str) -> None:
            if name not in node_set:
                p.append(Problem(key, name, f"unknown node; the nodes are: {listing}"))

        for i, f in enumerate(doc.traffic.flows):
            node(f"traffic.flows.{i}.src", f.src)
            node(f"traffic.flows.{i}.dst", f.dst)
            if f.src == f.dst:
                p.append(Problem(f"traffic.flows.{i}.dst", f.dst, "a flow needs a destination other than its source"))
            # the flow's own times, else the traffic's (an inherited stop before the flow's own
            # start is an empty interval too: the flow would generate nothing)
            start = f.start if f.start is not None else doc.traffic.start
            stop = f.stop if f.stop is not None else doc.traffic.stop
            if stop is not None and stop < start:
                key = f"traffic.flows.{i}.stop" if f.stop is not None else "traffic.stop"
                p.append(Problem(key, format_time(stop), f"stop comes before start (flow {i} starts at {format_time(start)})"))
            if net is not None and f.src in node_set and f.rate > net.node_rate(f.src):
                p.append(Problem(f"traffic.flows.{i}.rate", format_rate(f.rate), f"more than the link rate of node {f.src} ({format_rate(net.node_rate(f.src))})"))
        for name in doc.traffic.loads:
            node(f"traffic.loads.{name}", name)
        if doc.traffic.loads and doc.traffic.pattern != "uniform":
            p.append(Problem("traffic.loads", doc.traffic.loads, 'per-node loads need pattern = "uniform"'))
        if doc.traffic.load > 0 and doc.traffic.pattern != "uniform" and not doc.traffic.flows:
            # with pattern "none" (the default) only the named flows send: a scenario written as
            # `load = 0.85` without its pattern, and without flows, would send nothing, silently.
            # Beside named flows the load is ignored, as documented: `--set traffic.pattern=none`
            # turns a scenario's uniform traffic off, and `--set traffic.load=…` on a scenario of
            # named flows changes nothing, without either being an error
            p.append(Problem("traffic.load", doc.traffic.load, 'a load needs pattern = "uniform" (with "none", the default, only '
                             'traffic.flows send, and this scenario has none: nothing would send); set traffic.pattern = "uniform" '
                             'or leave the load at 0'))
        if doc.traffic.stop is not None and doc.traffic.stop < doc.traffic.start:
            p.append(Problem("traffic.stop", format_time(doc.traffic.stop), "stop comes before start"))
        tr = doc.traffic
        if tr.sizes == "geometric":
            if tr.mean_size is None:
                p.append(Problem("traffic.mean_size", missing(), 'sizes = "geometric" needs the mean flow size, e.g. "1500B" or "60000B"'))
            elif tr.mean_size < tr.frame_size:
                p.append(Problem("traffic.mean_size", tr.mean_size, f"a flow has at least one frame: give at least traffic.frame_size ({tr.frame_size} B)"))
        elif tr.mean_size is not None and tr.mean_size != tr.frame_size:
            p.append(Problem("traffic.mean_size", tr.mean_size, 'only used with sizes = "geometric" (fixed sizes send one frame per arrival)'))
        if tr.run_to_completion:
            endless = tr.stop is None and (
                (tr.pattern == "uniform" and any(tr.loads.get(n, tr.load) > 0 for n in nodes))
                or any(f.stop is None for f in tr.flows)
            )
            if endless:
                p.append(Problem("traffic.run_to_completion", True, "a run to completion needs sources that stop: give traffic.stop (or a stop for every flow)"))
        for i, h in enumerate(doc.hotspots):
            node(f"hotspots.{i}.node", h.node)
            if h.end < h.start:
                p.append(Problem(f"hotspots.{i}.end", format_time(h.end), "the hotspot ends before it starts"))
        if net is not None:
            switch_set = set(net.switches)
            for i, name in enumerate(doc.topology.legacy):
                if name not in switch_set:
                    p.append(Problem(f"topology.legacy.{i}", name, f"unknown switch; the switches are: {', '.join(net.switches)}"))
            ports = net.ports()
            port_set = set(ports)
            shown = ", ".join(ports[:12]) + (", ..." if len(ports) > 12 else "")
            hp = doc.metrics.hot_port
            if hp is not None and hp != "hotspot" and hp not in port_set:
                p.append(Problem("metrics.hot_port", hp, f'unknown port; allowed: "hotspot" or a port <switch>/<neighbour>: {shown}'))
            if hp == "hotspot" and not doc.hotspots:
                p.append(Problem("metrics.hot_port", hp, '"hotspot" needs at least one [[hotspots]] entry; give a port name'))
            for i, q in enumerate(doc.metrics.queues):
                if q not in port_set:
                    p.append(Problem(f"metrics.queues.{i}", q, f"unknown port; ports are <switch>/<neighbour>: {shown}"))
            if isinstance(doc.switch.cp_ports, list):
                cm_ports = {q for q in ports if q.split("/")[0] not in set(doc.topology.legacy)}
                for i, q in enumerate(doc.switch.cp_ports):
                    if q not in cm_ports:
                        p.append(Problem(f"switch.cp_ports.{i}", q, f"an egress port <switch>/<neighbour> of a CM switch: {shown}"))
        nic = doc.nic
        if nic.ingress != "unlimited" and nic.ingress_size < doc.traffic.frame_size:
            p.append(Problem("nic.ingress_size", nic.ingress_size, f'nic.ingress = "{nic.ingress}" needs a buffer of at least one frame ({doc.traffic.frame_size} B)'))
        elif nic.ingress == "per_voq" and nic.ingress_size // (max(len(nodes) - 1, 1) * max(1, doc.switch.pfc_classes)) < doc.traffic.frame_size:
            voqs = max(len(nodes) - 1, 1) * max(1, doc.switch.pfc_classes)
            per_class = f" (a VOQ per destination and PFC class: {len(nodes) - 1} × {doc.switch.pfc_classes})" if doc.switch.pfc_classes > 1 else ""
            p.append(Problem("nic.ingress_size", nic.ingress_size, f"per_voq splits the buffer over {voqs} VOQs{per_class}; each must hold at least one frame"))
        if nic.on_full == "block" and nic.ingress != "shared":
            p.append(Problem("nic.on_full", nic.on_full, f'"block" (the generator waits for room) needs nic.ingress = "shared"; with "{nic.ingress}" use "drop"'))
        classes = max(1, doc.switch.pfc_classes)
        allowed = ("no such class; allowed: 0, the only class with 802.3x PAUSE (switch.pfc_classes = 0; give switch.pfc_classes for more)"
                   if classes == 1 else f"no such class; allowed: a class in [0, {classes - 1}] (switch.pfc_classes = {classes})")
        if doc.traffic.priority >= classes:
            p.append(Problem("traffic.priority", doc.traffic.priority, allowed))
        for i, f in enumerate(doc.traffic.flows):
            if f.priority is not None and f.priority >= classes:
                p.append(Problem(f"traffic.flows.{i}.priority", f.priority, allowed))
        if doc.switch.pause and doc.switch.buffer == "egress":
            p.append(Problem("switch.pause", True, 'PAUSE is not available with buffer = "egress" (SW-EGDISC has no PAUSE); use "partitioned" or "shared"'))

    # ---- derived quantities ------------------------------------------------------------------

    def _fbmax(self, res: Resolver) -> float:
        bits = int(self.cm_raw.get("fb_bits", 0))
        if bits > 0:
            return float(2**bits - 1)
        fbmax = (2 * float(res.value("cm.w")) + 1) * float(res.value("cm.qeq"))
        if fbmax <= 0:
            raise EvalProblem(Problem("cm.qeq", res.value("cm.qeq"), "(2w+1)*qeq must be > 0 to define gd0"))
        return fbmax

    def _hot_port(self, net: Network | None) -> tuple[str, str | None]:
        doc = self.doc
        hp = doc.metrics.hot_port
        if hp is None:
            hot_nodes = list(dict.fromkeys(h.node for h in doc.hotspots))
            if len(hot_nodes) > 1:
                hp = "hotspot"
            elif net is None:
                hp = "hotspot" if hot_nodes else ""
            elif hot_nodes:
                hp = net.feeding_port(hot_nodes[0])
            elif doc.traffic.flows:
                offered: dict[str, int] = {}
                for f in doc.traffic.flows:
                    offered[f.dst] = offered.get(f.dst, 0) + f.rate
                hp = net.feeding_port(max(offered, key=lambda d: offered[d]))
            else:
                hp = net.feeding_port(self.nodes[0])
            if not hp:
                self.problems.append(Problem("metrics.hot_port", missing(), "give the hot port (a fat tree has no default)"))
        if hp == "hotspot":
            return hp, doc.hotspots[0].node if doc.hotspots else None
        neighbour = hp.split("/", 1)[-1]
        return hp, neighbour if neighbour in set(self.nodes) else None

    def _queues(self, hot_port: str) -> list[str]:
        net = self.net
        first: list[str] = []
        if hot_port == "hotspot":
            if net is not None:
                first = [net.feeding_port(h.node) for h in self.doc.hotspots]
        elif hot_port:
            first = [hot_port]
        return list(dict.fromkeys([*first, *self.doc.metrics.queues]))

    def traffic_pairs(self) -> list[tuple[str, str]]:
        return traffic_pairs(self.doc, self.nodes)

    def _per_flow(self, net: Network | None, hot_port: str, hot_node: str | None) -> list[tuple[str, str]]:
        mode = self.doc.metrics.per_flow
        named = list(dict.fromkeys((f.src, f.dst) for f in self.doc.traffic.flows))
        if mode == "none":
            return []
        if mode == "named" and named:
            return named
        if mode == "all":
            return self.traffic_pairs()
        # "hot" (or "named" without named flows): the flows through the hot port; the flows into
        # given nodes are found without listing every pair (linear in the nodes)
        if hot_port == "hotspot":
            return traffic_pairs_into(self.doc, self.nodes, {h.node for h in self.doc.hotspots})
        if hot_node is not None:
            return traffic_pairs_into(self.doc, self.nodes, {hot_node})
        pairs = self.traffic_pairs()
        if net is None or not hot_port:
            return []
        sw, nb = hot_port.split("/", 1)
        return [p for p in pairs if (sw, nb) in net.path(*p)]


def measurement_window(doc: ScenarioDoc, end: int) -> tuple[tuple[int, int], str]:
    """Contract "Measurement window" for a run that ends at ``end`` ps (the duration, or the
    actual end of a run to completion): the scenario's window clipped to [0, end]; if that is
    empty, the "run" rule (the whole run after a 10 % warm-up). Also a note on what was used."""
    run = (end // 10, end)
    w = doc.metrics.window
    if w == "run":
        return run, "run"
    if w == "hotspot":
        if not doc.hotspots:
            return run, "run (no hotspot)"
        t0, t1, note = doc.hotspots[0].start, doc.hotspots[0].end, "hotspot"
    else:
        t0, t1, note = w[0], w[1], ""
    t0, t1 = min(max(t0, 0), end), min(max(t1, 0), end)
    if t1 <= t0:
        return run, "run (the window was empty after clipping)"
    return (t0, t1), note


def traffic_pairs(doc: ScenarioDoc, nodes: list[str]) -> list[tuple[str, str]]:
    """Every (src, dst) pair that carries traffic: uniform sources × other nodes, then flows."""
    pairs: list[tuple[str, str]] = []
    if doc.traffic.pattern == "uniform":
        for src in nodes:
            if doc.traffic.loads.get(src, doc.traffic.load) > 0:
                pairs.extend((src, dst) for dst in nodes if dst != src)
    pairs.extend((f.src, f.dst) for f in doc.traffic.flows)
    return list(dict.fromkeys(pairs))


def traffic_pairs_into(doc: ScenarioDoc, nodes: list[str], dsts: set[str]) -> list[tuple[str, str]]:
    """The pairs of :func:`traffic_pairs` whose destination is in ``dsts``, in the same order."""
    pairs: list[tuple[str, str]] = []
    ordered = [n for n in nodes if n in dsts]
    if doc.traffic.pattern == "uniform":
        for src in nodes:
            if doc.traffic.loads.get(src, doc.traffic.load) > 0:
                pairs.extend((src, dst) for dst in ordered if dst != src)
    pairs.extend((f.src, f.dst) for f in doc.traffic.flows if f.dst in dsts)
    return list(dict.fromkeys(pairs))

