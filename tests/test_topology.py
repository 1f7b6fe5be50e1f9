"""Topologies of the catalog (cnsim.topology): fat trees with d-mod-k routes, chains, edge lists.

scenarios.md §2–6 and §8; docs/core-config.md (the engine's fat-tree construction, which
topology.py mirrors for names, validation and water-filling routes).
"""

from __future__ import annotations

import itertools
import time
from collections import Counter
from pathlib import Path

import pytest
from cnsim import load
from cnsim.topology import FatTree, Link, Network

G = 10**9


def tree(radix: int, levels: int, merged: bool) -> Network:
    return Network.tree(FatTree(radix, levels, merged), 10 * G, 1_000_000)


def switch_level(name: str) -> int:
    return int(name[1:].split(".")[0])


# ---- fat trees: counts and radices ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("radix", "levels", "merged", "hosts", "switches", "max_hops"),
    [
        (4, 3, True, 16, 20, 5),  # e2cm-fat-tree-16: 5 stages x 4
        (4, 4, True, 32, 56, 7),  # e2cm-fat-tree-32: 7 x 8
        (8, 3, False, 64, 48, 5),  # eval-fat-tree-64: 4-ary 3-tree
        (8, 2, True, 32, 12, 3),  # zhb-ft-3stage
        (16, 3, True, 1024, 320, 5),  # zhb-ft-5stage
        (64, 2, True, 2048, 96, 3),  # scale-ft-2048
    ],
)
def test_fat_tree_counts_and_radices(radix: int, levels: int, merged: bool, hosts: int, switches: int, max_hops: int) -> None:
    shape = FatTree(radix, levels, merged)
    net = tree(radix, levels, merged)
    assert len(net.nodes) == shape.hosts == hosts
    assert len(net.switches) == len(shape.switch_names()) == switches
    assert net.nodes == [str(i) for i in range(hosts)]
    k = radix // 2
    per_level = k ** (levels - 1)
    # links: one per host, k up-links per switch below the top
    below_top = switches - per_level
    assert len(net.links) == hosts + k * below_top
    top = levels - 1
    for sw in net.switches:
        level = switch_level(sw)
        ports = net.port_count(sw)
        if level < top:
            assert ports == radix, sw  # k down, k up
        elif merged:
            assert ports == radix, sw  # the merged spine uses all 2k ports downward
        else:
            assert ports == k, sw  # top of a k-ary n-tree: up-ports unused
    # names: L<level>.<index>, indices contiguous per level
    per = Counter(switch_level(s) for s in net.switches)
    for level, count in per.items():
        assert sorted(int(s.split(".")[1]) for s in net.switches if switch_level(s) == level) == list(range(count))
    if hosts <= 64:  # every pair: routes follow links, climb then descend, within the hop bound
        links = {frozenset((lk.a, lk.b)) for lk in net.links}
        for s in net.nodes:
            for d in net.nodes:
                if s == d:
                    continue
                route = net.route(s, d)
                assert route[0] == s and route[-1] == d
                assert all(frozenset(h) in links for h in itertools.pairwise(route))
                levels_on_route = [switch_level(x) for x in route[1:-1]]
                peak = levels_on_route.index(max(levels_on_route))
                assert levels_on_route[: peak + 1] == sorted(levels_on_route[: peak + 1])
                assert levels_on_route[peak:] == sorted(levels_on_route[peak:], reverse=True)
                assert len(levels_on_route) <= max_hops
                assert len(set(route)) == len(route)


def test_64_host_tree_routes_over_at_most_5_switches_and_lca_is_minimal() -> None:
    net = tree(8, 3, False)
    lengths = Counter()
    for s in range(64):
        for d in range(64):
            if s != d:
                n_sw = len(net.route(str(s), str(d))) - 2
                # hosts on the same leaf: 1 switch; same level-1 subtree (16 hosts): 3; else 5
                expected = 1 if s // 4 == d // 4 else 3 if s // 16 == d // 16 else 5
                assert n_sw == expected
                lengths[n_sw] += 1
    assert lengths == {1: 64 * 3, 3: 64 * 12, 5: 64 * 48}


