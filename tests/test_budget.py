"""The run budget's estimate and refusals (`cnsim/budget.py`, docs/robustness.md), figure by
figure: the engine's speed by size, the units a message uses, the topology's size (against the
network the front end builds), frames, events, bins and series, memory with its parts, the
source backlog, and the reasons a run is refused. The refusals end to end, and the grid unit
against the engine's, are in test_robustness.py."""

from __future__ import annotations

import copy
import json
import math

import pytest
from cnsim import budget
from cnsim.cmparams import SIMULATED_SCHEMES
from cnsim.errors import ResourceError
from cnsim.runner import prepare
from cnsim.topology import FatTree, Link, Network

MIB = 2**20


@pytest.fixture(scope="module")
def zhb_core() -> dict:
    return prepare("zhb-og-single-hop").lower()


@pytest.fixture()
def zhb(zhb_core: dict) -> dict:
    return copy.deepcopy(zhb_core)


def test_the_engine_is_as_fast_as_at_16_hosts_up_to_512_then_slows_with_the_square_root() -> None:
    assert budget.events_per_s(16) == budget.events_per_s(512) == 15e6
    assert budget.events_per_s(2048) == pytest.approx(7.5e6, rel=1e-12)
    assert budget.events_per_s(513) < 15e6
    assert budget.MAX_WALL_S == pytest.approx(1e11 / 15e6)


def test_sizes_and_durations_in_the_units_people_read() -> None:
    assert [budget.human_bytes(n) for n in (0, 1023, 1024, 1.5 * MIB, 3 * 2**30, 2**60, -2048)] == [
        "0 B", "1023 B", "1.0 KiB", "1.5 MiB", "3.0 GiB", "1024.0 PiB", "-2.0 KiB"]
    assert [budget.human_time(s) for s in (math.inf, math.nan, 0.04, 119.94, 120, 7199, 7200, 3 * 86400 - 1, 3 * 86400)] == [
        "forever", "forever", "0.0 s", "119.9 s", "2 min", "120 min", "2.0 h", "72.0 h", "3 days"]
    assert budget.human_time(999 * 365 * 86400) == "3.65e+05 days"
    assert budget.human_time(1000 * 365 * 86400) == "1e+03 years"
    # where an hour of 3 601 s, a day of 86 401 s or a year of those days would show
    assert (budget.human_time(7382), budget.human_time(689_904), budget.human_time(31_693_685_807)) == (
        "2.1 h", "7.99 days", "1.01e+03 years")


def test_physical_memory_is_whole_pages() -> None:
    import os

    total = budget.physical_memory()
    assert total > 2**28 and total % os.sysconf("SC_PAGE_SIZE") == 0


@pytest.mark.parametrize(("radix", "levels", "merged"), [(4, 2, False), (4, 3, False), (4, 3, True), (8, 2, True), (16, 3, False), (6, 4, True)])
def test_the_fat_tree_size_is_the_network_the_front_end_builds(radix: int, levels: int, merged: bool) -> None:
    """Hosts, switches and links of the closed form against Network.tree; a port at each end of
    every link, and a longest path of 2·levels links."""
    net = Network.tree(FatTree(radix, levels, merged), 10**10, 10**6)
    ft = {"radix": radix, "levels": levels, "merged_top": merged}
    assert budget._fat_tree_size(ft) == (len(net.nodes), len(net.switches), len(net.links))
    assert budget._topology_size({"fat_tree": ft}) == (len(net.nodes), len(net.switches), 2 * len(net.links), 2 * levels)


def test_star_and_graph_sizes(zhb: dict) -> None:
    """A star: 16 nodes, one switch, 32 ports, paths of two links; a graph of five switches:
    paths of up to six links."""
    assert budget._topology_size(zhb["topology"]) == (16, 1, 32, 2)
    graph = prepare("zhb-og-multi-hop").lower()["topology"]
    assert budget._topology_size(graph) == (len(graph["nodes"]), 5, 2 * len(graph["links"]), 6)
    two = prepare("e2cm-mixed-speed-og").lower()["topology"]
    assert budget._topology_size(two) == (11, 2, 2 * 12, 3)


