"""Scenario documents: validation, defaults, overrides, resolution and lowering.

Implements spec/contract.md "Scenario document", "Schemes and presets", "Expressions",
"Measurement window" and the ``--set`` rules, spec/scenarios.md §1.1 (PAUSE watermarks) with
algorithms.md D12, and docs/core-config.md (the JSON handed to the Rust engine).

The pipeline of one scenario:

1. **document**: the TOML file (catalog entry or user file) as a dict; :meth:`Scenario.set`
   edits it (``cm.<param>`` and ``cm.scheme`` overrides are kept apart, because the file's
   ``[cm]`` parameters only apply to the file's own scheme);
2. **validation**: the pydantic models below (``extra="forbid"`` everywhere; *all defaults of
   cnsim live here* and in :mod:`cnsim.cmparams`), then the per-scheme ``cm`` parameters and
   the cross-references (node and port names); every problem is collected and raised as one
   :class:`~cnsim.errors.ScenarioError`;
3. **resolution**: the scheme's parameters (defaults → file → ``--set``), expressions in
   dependency order, PAUSE watermarks, measurement window, hot port, recorded queues and flows;
4. **output**: :meth:`Scenario.to_toml` (the resolved scenario, expressions kept as comments)
   or :meth:`Scenario.lower` (the core config, base units: ps, bit/s, bytes).
"""

from __future__ import annotations

import copy
import importlib.resources
import json
import math
import re
import tomllib
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Annotated, Any, Callable, Literal, Union, get_args, get_origin

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError

from .cmparams import BCN_FAMILY, SCHEMES, Param
from .errors import Problem, ScenarioError, did_you_mean, missing, raise_problems
from .expr import Expr, ExprError, parse_expr
from .topology import FatTree, Link, Network
from .units import (
    PS_PER_S,
    UnitError,
    format_rate,
    format_time,
    parse_quantity,
    parse_rate,
    parse_size,
    parse_time,
)

__all__ = [
    "Scenario",
    "ScenarioDoc",
    "Resolved",
    "load",
    "scenarios",
    "parse_set_value",
    "split_key",
]

CORE_CONFIG_VERSION = 1
#: The largest node count a scenario may have (issue 13: a bigger network is refused up front,
#: before resolution spends minutes building it).
MAX_NODES = 65_536
_QUANTITY_RE = re.compile(r"^\s*[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?\s*[A-Za-z/]*\s*$")

# --------------------------------------------------------------------------------------------
# Field types
# --------------------------------------------------------------------------------------------


def _check_name(value: Any) -> str:
    """Node / switch names: strings (ints are accepted and converted) without / : -> or spaces."""
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise ValueError("a name must be a string such as \"1\", \"H0\" or \"S1\"")
    name = str(value)
    if not name or re.search(r"[\s/:]", name) or "->" in name:
        raise ValueError("a name may not be empty or contain '/', ':', '->' or white space")
    return name


def _quantity_or_expr(kind: str) -> Callable[[Any], Any]:
    """Validator: a quantity of ``kind`` (int base units) or an :class:`Expr` for later."""

    def check(value: Any) -> Any:
        if isinstance(value, Expr):
            return value
        try:
            return parse_quantity(value, kind)
        except UnitError:
            if isinstance(value, str) and not _QUANTITY_RE.match(value):
                try:
                    return parse_expr(value)
                except ExprError as err:
                    raise ValueError(f"not a {kind} and not a valid expression: {err}") from None
            raise

    return check


def _auto_or(check: Callable[[Any], Any], word: str = "auto") -> Callable[[Any], Any]:
    def inner(value: Any) -> Any:
        return word if value == word else check(value)

    return inner


def _positive(value: int) -> int:
    if value <= 0:
        raise ValueError("must be greater than zero")
    return value


@dataclass(frozen=True)
class Kind:
    """What a field holds, for the key reference (:mod:`cnsim.keys`): ``name`` is the type a user
    writes (time, rate, size, …); ``extra`` what else it accepts ("auto", an expression)."""

    name: str
    extra: str = ""


Name = Annotated[str, BeforeValidator(_check_name), Kind("name")]
Time = Annotated[int, BeforeValidator(parse_time), Kind("time")]
Rate = Annotated[int, BeforeValidator(parse_rate), Kind("rate")]
Size = Annotated[int, BeforeValidator(parse_size), Kind("size")]
PositiveTime = Annotated[int, BeforeValidator(lambda v: _positive(parse_time(v))), Kind("time", "> 0")]
PositiveRate = Annotated[int, BeforeValidator(lambda v: _positive(parse_rate(v))), Kind("rate", "> 0")]
PositiveSize = Annotated[int, BeforeValidator(lambda v: _positive(parse_size(v))), Kind("size", "> 0")]
Fraction01 = Annotated[float, Field(ge=0.0, le=1.0), Kind("fraction", "in [0, 1]")]
SizeX = Annotated[Any, BeforeValidator(_quantity_or_expr("size")), Kind("size", "or an expression")]
TimeX = Annotated[Any, BeforeValidator(_quantity_or_expr("time")), Kind("time", "or an expression")]
AutoSizeX = Annotated[Any, BeforeValidator(_auto_or(_quantity_or_expr("size"))), Kind("size", '"auto", or an expression')]
AutoSize = Annotated[Any, BeforeValidator(_auto_or(parse_size)), Kind("size", 'or "auto"')]
NoneOrSizeX = Annotated[Any, BeforeValidator(_auto_or(_quantity_or_expr("size"), "none")), Kind("size", '"none", or an expression')]


