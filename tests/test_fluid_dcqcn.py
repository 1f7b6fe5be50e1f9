"""The DCQCN fluid model (spec/algorithms.md §11.3, docs/fluid.md "DCQCN"): the RED profile it
reads, its fixed point against the section's worked example and equations, the integrated model
against its own linearisation (settling along the slowest mode; a long loop oscillating), and its
equations where nothing is marked, checked step by step. Its agreement with the packet run is in
test_dcqcn.py."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
from cnsim.fluid import FluidParams, dcqcn_linear, fluid_params, simulate
from cnsim.fluid.analysis import window_mask
from cnsim.fluid.dcqcn import red
from cnsim.fluid.params import fixed_point

INCAST = "dcqcn-incast-2to1"


def _fluid(**overrides: object) -> FluidParams:
    return fluid_params(INCAST, {"cm.scheme": "dcqcn", **overrides})


def test_red_marks_nothing_to_kmin_linearly_to_pmax_at_kmax_and_everything_above() -> None:
    """§7.1's profile as the fluid model reads it; with Kmax = Kmin it is a step from 0 to 1."""
    q = np.array([0.0, 5e3, 102.5e3, 200e3, 200e3 + 1e-6, 1e6])
    assert red(q, 5e3, 200e3, 0.01).tolist() == [0.0, 0.0, 0.005, 0.01, 1.0, 1.0]
    assert red(np.array([4e3, 5e3, 5e3 + 1e-6]), 5e3, 5e3, 0.01).tolist() == [0.0, 0.0, 1.0]


def test_the_fixed_point_of_the_worked_example_solves_equations_1_to_3() -> None:
    """§11.3's example: 40 Gb/s, 2 flows of 1000-byte frames (R* = 2.5 Mpkt/s), R_AI = 40 Mb/s,
    B = 10 MB, T = τ' = 55 us: p* ≈ 9.2e-4 by the small-p formula, so q* ≈ 23 KB on the 5–200 KB,
    1 % profile. That formula drops the active-increase factors (1 − p)^(F·B) = e^−39 and
    (1 − p)^(F·T·R*) = e^−0.53 (docs/fluid.md); the exact fixed point is 7.8e-4 (q* = 20.2 KB),
    and the formula with those factors kept (at p*) gives it within 2 %. At p*, α* and R_T − R_C = gap the right-hand sides of
    equations 1–3, written out here from §11.3, vanish."""
    base = _fluid()
    (group,) = base.groups
    fp = replace(base, link_bps=40e9, frame_bytes=1000.0, bc_frames=10e6 / 1000.0,
                 groups=(replace(group, offered_bps=40e9, line_bps=40e9),))
    assert (fp.r_ai, fp.timer_s, fp.alpha_timer_s, fp.g, fp.f_stages) == (40e6, 55e-6, 55e-6, 1 / 256, 5)
    assert fp.cnp_interval_s == pytest.approx(50e-6, rel=1e-12)  # from picoseconds
    fx = fixed_point(fp)
    r = 2.5e6  # frames per second at R* = 20 Gb/s
    small_p = (fp.r_ai / 8000 * (1 / fp.bc_frames + 1 / (fp.timer_s * r)) ** 2 / (fp.alpha_timer_s * r**2)) ** (1 / 3)
    assert small_p == pytest.approx(9.2e-4, rel=0.01)
    exact = fx["mark_probability"]
    assert exact == pytest.approx(7.8e-4, rel=0.01)
    shares = (math.exp(-fp.f_stages * fp.bc_frames * exact) / fp.bc_frames
              + math.exp(-fp.f_stages * fp.timer_s * r * exact) / (fp.timer_s * r))
    kept = (fp.r_ai / 8000 * shares * (1 / fp.bc_frames + 1 / (fp.timer_s * r)) / (fp.alpha_timer_s * r**2)) ** (1 / 3)
    assert kept == pytest.approx(exact, rel=0.02)
    assert fx["queue_bytes"] == pytest.approx(5e3 + fx["mark_probability"] / 0.01 * 195e3) and 20e3 < fx["queue_bytes"] < 21e3
    assert fx["rate_bps"] == 20e9 and fx["limited"] is True

    p, alpha, gap = fx["mark_probability"], fx["alpha"], fx["target_gap_bps"]
    a = 1 - (1 - p) ** (fp.cnp_interval_s * r)
    b = p / ((1 - p) ** -fp.bc_frames - 1)
    d = p / ((1 - p) ** -(fp.timer_s * r) - 1)
    c, e = b * (1 - p) ** (fp.f_stages * fp.bc_frames), d * (1 - p) ** (fp.f_stages * fp.timer_s * r)
    assert fx["cnp_per_s"] == pytest.approx(a / fp.cnp_interval_s, rel=1e-9)
    assert alpha == pytest.approx(1 - (1 - p) ** (fp.alpha_timer_s * r), rel=1e-9)  # equation 1
    increase_t = fp.r_ai * r * (c + e)
    assert gap * a / fp.cnp_interval_s == pytest.approx(increase_t, rel=1e-9)  # equation 2
    cut = 20e9 * alpha * a / (2 * fp.cnp_interval_s)
    assert cut == pytest.approx(gap / 2 * r * (b + d), rel=1e-6)  # equation 3


