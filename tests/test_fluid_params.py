"""How a scenario becomes the fluid model's parameters (`cnsim/fluid/params.py`, spec/algorithms.md
§11 and docs/fluid.md's parameter table): the hot flows and their groups, the service rate, the
loop delay, the hot queue's ceiling, the source's backlog cap, the sampling probability, the
gains in the model's units, DCQCN's parameters and fixed point, and the scenarios the model does
not cover. Every figure is written out from the scenario by hand."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import pytest
from cnsim import ScenarioError
from cnsim.fluid import fluid_params
from cnsim.fluid.params import fixed_point

US = 1e-6

#: one switch, four hosts: A on a 1 Gb/s link of 2 us, the others on 10 Gb/s links of 1 us; A and
#: B send to the hot node C at different rates and times, D sends to B and C sends to A (neither
#: is a hot flow)
MIXED = """
description = "fluid parameters: mixed sources into one hot node"
duration = "0.1s"
[topology]
kind = "graph"
nodes = ["A", "B", "C", "D"]
switches = ["S1"]
links = [
  { a = "S1", b = "A", rate = "1Gbps", delay = "2us" },
  { a = "S1", b = "B" },
  { a = "S1", b = "C" },
  { a = "S1", b = "D" },
]
[links]
rate = "10Gbps"
delay = "1us"
[switch]
buffer = "egress"
memory_per_port = "600KB"
pause = false
[traffic]
pattern = "none"
flows = [
  { src = "A", dst = "C", rate = "0.8Gbps", start = "10ms", stop = "50ms" },
  { src = "B", dst = "C", rate = "6Gbps", start = "20ms" },
  { src = "D", dst = "B", rate = "3Gbps" },
  { src = "C", dst = "A", rate = "1Gbps" },
]
[cm]
scheme = "bcn"
[metrics]
window = ["20ms", "50ms"]
hot_port = "S1/C"
"""


@pytest.fixture()
def mixed(tmp_path: Path) -> Path:
    path = tmp_path / "mixed.toml"
    path.write_text(MIXED)
    return path


def test_uniform_traffic_gives_every_other_node_a_hot_flow_at_its_share_of_the_load() -> None:
    """zhb: 16 nodes at 85 % of 10 Gb/s spread over 15 destinations, so each of the 15 others
    offers 0.85 × 10/15 = 0.567 Gb/s to node 1, all in one group; node 1 is served at 20 % from
    0.1 to 0.5 s (μ = 2 Gb/s, λ0 = 133 Mb/s) and at its link rate otherwise."""
    p = fluid_params("zhb-og-single-hop", {"cm.scheme": "bcn"})
    (group,) = p.groups
    assert group.flows == tuple(f"{k}->1" for k in range(2, 17)) and group.count == p.n_hot == 15
    assert group.offered_bps == pytest.approx(0.85 * 10e9 / 15, rel=1e-12) and group.line_bps == 10e9
    assert (group.start_s, group.stop_s) == (0.0, 0.6) and p.duration_s == 0.6
    assert p.link_bps == 10e9 and p.frame_bytes == 1500.0 and p.frame_bits == 12_000.0
    assert len(p.mu_windows) == 1 and p.mu_windows[0] == pytest.approx((0.1, 0.5, 0.2)) and p.hot_window_s == pytest.approx((0.1, 0.5))
    assert p.mu_bps == pytest.approx(2e9) and p.fair_bps == pytest.approx(2e9 / 15)
    assert p.window_s == pytest.approx((0.2, 0.5))
    # the loop: 1500 B at 10 Gb/s, 1 us there and back, a 64 B control frame at 10 Gb/s
    assert p.tau_s == pytest.approx(1.2 * US + 2 * US + 0.0512 * US, rel=1e-12)


def test_named_flows_group_by_rate_and_activity_and_only_flows_into_the_hot_node_count(mixed: Path) -> None:
    """A (1 Gb/s link) offers 0.8 Gb/s from 10 to 50 ms, B (10 Gb/s) 6 Gb/s from 20 ms to the
    end: two groups of one flow. D → B and C → A do not enter the hot port. Without a hotspot
    the hot port is congested where every hot flow is active (20–50 ms) and serves at its link
    rate."""
    p = fluid_params(mixed)
    a, b = p.groups
    assert (a.flows, a.offered_bps, a.line_bps, a.start_s, a.stop_s) == (("A->C",), 0.8e9, 1e9, pytest.approx(0.01), pytest.approx(0.05))
    assert (b.flows, b.offered_bps, b.line_bps, b.start_s, b.stop_s) == (("B->C",), 6e9, 10e9, pytest.approx(0.02), pytest.approx(0.1))
    assert p.mu_windows == () and p.hot_window_s == pytest.approx((0.02, 0.05))
    assert p.mu_bps == 10e9 and p.fair_bps == 5e9 and p.n_hot == 2


def test_the_loop_delay_is_averaged_over_the_hot_sources_and_follows_the_feedback_path(mixed: Path) -> None:
    """In band: the data frame's serialisation on the source link, its propagation, the way back
    and the control frame's serialisation on the source link. A: 12 us + 2 + 2 + 0.512 us;
    B: 1.2 us + 1 + 1 + 0.0512 us. Out of band, the way back is the feedback delay; a larger
    control frame takes longer."""
    a = 12 * US + 2 * US + 2 * US + 0.512 * US
    b = 1.2 * US + 1 * US + 1 * US + 0.0512 * US
    assert fluid_params(mixed).tau_s == pytest.approx((a + b) / 2, rel=1e-12)
    oob = fluid_params(mixed, {"cm.feedback": "oob", "cm.feedback_delay": "30us"})
    assert oob.tau_s == pytest.approx((12 * US + 2 * US + 30 * US + 1.2 * US + 1 * US + 30 * US) / 2, rel=1e-12)
    big = fluid_params(mixed, {"cm.cnm_size": "128B"})
    assert big.tau_s == pytest.approx((a + 0.512 * US + b + 0.0512 * US) / 2, rel=1e-12)


def test_bcn_gi_is_scaled_to_the_first_groups_link_rate(mixed: Path) -> None:
    """The contract states BCN's gi for links.rate (10 Gb/s); the hot sources' reaction points
    run at their own link rate, here A's 1 Gb/s: gi × 0.1 (the model has one gi, the first
    group's)."""
    p = fluid_params(mixed, {"cm.gi": 4e-3, "cm.gd": 1e-6})
    assert p.gi == pytest.approx(4e-4, rel=1e-12) and p.gd == 1e-6