def _nodes(value: Any) -> Any:
    if isinstance(value, bool):
        raise ValueError("expected a node count (integer >= 2) or a list of node names")
    if isinstance(value, int):
        if value < 2:
            raise ValueError("a topology needs at least 2 nodes")
        if value > MAX_NODES:
            raise ValueError(f"at most {MAX_NODES} nodes are supported")
        return value
    if isinstance(value, list):
        names = [_check_name(v) for v in value]
        if len(set(names)) != len(names):
            raise ValueError("node names must be unique")
        if len(names) < 2:
            raise ValueError("a topology needs at least 2 nodes")
        if len(names) > MAX_NODES:
            raise ValueError(f"at most {MAX_NODES} nodes are supported")
        return names
    raise ValueError("expected a node count (integer >= 2) or a list of node names")


def _window(value: Any) -> Any:
    if value in ("hotspot", "run"):
        return value
    if isinstance(value, (list, tuple)) and len(value) == 2:
        t0, t1 = parse_time(value[0]), parse_time(value[1])
        if t1 < t0:
            raise ValueError("the window's end comes before its start")
        return (t0, t1)
    raise ValueError('expected [t0, t1] (times), "hotspot" or "run"')


# --------------------------------------------------------------------------------------------
# The scenario document (contract "Scenario document (normative keys)"); defaults live here
# --------------------------------------------------------------------------------------------


class _Model(BaseModel):
    # field docstrings become descriptions: the key reference (cnsim keys, docs/keys.md) reads them
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)


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


class TopologySpec(_Model):
    kind: Literal["star", "graph", "fat_tree"] = "star"
    """Star: one switch S1 and its nodes; graph: switches and links; fat_tree: a k-ary n-tree."""
    nodes: Annotated[Any, BeforeValidator(_nodes), Kind("int or list of names")] = 16
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


class NicSpec(_Model):
    ingress: Literal["unlimited", "per_voq", "shared"] = "unlimited"
    """The adapter's ingress buffer IB in front of its per-destination VOQs (scenarios.md §1.2)."""
    ingress_size: Size = 0
    """IB size (per VOQ, or shared)."""
    on_full: Literal["drop", "block"] = "drop"
    """A full IB drops the arriving frame (source drop) or blocks the generator."""
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


class TrafficSpec(_Model):
    frame_size: Annotated[int, BeforeValidator(parse_size), Field(ge=64, le=65_536), Kind("size", "in [64 B, 65536 B]")] = 1500
    """Data frame size."""
    pattern: Literal["uniform", "none"] = "none"
    """uniform: every node sends to every other node; none: only the named flows."""
    load: Fraction01 = 0.0
    """Offered load of each node, a fraction of its link rate."""
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


class MetricsSpec(_Model):
    bin: PositiveTime = 1_000_000_000  # 1 ms
    """Width of the time bins of every series."""
    window: Annotated[Any, BeforeValidator(_window), Kind("window", '[t0, t1], "hotspot" or "run"')] = "run"
    """The measurement window of the summary's means."""
    hot_port: str | None = None
    """The port whose queue and throughput are "hot" (a port name or "hotspot")."""
    queues: list[str] = []
    """Further ports whose queues are recorded."""
    per_flow: Literal["named", "hot", "all", "none"] = "named"
    """Which flows get throughput and rate series."""


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


# --------------------------------------------------------------------------------------------
# Error messages from pydantic
# --------------------------------------------------------------------------------------------


def _dotted(loc: tuple[Any, ...]) -> str:
    return ".".join(str(p) for p in loc)


