"""The metric labels and the table cell format (cnsim.labels): every label names a key that
summary.json holds, values are scaled only when they are numbers, and each kind of value is
written as a cell the way the terminal table, the reports and the deck tables show it."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from cnsim.labels import HEADLINE, METRICS, fmt, scaled, summary_value

GOLDEN = Path(__file__).resolve().parent / "golden"


def test_every_metric_names_a_number_of_a_real_summary() -> None:
    """A golden summary with finite flows (so FCTs exist) holds a number at every dotted key."""
    summary = json.loads((GOLDEN / "e2cm-fat-tree-16--bcn.json").read_text(encoding="utf-8"))["summary"]
    for name, (label, dotted, scale) in METRICS.items():
        value = summary_value(summary, dotted, scale)
        assert isinstance(value, (int, float)) and not isinstance(value, bool), (name, label, dotted, value)


def test_the_headline_is_nine_metrics_in_table_order() -> None:
    assert [label for label, _, _ in HEADLINE] == [
        "aggregate (Gb/s)", "hot port (Gb/s)", "hot queue mean (KB)", "hot queue max (KB)", "hot queue std (KB)",
        "drops (frames)", "paused fraction", "CM overhead (Mb/s)", "Jain (vs max-min)"]


def test_queues_show_in_kilobytes_and_pause_as_a_fraction_or_a_percentage() -> None:
    """KB = 1000 B (spec D1); "paused" is the same key as "paused_fraction", in per cent."""
    summary = {"queue_bytes": {"hot": {"mean": 150_000.0, "max": 600_000, "std": 20_000.0}}, "paused_fraction": 0.25}
    assert summary_value(summary, *METRICS["q_mean"][1:]) == 150.0
    assert summary_value(summary, *METRICS["q_max"][1:]) == 600.0
    assert summary_value(summary, *METRICS["q_std"][1:]) == 20.0
    assert summary_value(summary, *METRICS["paused_fraction"][1:]) == 0.25
    assert summary_value(summary, *METRICS["paused"][1:]) == 25.0
    unscaled = {name for name, (_, _, scale) in METRICS.items() if scale == 1.0}
    assert unscaled == set(METRICS) - {"q_mean", "q_std", "q_max", "paused"}


def test_summary_value_is_none_where_the_key_is_absent() -> None:
    summary = {"a": {"b": 2_000, "c": 5}, "fct_ms": None}
    assert summary_value(summary, "a.b") == 2_000
    assert summary_value(summary, "a.b", 1e-3) == 2.0
    assert summary_value(summary, "a.x") is None
    assert summary_value(summary, "x.b") is None
    assert summary_value(summary, "a.c.d") is None  # an int is not a table to look into
    assert summary_value(summary, "fct_ms.mean") is None  # no finite flows
    assert summary_value(summary, "a") == {"b": 2_000, "c": 5}


def test_scaled_leaves_everything_but_numbers_alone() -> None:
    assert scaled(3, 1e-3) == 0.003
    assert scaled(2.5, 100.0) == 250.0
    assert scaled(True, 100.0) is True  # a flag is not a number to scale
    assert scaled(None, 100.0) is None
    assert scaled("n/a", 100.0) == "n/a"
    whole = scaled(7, 1.0)
    assert whole == 7 and isinstance(whole, int)  # scale 1 keeps an int an int (no "7.0" in a table)


@pytest.mark.parametrize(("value", "cell"), [
    (None, "–"),
    (True, "yes"),
    (False, "no"),
    (0, "0"),
    (9_999, "9999"),
    (10_000, "10,000"),
    (-9_999, "-9999"),
    (-10_000, "-10,000"),
    (1_234_567, "1,234,567"),
    (math.nan, "–"),
    (0.0, "0"),
    (-0.0, "0"),
    (1.5, "1.5"),
    (2.0, "2"),
    (0.001, "0.001"),
    (0.000999, "0.000999"),
    (0.0012345, "0.0012"),  # from 0.001 up: four decimals, not four significant digits
    (-0.0005, "-0.0005"),
    (0.12345, "0.1235"),  # four decimals under 10
    (9.99999, "10"),
    (10.0, "10"),
    (12.3456, "12.346"),  # three decimals from 10 up
    (10.12345, "10.123"),
    (-12.3456, "-12.346"),
    (1234.5, "1,234.5"),
    (99_999.5, "99,999.5"),
    (100_000.0, "1e+05"),
    (-123_456.0, "-1.235e+05"),
    (1e-9, "1e-09"),
    ([1, 2.5, None], "[1, 2.5, –]"),
    ((True, 10_000), "[yes, 10,000]"),
    ([], "[]"),
    ("qcn", "qcn"),
])
def test_fmt_writes_each_kind_of_value_as_a_cell(value: object, cell: str) -> None:
    assert fmt(value) == cell