def test_the_hot_queues_ceiling_follows_the_switch_memory() -> None:
    """zhb (16 ports of 600 KB, 5.5 KB of round-trip headroom per input, so XOFF = 594.5 KB):
    partitioned memory holds up to a partition per hot input (15 × XOFF with PAUSE, 15 × 600 KB
    without); a shared pool up to the pool's XOFF (9.6 MB less 16 × 5.5 KB) or the whole pool;
    an egress threshold is the port's memory; an output-queue limit caps any of them."""
    def buffer(**sets: object) -> float:
        return fluid_params("zhb-og-single-hop", {"cm.scheme": "bcn", **sets}).buffer_bytes

    assert buffer() == 15 * 594_500
    assert buffer(**{"switch.pause": False}) == 15 * 600_000
    assert buffer(**{"switch.buffer": "shared"}) == 16 * 600_000 - 16 * 5_500
    assert buffer(**{"switch.buffer": "shared", "switch.pause": False}) == 16 * 600_000
    assert buffer(**{"switch.buffer": "egress", "switch.pause": False}) == 600_000
    assert buffer(**{"switch.oq_limit": "100KB"}) == 100_000
    assert buffer(**{"switch.oq_limit": "20MB"}) == 15 * 594_500


def test_the_sources_backlog_cap_is_its_voq_or_its_whole_adapter_buffer() -> None:
    """Per-VOQ: the adapter's 150 KB split over the 15 destinations; shared: all 150 KB;
    unlimited: no cap (null in fluid.json)."""
    def cap(**sets: object) -> float:
        return fluid_params("zhb-og-single-hop", {"cm.scheme": "bcn", **sets}).backlog_cap_bytes

    assert cap(**{"nic.ingress": "per_voq", "nic.ingress_size": "150KB"}) == 10_000
    assert cap(**{"nic.ingress": "shared", "nic.ingress_size": "150KB"}) == 150_000
    assert cap() == math.inf
    assert fluid_params("zhb-og-single-hop", {"cm.scheme": "bcn"}).to_dict()["backlog_cap_bytes"] is None
    assert fluid_params("zhb-og-single-hop", {"cm.scheme": "bcn", "nic.ingress": "shared", "nic.ingress_size": "150KB"}).to_dict()[
        "backlog_cap_bytes"] == 150_000


