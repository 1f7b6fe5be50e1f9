"""The scenario document's schema (contract "Scenario document (normative keys)"): pydantic
models with ``extra="forbid"`` everywhere — *all defaults of cnsim live here* and in
:mod:`cnsim.cmparams` — and the translation of their validation errors into
problems (:class:`~cnsim.errors.Problem`: key, value, what is allowed)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, model_validator
from pydantic_core import PydanticCustomError

from ..cmparams import FRAME_MAX, FRAME_MIN
from ..errors import missing
from ..units import format_time
from .fields import (
    MAX_NODES,
    MAX_SWITCH_PORTS,
    AutoSize,
    AutoSizeX,
    Fraction01,
    Kind,
    Name,
    NoneOrSizeX,
    PositiveRate,
    PositiveSize,
    PositiveTime,
    Size,
    SizeX,
    Time,
    TimeX,
    node_list,
    parse_size_value,
    time_at_least,
    window_value,
)

# --------------------------------------------------------------------------------------------
# The scenario document (contract "Scenario document (normative keys)"); defaults live here
# --------------------------------------------------------------------------------------------


class _Model(BaseModel):
    # the field docstrings are the key reference's descriptions (cnsim keys, docs/keys.md): it
    # reads them itself (keys.attribute_docs), only when asked, not pydantic at every import
    model_config = ConfigDict(extra="forbid", strict=True)


def field_problem(field: str, value: Any, message: str) -> PydanticCustomError:
    """An error a model validator raises about one of its fields: the problem is reported under
    that field's key (``topology.fat_tree.radix``; ``field = ""``: the model's own key)."""
    return PydanticCustomError("cnsim_field", "{message}", {"field": field, "value": value, "message": message})


class LinkSpec(_Model):
    """``topology.links`` entry: a link between two names; rate/delay override ``[links]``."""

    a: Name
    """One end of the link (a node or a switch)."""
    b: Name
    """The other end."""
    rate: PositiveRate | None = None
    """The link's rate (default: links.rate)."""
    delay: Time | None = None
    """The link's one-way propagation delay (default: links.delay)."""


