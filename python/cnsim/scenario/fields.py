"""Field types of the scenario document: names, quantities with units, expressions, the
node list and the measurement window (contract "Scenario document"), each marked with the
:class:`Kind` the key reference (:mod:`cnsim.keys`) shows."""

from __future__ import annotations

import numbers
import re
import types
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import BeforeValidator, Field
from pydantic.fields import FieldInfo

from ..expr import Expr, ExprError, parse_expr
from ..units import (
    UnitError,
    format_time,
    parse_quantity,
    parse_rate,
    parse_size,
    parse_time,
)

CORE_CONFIG_VERSION = 1
#: The largest node count a scenario may have (issue 13: a bigger network is refused up front,
#: before resolution spends minutes building it).
MAX_NODES = 65_536
#: The engine's limit on one switch: its local port numbers stay below 65535
#: (crates/cnsim-core/src/topology: RouteTable::MAX_PORTS = u16::MAX, "fewer than 65535 ports
#: per switch"), so a star has at most 65,534 nodes.
MAX_SWITCH_PORTS = 65_534
_QUANTITY_RE = re.compile(r"^\s*[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?\s*[A-Za-z/]*\s*$")

# --------------------------------------------------------------------------------------------
# Field types
# --------------------------------------------------------------------------------------------


def _check_name(value: Any) -> str:
    """Node / switch names: strings (ints are accepted and converted) without / : -> or spaces."""
    value = plain_number(value)
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise ValueError("a name must be a string such as \"1\", \"H0\" or \"S1\"")
    name = str(value)
    if not name or re.search(r"[\s/:]", name) or "->" in name:
        raise ValueError("a name may not be empty or contain '/', ':', '->' or white space")
    return name


def plain_number(value: Any) -> Any:
    """A number of another numeric type (``numpy.int64``, ``numpy.float32``, ``Fraction``) as a
    plain ``int`` or ``float`` (the API's ``set`` may pass them); booleans and everything else
    unchanged."""
    if isinstance(value, bool) or type(value) in (int, float):
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    return value


def _plain(parse: Callable[[Any], int]) -> Callable[[Any], int]:
    """``parse`` (a units.parse_* function) after :func:`plain_number`."""

    def inner(value: Any) -> int:
        return parse(plain_number(value))

    return inner


parse_time_value, parse_rate_value, parse_size_value = _plain(parse_time), _plain(parse_rate), _plain(parse_size)


def quantity_or_expr(kind: str) -> Callable[[Any], Any]:
    """Validator: a quantity of ``kind`` (int base units) or an :class:`Expr` for later."""

    def check(value: Any) -> Any:
        if isinstance(value, Expr):
            return value
        value = plain_number(value)
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
Time = Annotated[int, BeforeValidator(parse_time_value), Kind("time")]
Rate = Annotated[int, BeforeValidator(parse_rate_value), Kind("rate")]
Size = Annotated[int, BeforeValidator(parse_size_value), Kind("size")]
PositiveTime = Annotated[int, BeforeValidator(lambda v: _positive(parse_time_value(v))), Kind("time", "> 0")]
PositiveRate = Annotated[int, BeforeValidator(lambda v: _positive(parse_rate_value(v))), Kind("rate", "> 0")]
PositiveSize = Annotated[int, BeforeValidator(lambda v: _positive(parse_size_value(v))), Kind("size", "> 0")]


def time_at_least(floor_ps: int) -> Callable[[Any], int]:
    """Validator: a time of at least ``floor_ps`` picoseconds."""

    def check(value: Any) -> int:
        ps = parse_time_value(value)
        if ps < floor_ps:
            raise ValueError(f"must be at least {format_time(floor_ps)}")
        return ps

    return check


Fraction01 = Annotated[float, Field(ge=0.0, le=1.0), Kind("fraction", "in [0, 1]")]
SizeX = Annotated[Any, BeforeValidator(quantity_or_expr("size")), Kind("size", "or an expression")]
TimeX = Annotated[Any, BeforeValidator(quantity_or_expr("time")), Kind("time", "or an expression")]
AutoSizeX = Annotated[Any, BeforeValidator(_auto_or(quantity_or_expr("size"))), Kind("size", '"auto", or an expression')]
AutoSize = Annotated[Any, BeforeValidator(_auto_or(parse_size_value)), Kind("size", 'or "auto"')]
NoneOrSizeX = Annotated[Any, BeforeValidator(_auto_or(quantity_or_expr("size"), "none")), Kind("size", '"none", or an expression')]


def node_list(value: Any) -> Any:
    value = plain_number(value)
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


def window_value(value: Any) -> Any:
    if value in ("hotspot", "run"):
        return value
    if isinstance(value, (list, tuple)) and len(value) == 2:
        t0, t1 = parse_time_value(value[0]), parse_time_value(value[1])
        if t1 < t0:
            raise ValueError("the window's end comes before its start")
        return (t0, t1)
    raise ValueError('expected [t0, t1] (times), "hotspot" or "run"')


#: the type a user writes for a quantity field
UNIT_TYPES = {
    "time": "time (ps ns us ms s)",
    "rate": "rate (bps Kbps Mbps Gbps)",
    "size": "size (B KB MB; KB = 1000 B)",
}


def kind_of(annotation: Any, metadata: Iterable[Any]) -> Kind | None:
    for m in metadata:
        if isinstance(m, Kind):
            return m
    if get_origin(annotation) is Annotated:
        return kind_of(None, get_args(annotation)[1:])
    if get_origin(annotation) in (Union, types.UnionType):
        for arg in get_args(annotation):
            found = kind_of(arg, ())
            if found is not None:
                return found
    return None


def strip_optional(annotation: Any) -> tuple[Any, bool]:
    if get_origin(annotation) in (Union, types.UnionType):
        args = [a for a in get_args(annotation) if a is not type(None)]
        if len(args) == 1:
            return args[0], True
    return annotation, False


def describe_field(field: FieldInfo) -> tuple[str, str]:
    """(type, allowed values) of a model field: the key reference's columns, and what an error
    about a value of the wrong type says is allowed."""
    kind = kind_of(field.annotation, field.metadata)
    annotation, optional = strip_optional(field.annotation)
    if get_origin(annotation) is Annotated:
        annotation = get_args(annotation)[0]
    bounds = [f"{op} {getattr(m, attr)}" for m in field.metadata for attr, op in (("ge", ">="), ("gt", ">"), ("le", "<="), ("lt", "<")) if getattr(m, attr, None) is not None]
    if kind is not None:
        return UNIT_TYPES.get(kind.name, kind.name), kind.extra or (", ".join(bounds))
    if get_origin(annotation) in (Union, types.UnionType):
        # `"all" | list of names`: each alternative as it would be described alone
        alternatives = [describe_field(FieldInfo.from_annotation(a)) for a in get_args(annotation)]
        # an alternative without listed values is allowed as its type ("all" or a list of strings)
        return " or ".join(t for t, _ in alternatives), " or ".join(a or t for t, a in alternatives)
    if get_origin(annotation) is Literal:
        return "choice", " | ".join(f'"{v}"' for v in get_args(annotation))
    if get_origin(annotation) is list:
        (item,) = get_args(annotation)
        inner = kind_of(item, ())
        return f"list of {inner.name + 's' if inner else 'strings'}", ""
    if get_origin(annotation) is dict:
        return "table {name = value}", ""
    name = getattr(annotation, "__name__", str(annotation))
    extra = "optional" if optional else ""
    return {"int": "integer", "float": "number", "bool": "bool", "str": "string"}.get(name, name), ", ".join([*bounds, *([extra] if extra else [])])
