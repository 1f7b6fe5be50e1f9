"""Resource bounds before work starts (issue 13): estimate what a run will cost from its core
config (docs/core-config.md) and refuse, with the estimate, what would exceed the machine.

The estimate is deliberately coarse — within a small factor of what a run takes (measured
against it in docs/robustness.md) — because its job is to stop a run that would take hours or
exhaust memory *before* it starts, in well under a second:

* **frames** = Σ over sources of load × link rate × active time / frame bits (Bernoulli slots);
* **events** ≈ frames × (2 events per link crossed + 1), with the path length of the topology
  (2 links through a star, up to 2·levels in a fat tree, 1 + switches in a general graph);
  with a scheme whose flows probe their path every period T whatever the congestion (FECN,
  §6), each probe and its reply cross the path too: one probe a period for every pair that
  sends in it, Σ over the sources of k · d·(1 − (1 − 1/d)^(a/k)), k = max(t/T, 1) periods
  (a pair probes with its first frame), for a source active for t with a frames over d
  destinations;
  with PAUSE, the deadlock check too: one every quarter threshold (10 ms by default);
* **series memory**: every bin × every recorded entity, in the engine (8 B per value) and in
  the long-format tables Python builds from them (about 48 B per row);
* **finite flows** (TG-GEO): every completed flow keeps its completion time for the exact FCT
  statistics (about 32 B per flow with its slot and the vector's slack);
* **recorded flows** (``metrics.per_flow``): each costs Python memory and time after the engine
  (its series rows' names, its summary.json entries, its time CV): about 2.5 KiB and 50 us per
  flow, from ``per_flow = "all"`` on 512 hosts (261,632 flows, 1 ms: 0.6 GB peak and 14 s in
  all on a loaded machine);
* **wall time**: events at the engine's speed, which falls as the network outgrows the caches
  (:func:`events_per_s`), plus the recorded flows' post-processing;
* **engine memory**: per node and per port state, the dense (source, destination) tables of
  the adapters' VOQ index and the recorder's flow slots (nodes² × 8 B, used up to 256 nodes),
  and — with unlimited NIC ingress — the VOQ store's bytes for every frame that could wait in a
  VOQ (once the traffic may congest a port, as for the switches below, every frame generated
  from then on: the worst case of total hogging; otherwise none): 64/23 B per frame where the
  generators' grids put 23 times or more in a cache
  line, as in every shipped scenario, else 64/11;
* **frames on the wires**: every link busy both ways, rate × delay / frame bits frames each,
  at 256 B a frame (the frame, its arrival event and the tables' growth; 230 B measured with
  1 ms links on the 2,048-host tree);
* **frames in the switches**: once the traffic may congest a port (a hotspot in the run,
  named flows, or uniform traffic that offers some link more than its rate along the routes —
  a chain's middle link, a star's slower node; never a fat tree), every switch buffer full in
  the worst case — PAUSE holds them so, from the congested port back — up to the frames
  generated from then on, 256 B a frame (140 B measured at the peak of a 16-port switch
  holding 283,000); uniform traffic that fits counts none;
* **rate-limited flows**: a scheme that limits every flow from its first frame (E2CM probing
  only, ``bcn = false``, algorithms.md D17; FECN, §6 — the engine says which) keeps each
  (source, destination) pair's VOQ, limiter and reaction point for the rest of the run, 768 B
  a pair (measured on the 2,048-host tree after 1 and 3 ms: E2CM 551 and 401 B, FECN 631 and
  462 B with its probes' timers and frames): the expected number of pairs the sources'
  arrivals reach (a uniform source's arrivals over the other nodes).

A run is refused when its memory estimate exceeds :data:`MEMORY_SHARE` of the machine's
physical memory, or its event estimate exceeds :data:`MAX_EVENTS` (several hours at the
engine's speed). ``force=True`` skips the refusal (the caller says "I know").

Runs that execute side by side (a sweep's ``--workers``) share the machine: :func:`check_parallel`
refuses a worker count whose runs in flight would together exceed the same share of memory.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from typing import Any

from .errors import EngineMissing, ResourceError
from .topology import Link, Network

__all__ = ["Estimate", "estimate", "events_per_s", "check", "check_parallel", "physical_memory", "MAX_EVENTS", "MAX_WALL_S", "MEMORY_SHARE", "FORCE_HINT", "human_time", "human_bytes"]

#: Refuse runs above this many events (about 2 hours at 15 M events/s).
MAX_EVENTS = 1.0e11
#: Refuse runs whose estimated peak memory exceeds this share of physical memory.
MEMORY_SHARE = 0.8
#: Engine speed used to turn events into an expected wall time (events/s, one core), up to
#: :data:`_CACHE_NODES` nodes; larger networks run slower (:func:`events_per_s`).
EVENTS_PER_S = 15.0e6
#: Refuse runs expected to take longer than the event bound's time (about 2 hours).
MAX_WALL_S = MAX_EVENTS / EVENTS_PER_S

_PS_PER_S = 10**12
_NODE_BYTES = 2048  # NIC, generator, recorder state per node
_PORT_BYTES = 512  # transmitter, output queue and CP state per port
_DENSE_NODES = 256  # up to here the engine's VOQ index and flow slots are dense tables
_DENSE_PAIR_BYTES = 8  # of them, per (source, destination): a VOQ slot and a recorder slot
#: a (source, destination) pair that keeps a rate limiter: its VOQ slot (320 B), limiter and
#: reaction point, its index entry and the VOQ vector's slack (401–631 B measured on 2,048 hosts)
_LIMITED_FLOW_BYTES = 768
#: a frame on a wire or in a switch buffer: the frame (128 B), its event or queue entry, the
#: pool's slack (a switch-buffered frame measured 140 B at the peak of a run)
_FRAME_BYTES = 256
_ENGINE_VALUE_BYTES = 8
_PYTHON_ROW_BYTES = 48
_FLOW_BYTES = 32  # a completion time (8 B) with a growing vector's slack, and its flow slot
_BASE_BYTES = 120 * 2**20  # the Python process itself (interpreter, numpy, pyarrow)
_RECORDED_FLOW_BYTES = 2560  # a recorded flow's names, summary entries and rows in Python
_RECORDED_FLOW_S = 50e-6  # and its post-processing time
_CACHE_NODES = 512  # up to here the engine's state stays mostly in cache
_SPEED_EXPONENT = 0.5  # beyond, events/s falls as (nodes / _CACHE_NODES) ** -0.5


@dataclass(frozen=True)
class Estimate:
    """What a run is expected to cost (upper bounds within a small factor)."""

    nodes: int
    ports: int
    bins: int
    series_rows: int
    frames: float
    events: float
    memory_bytes: int
    #: the part of ``memory_bytes`` that is frames waiting in unlimited source VOQs (worst case)
    backlog_bytes: int
    #: the part of ``memory_bytes`` that is frames the switches may hold (worst case)
    buffered_bytes: int
    #: flows whose throughput is recorded (``metrics.per_flow``)
    recorded_flows: int
    #: (source, destination) pairs that keep a rate limiter for the rest of the run (expected)
    limited_flows: float
    #: periodic probes sent (each with its reply, counted in ``events``)
    probes: float

    @property
    def wall_s(self) -> float:
        """Expected wall time on one core: the engine at its speed for this size, then the
        recorded flows' post-processing."""
        return self.events / events_per_s(self.nodes) + self.recorded_flows * _RECORDED_FLOW_S

    def describe(self) -> str:
        """One line: the estimate in human units."""
        flows = f", {self.recorded_flows:,} recorded flows" if self.recorded_flows else ""
        if self.limited_flows:
            flows += f", about {self.limited_flows:.3g} rate-limited flows"
        if self.probes:
            flows += f", about {self.probes:.3g} probes"
        return (
            f"{self.nodes:,} nodes, {self.ports:,} ports, {self.bins:,} bins x series = {self.series_rows:,} series rows{flows}, "
            f"about {self.frames:.3g} frames and {self.events:.3g} events (~{human_time(self.wall_s)} at "
            f"{events_per_s(self.nodes) / 1e6:.3g} M events/s), peak memory about {human_bytes(self.memory_bytes)}"
        )