def test_the_estimate_of_zhb_part_by_part(zhb: dict) -> None:
    """16 sources at 85 % of 10 Gb/s for 0.6 s in 12 000-bit frames: 6.8 M frames, each 2·2 + 1
    events. 600 bins of 62 series: 16 nodes, 15 recorded flows × 2, (1 queue + the hot port) × 2
    and 12 totals. Memory: 120 MiB of interpreter, 2 KiB a node, 512 B a port, 56 B a series
    value, 2.5 KiB a recorded flow, 8 B per (source, destination), 256 B a frame on the wires
    (1.67 a link each way) and in the switch (16 input partitions of 600 KB: 6,400), and the
    frames generated after the hotspot starts at 0.1 s (5.67 M, at 64/23 B each) that may wait
    in unlimited VOQs.
    The events add PAUSE's deadlock check, every quarter of its 10 ms threshold from 10 ms on.
    The wall time is the events at 15 M/s and 50 us a recorded flow."""
    est = budget.estimate(zhb)
    frames = 16 * 0.85 * 1e10 * 0.6 / 12_000
    checks = (0.6 - 0.01) / 0.0025
    assert (est.nodes, est.ports, est.bins, est.series_rows, est.recorded_flows) == (16, 32, 600, 600 * 62, 15)
    assert est.frames == pytest.approx(frames, rel=1e-12) and est.events == pytest.approx(5 * frames + checks, rel=1e-12)
    backlog = int(16 * 0.85 * 1e10 * 0.5 / 12_000 * 64 / 23)
    assert est.backlog_bytes == backlog
    assert est.buffered_bytes == 16 * 600_000 // 1500 * 256
    wires = 16 * 2 * 1e10 * 1e-6 / 12_000  # frames on 16 busy links of 1 us, both ways
    memory = 120 * MIB + 16 * 2048 + 32 * 512 + 600 * 62 * 56 + 15 * 2560 + 16 * 16 * 8 + wires * 256 + backlog
    memory += est.buffered_bytes
    assert est.memory_bytes == pytest.approx(int(memory), abs=1)
    assert est.wall_s == pytest.approx((5 * frames + checks) / 15e6 + 15 * 50e-6, rel=1e-12)
    assert est.describe() == (
        "16 nodes, 32 ports, 600 bins x series = 37,200 series rows, 15 recorded flows, about 6.8e+06 frames and "
        f"3.4e+07 events (~2.3 s at 15 M events/s), peak memory about {budget.human_bytes(est.memory_bytes)}")


def test_the_deadlock_check_is_counted_only_with_pause(zhb: dict) -> None:
    """A 1 us threshold over 10,000 s: 4·10^10 checks (a run the estimate once put at 0 events,
    which then ran for 25 minutes); none without PAUSE."""
    zhb["traffic"]["sources"] = []
    zhb["duration_ps"], zhb["metrics"]["bin_ps"] = 10**16, 10**16
    zhb["metrics"]["deadlock_threshold_ps"] = 10**6
    assert budget.estimate(zhb).events == pytest.approx((10**16 - 10**6) / 250_000, rel=1e-12)
    zhb["duration_ps"] = zhb["metrics"]["bin_ps"] = 10**17  # 4·10^11: refused
    with pytest.raises(ResourceError, match="more than 1e\\+11 events"):
        budget.check(zhb)
    zhb["switch"]["pause"] = False
    assert budget.estimate(zhb).events == 0


def test_bins_round_up_and_a_zero_bin_counts_as_a_picosecond(zhb: dict) -> None:
    zhb["metrics"]["bin_ps"] = 7 * 10**10  # 70 ms into 600 ms: 9 bins, the last one short
    assert budget.estimate(zhb).bins == 9
    zhb["duration_ps"], zhb["metrics"]["bin_ps"] = 1000, 0
    assert budget.estimate(zhb).bins == 1000


def test_sources_count_only_while_they_are_active(zhb: dict) -> None:
    """A source from 0.2 s, one that stops at 0.3 s, one that starts after the end (none), one
    of a fifth of the load: frames follow each one's active time × load."""
    src = zhb["traffic"]["sources"]
    src[0]["start_ps"] = 2 * 10**11
    src[1]["stop_ps"] = 3 * 10**11
    src[2]["start_ps"] = 7 * 10**11
    src[3]["load"] = 0.17
    per_s = 0.85 * 1e10 / 12_000
    frames = per_s * (12 * 0.6 + 0.4 + 0.3 + 0.0) + 0.17 * 1e10 / 12_000 * 0.6
    assert budget.estimate(zhb).frames == pytest.approx(frames, rel=1e-12)


def test_finite_flows_keep_their_completion_times(zhb: dict) -> None:
    """Geometric sizes of mean 4 frames: a quarter as many flows as frames, 32 B each; fixed
    sizes keep none. A mean under one frame counts as one."""
    fixed = budget.estimate(zhb).memory_bytes
    for src in zhb["traffic"]["sources"]:
        src["sizes"], src["mean_frames"] = "geometric", 4.0
    frames = 16 * 0.85 * 1e10 * 0.6 / 12_000
    assert abs(budget.estimate(zhb).memory_bytes - fixed - frames / 4 * 32) <= 1
    for src in zhb["traffic"]["sources"]:
        src["mean_frames"] = 0.5
    assert abs(budget.estimate(zhb).memory_bytes - fixed - frames * 32) <= 1


