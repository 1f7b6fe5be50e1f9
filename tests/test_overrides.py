"""`--set KEY=VALUE` underneath (contract "--set", cnsim/scenario/overrides.py): dotted keys
split at their edges, values assigned into the document (arrays created where the schema has
them, indexed and appended), and the nesting bound every input is held to (docs/robustness.md)."""

from __future__ import annotations

from typing import Any

import pytest
from cnsim import load
from cnsim.errors import ScenarioError
from cnsim.scenario.overrides import MAX_DEPTH, assign, nesting_message, split_key, too_deep


def _chain(levels: int) -> dict[str, Any]:
    """A table nested ``levels`` deep (itself level 1) along the key "a"."""
    node: dict[str, Any] = {}
    for _ in range(levels - 1):
        node = {"a": node}
    return node


def test_the_nesting_bound_is_exactly_max_depth_and_names_the_path() -> None:
    assert MAX_DEPTH == 32
    assert too_deep(_chain(MAX_DEPTH)) is None
    assert too_deep(_chain(MAX_DEPTH + 1)) == ["a"] * MAX_DEPTH
    assert too_deep([[[1]]], limit=3) is None and too_deep([[[[1]]]], limit=3) == ["0", "0", "0"]
    assert too_deep(5) is None
    # a table shared by two keys is walked again where it sits deeper
    shared = _chain(MAX_DEPTH - 1)
    assert too_deep({"short": shared, "long": {"x": shared}}) == ["long", "x"] + ["a"] * (MAX_DEPTH - 2)
    circular: dict[str, Any] = {}
    circular["me"] = circular
    assert too_deep(circular) == ["me"] * MAX_DEPTH
    message = nesting_message(["hotspots", "0", "x"])
    assert message.startswith("hotspots.0.x is nested more than 32 levels deep")


def test_dotted_keys_split_at_their_edges() -> None:
    assert split_key(" cm . scheme ") == ["cm", "scheme"]  # unquoted parts are stripped
    assert split_key('a." b "') == ["a", " b "]  # quoted ones keep what they hold, dots too
    assert split_key('"a.b".c') == ["a.b", "c"] and split_key('a.""') == ["a", ""]
    for key in ("cm.", ".cm", "cm..scheme", ""):
        with pytest.raises(ScenarioError, match="empty part in the dotted key"):
            split_key(key)
    with pytest.raises(ScenarioError, match="unterminated quote"):
        split_key('a."b')
    assert len(split_key(".".join(["a"] * MAX_DEPTH))) == MAX_DEPTH
    with pytest.raises(ScenarioError, match="more than 32 parts"):
        split_key(".".join(["a"] * (MAX_DEPTH + 1)))


def test_assign_creates_arrays_where_the_schema_has_them_and_indexes_them() -> None:
    doc: dict[str, Any] = {}
    assign(doc, ["hotspots", "0", "node"], "1", "hotspots.0.node")
    assign(doc, ["traffic", "flows", "0", "src"], "H1", "traffic.flows.0.src")
    assign(doc, ["cm", "0"], 1, "cm.0")  # not an array in the schema: a table key
    assert doc == {"hotspots": [{"node": "1"}], "traffic": {"flows": [{"src": "H1"}]}, "cm": {"0": 1}}
    assign(doc, ["hotspots", "1", "node"], "2", "hotspots.1.node")  # the next index appends
    assert doc["hotspots"] == [{"node": "1"}, {"node": "2"}]
    refusals = [
        (["hotspots", "3", "node"], "index 3 is past the end of hotspots (it has 2 entries; use 2 to append)"),
        (["hotspots", "1" * 30, "node"], "is past the end of hotspots"),
        (["hotspots", "١", "node"], "hotspots is an array; index it with a number"),  # an Arabic-Indic one
        (["hotspots", "0", "node", "x"], "hotspots.0.node is a value, not a table or array"),
        (["cm", "0", "x"], "cm.0 is a value, not a table or array"),
    ]
    for path, message in refusals:
        with pytest.raises(ScenarioError, match=message.replace("(", r"\(").replace(")", r"\)")):
            assign(doc, path, 1, ".".join(path))
    with pytest.raises(ScenarioError, match=r"index 5 is past the end of traffic.flows \(it has 1 entry; use 1 to append\)"):
        assign(doc, ["traffic", "flows", "5", "src"], "H2", "traffic.flows.5.src")
    doc["hotspots"].append(7)
    with pytest.raises(ScenarioError, match="hotspots.2 is a value, not a table or array"):
        assign(doc, ["hotspots", "2", "node"], 1, "hotspots.2.node")


def test_a_value_set_at_a_key_counts_the_keys_levels_too() -> None:
    """``traffic.flows`` takes two of the 32 levels, so a value nested 30 deep is set and one
    nested 31 deep is refused, naming the path down to the 32nd level."""
    def lists(n: int) -> object:
        value: object = 1
        for _ in range(n):
            value = [value]
        return value

    load("zhb-og-single-hop").set("traffic.flows", lists(30))
    with pytest.raises(ScenarioError, match=r"^traffic\.flows: traffic\.flows(\.0){30} is nested more than 32 levels deep"):
        load("zhb-og-single-hop").set("traffic.flows", lists(31))