@pytest.mark.parametrize(("sets", "ps"), [
    ({"cm.sampling": "random", "cm.ps": 0.03}, 0.03),
    ({"cm.sampling": "interval", "cm.sample_bytes": "60KB"}, 1500 / 60_000),
    ({"cm.sampling": "jitter", "cm.sample_bytes": "60KB"}, 1500 / 60_000),
    ({"cm.sampling": "table"}, 1500 / 150_000),
    ({"cm.sampling": "linear", "cm.pmin": 0.015}, 0.015),
])
def test_the_sampling_probability_per_frame_follows_the_sampling_rule(sets: dict[str, object], ps: float) -> None:
    """Random: ps. Interval and jitter: one frame per sample_bytes. The table: its base interval
    (150 KB, QntzFb = 0). Linear: Pmin, its probability at Fb = 0 (the equilibrium)."""
    p = fluid_params("zhb-og-single-hop", {"cm.scheme": "bcn", **sets})
    assert p.ps == pytest.approx(ps, rel=1e-12) and p.sampling == sets["cm.sampling"]
    assert p.sample_spacing_s == pytest.approx(12_000 / (ps * 2e9), rel=1e-12)


def test_bcn_fields_as_the_scenario_sets_them() -> None:
    """zhb's BCN preset, with a drift, oversampling, BCN_MAX and the gate changed."""
    p = fluid_params("zhb-og-single-hop", {"cm.scheme": "bcn"})
    assert (p.w, p.qeq, p.fbmax, p.fb_quanta) == (2.0, 150_000.0, 750_000.0, 0.0)
    assert (p.gd, p.gi, p.ru, p.rmin) == (1.6667e-6, 6.6667e-4, 10e6, 10e6)
    assert (p.oversample, p.bcn_max, p.qmc, p.negative_only_above_qeq, p.drift_bps_per_s) == (1.0, False, math.inf, False, 0.0)
    q = fluid_params("zhb-og-single-hop", {"cm.scheme": "bcn", "cm.drift_rate": "2Mbps", "cm.drift_period": "1ms",
                                           "cm.oversample_factor": 4.0, "cm.bcn_max": True, "cm.qmc": "300KB",
                                           "cm.negative_only_above_qeq": True, "cm.ru": "5Mbps", "cm.rmin": "2Mbps"})
    assert q.drift_bps_per_s == pytest.approx(2e9, rel=1e-12)  # 2 Mb/s each millisecond
    assert (q.oversample, q.bcn_max, q.qmc, q.negative_only_above_qeq, q.ru, q.rmin) == (4.0, True, 300_000.0, True, 5e6, 2e6)


def test_quantised_feedback_turns_gains_per_quantum_into_gains_per_byte() -> None:
    """With fb_bits = 6, Fb has 63 levels over Fbmax = 750 KB: a gain per quantum is × 63/750 000
    per byte of Fb; BCN's gi alike. QCN's gd too (its pmin/pmax go to the model as set)."""
    p = fluid_params("zhb-og-single-hop", {"cm.scheme": "bcn", "cm.fb_bits": 6, "cm.gd": 0.01, "cm.gi": 0.5})
    assert p.fb_quanta == 63.0
    assert p.gd == pytest.approx(0.01 * 63 / 750_000, rel=1e-12) and p.gi == pytest.approx(0.5 * 63 / 750_000, rel=1e-12)
    q = fluid_params("zhb-og-single-hop", {"cm.scheme": "qcn", "cm.fb_bits": 6, "cm.gd": 0.25, "cm.pmin": 0.02, "cm.pmax": 0.2})
    assert q.gd == pytest.approx(0.25 * 63 / q.fbmax, rel=1e-12) and (q.pmin, q.pmax) == (0.02, 0.2)


def test_qcn_fields_as_the_scenario_sets_them() -> None:
    """BC in frames (150 KB of 1500 B frames = 100), the timer, F, R_AI, the minimum decrease
    factor and the reaction point's switches."""
    p = fluid_params("zhb-og-single-hop", {"cm.scheme": "qcn", "cm.bc": "300KB", "cm.timer": "2ms", "cm.f": 3,
                                           "cm.r_ai": "20Mbps", "cm.min_dec": 0.25, "cm.hai": True, "cm.efr": True,
                                           "cm.target_update": "always"})
    assert (p.bc_frames, p.timer_s, p.f_stages, p.r_ai, p.min_dec) == (200.0, pytest.approx(2e-3), 3.0, 20e6, 0.25)
    assert p.extra == {"hai": True, "efr": True, "target_update": "always"}
    # what QCN does not have, as the shared parts read it: no oversampling, no increase gain (so
    # no AI side in the step's crossover), no BCN_MAX, no gate
    assert (p.oversample, p.gi, p.bcn_max, p.qmc, p.negative_only_above_qeq) == (1.0, 0.0, False, math.inf, False)
    d = p.to_dict()
    assert (d["bc_frames"], d["f"], d["r_ai_bps"], d["min_dec"]) == (200.0, 3.0, 20e6, 0.25) and "kmin_bytes" not in d


