"""PAUSE watermarks (scenarios.md §1.1 with algorithms.md D12): each switch's XOFF and XON from
its memory and the headroom its links need (``auto``, an expression, or a number), and the
adapters' output-buffer watermarks (D15). Problems are collected, not raised."""

from __future__ import annotations

import math
from collections import Counter
from fractions import Fraction

from ..errors import Problem
from ..expr import Expr, ExprError
from ..topology import Link, Network
from .cmtable import check_resolved_cm
from .network import per_switch, rtt_bw
from .resolver import EvalProblem, Resolver
from .schema import ScenarioDoc


class Watermarks:
    """The watermarks of one document over its network (``net`` None: a uniform fat tree)."""

    def __init__(self, doc: ScenarioDoc, net: Network | None, problems: list[Problem]) -> None:
        self.doc = doc
        self.net = net
        self.problems = problems

    def switch_xoff(self, res: Resolver, switch: str | None) -> Fraction:
        """Auto XOFF (scenarios.md §1.1, D12) for ``switch`` (None: the first switch); with PFC,
        of one class's share."""
        doc = self.doc
        # PFC: each class has an equal share of every partition (or of the pool) and reserves its
        # own headroom in it (algorithms.md §2.3 per class)
        memory = Fraction(res.value("switch.memory_per_port")) / max(1, doc.switch.pfc_classes)
        proc = res.value("switch.processing_delay")
        frame = doc.traffic.frame_size
        if self.net is None:  # fat tree: uniform links
            links = [Link("", "", doc.links.rate, doc.links.delay)]
        else:
            sw = switch or self.net.switches[0]
            links = [link for _, link in self.net.neighbours(sw)]
        # a fat tree's switch has 64 links alike: each kind of link is computed once (exact
        # fractions cost microseconds each)
        kinds = Counter((link.delay_ps, link.rate_bps) for link in links)
        heads = {kind: rtt_bw(kind[0], proc, kind[1], frame) for kind in kinds}
        if doc.switch.buffer == "shared":
            return sum(((memory - heads[kind]) * n for kind, n in kinds.items()), Fraction(0))
        return memory - max(heads.values())

    def global_xoff(self, res: Resolver) -> int:
        return max(0, math.floor(self.switch_xoff(res, None)))

    def xoff_at(self, res: Resolver, switch: str | None) -> int:
        """An XOFF expression naming ``auto`` (that switch's automatic XOFF) or ``ports``.

        The S3 shared-memory rule of scenarios.md §1.1 (4 frames in transit instead of D12's 2)
        is ``"auto - 2*1500B*ports"``; the value differs from switch to switch.
        """
        expr = self.doc.switch.xoff
        assert isinstance(expr, Expr)
        sw = switch or (self.net.switches[0] if self.net is not None and self.net.switches else None)

        def lookup(name: str) -> float:
            if name == "auto":
                return float(self.switch_xoff(res, sw))
            if name == "ports":
                return float(self.net.port_count(sw)) if self.net is not None and sw is not None else 1.0
            return res.number(name, "switch.xoff", expr)

        res.exprs["switch.xoff"] = expr.text
        try:
            number = expr.evaluate(lookup)
        except ExprError as err:
            raise EvalProblem(Problem("switch.xoff", expr.text, str(err))) from None
        value = Resolver._convert("switch.xoff", "size", number, expr, None)
        return int(value)

    def check_resolved(self, res: Resolver, memory: int) -> None:
        """Checks of resolved values that need the network or another value: the switch memory
        holds a frame (like switch.oq_limit and nic.egress_buffer) and the scheme's parameters
        pass :func:`~.cmtable.check_resolved_cm` (rmin below the link rates, pmin <= pmax, …)."""
        doc = self.doc
        frame = doc.traffic.frame_size
        if 0 < memory < frame:  # 0 has its own message ("greater than zero")
            where = {"shared": "each port's part of the pool", "partitioned": "each input's partition", "egress": "each output's threshold"}[doc.switch.buffer]
            self.problems.append(Problem("switch.memory_per_port", memory, f"{where} must hold at least one frame (traffic.frame_size = {frame} B)"))
        params = {key.removeprefix("cm."): entry[2] for key, entry in res.entries.items() if key.startswith("cm.") and entry[2] is not None}
        values = {name: res.values[f"cm.{name}"] for name in params if f"cm.{name}" in res.values}
        exprs = {key.removeprefix("cm."): text for key, text in res.exprs.items() if key.startswith("cm.")}
        check_resolved_cm(values, params, exprs, self.net, self.problems)

    def switches(self, res: Resolver, memory: int) -> tuple[dict[str, dict[str, int]], str, str]:
        """Each switch's capacity, XOFF and XON (after :meth:`check_resolved`)."""
        sw = self.doc.switch
        switches = self.net.switches if self.net is not None else []
        out: dict[str, dict[str, int]] = {}
        # a problem that holds alike at many switches (a fat tree's are all alike) is said once,
        # naming where: (key, value, message with {at}) -> the switches
        alike: dict[tuple[str, object, str], list[str]] = {}

        def problem(name: str, key: str, value: object, text: str) -> None:
            alike.setdefault((key, value, text), []).append(name)

        for name in switches:
            n = self.net.port_count(name) if self.net is not None else 1
            capacity = memory * n if sw.buffer == "shared" else memory
            if sw.xoff == "auto":
                exact = self.switch_xoff(res, name)
                if exact <= 0 and sw.pause:
                    problem(name, "switch.xoff", "auto", f"M - rtt*bw is {float(exact):g} B at {{at}}: the memory leaves no room for PAUSE headroom; give a larger switch.memory_per_port or an explicit xoff")
                xoff = max(0, math.floor(exact))
            elif per_switch(sw.xoff):
                try:
                    xoff = self.xoff_at(res, name)
                except EvalProblem as err:
                    self.problems.append(err.problem)
                    xoff = 0
            else:
                xoff = res.values["switch.xoff"]
            if sw.xon == "auto":
                xon = xoff // 2 if sw.xon_rule == "half" else xoff - 10_000
                if xon < 0 and sw.pause:
                    problem(name, "switch.xon", "auto", f"XOFF - 10KB is negative at {{at}} (XOFF = {xoff} B); give an explicit xon")
                xon = max(0, xon)
            elif isinstance(sw.xon, Expr):
                try:
                    # evaluated here and now: the late binding B023 warns about cannot happen
                    number = sw.xon.evaluate(lambda nm: float(xoff) if nm == "xoff" else res.number(nm, "switch.xon", sw.xon))  # noqa: B023
                    xon = Resolver._convert("switch.xon", "size", number, sw.xon, None)
                except ExprError as err:
                    self.problems.append(Problem("switch.xon", sw.xon.text, str(err)))
                    xon = 0
                except EvalProblem as err:
                    self.problems.append(err.problem)
                    xon = 0
                res.exprs["switch.xon"] = sw.xon.text
            else:
                xon = sw.xon
            if sw.pause and not 0 <= xon <= xoff <= capacity:
                problem(name, "switch.xon" if xon > xoff else "switch.xoff", f"xoff={xoff}, xon={xon}", f"PAUSE needs 0 <= xon <= xoff <= capacity ({capacity} B at {{at}})")
            if not sw.pause:
                xoff, xon = min(xoff, capacity), min(xon, xoff, capacity)
            out[name] = {"capacity": capacity, "xoff": xoff, "xon": xon}
        for (key, value, text), names in alike.items():
            self.problems.append(Problem(key, value, text.replace("{at}", _at_switches(names))))
        rule = "auto (half)" if sw.xon_rule == "half" else "auto (xoff - 10KB)"
        xoff_note = "auto: M - rtt*bw" + (" summed over the ports" if sw.buffer == "shared" else "") if sw.xoff == "auto" else ""
        xon_note = rule if sw.xon == "auto" else ""
        return out, xoff_note, xon_note

    def nic(self, proc: int) -> tuple[int, int, int]:
        """OB size and transfer watermarks (D15); "auto" follows the switch rule (S1 AD-ZRL)."""
        doc, nic = self.doc, self.doc.nic
        frame = doc.traffic.frame_size
        ob = nic.egress_buffer if nic.egress_buffer is not None else frame
        if ob < frame:
            self.problems.append(Problem("nic.egress_buffer", ob, f"must hold at least one frame ({frame} B)"))
        head = rtt_bw(doc.links.delay, proc, doc.links.rate, frame)
        auto_xoff = math.floor(ob - head)
        one_frame_stage = auto_xoff < frame
        xoff = (ob if one_frame_stage else auto_xoff) if nic.egress_xoff == "auto" else nic.egress_xoff
        if nic.egress_xon == "auto":
            if one_frame_stage and nic.egress_xoff == "auto":
                xon = 0
            else:
                xon = xoff // 2 if doc.switch.xon_rule == "half" else max(0, xoff - 10_000)
        else:
            xon = nic.egress_xon
        if not 0 <= xon <= xoff <= ob:
            self.problems.append(Problem("nic.egress_xoff", f"egress_xoff={xoff}, egress_xon={xon}", f"needs 0 <= egress_xon <= egress_xoff <= egress_buffer ({ob} B)"))
        return ob, xoff, xon


def _at_switches(names: list[str]) -> str:
    """Where a problem holds: one switch or up to three by name, more by their count, the first
    two and the last."""
    if len(names) == 1:
        return f"switch {names[0]}"
    if len(names) <= 3:
        return "switches " + ", ".join(names)
    return f"{len(names)} switches ({names[0]}, {names[1]}, …, {names[-1]})"
