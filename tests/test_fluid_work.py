"""What a fluid integration will cost, estimated before it starts (`cnsim/fluid/work.py`,
docs/fluid.md "Solver"): the step and what sets it, the steps, the delay history, the records,
the memory, the work and the refusals. The figures are worked out here from kd's and the
incast's parameters; the refusals end to end are in test_report_fluid_s30.py."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest
from cnsim.errors import ResourceError
from cnsim.fluid import fluid_params, work
from cnsim.fluid.stability import crossover


@pytest.fixture(scope="module")
def kd():
    return fluid_params("kd-symmetric-single-hs", {"cm.scheme": "bcn"})


def test_bcn_step_candidates_on_kd(kd) -> None:
    """kd's BCN: L = 12 000 bit, λ0 = 2.5 Gb/s, 4 flows, p_s = 0.02, Gd = 0.5/Fbmax, Gi =
    0.1·(C/Ru)/Fbmax per byte with Fbmax = 750 KB. K_MD = p_s·Gd·λ0²·N/(8L) = 3.472e6 s⁻²,
    K_AI = p_s·Gi·Ru·λ0·N/(8L) = 2.778e6 s⁻², T_w = W·Δ = 2 × 60 us: the MD side crosses over
    at 1887 rad/s, so 1/(20·ω_c) = 26.5 us. Half the sampling interval is 30 us, a thousandth of
    the 0.2 s window 200 us, and the fastest decrease, 8 333 messages a second at the offered
    5 Gb/s each cutting ln(1/(1 − 0.5)), gives 173 us."""
    (c_wc, why_wc), (c_spacing, why_spacing), (c_window, why_window), (c_rate, why_rate) = work.step_limits(kd)
    k_md = 0.02 * (0.5 / 750e3) * 2.5e9**2 * 4 / 96e3
    k_ai = 0.02 * (0.1 * 1e4 / 750e3) * 1e6 * 2.5e9 * 4 / 96e3
    assert k_md == pytest.approx(3.4722e6, rel=1e-4) and k_ai == pytest.approx(2.7778e6, rel=1e-4)
    wc = float(crossover(k_md, 1.2e-4))
    assert wc == pytest.approx(1886.8, rel=1e-4) and wc > float(crossover(k_ai, 1.2e-4))
    assert c_wc == pytest.approx(1 / (20 * wc), rel=1e-9) and "ω_c = 1887 rad/s" in why_wc and "cm.gd, cm.gi, cm.ps" in why_wc
    assert c_spacing == pytest.approx(3e-5, rel=1e-12) and "Δ = L/(p_s·μ) = 6e-05 s" in why_spacing
    assert c_window == pytest.approx(2e-4, rel=1e-12) and "(0.2 s)" in why_window
    assert c_rate == pytest.approx(1 / (0.02 * 5e9 / 12e3 * math.log(2)), rel=1e-9) and "1/5776 per s" in why_rate


def test_qcn_decreases_at_least_once_per_message_and_samples_at_up_to_pmax() -> None:
    """QCN on kd samples by the table, up to Pmax = 10 % of frames: 41 667 messages a second at
    5 Gb/s. Each cuts less than ln 2 (Gd·Fbmax = 0.49), but the rate is counted as at least one
    e-fold per message: 24 us. No ω_c can come from gi (QCN has none)."""
    q = fluid_params("kd-symmetric-single-hs", {"cm.scheme": "qcn"})
    assert q.sampling == "table" and q.gd * q.fbmax == pytest.approx(0.4921875)
    limits = work.step_limits(q)
    assert limits[3][0] == pytest.approx(12e3 / (0.1 * 5e9), rel=1e-9)
    assert "cm.gd, cm.ps)" in limits[0][1] and "cm.gi" not in limits[0][1]
    assert work.estimate([q], t_start=0.0, t_end=0.2).h == pytest.approx(2.4e-5, rel=1e-9)


def test_a_short_hot_window_sets_the_step_to_a_thousandth_of_it_but_never_under_a_microsecond(kd) -> None:
    """A window of 50 ms gives 50 us; one of 100 us would give 100 ns but the floor is 1 ms/1000."""
    (group,) = kd.groups
    assert work.step_limits(replace(kd, groups=(replace(group, stop_s=0.05),)))[2][0] == pytest.approx(5e-5, rel=1e-12)
    assert work.step_limits(replace(kd, groups=(replace(group, stop_s=1e-4),)))[2][0] == pytest.approx(1e-6, rel=1e-12)


def test_without_decrease_gain_there_is_no_decrease_candidate(kd) -> None:
    limits = work.step_limits(replace(kd, gd=0.0))
    assert len(limits) == 3
    # the AI side still crosses over: K_AI alone sets ω_c
    assert limits[0][0] == pytest.approx(1 / (20 * float(crossover(2.7778e6, 1.2e-4))), rel=1e-4)
    no_gain = work.step_limits(replace(kd, gd=0.0, gi=0.0))
    assert no_gain[0][0] == pytest.approx(1 / (20 * float(crossover(1e-9, 1.2e-4))), rel=1e-9)


def test_the_estimate_of_kd(kd) -> None:
    """h = 26.5 us over 0.2 s: 7 548 steps; the delay history τ/h + 3 = 3.35 states; a record
    every round(100 us/h) = 4 steps from t = 0: 1 888; three state variables (q, λ, backlog);
    memory 2·8·n·history + (8·(2n + 3G + 4) + 600 + 100·(3 + 3G)) per record; the work is the
    steps, × (1 + points·state/4000), plus 0.05 a record, and the wall time 1.5 ms a unit."""
    est = work.estimate([kd], t_start=0.0, t_end=0.2)
    h = 1 / (20 * float(crossover(0.02 * (0.5 / 750e3) * 2.5e9**2 * 4 / 96e3, 1.2e-4)))
    assert est.h == pytest.approx(h, rel=1e-12) and est.limit.startswith("1/(20·ω_c)")
    assert (est.scheme, est.points, est.state, est.t_start, est.t_end) == ("bcn", 1, 3, 0.0, 0.2)
    assert est.steps == math.ceil(0.2 / h) == 7548
    assert est.history == pytest.approx(kd.tau_s / h + 3.0, rel=1e-12)
    assert est.records == 7548 / 4 + 1 == 1888
    assert est.memory_bytes == pytest.approx(2 * 8 * 3 * est.history + (8 * (6 + 3 + 4) + 600 + 100 * 6) * 1888, rel=1e-12)
    assert est.work == pytest.approx(7548 * (1 + 3 / 4000) + 0.05 * 1888, rel=1e-12)
    assert est.wall_s == pytest.approx(est.work * 1.5e-3, rel=1e-12)


def test_a_late_start_records_the_constant_state_before_it_and_a_grid_counts_its_points(kd) -> None:
    """From t = 1/16 s to 1/4 s with a given step of 2⁻¹⁶ s (all exact in binary): 12 288 steps,
    a record every round(100 us/h) = 7 steps plus the 625 records of the quiet 62.5 ms before;
    four grid points of clamped sources (two state variables each) weigh each step
    1 + 4·2/4000, and the history holds the longest loop."""
    h = 2.0**-16
    grid = [kd, kd, replace(kd, tau_s=50e-6), kd]
    est = work.estimate(grid, t_start=0.0625, t_end=0.25, h=h, sources="clamp")
    assert (est.h, est.limit, est.points, est.state) == (h, "given", 4, 2)
    records = 625 + 12_288 / 7 + 1
    assert est.steps == 12_288 and est.records == pytest.approx(records, rel=1e-12)
    assert est.history == pytest.approx(50e-6 / h + 3.0, rel=1e-12)
    assert est.work == pytest.approx(12_288 * (1 + 4 * 2 / 4000) + 0.05 * records, rel=1e-12)
    assert est.memory_bytes == pytest.approx(2 * 8 * 4 * 2 * est.history + (8 * 4 * (4 + 3 + 4) + 600 + 600) * records, rel=1e-12)
    # a step longer than a record interval records every step; an empty span has no steps
    assert work.estimate([kd], t_start=0.0, t_end=0.2, h=4e-4).records == 500 + 1
    assert work.estimate([kd], t_start=0.3, t_end=0.2, h=1e-5).steps == 0


def test_a_zero_or_endless_step_is_an_estimate_without_end(kd) -> None:
    for h in (0.0, math.inf, math.nan):
        est = work.estimate([kd], t_start=0.0, t_end=0.2, h=h)
        assert est.steps == math.inf and est.history == math.inf
    assert work.estimate([kd], t_start=0.0, t_end=0.2, h=1e-300).steps == math.ceil(0.2 / 1e-300)
    assert work.estimate([kd], t_start=0.0, t_end=1e300, h=1e-300).steps == math.inf


def test_state_variables_per_scheme_and_source_model() -> None:
    """q, and per flow group: BCN λ; QCN R_C, R_T; DCQCN R_C, R_T, α; plus the backlog."""
    assert work.state_size("bcn", 1, "backlog") == 3 and work.state_size("bcn", 1, "clamp") == 2
    assert work.state_size("qcn", 2, "backlog") == 7 and work.state_size("qcn", 2, "clamp") == 5
    assert work.state_size("dcqcn", 3, "backlog") == 13 and work.state_size("dcqcn", 3, "clamp") == 10


def test_dcqcn_steps_a_tenth_of_its_fastest_timer() -> None:
    """The incast: CNP interval 50 us, α timer and T 55 us: 5 us; the window's thousandth 200 us."""
    d = fluid_params("dcqcn-incast-2to1", {"cm.scheme": "dcqcn"})
    (timers, why), (window, _) = work.dcqcn_step_limits(d)
    assert timers == pytest.approx(5e-6, rel=1e-12) and "(5e-05 s)" in why and window == pytest.approx(2e-4, rel=1e-12)
    est = work.estimate([d], t_start=0.0, t_end=0.2)
    assert est.h == pytest.approx(5e-6, rel=1e-12) and est.state == 5 and est.limit.startswith("a tenth")
    assert work.dcqcn_step_limits(replace(d, timer_s=20e-6))[0][0] == pytest.approx(2e-6, rel=1e-12)
    assert work.dcqcn_step_limits(replace(d, alpha_timer_s=10e-6))[0][0] == pytest.approx(1e-6, rel=1e-12)