def events_per_s(nodes: int) -> float:
    """The engine's expected speed for a network of ``nodes`` nodes: :data:`EVENTS_PER_S` while
    its state stays mostly in cache, then falling as the square root of the size (measured:
    3.5–5 M events/s at 2,048 hosts and about 1.5 M at 20,000–65,000 on a machine that runs 16
    hosts at 17–23 M; docs/performance.md, docs/robustness.md)."""
    if nodes <= _CACHE_NODES:
        return EVENTS_PER_S
    return EVENTS_PER_S * float((nodes / _CACHE_NODES) ** -_SPEED_EXPONENT)


def human_bytes(n: float) -> str:
    """A size in binary units (B, KiB … PiB)."""
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if abs(n) < 1024 or unit == "PiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} PiB"  # pragma: no cover (loop returns)


def human_time(s: float) -> str:
    """A duration in the unit a person reads it in (s, min, h, days, years; "forever")."""
    if not math.isfinite(s):
        return "forever"
    if s < 120:
        return f"{s:.1f} s"
    if s < 7200:
        return f"{s / 60:.0f} min"
    if s < 3 * 86400:
        return f"{s / 3600:.1f} h"
    if s < 1e3 * 365 * 86400:
        return f"{s / 86400:.3g} days"
    return f"{s / (365 * 86400):.3g} years"


