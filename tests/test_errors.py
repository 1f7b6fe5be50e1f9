"""How bad input is reported (`cnsim/errors.py`, spec/contract.md "Command line": a message naming
the key, the value given and what is allowed): values shown short whatever they are, one
paragraph per problem with duplicates dropped, and the typo suggestions."""

from __future__ import annotations

import pytest
from cnsim.errors import Problem, ScenarioError, UnknownNameError, did_you_mean, format_value, missing, raise_problems, shorten


def test_shorten_keeps_80_characters_and_says_how_long_the_rest_was() -> None:
    assert shorten("x" * 80) == "x" * 80
    assert shorten("x" * 81) == "x" * 60 + "… (81 characters)"
    assert shorten("y" * 12_345, 40) == "y" * 20 + "… (12,345 characters)"
    assert shorten("z" * 50, 20) == "z" * 10 + "… (50 characters)"  # never under ten characters


def test_values_are_shown_like_toml_and_never_whole_when_long() -> None:
    assert format_value(missing()) == "(nothing)"
    assert (format_value(True), format_value(False)) == ("true", "false")
    assert format_value("10Gbps") == '"10Gbps"' and format_value("q" * 80) == '"' + "q" * 80 + '"'
    assert format_value("q" * 81) == '"' + "q" * 60 + '…" (81 characters)'
    assert (format_value(5), format_value(1.5), format_value(float("nan"))) == ("5", "1.5", "nan")
    assert format_value(10**100) == "1" + "0" * 59 + "… (101 characters)"
    assert format_value(10**5000) == f"(an integer of {(10**5000).bit_length():,} bits)"
    assert format_value([1, 2]) == "[1, 2]" and format_value({"a": 1}) == '{"a": 1}'
    assert format_value(list(range(100))) == str(list(range(100)))[:77] + "..."
    eighty = [10, 10] + [1] * 24  # exactly 80 characters of JSON: shown whole
    assert format_value(eighty) == str(eighty) and len(str(eighty)) == 80
    circular: list[object] = []
    circular.append(circular)
    assert format_value(circular) == "[[...]]"


def test_a_problem_is_one_line_naming_key_message_and_value() -> None:
    assert Problem("cm.w", -1, "out of range").render() == "cm.w: out of range (given -1)."
    assert Problem("duration", missing(), "this key is required").render() == "duration: this key is required (nothing was given)."
    assert Problem("", {}, "must be a table").render() == "(document): must be a table (given {})."
    long = Problem("k" * 100, 1, "m" * 1500).render()
    assert long.startswith("k" * 60 + "… (100 characters): " + "m" * 980 + "… (1,500 characters)")


def test_problems_are_raised_together_once_each() -> None:
    raise_problems([])  # nothing wrong: no error
    same = Problem("cm.w", -1, "out of range")
    with pytest.raises(ScenarioError) as err:
        raise_problems([same, Problem("cm.gd", 0, "must be > 0"), same, Problem("cm.w", -1, "other")], "zhb")
    assert str(err.value) == ("zhb: cm.w: out of range (given -1).\n\ncm.gd: must be > 0 (given 0).\n\n"
                              "cm.w: other (given -1).")
    assert [p.key for p in err.value.problems] == ["cm.w", "cm.gd", "cm.w"]
    with pytest.raises(ScenarioError) as err:
        raise_problems([same])
    assert str(err.value) == "cm.w: out of range (given -1)."


def test_a_huge_message_is_cut_paragraph_by_paragraph() -> None:
    err = ScenarioError("a" * 2000 + "\n\n" + "b" * 3000, [Problem("k", 1, "m")])
    first, second = str(err).split("\n\n")
    assert first == "a" * 2000 and second == "b" * 1980 + "… (3,000 characters)"
    assert err.problems == [Problem("k", 1, "m")] and ScenarioError("short").problems == []


def test_an_unknown_name_is_a_key_error_whose_text_is_not_quoted() -> None:
    err = UnknownNameError('unknown series "x"')
    assert isinstance(err, KeyError) and isinstance(err, ScenarioError)
    assert str(err) == 'unknown series "x"'


def test_typos_get_a_suggestion_by_the_whole_name_or_its_first_word() -> None:
    keys = ["memory_per_port", "buffer", "processing_delay", "pause"]
    assert did_you_mean("bufer", keys) == ' Did you mean "buffer"?'
    assert did_you_mean("memroy", keys) == ' Did you mean "memory_per_port"?'  # "memory" of memory_per_port
    assert did_you_mean("paus", keys) == ' Did you mean "pause"?'
    assert did_you_mean("xyz", keys) == ""
    assert did_you_mean("nod", ["node", "end", "rate"]) == ' Did you mean "node" or "end"?'
    # never more than two, by whole name or by first word
    assert did_you_mean("nod", ["node", "note", "nods", "end"]) == ' Did you mean "nods" or "node"?'
    tails = ["memorz_aaaaaaaaaa", "memorw_bbbbbbbbbb", "memorq_cccccccccc"]
    assert did_you_mean("memory", tails).count('"') == 4
