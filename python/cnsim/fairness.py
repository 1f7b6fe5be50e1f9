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

Proportional fairness (maximise Σ log x_f, :func:`proportional_fair`) is offered as a second
reference for the parking lot (scenarios.md §3 qcnp-parking-lot: 1.67 / 3.33 Gb/s).

Checks (tests/test_fairness.py, tests/test_fairness_catalog.py): the allocations the spec
states — 0.5/7 Gb/s in zhb-og-multi-hop, 2.5/7.5 in the dual-CP cases, 2.0 in the parking lot and
the non-CM domain, 0.1 Gb/s per hot flow in e2cm-mixed-speed-og and the exact water-filling value
of e2cm-mixed-speed-ig (550 Mb/s = 68.75 MB/s, inside I-10's [62.5, 68.75] MB/s) — plus property
tests (no link over capacity, every flow demand-limited or bottlenecked).
"""

from __future__ import annotations

import itertools
from collections.abc import Hashable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from .scenario import Resolved

#: a flow and a link of a reference problem (any hashable names)
F = TypeVar("F", bound=Hashable)
L = TypeVar("L", bound=Hashable)

__all__ = [
    "water_fill",
    "proportional_fair",
    "reference_problem",
    "fair_shares",
    "proportional_shares",
    "fairness_metrics",
    "MAX_FLOWS",
]

#: above this many flows the reference allocation is not computed (fairness → null)
MAX_FLOWS = 200_000

Flow = tuple[str, str]


def water_fill(
    demands: Mapping[F, float],
    paths: Mapping[F, Sequence[L]],
    capacity: Mapping[L, float],
) -> dict[F, float]:
    """Max-min fair rates of flows with ``demands`` over links of ``capacity``.

    ``paths[f]`` lists the links flow ``f`` crosses (a link missing from ``capacity`` is
    unconstrained). Returns ``{flow: rate}``. A flow with no links is limited only by its demand.

    Progressive filling: every unfrozen flow holds the same rate, the fill *level*; the level
    rises to the next event (a flow reaches its demand, or a link saturates), the flows that hit
    it freeze, and the filling continues. Each round costs O(links with unfrozen users), and
    frozen flows are removed from their links once, so a few hundred thousand flows are fine.
    """
    rate: dict[F, float] = {f: 0.0 for f in demands}
    remaining = {link: float(c) for link, c in capacity.items()}
    scale = max([*remaining.values(), *demands.values(), 1.0])
    eps = 1e-12 * scale
    users: dict[L, list[F]] = {}
    active: set[F] = set()
    for f, d in demands.items():
        if d > eps:
            active.add(f)
            for link in dict.fromkeys(paths.get(f, ())):
                if link in remaining:
                    users.setdefault(link, []).append(f)
    n_active = {link: len(fs) for link, fs in users.items()}
    by_demand = sorted(active, key=lambda f: demands[f])
    next_demand = 0  # index into by_demand of the smallest unfrozen demand
    level = 0.0
    while active:
        while by_demand[next_demand] not in active:
            next_demand += 1
        step = demands[by_demand[next_demand]] - level
        for link, n in n_active.items():
            if n:
                step = min(step, remaining[link] / n)
        step = max(step, 0.0)
        level += step
        done: set[F] = set()
        for link, n in n_active.items():
            if n:
                remaining[link] -= step * n
                if remaining[link] <= eps:
                    done.update(f for f in users[link] if f in active)
        for f in by_demand[next_demand:]:
            if demands[f] - level > eps:
                break
            if f in active:
                done.add(f)
        for f in done:
            rate[f] = min(level, demands[f])
            active.discard(f)
            for link in dict.fromkeys(paths.get(f, ())):
                if link in n_active:
                    n_active[link] -= 1
        n_active = {link: n for link, n in n_active.items() if n}
    return rate


def proportional_fair(
    demands: Mapping[F, float],
    paths: Mapping[F, Sequence[L]],
    capacity: Mapping[L, float],
    tol: float = 1e-9,
    max_rounds: int = 100_000,
) -> dict[F, float]:
    """Proportionally fair rates: maximise Σ log x_f subject to link capacities and x_f ≤ demand.

    Solved in the dual: with a price p_l ≥ 0 per link, x_f = min(d_f, 1/Σ_{l∈f} p_l). Each
    round sets every link's price, one link at a time, so that the link is exactly full (or to 0
    if it is not full at price 0) given the other prices (dual coordinate ascent; the dual is
    convex and smooth where it matters, so this converges). Meant for the small wirings of the
    catalog (qcnp-parking-lot: 1.67 Gb/s per hot flow, 3.33 Gb/s per cold flow).
    """
    scale = max([*capacity.values(), *demands.values(), 1.0])
    dem = {f: d / scale for f, d in demands.items() if d > 0}
    cap = {link: c / scale for link, c in capacity.items()}
    flow_links = {f: [link for link in dict.fromkeys(paths.get(f, ())) if link in cap] for f in dem}
    users: dict[L, list[F]] = {}
    for f, links in flow_links.items():
        for link in links:
            users.setdefault(link, []).append(f)
    price = {link: 0.0 for link in users}

    def rate(f: F, extra: float = 0.0, skip: L | None = None) -> float:
        total = extra + sum(price[link] for link in flow_links[f] if link != skip)
        return dem[f] if total <= 0 else min(dem[f], 1.0 / total)

    for _ in range(max_rounds):
        change = 0.0
        for link, fs in users.items():
            if sum(rate(f, 0.0, link) for f in fs) <= cap[link]:
                new = 0.0
            else:  # the load falls as the price rises: bisection on [lo, hi]
                lo, hi = 0.0, 1.0
                while sum(rate(f, hi, link) for f in fs) > cap[link]:
                    hi *= 2.0
                for _ in range(200):
                    mid = (lo + hi) / 2
                    if sum(rate(f, mid, link) for f in fs) > cap[link]:
                        lo = mid
                    else:
                        hi = mid
                    if hi - lo <= 1e-15 * max(hi, 1.0):
                        break
                new = hi
            change = max(change, abs(new - price[link]) / max(new, price[link], 1e-300))
            price[link] = new
        if change < tol:
            break
    out = {f: 0.0 for f in demands}
    out.update({f: rate(f) * scale for f in dem})
    return out


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
    for a, b in itertools.pairwise(cuts):
        mid = (a + b) / 2
        f = 1.0
        for h in r.doc.hotspots:  # a later entry overrides an earlier one
            if h.node == node and h.start <= mid < h.end:
                f = h.rate
        total += f * (b - a)
    return total / (t1 - t0)


RefProblem = tuple[dict[Flow, float], dict[Flow, list[tuple[str, str]]], dict[tuple[str, str], float]]


def reference_problem(r: Resolved) -> RefProblem | None:
    """``(demands, paths, capacity)`` of resolved scenario ``r`` in bit/s; None if too large.

    Demands are the offered rates averaged over the measurement window; paths are the routes
    of :meth:`cnsim.topology.Network.path` (d-mod-k on fat trees); capacities are the link rates
    per direction, the port feeding a hot node at its window-average service rate.
    """
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
    return demands, paths, capacity


def fair_shares(r: Resolved) -> dict[Flow, float] | None:
    """Max-min fair rate (bit/s) of every flow of resolved scenario ``r``; None if too large."""
    problem = reference_problem(r)
    if problem is None:
        return None
    return water_fill(*problem)


def proportional_shares(r: Resolved) -> dict[Flow, float] | None:
    """Proportionally fair rate (bit/s) of every flow of ``r`` (small wirings); None if too large."""
    problem = reference_problem(r)
    if problem is None or len(problem[0]) > 5_000:
        return None
    return proportional_fair(*problem)


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
