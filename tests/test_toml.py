"""The resolved scenario's TOML (`cnsim/scenario/toml.py`, contract "A run folder":
``scenario.toml``): each value as TOML writes it, keys bare or quoted, and the comments that
keep a rule beside the number it gave. That the text loads back to the same core config is
checked for every catalogue entry and scheme in test_scenario.py."""

from __future__ import annotations

import re
import tomllib

from cnsim import load
from cnsim.scenario.toml import toml_key, toml_value


def test_values_as_toml_writes_them() -> None:
    assert (toml_value(True), toml_value(False), toml_value(3)) == ("true", "false", "3")
    assert [toml_value(x) for x in (2.0, 1.5, 1e20, 1e-7)] == ["2.0", "1.5", "1e+20", "1e-07"]
    assert [toml_value(float(x)) for x in ("nan", "inf", "-inf")] == ["nan", "inf", "-inf"]
    assert toml_value('a"b') == '"a\\"b"' and toml_value("µs") == '"µs"'  # unicode kept
    assert toml_value([1, "x", (2.0,)]) == '[1, "x", [2.0]]'
    assert toml_value({"a b": 1, "c": [True]}) == '{"a b" = 1, c = [true]}'
    assert toml_value(None) == '"None"'
    for v in (2.0, 1e20, float("inf"), [1, "x"], {"a b": 1}):
        assert tomllib.loads(f"v = {toml_value(v)}")["v"] == (list(v) if isinstance(v, tuple) else v)


def test_keys_are_bare_when_they_can_be() -> None:
    assert [toml_key(k) for k in ("abc_1-2", "a.b", "S1/1", "")] == ["abc_1-2", '"a.b"', '"S1/1"', '""']
    assert tomllib.loads(f"{toml_key('ünï')} = 1") == {"ünï": 1}  # quoted with TOML's escapes


def test_rules_are_kept_in_comments_beside_their_numbers() -> None:
    """Expressions of cm and switch values, the auto watermarks, the adapter's one-frame buffer,
    the link units and the window rule."""
    text = load("zhb-og-single-hop").set("cm.scheme", "bcn").set("cm.gd", "2.5*gd0").set(
        "switch.memory_per_port", "300KB*2").set("switch.oq_limit", "m/2").to_toml()
    lines = text.splitlines()
    assert lines[0].startswith("# cnsim ") and lines[0].endswith(": resolved scenario 'zhb-og-single-hop' (defaults filled in)")
    assert "gd = 1.6666666666666667e-06  # = 2.5*gd0" in lines
    assert "memory_per_port = 600000  # = 300KB*2" in lines and "oq_limit = 300000  # = m/2" in lines
    assert "rate = 10000000000  # bit/s" in lines and 'delay = "1us"  # one-way propagation' in lines
    assert any(line.startswith("xoff = 594500  # ") for line in lines)
    assert "egress_buffer = 1500  # one frame" in lines and "egress_xoff = 1500  # auto" in lines
    assert 'window = ["200ms", "500ms"]' in lines and 'hot_port = "S1/1"' in lines
    plain = load("zhb-og-single-hop").set("switch.memory_per_port", "600KB").set("nic.egress_buffer", "3000B").to_toml()
    assert "memory_per_port = 600000  # bytes" in plain.splitlines() and "egress_buffer = 3000  # bytes" in plain.splitlines()
    assert 'oq_limit = "none"' in plain.splitlines()


def test_a_graph_writes_its_links_and_a_fat_tree_its_shape() -> None:
    graph = tomllib.loads(load("e2cm-mixed-speed-og").to_toml())["topology"]
    assert graph["kind"] == "graph" and graph["switches"] == ["S1", "S2"]
    assert graph["links"][0] == {"a": "S1", "b": "S2"} and graph["links"][1] == {"a": "S1", "b": "1", "rate": 10**9}
    tree = tomllib.loads(load("zhb-ft-3stage").to_toml())["topology"]
    assert "nodes" not in tree and tree["fat_tree"]["radix"] == 8 and tree["routing"] == "dmodk"


def test_times_are_written_with_units_tables_one_blank_line_apart_and_unequal_switches_keep_their_rule() -> None:
    """DCQCN's timers as "55us" (integers stay integers); one blank line before every table and
    none doubled; e2cm-mixed-speed-og's switches differ in size, so their XOFF is written as the
    rule (the core config has each switch's number)."""
    text = load("dcqcn-incast-2to1").set("cm.scheme", "dcqcn").to_toml()
    cm = text[text.index("\n[cm]\n"):]
    assert 'alpha_timer = "55us"' in cm and 'cnp_interval = "50us"' in cm and "\nf = 5\n" in cm
    assert "\n\n\n" not in text and text.count("\n[") == text.count("\n\n[") == 8
    mixed = load("e2cm-mixed-speed-og").to_toml().splitlines()
    assert 'xoff = "auto - 2*1500B*ports"' in mixed and 'xon = "auto"' in mixed


def test_the_watermarks_say_which_rule_gave_them() -> None:
    """zhb's auto XOFF and XON carry their rules; an adapter watermark given as a size has no
    comment. Unequal switches with one explicit XON: the XOFF stays a rule, the XON a number."""
    zhb = load("zhb-og-single-hop").set("nic.egress_xoff", "3000B").set("nic.egress_buffer", "6000B").to_toml().splitlines()
    assert "xoff = 594500  # auto: M - rtt*bw" in zhb and "xon = 297250  # auto (half)" in zhb
    assert "egress_xoff = 3000" in zhb and "egress_xon = 1500  # auto" in zhb and "egress_buffer = 6000  # bytes" in zhb
    mixed = load("e2cm-mixed-speed-og").set("switch.xon", "10KB").to_toml().splitlines()
    assert 'xoff = "auto - 2*1500B*ports"' in mixed and "xon = 10000" in mixed


def test_every_key_of_the_document_is_written(tmp_path) -> None:
    """The resolved TOML is the scenario actually simulated (scenario.toml, `cnsim show`): every
    key of the schema appears in it (a link's, a fat tree's and a flow's inside their inline
    tables), and non-default metrics keys survive the round trip (the deadlock keys were once left
    out, so a run's own scenario.toml ran without `stop_on_deadlock`)."""
    from cnsim.scenario import schema

    text = load("zhb-og-single-hop").to_toml()
    # inside inline tables, or written for their topology kind only (test above)
    inline = {"a", "b", "radix", "levels", "merged_top", "src", "dst", "switches", "fat_tree"}
    models = (schema.ScenarioDoc, schema.TopologySpec, schema.LinksSpec, schema.SwitchSpec, schema.NicSpec,
              schema.TrafficSpec, schema.HotspotSpec, schema.MetricsSpec)
    for model in models:
        for name in set(model.model_fields) - inline:
            if model.model_fields[name].default in (None, {}, []) and name not in ("queues", "hot_port"):
                continue  # TOML has no null: an unset optional key is left out
            assert re.search(rf"^\[*{name}\b", text, re.MULTILINE), f"{model.__name__}.{name}"
    scen = load("e2cm-mixed-speed-og").set_many({"metrics.stop_on_deadlock": True, "metrics.deadlock_threshold": "2ms"})
    (tmp_path / "s.toml").write_text(scen.to_toml())
    metrics = load(tmp_path / "s.toml").lower()["metrics"]
    assert metrics == scen.lower()["metrics"]
    assert (metrics["stop_on_deadlock"], metrics["deadlock_threshold_ps"]) == (True, 2_000_000_000)
