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


def test_the_documented_limits_at_their_edge() -> None:
    """docs/robustness.md: at most 500 characters and 32 nested parentheses."""
    assert ev("1+" * 249 + "10") == 259.0  # 500 characters
    with pytest.raises(ExprError, match="expression too long: 501 characters; at most 500 are allowed"):
        parse_expr("1+" * 249 + "100")
    assert ev("(" * 32 + "1" + ")" * 32) == 1.0
    with pytest.raises(ExprError, match="expression too deep: more than 32 nested parentheses"):
        parse_expr("(" * 33 + "1" + ")" * 33)
    # a group that closes gives back its one level, no more: 1 + 32 levels deep is refused
    with pytest.raises(ExprError, match="too deep"):
        parse_expr("((1)+" + "(" * 32 + "1" + ")" * 32 + ")")


def test_messages_quote_a_long_expression_by_its_start_and_length() -> None:
    sixty = "1+" * 29 + "1$"
    with pytest.raises(ExprError) as err:
        parse_expr(sixty)
    assert str(err.value) == f"unexpected character '$' in expression {sixty!r}"
    sixty_one = "1+" * 29 + "11$"
    with pytest.raises(ExprError) as err:
        parse_expr(sixty_one)
    assert str(err.value) == f"unexpected character '$' in expression {sixty_one[:40]!r}… (61 characters)"
    with pytest.raises(ExprError, match="unexpected character '\\$' in expression '1 \\+ \\$2'"):
        parse_expr("1 + $2")  # the character, not what follows it
    with pytest.raises(ExprError, match="unknown unit 'abcdefghijklmnopqrst' in expression"):
        parse_expr("2abcdefghijklmnopqrstuvwxyz")
    with pytest.raises(ExprError, match="unexpected 'abcdefghijklmnopqrst' in expression"):
        parse_expr("(1) abcdefghijklmnopqrstuvwxyz")


@pytest.mark.parametrize(
    ("text", "token"),
    [("1 2", "2"), ("1.5.5", ".5"), ("2*)", ")"), ("1e3KB 4", "4"), ("(1) 2.50us", "2.50us"), ("3 +", None)],
)
def test_an_unexpected_token_is_quoted_as_written(text: str, token: str | None) -> None:
    """'1 2' said "unexpected '2.0'" and '1.5.5' "unexpected '0.5'": the token's value as a
    float, not what the user wrote."""
    with pytest.raises(ExprError) as err:
        parse_expr(text)
    expected = "unexpected end" if token is None else f"unexpected {token!r}"
    assert str(err.value) == f"{expected} in expression {text!r}"