def _unwrap_model(annotation: Any) -> type[BaseModel] | None:
    """The model class inside ``X | None``, ``list[X]``, ``Annotated[X, ...]``, if any."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    origin = get_origin(annotation)
    if origin is None:
        return None
    for arg in get_args(annotation):
        found = _unwrap_model(arg)
        if found is not None:
            return found
    return None


def _allowed_keys(loc: tuple[Any, ...]) -> list[str]:
    model: type[BaseModel] | None = ScenarioDoc
    for part in loc:
        if model is None:
            return []
        if isinstance(part, int) or part not in model.model_fields:
            continue
        model = _unwrap_model(model.model_fields[part].annotation)
    return ([*model.model_fields] + (["cm"] if model is ScenarioDoc else [])) if model else []


def _problems_from_validation(err: ValidationError, prefix: tuple[Any, ...] = ()) -> list[Problem]:
    problems = []
    for e in err.errors():
        loc = prefix + tuple(e["loc"])
        key = _dotted(loc)
        kind = e["type"]
        if kind == "extra_forbidden":
            names = _allowed_keys(loc[:-1])
            where = _dotted(tuple(p for p in loc[:-1] if not isinstance(p, int)))
            command = f"cnsim keys {where}".strip()
            msg = f"unknown key.{did_you_mean(str(loc[-1]), names)} The keys allowed here are: {', '.join(names)} (`{command}` describes them)"
        elif kind == "missing":
            problems.append(Problem(key, missing(), "this key is required"))
            continue
        elif kind == "literal_error":
            msg = "not an allowed value; allowed: " + str(e.get("ctx", {}).get("expected", ""))
        elif kind == "value_error":
            msg = str(e["msg"]).removeprefix("Value error, ")
        elif kind.startswith(("greater", "less")):
            msg = f"out of range: {e['msg'].lower()}"
        else:
            msg = str(e["msg"])
        problems.append(Problem(key, e.get("input"), msg))
    return problems


# --------------------------------------------------------------------------------------------
# --set parsing
# --------------------------------------------------------------------------------------------


def parse_set_value(text: str) -> Any:
    """``--set`` value: a TOML value (``true``, ``0.5``, ``[0.2, 0.5]``, ``{…}``), else the string."""
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


def split_key(key: str) -> list[str]:
    """Split a dotted key; quoted parts keep their dots: ``a."b.c".0`` → ``["a", "b.c", "0"]``."""
    parts: list[str] = []
    buf = ""
    quote: str | None = None
    quoted = False
    for ch in key.strip():
        if quote:
            if ch == quote:
                quote = None
            else:
                buf += ch
        elif ch in "\"'":
            quote, quoted = ch, True
        elif ch == ".":
            if not buf and not quoted:
                raise ScenarioError(f"{key}: empty part in the dotted key (write e.g. switch.pause)")
            parts.append(buf.strip() if not quoted else buf)
            buf, quoted = "", False
        else:
            buf += ch
    if quote:
        raise ScenarioError(f"{key}: unterminated quote in the dotted key")
    if not buf and not quoted:
        raise ScenarioError(f"{key}: empty part in the dotted key (write e.g. switch.pause)")
    parts.append(buf.strip() if not quoted else buf)
    return parts


#: document paths that hold arrays (a missing one is created as an array by ``--set a.0.b=…``)
_ARRAY_PATHS = {
    ("hotspots",),
    ("traffic", "flows"),
    ("topology", "links"),
    ("topology", "nodes"),
    ("topology", "switches"),
    ("topology", "legacy"),
    ("metrics", "queues"),
    ("metrics", "window"),
}


def _assign(doc: dict[str, Any], path: list[str], value: Any, key: str) -> None:
    """Set ``doc[path] = value``, creating missing tables; numeric parts index arrays."""
    cur: Any = doc
    for i, part in enumerate(path):
        last = i == len(path) - 1
        here = _dotted(tuple(path[:i]))
        new_container: Any = [] if tuple(path[: i + 1]) in _ARRAY_PATHS else {}
        if isinstance(cur, list):
            if not part.isdigit():
                raise ScenarioError(f"{key}: {here} is an array; index it with a number, e.g. {here}.0")
            idx = int(part)
            if idx > len(cur):
                raise ScenarioError(
                    f"{key}: index {idx} is past the end of {here} (it has {len(cur)} entries; use {len(cur)} to append)"
                )
            if idx == len(cur):
                cur.append({})
            if last:
                cur[idx] = value
            elif isinstance(cur[idx], (dict, list)):
                cur = cur[idx]
            else:
                raise ScenarioError(f"{key}: {here}.{idx} is a value, not a table or array")
        else:
            if last:
                cur[part] = value
            elif isinstance(cur.get(part), (dict, list)):
                cur = cur[part]
            elif part in cur:
                raise ScenarioError(f"{key}: {_dotted(tuple(path[: i + 1]))} is a value, not a table or array")
            else:
                cur[part] = new_container
                cur = cur[part]


# --------------------------------------------------------------------------------------------
# cm parameters: per-value checks
# --------------------------------------------------------------------------------------------


def _check_param(param: Param, value: Any) -> Any:
    """Validate one cm value; returns the typed value (base units) or an :class:`Expr`."""
    kind = param.kind
    if kind == "choice":
        if value not in param.choices:
            raise ValueError(f"allowed: {param.allowed()}")
        return value
    if kind == "bool":
        if isinstance(value, bool):
            return value
        if value in ("true", "false"):
            return value == "true"
        raise ValueError(f"allowed: {param.allowed()}")
    if kind == "int":
        if isinstance(value, bool) or not isinstance(value, (int, float, str)):
            raise ValueError(f"allowed: {param.allowed()}")
        try:
            number = float(value)
        except ValueError:
            raise ValueError(f"allowed: {param.allowed()}") from None
        if number != int(number):
            raise ValueError(f"allowed: {param.allowed()}")
        return _check_range(param, int(number))
    if kind == "time_or_auto" and value == "auto":
        return value
    if kind == "float":
        if isinstance(value, bool):
            raise ValueError(f"allowed: {param.allowed()}")
        if isinstance(value, (int, float)):
            return _check_range(param, float(value))
        if isinstance(value, str):
            try:
                return parse_expr(value)
            except ExprError as err:
                raise ValueError(f"{err}; allowed: {param.allowed()}") from None
        raise ValueError(f"allowed: {param.allowed()}")
    qkind = "time" if kind == "time_or_auto" else kind
    try:
        return _quantity_or_expr(qkind)(value)
    except (UnitError, ValueError) as err:
        raise ValueError(f"{err}; allowed: {param.allowed()}") from None


def _check_range(param: Param, value: float) -> Any:
    if param.lo is not None and value < param.lo or param.hi is not None and value > param.hi:
        raise ValueError(f"out of range; allowed: {param.allowed()}")
    return value


def _check_cm_table(
    scheme: str, table: dict[str, Any], prefix: str, problems: list[Problem]
) -> dict[str, Any]:
    """Validate a table of ``scheme``'s parameters; unknown keys and bad values are problems."""
    params = SCHEMES[scheme]
    out: dict[str, Any] = {}
    for name, value in table.items():
        key = f"{prefix}.{name}"
        if name not in params:
            have = ", ".join(params) if params else "none (it takes no parameters)"
            hint = did_you_mean(name, params)
            problems.append(
                Problem(key, value, f'scheme "{scheme}" has no parameter "{name}".{hint} Its parameters: {have} (`cnsim keys cm` describes them)')
            )
            continue
        try:
            out[name] = _check_param(params[name], value)
        except ValueError as err:
            problems.append(Problem(key, value, str(err)))
    return out


# --------------------------------------------------------------------------------------------
# Resolution
# --------------------------------------------------------------------------------------------


class _EvalProblem(Exception):
    def __init__(self, problem: Problem) -> None:
        super().__init__(problem.message)
        self.problem = problem


_KIND_SCALE = {"size": 1.0, "rate": 1.0, "time": 1.0 / PS_PER_S, "time_or_auto": 1.0 / PS_PER_S}
_NAME_KEYS = {"m": "switch.memory_per_port", "rate": "links.rate", "xoff": "switch.xoff"}