def test_the_source_backlog_counts_only_with_unlimited_ingress_and_congestion(zhb: dict) -> None:
    """Per-VOQ or shared adapter ingress drops what does not fit: no backlog. Without a hotspot
    this star carries its uniform load: none either; a hotspot that starts at or after the end
    of the run does not count. A source that stops at 0.3 s adds only its 0.2 s after the
    hotspot. (Named flows and uniform traffic a link cannot carry: the tests below.)"""
    base = budget.estimate(zhb)
    limited = copy.deepcopy(zhb)
    limited["nic"]["ingress"] = "per_voq"
    assert budget.estimate(limited).backlog_bytes == 0
    assert budget.estimate(limited).memory_bytes == base.memory_bytes - base.backlog_bytes
    late = copy.deepcopy(zhb)
    late["hotspots"][0]["start_ps"] = late["duration_ps"]
    assert budget.estimate(late).backlog_bytes == 0
    late["hotspots"].append({"node": "2", "rate": 0.5, "start_ps": 4 * 10**11, "end_ps": 5 * 10**11})
    assert budget.estimate(late).backlog_bytes == int(16 * 0.85 * 1e10 * 0.2 / 12_000 * 64 / 23)
    zhb["traffic"]["sources"][0]["stop_ps"] = 3 * 10**11
    zhb["traffic"]["sources"][1]["start_ps"] = 2 * 10**11
    frames = 0.85 * 1e10 / 12_000 * (14 * 0.5 + 0.2 + 0.4)
    assert budget.estimate(zhb).backlog_bytes == int(frames * 64 / 23)


def test_the_switches_hold_frames_once_a_port_may_be_congested(zhb: dict) -> None:
    """A hotspot in the run, or a named flow, may congest a port: every switch buffer counts as
    full (worst case), 256 B a frame, up to the frames generated from then on. Uniform traffic
    alone counts none, nor does a hotspot after the end."""
    frame = 256 / 1500  # bytes of engine memory per byte of buffer
    assert budget.estimate(zhb).buffered_bytes == int(16 * 600_000 * frame)  # 16 partitions
    shared = copy.deepcopy(zhb)
    shared["switch"]["buffer"] = "shared"
    shared["switch"]["thresholds"]["S1"]["capacity"] = 16 * 600_000  # the pool
    assert budget.estimate(shared).buffered_bytes == int(16 * 600_000 * frame)
    egress = copy.deepcopy(zhb)
    egress["switch"]["buffer"], egress["switch"]["thresholds"]["S1"]["capacity"] = "egress", 150_000
    assert budget.estimate(egress).buffered_bytes == int(16 * 150_000 * frame)
    uniform = copy.deepcopy(zhb)
    uniform["hotspots"][0]["start_ps"] = uniform["duration_ps"]
    assert budget.estimate(uniform).buffered_bytes == 0
    base = budget.estimate(zhb)
    assert base.memory_bytes - budget.estimate(uniform).memory_bytes == base.buffered_bytes + base.backlog_bytes
    flow = copy.deepcopy(uniform)
    flow["traffic"]["sources"].append({**flow["traffic"]["sources"][1], "dst": "1", "load": 0.1})
    assert budget.estimate(flow).buffered_bytes == int(16 * 600_000 * frame)
    # a large memory holds no more than the frames generated after the hotspot starts at 0.1 s
    large = copy.deepcopy(zhb)
    large["switch"]["thresholds"]["S1"]["capacity"] = 10**12
    after = 16 * 0.85 * 1e10 * 0.5 / 12_000
    assert budget.estimate(large).buffered_bytes == int(after * 256)
    late = copy.deepcopy(large)
    late["hotspots"][0]["start_ps"] = 5 * 10**11  # 0.1 s before the end
    assert budget.estimate(late).buffered_bytes == int(after / 5 * 256)


def test_a_run_whose_switch_buffers_would_not_fit_is_told_to_give_them_less_memory(zhb: dict) -> None:
    """The refusal names the switch memory when the switches' frames are most of the estimate."""
    zhb["switch"]["thresholds"]["S1"]["capacity"] = 10**12
    with pytest.raises(ResourceError, match=r"Give the switches less memory \(`switch.memory_per_port`: their buffers may hold 1\.\d GiB of frames\), shorten"):
        budget.check(zhb, memory=2**30)
    assert budget.check(zhb, memory=64 * 2**30).buffered_bytes > 10**9
    zhb["switch"]["thresholds"]["S1"]["capacity"] = 600_000
    with pytest.raises(ResourceError, match=r"Estimate: .*\. Shorten `duration`"):
        budget.check(zhb, memory=2**27)
    # switch frames at 40 % of the estimate: not most of it, no advice about them
    small = budget.estimate(zhb)
    rest = small.memory_bytes - small.buffered_bytes
    zhb["switch"]["thresholds"]["S1"]["capacity"] = int(rest * 2 / 3 / 256 * 1500 / 16)
    est = budget.estimate(zhb)
    assert est.buffered_bytes / est.memory_bytes == pytest.approx(0.4, abs=1e-3)
    with pytest.raises(ResourceError, match=r"Estimate: .*\. Shorten `duration`"):
        budget.check(zhb, memory=2**27)


