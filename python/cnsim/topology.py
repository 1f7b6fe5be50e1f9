"""The network graph of a scenario: nodes, switches, links, ports and routes.

Implements the contract's ``[topology]`` kinds ``star`` and ``graph`` and its port naming
(``<switch>/<neighbour>``). It is used for validation (known names, port names), for the
per-switch port counts behind the shared-memory pool and the PAUSE watermarks, and for the
paths the max-min fair shares are computed on (:mod:`cnsim.fairness`). Routes here are
shortest paths with ties broken by declaration order; the engine's routing tables decide the
simulated paths (on the single-switch scenarios both are the only path).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

__all__ = ["Link", "Network"]


@dataclass(frozen=True)
class Link:
    """A full-duplex link between ``a`` and ``b``; rate in bit/s, one-way delay in ps."""

    a: str
    b: str
    rate_bps: int
    delay_ps: int


@dataclass
class Network:
    """Nodes (end stations), switches and links, plus derived adjacency."""

    nodes: list[str]
    switches: list[str]
    links: list[Link]
    _adj: dict[str, list[tuple[str, Link]]] = field(default_factory=dict, repr=False)
    _switch_set: set[str] = field(default_factory=set, repr=False)

    def __post_init__(self) -> None:
        self._switch_set = set(self.switches)
        self._adj = {name: [] for name in [*self.switches, *self.nodes]}
        for link in self.links:
            self._adj.setdefault(link.a, []).append((link.b, link))
            self._adj.setdefault(link.b, []).append((link.a, link))

    @classmethod
    def star(cls, nodes: list[str], rate_bps: int, delay_ps: int, switch: str = "S1") -> Network:
        """One switch ``S1`` with every node on its own link."""
        return cls(nodes, [switch], [Link(switch, n, rate_bps, delay_ps) for n in nodes])

    def is_switch(self, name: str) -> bool:
        return name in self._switch_set

    def neighbours(self, name: str) -> list[tuple[str, Link]]:
        """Neighbours of ``name`` with the link to each, in declaration order."""
        return self._adj.get(name, [])

    def ports(self) -> list[str]:
        """Every switch egress port, ``<switch>/<neighbour>``, in declaration order."""
        out = []
        for sw in self.switches:
            out.extend(f"{sw}/{nb}" for nb, _ in self.neighbours(sw))
        return out

    def port_count(self, switch: str) -> int:
        """Number of ports of ``switch`` (N of the shared pool N·M)."""
        return len(self.neighbours(switch))

    def node_link(self, node: str) -> Link:
        """The (single) link of an end node."""
        return self.neighbours(node)[0][1]

    def node_rate(self, node: str) -> int:
        """The link rate of an end node, bit/s."""
        return self.node_link(node).rate_bps

    def port_link(self, port: str) -> Link:
        """The link behind port ``<switch>/<neighbour>``."""
        sw, nb = port.split("/", 1)
        for other, link in self.neighbours(sw):
            if other == nb:
                return link
        raise KeyError(port)

    def feeding_port(self, node: str) -> str:
        """The switch egress port that feeds ``node`` (``S1/1`` for node 1 on a star)."""
        sw = self.neighbours(node)[0][0]
        return f"{sw}/{node}"

    def path(self, src: str, dst: str) -> list[tuple[str, str]]:
        """Directed hops ``(from, to)`` of a shortest route from ``src`` to ``dst``.

        Only switches forward; ties are broken by declaration order (BFS). Empty if unreachable.
        """
        prev: dict[str, str] = {src: src}
        queue = deque([src])
        while queue:
            here = queue.popleft()
            if here == dst:
                break
            if here != src and not self.is_switch(here):
                continue  # end nodes do not forward
            for nb, _ in self.neighbours(here):
                if nb not in prev:
                    prev[nb] = here
                    queue.append(nb)
        if dst not in prev:
            return []
        hops = []
        here = dst
        while here != src:
            hops.append((prev[here], here))
            here = prev[here]
        return hops[::-1]