def test_dcqcn_fields_loop_delay_and_reference_queue() -> None:
    """The incast's DCQCN: RED 5–200 KB, Pmax 1 %, g = 1/256, α timer and T 55 us, CNP interval
    50 us, B = 10 MB (6 667 frames), F = 5, R_AI 40 Mb/s. τ* = source → CP (1.2 us + 1 us), the
    hot link to the NP (1.2 us + 1 us), and the CNP back through the switch (2 × (0.0512 us +
    1 us)); the switch's processing delay counts once each way. The reference queue is the
    fixed point's q*."""
    p = fluid_params("dcqcn-incast-2to1", {"cm.scheme": "dcqcn"})
    assert (p.sampling, p.ps, p.pmax, p.kmin, p.kmax, p.g) == ("red", 0.01, 0.01, 5e3, 200e3, 1 / 256)
    assert (p.alpha_timer_s, p.timer_s, p.cnp_interval_s) == pytest.approx((55e-6, 55e-6, 50e-6))
    assert (p.bc_frames, p.f_stages, p.r_ai, p.rmin) == (pytest.approx(1e7 / 1500), 5.0, 40e6, p.rmin)
    assert p.extra == {"alpha_init": 1.0, "mark": "dequeue"}
    tau = 2 * (1.2 * US + 1 * US) + 2 * (0.0512 * US + 1 * US)
    assert p.tau_s == pytest.approx(tau, rel=1e-12)
    assert fluid_params("dcqcn-incast-2to1", {"cm.scheme": "dcqcn", "switch.processing_delay": "3us"}).tau_s == pytest.approx(tau + 6 * US, rel=1e-12)
    oob = fluid_params("dcqcn-incast-2to1", {"cm.scheme": "dcqcn", "cm.feedback": "oob", "cm.feedback_delay": "10us"})
    assert oob.tau_s == pytest.approx(2 * (1.2 * US + 1 * US) + 10 * US, rel=1e-12)
    assert p.qeq == fixed_point(p)["queue_bytes"] and 5e3 < p.qeq < 200e3
    assert p.window_s == pytest.approx((0.05, 0.2), rel=1e-12)
    d = p.to_dict()
    assert (d["kmin_bytes"], d["kmax_bytes"], d["pmax"], d["cnp_interval_s"]) == (5e3, 200e3, 0.01, pytest.approx(50e-6))
    assert "min_dec" not in d
    with pytest.raises(ScenarioError, match='cm.rp = "nic"'):
        fluid_params("dcqcn-incast-2to1", {"cm.scheme": "dcqcn", "cm.rp": "nic"})


def test_dcqcn_loop_delay_runs_through_each_sources_own_link(mixed: Path) -> None:
    """τ* on the mixed topology: A's frame crosses its 1 Gb/s, 2 us link (12 us + 2 us), the hot
    link (1.2 us + 1 us) and A's CNP comes back over the hot link (0.0512 us + 1 us) and A's link
    (0.512 us + 2 us); B's path is all 10 Gb/s and 1 us. The model takes their mean."""
    p = fluid_params(mixed, {"cm.scheme": "dcqcn"})
    a = 12 * US + 2 * US + 1.2 * US + 1 * US + 0.0512 * US + 1 * US + 0.512 * US + 2 * US
    b = 2 * (1.2 * US + 1 * US) + 2 * (0.0512 * US + 1 * US)
    assert p.tau_s == pytest.approx((a + b) / 2, rel=1e-12)


