"""Pass conditions of a check: small, safe expressions over its measured quantities.

A condition is a Python-syntax expression such as ``all(hot >= 0.95 * 10)`` or
``q_qcn >= 1.5 * q_ecm``. Names are the check's measures (numpy arrays: one value per run point,
or points × entities for a glob metric); arithmetic and comparisons are element-wise (numpy
broadcasting), a chained comparison ``a <= x <= b`` means both, ``and``/``or``/``not`` are
element-wise too. Functions: ``all any min max mean sum abs std
jain diff argmax argmin len isfinite minimum maximum``; ``min``/``max``/``mean``/``sum``/``jain``
reduce the last axis, ``minimum``/``maximum`` take two arguments element-wise. Subscripts
(``x[0]``, ``x[-1]``, ``x[1:]``) select points; a list ``[61.5, 129.5]`` is an array. Nothing else is allowed — no attributes, no
calls of other names — so a deck file cannot run code.

A condition holds when every element of its (boolean) value is true; a condition whose value is
not boolean is refused when the deck is loaded.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..signals import jain

__all__ = ["FUNCTIONS", "Condition", "ConditionError"]


class ConditionError(ValueError):
    """A condition that cannot be compiled or evaluated."""


def _last(fn: Callable[..., Any]) -> Callable[[Any], Any]:
    def reduce(x: Any) -> Any:
        a = np.asarray(x, dtype=np.float64)
        return fn(a, axis=-1) if a.ndim else a

    return reduce


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "all": lambda x: np.all(np.asarray(x)),
    "any": lambda x: np.any(np.asarray(x)),
    "min": _last(np.min),
    "max": _last(np.max),
    "mean": _last(np.mean),
    "sum": _last(np.sum),
    "std": _last(np.std),
    "jain": lambda x: jain(np.asarray(x, dtype=np.float64)),
    "abs": lambda x: np.abs(np.asarray(x, dtype=np.float64)),
    "diff": lambda x: np.diff(np.asarray(x, dtype=np.float64), axis=-1),
    "argmax": lambda x: np.argmax(np.asarray(x, dtype=np.float64), axis=-1),
    "argmin": lambda x: np.argmin(np.asarray(x, dtype=np.float64), axis=-1),
    "len": lambda x: np.asarray(x).shape[-1] if np.ndim(x) else 1,
    "isfinite": lambda x: np.isfinite(np.asarray(x, dtype=np.float64)),
    "minimum": lambda x, y: np.minimum(np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)),
    "maximum": lambda x, y: np.maximum(np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)),
}

_BINOPS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: np.add, ast.Sub: np.subtract, ast.Mult: np.multiply, ast.Div: np.divide, ast.Pow: np.power,
}
_CMPOPS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Lt: np.less, ast.LtE: np.less_equal, ast.Gt: np.greater, ast.GtE: np.greater_equal,
    ast.Eq: np.equal, ast.NotEq: np.not_equal,
}


@dataclass
class Condition:
    """A compiled pass condition."""

    text: str
    tree: ast.Expression
    names: frozenset[str]

    @classmethod
    def compile(cls, text: str, known: set[str] | None = None) -> Condition:
        """Parse and check ``text``; ``known``: the measure names it may use."""
        try:
            tree = ast.parse(text, mode="eval")
        except SyntaxError as err:
            raise ConditionError(f"{text!r}: not a valid expression ({err.msg})") from None
        names: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                if not isinstance(node.func, ast.Name) or node.func.id not in FUNCTIONS or node.keywords:
                    raise ConditionError(f"{text!r}: only the functions {', '.join(FUNCTIONS)} may be called")
            elif isinstance(node, ast.Name):
                if node.id not in FUNCTIONS:
                    names.add(node.id)
            elif not isinstance(node, (ast.Expression, ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare, ast.Constant,
                                       ast.Subscript, ast.Slice, ast.Load, ast.List, ast.Tuple, ast.USub, ast.UAdd, ast.Not, ast.And, ast.Or,
                                       *_BINOPS, *_CMPOPS)):
                raise ConditionError(f"{text!r}: {type(node).__name__} is not allowed in a condition")
            if isinstance(node, ast.Constant) and (isinstance(node.value, bool) or not isinstance(node.value, (int, float))):
                raise ConditionError(f"{text!r}: only numbers may appear as constants")
        if known is not None and names - known:
            raise ConditionError(f"{text!r}: unknown name(s) {', '.join(sorted(names - known))}; measures: {', '.join(sorted(known))}")
        top = tree.body
        if not isinstance(top, (ast.Compare, ast.BoolOp)) and not (isinstance(top, ast.UnaryOp) and isinstance(top.op, ast.Not)) \
                and not (isinstance(top, ast.Call) and isinstance(top.func, ast.Name) and top.func.id in ("all", "any")):
            raise ConditionError(f"{text!r}: a condition must be a comparison (or all/any/and/or/not of comparisons)")
        return cls(text, tree, frozenset(names))

    def evaluate(self, values: Mapping[str, Any]) -> tuple[bool, Any]:
        """(holds, the condition's value)."""
        value = _eval(self.tree.body, values, self.text)
        arr = np.asarray(value)
        if arr.dtype != np.bool_:
            raise ConditionError(f"{self.text!r}: the value is not true/false ({arr!r})")
        return bool(np.all(arr)), value


def _eval(node: ast.AST, env: Mapping[str, Any], text: str) -> Any:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        if node.id not in env:
            raise ConditionError(f"{text!r}: no value for {node.id!r}")
        return np.asarray(env[node.id])
    if isinstance(node, ast.BinOp):
        return _BINOPS[type(node.op)](_eval(node.left, env, text), _eval(node.right, env, text))
    if isinstance(node, ast.UnaryOp):
        operand = _eval(node.operand, env, text)
        if isinstance(node.op, ast.Not):
            return np.logical_not(operand)
        return np.negative(operand) if isinstance(node.op, ast.USub) else operand
    if isinstance(node, ast.BoolOp):
        parts = [_eval(v, env, text) for v in node.values]
        combine = np.logical_and if isinstance(node.op, ast.And) else np.logical_or
        acc = parts[0]
        for p in parts[1:]:
            acc = combine(acc, p)
        return acc
    if isinstance(node, ast.Compare):
        left = _eval(node.left, env, text)
        out: Any = None
        for op, right_node in zip(node.ops, node.comparators, strict=True):
            right = _eval(right_node, env, text)
            try:
                part = _CMPOPS[type(op)](left, right)
            except ValueError as err:
                raise ConditionError(f"{text!r}: shapes do not match ({err})") from None
            out = part if out is None else np.logical_and(out, part)
            left = right
        return out
    if isinstance(node, (ast.List, ast.Tuple)):
        return np.asarray([_eval(e, env, text) for e in node.elts], dtype=np.float64)
    if isinstance(node, ast.Call):
        assert isinstance(node.func, ast.Name)
        args = [_eval(a, env, text) for a in node.args]
        return FUNCTIONS[node.func.id](*args)
    if isinstance(node, ast.Subscript):
        base = np.asarray(_eval(node.value, env, text))
        sl = node.slice
        try:
            if isinstance(sl, ast.Slice):
                parts = [None if p is None else int(_eval(p, env, text)) for p in (sl.lower, sl.upper, sl.step)]
                return base[slice(*parts)]
            return base[int(_eval(sl, env, text))]
        except IndexError:
            raise ConditionError(f"{text!r}: index out of range for a measure with {base.shape[0]} points") from None
    raise ConditionError(f"{text!r}: {type(node).__name__} is not allowed")
