"""PAUSE watermarks at their edges (scenarios.md §1.1, algorithms.md D12 and D15;
cnsim/scenario/watermarks.py): the headroom rule where it leaves exactly nothing or one byte,
the XON rules where they reach zero, the order 0 <= xon <= xoff <= capacity with each of its
equalities allowed, values clipped when PAUSE is off, the per-switch expressions, the notes
`cnsim show` prints, and the adapters' output-buffer watermarks under both XON rules.

zhb-og-single-hop: 10 Gb/s, 1 us links, no processing delay, 1500 B frames, so a port's
headroom rtt·bw is 2 · 1 us · 10 Gb/s / 8 + 2 · 1500 B = 5500 B; 16 ports."""

from __future__ import annotations

from typing import Any

import pytest
from cnsim import ScenarioError, load

HEADROOM = 5_500


def lowered(**changes: object) -> dict[str, Any]:
    """zhb-og-single-hop's core config with ``changes`` (``switch__xoff`` for ``switch.xoff``)."""
    return load("zhb-og-single-hop").set_many({k.replace("__", "."): v for k, v in changes.items()}).lower()


def thresholds(**changes: object) -> dict[str, int]:
    return dict(lowered(**changes)["switch"]["thresholds"]["S1"])


def refused(match: str, **changes: object) -> None:
    with pytest.raises(ScenarioError, match=match):
        thresholds(**changes)


def test_the_headroom_rule_at_its_edge() -> None:
    # M = rtt·bw leaves 0 B: refused with PAUSE; one byte more is a working (if useless) XOFF
    refused("M - rtt\\*bw is 0 B at switch S1", switch__memory_per_port=f"{HEADROOM}B")
    assert thresholds(switch__memory_per_port=f"{HEADROOM + 1}B") == {"capacity": HEADROOM + 1, "xoff": 1, "xon": 0}
    # without PAUSE a memory below the headroom is allowed and its XOFF is 0, never negative
    assert thresholds(switch__memory_per_port="5000B", switch__pause=False) == {"capacity": 5000, "xoff": 0, "xon": 0}


def test_the_global_xoff_a_scheme_expression_reads_is_never_negative() -> None:
    scen = (load("zhb-og-single-hop").set("switch.memory_per_port", "5000B").set("switch.pause", False)
            .set("cm.scheme", "bcn").set("cm.qeq", "xoff + 1000B"))
    assert scen.resolved.cm["qeq"] == 1000


def test_a_memory_of_one_frame_is_enough_without_pause() -> None:
    assert thresholds(switch__memory_per_port="1500B", switch__pause=False) == {"capacity": 1500, "xoff": 0, "xon": 0}
    refused("must hold at least one frame", switch__memory_per_port="1499B", switch__pause=False)
    with pytest.raises(ScenarioError) as err:
        thresholds(switch__memory_per_port="0B", switch__pause=False)
    assert "must be greater than zero" in str(err.value) and "at least one frame" not in str(err.value)


def test_xon_ten_kilobytes_below_xoff_reaches_zero() -> None:
    rule = {"switch__xon_rule": "minus_10KB"}
    assert thresholds(**rule, switch__xoff="10000B") == {"capacity": 600_000, "xoff": 10_000, "xon": 0}
    refused("XOFF - 10KB is negative at switch S1 \\(XOFF = 9999 B\\)", **rule, switch__xoff="9999B")
    # without PAUSE the negative XON is clipped to 0
    assert thresholds(**rule, switch__xoff="9999B", switch__pause=False)["xon"] == 0


def test_every_equality_of_the_watermark_order_is_allowed() -> None:
    # xoff = capacity and xon = xoff
    assert thresholds(switch__xoff="600KB", switch__xon="600KB") == {"capacity": 600_000, "xoff": 600_000, "xon": 600_000}
    # xon = 0
    assert thresholds(switch__xon="0B")["xon"] == 0
    refused("switch.xoff: PAUSE needs 0 <= xon <= xoff <= capacity \\(600000 B at switch S1\\)", switch__xoff="600001B")
    refused("switch.xon: PAUSE needs 0 <= xon <= xoff", switch__xoff="300KB", switch__xon="300001B")
    # xon = xoff above the capacity: the message names xoff, the value out of range
    refused("switch.xoff: PAUSE needs", switch__xoff="600001B", switch__xon="600001B")


def test_without_pause_the_watermarks_are_clipped_to_the_memory() -> None:
    assert thresholds(switch__xoff="700KB", switch__xon="650KB", switch__pause=False) == {
        "capacity": 600_000, "xoff": 600_000, "xon": 600_000}
    assert thresholds(switch__xoff="300KB", switch__xon="400KB", switch__pause=False)["xon"] == 300_000