def test_the_grid_unit_is_the_gcd_of_slots_and_origins(zhb: dict) -> None:
    """1500 B at 10 Gb/s is a 1.2 us slot; a source 0.4 us off the others puts them on a 0.4 us
    grid. A grid must reach 4 096 of the longest slot within its 65 535 units: 0.4 us units
    reach 26 ms, enough for 1.2 us slots (4.9 ms) but not for a 1 Gb/s source's 12 us (49 ms),
    where the 1.2 us grid (79 ms) still does. A source on a link without rate has none."""
    assert budget.grid_unit(zhb) == 1_200_000
    zhb["traffic"]["sources"][5]["start_ps"] = 400_000
    assert budget.grid_unit(zhb) == 400_000
    zhb["topology"]["links"][7]["rate_bps"] = 10**9
    assert budget.grid_unit(zhb) is None
    zhb["traffic"]["sources"][5]["start_ps"] = 0
    assert budget.grid_unit(zhb) == 1_200_000
    zhb["traffic"]["sources"][5]["start_ps"] = 36_000_000  # three 12 us slots later: the same grid
    assert budget.grid_unit(zhb) == 1_200_000
    zhb["topology"]["links"][7]["rate_bps"] = 0
    assert budget.grid_unit(zhb) is None


def test_the_grid_reaches_4096_slots_only_below_16_units_a_slot(zhb: dict) -> None:
    """65 535 units must cover 4 096 of the longest slot: 15 units to a slot do (61 440), 16 do
    not (65 536). Origins count by their distances from the first source's: sources 0.5 us
    late and one 0.9 us late are 0.4 us apart (sums of origins would give 0.2 us). No source,
    no grid."""
    src = zhb["traffic"]["sources"]
    src[5]["start_ps"] = 80_000  # 1.2 us / 80 ns = 15
    assert budget.grid_unit(zhb) == 80_000
    src[5]["start_ps"] = 75_000  # 1.2 us / 75 ns = 16
    assert budget.grid_unit(zhb) is None
    for s in src:
        s["start_ps"] = 500_000
    src[5]["start_ps"] = 900_000
    assert budget.grid_unit(zhb) == 400_000
    zhb["traffic"]["sources"] = []
    assert budget.grid_unit(zhb) is None


