"""Issue 15, item 3: PFC with priority classes (802.1Qbb, algorithms.md §2). With one class PFC
is today's PAUSE, bit for bit, on every shipped scenario; with several, a PAUSE stops one class
alone, so traffic in another class is not held behind a hotspot (the victims of the ZHB
multi-hop case get their 7 Gb/s back); each class has its own watermarks on its share of the
memory; the deadlock detector works per class. A NIC keeps a VOQ per destination and class
(stop 61), so a paused class never holds another class's frames to the same destination, and
every CM message reaches the limiter of its frame's class."""

from __future__ import annotations

import importlib.util
import json
import math
import sys
from pathlib import Path

import cnsim
import pytest
from cnsim.scenario import load

pytest.importorskip("cnsim._core")

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("cnsim_golden_pfc", ROOT / "scripts" / "golden.py")
assert _spec is not None and _spec.loader is not None
golden = importlib.util.module_from_spec(_spec)
sys.modules["cnsim_golden_pfc"] = golden
_spec.loader.exec_module(golden)

NONE_CASES = [(s, d) for s, k, d in golden.cases() if k == "none"]


@pytest.mark.parametrize(("sid", "duration"), NONE_CASES, ids=[s for s, _ in NONE_CASES])
def test_one_pfc_class_is_todays_pause(sid: str, duration: str) -> None:
    """Summary and every series equal the golden run of 802.3x PAUSE."""
    want = json.loads((golden.GOLDEN_DIR / f"{golden.case_name(sid, 'none')}.json").read_text(encoding="utf-8"))
    r = cnsim.run(sid, set={"cm.scheme": "none", "switch.pfc_classes": 1}, seed=1, duration=duration)
    got = {"scenario": sid, "scheme": "none", "duration": duration,
           "summary": json.loads(json.dumps(r.summary, sort_keys=True, default=float)), "series": golden.series_digest(r)}
    assert golden.diff(want, got) == []


def _multi_hop(**extra: object) -> dict:
    flows = load("zhb-og-multi-hop").resolved.doc.traffic.flows
    culprits = {f"traffic.flows.{i}.priority": 1 for i, f in enumerate(flows) if f.dst == "7"}
    return cnsim.run("zhb-og-multi-hop", set={"switch.pfc_classes": 2, **culprits, **extra}).summary


def test_pfc_isolates_the_victims_of_a_hotspot() -> None:
    """802.3x PAUSE holds every flow behind the hot link (aggregate 3.8 Gb/s); with the culprits
    in their own class the three victims keep their 7 Gb/s."""
    pause = cnsim.run("zhb-og-multi-hop").summary
    pfc = _multi_hop()
    flows = pfc["throughput_gbps"]["per_flow"]
    for victim in ("2->9", "5->3", "10->6"):
        assert pause["throughput_gbps"]["per_flow"][victim] < 1.0
        assert flows[victim] == pytest.approx(7.0, rel=0.02)
    assert pfc["throughput_gbps"]["aggregate"] > 5 * pause["throughput_gbps"]["aggregate"]
    assert pfc["drops"]["frames"] == 0  # lossless in both classes


def test_per_class_watermarks_split_the_memory() -> None:
    one = load("zhb-og-multi-hop").set_many({"switch.pfc_classes": 1}).lower()["switch"]
    two = load("zhb-og-multi-hop").set_many({"switch.pfc_classes": 2}).lower()["switch"]
    assert two["pfc_classes"] == 2 and "pfc_classes" not in load("zhb-og-multi-hop").lower()["switch"]
    m = two["memory_per_port"]
    for name, t in two["thresholds"].items():
        # auto XOFF = share - headroom: half the memory less the same headroom
        headroom = m - one["thresholds"][name]["xoff"]
        assert t["xoff"] == m // 2 - headroom and t["capacity"] == one["thresholds"][name]["capacity"]


def test_the_deadlock_detector_names_the_class() -> None:
    ring = cnsim.run("ring-6-deadlock", set={"switch.pfc_classes": 2, "traffic.priority": 1}).summary["deadlock"]
    assert ring is not None and ring["class"] == 1 and len(ring["cycle"]) == 6


def test_classes_must_exist() -> None:
    with pytest.raises(cnsim.ScenarioError, match="traffic.flows.0.priority"):
        cnsim.run("zhb-og-multi-hop", set={"traffic.flows.0.priority": 1})
    with pytest.raises(cnsim.ScenarioError, match="switch.pfc_classes"):
        cnsim.run("zhb-og-multi-hop", set={"switch.pfc_classes": 9})


