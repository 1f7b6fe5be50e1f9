"""The scenario document's schema (`cnsim/scenario/schema.py`, spec/contract.md "Scenario
document"): the fat tree's shape at the engine's port limit, and how pydantic's errors become
problems — the keys allowed where an unknown one was given, in nested tables and lists, and the
key of an error inside an optional table."""

from __future__ import annotations

from typing import Any

import pytest
from _scenarios import scen
from cnsim import ScenarioError
from cnsim.scenario import Scenario


def problems(s: Scenario) -> dict[str, str]:
    """key → message of every problem (empty when the scenario validates)."""
    try:
        s.validate()
    except ScenarioError as err:
        return {p.key: p.message for p in err.problems}
    return {}


def tree(radix: int, levels: int) -> Scenario:
    return scen(topology__kind="fat_tree", topology__fat_tree={"radix": radix, "levels": levels}, hotspots=[])


def test_a_one_level_tree_has_half_its_radix_in_ports() -> None:
    """One level: k = radix/2 hosts and no up-links, so a switch of radix 131 068 has 65 534
    ports, the engine's most; 131 070 gives 65 535, one too many (test_validation_s30 has
    131 072). Two levels have all radix ports, but their k² hosts run out first."""
    assert "topology.fat_tree.radix" not in problems(tree(131_068, 1))
    assert "topology.fat_tree.radix" not in problems(tree(65_536, 1))
    assert "topology.fat_tree.radix" not in problems(tree(4, 1))  # k = 2 hosts: the fewest there may be
    assert "65535 ports per switch; the engine allows at most 65534" in problems(tree(131_070, 1))["topology.fat_tree.radix"]
    assert "hosts; at most 65536" in problems(tree(1_024, 2))["topology.fat_tree"]
    # a merged top doubles k^levels: radix 64, three levels, merged: 2 × 32³ = 65 536 hosts, the most
    merged = problems(scen(topology__kind="fat_tree", topology__fat_tree={"radix": 64, "levels": 3, "merged_top": True}, hotspots=[]))
    assert "topology.fat_tree" not in merged and "65536 hosts" in merged["topology.nodes"]


def test_literal_range_and_value_errors_read_as_problems() -> None:
    """A value outside a choice lists the choices; a number out of range says the bound; a value
    that cannot be read says why, without pydantic's "Value error," prefix. A flow's priority is
    a class 0–7."""
    assert problems(scen(switch__buffer="foo")) == {"switch.buffer": "not an allowed value; allowed: 'shared', 'partitioned' or 'egress'"}
    assert problems(scen(traffic__frame_size="abc"))["traffic.frame_size"].startswith("cannot read 'abc' as a size: ")
    flow = {"src": "2", "dst": "1", "rate": "1Gbps"}
    assert problems(scen(traffic__flows=[{**flow, "priority": 8}])) == {
        "traffic.flows.0.priority": "out of range: input should be less than or equal to 7"}
    assert problems(scen(traffic__flows=[{**flow, "priority": -1}])) == {
        "traffic.flows.0.priority": "out of range: input should be greater than or equal to 0"}
    assert "traffic.flows.0.priority" not in problems(scen(traffic__flows=[{**flow, "priority": 7}], switch__pfc_classes=8))
    assert "traffic.flows.0.priority" not in problems(scen(traffic__flows=[{**flow, "priority": 0}]))


@pytest.mark.parametrize(("sets", "key", "allowed"), [
    ({"traffic.flows": [{"src": "2", "dst": "1", "rate": "1Gbps", "foo": 1}]}, "traffic.flows.0.foo",
     "The keys allowed here are: src, dst, rate, start, stop, priority (`cnsim keys traffic.flows` describes them)"),
    ({"topology.links": [{"a": "S1", "b": "1", "x": 1}]}, "topology.links.0.x",
     "The keys allowed here are: a, b, rate, delay (`cnsim keys topology.links` describes them)"),
    ({"topology.kind": "fat_tree", "topology.fat_tree": {"radix": 4, "levels": 2, "wide": True}}, "topology.fat_tree.wide",
     "The keys allowed here are: radix, levels, merged_top (`cnsim keys topology.fat_tree` describes them)"),
    ({"hotspots.0.nod": "1"}, "hotspots.0.nod",
     'Did you mean "node" or "end"? The keys allowed here are: node, rate, start, end (`cnsim keys hotspots` describes them)'),
    ({"colour": "blue"}, "colour", "seed, duration, topology, links, switch, nic, traffic, hotspots, metrics, cm (`cnsim keys` describes them)"),
])
def test_an_unknown_key_lists_the_keys_of_its_own_table(sets: dict[str, Any], key: str, allowed: str) -> None:
    found = problems(scen(**{k.replace(".", "__"): v for k, v in sets.items()}))
    assert key in found, found
    assert found[key].startswith("unknown key.") and found[key].endswith(allowed)


def test_an_error_inside_an_optional_table_keeps_its_key() -> None:
    """``fat_tree`` is a table or nothing; a bad radix inside it is about the radix, not about
    the table being neither. A value that is neither member of a true union (cp_ports: "all" or
    a list) is one problem about the field."""
    found = problems(scen(topology__kind="fat_tree", topology__fat_tree={"radix": "x", "levels": 2}, hotspots=[]))
    assert list(found) == ["topology.fat_tree.radix"]
    found = problems(scen(switch__cp_ports=5))
    assert found == {"switch.cp_ports": 'not an allowed value; allowed: "all" or a list of strings'}
    found = problems(scen(switch__cp_ports=["S1/1", 5]))
    assert list(found) == ["switch.cp_ports.1"]