class FatTreeSpec(_Model):
    """``topology.fat_tree``: k-ary n-tree of switches of ``radix`` ports (I-19)."""

    radix: Annotated[int, Field(ge=2)]
    """Ports per switch (2k for a k-ary tree)."""
    levels: Annotated[int, Field(ge=1, le=8)]
    """Switch levels n of the k-ary n-tree."""
    merged_top: bool = False
    """Two trees merged at the top level (2·k^n nodes, scenarios.md §2 zhb-ft-*)."""

    @model_validator(mode="after")
    def _shape(self) -> FatTreeSpec:
        """The shape checks (here, so that a bad shape stops validation before the node names
        are checked against a tree that was never built)."""
        if self.radix % 2:
            raise field_problem("radix", self.radix, "the radix must be even (2k ports: k down, k up)")
        if self.merged_top and self.levels < 2:
            raise field_problem("levels", self.levels, "a merged top needs at least 2 levels")
        hosts = (self.radix // 2) ** self.levels * (2 if self.merged_top else 1)
        shape = {"radix": self.radix, "levels": self.levels, "merged_top": self.merged_top}
        if hosts < 2:
            raise field_problem("radix", self.radix, f"a fat tree of radix {self.radix} has {hosts} host (k^levels, k = radix/2) and a topology needs at least 2 nodes: give a radix of at least 4, or merged_top = true")
        if hosts > MAX_NODES:
            raise field_problem("", shape, f"{hosts} hosts; at most {MAX_NODES} are supported")
        ports = self.radix if self.levels >= 2 else self.radix // 2  # one level: k hosts, no up-links
        if ports > MAX_SWITCH_PORTS:
            raise field_problem("radix", self.radix, f"{ports} ports per switch; the engine allows at most {MAX_SWITCH_PORTS}")
        return self


class TopologySpec(_Model):
    kind: Literal["star", "graph", "fat_tree"] = "star"
    """Star: one switch S1 and its nodes; graph: switches and links; fat_tree: a k-ary n-tree."""
    nodes: Annotated[Any, BeforeValidator(node_list), Kind("int or list of names")] = 16
    """A node count (names "1".."N") or the list of node names."""
    switches: list[Name] = []
    """Switch names (graph)."""
    links: list[LinkSpec] = []
    """Links between nodes and switches (graph)."""
    fat_tree: FatTreeSpec | None = None
    """The fat tree's shape (fat_tree)."""
    legacy: list[Name] = []
    """Switches without congestion management (algorithms.md D6)."""
    routing: Literal["shortest", "dmodk"] | None = None  # None: "dmodk" for fat trees, else "shortest"
    """Route choice (default: "dmodk" for fat trees, else "shortest")."""

    @model_validator(mode="after")
    def _fat_tree_given(self) -> TopologySpec:
        if self.kind == "fat_tree" and self.fat_tree is None:
            raise field_problem("fat_tree", missing(), 'kind = "fat_tree" needs {radix, levels, merged_top}')
        return self


class LinksSpec(_Model):
    """``[links]``: default rate and ONE-WAY propagation delay of every link."""

    rate: PositiveRate = 10 * 10**9
    """Default rate of every link."""
    delay: Time = 1_000_000  # 1 us: the S0 proposal (scenarios.md §2)
    """Default ONE-WAY propagation delay of every link (the Kwan & Ding loop delay is twice this)."""


class SwitchSpec(_Model):
    buffer: Literal["shared", "partitioned", "egress"] = "partitioned"
    """Switch memory: one shared pool, a partition per input, or a discard threshold per output."""
    memory_per_port: SizeX = 150_000
    """M: shared → pool of N·M; partitioned → M per input; egress → per-port threshold."""
    oq_limit: NoneOrSizeX = "none"
    """Limit of each logical output queue."""
    processing_delay: TimeX = 0
    """Time from a frame's arrival until it may leave (D14)."""
    pause: bool = False
    """802.3x PAUSE toward upstream transmitters."""
    xoff: AutoSizeX = "auto"
    """PAUSE high watermark ("auto": M − rtt·bw, scenarios.md §1.1, D12)."""
    xon: AutoSizeX = "auto"
    """PAUSE low watermark ("auto": from xon_rule)."""
    xon_rule: Literal["half", "minus_10KB"] = "half"
    """How "auto" xon follows xoff: xoff/2, or xoff − 10 KB."""
    cp_ports: Literal["all"] | list[str] = "all"
    """The egress ports that are congestion points when a scheme runs: "all" (every egress of a CM switch) or a list of port names <switch>/<neighbour>."""
    pfc_classes: Annotated[int, Field(ge=0, le=8)] = 0
    """0: 802.3x PAUSE (stops every frame but MAC control); 1–8: PFC (802.1Qbb) with that many priority classes, each paused alone on its equal share of the memory, CM control never paused."""


class NicSpec(_Model):
    ingress: Literal["unlimited", "per_voq", "shared"] = "unlimited"
    """The adapter's ingress buffer IB in front of its per-destination VOQs (scenarios.md §1.2)."""
    ingress_size: Size = 0
    """IB size (per VOQ, or shared)."""
    on_full: Literal["drop", "block"] = "drop"
    """A full IB drops the arriving frame (source drop) or blocks the generator ("block" needs ingress = "shared")."""
    egress_buffer: PositiveSize | None = None  # None: one frame (traffic.frame_size)
    """The PAUSE-able egress buffer OB (default: one frame)."""
    egress_xoff: AutoSize = "auto"
    """OB high watermark."""
    egress_xon: AutoSize = "auto"
    """OB low watermark."""
    processing_delay: Time = 0
    """Adapter processing delay."""


class FlowSpec(_Model):
    """A named flow: a Bernoulli source at ``rate`` from ``src`` to ``dst``."""

    src: Name
    """Source node."""
    dst: Name
    """Destination node."""
    rate: PositiveRate
    """Offered rate (Bernoulli slots at the source's link rate)."""
    start: Time | None = None
    """When the flow starts (default: traffic.start)."""
    stop: Time | None = None
    """When the flow stops (default: traffic.stop)."""
    priority: Annotated[int, Field(ge=0, le=7)] | None = None
    """The flow's PFC priority class (default: traffic.priority)."""


class TrafficSpec(_Model):
    frame_size: Annotated[int, BeforeValidator(parse_size_value), Field(ge=FRAME_MIN, le=FRAME_MAX), Kind("size", f"in [{FRAME_MIN} B, {FRAME_MAX} B]")] = 1500
    """Data frame size."""
    pattern: Literal["uniform", "none"] = "none"
    """uniform: every node sends to every other node; none: only the named flows."""
    load: Fraction01 = 0.0
    """Offered load of each node, a fraction of its link rate (pattern = "uniform" only: with
    "none", the default, only the named flows send; a load with neither is refused)."""
    loads: dict[Name, Fraction01] = {}
    """Per-node loads overriding load: {"<node>" = fraction}."""
    flows: list[FlowSpec] = []
    """Named flows."""
    sizes: Literal["fixed", "geometric"] = "fixed"
    """fixed: single frames (TG-BERN); geometric: flows of geometric size (TG-GEO)."""
    mean_size: PositiveSize | None = None
    """Mean flow size for sizes = "geometric"."""
    start: Time = 0
    """When generation starts."""
    stop: Time | None = None
    """When generation stops (default: never)."""
    run_to_completion: bool = False
    """Run until every frame is delivered (duration is then the hard cap)."""
    priority: Annotated[int, Field(ge=0, le=7)] = 0
    """The PFC priority class of the uniform traffic and of flows without their own (below switch.pfc_classes)."""


class HotspotSpec(_Model):
    """Output-generated hotspot: the port feeding ``node`` serves at ``rate`` × link rate."""

    node: Name
    """The node whose feeding port slows down."""
    rate: Fraction01
    """Service rate, a fraction of the link rate (0 allowed)."""
    start: Time
    """When the hotspot starts."""
    end: Time
    """When it ends."""


#: The most hotspot windows a scenario may list: the engine finds the window that sets a port's
#: rate by looking at every window, at each window's start and end and for the hot port's
#: capacity, so its work grows as the square of their number (200,000 windows of 1 ns kept a
#: 1 ms run busy for more than 5 minutes; 10,000 take a tenth of a second).
MAX_HOTSPOTS = 10_000


#: The deadlock check runs every quarter threshold: 1 ps made a 2 ms run take 51 s. At 1 us (a
#: frame time at 10 Gb/s, a ten-thousandth of the 10 ms default) a check every 250 ns costs little.
DEADLOCK_FLOOR_PS = 1_000_000
DeadlockTime = Annotated[int, BeforeValidator(time_at_least(DEADLOCK_FLOOR_PS)), Kind("time", f">= {format_time(DEADLOCK_FLOOR_PS)}")]


class MetricsSpec(_Model):
    bin: PositiveTime = 1_000_000_000  # 1 ms
    """Width of the time bins of every series."""
    window: Annotated[Any, BeforeValidator(window_value), Kind("window", '[t0, t1], "hotspot" or "run"')] = "run"
    """The measurement window of the summary's means."""
    hot_port: str | None = None
    """The port whose queue and throughput are "hot" (a port name or "hotspot")."""
    queues: list[str] = []
    """Further ports whose queues are recorded."""
    per_flow: Literal["named", "hot", "all", "none"] = "named"
    """Which flows get throughput and rate series."""
    deadlock_threshold: DeadlockTime = 10_000_000_000  # 10 ms
    """A cycle of PAUSE dependencies whose every link has been paused this long is a deadlock (checked every quarter of it, so at least 1 us)."""
    stop_on_deadlock: bool = False
    """End the run when a deadlock is detected (it is reported either way)."""


class ScenarioDoc(_Model):
    """The whole scenario document except ``[cm]`` (validated per scheme, see cmparams)."""

    description: str = ""
    """One line saying what the scenario is."""
    seed: Annotated[int, Field(ge=0, lt=2**63)] = 1
    """Seed of every random choice."""
    duration: PositiveTime
    """Simulated time (in run-to-completion scenarios: the hard cap)."""
    topology: TopologySpec = TopologySpec()
    links: LinksSpec = LinksSpec()
    switch: SwitchSpec = SwitchSpec()
    nic: NicSpec = NicSpec()
    traffic: TrafficSpec = TrafficSpec()
    hotspots: list[HotspotSpec] = []
    """Output-generated hotspots: a port that serves its node slower for a while."""
    metrics: MetricsSpec = MetricsSpec()

    @model_validator(mode="before")
    @classmethod
    def _hotspot_count(cls, data: Any) -> Any:
        """Refuse too many hotspot windows before each of them is validated."""
        hotspots = data.get("hotspots") if isinstance(data, dict) else None
        if isinstance(hotspots, list) and len(hotspots) > MAX_HOTSPOTS:
            raise field_problem("hotspots", f"{len(hotspots):,} windows",
                                f"at most {MAX_HOTSPOTS:,} hotspot windows are supported")
        return data


# --------------------------------------------------------------------------------------------
# Error messages from pydantic
# --------------------------------------------------------------------------------------------


def dotted(loc: tuple[Any, ...]) -> str:
    return ".".join(str(p) for p in loc)
