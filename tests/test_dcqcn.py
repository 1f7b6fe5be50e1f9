"""Issue 15, item 1: DCQCN (algorithms.md §7) through the whole tool — the scheme's keys, the
`dcqcn-nic` preset (§7.4), the 2-to-1 incast it must settle (5 Gb/s each, the queue in the RED
band), its fluid model (§11.3) against the packet run, and the properties that tie the three
roles together: without marks nothing happens, and every CNP answers a mark."""

from __future__ import annotations

import cnsim
import pytest
from cnsim.scenario import load

pytest.importorskip("cnsim._core")

INCAST = "dcqcn-incast-2to1"


def _run(scheme: str = "dcqcn", **overrides: object) -> dict:
    return cnsim.run(INCAST, set={"cm.scheme": scheme, **overrides}).summary


def test_the_incast_converges_to_the_fair_share_with_the_queue_in_the_red_band() -> None:
    s = _run()
    flows = s["throughput_gbps"]["per_flow"]
    assert set(flows) == {"H1->H3", "H2->H3"}
    for rate in flows.values():
        assert rate == pytest.approx(5.0, rel=0.10)
    assert s["throughput_gbps"]["hot_port"] == pytest.approx(10.0, rel=0.02)
    q = s["queue_bytes"]["hot"]
    assert 5_000 < q["mean"] < 200_000, q  # Kmin < mean < Kmax
    assert s["drops"]["frames"] == 0
    assert s["cm"]["frames"] > 0  # CNPs travelled back


def test_the_nic_preset_lowers_to_the_engine_scheme_with_its_own_constants() -> None:
    core = load(INCAST).set_many({"cm.scheme": "dcqcn-nic"}).lower()
    cm = core["cm"]
    assert cm["scheme"] == "dcqcn" and cm["rp"] == "nic"
    # HPCC's per-speed table as 32 us / 128 us of the link: 40 KB / 160 KB at 10 Gb/s
    assert (cm["kmin"], cm["kmax"], cm["pmax"]) == (40_000, 160_000, 0.2)
    assert (cm["cnp_interval_ps"], cm["alpha_timer_ps"], cm["timer_ps"], cm["f"]) == (4_000_000, 1_000_000, 900_000_000, 1)
    s = _run("dcqcn-nic")
    assert s["scheme"] == "dcqcn-nic"
    for rate in s["throughput_gbps"]["per_flow"].values():
        assert rate == pytest.approx(5.0, rel=0.10)


def test_the_nic_preset_scales_its_thresholds_to_each_port() -> None:
    """dcqcn-nic's Kmin/Kmax are 32 / 128 us of a link ([CODE:hpcc]'s table per link speed): on
    an incast into a 1 Gb/s link of a 10 Gb/s network the hot queue settles in that port's band,
    4-16 KB, not in the 40-160 KB of a 10 Gb/s port, which it keeps with cm.k_scale = "fixed".
    The default dcqcn marks every port at the same bytes and lowers no rate for them."""
    slow = {
        "topology.kind": "graph",
        "topology.switches": ["S1"],
        "topology.links": [{"a": "S1", "b": "H1"}, {"a": "S1", "b": "H2"}, {"a": "S1", "b": "H3", "rate": "1Gbps"}],
        "cm.scheme": "dcqcn-nic",
        "duration": "60ms",
        "metrics.window": ["30ms", "60ms"],
    }
    core = load(INCAST).set_many(slow).lower()["cm"]
    assert (core["kmin"], core["kmax"], core["k_rate_bps"]) == (40_000, 160_000, 10_000_000_000)
    assert "k_rate_bps" not in load(INCAST).set_many({"cm.scheme": "dcqcn"}).lower()["cm"]
    scaled = cnsim.run(load(INCAST).set_many(slow)).summary
    fixed = cnsim.run(load(INCAST).set_many({**slow, "cm.k_scale": "fixed"})).summary
    assert 4_000 < scaled["queue_bytes"]["hot"]["mean"] < 16_000, scaled["queue_bytes"]
    assert 40_000 < fixed["queue_bytes"]["hot"]["mean"] < 160_000, fixed["queue_bytes"]
    assert scaled["drops"]["frames"] == fixed["drops"]["frames"] == 0


