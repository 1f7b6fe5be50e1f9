"""The network graph of a scenario: nodes, switches, links, ports and routes.

Implements the contract's ``[topology]`` kinds ``star``, ``graph`` and ``fat_tree`` and its
port naming (``<switch>/<neighbour>``). It is used for validation (known names, port names),
for the per-switch port counts behind the shared-memory pool and the PAUSE watermarks, and for
the paths the max-min fair shares are computed on (:mod:`cnsim.fairness`).

Routes:

* ``shortest`` (stars and graphs): a shortest path in hops, ties broken by declaration order
  (BFS). The engine's routing tables decide the simulated paths; on every catalog wiring the
  shortest path is unique, so both agree.
* ``dmodk`` (fat trees only): the engine's own routes (docs/core-config.md): climb by the
  destination's digits to the lowest common ancestor, then descend.

Fat trees (scenarios.md §5 e2cm-fat-tree, §6 eval-fat-tree-64, I-19): k-ary n-trees of switches
with radix 2k, or two of them merged at the top. They are built once, by the engine
(``cnsim._core.FatTree``, ``crates/cnsim-core/src/topology/fattree.rs``, which documents the
construction): names ``L<level>.<index>``, links in the engine's declaration order and d-mod-k
routes come from there, so the front end and the engine cannot disagree.
"""

from __future__ import annotations

import itertools
from collections import deque
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

__all__ = ["Link", "Network", "FatTree"]


@dataclass(frozen=True)
class Link:
    """A full-duplex link between ``a`` and ``b``; rate in bit/s, one-way delay in ps."""

    a: str
    b: str
    rate_bps: int
    delay_ps: int


@dataclass(frozen=True)
class FatTree:
    """The shape of a (merged-top) k-ary n-tree; its construction and d-mod-k routes are the
    engine's (``cnsim._core.FatTree``, crates/cnsim-core/src/topology/fattree.rs), built once on
    first use — the front end and the engine cannot disagree on a name or a route."""

    radix: int
    levels: int
    merged_top: bool = False

    def __post_init__(self) -> None:
        if self.radix < 2 or self.radix % 2:
            raise ValueError(f"the radix must be even and at least 2 (given {self.radix})")
        if self.levels < 1 or (self.merged_top and self.levels < 2):
            raise ValueError(f"levels must be >= 1 (>= 2 with merged_top; given {self.levels})")

    @property
    def k(self) -> int:
        """Down-ports (and up-ports) per switch: radix / 2."""
        return self.radix // 2

    @property
    def hosts(self) -> int:
        """k^n hosts per tree, twice that when merged (a count, known before anything is built)."""
        return int(self.k**self.levels) * (2 if self.merged_top else 1)

    @cached_property
    def _engine(self) -> Any:
        from .engine import engine

        return engine().FatTree(self.radix, self.levels, self.merged_top)

    def host_names(self) -> list[str]:
        return list(self._engine.host_names())

    def switch_names(self) -> list[str]:
        """Every switch, level by level from the leaves, half 0 before half 1."""
        return list(self._engine.switch_names())

    def links(self, rate_bps: int, delay_ps: int) -> list[Link]:
        """Every link, in the engine's declaration order (host links, then upward)."""
        return [Link(a, b, rate_bps, delay_ps) for a, b in self._engine.links()]

    def route(self, src: int, dst: int) -> list[str]:
        """The d-mod-k route from host ``src`` to host ``dst``: every device, hosts included."""
        if not (0 <= src < self.hosts and 0 <= dst < self.hosts):
            raise ValueError(f"hosts are 0..{self.hosts - 1}")
        return list(self._engine.route(src, dst))


@dataclass
class Network:
    """Nodes (end stations), switches and links, plus derived adjacency.

    ``fat_tree`` is set for fat trees; ``routing`` is ``"shortest"`` or ``"dmodk"`` (fat trees).
    """

    nodes: list[str]
    switches: list[str]
    links: list[Link]
    fat_tree: FatTree | None = None
    routing: str = "shortest"
    _adj: dict[str, list[tuple[str, Link]]] = field(default_factory=dict, repr=False)
    _switch_set: set[str] = field(default_factory=set, repr=False)
    _node_index: dict[str, int] = field(default_factory=dict, repr=False)
    #: the whole search from each source asked for so far (see `_bfs`)
    _trees: dict[str, dict[str, str]] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self._switch_set = set(self.switches)
        self._adj = {name: [] for name in [*self.switches, *self.nodes]}
        for link in self.links:
            self._adj.setdefault(link.a, []).append((link.b, link))
            self._adj.setdefault(link.b, []).append((link.a, link))
        self._node_index = {n: i for i, n in enumerate(self.nodes)}

    @classmethod
    def star(cls, nodes: list[str], rate_bps: int, delay_ps: int, switch: str = "S1") -> Network:
        """One switch ``S1`` with every node on its own link."""
        return cls(nodes, [switch], [Link(switch, n, rate_bps, delay_ps) for n in nodes])

    @classmethod
    def tree(cls, shape: FatTree, rate_bps: int, delay_ps: int, routing: str = "dmodk") -> Network:
        """The fat tree ``shape``: hosts ``"0"``…``"M-1"``, switches ``L<level>.<index>``."""
        return cls(shape.host_names(), shape.switch_names(), shape.links(rate_bps, delay_ps), shape, routing)

    def is_switch(self, name: str) -> bool:
        return name in self._switch_set

    def neighbours(self, name: str) -> list[tuple[str, Link]]:
        """Neighbours of ``name`` with the link to each, in declaration order."""
        return self._adj.get(name, [])

    def ports(self) -> list[str]:
        """Every switch egress port, ``<switch>/<neighbour>``, in declaration order."""
        out: list[str] = []
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

    def route(self, src: str, dst: str) -> list[str]:
        """Every device on the route from ``src`` to ``dst`` (both included); [] if unreachable."""
        if self.fat_tree is not None and self.routing == "dmodk":
            return self.fat_tree.route(self._node_index[src], self._node_index[dst])
        hops = self._bfs(src, dst)
        return [src, *(b for _, b in hops)] if hops else []

    def path(self, src: str, dst: str) -> list[tuple[str, str]]:
        """Directed hops ``(from, to)`` of the route from ``src`` to ``dst``. Empty if unreachable."""
        if self.fat_tree is not None and self.routing == "dmodk":
            devices = self.route(src, dst)
            return list(itertools.pairwise(devices))
        return self._bfs(src, dst)

    def _bfs(self, src: str, dst: str) -> list[tuple[str, str]]:
        """Shortest route; only switches forward; ties broken by declaration order. One search
        from ``src`` serves every destination (a search stopped at ``dst`` gives it the same
        predecessors): the max-min reference asks for the route of every pair, and a search
        per pair took 0.28 s of each ``zhb-og-n128`` run's summary (16,256 pairs)."""
        prev = self._trees.get(src)
        if prev is None:
            prev = self._trees[src] = self.predecessors(src)
        if dst not in prev or dst == src:
            return []
        hops = []
        here = dst
        while here != src:
            hops.append((prev[here], here))
            here = prev[here]
        return hops[::-1]

    def predecessors(self, src: str, dst: str | None = None) -> dict[str, str]:
        """Breadth-first search from ``src`` (to ``dst``, or everywhere) over the shortest routes
        (stars and graphs): each device reached, in the order reached, with its predecessor on
        its route; only switches forward; ties by declaration order (a search stopped at ``dst``
        gives it the predecessor the whole search does)."""
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
        return prev
