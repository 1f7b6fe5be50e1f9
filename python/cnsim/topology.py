"""The network graph of a scenario: nodes, switches, links, ports and routes.

Implements the contract's ``[topology]`` kinds ``star``, ``graph`` and ``fat_tree`` and its
port naming (``<switch>/<neighbour>``). It is used for validation (known names, port names),
for the per-switch port counts behind the shared-memory pool and the PAUSE watermarks, and for
the paths the max-min fair shares are computed on (:mod:`cnsim.fairness`).

Routes:

* ``shortest`` (stars and graphs): a shortest path in hops, ties broken by declaration order
  (BFS). The engine's routing tables decide the simulated paths; on every catalog wiring the
  shortest path is unique, so both agree.
* ``dmodk`` (fat trees only): the same arithmetic as the engine (docs/core-config.md,
  ``crates/cnsim-core/src/topology/fattree.rs``): climb by the destination's digits, at level
  l up-port ⌊d/k^l⌋ mod k (d = the destination's index within its half), to the lowest common
  ancestor, then descend. :meth:`FatTree.route` computes one route in O(levels), so nothing
  here is quadratic in the number of hosts (the 2,048-host tree builds in milliseconds).

Fat trees (scenarios.md §5 e2cm-fat-tree, §6 eval-fat-tree-64, I-19): a k-ary n-tree of
switches with radix 2k (k^n hosts, n levels of k^(n−1) switches), or with ``merged_top`` two
k-ary n-trees, one per half of the hosts, whose top levels are merged (2·k^n hosts,
2(n−1)·k^(n−1) + k^(n−1) switches; every spine switch uses all 2k ports downward). A level-l
switch carries a word w of n−1 base-k digits; it links to the level-(l+1) switch w' iff w and
w' differ at most in digit l. Switches are named ``L<level>.<index>`` (level 0 = leaf; below the
top, half 1's indices follow half 0's). Host q attaches to leaf ⌊d/k⌋ of its half on that leaf's
port d mod k. Links are declared hosts first, then level by level upward, so every switch lists
its down ports before its up ports, in digit order, exactly as the engine numbers them.
"""

from __future__ import annotations

import itertools
from collections import deque
from dataclasses import dataclass, field

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
    """The shape of a (merged-top) k-ary n-tree and its d-mod-k routes."""

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
    def half_hosts(self) -> int:
        """Hosts per tree (per half when merged): k^n."""
        return int(self.k**self.levels)

    @property
    def hosts(self) -> int:
        return self.half_hosts * (2 if self.merged_top else 1)

    @property
    def per_level(self) -> int:
        """Switches per level of one tree: k^(n−1)."""
        return int(self.k ** (self.levels - 1))

    def halves(self, level: int) -> int:
        """Trees that have their own switches at ``level`` (2 below a merged top, else 1)."""
        return 2 if self.merged_top and level + 1 < self.levels else 1

    @property
    def n_switches(self) -> int:
        return sum(self.halves(level) * self.per_level for level in range(self.levels))

    def switch_name(self, level: int, half: int, word: int) -> str:
        return f"L{level}.{half * self.per_level + word}"

    def _digit(self, x: int, i: int) -> int:
        return int(x // self.k**i % self.k)

    def _with_digit(self, x: int, i: int, v: int) -> int:
        return int(x + (v - self._digit(x, i)) * self.k**i)

    def _up_half(self, level: int, half: int) -> int:
        return half if self.halves(level + 1) == 2 else 0

    def host_names(self) -> list[str]:
        return [str(q) for q in range(self.hosts)]

    def switch_names(self) -> list[str]:
        """Every switch, level by level from the leaves, half 0 before half 1."""
        return [
            self.switch_name(level, half, word)
            for level in range(self.levels)
            for half in range(self.halves(level))
            for word in range(self.per_level)
        ]

    def links(self, rate_bps: int, delay_ps: int) -> list[Link]:
        """Every link, in the engine's declaration order (host links, then upward)."""
        k, out = self.k, []
        for q in range(self.hosts):
            half, d = divmod(q, self.half_hosts)
            out.append(Link(self.switch_name(0, half, d // k), str(q), rate_bps, delay_ps))
        for level in range(self.levels - 1):
            for half in range(self.halves(level)):
                up_half = self._up_half(level, half)
                for word in range(self.per_level):
                    here = self.switch_name(level, half, word)
                    for j in range(k):
                        up = self.switch_name(level + 1, up_half, self._with_digit(word, level, j))
                        out.append(Link(here, up, rate_bps, delay_ps))
        return out

    def route(self, src: int, dst: int) -> list[str]:
        """The d-mod-k route from host ``src`` to host ``dst``: every device, hosts included."""
        if not (0 <= src < self.hosts and 0 <= dst < self.hosts):
            raise ValueError(f"hosts are 0..{self.hosts - 1}")
        if src == dst:
            return [str(src)]
        dst_half, d = divmod(dst, self.half_hosts)
        half, s = divmod(src, self.half_hosts)
        level, word = 0, s // self.k
        path = [str(src)]
        while True:
            path.append(self.switch_name(level, half, word))
            ancestor = (self.halves(level) == 1 or half == dst_half) and all(
                self._digit(word, i) == self._digit(d, i + 1) for i in range(level, self.levels - 1)
            )
            if ancestor:
                break
            half = self._up_half(level, half)
            word = self._with_digit(word, level, self._digit(d, level))
            level += 1
        while level > 0:  # descend from the lowest common ancestor
            level -= 1
            half = dst_half if self.halves(level) == 2 else 0
            word = self._with_digit(word, level, self._digit(d, level + 1))
            path.append(self.switch_name(level, half, word))
        path.append(str(dst))
        return path


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
        """Shortest route; only switches forward; ties broken by declaration order."""
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
        if dst not in prev or dst == src:
            return []
        hops = []
        here = dst
        while here != src:
            hops.append((prev[here], here))
            here = prev[here]
        return hops[::-1]