def test_without_marks_alpha_decays_and_the_rates_climb_by_byte_counter_and_timer() -> None:
    """Where nothing is marked (p(t − τ*) = 0), equations 1–3 reduce to dα/dt = −(g/τ')·α,
    dR_T/dt = R_AI·(r/B + 1/T) and dR_C/dt = (R_T − R_C)/2·(r/B + 1/T), r = R_C(t − τ*)/L.
    The incast with H3 served at 4 Gb/s for 20 ms: when the service returns the queue empties,
    and for 4 ms the rates climb from 2 Gb/s at 0.73 Gb/s per ms, the timer's 55 us carrying
    almost all of it (B is 6,667 frames)."""
    fp = _fluid(hotspots=[{"node": "H3", "rate": 0.4, "start": "0s", "end": "20ms"}])
    run = simulate(fp, t_end=0.026, record_dt=1e-6)
    assert run.alpha is not None and run.target is not None
    t, h, tau = run.t, run.h, fp.tau_s
    unmarked = red(np.interp(t - tau, t, run.queue[:, 0]), fp.kmin, fp.kmax, fp.pmax) == 0.0
    # every point of a step and of its delayed span unmarked
    calm = np.array([np.all(unmarked[(t >= at - tau - h) & (t <= at + h)]) for at in t]) & (t > 0.02)
    steps = np.flatnonzero(calm[:-1] & calm[1:])
    assert steps.size > 500 and t[steps[-1]] - t[steps[0]] > 3e-3

    def events_per_s(i: np.ndarray) -> np.ndarray:
        return np.interp(t[i] - tau, t, run.rates[:, 0, 0]) / fp.frame_bits / fp.bc_frames + 1 / fp.timer_s

    dt = np.diff(t)[steps]
    alpha, current, target = run.alpha[:, 0, 0], run.limiter[:, 0, 0], run.target[:, 0, 0]
    assert np.allclose(alpha[steps + 1] / alpha[steps], np.exp(-fp.g / fp.alpha_timer_s * dt), rtol=1e-9)
    climb = fp.r_ai * (events_per_s(steps) + events_per_s(steps + 1)) / 2
    assert np.allclose(np.diff(target)[steps] / dt, climb, rtol=1e-6)
    assert np.mean(climb) == pytest.approx(0.73e12, rel=0.01)
    closing = [(target[i] - current[i]) / 2 * events_per_s(i) for i in (steps, steps + 1)]
    assert np.allclose(np.diff(current)[steps] / dt, (closing[0] + closing[1]) / 2, rtol=1e-3)


def test_the_fluid_incast_settles_at_the_fixed_point_along_its_slowest_mode() -> None:
    """The 2-to-1 incast: the linearised model is stable, its slowest mode a real root at
    −94/s; the integrated model settles onto the fixed point along it (|q − q*| shrinks at that
    rate within 5 % over 45–70 ms) and sits within 0.5 % of q*, α*, R* and the target gap over
    80–120 ms."""
    fp = _fluid()
    lin = dcqcn_linear(fp)
    fx = lin["fixed_point"]
    assert lin["stable"] is True and lin["modes"] is not None
    slowest = max(lin["modes"], key=lambda s: s[0])
    assert slowest[1] == 0.0 and slowest[0] == pytest.approx(-94, rel=0.02)
    run = simulate(fp, t_end=0.12, record_dt=1e-5)
    assert run.alpha is not None and run.target is not None
    gap = np.abs(run.queue[:, 0] - fx["queue_bytes"])
    i, j = np.searchsorted(run.t, [0.045, 0.07])
    assert -np.log(gap[j] / gap[i]) / (run.t[j] - run.t[i]) == pytest.approx(-slowest[0], rel=0.05)
    late = window_mask(run.t, (0.08, 0.12))
    assert np.mean(run.queue[late, 0]) == pytest.approx(fx["queue_bytes"], rel=5e-3)
    assert np.mean(run.limiter[late, 0, 0]) == pytest.approx(fx["rate_bps"], rel=5e-3)
    assert np.mean(run.alpha[late, 0, 0]) == pytest.approx(fx["alpha"], rel=5e-3)
    assert np.mean(run.target[late, 0, 0] - run.limiter[late, 0, 0]) == pytest.approx(fx["target_gap_bps"], rel=5e-3)
    assert run.fb[late, 0] == pytest.approx(red(run.queue[late, 0], fp.kmin, fp.kmax, fp.pmax))


def test_a_long_loop_makes_the_fluid_incast_oscillate() -> None:
    """§11.3's check "oscillation when τ* grows": with 50 us links the linearised model has a
    root in the right half-plane (the 5.6 ms mode) and the integrated rates keep swinging by
    hundreds of Mb/s where at 1 us they have settled to within a few."""
    swings = {}
    for delay in ("1us", "50us"):
        fp = _fluid(**{"links.delay": delay})
        lin = dcqcn_linear(fp)
        run = simulate(fp, t_end=0.06, record_dt=1e-5)
        swings[delay] = (lin["stable"], float(np.std(run.limiter[window_mask(run.t, (0.03, 0.06)), 0, 0])))
    assert swings["1us"][0] is True and swings["1us"][1] < 10e6
    assert swings["50us"][0] is False and swings["50us"][1] > 200e6
