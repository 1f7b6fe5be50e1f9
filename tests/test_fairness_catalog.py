"""Fairness references of the catalog against the allocations scenarios.md states, and
properties of water-filling on random networks (no link over capacity, every flow bottlenecked).
"""

from __future__ import annotations

import pytest
from cnsim import load
from cnsim.fairness import fair_shares, proportional_fair, proportional_shares, reference_problem, water_fill
from hypothesis import given, settings
from hypothesis import strategies as st

G = 1e9


def shares(sid: str) -> dict[tuple[str, str], float]:
    out = fair_shares(load(sid).resolved)
    assert out is not None
    return out


def test_multi_hop_culprits_half_victims_seven() -> None:
    fair = shares("zhb-og-multi-hop")
    for src in ("1", "4", "8", "9"):
        assert fair[(src, "7")] == pytest.approx(0.5 * G)
    for flow in (("2", "9"), ("5", "3"), ("10", "6")):
        assert fair[flow] == pytest.approx(7 * G)


def test_dual_cp_cases() -> None:
    light_heavy = shares("zhb-dual-cp-light-heavy")
    assert [light_heavy[(s, "8")] for s in ("1", "4", "5", "7")] == pytest.approx([2.5 * G] * 4)
    assert light_heavy[("2", "4")] == pytest.approx(7.5 * G)
    heavy_light = shares("zhb-dual-cp-heavy-light")
    for flow in (("1", "8"), ("2", "4"), ("3", "5"), ("6", "7")):
        assert heavy_light[flow] == pytest.approx(2.5 * G)
    assert heavy_light[("4", "8")] == pytest.approx(7.5 * G)


def test_parking_lot_max_min_and_proportional() -> None:
    fair = shares("qcnp-parking-lot")
    assert list(fair.values()) == pytest.approx([2.0 * G] * 6)
    pf = proportional_shares(load("qcnp-parking-lot").resolved)
    assert pf is not None
    for src in "1234":
        assert pf[(src, "9")] == pytest.approx(10 / 6 * G, rel=1e-6)  # 1.67 Gb/s
    assert pf[("5", "7")] == pytest.approx(10 / 3 * G, rel=1e-6)  # 3.33 Gb/s
    assert pf[("6", "8")] == pytest.approx(10 / 3 * G, rel=1e-6)


def test_non_cm_domain_two_each() -> None:
    assert list(shares("e2cm-non-cm-domain").values()) == pytest.approx([2.0 * G] * 5)


def test_mixed_speed_og_hot_flows_get_a_tenth() -> None:
    fair = shares("e2cm-mixed-speed-og")
    for src in range(1, 11):
        assert fair[(str(src), "11")] == pytest.approx(0.1 * G)  # 12.5 MB/s
        assert fair[("11", str(src))] == pytest.approx(0.5 * G)  # cold: demand-limited


def test_mixed_speed_ig_exact_water_filling_inside_i10() -> None:
    fair = shares("e2cm-mixed-speed-ig")
    hot = fair[("11", "1")]
    assert 62.5e6 * 8 <= hot <= 68.75e6 * 8  # I-10: [62.5, 68.75] MB/s
    assert hot == pytest.approx(550e6)  # exact: 1 Gb/s minus nine cold flows of 50 Mb/s
    for src in range(2, 11):
        assert fair[(str(src), "1")] == pytest.approx(50e6)  # 6.25 MB/s


def test_single_hop_and_fat_tree_references() -> None:
    fair = shares("zhb-og-n128")
    assert fair[("2", "1")] == pytest.approx(2 * G / 127)
    ft = shares("eval-fat-tree-64")
    # window [0, 1] s, hotspot at 20 % for 0.4 s of it: 10 x (0.6 + 0.4 x 0.2) = 6.8 Gb/s / 63
    assert ft[("1", "0")] == pytest.approx(6.8 * G / 63)
    assert len(ft) == 64 * 63
    assert fair_shares(load("scale-ft-2048").resolved) is None  # above MAX_FLOWS: skipped


def test_sweeping_hotspot_capacity_is_the_window_average() -> None:
    fair = shares("zhb-sweeping-hotspot")
    # node 1 is hot for 50 ms of the 400 ms window: 10 x (7/8 + 0.2/8) = 9 Gb/s, not a bottleneck
    assert fair[("2", "1")] == pytest.approx(8.5 * G / 15)


@pytest.mark.parametrize("sid", ["zhb-og-multi-hop-bg", "qcnp-20-stage", "qcnp-20-stage-b", "e2cm-fat-tree-32", "eval-mh-og-0g"])
def test_catalog_allocations_are_feasible_and_bottlenecked(sid: str) -> None:
    problem = reference_problem(load(sid).resolved)
    assert problem is not None
    check_max_min(*problem, water_fill(*problem))


def check_max_min(demands, paths, capacity, rate) -> None:  # type: ignore[no-untyped-def]
    tol = 1e-7 * max([*capacity.values(), *demands.values(), 1.0])
    load: dict = {}
    for f, links in paths.items():
        for link in links:
            load[link] = load.get(link, 0.0) + rate[f]
    for link, used in load.items():
        assert used <= capacity.get(link, float("inf")) + tol, link
    for f, r in rate.items():
        assert -tol <= r <= demands[f] + tol
        if r >= demands[f] - tol:
            continue  # demand-limited
        # bottlenecked: some link on its path is full and no flow on it gets more than f
        assert any(
            load[link] >= capacity[link] - tol and all(rate[g] <= r + tol for g in paths if link in paths[g])
            for link in paths[f]
            if link in capacity
        ), f


@st.composite
def networks(draw):  # type: ignore[no-untyped-def]
    n_links = draw(st.integers(1, 6))
    capacity = {f"L{i}": draw(st.floats(0.1, 10.0)) for i in range(n_links)}
    n_flows = draw(st.integers(1, 8))
    paths = {}
    demands = {}
    for f in range(n_flows):
        paths[f] = draw(st.lists(st.sampled_from(sorted(capacity)), min_size=1, max_size=n_links, unique=True))
        demands[f] = draw(st.floats(0.0, 12.0))
    return demands, paths, capacity


@settings(max_examples=200, deadline=None)
@given(networks())
def test_water_fill_properties(net) -> None:  # type: ignore[no-untyped-def]
    demands, paths, capacity = net
    check_max_min(demands, paths, capacity, water_fill(demands, paths, capacity))


@settings(max_examples=100, deadline=None)
@given(networks())
def test_proportional_fair_is_feasible_and_pareto(net) -> None:  # type: ignore[no-untyped-def]
    demands, paths, capacity = net
    rate = proportional_fair(demands, paths, capacity)
    tol = 1e-6 * max([*capacity.values(), *demands.values(), 1.0])
    for link, cap in capacity.items():
        assert sum(rate[f] for f in paths if link in paths[f]) <= cap + tol
    for f, r in rate.items():
        assert r <= demands[f] + tol
        if r < demands[f] - tol:  # Pareto: a flow below its demand crosses a full link
            assert any(sum(rate[g] for g in paths if link in paths[g]) >= capacity[link] - 1e-4 * capacity[link] for link in paths[f])