def test_describe_says_what_sets_the_step_and_the_totals(kd) -> None:
    one = work.estimate([kd], t_start=0.0, t_end=0.2).describe()
    assert one.startswith("7,548 steps of h = 2.65e-05 s over 0.2 s (3 state variables; h is 1/(20·ω_c)")
    assert "3 states of delay history, 1,888 recorded states; about 11.5 s at ~1.5 ms a step and 2.3 MiB of memory" in one
    many = work.estimate([kd] * 3, t_start=0.0, t_end=1e6).describe()
    assert many.startswith("3.77e+10 steps of h = 2.65e-05 s over 1e+06 s (3 grid points × 3 state variables;")
    two = work.estimate([kd] * 2, t_start=0.05, t_end=0.2).describe()
    assert two.startswith("5,661 steps of h = 2.65e-05 s over 0.15 s (2 grid points × 3 state variables;")
    # counts read with thousands separators below ten million, in three figures from there
    assert (work._count(9_999_999.0), work._count(1e7)) == ("9,999,999", "1e+07")


def test_oversampling_speeds_up_the_fastest_decrease(kd) -> None:
    """BCN samples up to p_s × the oversampling factor: with 4 × kd's 2 %, 33 333 messages a
    second, and the decrease candidate is a quarter of kd's 173 us."""
    assert work.step_limits(replace(kd, oversample=4.0))[3][0] == pytest.approx(work.step_limits(kd)[3][0] / 4, rel=1e-12)


