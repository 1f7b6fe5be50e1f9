"""Units (contract "Command line": ps ns us ms s, bps Kbps Mbps Gbps, B KB MB; KB = 1000 B)."""

from __future__ import annotations

from typing import Any

import pytest
from cnsim.units import (
    UnitError,
    format_rate,
    format_size,
    format_time,
    parse_rate,
    parse_size,
    parse_time,
)
from hypothesis import given
from hypothesis import strategies as st


@pytest.mark.parametrize(
    ("text", "ps"),
    [
        ("500us", 500_000_000),
        ("1us", 1_000_000),
        ("0.5us", 500_000),
        ("1.5 ms", 1_500_000_000),
        ("0.1s", 100_000_000_000),
        ("7ns", 7_000),
        ("3ps", 3),
        (0.6, 600_000_000_000),  # a bare number is seconds
        (2, 2_000_000_000_000),
        ("1e-6", 1_000_000),
    ],
)
def test_times(text: object, ps: int) -> None:
    assert parse_time(text) == ps


@pytest.mark.parametrize(
    ("text", "bps"),
    [("10Gbps", 10**10), ("1 Mbps", 10**6), ("12Mbps", 12 * 10**6), ("2.5Gbps", 25 * 10**8), ("5Kbps", 5000), (1e9, 10**9), ("4Gb/s", 4 * 10**9), ("5kbps", 5000), ("1gbps", 10**9)],
)
def test_rates(text: object, bps: int) -> None:
    assert parse_rate(text) == bps


@pytest.mark.parametrize(
    ("text", "nbytes"),
    [("600KB", 600_000), ("1.5 MB", 1_500_000), ("150KiB", 153_600), ("1MiB", 1_048_576), ("1500B", 1500), (1500, 1500), ("37.5KB", 37_500), ("600kB", 600_000)],
)
def test_sizes(text: object, nbytes: int) -> None:
    assert parse_size(text) == nbytes


@pytest.mark.parametrize(
    ("parser", "value", "fragment"),
    [
        (parse_time, "5 parsecs", "unknown unit 'parsecs'"),
        (parse_time, "five us", "cannot read"),
        (parse_time, "5xs", "unknown unit 'xs'"),
        (parse_time, "5" + "q" * 25, "unknown unit '" + "q" * 20 + "' in"),  # a long unit is cut to 20 characters
        (parse_time, "-1us", "negative"),
        (parse_time, "0.5ps", "whole number"),
        (parse_time, True, "boolean"),
        (parse_rate, "10Gbs", "unknown unit"),
        (parse_rate, "10GBps", "'B' is a byte"),  # bytes per second, not 10 Gb/s
        (parse_rate, "10GB/s", "'B' is a byte"),
        (parse_size, "150Kb", "'b' is a bit"),  # kilobits, not 150 KB
        (parse_size, "1500b", "'b' is a bit"),
        (parse_rate, "-5Gbps", "negative"),
        (parse_size, "1.5B", "whole number"),
        (parse_size, "600KBB", "unknown unit"),
        (parse_size, "", "cannot read"),
        (parse_size, [1], "got list"),
        # exponents beyond the decimal context: refused, not an Overflow, not rounded to zero
        (parse_time, "1e999999s", "out of range"),
        (parse_size, "1e1000000B", "out of range"),
        (parse_rate, 1e308, "out of range"),
        (parse_time, "1e-999999999999s", "whole number"),
    ],
)
def test_bad_values(parser, value: object, fragment: str) -> None:
    with pytest.raises(UnitError, match=fragment):
        parser(value)


def test_unit_error_is_value_error() -> None:
    assert issubclass(UnitError, ValueError)


def test_format_is_exact_and_shortest() -> None:
    assert format_time(1_000_000) == "1us"
    assert format_time(600_000_000_000) == "600ms"
    assert format_time(1_500_000) == "1500ns"
    assert format_rate(10**10) == "10Gbps"
    assert format_size(594_500) == "594500B"
    assert format_size(600_000) == "600KB"


@given(st.integers(min_value=0, max_value=10**15))
def test_round_trip(n: int) -> None:
    assert parse_time(format_time(n)) == n
    if n <= 1_600 * 10**9:
        assert parse_rate(format_rate(n)) == n
    if n <= 10**12:
        assert parse_size(format_size(n)) == n


@pytest.mark.parametrize(
    ("parse", "value", "limit"),
    [(parse_rate, 1e16, "1600Gbps"), (parse_rate, "1601Gbps", "1600Gbps"), (parse_size, "2000000MB", "1 TB"), (parse_time, "1e7s", "1000000s"), (parse_time, 10**30, "1000000s")],
)
def test_physical_ranges(parse: Any, value: Any, limit: str) -> None:
    """Issue 13: values beyond physical ranges are refused with the limit, in a short message."""
    with pytest.raises(UnitError, match="out of range") as err:
        parse(value)
    assert limit in str(err.value) and len(str(err.value)) < 200


def test_range_limits_are_accepted() -> None:
    assert parse_rate("1600Gbps") == 1_600 * 10**9
    assert parse_size("1000000MB") == 10**12
    assert parse_time("1000000s") == 10**18


def test_every_spelling_of_a_rate() -> None:
    assert [parse_rate(t) for t in ("7b/s", "7bps", "7kb/s", "7Kbps", "7Mb/s", "7mbps", "7Gb/s")] == [7, 7, 7_000, 7_000, 7 * 10**6, 7 * 10**6, 7 * 10**9]


def test_every_unit_of_a_format() -> None:
    assert [format_time(x) for x in (0, 3, 3_000, 3 * 10**6, 3 * 10**9, 3 * 10**12)] == ["0ps", "3ps", "3ns", "3us", "3ms", "3s"]
    assert [format_rate(x) for x in (0, 3, 3_000, 3 * 10**6, 3 * 10**9)] == ["0bps", "3bps", "3Kbps", "3Mbps", "3Gbps"]
    assert [format_size(x) for x in (0, 3, 3_000, 3 * 10**6)] == ["0B", "3B", "3KB", "3MB"]


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
def test_non_finite_numbers_are_refused(value: float) -> None:
    with pytest.raises(UnitError, match="not"):
        parse_time(value)


def test_the_time_limit_is_exact() -> None:
    with pytest.raises(UnitError, match="out of range"):
        parse_time("1000001s")


def test_a_long_value_is_cut_to_40_characters_in_messages() -> None:
    # 10**39 has 40 digits and is quoted whole; 10**40 has 41 and is cut to 37 and "..."
    with pytest.raises(UnitError) as whole:
        parse_time(10**39)
    assert str(10**39) in str(whole.value)
    with pytest.raises(UnitError) as cut:
        parse_time(10**40)
    assert "1" + "0" * 36 + "... is out of range" in str(cut.value)