def test_the_grid_unit_is_at_most_2_47_ps(zhb: dict) -> None:
    """The engine's quotient test tells a time off a grid from one on it only for units up to
    2^47 ps (141 s): 1500 B frames at 88 b/s have a 136.4 s slot and keep the grid, at 85 b/s
    141.2 s, and the store is wide. The estimate follows the engine."""
    from cnsim import _core

    for rate, unit in ((88, -(-12_000 * 10**12 // 88)), (85, None)):
        for link in zhb["topology"]["links"]:
            link["rate_bps"] = rate
        assert budget.grid_unit(zhb) == unit
        assert _core.Simulation(json.dumps(zhb)).voq_time_unit() == unit


def _star(zhb: dict, n: int) -> dict:
    """zhb's core as an idle star of ``n`` nodes (no traffic, nothing recorded but totals)."""
    core = copy.deepcopy(zhb)
    names = [str(i) for i in range(n)]
    core["topology"] = {"switches": ["S1"], "nodes": names,
                        "links": [{"a": "S1", "b": name, "rate_bps": 10**10, "delay_ps": 10**6} for name in names]}
    core["traffic"]["sources"], core["hotspots"] = [], []
    core["metrics"]["per_flow"], core["metrics"]["queues"] = [], []
    return core


def test_the_dense_tables_are_counted_up_to_256_nodes(zhb: dict) -> None:
    """nodes² × 8 B — the adapters' VOQ index (4 B per destination) and the recorder's flow
    slots (4 B per pair) — up to 256 nodes; none at 257, where the engine keeps the live VOQs
    inline or in a map and the recorded flows in a map (`net/nic.rs`, `metrics/recorder.rs`).
    A node adds 2 KiB, two ports of 512 B and a throughput series of 600 bins × 56 B."""
    at, above = budget.estimate(_star(zhb, 256)), budget.estimate(_star(zhb, 257))
    per_node = 2048 + 2 * 512 + 600 * 56 + 2 * 1e10 * 1e-6 / 12_000 * 256  # and its link's frames
    assert at.memory_bytes == pytest.approx(120 * MIB + 256 * per_node + 600 * 14 * 56 + 256**2 * 8, abs=1)
    assert above.memory_bytes == pytest.approx(120 * MIB + 257 * per_node + 600 * 14 * 56, abs=1)


def _cm(scheme: str, **params: object) -> dict:
    """The lowered ``[cm]`` table of zhb-og-single-hop with ``scheme`` and ``params`` set."""
    overrides: dict[str, object] = {"cm.scheme": scheme, **{f"cm.{k}": v for k, v in params.items()}}
    return prepare("zhb-og-single-hop", overrides).lower()["cm"]


def test_e2cm_probing_only_keeps_a_limiter_for_every_pair_it_reaches(zhb: dict) -> None:
    """With E2CM probing only every flow gets a limiter with its first frame and keeps it (D17),
    so the pairs the arrivals reach stay in memory: d·(1 − (1 − 1/d)^a) for a uniform source of a
    arrivals over d destinations, at 768 B a pair. The same run with BCN on, or another scheme,
    keeps none; a source with one destination reaches one pair; a finite-flow source's arrivals
    are its flows."""
    plain = budget.estimate(zhb)
    assert plain.limited_flows == 0
    zhb["cm"] = _cm("e2cm", bcn=False)
    est = budget.estimate(zhb)
    a = 0.85 * 1e10 * 0.6 / 12_000  # each source's frames
    assert est.limited_flows == pytest.approx(16 * 15 * (1 - (1 - 1 / 15) ** a), rel=1e-12)
    assert est.limited_flows == pytest.approx(16 * 15, rel=1e-9)  # every pair, long before 0.6 s
    assert est.memory_bytes == pytest.approx(plain.memory_bytes + est.limited_flows * 768, abs=1)
    assert "about 240 rate-limited flows" in est.describe()
    zhb["cm"]["bcn"] = True
    assert budget.estimate(zhb).limited_flows == 0
    zhb["cm"]["bcn"] = False
    zhb["duration_ps"] = 10**8  # 0.1 ms: about 71 arrivals a source over 15 destinations
    a = 0.85 * 1e10 * 1e-4 / 12_000
    assert budget.estimate(zhb).limited_flows == pytest.approx(16 * 15 * (1 - (14 / 15) ** a), rel=1e-12)
    for src in zhb["traffic"]["sources"]:
        src["sizes"], src["mean_frames"] = "geometric", 40.0
    flows = a / 40  # about 1.8 flows a source
    assert budget.estimate(zhb).limited_flows == pytest.approx(16 * 15 * (1 - (14 / 15) ** flows), rel=1e-12)
    for i, src in enumerate(zhb["traffic"]["sources"]):
        src["dst"] = str((i + 1) % 16)
    assert budget.estimate(zhb).limited_flows == pytest.approx(16 * min(flows, 1.0), rel=1e-12)


@pytest.mark.parametrize("scheme", SIMULATED_SCHEMES)
def test_the_schemes_that_limit_every_flow_and_probe_are_the_engines(scheme: str, zhb: dict) -> None:
    """The budget asks the engine which schemes keep a limiter for every flow from its first
    frame — FECN (§6) and E2CM probing only (D17) — and which probe every period whatever the
    congestion: FECN, every T. Neither was counted for FECN before stop 49 (1 ms on the
    2,048-host tree held 730 MB for its pairs and ran 29 M events, estimated 130 MiB and 13 M)."""
    plain = budget.estimate(zhb)
    zhb["cm"] = _cm(scheme)
    est = budget.estimate(zhb)
    if scheme != "fecn":
        assert (est.limited_flows, est.probes, est.events) == (0, 0, plain.events)
        return
    assert est.limited_flows == pytest.approx(16 * 15, rel=1e-9)
    # 0.6 s of 1 ms periods, each with 708 arrivals a source over 15 destinations: all 15 probe
    a = 0.85 * 1e10 * 1e-3 / 12_000
    assert est.probes == pytest.approx(16 * 600 * 15 * (1 - (14 / 15) ** a), rel=1e-9)
    assert est.events == pytest.approx(plain.events + 2 * est.probes * 5, rel=1e-12)
    assert "about 1.44e+05 probes" in est.describe()
    zhb["cm"]["interval_ps"] = 10**6  # 1 us: under one arrival a period, about one probe per frame
    few = budget.estimate(zhb).probes
    assert few == pytest.approx(plain.frames, rel=1e-9)  # one probe a frame: no more than its arrivals
    zhb["cm"]["interval_ps"] = 10**13  # 10 s, longer than the run: every pair reached probes once
    assert budget.estimate(zhb).probes == pytest.approx(16 * 15, rel=1e-9)


def test_a_scheme_table_the_engine_refuses_has_no_traits() -> None:
    """A table the engine cannot parse counts nothing here: the engine's build reports it, with
    the scenario's name, as for any run (test_robustness.py)."""
    assert budget._scheme_traits(_cm("fecn")) == {"limits_every_flow": True, "probe_period_ps": 10**9}
    assert budget._scheme_traits(_cm("qcn")) == {"limits_every_flow": False, "probe_period_ps": None}
    assert budget._scheme_traits({**_cm("fecn"), "n0": "two hundred"}) == {}
    assert budget._scheme_traits({"scheme": "fecn"}) == {}
    assert budget._scheme_traits({"scheme": "no-such-scheme"}) == {}


def test_check_refuses_by_memory_by_events_or_by_time(zhb: dict) -> None:
    """Memory over 80 % of the machine (unless its memory is unknown: 0), over 1e11 events, or,
    under that, over the event bound's time at this size's speed; both reasons when both hold;
    force runs it anyway."""
    est = budget.estimate(zhb)
    assert budget.check(zhb, memory=0).memory_bytes == est.memory_bytes
    assert budget.check(zhb, memory=math.ceil(est.memory_bytes / 0.8)).memory_bytes == est.memory_bytes
    with pytest.raises(ResourceError, match=r"^this run was refused before it started: its peak memory would exceed 80% of this machine's"):
        budget.check(zhb, memory=int(est.memory_bytes / 0.8) - 1)
    long = copy.deepcopy(zhb)
    long["duration_ps"] = 10**12 * 20_000
    long["metrics"]["bin_ps"] = 10**12
    long["hotspots"] = []
    with pytest.raises(ResourceError) as err:
        budget.check(long, memory=10**6, force_hint="say so")
    text = str(err.value)
    assert "peak memory would exceed" in text and " and it would take more than 1e+11 events (~111 min)" in text
    assert text.endswith("; say so.")
    assert budget.check(long, force=True, memory=10**6).events > 1e11
    # under the event bound but slower than its time: 2 048 hosts run at half the speed
    slow = prepare("scale-ft-2048").lower()
    slow["duration_ps"] = int(10**12 * 0.7e11 / budget.estimate(slow).events * slow["duration_ps"] / 10**12)
    slow["metrics"]["bin_ps"] = slow["duration_ps"]
    slow_est = budget.estimate(slow)
    assert slow_est.events < 1e11 and slow_est.wall_s > budget.MAX_WALL_S
    with pytest.raises(ResourceError, match=r"it would take about 2.6 h, more than 111 min"):
        budget.check(slow, memory=0)


def test_long_links_hold_their_frames_on_the_wires() -> None:
    """Every link busy both ways: 2 · rate · delay / frame bits frames a link at 256 B. The
    2,048-host tree has 4,096 links; with 1 ms links that is 6.83 M frames, 1.6 GiB (a 4 ms
    `cnsim run` of it peaked at 1.33 GB where the estimate said 128 MiB before stop 48); with
    1 us links 6,827 frames, under 2 MiB."""
    long = prepare("scale-ft-2048", {"links.delay": "1ms", "switch.memory_per_port": "4MB"}, None, "4ms").lower()
    short = prepare("scale-ft-2048", None, None, "4ms").lower()
    per_link = 2 * 1e10 * 1e-3 / 12_000
    assert budget._frames_on_wires(long["topology"], 12_000) == pytest.approx(4096 * per_link, rel=1e-12)
    assert budget._frames_on_wires(short["topology"], 12_000) == pytest.approx(4096 * per_link / 1000, rel=1e-12)
    gap = budget.estimate(long).memory_bytes - budget.estimate(short).memory_bytes
    assert gap == pytest.approx(4096 * per_link * 0.999 * 256, rel=1e-6)
    assert budget.estimate(long).memory_bytes > 1.5 * 2**30


def test_the_pairs_a_uniform_source_reaches() -> None:
    """d·(1 − (1 − 1/d)^a): none without arrivals, one per arrival while they are few, never more
    than d; one destination is reached by the first arrival, none without a destination."""
    reached = budget._pairs_reached
    assert reached(0.0, 15) == 0.0 and reached(1.0, 15) == pytest.approx(1.0)
    assert reached(2.0, 15) == pytest.approx(15 * (1 - (14 / 15) ** 2)) and reached(1e6, 15) == pytest.approx(15.0)
    assert reached(0.5, 1) == 0.5 and reached(3.0, 1) == 1.0 and reached(3.0, 0) == 0.0
    assert reached(2.0, 2) == pytest.approx(1.5)  # two arrivals over two destinations: 1.5 of them
    assert reached(0.7, 15) == 0.7 and 15 * (1 - (14 / 15) ** 0.7) > 0.7  # never more than its arrivals


def test_e2cm_probing_only_on_8192_hosts_is_refused_on_a_24_gib_machine() -> None:
    """20 ms of E2CM probing only on a radix-128 tree: 8,192 hosts whose limiters reach 55 M
    pairs, about 40 GiB, which the estimate counted as 0 before stop 48 (the engine would have
    run out of memory). Without the scheme the same run fits."""
    core = prepare("scale-ft-2048", {"topology.fat_tree": {"radix": 128, "levels": 2, "merged_top": True},
                                     "cm.scheme": "e2cm", "cm.bcn": False}, None, "20ms").lower()
    est = budget.estimate(core)
    assert est.nodes == 8192 and 5.4e7 < est.limited_flows < 5.6e7
    with pytest.raises(ResourceError, match=r"peak memory would exceed 80% .* about 5.52e\+07 rate-limited flows"):
        budget.check(core, memory=24 * 2**30)
    core["cm"] = {"scheme": "none"}
    assert budget.check(core, memory=24 * 2**30).limited_flows == 0


def test_parallel_runs_are_checked_only_against_a_known_memory_and_one_worker_too() -> None:
    """With the machine's memory unknown (0), or no worker, nothing is checked; one worker whose
    run does not fit in 80 % of the machine is refused with the advice of one worker (the run
    budget itself refuses that run when it starts)."""
    gib = 2**30
    budget.check_parallel([8 * gib] * 4, 4, shared_process=False, memory=0)
    budget.check_parallel([8 * gib] * 4, 0, shared_process=False, memory=4 * gib)
    with pytest.raises(ResourceError, match="--workers 1: 1 runs at once .*not even the largest run fits alone"):
        budget.check_parallel([8 * gib], 1, shared_process=False, memory=4 * gib)


def _two_switches(zhb: dict, middle_bps: int) -> dict:
    """``zhb``'s 16 sources split over two switches, 8 on each, joined by one link."""
    core = copy.deepcopy(zhb)
    core["hotspots"] = []
    topo = core["topology"]
    topo["switches"] = ["S1", "S2"]
    for i, link in enumerate(topo["links"]):
        link["a"] = "S1" if i < 8 else "S2"
    topo["links"].append({"a": "S1", "b": "S2", "rate_bps": middle_bps, "delay_ps": 1_000_000})
    core["switch"]["thresholds"]["S2"] = core["switch"]["thresholds"]["S1"]
    return core


def test_uniform_traffic_that_exceeds_a_link_may_congest_from_its_start(zhb: dict) -> None:
    """Uniform traffic alone congests where the routes meet on a link slower than what they
    carry: two switches of 8 nodes at 85 % send 8 · 8.5 · 8/15 = 36 Gb/s each way over the
    link between them. From the sources' start the switches' buffers count as full and every
    frame as waiting in its VOQ (worst case); a 40 Gb/s middle link carries it, and nothing
    counts. On a star, a node on a slower link receives more than it can take."""
    frame = 256 / 1500
    chain = _two_switches(zhb, 10**10)
    est = budget.estimate(chain)
    assert est.buffered_bytes == int(18 * 600_000 * frame)  # 18 switch ports, a partition each
    generated = 16 * 0.85 * 1e10 * 0.6 / 12_000
    assert est.backlog_bytes == int(generated * 64 / 23)
    wide = budget.estimate(_two_switches(zhb, 4 * 10**10))
    assert (wide.buffered_bytes, wide.backlog_bytes) == (0, 0)
    later = _two_switches(zhb, 10**10)
    for src in later["traffic"]["sources"]:
        src["start_ps"] = 3 * 10**11  # the second half of the run
    assert budget.estimate(later).backlog_bytes == int(generated / 2 * 64 / 23)
    star = copy.deepcopy(zhb)
    star["hotspots"] = []
    assert budget.estimate(star).buffered_bytes == 0
    named = copy.deepcopy(star)  # a named flow may overload its port: its frames wait too, from 0
    named["traffic"]["sources"].append({**named["traffic"]["sources"][1], "dst": "1", "load": 0.1})
    assert budget.estimate(named).backlog_bytes == int((16 * 0.85 + 0.1) * 1e10 * 0.6 / 12_000 * 64 / 23)
    star["topology"]["links"][0]["rate_bps"] = 10**9  # node 1 on 1 Gb/s: 15 · 8.5 / 15 Gb/s come
    assert budget.estimate(star).buffered_bytes == int(16 * 600_000 * frame)


def test_the_uniform_link_loads_are_the_routes_summed_and_a_fat_tree_never_overloads(zhb: dict) -> None:
    """One search per source gives every link direction what the pairs' shortest routes
    (``Network.path``, the engine's) put on it; a fat tree under uniform traffic counts as
    uncongested, and a general graph too large to search as congested."""
    core = _two_switches(zhb, 10**10)
    topo = core["topology"]
    topo["switches"].append("S3")  # a chain S1 - S2 - S3: nodes 13-16 move to S3
    for link in topo["links"][12:16]:
        link["a"] = "S3"
    topo["links"].append({"a": "S2", "b": "S3", "rate_bps": 10**10, "delay_ps": 1_000_000})
    net = Network(topo["nodes"], topo["switches"], [Link(lk["a"], lk["b"], lk["rate_bps"], lk["delay_ps"]) for lk in topo["links"]])
    shares = {n: 1.0 + i for i, n in enumerate(topo["nodes"])}  # every source its own share
    summed: dict[tuple[str, str], float] = {}
    for src, share in shares.items():
        for dst in topo["nodes"]:
            if dst != src:
                for hop in net.path(src, dst):
                    summed[hop] = summed.get(hop, 0.0) + share
    assert budget._offered_loads(net, shares) == pytest.approx(summed)
    nodes = topo["nodes"]
    assert summed[("S1", "S2")] == pytest.approx(8 * sum(shares[n] for n in nodes[:8]))  # to nodes 9-16
    assert summed[("S2", "S3")] == pytest.approx(4 * sum(shares[n] for n in nodes[:12]))  # to nodes 13-16
    tree = prepare("scale-ft-2048").lower()
    assert not budget._uniform_overload(tree) and budget.estimate(tree).buffered_bytes == 0
    big = _two_switches(zhb, 10**12)
    big["topology"]["nodes"] = big["topology"]["nodes"] + [f"x{i}" for i in range(budget._LOAD_CHECK_NODES)]
    assert budget._uniform_overload(big)


def test_a_uniform_overload_is_judged_at_the_links_rate(zhb: dict) -> None:
    """A link counts as overloaded when the uniform load it carries exceeds its rate, no sooner
    and no later: each source spreads load × its link rate over the n − 1 other nodes, a node of
    a star receives from every node but itself, and a link loaded exactly to its rate is not
    overloaded (within a billionth, for the floating-point sums)."""
    star = copy.deepcopy(zhb)
    star["hotspots"] = []
    for rate, over in [(10**10, False), (9 * 10**9, False), (8 * 10**9, True)]:
        core = copy.deepcopy(star)
        core["topology"]["links"][0]["rate_bps"] = rate  # node 1 receives 15 · 8.5/15 = 8.5 Gb/s
        assert budget._uniform_overload(core) is over, rate
    full = copy.deepcopy(star)
    for src in full["traffic"]["sources"]:
        src["load"] = 1.0  # every node receives exactly its 10 Gb/s
    assert not budget._uniform_overload(full)
    # two switches of 8 nodes: 8 · 8 pairs of 0.9375 · 10/15 Gb/s = 40 Gb/s across the middle
    for middle, over in [(4 * 10**10, False), (39 * 10**9, True)]:
        chain = _two_switches(zhb, middle)
        for src in chain["traffic"]["sources"]:
            src["load"] = 0.9375
        assert budget._uniform_overload(chain) is over, middle


def test_only_uniform_sources_count_and_two_nodes_are_enough(zhb: dict) -> None:
    """Named flows are not spread over the nodes (they overload their own port, from the start:
    ``_congestion_start``); a network of two nodes has uniform traffic too."""
    star = copy.deepcopy(zhb)
    star["hotspots"] = []
    star["topology"]["links"][0]["rate_bps"] = 10**9  # node 1 on 1 Gb/s
    named = copy.deepcopy(star)
    named["traffic"]["sources"] = [{**src, "dst": "2"} for src in named["traffic"]["sources"][2:]]
    assert budget._uniform_overload(star) and not budget._uniform_overload(named)
    pair = copy.deepcopy(star)
    pair["topology"]["nodes"] = ["1", "2"]
    pair["topology"]["links"] = pair["topology"]["links"][:2]
    pair["traffic"]["sources"] = [src for src in pair["traffic"]["sources"] if src["node"] == "2"]
    assert budget._uniform_overload(pair)  # 8.5 Gb/s from node 2 into node 1's 1 Gb/s


def test_a_graph_of_256_nodes_is_searched_and_one_more_is_not(zhb: dict) -> None:
    """Up to ``_LOAD_CHECK_NODES`` nodes the link loads are computed; above, a general graph
    counts as one that may congest (a search per source would cost more than the estimate is
    worth)."""
    assert budget._LOAD_CHECK_NODES == 256
    for n, over in [(256, False), (257, True)]:
        core = _two_switches(zhb, 10**12)  # a middle link nothing can fill
        topo = core["topology"]
        extra = [f"x{i}" for i in range(n - 16)]
        topo["nodes"] = topo["nodes"] + extra
        topo["links"] += [{"a": ("S1", "S2")[i % 2], "b": name, "rate_bps": 10**10, "delay_ps": 10**6} for i, name in enumerate(extra)]
        assert budget._uniform_overload(core) is over, n


def test_the_congestion_starts_with_the_named_flows_the_overloading_sources_or_a_hotspot(zhb: dict) -> None:
    """``_congestion_start``: 0 with named flows; with a uniform overload, the first source's
    start, or the first hotspot if it comes earlier; without one, the first hotspot."""
    chain = _two_switches(zhb, 10**10)
    assert budget._congestion_start(chain) == 0
    for src in chain["traffic"]["sources"]:
        src["start_ps"] = 3 * 10**11
    assert budget._congestion_start(chain) == 3 * 10**11
    chain["hotspots"] = copy.deepcopy(zhb["hotspots"])
    assert budget._congestion_start(chain) == zhb["hotspots"][0]["start_ps"] == 10**11
    named = copy.deepcopy(zhb)
    named["traffic"]["sources"][3]["dst"] = "1"
    assert budget._congestion_start(named) == 0
    assert budget._congestion_start(zhb) == 10**11  # the star carries its uniform load