def test_merged_top_cross_half_traffic_goes_through_the_spine() -> None:
    net = tree(4, 3, True)  # 16 hosts, halves 0..7 and 8..15
    route = net.route("0", "15")
    assert [switch_level(x) for x in route[1:-1]] == [0, 1, 2, 1, 0]
    assert route[1] == "L0.0" and route[-2] == "L0.7"
    assert net.route("0", "1") == ["0", "L0.0", "1"]


def test_dmodk_spreads_destinations_evenly_over_up_links() -> None:
    for radix, levels, merged in ((8, 3, False), (4, 4, True), (8, 2, True), (16, 3, True)):
        net = tree(radix, levels, merged)
        k = radix // 2
        hosts = len(net.nodes)
        for leaf in ("L0.0", f"L0.{len([s for s in net.switches if s.startswith('L0.')]) - 1}"):
            local = {nb for nb, _ in net.neighbours(leaf) if not net.is_switch(nb)}
            src = min(local, key=int)
            uses: Counter[str] = Counter()
            for d in range(hosts):
                if str(d) in local:
                    continue
                uses[net.route(src, str(d))[2]] += 1
            assert len(uses) == k, (radix, levels, merged)
            assert len(set(uses.values())) == 1, uses  # every up-link carries as many destinations


def test_fat_tree_port_order_lists_down_ports_first() -> None:
    net = tree(8, 3, False)
    assert [nb for nb, _ in net.neighbours("L0.0")] == ["0", "1", "2", "3", "L1.0", "L1.1", "L1.2", "L1.3"]
    # level-1 switch 0 links to the leaves 0..3 (differ in digit 0) and level-2 switches 0, 4, 8, 12
    assert [nb for nb, _ in net.neighbours("L1.0")] == ["L0.0", "L0.1", "L0.2", "L0.3", "L2.0", "L2.4", "L2.8", "L2.12"]
    assert net.feeding_port("0") == "L0.0/0" and net.feeding_port("5") == "L0.1/5"


def test_fat_tree_shapes_rejected() -> None:
    with pytest.raises(ValueError):
        FatTree(5, 2)
    with pytest.raises(ValueError):
        FatTree(4, 1, merged_top=True)


def test_2048_host_tree_builds_fast_and_routes_without_tables() -> None:
    started = time.perf_counter()
    scen = load("scale-ft-2048").validate()
    net = scen.resolved.network
    assert net is not None and len(net.nodes) == 2048 and len(net.switches) == 96
    assert len(scen.lower()["switch"]["thresholds"]) == 96
    assert time.perf_counter() - started < 5.0
    assert len(net.route("0", "2047")) - 2 == 3
    assert len(net.route("0", "1")) - 2 == 1


# ---- the catalog's edge lists -----------------------------------------------------------------------


def hops(sid: str, src: str, dst: str) -> list[str]:
    net = load(sid).resolved.network
    assert net is not None
    return net.route(src, dst)[1:-1]


def test_multi_hop_chain_paths_as_in_the_spec() -> None:
    sid = "zhb-og-multi-hop"
    assert hops(sid, "1", "7") == ["S1", "S2", "S3"]
    assert hops(sid, "4", "7") == ["S2", "S3"]
    assert hops(sid, "8", "7") == ["S3"]
    assert hops(sid, "9", "7") == ["S5", "S4", "S3"]
    assert hops(sid, "2", "9") == ["S1", "S2", "S3", "S4", "S5"]
    assert hops(sid, "5", "3") == ["S4", "S3", "S2"]
    assert hops(sid, "10", "6") == ["S5", "S4"]
    net = load(sid).resolved.network
    assert net is not None and len(net.switches) == 5 and len(net.links) == 14


