"""Expressions between parameters (`cnsim/scenario/resolver.py`, spec/contract.md
"Expressions"): names read in expression units (s, bit/s, bytes) and written back in base units,
integers and ranges checked on what an expression gives, and the problems of a cycle, an
unknown name and a name that is not a number."""

from __future__ import annotations

from typing import Any

import pytest
from _scenarios import scen
from cnsim import ScenarioError
from cnsim.scenario import Scenario


def problem(s: Scenario, key: str) -> tuple[Any, str]:
    with pytest.raises(ScenarioError) as err:
        s.validate()
    about = [p for p in err.value.problems if p.key == key]
    assert about, str(err.value)
    return about[0].value, about[0].message


def test_a_time_name_reads_in_seconds_and_a_time_expression_writes_picoseconds() -> None:
    """DCQCN's alpha timer written as "2*timer" (T = 55 us) is 110 us; a timer written as
    "0.5e-3*2" seconds is 1 ms; a rate name reads in bit/s and a size name in bytes."""
    r = scen(cm__scheme="dcqcn", cm__alpha_timer="2*timer").resolved
    assert r.cm["alpha_timer"] == 110_000_000 and r.cm_exprs["alpha_timer"] == "2*timer"
    r = scen(cm__scheme="dcqcn", cm__timer="0.5e-3*2").resolved
    assert r.cm["timer"] == 1_000_000_000
    r = scen(cm__scheme="dcqcn", cm__r_ai="rate/250").resolved
    assert r.cm["r_ai"] == 40_000_000
    r = scen(cm__scheme="bcn", cm__qeq="m/4").resolved
    assert r.cm["qeq"] == 150_000


def test_a_cycle_names_its_chain_and_the_value_that_closes_it() -> None:
    value, message = problem(scen(cm__scheme="bcn", cm__gd="gi", cm__gi="2*gd"), "cm.gd")
    assert str(value) == "gi"
    assert "expressions refer to each other in a cycle (cm.gd -> cm.gi -> cm.gd); give one of them a number" == message


def test_an_expression_may_give_exactly_the_largest_value() -> None:
    assert scen(cm__scheme="bcn", cm__stop_time="1000000*1s").resolved.cm["stop_time"] == 10**18  # ps


def test_a_cycle_through_a_derived_value_names_it_auto() -> None:
    """The automatic XOFF is computed, not written: the cycle's problem for it gives "auto", never
    the function that computes it."""
    value, message = problem(scen(switch__memory_per_port="2*xoff"), "switch.xoff")
    assert value == "auto" and message.startswith("expressions refer to each other in a cycle (switch.xoff -> ")


def test_an_unknown_name_lists_the_names_there_are() -> None:
    value, message = problem(scen(cm__scheme="bcn", cm__gd="2*foo"), "cm.gd")
    assert value == "2*foo" and message.startswith('unknown name "foo"; names here: m, rate, xoff,')
    assert "gd0" in message and "fbmax" in message


def test_a_name_that_is_not_a_number_is_refused_by_name() -> None:
    """QCN+'s probe period is "auto" unless given: an expression cannot compute with it."""
    value, message = problem(scen(cm__scheme="qcn-plus", cm__timer="2*probe_period"), "cm.timer")
    assert value == "2*probe_period" and message == "\"probe_period\" is 'auto', not a number"
    # given as a time, it reads in seconds like any other
    r = scen(cm__scheme="qcn-plus", cm__probe_period="200us", cm__timer="probe_period/2").resolved
    assert r.cm["timer"] == 100_000_000


def test_what_an_expression_gives_is_range_checked() -> None:
    """A negative gain is out of its range; a negative size is no size. (Integer parameters take
    no expressions: the document refuses them first.)"""
    value, message = problem(scen(cm__scheme="bcn", cm__gd="-1*gd0"), "cm.gd")
    assert value == "-1*gd0" and message.startswith("the expression gives -6.66667e-07: ")
    value, message = problem(scen(cm__scheme="bcn", cm__qeq="-1*m"), "cm.qeq")
    assert message == "the expression gives -600000, a negative size"


@pytest.mark.parametrize(
    ("overrides", "key", "given", "fragment"),
    [
        ({"cm__scheme": "bcn", "cm__stop_time": "1e300*1s"}, "cm.stop_time", "1e300*1s", "out of range; the largest time allowed is 1000000s"),
        ({"cm__scheme": "bcn", "cm__qeq": "m*1e20"}, "cm.qeq", "m*1e20", "out of range; the largest size allowed"),
        ({"switch__memory_per_port": "1e300*1KB"}, "switch.memory_per_port", "1e300*1KB", "out of range"),
        ({"cm__scheme": "qcn", "cm__rmin": "rate*0"}, "cm.rmin", "rate*0", "the expression gives 0: out of range; allowed:"),
    ],
)
def test_an_expression_is_held_to_the_bounds_of_a_literal(overrides: dict[str, Any], key: str, given: str, fragment: str) -> None:
    """A value written as an expression meets the same bounds as one written as a number: the
    quantity's largest value and the parameter's range (an overflow once reached the engine, or
    Python's int(), as an internal error)."""
    value, message = problem(scen(**overrides), key)
    assert value == given and fragment in message, message