def test_check_refuses_work_or_memory_and_says_both(kd) -> None:
    """Over 1e6 units of work, or over 80 % of the machine's memory; both reasons are given when
    both hold, and a machine whose memory is unknown (0) is not held to the memory bound."""
    ok = work.estimate([kd], t_start=0.0, t_end=0.2)
    assert work.check(ok, memory=10**12) is ok
    assert work.check(ok, memory=0) is ok
    assert work.check(ok, memory=math.ceil(ok.memory_bytes / 0.8) + 1) is ok
    with pytest.raises(ResourceError, match="memory would exceed 80% of this machine's") as err:
        work.check(ok, memory=int(ok.memory_bytes / 0.8) - 1, what="kd")
    assert str(err.value).startswith("kd: the bcn fluid model was refused before it started: its memory")
    big = work.estimate([kd], t_start=0.0, t_end=1e6)
    with pytest.raises(ResourceError) as err:
        work.check(big, memory=1000, force_hint="say --force")
    text = str(err.value)
    assert "more than 1e+06 steps (~25 min) and its memory would exceed" in text and text.endswith("say --force.")
    edge = work.FluidEstimate(**{**ok.__dict__, "steps": 1e6, "records": 0.0, "points": 0})
    assert edge.work == 1e6 and work.check(edge, memory=0) is edge  # the bound itself is allowed
    full = work.FluidEstimate(**{**ok.__dict__, "memory_bytes": 800.0})
    assert work.check(full, memory=1000) is full  # exactly 80 % of the machine is allowed
    over = work.FluidEstimate(**{**ok.__dict__, "steps": 1e6 + 1, "records": 0.0, "points": 0})
    with pytest.raises(ResourceError, match="more than 1e\\+06 steps"):
        work.check(over, memory=0)


