"""The resolution pass's checks and defaults (`cnsim/scenario/resolution.py`, spec/contract.md
"Scenario document", "Measurement window"): each refusal names its key and says why, at its
boundary (what is exactly allowed passes); the hot port, the recorded flows and the window a
scenario gets when it does not name them."""

from __future__ import annotations

from pathlib import Path

import pytest
from _scenarios import message, refused, scen
from cnsim import ScenarioError, load
from cnsim.scenario import Scenario


def accepted(s: Scenario) -> Scenario:
    s.validate()
    return s


FLOWS = [{"src": "2", "dst": "1", "rate": "1Gbps"}]


def test_a_flow_or_the_traffic_may_stop_when_it_starts_but_not_before() -> None:
    flow = {**FLOWS[0], "start": "0.3s", "stop": "0.2s"}
    refused(scen(traffic__pattern="none", traffic__load=0, traffic__flows=[flow], hotspots=[]), "traffic.flows.0.stop", "stop comes before start")
    accepted(scen(traffic__pattern="none", traffic__load=0, traffic__flows=[{**flow, "stop": "0.3s"}], hotspots=[]))
    # a start alone or a stop alone is not compared
    accepted(scen(traffic__pattern="none", traffic__load=0, traffic__flows=[{**FLOWS[0], "stop": "0.2s"}], hotspots=[]))
    accepted(scen(traffic__pattern="none", traffic__load=0, traffic__flows=[{**FLOWS[0], "start": "0.2s"}], hotspots=[]))
    refused(scen(traffic__start="0.3s", traffic__stop="0.2s"), "traffic.stop", "stop comes before start")
    accepted(scen(traffic__start="0.3s", traffic__stop="0.3s"))


def test_a_flow_between_unconnected_switches_has_no_route(tmp_path: Path) -> None:
    """Two switches without a link between them: the network is refused as not connected (the
    engine routes only a connected one), naming what cannot be reached; the flows' own mistakes
    are still named beside it."""
    path = tmp_path / "split.toml"
    path.write_text("""
description = "two islands"
duration = "10ms"
[topology]
kind = "graph"
nodes = ["A", "B", "C"]
switches = ["S1", "S2"]
links = [{ a = "S1", b = "A" }, { a = "S2", b = "B" }, { a = "S1", b = "C" }]
[links]
rate = "10Gbps"
delay = "1us"
[traffic]
pattern = "none"
flows = [{ src = "A", dst = "C", rate = "1Gbps" }, { src = "A", dst = "B", rate = "1Gbps" }]
[metrics]
hot_port = "S1/C"
""")
    text = message(refused(load(path), "topology.links", "the network is not connected: S2, B cannot be reached from S1"), "topology.links")
    with pytest.raises(ScenarioError) as err:
        load(path).validate()
    assert [p.key for p in err.value.problems] == ["topology.links"], text
    # a flow to itself, or to an unknown node, is its own problem beside it
    s = load(path)
    for flow in ({"src": "A", "dst": "A", "rate": "1Gbps"}, {"src": "A", "dst": "Z", "rate": "1Gbps"}):
        s.set("traffic.flows", [flow])
        with pytest.raises(ScenarioError) as err:
            s.validate()
        assert [p.key for p in err.value.problems] == ["topology.links", "traffic.flows.0.dst"]


def test_a_mean_size_is_for_geometric_sizes_only() -> None:
    refused(scen(traffic__mean_size="3000B"), "traffic.mean_size", 'only used with sizes = "geometric"')
    accepted(scen(traffic__mean_size="1500B"))  # the frame size itself says nothing new


def test_a_run_to_completion_needs_sources_that_stop() -> None:
    """Uniform sources without traffic.stop never end, unless every load is 0; a flow without a
    stop never ends either."""
    refused(scen(traffic__run_to_completion=True, hotspots=[]), "traffic.run_to_completion", "needs sources that stop")
    accepted(scen(traffic__run_to_completion=True, hotspots=[], traffic__stop="0.1s"))
    accepted(scen(traffic__run_to_completion=True, hotspots=[], traffic__load=0.0,
                  traffic__flows=[{**FLOWS[0], "stop": "0.1s"}]))
    refused(scen(traffic__run_to_completion=True, hotspots=[], traffic__load=0.0, traffic__flows=FLOWS),
            "traffic.run_to_completion", "needs sources that stop")
    refused(scen(traffic__run_to_completion=True, hotspots=[], traffic__load=0.0, traffic__loads={"3": 0.5}),
            "traffic.run_to_completion")


def test_a_hotspot_may_end_when_it_starts_but_not_before() -> None:
    refused(scen(hotspots__0__end="0.05s"), "hotspots.0.end", "the hotspot ends before it starts")
    accepted(scen(hotspots__0__end="0.1s"))


