"""The scenario document's validation errors as cnsim's problems (scenario/invalid.py): for each
kind of mistake, the exact key, value and message a user is shown (contract: the key, the value
given and what is allowed)."""

from __future__ import annotations

import pytest
from cnsim.errors import ScenarioError
from cnsim.runner import prepare
from cnsim.scenario.invalid import _allowed_keys, _field_at


def _problems(sid: str, **overrides: object) -> list[tuple[str, object, str]]:
    with pytest.raises(ScenarioError) as err:
        prepare(sid, set=overrides)
    return [(p.key, p.value, p.message) for p in err.value.problems]


def test_an_unknown_key_lists_the_keys_of_its_own_table() -> None:
    # the top level names `cm` too (its keys are the scheme's), a table below it does not
    assert _problems("zhb-og-single-hop", bogus=1) == [("bogus", 1, (
        "unknown key. The keys allowed here are: description, seed, duration, topology, links, switch, nic, traffic, "
        "hotspots, metrics, cm (`cnsim keys` describes them)"))]
    assert _problems("zhb-og-single-hop", **{"links.delya": 1}) == [("links.delya", 1, (
        "unknown key. Did you mean \"delay\"? The keys allowed here are: rate, delay (`cnsim keys links` describes them)"))]
    # in a list of tables, and in an optional table
    assert _problems("zhb-og-single-hop", **{"hotspots.0.bogus": 5}) == [("hotspots.0.bogus", 5, (
        "unknown key. The keys allowed here are: node, rate, start, end (`cnsim keys hotspots` describes them)"))]
    assert _problems("e2cm-fat-tree-16", **{"topology.fat_tree.bogus": 5}) == [("topology.fat_tree.bogus", 5, (
        "unknown key. The keys allowed here are: radix, levels, merged_top (`cnsim keys topology.fat_tree` describes them)"))]


def test_a_value_of_the_wrong_type_is_told_what_its_key_takes() -> None:
    assert _problems("zhb-og-single-hop", **{"topology.fat_tree": 5}) == [
        ("topology.fat_tree", 5, "expected a table of keys (`cnsim keys topology.fat_tree` lists them)")]
    assert _problems("zhb-og-single-hop", **{"traffic.flows": 5}) == [
        ("traffic.flows", 5, "expected a list of tables of keys (`cnsim keys traffic.flows` lists them)")]
    # a table of a list of tables, and a key of one
    assert _problems("zhb-og-single-hop", **{"traffic.flows": [5]}) == [
        ("traffic.flows.0", 5, "expected a table of keys (`cnsim keys traffic.flows` lists them)")]
    assert _problems("zhb-og-single-hop", **{"traffic.flows": [{"src": "1", "dst": "2", "rate": True}]}) == [
        ("traffic.flows.0.rate", True, 'expected a rate: a number of bit/s or a number with a unit bps, Kbps, Mbps, Gbps '
                                       '(e.g. "10Gbps"), not a boolean')]
    # a value of a table {name = value}: the table's value type, whatever the value's shape
    for value in ("x", {"a": 1}):
        assert _problems("zhb-og-single-hop", **{"traffic.loads": {"1": value}}) == [
            ("traffic.loads.1", value, "expected a fraction (in [0, 1])")]


def test_an_item_of_a_list_of_values_is_told_what_one_item_takes() -> None:
    """An item of the wrong type was told what the whole list takes ("expected a list of strings",
    given ``true``)."""
    assert _problems("zhb-og-single-hop", **{"metrics.queues": [True]}) == [("metrics.queues.0", True, "expected a string")]
    # the list member of a union (`"all"` or a list of port names)
    assert _problems("zhb-og-single-hop", **{"switch.cp_ports": ["S1/1", 5]}) == [("switch.cp_ports.1", 5, "expected a string")]


def test_a_value_outside_a_choice_names_the_choices() -> None:
    assert _problems("zhb-og-single-hop", **{"topology.routing": "ecmp"}) == [
        ("topology.routing", "ecmp", "not an allowed value; allowed: 'shortest' or 'dmodk'")]


def test_a_union_given_neither_shape_names_every_member() -> None:
    assert _problems("zhb-og-single-hop", **{"switch.cp_ports": 5}) == [
        ("switch.cp_ports", 5, 'not an allowed value; allowed: "all" or a list of strings')]
    assert _problems("zhb-og-single-hop", **{"switch.cp_ports": "some"}) == [
        ("switch.cp_ports", "some", 'not an allowed value; allowed: "all" or a list of strings')]


def test_a_models_own_check_names_the_field_it_concerns() -> None:
    assert _problems("e2cm-fat-tree-16", **{"topology.fat_tree.radix": 3}) == [
        ("topology.fat_tree.radix", 3, "the radix must be even (2k ports: k down, k up)")]
    # a check of the whole table names the table
    (problem,) = _problems("e2cm-fat-tree-16", **{"topology.fat_tree.radix": 600})
    assert problem == ("topology.fat_tree", {"radix": 600, "levels": 3, "merged_top": True},
                       "54000000 hosts; at most 65536 are supported")


def test_a_location_that_is_no_field_of_the_models_names_no_field() -> None:
    """Defensive: past a plain value, or at a name no model has, there is no field to describe (the
    problem then keeps pydantic's own message), and no keys to list."""
    for loc in (("links", "rate", "unit"), ("links", "bogus"), ("bogus", "rate")):
        assert _field_at(loc) is None and _allowed_keys(loc) == []
    assert _allowed_keys(("hotspots", 0)) == ["node", "rate", "start", "end"]
