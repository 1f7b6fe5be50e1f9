"""Issue 13: `cnsim keys [PREFIX]`, docs/keys.md, and "did you mean" in unknown-key messages."""

from __future__ import annotations

from pathlib import Path

import pytest
from cnsim.cli import app
from cnsim.cmparams import SCHEMES
from cnsim.errors import ScenarioError, did_you_mean
from cnsim.keys import all_keys, markdown, matching
from cnsim.runner import prepare
from typer.testing import CliRunner

runner = CliRunner()
DOCS = Path(__file__).resolve().parents[1] / "docs" / "keys.md"


def test_docs_keys_md_is_current() -> None:
    assert DOCS.read_text() == markdown(), "regenerate with: python -m cnsim.keys > docs/keys.md"


def test_every_key_is_described() -> None:
    names = {k.name for k in all_keys()}
    # the contract's normative keys, one of each table, and every scheme parameter
    for key in ("duration", "topology.fat_tree.radix", "topology.links[].delay", "links.delay", "switch.xon_rule",
                "nic.on_full", "traffic.flows[].rate", "hotspots[].rate", "metrics.per_flow", "cm.scheme"):
        assert key in names
    for params in SCHEMES.values():
        assert {f"cm.{p}" for p in params} <= names
    for k in all_keys():
        assert k.type, k
        if k.type != "array of tables" and not k.name.startswith("cm.presets"):
            assert k.doc, f"{k.name} has no description"


def test_types_defaults_and_allowed_values() -> None:
    by_name = {k.name: k for k in all_keys()}
    assert by_name["links.delay"].type.startswith("time") and by_name["links.delay"].default == "1us"
    assert by_name["links.rate"].default == "10Gbps" and by_name["links.rate"].allowed == "> 0"
    assert by_name["switch.memory_per_port"].default == "150KB"
    assert by_name["switch.buffer"].allowed == '"shared" | "partitioned" | "egress"'
    assert by_name["duration"].default == "(required)"
    assert by_name["cm.gd"].default == 'bcn, e2cm: "gd0"; qcn, qcn3pt, qcn-sonar, qcn-plus: 0.0078125'
    assert "Schemes: qcn-sonar." in by_name["cm.wp"].doc
    # a range that differs between schemes is given per scheme; the same choices in another order are one
    assert by_name["cm.fb_bits"].allowed == "bcn, e2cm: an integer in [0, 16]; qcn, qcn3pt, qcn-sonar, qcn-plus: an integer in [1, 16]"
    assert by_name["cm.sampling"].allowed == 'one of "random", "interval", "jitter", "table", "linear"'


def test_every_row_of_the_reference_is_one_line_with_a_type_a_user_writes() -> None:
    """A docstring wrapped in the source is one table cell (it broke docs/keys.md's table), and a
    union of types is described by its alternatives, not by Python's name for it."""
    in_table, rows = False, 0
    for line in markdown().splitlines():
        in_table = (in_table and bool(line)) or line.startswith("| key |")
        if in_table:
            rows += 1
            assert line.startswith("| ") or line.startswith("|---"), line
            assert line.endswith(" |") or line.endswith("---|"), line
    assert rows > len(all_keys())
    by_name = {k.name: k for k in all_keys()}
    assert "\n" not in by_name["traffic.load"].doc and "refused" in by_name["traffic.load"].doc
    assert by_name["switch.cp_ports"].type == "choice or list of strings"
    assert by_name["switch.cp_ports"].allowed == '"all" or list of strings'


def test_prefix_selects() -> None:
    assert [k.name for k in matching("links")] == ["links.rate", "links.delay"]
    assert all(k.name.startswith("cm.g") for k in matching("cm.g")) and len(matching("cm.g")) >= 5


def test_cli_keys() -> None:
    res = runner.invoke(app, ["keys", "links"])
    assert res.exit_code == 0
    assert "links.delay" in res.stdout and "ONE-WAY" in res.stdout and "switch." not in res.stdout
    window = runner.invoke(app, ["keys", "metrics.window"])
    assert '[t0, t1], "hotspot" or "run"' in window.stdout  # not eaten as rich markup
    res = runner.invoke(app, ["keys", "trafic"])
    assert res.exit_code == 2
    assert 'Did you mean "traffic"' in res.output
    res = runner.invoke(app, ["keys", "x" * 5000])  # echoed once, cut: not 10,000 characters
    assert res.exit_code == 2 and res.output.count("x") < 100 and "(5,000 characters)" in res.output


@pytest.mark.parametrize(
    ("overrides", "fragments"),
    [
        ({"traffic.lod": 0.5}, ['Did you mean "load"', "`cnsim keys traffic`"]),
        ({"dration": "1s"}, ['Did you mean "duration"', "`cnsim keys`"]),
        ({"cm.scheme": "qcn", "cm.gdd": 0.5}, ['Did you mean "gd"', "`cnsim keys cm`"]),
        ({"hotspots.0.rtae": 0.5}, ['Did you mean "rate"', "`cnsim keys hotspots`"]),
        # [cm]'s own keys under a scheme without parameters, and a scheme's name
        ({"cm.shceme": "bcn"}, ['Did you mean "scheme"', 'has no parameter "shceme"']),
        ({"cm.scheme": "bnc"}, ['Did you mean "bcn"', '"qcn-sonar"']),
        ({"cm.presets.qnc": {"w": 2}}, ['Did you mean "qcn"']),
    ],
)
def test_unknown_keys_suggest_the_closest(overrides: dict[str, object], fragments: list[str]) -> None:
    with pytest.raises(ScenarioError) as info:
        prepare("zhb-og-single-hop", set=overrides)
    for f in fragments:
        assert f in str(info.value)


def test_did_you_mean_is_silent_when_nothing_is_close() -> None:
    assert did_you_mean("zzzz", ["load", "rate"]) == ""
    assert did_you_mean("rtae", ["load", "rate"]) == ' Did you mean "rate"?'