def test_unknown_names_list_twenty_nodes_and_twelve_ports_then_an_ellipsis() -> None:
    listing = message(refused(scen(topology__nodes=20, hotspots__0__node="x"), "hotspots.0.node", "unknown node; the nodes are: 1, 2,"),
                      "hotspots.0.node")
    assert listing.endswith("19, 20")
    listing = message(refused(scen(topology__nodes=21, hotspots__0__node="x"), "hotspots.0.node"), "hotspots.0.node")
    assert listing.endswith("19, 20, ...")
    twelve = message(refused(scen(topology__nodes=12, metrics__queues=["S1/x"], metrics__hot_port="S1/1"), "metrics.queues.0"),
                     "metrics.queues.0")
    assert twelve.endswith("S1/12") and "..." not in twelve
    thirteen = message(refused(scen(topology__nodes=13, metrics__queues=["S1/x"], metrics__hot_port="S1/1"), "metrics.queues.0"),
                       "metrics.queues.0")
    assert thirteen.endswith("S1/12, ...")


def test_the_adapter_buffer_holds_a_frame_per_voq() -> None:
    """16 nodes: per-VOQ ingress splits the buffer over 15 VOQs, so 22.5 KB is the least (one
    1500 B frame each); a shared buffer needs one frame."""
    accepted(scen(nic__ingress="per_voq", nic__ingress_size="22500B"))
    text = message(refused(scen(nic__ingress="per_voq", nic__ingress_size="22499B"), "nic.ingress_size", "over 15 VOQs"),
                   "nic.ingress_size")
    assert "each must hold at least one frame" in text
    accepted(scen(nic__ingress="shared", nic__ingress_size="1500B"))
    refused(scen(nic__ingress="shared", nic__ingress_size="1499B"), "nic.ingress_size", "needs a buffer of at least one frame (1500 B)")
    refused(scen(nic__ingress="per_voq", nic__ingress_size="1499B"), "nic.ingress_size", "needs a buffer of at least one frame")
    # two nodes: one VOQ, which may take the whole buffer
    accepted(scen(topology__nodes=2, hotspots=[], metrics__hot_port="S1/1", nic__ingress="per_voq", nic__ingress_size="1500B"))
    # with two PFC classes a VOQ per destination and class: 30 VOQs
    accepted(scen(nic__ingress="per_voq", nic__ingress_size="45000B", switch__pfc_classes=2))
    refused(scen(nic__ingress="per_voq", nic__ingress_size="44999B", switch__pfc_classes=2), "nic.ingress_size",
            "over 30 VOQs (a VOQ per destination and PFC class: 15 × 2)")


def test_priorities_must_name_a_pfc_class() -> None:
    refused(scen(traffic__priority=1), "traffic.priority", "no such class; allowed: 0, the only class with 802.3x PAUSE")
    accepted(scen(switch__pfc_classes=2, traffic__priority=1))
    refused(scen(switch__pfc_classes=2, traffic__priority=2), "traffic.priority", "a class in [0, 1] (switch.pfc_classes = 2)")
    flows = [{**FLOWS[0], "priority": 2}]
    refused(scen(switch__pfc_classes=2, traffic__pattern="none", traffic__load=0, traffic__flows=flows, hotspots=[]), "traffic.flows.0.priority",
            "a class in [0, 1]")
    accepted(scen(switch__pfc_classes=3, traffic__pattern="none", traffic__load=0, traffic__flows=flows, hotspots=[]))
    accepted(scen(switch__pfc_classes=2, traffic__pattern="none", traffic__load=0, traffic__flows=FLOWS, hotspots=[]))  # no priority: the default


def test_an_output_queue_limit_of_one_frame_is_enough() -> None:
    accepted(scen(switch__oq_limit="1500B"))
    refused(scen(switch__oq_limit="1499B"), "switch.oq_limit", "must hold at least one frame")


def test_no_switch_memory_is_refused_with_the_value_given() -> None:
    with pytest.raises(ScenarioError) as err:
        scen(switch__memory_per_port=0, switch__pause=False).validate()
    assert [(p.key, p.value) for p in err.value.problems] == [("switch.memory_per_port", 0)]
    assert "switch.memory_per_port: must be greater than zero (given 0)" in str(err.value)
    # with PAUSE on, the watermarks computed from that memory are not refused in its place
    with pytest.raises(ScenarioError) as err:
        scen(switch__memory_per_port=0, switch__pause=True, switch__xoff="130KB", switch__xon="110KB").validate()
    assert [(p.key, p.value) for p in err.value.problems] == [("switch.memory_per_port", 0)]


def test_gd0_follows_quantised_feedback_and_needs_a_positive_fbmax() -> None:
    """gd0 = 0.5/Fbmax: with fb_bits = 6, Fbmax is the 63 quanta of QntzFb; otherwise
    (2w + 1)·Qeq bytes."""
    s = accepted(scen(cm__scheme="bcn", cm__gd="gd0", cm__fb_bits=6))
    assert s.resolved.cm["gd"] == pytest.approx(0.5 / 63, rel=1e-12)
    s = accepted(scen(cm__scheme="bcn", cm__gd="gd0", cm__fb_bits=1))  # one bit: a single quantum
    assert s.resolved.cm["gd"] == pytest.approx(0.5, rel=1e-12)
    s = accepted(scen(cm__scheme="bcn", cm__gd="gd0"))
    assert s.resolved.cm["gd"] == pytest.approx(0.5 / (5 * 150_000), rel=1e-12)
    s = accepted(scen(cm__scheme="bcn", cm__gd="gd0", cm__gd0_rule="unit"))
    assert s.resolved.cm["gd"] == pytest.approx(1 / (5 * 150_000), rel=1e-12)


