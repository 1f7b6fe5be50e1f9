"""Building the :class:`~cnsim.topology.Network` of a document (star, graph, fat tree) and the
PAUSE headroom arithmetic of algorithms.md D12."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from ..errors import Problem, missing
from ..expr import Expr
from ..topology import FatTree, Link, Network
from ..units import (
    PS_PER_S,
)
from .fields import MAX_SWITCH_PORTS
from .schema import ScenarioDoc


def _too_many_ports(net: Network, problems: list[Problem], key: str, value: Any) -> bool:
    """A problem under ``key`` if a switch of ``net`` has more ports than the engine allows."""
    for sw in net.switches:
        n = net.port_count(sw)
        if n > MAX_SWITCH_PORTS:
            problems.append(Problem(key, value, f"switch {sw} would have {n} ports; the engine allows at most {MAX_SWITCH_PORTS} per switch"))
            return True
    return False


def build_fat_tree(doc: ScenarioDoc, problems: list[Problem]) -> tuple[Network | None, list[str]]:
    """``kind = "fat_tree"``: the engine's construction (docs/core-config.md), names included.
    The shape (even radix, 2 to 65,536 hosts, ports per switch) was checked by the schema."""
    topo = doc.topology
    spec = topo.fat_tree
    if spec is None:  # the schema requires it
        problems.append(Problem("topology.fat_tree", missing(), 'kind = "fat_tree" needs {radix, levels, merged_top}'))
        return None, []
    shape = FatTree(spec.radix, spec.levels, spec.merged_top)
    for key in ("switches", "links"):
        if getattr(topo, key):
            problems.append(Problem(f"topology.{key}", "[...]", 'only used with kind = "graph" (the fat tree is built from topology.fat_tree)'))
    if "nodes" in topo.model_fields_set:
        given = topo.nodes if isinstance(topo.nodes, int) else len(topo.nodes)
        names_ok = isinstance(topo.nodes, int) or topo.nodes == shape.host_names()
        if given != shape.hosts or not names_ok:
            problems.append(Problem("topology.nodes", topo.nodes, f'this fat tree has {shape.hosts} hosts named "0".."{shape.hosts - 1}"; leave topology.nodes out'))
    net = Network.tree(shape, doc.links.rate, doc.links.delay, topo.routing or "dmodk")
    return net, list(net.nodes)


def build_network(doc: ScenarioDoc, problems: list[Problem]) -> tuple[Network | None, list[str]]:
    topo = doc.topology
    rate, delay = doc.links.rate, doc.links.delay
    if topo.kind == "fat_tree":
        return build_fat_tree(doc, problems)
    if topo.fat_tree is not None:
        problems.append(Problem("topology.fat_tree", topo.fat_tree.model_dump(), 'only used with kind = "fat_tree"'))
    if topo.routing == "dmodk":
        problems.append(Problem("topology.routing", "dmodk", 'd-mod-k routing needs kind = "fat_tree"; use "shortest"'))
    nodes = [str(i) for i in range(1, topo.nodes + 1)] if isinstance(topo.nodes, int) else list(topo.nodes)
    if topo.kind == "star":
        for key in ("switches", "links"):
            if getattr(topo, key):
                problems.append(Problem(f"topology.{key}", "[...]", 'only used with kind = "graph"'))
        if "S1" in nodes:
            problems.append(Problem("topology.nodes", topo.nodes, 'the name "S1" is the star\'s switch'))
        if len(nodes) > MAX_SWITCH_PORTS:
            given = topo.nodes if isinstance(topo.nodes, int) else f"{len(nodes)} names"
            problems.append(Problem("topology.nodes", given, f"a star's switch S1 has a port per node and the engine allows at most {MAX_SWITCH_PORTS} ports per switch: at most {MAX_SWITCH_PORTS} nodes (a graph or fat tree spreads more over several switches)"))
            return None, nodes
        return Network.star(nodes, rate, delay), nodes
    # graph
    switches = list(topo.switches)
    if not switches:
        problems.append(Problem("topology.switches", [], 'kind = "graph" needs at least one switch'))
    clash = set(switches) & set(nodes)
    if clash:
        problems.append(Problem("topology.switches", switches, f"names used for both a node and a switch: {sorted(clash)}"))
    if len(set(switches)) != len(switches):
        problems.append(Problem("topology.switches", switches, "switch names must be unique"))
    if clash or len(set(switches)) != len(switches):
        return None, nodes  # names are ambiguous: no network to check the rest against
    node_set = set(nodes)  # looked up once a link: a list made a 60,000-node graph take 107 s
    known = set(switches) | node_set
    everything = [*switches, *nodes]  # named once, at most 20, however many links are wrong
    listing = _names(everything, 20)
    links: list[Link] = []
    seen: set[frozenset[str]] = set()
    for i, ls in enumerate(topo.links):
        ok = True
        for end in ("a", "b"):
            name = getattr(ls, end)
            if name not in known:
                problems.append(Problem(f"topology.links.{i}.{end}", name, f"unknown node or switch; known: {listing}"))
                ok = False
        if ok and ls.a == ls.b:
            problems.append(Problem(f"topology.links.{i}", f"{ls.a}-{ls.b}", "a link needs two different ends"))
            ok = False
        if ok and ls.a in node_set and ls.b in node_set:
            problems.append(Problem(f"topology.links.{i}", f"{ls.a}-{ls.b}", "a link must have a switch at one end at least"))
            ok = False
        pair = frozenset((ls.a, ls.b))
        if ok and pair in seen:
            problems.append(Problem(f"topology.links.{i}", f"{ls.a}-{ls.b}", "duplicate link"))
            ok = False
        seen.add(pair)
        if ok:
            links.append(Link(ls.a, ls.b, ls.rate if ls.rate is not None else rate, ls.delay if ls.delay is not None else delay))
    net = Network(nodes, switches, links)
    if _too_many_ports(net, problems, "topology.links", f"{len(links)} links"):
        return None, nodes
    wired = True
    for node in nodes:
        n = len(net.neighbours(node))
        if n != 1:
            problems.append(Problem("topology.links", f"node {node}", f"every node needs exactly one link (node {node} has {n})"))
            wired = False
    if wired:
        wired = _connected(net, problems)
    return (net if wired else None), nodes


def _names(names: list[str], most: int) -> str:
    """At most ``most`` names for a message, then how many there are in all."""
    return ", ".join(names[:most]) + (f", ... ({len(names)} in all)" if len(names) > most else "")


def _connected(net: Network, problems: list[Problem]) -> bool:
    """Every switch and node reachable from the first switch over the links (a switch without
    links, or a part of the graph on its own, has no route to or from the rest)."""
    start = net.switches[0]
    seen = {start}
    stack = [start]
    while stack:
        for other, _ in net.neighbours(stack.pop()):
            if other not in seen:
                seen.add(other)
                stack.append(other)
    apart = [name for name in [*net.switches, *net.nodes] if name not in seen]
    if not apart:
        return True
    shown = _names(apart, 10)
    problems.append(Problem("topology.links", f"{len(net.links)} links",
                            f"the network is not connected: {shown} cannot be reached from {start}; link every switch and node into one network"))
    return False


def per_switch(value: Any) -> bool:
    """An XOFF expression whose value depends on the switch (names ``auto`` or ``ports``)."""
    return isinstance(value, Expr) and bool(value.names & {"auto", "ports"})


def rtt_bw(delay_ps: int, proc_ps: int, rate_bps: int, frame: int) -> Fraction:
    """D12: rtt·bw = 2·(propagation + processing)·rate/8 + 2 × frame_size bytes (exact)."""
    return Fraction(2 * (delay_ps + proc_ps) * rate_bps, 8 * PS_PER_S) + 2 * frame


