"""The expression language of scenario values (spec/contract.md, "Expressions").

A numeric ``cm.*`` or ``switch.*`` value may be a string such as ``"2.5*gd0"``, ``"m/4"`` or
``"xoff - 20KB"``: numbers (optionally with a unit), names, ``+ - * /``, unary minus and
parentheses. This is a small recursive-descent parser; nothing is ever passed to ``eval()``.
An expression is at most :data:`MAX_CHARS` characters and :data:`MAX_DEPTH` nested parentheses
deep (longer or deeper is refused with :class:`ExprError`); trees are evaluated without recursion.

Inside an expression every quantity is a float in base units chosen so that products come out
right: sizes in **bytes**, rates in **bit/s**, times in **seconds** (so ``2*1us*rate/8`` is a
number of bytes). A bare number is just a number. Which names exist, and what they are bound
to, is the caller's business (:mod:`cnsim.scenario` binds ``gd0, gd, qeq, w, ru, m, rate,
xoff`` and the selected scheme's other numeric parameters).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

from .units import PS_PER_S, RATE_UNITS, SIZE_UNITS, TIME_UNITS

__all__ = ["Expr", "ExprError", "parse_expr", "looks_like_expr", "MAX_CHARS", "MAX_DEPTH"]

#: The longest expression accepted, in characters (real ones are a few dozen).
MAX_CHARS: Final = 500
#: The most parentheses nested inside one another.
MAX_DEPTH: Final = 32


class ExprError(ValueError):
    """An expression that cannot be parsed or evaluated."""


def _show(text: str) -> str:
    """``text`` quoted for a message; a long one cut to its start and its length."""
    if len(text) <= 60:
        return repr(text)
    return f"{text[:40]!r}… ({len(text):,} characters)"


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
        f"unknown unit {unit[:20]!r} in expression {_show(text)} (units: ps ns us ms s, bps Kbps Mbps Gbps, "
        "B KB MB KiB MiB; write a product with '*', e.g. '2*w')"
    )


def _tokenize(text: str) -> tuple[list[tuple[str, object]], list[str]]:
    """The tokens of ``text`` as (kind, value), and each one's text as written (for messages: a
    number's value would read '2.0' for '2', '0.5' for the '.5' of '1.5.5')."""
    tokens: list[tuple[str, object]] = []
    written: list[str] = []
    pos = 0
    stripped_end = len(text.rstrip())
    while pos < stripped_end:
        m = _TOKEN_RE.match(text, pos)
        if m is None or m.end() == pos:
            raise ExprError(f"unexpected character {text[pos:].strip()[:1]!r} in expression {_show(text)}")
        if m["num"] is not None:
            value = float(m["num"])
            if m["unit"]:
                value *= _unit_factor(m["unit"], text)
            tokens.append(("num", value))
        elif m["name"] is not None:
            tokens.append(("name", m["name"]))
        else:
            tokens.append(("op", m["op"]))
        written.append(m.group(0).strip())
        pos = m.end()
    return tokens, written


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        if len(text.strip()) > MAX_CHARS:
            raise ExprError(f"expression too long: {len(text.strip()):,} characters; at most {MAX_CHARS} are allowed")
        self.tokens, self.written = _tokenize(text)
        self.i = 0
        self.depth = 0

    def _peek(self) -> tuple[str, object] | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def _fail(self, what: str) -> ExprError:
        return ExprError(f"{what} in expression {_show(self.text)}")

    def parse(self) -> _Node:
        if not self.tokens:
            raise self._fail("nothing to evaluate")
        node = self._sum()
        if self._peek() is not None:
            raise self._fail(f"unexpected {self.written[self.i][:20]!r}")
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
        # a run of signs in a loop, not a recursion: "- - -x" is one negation
        negative = False
        while (tok := self._peek()) in (("op", "-"), ("op", "+")):
            self.i += 1
            negative ^= tok == ("op", "-")
        node = self._atom()
        return _Neg(node) if negative else node

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
            if self.depth >= MAX_DEPTH:
                raise self._fail(f"expression too deep: more than {MAX_DEPTH} nested parentheses")
            self.depth += 1
            node = self._sum()
            self.depth -= 1
            if self._peek() != ("op", ")"):
                raise self._fail("missing ')'")
            self.i += 1
            return node
        raise self._fail(f"unexpected {self.written[self.i - 1][:20]!r}")


def _names(node: _Node, out: set[str]) -> None:
    todo = [node]
    while todo:
        n = todo.pop()
        if isinstance(n, _Name):
            out.add(n.name)
        elif isinstance(n, _Neg):
            todo.append(n.operand)
        elif isinstance(n, _Bin):
            todo += (n.right, n.left)


@dataclass(frozen=True)
class Expr:
    """A parsed expression; ``text`` is what the user wrote. Two expressions are equal when
    their texts are (the tree follows from the text; comparing trees would recurse)."""

    text: str
    tree: _Node = field(compare=False, repr=False)

    @property
    def names(self) -> frozenset[str]:
        """The names the expression refers to."""
        out: set[str] = set()
        _names(self.tree, out)
        return frozenset(out)

    def evaluate(self, lookup: Callable[[str], float]) -> float:
        """Evaluate with ``lookup(name)`` giving each name's value (base units); left to right,
        with an explicit stack (a long sum is a deep tree)."""
        values: list[float] = []
        todo: list[tuple[_Node, bool]] = [(self.tree, False)]
        while todo:
            node, operands_done = todo.pop()
            if isinstance(node, _Num):
                values.append(node.value)
            elif isinstance(node, _Name):
                values.append(float(lookup(node.name)))
            elif isinstance(node, _Neg):
                if operands_done:
                    values.append(-values.pop())
                else:
                    todo += ((node, True), (node.operand, False))
            elif not operands_done:
                todo += ((node, True), (node.right, False), (node.left, False))
            else:
                right = values.pop()
                left = values.pop()
                if node.op == "+":
                    values.append(left + right)
                elif node.op == "-":
                    values.append(left - right)
                elif node.op == "*":
                    values.append(left * right)
                elif right == 0:
                    raise ExprError(f"division by zero in expression {_show(self.text)}")
                else:
                    values.append(left / right)
        return values[0]

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
