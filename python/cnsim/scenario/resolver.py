"""Values that depend on each other: the resolver evaluates ``cm.*`` and ``switch.*``
expressions in dependency order (contract "Expressions"), and :class:`Resolved`, the outcome of
resolving a scenario."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from ..cmparams import Param
from ..errors import Problem
from ..expr import Expr, ExprError
from ..topology import Network
from ..units import (
    PS_PER_S,
    largest,
)
from .cmtable import check_range
from .schema import ScenarioDoc

# --------------------------------------------------------------------------------------------
# Resolution
# --------------------------------------------------------------------------------------------


class EvalProblem(Exception):
    def __init__(self, problem: Problem) -> None:
        super().__init__(problem.message)
        self.problem = problem


_KIND_SCALE = {"size": 1.0, "rate": 1.0, "time": 1.0 / PS_PER_S, "time_or_auto": 1.0 / PS_PER_S}
_NAME_KEYS = {"m": "switch.memory_per_port", "rate": "links.rate", "xoff": "switch.xoff"}


class Resolver:
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
            raw = self.entries[key][1] if key in self.entries else None
            raise EvalProblem(
                Problem(
                    key,
                    "auto" if callable(raw) else raw,  # a derived value (an Expr is not callable)
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
            raise EvalProblem(Problem(key, str(raw), str(err))) from None
        finally:
            self._stack.pop()
        self.values[key] = result
        return result

    def number(self, name: str, user: str, expr: Any) -> float:
        """An expression name's value as a float in expression units (s, bit/s, bytes)."""
        key = self.names.get(name)
        if key is None or key not in self.entries:
            known = ", ".join(n for n, k in self.names.items() if k in self.entries)
            raise EvalProblem(Problem(user, str(expr), f'unknown name "{name}"; names here: {known}'))
        kind = self.entries[key][0]
        value = self.value(key)
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            raise EvalProblem(Problem(user, str(expr), f'"{name}" is {value!r}, not a number'))
        return float(value) * _KIND_SCALE.get(kind, 1.0)

    @staticmethod
    def _convert(key: str, kind: str, number: float, expr: Expr, param: Param | None) -> Any:
        if not math.isfinite(number):
            raise EvalProblem(Problem(key, expr.text, "the expression is not a finite number"))
        if kind in ("size", "rate", "time", "time_or_auto"):
            qkind = "time" if kind == "time_or_auto" else kind
            scaled = number * PS_PER_S if qkind == "time" else number
            if scaled < 0:
                raise EvalProblem(Problem(key, expr.text, f"the expression gives {number:g}, a negative {kind}"))
            most, most_text = largest(qkind)
            if not scaled <= most:  # an infinite product too (1e300 s in ps)
                raise EvalProblem(Problem(key, expr.text, f"the expression gives {number:g}: out of range; the largest {qkind} allowed is {most_text}"))
            value = int(round(scaled))
            if param is not None:  # the range a literal is checked against (cmtable.check_param)
                try:
                    check_range(param, value)
                except ValueError as err:
                    raise EvalProblem(Problem(key, expr.text, f"the expression gives {number:g}: {err}")) from None
            return value
        if kind == "int":
            if number != int(number):
                raise EvalProblem(Problem(key, expr.text, f"the expression gives {number:g}, not an integer"))
            return int(number)
        if param is not None:
            try:
                return check_range(param, number)
            except ValueError as err:
                raise EvalProblem(Problem(key, expr.text, f"the expression gives {number:g}: {err}")) from None
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
    #: targets.md §A's named windows (``windows.*`` in summary.json), in ps
    windows_ps: dict[str, tuple[int, int]]
    #: nodes whose incoming flows are hot (``fct_ms.hot``)
    hot_nodes: list[str]
    hot_port: str
    hot_node: str | None
    queues: list[str]
    per_flow: list[tuple[str, str]]
    nodes: list[str] = field(default_factory=list)


#: hosts above which a fat tree is refused (the engine's routing tables are hosts × switches)
