"""Checking a table of one scheme's ``cm`` parameters (contract "Schemes and presets") against
:mod:`cnsim.cmparams`: unknown names and bad values become problems; once every expression is
evaluated, :func:`check_resolved_cm` checks the values again (an expression's result against its
range) and against each other and the network (rmin below the link rates, pmin <= pmax, …)."""

from __future__ import annotations

import math
from typing import Any

from ..cmparams import SCHEMES, Param
from ..errors import Problem, did_you_mean
from ..expr import Expr, ExprError, parse_expr
from ..topology import Network
from ..units import (
    UnitError,
    format_rate,
    format_size,
    format_time,
)
from .fields import plain_number, quantity_or_expr

# --------------------------------------------------------------------------------------------
# cm parameters: per-value checks
# --------------------------------------------------------------------------------------------


def check_param(param: Param, value: Any) -> Any:
    """Validate one cm value; returns the typed value (base units) or an :class:`Expr`."""
    kind = param.kind
    value = plain_number(value)
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
        except OverflowError:  # an int past a float's range (10**400 in the API, 400 digits in --set)
            raise ValueError(f"out of range; allowed: {param.allowed()}") from None
        if not math.isfinite(number) or number != int(number):
            raise ValueError(f"allowed: {param.allowed()}")
        return check_range(param, int(number))
    if kind == "time_or_auto" and value == "auto":
        return value
    if kind == "float":
        if isinstance(value, bool):
            raise ValueError(f"allowed: {param.allowed()}")
        if isinstance(value, (int, float)):
            try:
                return check_range(param, float(value))
            except OverflowError:  # an int past a float's range: OverflowError, a traceback
                raise ValueError(f"out of range; allowed: {param.allowed()}") from None
        if isinstance(value, str):
            try:
                return parse_expr(value)
            except ExprError as err:
                raise ValueError(f"{err}; allowed: {param.allowed()}") from None
        raise ValueError(f"allowed: {param.allowed()}")
    qkind = "time" if kind == "time_or_auto" else kind
    try:
        typed = quantity_or_expr(qkind)(value)
    except (UnitError, ValueError) as err:
        raise ValueError(f"{err}; allowed: {param.allowed()}") from None
    return typed if isinstance(typed, Expr) else check_range(param, typed)


def check_range(param: Param, value: float) -> Any:
    """``value`` if it is finite and inside the parameter's range, else ValueError."""
    if not math.isfinite(value):
        raise ValueError(f"not a finite number; allowed: {param.allowed()}")
    if not param.contains(value):
        raise ValueError(f"out of range; allowed: {param.allowed()}")
    return value


def check_cm_table(
    scheme: str, table: dict[str, Any], prefix: str, problems: list[Problem]
) -> dict[str, Any]:
    """Validate a table of ``scheme``'s parameters; unknown keys and bad values are problems."""
    params = SCHEMES[scheme]
    # [cm] itself also holds `scheme` and `presets`: a typo of those is not a parameter's
    table_keys = ("scheme", "presets") if prefix == "cm" else ()
    out: dict[str, Any] = {}
    for name, value in table.items():
        key = f"{prefix}.{name}"
        if name not in params:
            have = ", ".join(params) if params else "none (it takes no parameters)"
            hint = did_you_mean(name, [*params, *table_keys])
            problems.append(
                Problem(key, value, f'scheme "{scheme}" has no parameter "{name}".{hint} Its parameters: {have} (`cnsim keys cm` describes them)')
            )
            continue
        try:
            out[name] = check_param(params[name], value)
        except ValueError as err:
            problems.append(Problem(key, plain_number(value), str(err)))
    return out




# --------------------------------------------------------------------------------------------
# cm parameters: resolved values, against each other and the network
# --------------------------------------------------------------------------------------------

_SHOW = {"size": format_size, "rate": format_rate, "time": format_time, "time_or_auto": format_time}


def _show(param: Param, value: Any) -> str:
    fmt = _SHOW.get(param.kind)
    return fmt(int(value)) if fmt is not None else f"{value:g}"


def check_resolved_cm(
    values: dict[str, Any], params: dict[str, Param], exprs: dict[str, str], net: Network | None, problems: list[Problem]
) -> None:
    """The scheme's resolved ``values`` (name → base units): every number in its range (a value
    computed from an expression was not checked as it was read), then the relations between
    parameters and the rates the network's links allow."""
    bad: set[str] = set()  # out of range: left out of the relations below
    for name, value in values.items():
        param = params[name]
        if param.kind in ("choice", "bool") or isinstance(value, bool) or not isinstance(value, (int, float)):
            continue
        try:
            check_range(param, value)
        except ValueError as err:
            given = f"{exprs[name]} = {_show(param, value)}" if name in exprs else value
            problems.append(Problem(f"cm.{name}", given, str(err)))
            bad.add(name)

    def number(name: str) -> float | None:
        value = None if name in bad else values.get(name)
        return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None

    def relation(small: str, large: str, what: str) -> None:
        lo, hi = number(small), number(large)
        if lo is not None and hi is not None and lo > hi:
            problems.append(Problem(f"cm.{small}", _show(params[small], lo), f"{what}; allowed: at most cm.{large} ({_show(params[large], hi)})"))

    relation("pmin", "pmax", "the lowest sampling probability is above the highest")
    relation("sample_jitter", "sample_bytes", "the jitter of the byte interval is larger than the interval")
    relation("kmin", "kmax", "RED marks nothing below Kmin and everything above Kmax")
    qeq_flow, qmax_flow = number("qeq_flow"), number("qmax_flow")
    if qeq_flow is not None and qmax_flow is not None and qmax_flow < qeq_flow:
        problems.append(Problem("cm.qmax_flow", format_size(int(qmax_flow)), f"the per-flow queue bound is below the per-flow equilibrium; allowed: at least cm.qeq_flow ({format_size(int(qeq_flow))})"))
    if net is not None and net.nodes:
        slowest = min(net.nodes, key=net.node_rate)
        line = net.node_rate(slowest)
        for name, what in (("rmin", "the minimum rate"), ("ru", "the rate unit")):
            rate = number(name)
            if rate is not None and rate > line:
                problems.append(Problem(f"cm.{name}", format_rate(int(rate)), f"{what} is above the link rate of node {slowest}; allowed: at most {format_rate(line)}"))
