"""Checking a table of one scheme's ``cm`` parameters (contract "Schemes and presets") against
:mod:`cnsim.cmparams`: unknown names and bad values become problems."""

from __future__ import annotations

from typing import Any

from ..cmparams import SCHEMES, Param
from ..errors import Problem, did_you_mean
from ..expr import ExprError, parse_expr
from ..units import (
    UnitError,
)
from .fields import quantity_or_expr

# --------------------------------------------------------------------------------------------
# cm parameters: per-value checks
# --------------------------------------------------------------------------------------------


def check_param(param: Param, value: Any) -> Any:
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
        return check_range(param, int(number))
    if kind == "time_or_auto" and value == "auto":
        return value
    if kind == "float":
        if isinstance(value, bool):
            raise ValueError(f"allowed: {param.allowed()}")
        if isinstance(value, (int, float)):
            return check_range(param, float(value))
        if isinstance(value, str):
            try:
                return parse_expr(value)
            except ExprError as err:
                raise ValueError(f"{err}; allowed: {param.allowed()}") from None
        raise ValueError(f"allowed: {param.allowed()}")
    qkind = "time" if kind == "time_or_auto" else kind
    try:
        return quantity_or_expr(qkind)(value)
    except (UnitError, ValueError) as err:
        raise ValueError(f"{err}; allowed: {param.allowed()}") from None


def check_range(param: Param, value: float) -> Any:
    if param.lo is not None and value < param.lo or param.hi is not None and value > param.hi:
        raise ValueError(f"out of range; allowed: {param.allowed()}")
    return value


def check_cm_table(
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
            out[name] = check_param(params[name], value)
        except ValueError as err:
            problems.append(Problem(key, value, str(err)))
    return out