class _Resolver:
    """Evaluates values that may be expressions, on demand, in dependency order.

    Entries are keyed by their dotted key (``cm.gd``, ``switch.memory_per_port``); an
    expression's names map to entries through :attr:`names`. A name met again while it is
    being evaluated is a cycle.
    """

    def __init__(self) -> None:
        self.entries: dict[str, tuple[str, Any, Param | None]] = {}  # key → (kind, raw, param)
        self.names: dict[str, str] = dict(_NAME_KEYS)
        self.values: dict[str, Any] = {}
        self.exprs: dict[str, str] = {}
        self._stack: list[str] = []

    def add(self, key: str, kind: str, raw: Any, param: Param | None = None) -> None:
        self.entries[key] = (kind, raw, param)

    def value(self, key: str) -> Any:
        """The typed value (base units) of entry ``key``."""
        if key in self.values:
            return self.values[key]
        if key in self._stack:
            chain = " -> ".join([*self._stack[self._stack.index(key):], key])
            raise _EvalProblem(
                Problem(
                    key,
                    self.entries[key][1] if key in self.entries else None,
                    f"expressions refer to each other in a cycle ({chain}); give one of them a number",
                )
            )
        kind, raw, param = self.entries[key]
        self._stack.append(key)
        try:
            if callable(raw) and not isinstance(raw, Expr):
                result = raw()
            elif isinstance(raw, Expr):
                self.exprs[key] = raw.text
                number = raw.evaluate(lambda name: self.number(name, key, raw))
                result = self._convert(key, kind, number, raw, param)
            else:
                result = raw
        except ExprError as err:
            raise _EvalProblem(Problem(key, str(raw), str(err))) from None
        finally:
            self._stack.pop()
        self.values[key] = result
        return result

    def number(self, name: str, user: str, expr: Any) -> float:
        """An expression name's value as a float in expression units (s, bit/s, bytes)."""
        key = self.names.get(name)
        if key is None or key not in self.entries:
            known = ", ".join(n for n, k in self.names.items() if k in self.entries)
            raise _EvalProblem(Problem(user, str(expr), f'unknown name "{name}"; names here: {known}'))
        kind = self.entries[key][0]
        value = self.value(key)
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            raise _EvalProblem(Problem(user, str(expr), f'"{name}" is {value!r}, not a number'))
        return float(value) * _KIND_SCALE.get(kind, 1.0)

    @staticmethod
    def _convert(key: str, kind: str, number: float, expr: Expr, param: Param | None) -> Any:
        if not math.isfinite(number):
            raise _EvalProblem(Problem(key, expr.text, "the expression is not a finite number"))
        if kind in ("size", "rate", "time", "time_or_auto"):
            scaled = number * PS_PER_S if kind in ("time", "time_or_auto") else number
            if scaled < 0:
                raise _EvalProblem(Problem(key, expr.text, f"the expression gives {number:g}, a negative {kind}"))
            return int(round(scaled))
        if kind == "int":
            if number != int(number):
                raise _EvalProblem(Problem(key, expr.text, f"the expression gives {number:g}, not an integer"))
            return int(number)
        if param is not None:
            try:
                return _check_range(param, number)
            except ValueError as err:
                raise _EvalProblem(Problem(key, expr.text, f"the expression gives {number:g}: {err}")) from None
        return number


@dataclass
class Resolved:
    """A fully resolved scenario: validated document plus everything derived from it."""

    doc: ScenarioDoc
    scheme: str
    cm: dict[str, Any]  # the selected scheme's parameters, typed, base units
    cm_exprs: dict[str, str]  # parameter → expression text it was computed from
    memory_per_port: int
    oq_limit: int | None
    processing_delay_ps: int
    switch_exprs: dict[str, str]
    network: Network | None
    thresholds: dict[str, dict[str, int]]
    xoff_note: str
    xon_note: str
    egress_buffer: int
    egress_xoff: int
    egress_xon: int
    window_ps: tuple[int, int]
    window_note: str
    hot_port: str
    hot_node: str | None
    queues: list[str]
    per_flow: list[tuple[str, str]]
    nodes: list[str] = field(default_factory=list)


#: hosts above which a fat tree is refused (the engine's routing tables are hosts × switches)
MAX_FAT_TREE_HOSTS = 65_536


def _build_fat_tree(doc: ScenarioDoc, problems: list[Problem]) -> tuple[Network | None, list[str]]:
    """``kind = "fat_tree"``: the engine's construction (docs/core-config.md), names included."""
    topo = doc.topology
    spec = topo.fat_tree
    if spec is None:
        problems.append(Problem("topology.fat_tree", missing(), 'kind = "fat_tree" needs {radix, levels, merged_top}'))
        return None, []
    if spec.radix % 2:
        problems.append(Problem("topology.fat_tree.radix", spec.radix, "the radix must be even (2k ports: k down, k up)"))
        return None, []
    if spec.merged_top and spec.levels < 2:
        problems.append(Problem("topology.fat_tree.levels", spec.levels, "a merged top needs at least 2 levels"))
        return None, []
    shape = FatTree(spec.radix, spec.levels, spec.merged_top)
    if shape.hosts > MAX_FAT_TREE_HOSTS:
        problems.append(Problem("topology.fat_tree", spec.model_dump(), f"{shape.hosts} hosts; at most {MAX_FAT_TREE_HOSTS} are supported"))
        return None, []
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


def _build_network(doc: ScenarioDoc, problems: list[Problem]) -> tuple[Network | None, list[str]]:
    topo = doc.topology
    rate, delay = doc.links.rate, doc.links.delay
    if topo.kind == "fat_tree":
        return _build_fat_tree(doc, problems)
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
    known = set(switches) | set(nodes)
    links: list[Link] = []
    seen: set[frozenset[str]] = set()
    for i, ls in enumerate(topo.links):
        ok = True
        for end in ("a", "b"):
            name = getattr(ls, end)
            if name not in known:
                problems.append(Problem(f"topology.links.{i}.{end}", name, f"unknown node or switch; known: {', '.join([*switches, *nodes])}"))
                ok = False
        if ok and ls.a == ls.b:
            problems.append(Problem(f"topology.links.{i}", f"{ls.a}-{ls.b}", "a link needs two different ends"))
            ok = False
        if ok and ls.a in nodes and ls.b in nodes:
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
    wired = True
    for node in nodes:
        n = len(net.neighbours(node))
        if n != 1:
            problems.append(Problem("topology.links", f"node {node}", f"every node needs exactly one link (node {node} has {n})"))
            wired = False
    return (net if wired else None), nodes


