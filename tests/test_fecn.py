"""Issue 15, item 2: FECN (algorithms.md §6) through the whole tool. Every switch egress
advertises a rate every T, probes carry the smallest along the path, sources adopt it: on the
benchmark's hotspots the flows settle at their max-min fair shares (the rates are computed, not
probed for), with the bottleneck queue near Qeq and no drop."""

from __future__ import annotations

import cnsim
import pytest
from cnsim.scenario import load

pytest.importorskip("cnsim._core")


def _run(sid: str, **overrides: object) -> dict:
    return cnsim.run(sid, set={"cm.scheme": "fecn", **overrides}).summary


def test_keys_lower_with_the_pseudo_code_defaults() -> None:
    cm = load("zhb-og-single-hop").set_many({"cm.scheme": "fecn"}).lower()["cm"]
    assert cm["scheme"] == "fecn"
    assert (cm["n0"], cm["interval_ps"], cm["qeq"], cm["a"], cm["b"], cm["c"], cm["ewma"]) == (200.0, 10**9, 24_000, 1.1, 1.002, 0.1, 0.5)
    assert cm["rmin_bps"] == 1_000_000 and cm["qsc"] == 96_000  # the seeds' Rmin (§1.4); 4 Qeq


@pytest.mark.parametrize(
    ("sid", "fair"),
    [
        ("zhb-og-multi-hop", {"1->7": 0.5, "4->7": 0.5, "8->7": 0.5, "9->7": 0.5, "2->9": 7.5}),
        ("zhb-dual-cp-light-heavy", {"1->8": 2.5, "4->8": 2.5, "5->8": 2.5, "7->8": 2.5, "2->4": 7.5}),
        ("dcqcn-incast-2to1", {"H1->H3": 5.0, "H2->H3": 5.0}),
    ],
)
def test_flows_settle_at_their_max_min_shares(sid: str, fair: dict[str, float]) -> None:
    s = _run(sid)
    flows = s["throughput_gbps"]["per_flow"]
    for flow, share in fair.items():
        assert flows[flow] == pytest.approx(share, rel=0.05), (flow, flows[flow])
    assert s["fairness"]["maxmin_rel_error"] < 0.05
    assert s["drops"]["frames"] == 0


def test_the_output_generated_hotspot_runs_at_the_ideal_aggregate_with_the_queue_near_qeq() -> None:
    s = _run("zhb-og-single-hop")
    none = cnsim.run("zhb-og-single-hop").summary
    # ideal during the hotspot: 136 Gb/s offered less what node 1 cannot take (129.5 Gb/s)
    assert s["throughput_gbps"]["aggregate"] == pytest.approx(129.5, rel=0.01)
    assert none["throughput_gbps"]["aggregate"] < 0.5 * s["throughput_gbps"]["aggregate"]  # hogging without CM
    assert 0.5 * 24_000 < s["queue_bytes"]["hot"]["mean"] < 2 * 24_000
    assert s["paused_fraction"] == 0.0
    # one probe per flow per T each way: 16 sources x 15 flows x 600 intervals
    assert s["cm"]["frames"] > 0


def test_the_floor_does_not_cap_the_fan_in_fecn_controls() -> None:
    """The advertised rate's floor is the seeds' Rmin (1 Mb/s), not the start rate C0/N0 (50 Mb/s):
    the 15 flows into a 0.5 Gb/s hotspot must fall to 33 Mb/s each, below C0/N0. Over the
    hotspot's last 100 ms the hot queue is back near Qeq (24 KB) and nothing is paused. (With C0/N0
    as the floor the flows could not go below 0.75 Gb/s together: the queue stood at 5.9 MB and
    the inputs were paused 32 % of the time.)"""
    s = _run("zhb-og-single-hop", **{"hotspots.0.rate": 0.05, "metrics.window": [0.4, 0.5]})
    assert s["queue_bytes"]["hot"]["mean"] < 2 * 24_000
    assert s["paused_fraction"] == 0
    assert s["fairness"]["maxmin_rel_error"] < 0.05


def test_efecn_answers_severe_congestion() -> None:
    """With Qsc below the queue FECN keeps and E-FECN on, switches send backward messages."""
    plain = _run("dcqcn-incast-2to1")
    severe = _run("dcqcn-incast-2to1", **{"cm.efecn": True, "cm.qsc": "10KB"})
    assert severe["cm"]["frames"] > plain["cm"]["frames"]
    for rate in severe["throughput_gbps"]["per_flow"].values():
        assert rate == pytest.approx(5.0, rel=0.10)


def test_bad_fecn_values_are_named() -> None:
    with pytest.raises(cnsim.ScenarioError, match="cm.ewma"):
        _run("dcqcn-incast-2to1", **{"cm.ewma": 2})
    with pytest.raises(cnsim.ScenarioError, match=r"cm\.a: out of range; allowed: a number > 1"):
        _run("dcqcn-incast-2to1", **{"cm.a": 1})