def test_dual_cp_parking_lot_non_cm_and_20_stage_wirings() -> None:
    net = load("zhb-dual-cp-light-heavy").resolved.network
    assert net is not None
    assert {nb for nb, _ in net.neighbours("S1")} == {"1", "2", "3", "6", "S2"}
    assert hops("qcnp-parking-lot", "1", "9") == ["S1", "S2", "S3"]
    assert hops("qcnp-parking-lot", "6", "8") == ["S2", "S3"]
    scen = load("e2cm-non-cm-domain")
    assert scen.resolved.doc.topology.legacy == ["S4"]
    assert scen.lower()["topology"]["legacy"] == ["S4"]
    assert {s: scen.resolved.network.port_count(s) for s in ["S1", "S2", "S3", "S4", "S5"]} == {"S1": 3, "S2": 3, "S3": 2, "S4": 4, "S5": 3}  # type: ignore[union-attr]
    assert hops("qcnp-20-stage", "2", "59") == [f"S{i}" for i in range(20)]
    assert hops("qcnp-20-stage", "1", "4") == ["S0", "S1"]


def test_mixed_link_speeds() -> None:
    core = load("e2cm-mixed-speed-og").lower()
    rates = {(lk["a"], lk["b"]): lk["rate_bps"] for lk in core["topology"]["links"]}
    assert all(rates[("S1", str(i))] == G for i in range(1, 11))
    assert rates[("S1", "S2")] == 10 * G and rates[("S2", "11")] == 10 * G
    hot = [s for s in core["traffic"]["sources"] if s["dst"] == "11"]
    assert len(hot) == 10 and all(s["load"] == 0.5 for s in hot)  # 0.5 Gb/s on a 1 Gb/s link
    # shared memory, XOFF = sum over ports of M - (2dC_p/8 + 4 x 1500 B), XON = XOFF - 10 KB (§1.1)
    th = core["switch"]["thresholds"]
    assert th["S1"] == {"capacity": 11 * 150_000, "xoff": 10 * 143_750 + 141_500, "xon": 10 * 143_750 + 131_500}
    assert th["S2"] == {"capacity": 300_000, "xoff": 283_000, "xon": 273_000}


def test_single_switch_of_128_ports_and_beyond() -> None:
    net = load("zhb-og-n128").resolved.network
    assert net is not None and net.port_count("S1") == 128
    big = load("zhb-og-n128").set("topology.nodes", 512).lower()
    assert len(big["topology"]["links"]) == 512


def test_a_star_holds_exactly_the_engines_port_limit() -> None:
    from cnsim import ScenarioError
    from cnsim.scenario.fields import MAX_SWITCH_PORTS

    assert MAX_SWITCH_PORTS == 65_534
    assert len(load("zhb-og-single-hop").set("topology.nodes", 65_534).resolved.nodes) == 65_534
    with pytest.raises(ScenarioError, match="at most 65534 nodes"):
        load("zhb-og-single-hop").set("topology.nodes", 65_535).validate()


def test_a_fat_tree_accepts_its_own_host_count_or_names_only() -> None:
    from cnsim import ScenarioError

    # zhb-ft-3stage: radix 8, 2 levels, merged top: 32 hosts named "0".."31"
    assert len(load("zhb-ft-3stage").set("topology.nodes", 32).resolved.nodes) == 32
    assert len(load("zhb-ft-3stage").set("topology.nodes", [str(i) for i in range(32)]).resolved.nodes) == 32
    for nodes in (31, [str(i) for i in range(1, 33)], [str(i) for i in range(31)]):
        with pytest.raises(ScenarioError, match='this fat tree has 32 hosts named "0".."31"; leave topology.nodes out'):
            load("zhb-ft-3stage").set("topology.nodes", nodes).validate()


def test_ambiguous_switch_names_stop_before_the_links_are_read(tmp_path: Path) -> None:
    """Repeated switch names are one problem, not a cascade of link problems against them."""
    from cnsim import ScenarioError

    path = tmp_path / "twice.toml"
    path.write_text("""
duration = "10ms"
[topology]
kind = "graph"
nodes = ["a", "b"]
switches = ["S1", "S1"]
links = [{a = "S1", b = "a"}, {a = "S1", b = "b"}, {a = "S1", b = "nowhere"}]
[traffic]
flows = [{src = "a", dst = "b", rate = "1Gbps"}]
""", encoding="utf-8")
    with pytest.raises(ScenarioError) as err:
        load(path).validate()
    assert "switch names must be unique" in str(err.value) and "nowhere" not in str(err.value)


