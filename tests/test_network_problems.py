"""What is wrong with a scenario's wiring (scenario/network.py), said exactly: a link between two
nodes, an end no one declared, a network in pieces, and how long a list of names a message holds."""

from __future__ import annotations

from typing import Any

import pytest
from cnsim.errors import ScenarioError
from cnsim.runner import prepare
from cnsim.scenario.network import _names


def _problems(nodes: int, switches: list[str], links: list[tuple[str, str]]) -> list[tuple[str, Any, str]]:
    """The problems of ``zhb-og-multi-hop`` rewired as given, with no traffic to route."""
    overrides = {"topology.nodes": nodes, "topology.switches": switches, "topology.links": [{"a": a, "b": b} for a, b in links],
                 "traffic.flows": [], "hotspots": [], "metrics.hot_port": None, "metrics.queues": []}
    with pytest.raises(ScenarioError) as err:
        prepare("zhb-og-multi-hop", set=overrides)
    return [(p.key, p.value, p.message) for p in err.value.problems]


def test_a_link_between_two_nodes_is_named_and_a_node_may_come_first() -> None:
    # "1-S1" is as good a link as "S1-1"; "3-4" joins two nodes
    assert _problems(4, ["S1"], [("1", "S1"), ("S1", "2"), ("S1", "3"), ("3", "4")]) == [
        ("topology.links.3", "3-4", "a link must have a switch at one end at least"),
        ("topology.links", "node 4", "every node needs exactly one link (node 4 has 0)"),
    ]


def test_an_unknown_end_lists_the_first_twenty_names_known() -> None:
    links = [("S1", str(n)) for n in range(1, 25)] + [("S1", "X")]
    assert _problems(25, ["S1"], links)[0] == ("topology.links.24.b", "X", (
        "unknown node or switch; known: S1, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, ... (26 in all)"))


def test_a_network_in_pieces_lists_the_first_ten_names_cut_off() -> None:
    links = [("S1", "1")] + [("S2", str(n)) for n in range(2, 13)]
    assert _problems(12, ["S1", "S2"], links) == [("topology.links", "12 links", (
        "the network is not connected: S2, 2, 3, 4, 5, 6, 7, 8, 9, 10, ... (12 in all) cannot be reached from S1; "
        "link every switch and node into one network"))]


def test_a_list_of_names_is_cut_only_past_its_limit() -> None:
    names = [f"n{i}" for i in range(4)]
    assert _names(names, 4) == "n0, n1, n2, n3"
    assert _names(names, 3) == "n0, n1, n2, ... (4 in all)"
