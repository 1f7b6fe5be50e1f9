"""The expression language (contract "Expressions"): a safe parser, never eval()."""

from __future__ import annotations

import pytest
from cnsim.expr import ExprError, parse_expr

NAMES = {"w": 2.0, "qeq": 150_000.0, "rate": 1e10, "m": 600_000.0}


def ev(text: str) -> float:
    return parse_expr(text).evaluate(NAMES.__getitem__)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("1 + 2 * 3", 7.0),
        ("(1 + 2) * 3", 9.0),
        ("-2 * -3", 6.0),
        ("m/4", 150_000.0),
        ("0.5/((2*w+1)*qeq)", 0.5 / 750_000),
        ("10KB + 1", 10_001.0),
        ("2*1us*rate/8", 2_500.0),  # times in seconds, rates in bit/s → bytes
        ("rate/1Mbps", 10_000.0),
        ("1.5 MB - 1KiB", 1_500_000 - 1024.0),
        ("8 - 2 - 1", 5.0),
        ("8 / 2 / 2", 2.0),
        ("1e-3*2", 0.002),
    ],
)
def test_evaluates(text: str, value: float) -> None:
    assert ev(text) == pytest.approx(value, rel=1e-15)


def test_names_are_reported() -> None:
    assert parse_expr("2.5*gd0 + qeq/w").names == {"gd0", "qeq", "w"}


@pytest.mark.parametrize("text", ["", "1 +", "(1", "1)", "2 w", "__import__('os')", "1 ** 2", "a.b", "3 % 2"])
def test_rejects(text: str) -> None:
    with pytest.raises(ExprError):
        parse_expr(text)


def test_division_by_zero() -> None:
    with pytest.raises(ExprError, match="division by zero"):
        ev("1/(w-2)")