def _per_switch(value: Any) -> bool:
    """An XOFF expression whose value depends on the switch (names ``auto`` or ``ports``)."""
    return isinstance(value, Expr) and bool(value.names & {"auto", "ports"})


def _rtt_bw(delay_ps: int, proc_ps: int, rate_bps: int, frame: int) -> Fraction:
    """D12: rtt·bw = 2·(propagation + processing)·rate/8 + 2 × frame_size bytes (exact)."""
    return Fraction(2 * (delay_ps + proc_ps) * rate_bps, 8 * PS_PER_S) + 2 * frame


class Scenario:
    """A scenario document with overrides; resolves lazily (contract "Python")."""

    def __init__(self, doc: dict[str, Any], id: str, source: str = "") -> None:
        if not isinstance(doc, dict):
            raise ScenarioError(f"{id}: a scenario document must be a table")
        self.id = id
        self.source = source
        self._doc: dict[str, Any] = copy.deepcopy(doc)
        self._scheme: Any = None  # --set cm.scheme
        self._cm_set: dict[str, Any] = {}  # --set cm.<param>
        self._resolved: Resolved | None = None

    # ---- editing ------------------------------------------------------------------------

    def copy(self) -> Scenario:
        other = Scenario(self._doc, self.id, self.source)
        other._scheme = self._scheme
        other._cm_set = copy.deepcopy(self._cm_set)
        return other

    def set(self, key: str, value: Any) -> Scenario:
        """Override ``key`` (dotted, contract ``--set`` rules); returns ``self``."""
        path = split_key(key)
        value = copy.deepcopy(value)
        if path[0] == "cm" and len(path) == 2 and path[1] == "scheme":
            self._scheme = value
        elif path[0] == "cm" and len(path) == 2 and path[1] != "presets":
            self._cm_set[path[1]] = value
        else:
            _assign(self._doc, path, value, key)
        self._resolved = None
        return self

    def set_many(self, overrides: dict[str, Any] | None) -> Scenario:
        for key, value in (overrides or {}).items():
            self.set(key, value)
        return self

    # ---- resolution ---------------------------------------------------------------------

    @property
    def resolved(self) -> Resolved:
        """The resolved scenario (raises :class:`ScenarioError` on any bad input)."""
        if self._resolved is None:
            self._resolved = self._resolve()
        return self._resolved

    def validate(self) -> Scenario:
        """Resolve now; raise :class:`ScenarioError` listing every problem."""
        _ = self.resolved
        return self

    @property
    def scheme(self) -> str:
        return self.resolved.scheme

    def _resolve(self) -> Resolved:
        problems: list[Problem] = []
        raw = copy.deepcopy(self._doc)
        cm_raw = raw.pop("cm", {})
        doc: ScenarioDoc | None = None
        try:
            doc = ScenarioDoc.model_validate(raw)
        except ValidationError as err:
            problems.extend(_problems_from_validation(err))
        scheme, cm_typed = self._resolve_cm_tables(cm_raw, problems)
        raise_problems(problems, self.id)
        assert doc is not None
        return _Resolution(doc, scheme, cm_typed, self.id).run()

    def _resolve_cm_tables(self, cm_raw: Any, problems: list[Problem]) -> tuple[str, dict[str, Any]]:
        """Contract "Schemes and presets": scheme, then defaults → file → --set."""
        if not isinstance(cm_raw, dict):
            problems.append(Problem("cm", cm_raw, "[cm] must be a table with scheme and parameters"))
            cm_raw = {}
        schemes = ", ".join(f'"{s}"' for s in SCHEMES)
        own = cm_raw.get("scheme", "none")
        if not isinstance(own, str) or own not in SCHEMES:
            problems.append(Problem("cm.scheme", own, f"unknown scheme; allowed: {schemes}"))
            own = "none"
        scheme = own if self._scheme is None else self._scheme
        if not isinstance(scheme, str) or scheme not in SCHEMES:
            problems.append(Problem("cm.scheme", scheme, f"unknown scheme; allowed: {schemes}"))
            scheme = "none"
        own_params = {k: v for k, v in cm_raw.items() if k not in ("scheme", "presets")}
        file_params = _check_cm_table(own, own_params, "cm", problems)
        presets = cm_raw.get("presets", {})
        preset_params: dict[str, dict[str, Any]] = {}
        if not isinstance(presets, dict):
            problems.append(Problem("cm.presets", presets, "must be a table of [cm.presets.<scheme>] tables"))
            presets = {}
        for name, table in presets.items():
            if name not in SCHEMES:
                problems.append(Problem(f"cm.presets.{name}", "{...}", f"unknown scheme; allowed: {schemes}"))
            elif not isinstance(table, dict):
                problems.append(Problem(f"cm.presets.{name}", table, "must be a table of parameters"))
            else:
                preset_params[name] = _check_cm_table(name, table, f"cm.presets.{name}", problems)
        set_params = _check_cm_table(scheme, self._cm_set, "cm", problems)
        merged: dict[str, Any] = {name: p.default for name, p in SCHEMES[scheme].items()}
        for name, value in merged.items():
            merged[name] = _check_param(SCHEMES[scheme][name], value)
        merged.update(file_params if scheme == own else preset_params.get(scheme, {}))
        merged.update(set_params)
        return scheme, merged

    # ---- output -------------------------------------------------------------------------

    def lower(self) -> dict[str, Any]:
        """The core config of docs/core-config.md (a JSON-ready dict)."""
        return _lower(self.resolved, self.id)

    def core_json(self) -> str:
        """The core config as the JSON text the engine reads."""
        return json.dumps(self.lower(), indent=2)

    def to_toml(self) -> str:
        """The fully resolved scenario as TOML (defaults filled; expressions as comments)."""
        from .tomlout import resolved_toml

        return resolved_toml(self.resolved, self._cm_presets_raw(), self.id)

    def _cm_presets_raw(self) -> dict[str, Any]:
        cm = self._doc.get("cm", {})
        presets = cm.get("presets", {}) if isinstance(cm, dict) else {}
        return copy.deepcopy(presets) if isinstance(presets, dict) else {}

    def __repr__(self) -> str:
        return f"Scenario({self.id!r})"