def _incast_in_two_classes(scheme: str) -> dict:
    """dcqcn-incast-2to1 with H1's flow at 6 Gb/s in class 1 (served first) and H2's at line rate
    in class 0: the S1/H3 port is congested in class 0 only."""
    flows = '[{src = "H1", dst = "H3", rate = "6Gbps", priority = 1}, {src = "H2", dst = "H3", rate = "10Gbps"}]'
    return cnsim.run(
        "dcqcn-incast-2to1",
        set={"cm.scheme": scheme, "switch.pfc_classes": 2, "traffic.flows": cnsim.scenario.parse_set_value(flows),
             "duration": "0.05s", "metrics.window": [0.01, 0.05]},
    ).summary


def test_a_congestion_point_measures_the_queue_of_its_frames_class() -> None:
    """DCQCN marks on "q of the lossless class" (algorithms.md §7.1): class 1's queue never
    reaches Kmin, so its flow is never marked and keeps its rate as without CM, while class 0's
    flow is cut to the rest of the link. (Marking on the port's whole queue cut the class-1 flow
    to 4.7–4.9 Gb/s.)"""
    dcqcn, none = _incast_in_two_classes("dcqcn"), _incast_in_two_classes("none")
    hi = dcqcn["throughput_gbps"]["per_flow"]["H1->H3"]
    assert hi == pytest.approx(none["throughput_gbps"]["per_flow"]["H1->H3"], rel=1e-3)
    assert hi > 5.8
    assert dcqcn["throughput_gbps"]["per_flow"]["H2->H3"] == pytest.approx(10.0 - hi, rel=0.02)
    assert dcqcn["cm"]["frames"] > 0  # class 0 is congested and marked


def test_the_resolved_scenario_keeps_classes_and_cp_ports(tmp_path) -> None:
    """A run folder's scenario.toml reproduces the run: PFC classes, priorities and CP placement
    survive the round trip."""
    scen = load("zhb-og-multi-hop").set_many(
        {"switch.pfc_classes": 2, "traffic.flows.0.priority": 1, "switch.cp_ports": ["S3/7"], "cm.scheme": "qcn"}
    )
    (tmp_path / "s.toml").write_text(scen.to_toml())
    again = load(tmp_path / "s.toml").lower()
    core = scen.lower()
    assert again == core
    assert core["switch"]["pfc_classes"] == 2 and core["switch"]["cp_ports"] == ["S3/7"]
    assert core["traffic"]["sources"][0]["priority"] == 1


def _same_pair_in_two_classes(scheme: str, flows: str, **extra: object) -> cnsim.Result:
    return cnsim.run("dcqcn-incast-2to1", set={
        "cm.scheme": scheme, "switch.pfc_classes": 2, "traffic.flows": cnsim.scenario.parse_set_value(flows),
        "duration": "0.05s", "metrics.window": [0.01, 0.05], **extra})


def test_a_paused_class_does_not_hold_another_class_to_the_same_destination() -> None:
    """H1 sends to H3 in class 0 (10 Gb/s) and in class 1 (2 Gb/s, served first); H2 sends to H3
    in class 0 (10 Gb/s). Class 0 is paused at both NICs, class 1 never: with a VOQ per
    destination and class H1 keeps its 2 Gb/s of class 1 plus half of the 8 left (6 and 4 Gb/s).
    With one VOQ per destination a class-0 frame at its head held the class-1 frames behind it,
    and H1's class 1 got a sixth of its class 0 (5.45 and 4.55 Gb/s)."""
    flows = ('[{src = "H1", dst = "H3", rate = "10Gbps"}, {src = "H1", dst = "H3", rate = "2Gbps", priority = 1},'
             ' {src = "H2", dst = "H3", rate = "10Gbps"}]')
    s = _same_pair_in_two_classes("none", flows).summary
    assert s["pause_frames"] > 0 and s["drops"]["frames"] == 0
    assert s["throughput_gbps"]["per_flow"]["H1->H3"] == pytest.approx(6.0, abs=0.05)
    assert s["throughput_gbps"]["per_flow"]["H2->H3"] == pytest.approx(4.0, abs=0.05)


@pytest.mark.parametrize(("scheme", "extra"), [(s, {}) for s in ("qcn", "bcn", "e2cm", "qcn3pt", "qcn-plus", "dcqcn", "dcqcn-nic")]
                         + [("dcqcn", {"cm.cnp_mode": "poll"})], ids=lambda v: v if isinstance(v, str) else "-".join(map(str, v.values())))