def test_the_windows_candidate_is_their_length_wherever_they_start() -> None:
    """zhb's hotspot runs 0.1–0.5 s: 0.4 ms; the incast's flows started at 50 ms: 0.15 ms."""
    zhb = fluid_params("zhb-og-single-hop", {"cm.scheme": "bcn"})
    value, why = work.step_limits(zhb)[2]
    assert value == pytest.approx(4e-4, rel=1e-9) and "(0.4 s)" in why
    d = fluid_params("dcqcn-incast-2to1", {"cm.scheme": "dcqcn"})
    (group,) = d.groups
    value, why = work.dcqcn_step_limits(replace(d, groups=(replace(group, start_s=0.05),)))[1]
    assert value == pytest.approx(1.5e-4, rel=1e-9) and "(0.15 s)" in why


def test_memory_per_record_grows_with_the_flow_groups(kd) -> None:
    """Two groups of BCN flows with backlog: five state variables, and a record of
    8·(2·5 + 3·2 + 4) bytes of numbers, 600 of overhead and 100·(3 + 3·2) of table rows."""
    (group,) = kd.groups
    two = replace(kd, groups=(replace(group, flows=group.flows[:1]), replace(group, flows=group.flows[1:])))
    est = work.estimate([two], t_start=0.0, t_end=0.2)
    assert est.state == 5
    assert est.memory_bytes == pytest.approx(2 * 8 * 5 * est.history + (8 * 20 + 600 + 900) * est.records, rel=1e-12)


def test_a_tiny_sampling_probability_gives_a_finite_crossover_where_p_s_cancels(kd) -> None:
    """K ∝ p_s and T_w ∝ 1/p_s, so at p_s = 1e-300 ω_c is close to K·T_w = Gd·λ0²·N·W/(8·μ), in
    which p_s cancels (416.7 rad/s on kd). `step_limits` raised K to at least 1e-9 (meant for
    QCN's K_AI = 0), so K·T_w² overflowed, ω_c was infinite (h = 0), and the refusal told the
    user to make the gains smaller. A K of 0 still takes the floor; the closed form itself is
    unchanged, bit for bit."""
    tiny = replace(kd, ps=1e-300)
    (h_wc, _), *_ = work.step_limits(tiny)
    k_md = 1e-300 * (0.5 / 750e3) * 2.5e9**2 * 4 / 96e3
    t_w = 2 * 12e3 / (1e-300 * 10e9)
    assert h_wc == pytest.approx(1 / (20 * k_md * t_w), rel=1e-12) and k_md * t_w == pytest.approx(416.67, rel=1e-4)
    assert work.estimate([tiny], t_start=0.0, t_end=0.2).h > 0
    # the finite closed form is untouched: the same bits as before
    K, T = 3.4722e6, 1.2e-4
    x = K * T * T
    assert float(crossover(K, T)) == math.sqrt(K) * math.sqrt((x + math.hypot(x, 2.0)) / 2.0)


def test_where_k_t_squared_overflows_the_crossover_is_k_t_without_a_warning() -> None:
    """K·T_w² beyond the floats (K = 1e200, T_w = 1e60) while ω_c ≈ K·T_w = 1e260 is finite: the
    fallback gives it, and the overflow of x = K·T_w² on the way warns nothing (pytest makes a
    RuntimeWarning an error; x was computed outside the errstate that silences it)."""
    assert float(crossover(1e200, 1e60)) == pytest.approx(1e260, rel=1e-12)
    # a gain below 1 overflows K·T_w² too (T_w = 1e200): the fallback is for every positive gain
    assert float(crossover(0.5, 1e200)) == pytest.approx(5e199, rel=1e-12)


def test_the_k_t_fallback_is_only_for_positive_gains() -> None:
    """The closed form has no crossover for a negative gain (NaN, as before the K·T_w fallback),
    not a negative frequency K·T_w."""
    assert math.isnan(float(crossover(-1.0, 1.0)))
    assert math.isnan(float(crossover(-1.0, 1e200)))
    assert float(crossover(0.0, 1.0)) == 0.0
