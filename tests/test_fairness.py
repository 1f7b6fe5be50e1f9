"""Max-min fair shares by water-filling (fairness.py) against hand-computed allocations."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from cnsim import load
from cnsim.fairness import _overlap, fair_shares, fairness_metrics, proportional_fair, proportional_shares, reference_problem, water_fill

G = 1e9


def test_water_fill_textbook_parking_lot() -> None:
    # links L1, L2 of capacity 1; flow a crosses both, b only L1, c only L2 → 0.5 each
    shares = water_fill({"a": 9, "b": 9, "c": 9}, {"a": ["L1", "L2"], "b": ["L1"], "c": ["L2"]}, {"L1": 1, "L2": 1})
    assert shares == pytest.approx({"a": 0.5, "b": 0.5, "c": 0.5})


def test_water_fill_demand_limited_flows_release_capacity() -> None:
    # capacity 10 shared by demands 1, 2, 100 → 1, 2, 7
    shares = water_fill({"x": 1, "y": 2, "z": 100}, {f: ["L"] for f in "xyz"}, {"L": 10})
    assert shares == pytest.approx({"x": 1, "y": 2, "z": 7})


def test_water_fill_unequal_bottlenecks() -> None:
    # a, b share L1 (cap 3); b, c share L2 (cap 10): a = b = 1.5, c = 8.5
    shares = water_fill({"a": 50, "b": 50, "c": 50}, {"a": ["L1"], "b": ["L1", "L2"], "c": ["L2"]}, {"L1": 3, "L2": 10})
    assert shares == pytest.approx({"a": 1.5, "b": 1.5, "c": 8.5})


def test_qcnp_ig_baseline_fair_shares() -> None:
    shares = fair_shares(load("qcnp-ig-baseline").resolved)
    assert shares is not None
    for culprit in "2345":
        assert shares[(culprit, "6")] == pytest.approx(2.5 * G)
    assert shares[("1", "7")] == pytest.approx(5 * G)


def test_kd_fair_shares() -> None:
    shares = fair_shares(load("kd-symmetric-single-hs").resolved)
    assert shares is not None
    assert [shares[(f"EP{i}", "EP4")] for i in range(4)] == pytest.approx([2.5 * G] * 4)


def test_zhb_hot_flows_share_the_hotspot() -> None:
    shares = fair_shares(load("zhb-og-single-hop").resolved)
    assert shares is not None
    for src in range(2, 17):
        assert shares[(str(src), "1")] == pytest.approx(2 * G / 15)
    # cold flows get their full demand (8.5 Gb/s / 15)
    assert shares[("1", "2")] == pytest.approx(8.5 * G / 15)


def test_hotspot_capacity_is_averaged_over_the_window() -> None:
    # window [0.02, 0.2]; the hotspot covers its first half
    scen = load("kd-symmetric-single-hs").set("hotspots", [{"node": "EP4", "rate": 0.2, "start": "0.02s", "end": "0.11s"}])
    shares = fair_shares(scen.resolved)
    assert shares is not None
    # port EP4 serves 2 Gb/s for half the window and 10 Gb/s for the other half → 6 Gb/s / 4
    assert shares[("EP0", "EP4")] == pytest.approx(1.5 * G)


def test_fairness_metrics() -> None:
    fair = {("a", "b"): 2 * G, ("c", "b"): 2 * G}
    perfect = fairness_metrics({"a->b": 2.0, "c->b": 2.0}, fair)
    assert perfect == {"jain": pytest.approx(1.0), "maxmin_rel_error": pytest.approx(0.0)}
    skewed = fairness_metrics({"a->b": 3.0, "c->b": 1.0}, fair)
    assert skewed["jain"] == pytest.approx(0.8)  # x = (1.5, 0.5): (2)^2 / (2 * 2.5)
    assert skewed["maxmin_rel_error"] == pytest.approx(0.5)
    assert fairness_metrics({}, fair) == {"jain": None, "maxmin_rel_error": None}
    assert fairness_metrics({"a->b": 1.0}, None) == {"jain": None, "maxmin_rel_error": None}


def test_only_a_uniform_pattern_adds_uniform_flows() -> None:
    # pattern "none": the reference holds the named flows alone; "uniform" adds one from every
    # node to every other (a load with pattern "none" is refused: it would offer nothing)
    named = fair_shares(load("kd-symmetric-single-hs").resolved)
    assert named is not None
    assert sorted(named) == [(f"EP{i}", "EP4") for i in range(4)]
    uniform = fair_shares(load("kd-symmetric-single-hs").set("traffic.pattern", "uniform").set("traffic.load", 0.1).resolved)
    assert uniform is not None
    assert sorted(uniform) == sorted((f"EP{i}", f"EP{j}") for i in range(5) for j in range(5) if i != j)


def test_proportional_reference_is_for_small_wirings_only() -> None:
    # 128 × 127 uniform flows: max-min still computed, proportional fairness not (over 5,000)
    n128 = load("zhb-og-n128").resolved
    assert fair_shares(n128) is not None
    assert proportional_shares(n128) is None
    # 2,048 × 2,047 flows: over MAX_FLOWS, neither
    ft = load("scale-ft-2048").resolved
    assert fair_shares(ft) is None
    assert proportional_shares(ft) is None
    # the parking lot: both
    lot = proportional_shares(load("qcnp-parking-lot").resolved)
    assert lot is not None and len(lot) > 0


def test_window_overlap_fractions() -> None:
    assert _overlap(0, None, 10, 20) == 1.0
    assert _overlap(15, 25, 10, 20) == 0.5
    assert _overlap(30, None, 10, 20) == 0.0
    # an empty window is covered by nothing (no division by its zero length)
    assert _overlap(0, None, 10, 10) == 0.0


def test_uniform_demands_are_averaged_over_the_window() -> None:
    # window [0.2, 0.5] s; the sources stop at 0.35 s, half way: each offers half its rate
    scen = load("zhb-og-single-hop").set("traffic.stop", "0.35s")
    problem = reference_problem(scen.resolved)
    assert problem is not None
    assert problem[0][("1", "2")] == pytest.approx(0.5 * 8.5 * G / 15)


def test_fairness_metrics_divide_by_each_flows_own_share() -> None:
    # each flow at its own fair share: perfectly fair whatever the shares
    fair = {("a", "b"): 1 * G, ("c", "b"): 2 * G, ("d", "b"): 4 * G}
    exact = fairness_metrics({"a->b": 1.0, "c->b": 2.0, "d->b": 4.0}, fair)
    assert exact == {"jain": pytest.approx(1.0), "maxmin_rel_error": pytest.approx(0.0)}
    # ratios (1, 1, 0.5): Jain 2.5² / (3 · 2.25)
    assert fairness_metrics({"a->b": 1.0, "c->b": 2.0, "d->b": 2.0}, fair)["jain"] == pytest.approx(6.25 / 6.75)
    # flows without a share, or with a share of 0, or unmeasured, are left out
    left_out = fairness_metrics({"a->b": 1.0, "x->y": 5.0, "z->b": 3.0, "d->b": None}, {**fair, ("z", "b"): 0.0})
    assert left_out == {"jain": pytest.approx(1.0), "maxmin_rel_error": pytest.approx(0.0)}
    # nothing delivered: Jain is undefined, every flow is 100 % off
    assert fairness_metrics({"a->b": 0.0, "c->b": 0.0}, fair) == {"jain": None, "maxmin_rel_error": pytest.approx(1.0)}


def test_a_named_flow_offers_its_rate_over_its_own_active_time() -> None:
    # window [0.02, 0.2] s; EP0 starts, or stops, half way through it (its own time, not the traffic's)
    for key in ("traffic.flows.0.start", "traffic.flows.0.stop"):
        problem = reference_problem(load("kd-symmetric-single-hs").set(key, "0.11s").resolved)
        assert problem is not None
        assert problem[0][("EP0", "EP4")] == pytest.approx(0.5 * problem[0][("EP1", "EP4")]), key
    # without a stop of its own, a flow stops with the traffic
    problem = reference_problem(load("kd-symmetric-single-hs").set("traffic.stop", "0.11s").resolved)
    assert problem is not None
    assert problem[0][("EP0", "EP4")] == pytest.approx(0.5 * 5 * G)


def test_two_nodes_send_to_each_other(tmp_path: Path) -> None:
    path = tmp_path / "pair.toml"
    path.write_text('duration = "10ms"\n[topology]\nnodes = 2\n[traffic]\npattern = "uniform"\nload = 0.5\n')
    shares = fair_shares(load(path).resolved)
    assert shares is not None and sorted(shares) == [("1", "2"), ("2", "1")]


def test_proportional_fair_converges_where_the_prices_interact() -> None:
    # a crosses L1 (capacity 1) and L2 (capacity 2), b only L1, c only L2: maximising
    # log a + log(1 − a) + log(2 − a) gives 3a² − 6a + 2 = 0, a = 1 − 1/√3
    rate = proportional_fair({"a": 9, "b": 9, "c": 9}, {"a": ["L1", "L2"], "b": ["L1"], "c": ["L2"]}, {"L1": 1, "L2": 2})
    r3 = 1 / math.sqrt(3)
    assert rate == pytest.approx({"a": 1 - r3, "b": r3, "c": 1 + r3}, rel=1e-6)