def test_the_hot_port_a_scenario_does_not_name() -> None:
    """The port feeding the hotspot's node; "hotspot" when hotspots fall on several nodes; else
    the port into the destination offered most in all (rates summed over flows)."""
    assert accepted(scen(metrics__hot_port=None)).resolved.hot_port == "S1/1"
    # no hotspot and no named flows (uniform traffic): the first node's port
    assert accepted(scen(metrics__hot_port=None, metrics__queues=[], hotspots=[], topology__nodes=["a", "b", "c"])).resolved.hot_port == "S1/a"
    two = [{"node": "1", "rate": 0.2, "start": "0.1s", "end": "0.2s"}, {"node": "2", "rate": 0.2, "start": "0.3s", "end": "0.4s"}]
    r = accepted(scen(metrics__hot_port=None, hotspots=two)).resolved
    assert (r.hot_port, r.hot_node, r.queues) == ("hotspot", "1", ["S1/1", "S1/2"])
    flows = [{"src": "2", "dst": "3", "rate": "4Gbps"}, {"src": "4", "dst": "5", "rate": "3Gbps"},
             {"src": "6", "dst": "5", "rate": "2Gbps"}]
    r = accepted(scen(metrics__hot_port=None, hotspots=[], traffic__pattern="none", traffic__load=0, traffic__flows=flows)).resolved
    assert (r.hot_port, r.hot_node) == ("S1/5", "5")  # 3 + 2 Gb/s into 5, 4 into 3


def test_the_flows_recorded_through_a_port_between_switches() -> None:
    """per_flow = "hot" with the hot port between two switches (no hot node): the flows whose
    path crosses that port."""
    s = load("zhb-og-multi-hop")
    r = accepted(s).resolved
    port = next(p for p in r.network.ports() if p.split("/")[1] in r.network.switches)
    s.set_many({"metrics.hot_port": port, "metrics.per_flow": "hot"})
    r = accepted(s).resolved
    assert r.hot_node is None and r.per_flow
    sw, nb = port.split("/")
    assert all((sw, nb) in r.network.path(*pair) for pair in r.per_flow)


def test_a_window_from_zero_and_pairs_from_nodes_with_load() -> None:
    r = accepted(scen(metrics__window=["0s", "0.1s"])).resolved
    assert r.window_ps == (0, 100_000_000_000)
    r = accepted(scen(traffic__loads={"2": 0.0}, metrics__per_flow="all")).resolved
    assert not any(src == "2" for src, _ in r.per_flow) and ("3", "2") in r.per_flow
    r = accepted(scen(traffic__loads={"2": 0.0}, metrics__per_flow="hot")).resolved
    assert ("2", "1") not in r.per_flow and ("3", "1") in r.per_flow


def test_congestion_points_are_egress_ports_of_cm_switches() -> None:
    """e2cm-non-cm-domain: S4 is a legacy bridge, so its ports cannot be congestion points,
    whoever they lead to; S1's can."""
    s = load("e2cm-non-cm-domain")
    s.set("switch.cp_ports", ["S4/S5"])
    refused(s, "switch.cp_ports.0", "an egress port <switch>/<neighbour> of a CM switch")
    s.set("switch.cp_ports", ["S1/S4", "S3/5"])
    accepted(s)


def test_a_per_voq_ingress_must_hold_a_frame_in_every_voq() -> None:
    """16 nodes: 15 VOQs, 30 with two PFC classes; 22.5 KB holds one 1500 B frame in each of 15."""
    from cnsim.runner import prepare

    def problems(**overrides: object) -> list[tuple[str, object, str]]:
        with pytest.raises(ScenarioError) as err:
            prepare("zhb-og-single-hop", set={"nic.ingress": "per_voq", **overrides})
        return [(p.key, p.value, p.message) for p in err.value.problems]

    assert problems(**{"nic.ingress_size": "20KB"}) == [
        ("nic.ingress_size", 20000, "per_voq splits the buffer over 15 VOQs; each must hold at least one frame")]
    assert problems(**{"nic.ingress_size": "40KB", "switch.pfc_classes": 2}) == [
        ("nic.ingress_size", 40000, "per_voq splits the buffer over 30 VOQs (a VOQ per destination and PFC class: 15 × 2); "
                                    "each must hold at least one frame")]
    # one PFC class is a VOQ per destination, as without classes
    assert problems(**{"nic.ingress_size": "20KB", "switch.pfc_classes": 1}) == problems(**{"nic.ingress_size": "20KB"})
    prepare("zhb-og-single-hop", set={"nic.ingress": "per_voq", "nic.ingress_size": "22.5KB"})
