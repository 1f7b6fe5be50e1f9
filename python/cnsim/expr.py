"""The expression language of scenario values (spec/contract.md, "Expressions").

A numeric ``cm.*`` or ``switch.*`` value may be a string such as ``"2.5*gd0"``, ``"m/4"`` or
``"xoff - 20KB"``: numbers (optionally with a unit), names, ``+ - * /``, unary minus and
parentheses. This is a small recursive-descent parser; nothing is ever passed to ``eval()``.

Inside an expression every quantity is a float in base units chosen so that products come out
right: sizes in **bytes**, rates in **bit/s**, times in **seconds** (so ``2*1us*rate/8`` is a
number of bytes). A bare number is just a number. Which names exist, and what they are bound
to, is the caller's business (:mod:`cnsim.scenario` binds ``gd0, gd, qeq, w, ru, m, rate,
xoff`` and the selected scheme's other numeric parameters).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from .units import PS_PER_S, RATE_UNITS, SIZE_UNITS, TIME_UNITS

__all__ = ["Expr", "ExprError", "parse_expr", "looks_like_expr"]


class ExprError(ValueError):
    """An expression that cannot be parsed or evaluated."""


@dataclass(frozen=True)
class _Num:
    value: float


@dataclass(frozen=True)
class _Name:
    name: str


@dataclass(frozen=True)
class _Neg:
    operand: _Node


@dataclass(frozen=True)
class _Bin:
    op: str
    left: _Node
    right: _Node


_Node = _Num | _Name | _Neg | _Bin

_TOKEN_RE: Final = re.compile(
    r"\s*(?:"
    r"(?P<num>(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)(?:\s*(?P<unit>[A-Za-z]+))?"
    r"|(?P<name>[A-Za-z_][A-Za-z0-9_]*)"
    r"|(?P<op>[-+*/()])"
    r")"
)


def _unit_factor(unit: str, text: str) -> float:
    """Factor from ``unit`` to the expression base unit (bytes, bit/s, seconds)."""
    u = unit.lower()
    if u in TIME_UNITS:
        return TIME_UNITS[u] / PS_PER_S
    if u in RATE_UNITS:
        return float(RATE_UNITS[u])
    if u in SIZE_UNITS:
        return float(SIZE_UNITS[u])
    raise ExprError(
        f"unknown unit {unit!r} in expression {text!r} (units: ps ns us ms s, bps Kbps Mbps Gbps, "
        "B KB MB KiB MiB; write a product with '*', e.g. '2*w')"
    )


def _tokenize(text: str) -> list[tuple[str, object]]:
    tokens: list[tuple[str, object]] = []
    pos = 0
    stripped_end = len(text.rstrip())
    while pos < stripped_end:
        m = _TOKEN_RE.match(text, pos)
        if m is None or m.end() == pos:
            raise ExprError(f"unexpected character {text[pos:].strip()[:1]!r} in expression {text!r}")
        if m["num"] is not None:
            value = float(m["num"])
            if m["unit"]:
                value *= _unit_factor(m["unit"], text)
            tokens.append(("num", value))
        elif m["name"] is not None:
            tokens.append(("name", m["name"]))
        else:
            tokens.append(("op", m["op"]))
        pos = m.end()
    return tokens


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = _tokenize(text)
        self.i = 0

    def _peek(self) -> tuple[str, object] | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def _fail(self, what: str) -> ExprError:
        return ExprError(f"{what} in expression {self.text!r}")

    def parse(self) -> _Node:
        if not self.tokens:
            raise self._fail("nothing to evaluate")
        node = self._sum()
        if self._peek() is not None:
            raise self._fail(f"unexpected {self._peek()[1]!r}")  # type: ignore[index]
        return node

    def _sum(self) -> _Node:
        node = self._product()
        while (tok := self._peek()) is not None and tok in (("op", "+"), ("op", "-")):
            self.i += 1
            node = _Bin(str(tok[1]), node, self._product())
        return node

    def _product(self) -> _Node:
        node = self._unary()
        while (tok := self._peek()) is not None and tok in (("op", "*"), ("op", "/")):
            self.i += 1
            node = _Bin(str(tok[1]), node, self._unary())
        return node

    def _unary(self) -> _Node:
        tok = self._peek()
        if tok == ("op", "-"):
            self.i += 1
            return _Neg(self._unary())
        if tok == ("op", "+"):
            self.i += 1
            return self._unary()
        return self._atom()

    def _atom(self) -> _Node:
        tok = self._peek()
        if tok is None:
            raise self._fail("unexpected end")
        self.i += 1
        kind, value = tok
        if kind == "num":
            return _Num(float(value))  # type: ignore[arg-type]
        if kind == "name":
            return _Name(str(value))
        if value == "(":
            node = self._sum()
            if self._peek() != ("op", ")"):
                raise self._fail("missing ')'")
            self.i += 1
            return node
        raise self._fail(f"unexpected {value!r}")


def _names(node: _Node, out: set[str]) -> None:
    if isinstance(node, _Name):
        out.add(node.name)
    elif isinstance(node, _Neg):
        _names(node.operand, out)
    elif isinstance(node, _Bin):
        _names(node.left, out)
        _names(node.right, out)


@dataclass(frozen=True)
class Expr:
    """A parsed expression; ``text`` is what the user wrote."""

    text: str
    tree: _Node

    @property
    def names(self) -> frozenset[str]:
        """The names the expression refers to."""
        out: set[str] = set()
        _names(self.tree, out)
        return frozenset(out)

    def evaluate(self, lookup: Callable[[str], float]) -> float:
        """Evaluate with ``lookup(name)`` giving each name's value (base units)."""

        def ev(node: _Node) -> float:
            if isinstance(node, _Num):
                return node.value
            if isinstance(node, _Name):
                return float(lookup(node.name))
            if isinstance(node, _Neg):
                return -ev(node.operand)
            left, right = ev(node.left), ev(node.right)
            if node.op == "+":
                return left + right
            if node.op == "-":
                return left - right
            if node.op == "*":
                return left * right
            if right == 0:
                raise ExprError(f"division by zero in expression {self.text!r}")
            return left / right

        return ev(self.tree)

    def __str__(self) -> str:
        return self.text


def parse_expr(text: str) -> Expr:
    """Parse ``text``; raise :class:`ExprError` with the position of the problem."""
    return Expr(text.strip(), _Parser(text).parse())


def looks_like_expr(text: str) -> bool:
    """True when ``text`` parses as an expression (used to tell expressions from typos)."""
    try:
        parse_expr(text)
    except ExprError:
        return False
    return True