class _Resolution:
    """One resolution pass over a validated document (collects problems, raises once)."""

    def __init__(self, doc: ScenarioDoc, scheme: str, cm: dict[str, Any], sid: str) -> None:
        self.doc, self.scheme, self.cm_raw, self.id = doc, scheme, cm, sid
        self.problems: list[Problem] = []

    def run(self) -> Resolved:
        doc = self.doc
        net, nodes = _build_network(doc, self.problems)
        self.net, self.nodes = net, nodes
        self._check_names(net, nodes)
        raise_problems(self.problems, self.id)

        res = _Resolver()
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
            res.add("switch.xoff", "size", lambda: self._global_xoff(res))
        elif _per_switch(sw.xoff):  # names the switch's own "auto" or "ports": the first switch's value
            res.add("switch.xoff", "size", lambda: self._xoff_at(res, None))
        else:
            res.add("switch.xoff", "size", sw.xoff)

        values: dict[str, Any] = {}
        for key in list(res.entries):
            if key.startswith("<"):
                continue
            try:
                values[key] = res.value(key)
            except _EvalProblem as err:
                self.problems.append(err.problem)
        raise_problems(self.problems, self.id)

        memory = values["switch.memory_per_port"]
        proc = values["switch.processing_delay"]
        oq_limit = values.get("switch.oq_limit")
        thresholds, xoff_note, xon_note = self._thresholds(res, memory)
        egress = self._nic(proc)
        window_ps, window_note = self._window()
        hot_port, hot_node = self._hot_port(net)
        queues = self._queues(hot_port)
        per_flow = self._per_flow(net, hot_port, hot_node)
        if memory == 0:
            self.problems.append(Problem("switch.memory_per_port", 0, "must be greater than zero"))
        if oq_limit is not None and oq_limit < doc.traffic.frame_size:
            self.problems.append(Problem("switch.oq_limit", oq_limit, "must hold at least one frame, or be \"none\""))
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
            if f.start is not None and f.stop is not None and f.stop < f.start:
                p.append(Problem(f"traffic.flows.{i}.stop", format_time(f.stop), "stop comes before start"))
            if net is not None and f.src in node_set and f.rate > net.node_rate(f.src):
                p.append(Problem(f"traffic.flows.{i}.rate", format_rate(f.rate), f"more than the link rate of node {f.src} ({format_rate(net.node_rate(f.src))})"))
            if net is not None and f.src in node_set and f.dst in node_set and f.src != f.dst and not net.path(f.src, f.dst):
                p.append(Problem(f"traffic.flows.{i}", f"{f.src}->{f.dst}", "no route from the source to the destination: the topology is not connected"))
        for name in doc.traffic.loads:
            node(f"traffic.loads.{name}", name)
        if doc.traffic.loads and doc.traffic.pattern != "uniform":
            p.append(Problem("traffic.loads", doc.traffic.loads, 'per-node loads need pattern = "uniform"'))
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
        nic = doc.nic
        if nic.ingress != "unlimited" and nic.ingress_size < doc.traffic.frame_size:
            p.append(Problem("nic.ingress_size", nic.ingress_size, f'nic.ingress = "{nic.ingress}" needs a buffer of at least one frame ({doc.traffic.frame_size} B)'))
        elif nic.ingress == "per_voq" and nic.ingress_size // max(len(nodes) - 1, 1) < doc.traffic.frame_size:
            p.append(Problem("nic.ingress_size", nic.ingress_size, f"per_voq splits the buffer over {len(nodes) - 1} VOQs; each must hold at least one frame"))
        if doc.switch.pause and doc.switch.buffer == "egress":
            p.append(Problem("switch.pause", True, 'PAUSE is not available with buffer = "egress" (SW-EGDISC has no PAUSE); use "partitioned" or "shared"'))

    # ---- derived quantities ------------------------------------------------------------------

    def _fbmax(self, res: _Resolver) -> float:
        bits = int(self.cm_raw.get("fb_bits", 0))
        if bits > 0:
            return float(2**bits - 1)
        fbmax = (2 * float(res.value("cm.w")) + 1) * float(res.value("cm.qeq"))
        if fbmax <= 0:
            raise _EvalProblem(Problem("cm.qeq", res.value("cm.qeq"), "(2w+1)*qeq must be > 0 to define gd0"))
        return fbmax

    def _switch_xoff(self, res: _Resolver, switch: str | None) -> Fraction:
        """Auto XOFF (scenarios.md §1.1, D12) for ``switch`` (None: the first switch)."""
        doc = self.doc
        memory = res.value("switch.memory_per_port")
        proc = res.value("switch.processing_delay")
        frame = doc.traffic.frame_size
        if self.net is None:  # fat tree: uniform links
            links = [Link("", "", doc.links.rate, doc.links.delay)]
        else:
            sw = switch or self.net.switches[0]
            links = [link for _, link in self.net.neighbours(sw)]
        heads = [_rtt_bw(link.delay_ps, proc, link.rate_bps, frame) for link in links]
        if doc.switch.buffer == "shared":
            return sum((memory - h for h in heads), Fraction(0))
        return memory - max(heads)

    def _global_xoff(self, res: _Resolver) -> int:
        return max(0, math.floor(self._switch_xoff(res, None)))

    def _xoff_at(self, res: _Resolver, switch: str | None) -> int:
        """An XOFF expression naming ``auto`` (that switch's automatic XOFF) or ``ports``.

        The S3 shared-memory rule of scenarios.md §1.1 (4 frames in transit instead of D12's 2)
        is ``"auto - 2*1500B*ports"``; the value differs from switch to switch.
        """
        expr = self.doc.switch.xoff
        assert isinstance(expr, Expr)
        sw = switch or (self.net.switches[0] if self.net is not None and self.net.switches else None)

        def lookup(name: str) -> float:
            if name == "auto":
                return float(self._switch_xoff(res, sw))
            if name == "ports":
                return float(self.net.port_count(sw)) if self.net is not None and sw is not None else 1.0
            return res.number(name, "switch.xoff", expr)

        res.exprs["switch.xoff"] = expr.text
        try:
            number = expr.evaluate(lookup)
        except ExprError as err:
            raise _EvalProblem(Problem("switch.xoff", expr.text, str(err))) from None
        value = _Resolver._convert("switch.xoff", "size", number, expr, None)
        return int(value)

    def _thresholds(self, res: _Resolver, memory: int) -> tuple[dict[str, dict[str, int]], str, str]:
        sw = self.doc.switch
        switches = self.net.switches if self.net is not None else []
        out: dict[str, dict[str, int]] = {}
        for name in switches:
            n = self.net.port_count(name) if self.net is not None else 1
            capacity = memory * n if sw.buffer == "shared" else memory
            if sw.xoff == "auto":
                exact = self._switch_xoff(res, name)
                if exact <= 0 and sw.pause:
                    self.problems.append(Problem("switch.xoff", "auto", f"M - rtt*bw is {float(exact):g} B at switch {name}: the memory leaves no room for PAUSE headroom; give a larger switch.memory_per_port or an explicit xoff"))
                xoff = max(0, math.floor(exact))
            elif _per_switch(sw.xoff):
                try:
                    xoff = self._xoff_at(res, name)
                except _EvalProblem as err:
                    self.problems.append(err.problem)
                    xoff = 0
            else:
                xoff = res.values["switch.xoff"]
            if sw.xon == "auto":
                xon = xoff // 2 if sw.xon_rule == "half" else xoff - 10_000
                if xon < 0 and sw.pause:
                    self.problems.append(Problem("switch.xon", "auto", f"XOFF - 10KB is negative at switch {name} (XOFF = {xoff} B); give an explicit xon"))
                xon = max(0, xon)
            elif isinstance(sw.xon, Expr):
                try:
                    number = sw.xon.evaluate(lambda nm: float(xoff) if nm == "xoff" else res.number(nm, "switch.xon", sw.xon))
                    xon = _Resolver._convert("switch.xon", "size", number, sw.xon, None)
                except ExprError as err:
                    self.problems.append(Problem("switch.xon", sw.xon.text, str(err)))
                    xon = 0
                except _EvalProblem as err:
                    self.problems.append(err.problem)
                    xon = 0
                res.exprs["switch.xon"] = sw.xon.text
            else:
                xon = sw.xon
            if sw.pause and not 0 <= xon <= xoff <= capacity:
                self.problems.append(Problem("switch.xon" if xon > xoff else "switch.xoff", f"xoff={xoff}, xon={xon}", f"PAUSE needs 0 <= xon <= xoff <= capacity ({capacity} B at switch {name})"))
            if not sw.pause:
                xoff, xon = min(xoff, capacity), min(xon, xoff, capacity)
            out[name] = {"capacity": capacity, "xoff": xoff, "xon": xon}
        rule = "auto (half)" if sw.xon_rule == "half" else "auto (xoff - 10KB)"
        xoff_note = "auto: M - rtt*bw" + (" summed over the ports" if sw.buffer == "shared" else "") if sw.xoff == "auto" else ""
        xon_note = rule if sw.xon == "auto" else ""
        return out, xoff_note, xon_note

    def _nic(self, proc: int) -> tuple[int, int, int]:
        """OB size and transfer watermarks (D15); "auto" follows the switch rule (S1 AD-ZRL)."""
        doc, nic = self.doc, self.doc.nic
        frame = doc.traffic.frame_size
        ob = nic.egress_buffer if nic.egress_buffer is not None else frame
        if ob < frame:
            self.problems.append(Problem("nic.egress_buffer", ob, f"must hold at least one frame ({frame} B)"))
        head = _rtt_bw(doc.links.delay, proc, doc.links.rate, frame)
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

    def _window(self) -> tuple[tuple[int, int], str]:
        """Contract "Measurement window": clip to [0, duration]; empty → "run"."""
        doc = self.doc
        dur = doc.duration
        run = (dur // 10, dur)
        w = doc.metrics.window
        if w == "run":
            return run, "run"
        if w == "hotspot":
            if not doc.hotspots:
                return run, "run (no hotspot)"
            t0, t1, note = doc.hotspots[0].start, doc.hotspots[0].end, "hotspot"
        else:
            t0, t1, note = w[0], w[1], ""
        t0, t1 = min(max(t0, 0), dur), min(max(t1, 0), dur)
        if t1 <= t0:
            return run, "run (the window was empty after clipping)"
        return (t0, t1), note

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


# --------------------------------------------------------------------------------------------
# Lowering: docs/core-config.md
# --------------------------------------------------------------------------------------------


def _lower_cm(r: Resolved) -> dict[str, Any]:
    """``cm`` block: ``scheme`` then every parameter; rates as ``*_bps``, times as ``*_ps``."""
    out: dict[str, Any] = {"scheme": r.scheme}
    params = SCHEMES[r.scheme]
    for name, value in r.cm.items():
        kind = params[name].kind
        if kind == "rate":
            out[f"{name}_bps"] = value
        elif kind in ("time", "time_or_auto"):
            out[f"{name}_ps"] = None if value == "auto" else value
        else:
            out[name] = value
    if r.scheme in BCN_FAMILY:
        out["gi_rate_bps"] = r.doc.links.rate  # gi is stated for links.rate (contract)
    return out


def _lower(r: Resolved, sid: str) -> dict[str, Any]:
    doc = r.doc
    net = r.network
    if net is None:  # unreachable: resolution raises first
        raise ScenarioError(f"{sid}: the topology could not be built")
    tr = doc.traffic
    geometric = tr.sizes == "geometric"
    # TG-GEO: a flow arrives per slot with probability load/mean_frames (docs/core-config.md)
    mean_frames = (tr.mean_size or tr.frame_size) / tr.frame_size if geometric else 1.0
    sizes = {"sizes": tr.sizes, "mean_frames": mean_frames}
    sources: list[dict[str, Any]] = []
    if tr.pattern == "uniform":
        for node in r.nodes:
            load = tr.loads.get(node, tr.load)
            if load > 0:
                sources.append({"node": node, "load": load, "dst": None, "start_ps": tr.start, "stop_ps": tr.stop, **sizes})
    for f in tr.flows:
        sources.append(
            {
                "node": f.src,
                "load": f.rate / net.node_rate(f.src),
                "dst": f.dst,
                "start_ps": f.start if f.start is not None else tr.start,
                "stop_ps": f.stop if f.stop is not None else tr.stop,
                **sizes,
            }
        )
    if net.fat_tree is not None:
        ft = net.fat_tree
        topology: dict[str, Any] = {
            "switches": [],
            "nodes": list(net.nodes),
            "links": [],
            "legacy": list(doc.topology.legacy),
            "routing": net.routing,
            "fat_tree": {
                "radix": ft.radix,
                "levels": ft.levels,
                "merged_top": ft.merged_top,
                "rate_bps": doc.links.rate,
                "delay_ps": doc.links.delay,
            },
        }
    else:
        topology = {
            "switches": list(net.switches),
            "nodes": list(net.nodes),
            "links": [{"a": link.a, "b": link.b, "rate_bps": link.rate_bps, "delay_ps": link.delay_ps} for link in net.links],
            "legacy": list(doc.topology.legacy),
            "routing": net.routing,
            "fat_tree": None,
        }
    sw = doc.switch
    nic = doc.nic
    return {
        "version": CORE_CONFIG_VERSION,
        "seed": doc.seed,
        "duration_ps": doc.duration,
        "run_to_completion": doc.traffic.run_to_completion,
        "topology": topology,
        "switch": {
            "buffer": sw.buffer,
            "memory_per_port": r.memory_per_port,
            "oq_limit": r.oq_limit,
            "processing_delay_ps": r.processing_delay_ps,
            "pause": sw.pause,
            "thresholds": {name: dict(t) for name, t in r.thresholds.items()},
        },
        "nic": {
            "ingress": nic.ingress,
            "ingress_size": nic.ingress_size,
            "on_full": nic.on_full,
            "egress_buffer": r.egress_buffer,
            "egress_xoff": r.egress_xoff,
            "egress_xon": r.egress_xon,
            "processing_delay_ps": nic.processing_delay,
        },
        "traffic": {"frame_size": tr.frame_size, "sources": sources},
        "hotspots": [{"node": h.node, "rate": h.rate, "start_ps": h.start, "end_ps": h.end} for h in doc.hotspots],
        "cm": _lower_cm(r),
        "metrics": {
            "bin_ps": doc.metrics.bin,
            "window_ps": list(r.window_ps),
            "hot_port": r.hot_port,
            "queues": list(r.queues),
            "per_flow": [list(p) for p in r.per_flow],
        },
    }


# --------------------------------------------------------------------------------------------
# Loading and the catalog
# --------------------------------------------------------------------------------------------


def _catalog_dir() -> importlib.resources.abc.Traversable:
    return importlib.resources.files("cnsim") / "scenarios"


def scenarios() -> list[str]:
    """The ids of the catalog shipped inside the package, sorted."""
    return sorted(p.name.removesuffix(".toml") for p in _catalog_dir().iterdir() if p.name.endswith(".toml"))


def _read_text(path: Path) -> str:
    """A scenario file's text; a file that is not UTF-8 or cannot be read is bad input."""
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise ScenarioError(f"{path}: not a UTF-8 text file (byte {err.start} cannot be decoded); save it as UTF-8 TOML") from None
    except OSError as err:
        raise ScenarioError(f"{path}: cannot be read: {err.strerror or err}") from None


def _read_toml(text: str, where: str) -> dict[str, Any]:
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise ScenarioError(f"{where}: not valid TOML: {err}") from None
    if not doc:
        raise ScenarioError(f"{where}: the scenario file is empty; a scenario needs at least `duration` and a topology (see `cnsim show zhb-og-single-hop`)")
    return doc


def load(ref: Union[str, Path, Scenario]) -> Scenario:
    """A catalog id, or a path to a scenario TOML file, → :class:`Scenario`."""
    if isinstance(ref, Scenario):
        return ref.copy()
    text_ref = str(ref)
    if not isinstance(ref, Path) and text_ref in scenarios():
        res = _catalog_dir() / f"{text_ref}.toml"
        return Scenario(_read_toml(res.read_text(encoding="utf-8"), text_ref), text_ref, f"catalog:{text_ref}")
    path = Path(text_ref)
    if path.is_file():
        return Scenario(_read_toml(_read_text(path), str(path)), path.stem, str(path))
    known = ", ".join(scenarios())
    raise ScenarioError(
        f"unknown scenario {text_ref!r}: not a catalog id and not a file. "
        f"Catalog ids: {known} (see `cnsim list`), or give the path of a scenario .toml file."
    )