def test_fat_tree_shapes_at_their_edges_and_host_indices_in_range() -> None:
    """The smallest shapes are accepted (radix 2, one level; two levels merged); a route takes
    host indices 0 … hosts − 1 and refuses either end outside them."""
    assert FatTree(2, 1).hosts == 1 and FatTree(4, 2, merged_top=True).hosts == 8
    for radix, levels, merged in ((0, 1, False), (3, 1, False), (4, 0, False), (4, 1, True)):
        with pytest.raises(ValueError):
            FatTree(radix, levels, merged)
    tree = FatTree(4, 2)
    assert tree.route(tree.hosts - 1, 0)[0] == "3" and tree.route(0, tree.hosts - 1)[-1] == "3"
    for src, dst in ((-1, 0), (0, -1), (tree.hosts, 0), (0, tree.hosts)):
        with pytest.raises(ValueError, match=r"hosts are 0\.\.3"):
            tree.route(src, dst)


def test_ports_routes_and_paths_on_a_small_graph() -> None:
    """A star's port leads to its own node; a fat tree routed "shortest" uses breadth-first
    search like any graph (ties by declaration order), "dmodk" the engine's d-mod-k routes; a node
    routes nowhere to itself, and nothing crosses an end node (which does not forward)."""
    star = Network.star(["1", "2", "3"], 10**10, 10**6)
    assert star.port_link("S1/2").b == "2" and star.port_link("S1/3").b == "3"
    with pytest.raises(KeyError):
        star.port_link("S1/9")
    assert star.route("1", "3") == ["1", "S1", "3"] and star.path("1", "3") == [("1", "S1"), ("S1", "3")]
    assert star.route("1", "1") == [] and star.path("1", "1") == []
    # H2 sits between two switches, but an end node does not forward: H1 cannot reach H3
    odd = Network(["H1", "H2", "H3"], ["S1", "S2"], [Link("S1", "H1", 1, 1), Link("S1", "H2", 1, 1),
                                                     Link("H2", "S2", 1, 1), Link("S2", "H3", 1, 1)])
    assert odd.route("H1", "H3") == [] and odd.path("H1", "H3") == [] and odd.route("H1", "H2") == ["H1", "S1", "H2"]
    shape = FatTree(4, 2)
    dmodk, shortest = Network.tree(shape, 1, 1), Network.tree(shape, 1, 1, routing="shortest")
    assert dmodk.route("0", "3") == shape.route(0, 3) and dmodk.path("0", "3") == list(itertools.pairwise(shape.route(0, 3)))
    # breadth-first search takes the first up-link in declaration order for every destination;
    # d-mod-k spreads destinations over the up-links
    bfs_spines = {shortest.route("0", d)[2] for d in ("2", "3")}
    dmodk_spines = {dmodk.route("0", d)[2] for d in ("2", "3")}
    assert len(bfs_spines) == 1 and len(dmodk_spines) == 2
    assert shortest.path("0", "3") == list(itertools.pairwise(shortest.route("0", "3")))


@pytest.mark.parametrize("sid", ["zhb-og-multi-hop", "zhb-dual-cp-heavy-light", "qcnp-parking-lot", "ring-6-deadlock", "e2cm-non-cm-domain"])
def test_one_search_per_source_routes_every_pair_as_a_search_per_pair(sid: str) -> None:
    """The routes of graphs come from one breadth-first search per source, kept for every
    destination (the max-min reference asks for all pairs): each equals the route of a search
    stopped at its destination, ties by declaration order."""
    net = load(sid).resolved.network
    assert net is not None
    for src, dst in itertools.permutations(net.nodes, 2):
        prev = net.predecessors(src, dst)  # a search of its own, stopped at dst
        expect, here = [], dst
        while dst in prev and here != src:
            expect.append((prev[here], here))
            here = prev[here]
        assert net.path(src, dst) == expect[::-1], (src, dst)
    assert set(net._trees) == set(net.nodes)  # one search per source
