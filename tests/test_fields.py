"""The scenario's field types at their edges (cnsim/scenario/fields.py): names, node lists and
their bounds (issue 13's 65,536 nodes), positive quantities, measurement windows, and a
quantity that fails to parse reported as one rather than as an expression."""

from __future__ import annotations

import pytest
from cnsim.scenario.fields import MAX_NODES, _check_name, _positive, node_list, quantity_or_expr, window_value
from cnsim.units import UnitError


def test_names_refuse_what_a_key_or_a_flow_name_could_not_hold() -> None:
    assert _check_name("H0") == "H0" and _check_name(3) == "3"
    for bad in (True, 1.5, None):
        with pytest.raises(ValueError, match="a name must be a string"):
            _check_name(bad)
    for bad in ("", "a b", "a/b", "a:b", "a->b"):
        with pytest.raises(ValueError, match="may not be empty or contain"):
            _check_name(bad)


def test_node_lists_hold_two_to_max_nodes() -> None:
    assert MAX_NODES == 65_536
    assert node_list(2) == 2 and node_list(MAX_NODES) == MAX_NODES
    for bad, message in ((1, "at least 2 nodes"), (MAX_NODES + 1, "at most 65536 nodes"), (True, "expected a node count")):
        with pytest.raises(ValueError, match=message):
            node_list(bad)
    assert node_list(["A", "B"]) == ["A", "B"]
    assert len(node_list([f"H{i}" for i in range(MAX_NODES)])) == MAX_NODES
    for bad, message in ((["A"], "at least 2 nodes"), (["A", "A"], "unique"), ([f"H{i}" for i in range(MAX_NODES + 1)], "at most 65536")):
        with pytest.raises(ValueError, match=message):
            node_list(bad)


def test_positive_quantities_and_windows() -> None:
    assert _positive(1) == 1
    with pytest.raises(ValueError, match="greater than zero"):
        _positive(0)
    assert window_value(["1ms", "2ms"]) == (10**9, 2 * 10**9) and window_value("run") == "run"
    # an empty window is no error: contract "Measurement window" applies the "run" rule to it
    assert window_value(["5ms", "5ms"]) == (5 * 10**9, 5 * 10**9)
    for bad in (["1ms", "2ms", "3ms"], "ab", ["2ms", "1ms"]):
        with pytest.raises(ValueError):
            window_value(bad)


def test_a_quantity_with_a_bad_unit_is_reported_as_a_quantity() -> None:
    """"5 parsecs" looks like a quantity, so its unit is what is wrong, not its syntax as an
    expression; a name that is no quantity is read as an expression."""
    size = quantity_or_expr("size")
    with pytest.raises(UnitError, match="unknown unit 'parsecs'"):
        size("5 parsecs")
    with pytest.raises(UnitError, match="negative"):
        size(-5)
    assert size("600KB") == 600_000 and str(size("2*gd0")) == "2*gd0"