def physical_memory() -> int:
    """Bytes of physical memory of this machine (0 when it cannot be read)."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):  # pragma: no cover (platform without sysconf)
        return 0


def _fat_tree_size(ft: dict[str, Any]) -> tuple[int, int, int]:
    """(hosts, switches, links) of a k-ary n-tree or merged-top tree (docs/core-config.md)."""
    k = int(ft["radix"]) // 2
    n = int(ft["levels"])
    per_level = k ** (n - 1)
    if ft.get("merged_top"):
        hosts = 2 * k**n
        switches = 2 * (n - 1) * per_level + per_level
    else:
        hosts = k**n
        switches = n * per_level
    links = hosts + (switches - per_level) * k  # a host link each, and k up-links from every switch below the top
    return hosts, switches, links


def _topology_size(topo: dict[str, Any]) -> tuple[int, int, int, int]:
    """(nodes, switches, ports, links crossed by a frame on a long path)."""
    ft = topo.get("fat_tree")
    if ft:
        nodes, switches, links = _fat_tree_size(ft)
        return nodes, switches, 2 * links, 2 * int(ft["levels"])
    nodes = len(topo.get("nodes", []))
    switches = len(topo.get("switches", []))
    links = len(topo.get("links", []))
    path = 2 if switches <= 1 else 1 + switches
    return nodes, switches, 2 * links, path


#: The engine's VOQ store (``net/voq_store.rs``): a waiting frame's time takes 64/23 B where the
#: generators' slot grids share a unit that reaches far enough (a base time and increments from
#: it in one byte below 240 units, two below 4,080: 45 times to a 64-byte line when each takes
#: one, 23 when each takes two, as a hogging VOQ's do at 1,024 hosts), else 64/11 B (the wide
#: layout: 11 times of any spacing to a line).
_GRID_FRAME_BYTES = 64 / 23
_WIDE_FRAME_BYTES = 64 / 11
#: The grid layout's reach: 65,535 units past a chunk's base, which must cover 4,096 of the
#: longest slot (``GRID_MAX_OFFSET``, ``GRID_MIN_REACH_SLOTS``).
_GRID_MAX_OFFSET = 65_535
_GRID_MIN_REACH_SLOTS = 4096
_GRID_MAX_UNIT = 1 << 47  # ps: the longest unit whose quotient test is exact (voq_store::GRID_MAX_UNIT)


def grid_unit(core: dict[str, Any]) -> int | None:
    """The unit (ps) of the generators' slot grids in which the engine's VOQ store keeps waiting
    frames' times (``voq_store::grid_unit``): the greatest common divisor of the slots (one
    frame at the node's link rate, rounded up to a picosecond) and of the distances between the
    grids' origins, or ``None`` (the wide layout) where it reaches fewer than 4,096 of the
    longest slot or is longer than 2^47 ps. A test checks it against the engine's for every
    shipped scenario."""
    topo = core["topology"]
    ft = topo.get("fat_tree")
    link_rate: dict[str, int] = {}
    for link in topo.get("links", []):
        for end in (link.get("a"), link.get("b")):
            link_rate[str(end)] = int(link.get("rate_bps", 0))
    frame_bits = 8 * int(core["traffic"]["frame_size"])
    unit, first, longest = 0, None, 0
    for src in core["traffic"]["sources"]:
        rate = int(ft["rate_bps"]) if ft else link_rate.get(str(src["node"]), 0)
        if rate <= 0:
            return None
        slot = -(-frame_bits * _PS_PER_S // rate)
        origin = int(src.get("start_ps") or 0)
        first = origin if first is None else first
        unit = math.gcd(unit, slot, abs(origin - first))
        longest = max(longest, slot)
    on_grid = 0 < unit <= _GRID_MAX_UNIT and unit * _GRID_MAX_OFFSET >= longest * _GRID_MIN_REACH_SLOTS
    return unit if on_grid else None


def _first_hotspot(core: dict[str, Any]) -> int | None:
    """When the first hotspot that starts within the run starts (``None``: none does)."""
    duration = int(core["duration_ps"])
    return min((int(h["start_ps"]) for h in core.get("hotspots", []) if int(h["start_ps"]) < duration), default=None)


#: above this many nodes the links' uniform load is not computed (a search per source, in
#: Python) and a graph is taken as one that may congest
_LOAD_CHECK_NODES = 256


def _uniform_overload(core: dict[str, Any]) -> bool:
    """Whether the uniform sources alone offer some link direction more than its rate: each
    sends load × its link rate, spread evenly over the other nodes, along the engine's shortest
    routes. Never on a fat tree (full bisection, d-mod-k spreads the pairs evenly); on a star
    only into a node whose link is slower than what the others send it; on a general graph
    where the routes meet (a chain's middle link), found by one search per source. A general graph
    above :data:`_LOAD_CHECK_NODES` nodes counts as overloaded."""
    topo = core["topology"]
    nodes = [str(n) for n in topo.get("nodes", [])]
    uniform = [src for src in core["traffic"]["sources"] if src.get("dst") is None and float(src["load"]) > 0]
    if topo.get("fat_tree") or not uniform or len(nodes) < 2:
        return False
    links = [Link(str(link["a"]), str(link["b"]), int(link["rate_bps"]), int(link["delay_ps"])) for link in topo.get("links", [])]
    net = Network(nodes, [str(s) for s in topo.get("switches", [])], links)
    per_pair: dict[str, float] = {}  # what each source offers each other node, bit/s
    for src in uniform:
        node = str(src["node"])
        per_pair[node] = per_pair.get(node, 0.0) + float(src["load"]) * net.node_rate(node) / (len(nodes) - 1)
    if len(net.switches) == 1:  # a star: a node receives from all the others, sends at most its rate
        total = sum(per_pair.values())
        return any(total - per_pair.get(d, 0.0) > net.node_rate(d) * (1 + 1e-9) for d in nodes)
    if len(nodes) > _LOAD_CHECK_NODES:
        return True
    rate = {**{(link.a, link.b): link.rate_bps for link in links}, **{(link.b, link.a): link.rate_bps for link in links}}
    return any(load > rate[hop] * (1 + 1e-9) for hop, load in _offered_loads(net, per_pair).items())


def _offered_loads(net: Network, per_pair: dict[str, float]) -> dict[tuple[str, str], float]:
    """The bit/s each link direction of ``net`` carries when every source in ``per_pair`` sends
    that much to every other node along the shortest routes: one search per source, each hop
    carrying the source's share for every destination beyond it."""
    offered: dict[tuple[str, str], float] = {}
    for node, share in per_pair.items():
        prev = net.predecessors(node)
        below = dict.fromkeys(prev, 0)  # the destinations a device's branch of the search holds
        for device in reversed(prev):  # the farthest first
            if device == node:
                continue
            if not net.is_switch(device):
                below[device] += 1
            below[prev[device]] += below[device]
            hop = (prev[device], device)
            offered[hop] = offered.get(hop, 0.0) + share * below[device]
    return offered


def _congestion_start(core: dict[str, Any]) -> int | None:
    """When the traffic may first congest a port: from the start with named flows (how a
    scenario overloads a port), from the first uniform source's start where the uniform load
    alone exceeds a link (:func:`_uniform_overload`), else at the first hotspot; ``None`` for
    uniform traffic that offers no link more than its rate."""
    sources = core["traffic"]["sources"]
    if any(src.get("dst") is not None for src in sources):
        return 0
    first = _first_hotspot(core)
    if _uniform_overload(core):
        start = min(int(src.get("start_ps") or 0) for src in sources)
        return start if first is None else min(start, first)
    return first


def _frames_from(core: dict[str, Any], t0: int, node_rate: int, frame_bits: int) -> float:
    """The frames the sources generate from ``t0`` to the end of the run."""
    duration = int(core["duration_ps"])
    total = 0.0
    for src in core["traffic"]["sources"]:
        stop = src.get("stop_ps")
        lo = max(t0, int(src.get("start_ps") or 0))
        hi = min(duration, int(stop) if stop is not None else duration)
        total += float(src["load"]) * node_rate * max(0, hi - lo) / _PS_PER_S / frame_bits
    return total


def _backlog_bytes(core: dict[str, Any], t0: int | None, node_rate: int, frame_bits: int) -> float:
    """Store bytes of the frames that may wait in unlimited NIC VOQs: once the traffic may
    congest a port (:func:`_congestion_start`: a hotspot, named flows, a link the uniform load
    exceeds), in the worst case (PAUSE hogging the whole network) every frame generated from
    then on; otherwise the network carries the offered load and VOQs stay short."""
    if t0 is None:
        return 0.0
    frames = _frames_from(core, t0, node_rate, frame_bits)
    return frames * (_GRID_FRAME_BYTES if grid_unit(core) is not None else _WIDE_FRAME_BYTES)


def _switch_buffer_frames(core: dict[str, Any], t0: int | None, switch_ports: int, node_rate: int, frame_bits: int) -> float:
    """Frames the switches may hold: once the traffic may congest a port (at ``t0``,
    :func:`_congestion_start`), every switch buffer full in the worst case (PAUSE holds them
    so, from the congested port back), but never more than the frames generated from then on."""
    if t0 is None:
        return 0.0
    switch = core["switch"]
    capacities = [int(t["capacity"]) for t in switch["thresholds"].values()]
    if switch["buffer"] == "shared":  # a pool per switch
        held = sum(capacities)
    else:  # a partition per input, or a threshold per output: one a switch port
        held = max(capacities, default=0) * switch_ports
    return min(8 * held / frame_bits, _frames_from(core, t0, node_rate, frame_bits))


def estimate(core: dict[str, Any]) -> Estimate:
    """Estimate the cost of running the core config ``core`` (a dict, as ``Scenario.lower()``)."""
    nodes, _switches, ports, path = _topology_size(core["topology"])
    duration = int(core["duration_ps"])
    bin_ps = max(int(core["metrics"]["bin_ps"]), 1)
    bins = -(-duration // bin_ps)

    frame_bits = 8 * max(int(core["traffic"]["frame_size"]), 1)
    rates = [int(link.get("rate_bps", 0)) for link in core["topology"].get("links", [])]
    ft = core["topology"].get("fat_tree")
    node_rate = int(ft["rate_bps"]) if ft else max(rates, default=0)
    traits = _scheme_traits(core["cm"])
    probe_ps = int(traits.get("probe_period_ps") or 0)
    frames = 0.0
    flows = 0.0  # finite flows (TG-GEO): each completed one keeps its completion time
    pairs = 0.0  # (source, destination) pairs that carry traffic, expected
    probes = 0.0  # periodic probes: one a period for every pair that sends in it
    for src in core["traffic"]["sources"]:
        start = int(src.get("start_ps") or 0)
        stop = src.get("stop_ps")
        active_ps = max(0, min(duration, int(stop) if stop is not None else duration) - start)
        n = float(src["load"]) * node_rate * active_ps / _PS_PER_S / frame_bits
        frames += n
        arrivals = n
        if src.get("sizes") == "geometric":
            arrivals = n / max(float(src.get("mean_frames") or 1.0), 1.0)
            flows += arrivals
        destinations = nodes - 1 if src.get("dst") is None else 1
        pairs += _pairs_reached(arrivals, destinations)
        if probe_ps and active_ps:
            # a pair that sends probes with its first frame, so a run shorter than a period
            # still probes once a pair
            periods = max(active_ps / probe_ps, 1.0)
            probes += periods * _pairs_reached(n / periods, destinations)
    # a probe and its reply cross the path as a data frame does
    events = (frames + 2 * probes) * (2 * path + 1)
    if core["switch"].get("pause"):
        # the PAUSE deadlock check, every quarter threshold from the first threshold on (one
        # event each, not counted in the engine's events): a 1 us threshold over 10,000 s is
        # 4·10^10 of them, which the frames alone did not show
        threshold = max(int(core["metrics"].get("deadlock_threshold_ps") or 0), 1)
        events += max(0, duration - threshold) / max(threshold // 4, 1)
    limited = pairs if traits.get("limits_every_flow") else 0.0

    metrics = core["metrics"]
    entities = (
        nodes  # per-node throughput
        + 2 * len(metrics.get("per_flow", []))  # per-flow throughput and limiter rate
        + 2 * (len(metrics.get("queues", [])) + 1)  # queue end and max per recorded port
        + 12  # aggregate, hot port, drops, source drops, cm, pause
    )
    series_rows = bins * entities
    memory = float(_BASE_BYTES + nodes * _NODE_BYTES + ports * _PORT_BYTES)
    memory += series_rows * (_ENGINE_VALUE_BYTES + _PYTHON_ROW_BYTES)
    memory += flows * _FLOW_BYTES
    recorded = len(metrics.get("per_flow", []))
    memory += recorded * _RECORDED_FLOW_BYTES
    if nodes <= _DENSE_NODES:
        memory += nodes * nodes * _DENSE_PAIR_BYTES
    memory += limited * _LIMITED_FLOW_BYTES
    memory += _frames_on_wires(core["topology"], frame_bits) * _FRAME_BYTES
    congested_from = _congestion_start(core)
    buffered = int(_switch_buffer_frames(core, congested_from, ports - nodes, node_rate, frame_bits) * _FRAME_BYTES)
    memory += buffered
    backlog = 0
    if core["nic"].get("ingress") == "unlimited":
        backlog = int(_backlog_bytes(core, congested_from, node_rate, frame_bits))
    memory += backlog
    return Estimate(
        nodes=nodes,
        ports=ports,
        bins=bins,
        series_rows=series_rows,
        frames=frames,
        events=events,
        memory_bytes=int(memory),
        backlog_bytes=backlog,
        buffered_bytes=buffered,
        recorded_flows=recorded,
        limited_flows=limited,
        probes=probes,
    )


def _frames_on_wires(topo: dict[str, Any], frame_bits: int) -> float:
    """Frames in flight when every link is busy both ways: 2 · rate · delay / frame bits a link
    (a thousand and more a link with links of a millisecond)."""
    ft = topo.get("fat_tree")
    if ft:  # uniform links
        bits = _fat_tree_size(ft)[2] * int(ft["rate_bps"]) * int(ft["delay_ps"])
    else:
        bits = sum(int(link.get("rate_bps", 0)) * int(link.get("delay_ps", 0)) for link in topo.get("links", []))
    return 2 * bits / _PS_PER_S / frame_bits


def _pairs_reached(arrivals: float, destinations: int) -> float:
    """The expected number of distinct destinations ``arrivals`` arrivals reach when each picks
    one of ``destinations`` uniformly: d·(1 − (1 − 1/d)^a), and never more than a (the closed
    form exceeds a fractional a below one: a period of a periodic probe with under one arrival)."""
    if destinations <= 1:
        return min(arrivals, float(destinations))
    return min(arrivals, destinations * -math.expm1(arrivals * math.log1p(-1.0 / destinations)))


def _scheme_traits(cm: dict[str, Any]) -> dict[str, Any]:
    """What the engine says of the scheme (``cnsim._core.scheme_traits``): whether it gives every
    flow a rate limiter with its first frame and keeps it (``limits_every_flow``: E2CM probing
    only, algorithms.md D17; FECN, §6), and how often a sending flow probes its path
    (``probe_period_ps``: FECN's T). Asked of the engine, so that a scheme added there is
    counted here. A table the engine refuses has no traits: the engine's build reports it, with
    the scenario's name, as for any run; without an engine there is no run to bound."""
    from .engine import engine  # lazily: `cnsim --help` and the like never load the engine

    try:
        core = engine()
    except EngineMissing:
        return {}
    try:
        return dict(core.scheme_traits(json.dumps(cm)))
    except (core.ConfigError, core.EngineError):
        return {}


#: what :func:`check` tells a ``cnsim run`` user to do to run a refused run anyway
FORCE_HINT = "pass --force to run it anyway"


def check(core: dict[str, Any], force: bool = False, memory: int | None = None, force_hint: str = FORCE_HINT) -> Estimate:
    """Estimate ``core`` and raise :class:`ResourceError` if it would exceed the machine.

    ``memory`` is the machine's physical memory in bytes (default: this machine's);
    ``force_hint`` ends the message (how to run it anyway, where the command can).
    """
    est = estimate(core)
    if force:
        return est
    total = physical_memory() if memory is None else memory
    reasons = []
    if total and est.memory_bytes > MEMORY_SHARE * total:
        reasons.append(f"its peak memory would exceed {MEMORY_SHARE:.0%} of this machine's {human_bytes(total)}")
    if est.events > MAX_EVENTS:
        reasons.append(f"it would take more than {MAX_EVENTS:.0e} events (~{human_time(MAX_EVENTS / EVENTS_PER_S)})")
    elif est.wall_s > MAX_WALL_S:
        reasons.append(f"it would take about {human_time(est.wall_s)}, more than {human_time(MAX_WALL_S)}")
    if reasons:
        advice = "shorten `duration`, widen `metrics.bin`, record fewer series (`metrics.per_flow`, `metrics.queues`) or use fewer nodes"
        if est.buffered_bytes > est.memory_bytes / 2:
            advice = f"give the switches less memory (`switch.memory_per_port`: their buffers may hold {human_bytes(est.buffered_bytes)} of frames), " + advice
        raise ResourceError(
            f"this run was refused before it started: {' and '.join(reasons)}. Estimate: {est.describe()}. "
            f"{advice[0].upper()}{advice[1:]}; {force_hint}."
        )
    return est


def check_parallel(run_bytes: list[int], workers: int, shared_process: bool, memory: int | None = None) -> None:
    """Refuse running ``workers`` of these runs at once if together they would exceed
    :data:`MEMORY_SHARE` of the machine (:class:`ResourceError`, naming the worker count that fits).

    ``run_bytes`` holds each run's memory estimate (:attr:`Estimate.memory_bytes`; 0 if unknown).
    The largest ``workers`` of them are counted. With ``shared_process`` (threads) the Python
    process itself is counted once; otherwise every worker is a process of its own.
    ``memory`` is the machine's physical memory in bytes (default: this machine's).
    """
    total_memory = physical_memory() if memory is None else memory
    if not total_memory or workers < 1:
        return
    at_once = sorted(run_bytes, reverse=True)[:workers]
    # what each run adds, and what is there without any: one interpreter for threads, none else
    adds = [max(b - _BASE_BYTES, 0) if shared_process else max(b, _BASE_BYTES) for b in at_once]
    base = _BASE_BYTES if shared_process else 0
    need = base + sum(adds)
    limit = MEMORY_SHARE * total_memory
    if need <= limit:
        return
    fits, used = 0, base  # the largest runs first: how many of them fit together
    for b in adds:
        if used + b > limit:
            break
        fits, used = fits + 1, used + b
    how = "threads of one process" if shared_process else "a process each"
    advice = f"give --workers {fits} or fewer" if fits else "not even the largest run fits alone: give --workers 1"
    raise ResourceError(
        f"--workers {workers}: {len(at_once)} runs at once ({how}) would need about {human_bytes(need)}, "
        f"more than {MEMORY_SHARE:.0%} of this machine's {human_bytes(total_memory)}; {advice}"
    )