def test_dcqcn_fixed_point_edges() -> None:
    """q* reads RED backwards: Kmin + p*/Pmax·(Kmax − Kmin) inside the band; Kmax when p* ≥ Pmax
    (the queue sits at the profile's step) or when the profile is a step (Kmax = Kmin); 0 when a
    hot flow offers less than the fair share (no congestion)."""
    p = fluid_params("dcqcn-incast-2to1", {"cm.scheme": "dcqcn"})
    fx = fixed_point(p)
    assert fx["queue_bytes"] == pytest.approx(5e3 + fx["mark_probability"] / 0.01 * 195e3, rel=1e-12)
    assert fx["limited"] and fx["rate_bps"] == 5e9
    assert fx["cnp_per_s"] > 0 and 0 < fx["alpha"] < 1 and fx["target_gap_bps"] > 0
    low = replace(p, pmax=fx["mark_probability"] / 2)
    assert fixed_point(low)["queue_bytes"] == 200e3
    step = replace(p, kmin=200e3)
    assert fixed_point(step)["queue_bytes"] == 200e3
    (group,) = p.groups
    calm = replace(p, groups=(replace(group, offered_bps=4e9),))
    assert fixed_point(calm)["queue_bytes"] == 0.0 and fixed_point(calm)["limited"] is False
    exact = replace(p, groups=(replace(group, offered_bps=5e9),))  # offering exactly the fair share
    assert fixed_point(exact)["queue_bytes"] == 0.0 and fixed_point(exact)["limited"] is False


def test_with_keeps_the_derived_set_points_in_step() -> None:
    """A new w or Qeq moves Fbmax = (2w + 1)·Qeq unless Fbmax is given too; other changes keep
    it. DCQCN's reference queue is recomputed as the fixed point unless qeq is given."""
    p = fluid_params("kd-symmetric-single-hs", {"cm.scheme": "bcn"})
    assert p.with_(w=4.0).fbmax == 9 * 150_000
    assert p.with_(qeq=100_000.0).fbmax == 5 * 100_000
    assert p.with_(w=4.0, fbmax=1.0).fbmax == 1.0
    assert p.with_(tau_s=1e-3).fbmax == p.fbmax == 5 * 150_000
    d = fluid_params("dcqcn-incast-2to1", {"cm.scheme": "dcqcn"})
    moved = d.with_(kmax=400e3)
    assert moved.qeq == fixed_point(moved)["queue_bytes"] != d.qeq
    assert d.with_(kmax=400e3, qeq=1.0).qeq == 1.0


@pytest.mark.parametrize(("scenario", "sets", "needle"), [
    ("zhb-ft-3stage", {"cm.scheme": "bcn"}, "single-switch scenarios (one congestion point); this one has a fat tree"),
    ("zhb-og-multi-hop", {"cm.scheme": "bcn"}, "this one has 5 switches"),
    ("zhb-sweeping-hotspot", {"cm.scheme": "bcn"}, "hotspot moves between nodes"),
    ("zhb-og-single-hop", {"cm.scheme": "bcn", "hotspots": [{"node": "1", "rate": 0.2, "start": "0.1s", "end": "0.2s"},
                                                            {"node": "2", "rate": 0.2, "start": "0.3s", "end": "0.4s"}]},
     "hotspot moves between nodes"),
    ("zhb-og-single-hop", {"cm.scheme": "bcn", "metrics.hot_port": "S1/9", "traffic.pattern": "none", "traffic.load": 0,
                           "traffic.flows": [{"src": "2", "dst": "3", "rate": "1Gbps"}], "hotspots": []},
     "no traffic is sent to the hot node '9'"),
    ("zhb-og-single-hop", {"cm.scheme": "bcn", "hotspots": [{"node": "1", "rate": 0.2, "start": "0.1s", "end": "0.2s"},
                                                            {"node": "1", "rate": 0.5, "start": "0.3s", "end": "0.4s"}]},
     "at most one hotspot window"),
    ("zhb-og-single-hop", {"cm.scheme": "bcn", "hotspots.0.rate": 0.0}, "a hotspot rate of 0 has no fluid equilibrium"),
    ("kd-symmetric-single-hs", {"cm.scheme": "bcn", "traffic.flows.0.start": "0.3s", "traffic.flows.1.start": "0.3s",
                                "traffic.flows.2.start": "0.3s", "traffic.flows.3.start": "0.3s", "duration": "0.3s",
                                "metrics.window": "run"},
     "duration = 0.3 s ends before its hot flows all run (0.3 s)"),
])
def test_what_the_fluid_model_does_not_cover_is_refused_with_the_reason(scenario: str, sets: dict[str, object], needle: str) -> None:
    with pytest.raises(ScenarioError) as err:
        fluid_params(scenario, sets)
    assert needle in str(err.value)