def test_without_marks_dcqcn_changes_nothing() -> None:
    """Kmin above the largest queue the switch can hold: no frame is marked, no CNP is sent, no
    limiter exists — the run is the uncontrolled one, frame for frame."""
    quiet = _run(**{"cm.kmin": "10MB", "cm.kmax": "10MB"})
    none = _run("none")
    assert quiet["cm"]["frames"] == 0
    for key in ("throughput_gbps", "queue_bytes", "drops", "pause_frames", "latency_us"):
        assert quiet[key] == none[key], key


@pytest.mark.parametrize(
    "overrides",
    [{"cm.cnp_mode": "poll"}, {"cm.mark": "enqueue"}, {"cm.phase_rule": "joint"}, {"cm.clamp_target": False}],
)
def test_the_variants_settle_the_incast_too(overrides: dict[str, object]) -> None:
    s = _run(**overrides)
    for rate in s["throughput_gbps"]["per_flow"].values():
        assert rate == pytest.approx(5.0, rel=0.15)
    assert s["cm"]["frames"] > 0


def test_the_cnp_rate_is_bounded_by_the_np_interval() -> None:
    """At most one CNP per flow per 50 us (§7.2): 2 flows × 0.2 s / 50 us = 8,000 CNPs at most."""
    s = _run()
    assert 0 < s["cm"]["frames"] <= 2 * 0.2 / 50e-6
    tight = _run(**{"cm.cnp_interval": "1ms"})
    assert tight["cm"]["frames"] <= 2 * 0.2 / 1e-3


def test_bad_dcqcn_values_are_named() -> None:
    with pytest.raises(cnsim.ScenarioError, match="cm.pmax"):
        _run(**{"cm.pmax": 2})
    with pytest.raises(cnsim.ScenarioError, match="kmax"):
        _run(**{"cm.kmin": "300KB", "cm.kmax": "200KB"})


def test_fluid_model_and_packet_run_agree_on_queue_and_period() -> None:
    """Issue 15's criterion: mean queue within 20 % and the same period (the onset ringing of
    the queue, 3.8 ms on this loop)."""
    from cnsim.fluid.report import fluid_study

    study = fluid_study(INCAST, {"cm.scheme": "dcqcn"}, compare=True)
    cmp = study.summary["compare"]
    assert abs(cmp["queue_mean_rel_diff"]) < 0.20
    assert cmp["period_ratio_fluid_over_packet"] == pytest.approx(1.0, abs=0.2)
    # the fixed point of §11.3 is where the fluid queue settles
    eq = study.summary["equilibrium"]
    assert study.summary["fluid"]["queue_mean_bytes"] == pytest.approx(eq["queue_bytes"], rel=0.05)
    assert eq["rate_bps"] == 5e9 and 0 < eq["mark_probability"] < 0.01


def test_a_flow_released_at_line_rate_keeps_its_alpha() -> None:
    """A QP's rate state lives as long as the QP (§1.4): H1's limiter, released at line rate after
    H2 stops at 3 ms, is re-created when H4 starts at 14.5 ms, and its first CNP then cuts RC to
    line·(1 − α/2) with the α it kept (decayed on its timer), not with a fresh α = 1, which would
    cut it to exactly 5 Gb/s (the rate series is recorded at every 1 us, so the first value after
    the gap is that first cut)."""
    flows = cnsim.scenario.parse_set_value(
        '[{src = "H1", dst = "H3", rate = "10Gbps"}, {src = "H2", dst = "H3", rate = "10Gbps", stop = "3ms"},'
        ' {src = "H4", dst = "H3", rate = "10Gbps", start = "14.5ms"}]'
    )
    r = cnsim.run(INCAST, set={"cm.scheme": "dcqcn", "topology.nodes": ["H1", "H2", "H3", "H4"], "traffic.flows": flows,
                               "duration": "16ms", "metrics.bin": "1us", "metrics.window": [0.0, 0.016]})
    t = [(x["t_s"], x["gbps"]) for x in r.series("rates").to_pylist() if x["flow"] == "H1->H3"]
    gaps = [(a, b) for a, b in zip(t, t[1:], strict=False) if b[0] - a[0] > 1.5e-6]
    assert len(gaps) == 1, gaps  # released once, limited again once
    (released_at, last), (again_at, first) = gaps[0]
    # the last rate recorded is the step before the one that reached the line rate and released it
    assert 3e-3 < released_at < 14.5e-3 < again_at and 9.9 < last <= 10.0
    assert 5.5 < first < 10.0, first  # α < 0.9: kept and decayed (≈ 0.38 here)
