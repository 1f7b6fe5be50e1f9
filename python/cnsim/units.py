"""Quantities with units: times, rates and sizes (spec/contract.md, "Command line").

cnsim keeps time as integer **picoseconds**, rates as integer **bit/s** and sizes as integer
**bytes** (DESIGN.md principle 2). This module turns what a user writes into those integers
and back into short exact strings:

* times: ``ps ns us ms s``                       → int picoseconds; a bare number is **seconds**;
* rates: ``bps Kbps Mbps Gbps`` (also ``b/s`` … ``Gb/s``) → int bit/s; a bare number is **bit/s**;
* sizes: ``B KB MB`` (KB = 1000 B, MB = 10^6 B) and ``KiB MiB`` (1024-based) → int bytes;
  a bare number is **bytes**.

Strings may put white space between the number and the unit (``"1.5 MB"``); unit prefixes are
matched without regard to case, but not the bit and the byte: a rate's ``b`` is a bit (``"10GBps"``
or ``"10GB/s"``, bytes per second, are refused, not read as 10 Gb/s) and a size's ``B`` a byte
(``"150Kb"``, kilobits, is refused). Arithmetic is decimal, so ``"0.1s"`` is exactly 10^11 ps.
A value that is negative, not a whole number of base units, or has an unknown unit raises
:class:`UnitError` (a ``ValueError``) whose message says what is allowed.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from typing import Final

__all__ = [
    "UnitError",
    "TIME_UNITS",
    "RATE_UNITS",
    "SIZE_UNITS",
    "parse_time",
    "parse_rate",
    "parse_size",
    "parse_quantity",
    "format_time",
    "format_rate",
    "format_size",
    "PS_PER_S",
]

PS_PER_S: Final = 10**12

#: unit name (lower case) → picoseconds
TIME_UNITS: Final[dict[str, int]] = {"ps": 1, "ns": 10**3, "us": 10**6, "ms": 10**9, "s": 10**12}
#: unit name (lower case) → bit/s
RATE_UNITS: Final[dict[str, int]] = {
    "bps": 1,
    "kbps": 10**3,
    "mbps": 10**6,
    "gbps": 10**9,
    "b/s": 1,
    "kb/s": 10**3,
    "mb/s": 10**6,
    "gb/s": 10**9,
}
#: unit name (lower case) → bytes
SIZE_UNITS: Final[dict[str, int]] = {"b": 1, "kb": 1000, "mb": 10**6, "kib": 1024, "mib": 1024**2}

#: Physical ranges (issue 13): the fastest Ethernet rate (1.6 Tb/s, IEEE 802.3dj), a simulated
#: time of 10^6 s (far beyond any run; integer picoseconds stay inside u64) and 1 TB of buffer.
_MAX: Final[dict[str, int]] = {"time": 10**6 * PS_PER_S, "rate": 1_600 * 10**9, "size": 10**12}
_MAX_TEXT: Final[dict[str, str]] = {"time": "1000000s", "rate": "1600Gbps", "size": "1000000MB (1 TB)"}

_KIND_HELP: Final[dict[str, str]] = {
    "time": 'a time: a number of seconds or a number with a unit ps, ns, us, ms, s (e.g. "500us")',
    "rate": 'a rate: a number of bit/s or a number with a unit bps, Kbps, Mbps, Gbps (e.g. "10Gbps")',
    "size": 'a size: a number of bytes or a number with a unit B, KB, MB, KiB, MiB (e.g. "600KB")',
}
_TABLES: Final[dict[str, dict[str, int]]] = {"time": TIME_UNITS, "rate": RATE_UNITS, "size": SIZE_UNITS}
_BASE: Final[dict[str, str]] = {"time": "ps", "rate": "bit/s", "size": "bytes"}

_QUANTITY_RE: Final = re.compile(
    r"^\s*(?P<num>[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)\s*(?P<unit>[A-Za-z/]*)\s*$"
)


class UnitError(ValueError):
    """A quantity that cannot be read (bad number, unknown unit, negative, fractional)."""


def _to_decimal(value: object, kind: str) -> tuple[Decimal, str]:
    """Split ``value`` into (number, unit name as written; "" for none)."""
    if isinstance(value, bool):
        raise UnitError(f"expected {_KIND_HELP[kind]}, not a boolean")
    if isinstance(value, int):
        return Decimal(value), ""
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise UnitError(f"expected {_KIND_HELP[kind]}, not {value}")
        # repr() is the shortest string that round-trips, so 0.1 reads as exactly 1/10.
        return Decimal(repr(value)), ""
    if isinstance(value, str):
        m = _QUANTITY_RE.match(value)
        if m is None:
            raise UnitError(f"cannot read {_short(value)} as {_KIND_HELP[kind]}")
        try:
            num = Decimal(m["num"])
        except InvalidOperation:  # pragma: no cover - the regex admits only valid numbers
            raise UnitError(f"cannot read {_short(value)} as {_KIND_HELP[kind]}") from None
        return num, m["unit"]
    raise UnitError(f"expected {_KIND_HELP[kind]}, got {type(value).__name__}")


def parse_quantity(value: object, kind: str) -> int:
    """Read ``value`` as a ``kind`` ("time", "rate" or "size") in integer base units."""
    if kind not in _TABLES:
        raise ValueError(f"unknown quantity kind {kind!r}")
    num, written = _to_decimal(value, kind)
    unit = written.lower()
    if kind == "rate" and "B" in written:
        raise UnitError(f"{_short(value)}: 'B' is a byte; rates are in bits per second, {_KIND_HELP[kind]} "
                        "(a byte per second is 8 bit/s: 10 GB/s = 80Gbps)")
    if kind == "size" and written.endswith("b"):
        raise UnitError(f"{_short(value)}: 'b' is a bit; sizes are in bytes, {_KIND_HELP[kind]}")
    if unit == "":
        factor = PS_PER_S if kind == "time" else 1
    else:
        table = _TABLES[kind]
        if unit not in table:
            raise UnitError(f"unknown unit {written[:20]!r} in {_short(value)}; expected {_KIND_HELP[kind]}")
        factor = table[unit]
    # exponents far beyond any bound are answered before the arithmetic, which would overflow
    # the decimal context (1e999999s) or round a tiny number to zero (1e-999999999999s)
    if num != 0 and num.adjusted() > 60:
        raise UnitError(f"{_short(value)} is out of range: the largest {kind} allowed is {_MAX_TEXT[kind]}")
    if num != 0 and num.adjusted() < -60:
        raise UnitError(f"{_short(value)} is not a whole number of {_BASE[kind]}; expected {_KIND_HELP[kind]}")
    base = num * factor
    if base < 0:
        raise UnitError(f"{_short(value)} is negative; expected {_KIND_HELP[kind]} that is >= 0")
    if base > _MAX[kind]:
        raise UnitError(f"{_short(value)} is out of range: the largest {kind} allowed is {_MAX_TEXT[kind]}")
    if base != base.to_integral_value():
        raise UnitError(f"{_short(value)} is not a whole number of {_BASE[kind]}; expected {_KIND_HELP[kind]}")
    return int(base)


def largest(kind: str) -> tuple[int, str]:
    """The largest ``kind`` ("time", "rate" or "size") cnsim accepts: base units, and as written."""
    return _MAX[kind], _MAX_TEXT[kind]


def _short(value: object) -> str:
    """``repr`` of a user value, cut so that a huge number cannot flood a message."""
    try:
        text = repr(value)
    except ValueError:  # an int too long to print (sys.set_int_max_str_digits): name its size
        return f"an integer of {int(value).bit_length():,} bits"  # type: ignore[call-overload]
    return text if len(text) <= 40 else text[:37] + "..."


def parse_time(value: object) -> int:
    """Time → int picoseconds (bare numbers are seconds)."""
    return parse_quantity(value, "time")


def parse_rate(value: object) -> int:
    """Rate → int bit/s (bare numbers are bit/s)."""
    return parse_quantity(value, "rate")


def parse_size(value: object) -> int:
    """Size → int bytes (bare numbers are bytes)."""
    return parse_quantity(value, "size")


def _format(value: int, units: list[tuple[str, int]]) -> str:
    """The largest unit in which ``value`` is a whole number (exact, re-readable)."""
    if value == 0:
        return f"0{units[0][0]}"
    for name, factor in reversed(units):
        if value % factor == 0:
            return f"{value // factor}{name}"
    return f"{value}{units[0][0]}"  # pragma: no cover - the first factor is 1


def format_time(ps: int) -> str:
    """``1_000_000`` → ``"1us"``; exact, parses back with :func:`parse_time`."""
    return _format(ps, [("ps", 1), ("ns", 10**3), ("us", 10**6), ("ms", 10**9), ("s", 10**12)])


def format_rate(bps: int) -> str:
    """``10**10`` → ``"10Gbps"``; exact, parses back with :func:`parse_rate`."""
    return _format(bps, [("bps", 1), ("Kbps", 10**3), ("Mbps", 10**6), ("Gbps", 10**9)])


def format_size(nbytes: int) -> str:
    """``600_000`` → ``"600KB"``; exact (decimal units only), parses back with :func:`parse_size`."""
    return _format(nbytes, [("B", 1), ("KB", 1000), ("MB", 10**6)])