def test_a_per_switch_expression_names_the_switch_and_its_ports() -> None:
    # S3's shared-memory rule: 16 ports at 600 KB, four frames in transit per port instead of two
    t = thresholds(switch__buffer="shared", switch__xoff="auto - 2*1500B*ports")
    assert t["xoff"] == 16 * (600_000 - HEADROOM) - 16 * 3000
    # the value a scheme's expression reads is the (first) switch's own
    scen = load("zhb-og-single-hop").set("switch.xoff", "auto - 2*1500B*ports").set("cm.scheme", "bcn").set("cm.qeq", "xoff/4")
    assert scen.resolved.cm["qeq"] == (600_000 - HEADROOM - 16 * 3000) // 4
    refused("switch.xoff", switch__xoff="auto - nope")


def test_the_notes_say_which_rule_made_a_watermark() -> None:
    text = load("zhb-og-single-hop").to_toml()
    assert "xoff = 594500  # auto: M - rtt*bw\n" in text and "xon = 297250  # auto (half)\n" in text
    text = load("zhb-og-single-hop").set("switch.buffer", "shared").set("switch.xon_rule", "minus_10KB").to_toml()
    assert "xoff = 9512000  # auto: M - rtt*bw summed over the ports\n" in text
    assert "xon = 9502000  # auto (xoff - 10KB)\n" in text
    text = load("zhb-og-single-hop").set("switch.xoff", "500KB").set("switch.xon", "100KB").to_toml()
    assert "xoff = 500000  # bytes\n" in text and "xon = 100000  # bytes\n" in text


def nic(**changes: object) -> tuple[int, int, int]:
    core = lowered(**changes)["nic"]
    return core["egress_buffer"], core["egress_xoff"], core["egress_xon"]


def test_adapter_output_buffer_watermarks_follow_the_switch_rule() -> None:
    # one frame of buffer: a one-frame stage (XOFF at the frame, XON 0); exactly one frame is allowed
    assert nic(nic__egress_buffer="1500B") == (1500, 1500, 0)
    with pytest.raises(ScenarioError, match="nic.egress_buffer: must hold at least one frame"):
        nic(nic__egress_buffer="1499B")
    # OB - rtt·bw of exactly one frame is a stage of its own: XOFF there, XON by the rule
    assert nic(nic__egress_buffer=f"{HEADROOM + 1500}B") == (HEADROOM + 1500, 1500, 750)
    assert nic(nic__egress_buffer=f"{HEADROOM + 1499}B") == (HEADROOM + 1499, HEADROOM + 1499, 0)
    # 150 KB: XOFF = OB - rtt·bw, XON by the switch's rule
    assert nic(nic__egress_buffer="150KB") == (150_000, 150_000 - HEADROOM, (150_000 - HEADROOM) // 2)
    assert nic(nic__egress_buffer="150KB", switch__xon_rule="minus_10KB") == (150_000, 144_500, 134_500)
    assert nic(nic__egress_buffer="150KB", nic__egress_xoff="9KB", switch__xon_rule="minus_10KB") == (150_000, 9_000, 0)
    assert nic(nic__egress_buffer="150KB", nic__egress_xoff="9KB") == (150_000, 9_000, 4_500)
    with pytest.raises(ScenarioError, match="needs 0 <= egress_xon <= egress_xoff <= egress_buffer \\(150000 B\\)"):
        nic(nic__egress_buffer="150KB", nic__egress_xoff="150001B")



def test_a_problem_alike_at_many_switches_is_said_once_naming_where() -> None:
    """5,000 B of memory against 5,500 B of headroom at every switch: one message per problem,
    naming the switch, up to three by name, or their count with the first two and the last (the
    2,048-host tree used to print its 96 alike paragraphs)."""
    def message(scenario: str) -> str:
        with pytest.raises(ScenarioError) as err:
            load(scenario).set("switch.memory_per_port", "5000B").lower()
        return str(err.value)

    two = message("zhb-dual-cp-heavy-light")
    assert "M - rtt*bw is -500 B at switches S1, S2: the memory leaves no room" in two
    assert two.count("M - rtt*bw") == 1
    five = message("zhb-og-multi-hop")
    assert "M - rtt*bw is -500 B at 5 switches (S1, S2, …, S5): the memory" in five
    assert five.count("M - rtt*bw") == 1
    tree = message("zhb-ft-3stage")
    assert "at 12 switches (L0.0, L0.1, …, L1.3)" in tree and tree.count("M - rtt*bw") == 1


def test_where_a_problem_holds_is_named_in_full_up_to_three_switches() -> None:
    from cnsim.scenario.watermarks import _at_switches

    assert _at_switches(["S1"]) == "switch S1"
    assert _at_switches(["S1", "S2", "S3"]) == "switches S1, S2, S3"
    assert _at_switches(["S1", "S2", "S3", "S4"]) == "4 switches (S1, S2, …, S4)"
