"""Max-min fair shares by water-filling, and the fairness figures of summary.json.

Implements the contract's ``fairness`` key ("Jain over x_f/fair_f; mean |x_f − fair_f|/fair_f
(water-filling at window capacities)") and the fair-share reference lines of the per-flow
figure (DESIGN.md: ``fairness.py``).

The reference allocation is computed over **every** flow that carries traffic (all of them
compete for the links), on the directed links of the topology:

* capacity of a link direction = its rate; the port feeding a hotspot node gets
  rate × (its service fraction averaged over the measurement window);
* demand of a flow = its offered rate averaged over the window (a uniform source at load L
  offers L·C/(N−1) to each other node; a named flow its rate while it is active);
* progressive filling: all unfrozen flows grow together until a link saturates or a flow
  reaches its demand; those flows freeze; repeat.

Checks (tests/test_fairness.py): qcnp-ig-baseline gives 2.5 Gb/s per culprit and 5 Gb/s to
the victim; kd-symmetric-single-hs 2.5 Gb/s each; zhb-og-single-hop 2/15 Gb/s per hot flow.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .scenario import Resolved

__all__ = ["water_fill", "fair_shares", "fairness_metrics", "MAX_FLOWS"]

#: above this many flows the reference allocation is not computed (fairness → null)
MAX_FLOWS = 200_000

Flow = tuple[str, str]


def water_fill(
    demands: Mapping[Hashable, float],
    paths: Mapping[Hashable, Sequence[Hashable]],
    capacity: Mapping[Hashable, float],
) -> dict[Hashable, float]:
    """Max-min fair rates of flows with ``demands`` over links of ``capacity``.

    ``paths[f]`` lists the links flow ``f`` crosses. Returns ``{flow: rate}``. A flow with no
    links is limited only by its demand.
    """
    rate = {f: 0.0 for f in demands}
    remaining = {link: float(c) for link, c in capacity.items()}
    scale = max([*remaining.values(), *demands.values(), 1.0])
    eps = 1e-12 * scale
    active = {f for f, d in demands.items() if d > eps}
    users: dict[Hashable, set[Hashable]] = {}
    for f in active:
        for link in paths.get(f, ()):
            users.setdefault(link, set()).add(f)
    while active:
        step = min(demands[f] - rate[f] for f in active)
        for link, flows in users.items():
            n = len(flows & active) if flows else 0
            if n:
                step = min(step, remaining[link] / n)
        step = max(step, 0.0)
        for f in active:
            rate[f] += step
        saturated = set()
        for link, flows in users.items():
            n = len(flows & active)
            if n:
                remaining[link] -= step * n
                if remaining[link] <= eps:
                    saturated.add(link)
        done = {f for f in active if demands[f] - rate[f] <= eps}
        for link in saturated:
            done |= users[link] & active
        active -= done
    return rate


def _overlap(a0: int, a1: int | None, b0: int, b1: int) -> float:
    """Fraction of [b0, b1] covered by [a0, a1] (a1 None = open)."""
    if b1 <= b0:
        return 0.0
    hi = b1 if a1 is None else min(a1, b1)
    return max(0, hi - max(a0, b0)) / (b1 - b0)


def _service_fraction(r: Resolved, node: str) -> float:
    """Time-averaged service fraction over the window of the port feeding ``node``."""
    t0, t1 = r.window_ps
    if t1 <= t0:
        return 1.0
    cuts = sorted({t0, t1, *(t for h in r.doc.hotspots if h.node == node for t in (h.start, h.end) if t0 < t < t1)})
    total = 0.0
    for a, b in zip(cuts, cuts[1:]):
        mid = (a + b) / 2
        f = 1.0
        for h in r.doc.hotspots:  # a later entry overrides an earlier one
            if h.node == node and h.start <= mid < h.end:
                f = h.rate
        total += f * (b - a)
    return total / (t1 - t0)


def fair_shares(r: Resolved) -> dict[Flow, float] | None:
    """Max-min fair rate (bit/s) of every flow of resolved scenario ``r``; None if too large."""
    net = r.network
    if net is None:
        return None
    doc = r.doc
    t0, t1 = r.window_ps
    n = len(r.nodes)
    demands: dict[Flow, float] = {}
    if doc.traffic.pattern == "uniform" and n > 1:
        active = _overlap(doc.traffic.start, doc.traffic.stop, t0, t1)
        senders = [s for s in r.nodes if doc.traffic.loads.get(s, doc.traffic.load) > 0]
        if len(senders) * (n - 1) > MAX_FLOWS:
            return None
        for src in senders:
            per_dst = doc.traffic.loads.get(src, doc.traffic.load) * net.node_rate(src) / (n - 1) * active
            for dst in r.nodes:
                if dst != src:
                    demands[(src, dst)] = demands.get((src, dst), 0.0) + per_dst
    for f in doc.traffic.flows:
        start = f.start if f.start is not None else doc.traffic.start
        stop = f.stop if f.stop is not None else doc.traffic.stop
        demands[(f.src, f.dst)] = demands.get((f.src, f.dst), 0.0) + f.rate * _overlap(start, stop, t0, t1)
    capacity: dict[tuple[str, str], float] = {}
    for link in net.links:
        capacity[(link.a, link.b)] = float(link.rate_bps)
        capacity[(link.b, link.a)] = float(link.rate_bps)
    for node in {h.node for h in doc.hotspots}:
        sw = net.neighbours(node)[0][0]
        capacity[(sw, node)] *= _service_fraction(r, node)
    paths = {flow: net.path(*flow) for flow in demands}
    return water_fill(demands, paths, capacity)  # type: ignore[return-value]


def fairness_metrics(per_flow_gbps: Mapping[str, Any], fair_bps: Mapping[Flow, float] | None) -> dict[str, float | None]:
    """``{"jain", "maxmin_rel_error"}`` of measured per-flow throughput against fair shares.

    ``per_flow_gbps`` maps ``"<src>-><dst>"`` to the measured Gb/s. Flows whose fair share is 0
    (a fully stopped hotspot) are left out; with no flow left both values are None.
    """
    ratios: list[float] = []
    errors: list[float] = []
    if fair_bps:
        for name, gbps in sorted(per_flow_gbps.items()):
            src, _, dst = name.partition("->")
            fair = fair_bps.get((src, dst))
            if fair is None or fair <= 0 or gbps is None:
                continue
            measured = float(gbps) * 1e9
            ratios.append(measured / fair)
            errors.append(abs(measured - fair) / fair)
    if not ratios:
        return {"jain": None, "maxmin_rel_error": None}
    squares = sum(x * x for x in ratios)
    jain = (sum(ratios) ** 2) / (len(ratios) * squares) if squares > 0 else None
    return {"jain": jain, "maxmin_rel_error": sum(errors) / len(errors)}