def test_a_cm_message_reaches_the_limiter_of_its_frames_class(scheme: str, extra: dict[str, object]) -> None:
    """Class 1 is congested (H1 and H2 send 10 Gb/s each to H3), class 0 carries H1's light flow
    to the same H3. Every message names the class of the frame it is about (a CP's sample, a
    probe, the NP's CNP per source and class), so the limiter that reacts is H1's class-1 flow's:
    the rate series of H1->H3, which follows the class of the pair's first listed flow (class 1
    here), exists and stays below the line rate. A message routed to class 0 would leave class 1
    unlimited, and the series empty. (FECN limits every flow from its first frame, so its series
    exists either way: it cannot tell.) DCQCN's poll mode sends its CNPs from a timer event, which
    carries the flow's source and class."""
    flows = ('[{src = "H1", dst = "H3", rate = "10Gbps", priority = 1}, {src = "H1", dst = "H3", rate = "0.5Gbps"},'
             ' {src = "H2", dst = "H3", rate = "10Gbps", priority = 1}]')
    r = _same_pair_in_two_classes(scheme, flows, **extra)
    rates = r.series("rates").to_pydict()
    h1 = [g for f, g in zip(rates["flow"], rates["gbps"], strict=True) if f == "H1->H3" and not math.isnan(g)]
    assert h1 and max(h1) < 10.0 and r.summary["drops"]["frames"] == 0


def test_a_pairs_rate_series_follows_its_first_flows_class() -> None:
    """The same pair in class 1 (2 Gb/s, never congested, never limited) and class 0 (congested):
    listed first, class 1 gives H1->H3 no rate series; listed second, the series is class 0's."""
    light, heavy = '{src = "H1", dst = "H3", rate = "2Gbps", priority = 1}', '{src = "H1", dst = "H3", rate = "10Gbps"}'
    other = '{src = "H2", dst = "H3", rate = "10Gbps"}'
    for first, series in ((light, False), (heavy, True)):
        second = heavy if first is light else light
        rates = _same_pair_in_two_classes("dcqcn", f"[{first}, {second}, {other}]").series("rates").to_pydict()
        assert ("H1->H3" in rates["flow"]) is series and "H2->H3" in rates["flow"]


def test_a_per_voq_ingress_is_split_over_destinations_and_classes() -> None:
    """nic.ingress = "per_voq": each VOQ holds ingress_size/(N − 1), and with a VOQ per destination
    and class ingress_size/((N − 1)·K), so a NIC never holds more than ingress_size. H1 offers
    11 Gb/s to H3 in two classes over its 10 Gb/s link: its class-0 VOQ stays full and drops the
    rest at the source. Doubling ingress_size from 36 to 72 KB (3 nodes, 2 classes) lets that VOQ
    hold 9 KB more — six frames more in flight at the end, six fewer source drops; before the
    split by class it held 18 KB more (twelve)."""
    flows = '[{src = "H1", dst = "H3", rate = "10Gbps"}, {src = "H1", dst = "H3", rate = "1Gbps", priority = 1}]'

    def conservation(size: str) -> dict:
        return cnsim.run("dcqcn-incast-2to1", set={
            "cm.scheme": "none", "switch.pfc_classes": 2, "traffic.flows": cnsim.scenario.parse_set_value(flows),
            "nic.ingress": "per_voq", "nic.ingress_size": size, "duration": "0.02s"}).summary["conservation"]

    small, large = conservation("36KB"), conservation("72KB")
    assert small["generated"] == large["generated"] and small["delivered"] == large["delivered"]
    assert large["in_flight"] - small["in_flight"] == 6
    assert small["source_dropped"] - large["source_dropped"] == 6


def test_a_rate_series_of_uniform_traffic_follows_its_class() -> None:
    """Without a named flow for the pair, a rate series follows the class of its source's
    uniform traffic: the hot flows of zhb-og-single-hop in class 1 have their DCQCN limiters
    recorded (they would have none to show in class 0)."""
    r = cnsim.run("zhb-og-single-hop", set={"cm.scheme": "dcqcn", "switch.pfc_classes": 2, "traffic.priority": 1,
                                            "duration": "0.12s"})
    rates = r.series("rates").to_pydict()
    recorded = {f for f, g in zip(rates["flow"], rates["gbps"], strict=True) if not math.isnan(g)}
    assert {f"{s}->1" for s in range(2, 17)} <= recorded
