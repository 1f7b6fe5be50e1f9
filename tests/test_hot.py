"""What is hot in a scenario (cnsim/scenario/hot.py): the hotspot span, the named windows of
targets.md §A that summary.json's ``windows`` are measured over, and the nodes whose incoming
flows count as hot (``fct_ms.hot``, docs/metrics.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cnsim import load

MS = 10**9  # picoseconds


def metrics(scen: str | Path, **changes: object) -> dict[str, Any]:
    """The lowered ``metrics`` of ``scen`` with ``changes`` (``traffic__start`` for ``traffic.start``)."""
    return load(scen).set_many({k.replace("__", "."): v for k, v in changes.items()}).lower()["metrics"]


def windows(scen: str | Path, **changes: object) -> dict[str, tuple[int, int]]:
    return {w["name"]: (w["start_ps"], w["end_ps"]) for w in metrics(scen, **changes)["windows"]}


def test_the_named_windows_of_a_hotspot() -> None:
    # zhb-og-single-hop: a hotspot from 100 to 500 ms in a 600 ms run
    assert windows("zhb-og-single-hop") == {"all": (0, 600 * MS), "ss": (200 * MS, 500 * MS), "tr": (100 * MS, 150 * MS),
                                            "rec": (500 * MS, 600 * MS)}
    # the sweeping hotspot's span runs from its first epoch's start to its last epoch's end
    assert windows("zhb-sweeping-hotspot")["ss"] == (200 * MS, 500 * MS)


def test_windows_are_clipped_to_the_run_and_empty_ones_left_out() -> None:
    assert windows("zhb-og-single-hop", duration="700ms")["rec"] == (500 * MS, 600 * MS)  # 100 ms when it fits
    assert windows("zhb-og-single-hop", duration="520ms")["rec"] == (500 * MS, 520 * MS)
    assert windows("zhb-og-single-hop", duration="500ms").keys() == {"all", "ss", "tr"}  # rec would be empty
    # a run that ends 20 ms into the hotspot: only the start of the transient
    assert windows("zhb-og-single-hop", duration="120ms") == {"all": (0, 120 * MS), "tr": (100 * MS, 120 * MS)}


def test_without_hotspot_or_limited_overload_only_the_whole_run() -> None:
    assert windows("kd-symmetric-single-hs") == {"all": (0, 200 * MS)}


def test_a_time_limited_overload_is_the_span() -> None:
    # kd: the traffic's start and stop make the span
    w = windows("kd-symmetric-single-hs", traffic__start="30ms", traffic__stop="190ms")
    assert w == {"all": (0, 200 * MS), "ss": (130 * MS, 190 * MS), "tr": (30 * MS, 80 * MS), "rec": (190 * MS, 200 * MS)}
    # without a stop, the overload lasts to the end of the run: no recovery window
    w = windows("kd-symmetric-single-hs", traffic__start="30ms")
    assert w == {"all": (0, 200 * MS), "ss": (130 * MS, 200 * MS), "tr": (30 * MS, 80 * MS)}


def _star(tmp_path: Path, flows: str) -> Path:
    path = tmp_path / "star.toml"
    path.write_text(f"""
duration = "10ms"
[topology]
nodes = ["a", "b", "c", "d", "e"]
[traffic]
pattern = "none"
flows = [{flows}]
""", encoding="utf-8")
    return path


def test_named_flows_with_starts_and_stops_make_the_span(tmp_path: Path) -> None:
    flows = '{src = "a", dst = "d", rate = "6Gbps", start = "2ms", stop = "8ms"}, {src = "b", dst = "d", rate = "6Gbps", start = "3ms"}'
    assert windows(_star(tmp_path, flows))["tr"] == (2 * MS, 10 * MS)  # from the earliest start, clipped
    assert windows(_star(tmp_path, flows))["rec"] == (8 * MS, 10 * MS)  # to the latest stop


def hot(scen: Path | str, **changes: object) -> list[str]:
    return list(metrics(scen, **changes)["hot_nodes"])


def test_hot_nodes_of_the_catalogue() -> None:
    assert hot("zhb-og-single-hop") == ["1"]  # the hotspot's node
    assert hot("zhb-ig-single-hop") == ["1"]  # offered 4 x 8.5 Gb/s plus its uniform share
    assert hot("kd-symmetric-single-hs") == ["EP4"]  # 4 x 5 Gb/s into a 10 Gb/s link
    assert hot("zhb-sweeping-hotspot") == [str(n) for n in range(1, 9)]  # every epoch's node, in node order
    assert hot("zhb-og-single-hop", metrics__hot_port="S1/5") == ["1", "5"]  # and the node behind the hot port


def test_a_node_is_hot_when_offered_more_than_its_link(tmp_path: Path) -> None:
    # d is offered 12 Gb/s (hot, and behind the hot port), c exactly its 10 Gb/s (not hot), e 11 Gb/s (hot)
    flows = ('{src = "a", dst = "d", rate = "6Gbps"}, {src = "b", dst = "d", rate = "6Gbps"}, '
             '{src = "a", dst = "c", rate = "4Gbps"}, {src = "b", dst = "c", rate = "4Gbps"}, {src = "e", dst = "c", rate = "2Gbps"}, '
             '{src = "c", dst = "e", rate = "5.5Gbps"}, {src = "d", dst = "e", rate = "5.5Gbps"}')
    assert hot(_star(tmp_path, flows)) == ["d", "e"]
    # uniform traffic at 10 % adds a quarter of each other node's 1 Gb/s to every node: c is then
    # offered 11 Gb/s
    assert hot(_star(tmp_path, flows), traffic__pattern="uniform", traffic__load=0.1) == ["c", "d", "e"]


def test_the_uniform_share_is_the_other_nodes_load_over_the_others(tmp_path: Path) -> None:
    # at 25 % load every node sends 2.5 Gb/s spread over the four others: 2.5 Gb/s into each.
    # Named flows bring c to exactly 10 Gb/s (not hot), e to 10.25 and d to 10.5 (hot, and behind
    # the hot port)
    flows = ('{src = "a", dst = "c", rate = "4Gbps"}, {src = "b", dst = "c", rate = "3.5Gbps"}, '
             '{src = "a", dst = "d", rate = "4Gbps"}, {src = "b", dst = "d", rate = "4Gbps"}, '
             '{src = "c", dst = "e", rate = "4Gbps"}, {src = "d", dst = "e", rate = "3.75Gbps"}')
    assert hot(_star(tmp_path, flows), traffic__pattern="uniform", traffic__load=0.25) == ["d", "e"]


def test_two_nodes_can_both_be_hot(tmp_path: Path) -> None:
    path = tmp_path / "pair.toml"
    path.write_text("""
duration = "10ms"
[topology]
nodes = ["a", "b"]
[traffic]
pattern = "none"
flows = [{src = "a", dst = "b", rate = "6Gbps"}, {src = "a", dst = "b", rate = "6Gbps", start = "1ms"},
         {src = "b", dst = "a", rate = "6Gbps"}, {src = "b", dst = "a", rate = "6Gbps", start = "1ms"}]
""", encoding="utf-8")
    assert hot(path) == ["a", "b"]