def test_a_parameter_that_is_not_finite_is_refused_with_its_key() -> None:
    """A ceiling may be infinite (no buffer limit, no backlog cap, no BCN_MAX threshold); any
    other field must be finite. DCQCN samples through RED, so Pmax = 0 is its own case (nothing
    marked below Kmax: no sample spacing) and not refused here."""
    from cnsim.fluid.params import _fluid_limits

    p = fluid_params("kd-symmetric-single-hs", {"cm.scheme": "bcn"})
    assert _fluid_limits("x", replace(p, buffer_bytes=math.inf, backlog_cap_bytes=math.inf, qmc=math.inf)).qmc == math.inf
    with pytest.raises(ScenarioError, match=r"x: cm.w: the fluid model's w = inf is not a finite number"):
        _fluid_limits("x", replace(p, w=math.inf))
    with pytest.raises(ScenarioError, match=r"the scenario keys behind mu_windows|buffer_bytes = -inf"):
        _fluid_limits("x", replace(p, buffer_bytes=-math.inf))
    with pytest.raises(ScenarioError, match=r"the scenario keys behind frame_bytes: the fluid model's frame_bytes = nan"):
        _fluid_limits("x", replace(p, frame_bytes=math.nan))
    d = fluid_params("dcqcn-incast-2to1", {"cm.scheme": "dcqcn", "cm.pmax": 0.0})
    assert d.ps == 0.0 and d.sample_spacing_s == math.inf
    with pytest.raises(ScenarioError, match="cm.ps = 0"):
        _fluid_limits("x", replace(p, ps=0.0))
    with pytest.raises(ScenarioError, match='cm.pmin = 0 with cm.sampling = "linear"'):
        _fluid_limits("x", replace(p, ps=0.0, sampling="linear"))
    qcn = fluid_params("kd-symmetric-single-hs", {"cm.scheme": "qcn"})
    assert _fluid_limits("x", replace(qcn, gd=1.0, gi=0.0)).gi == 0.0  # QCN has no gi


def test_to_dict_reports_the_figures_the_model_uses() -> None:
    p = fluid_params("zhb-og-single-hop", {"cm.scheme": "bcn"})
    d = p.to_dict()
    assert d["scenario"] == "zhb-og-single-hop" and d["scheme"] == "bcn" and d["n_hot"] == 15
    assert d["offered_gbps"] == [pytest.approx(0.85 * 10 / 15, rel=1e-12)]
    assert (d["mu_gbps"], d["fair_share_gbps"]) == (pytest.approx(2.0, rel=1e-12), [pytest.approx(2 / 15, rel=1e-12)])
    assert d["equal_share_gbps"] == pytest.approx(2 / 15, rel=1e-12)  # every flow offers more than μ/N_h: the same
    assert (d["frame_bytes"], d["tau_s"], d["buffer_bytes"], d["w"], d["qeq_bytes"], d["ps"]) == (1500.0, p.tau_s, 15 * 594_500, 2.0, 150_000.0, 0.02)
    assert (d["sampling"], d["sample_spacing_s"], d["gd_per_byte"], d["gi_per_byte"]) == ("random", pytest.approx(3e-4), 1.6667e-6, 6.6667e-4)
    assert (d["ru_bps"], d["rmin_bps"], d["hot_window_s"]) == (10e6, 10e6, [pytest.approx(0.1), 0.5])
    assert "bc_frames" not in d and "kmin_bytes" not in d


def test_to_dict_reports_the_max_min_share_of_each_group() -> None:
    # zhb-ig-single-hop: 11 light flows offer 0.567 Gb/s, under μ/N_h = 10/15 = 0.667: they keep
    # their offer and the 4 heavy ones share the rest, 0.942 each (targets.md B1); fluid.json gave
    # 0.667 as the fair share, nobody's share (fluid audit F6/F9)
    d = fluid_params("zhb-ig-single-hop", {"cm.scheme": "bcn"}).to_dict()
    assert d["offered_gbps"] == [pytest.approx(0.85 * 10 / 15, rel=1e-12), pytest.approx(8.5, rel=1e-12)]
    assert d["fair_share_gbps"] == [pytest.approx(0.85 * 10 / 15, rel=1e-12), pytest.approx((10 - 11 * 0.85 * 10 / 15) / 4, rel=1e-12)]
    assert d["equal_share_gbps"] == pytest.approx(10 / 15, rel=1e-12)
