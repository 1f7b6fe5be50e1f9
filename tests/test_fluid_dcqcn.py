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


def test_the_source_models_the_queue_equation_and_what_a_run_records() -> None:
    """H1 and H2 offering 8 Gb/s each until 20 ms (the incast's fair share is 5 Gb/s):

    * sources "backlog" (the default) keep what was offered and not sent — exactly that — still
      sent under the limiter after the sources stop; once it has drained (by 35 ms) the flows are
      gone: their rates are put back at the line rate (10 Gb/s), α holds still, the queue is empty;
    * "clamp" has no backlog and holds the limiter under the offered 8 Gb/s, where it is put
      back once the flows stop (R_T at the line rate, nothing sent);
    * a 200 KB source buffer (`nic.ingress = "shared"`) holds the backlog at its size while the
      sources offer more than they may send, and empties after they stop;
    * equation 4 holds step by step while the queue is inside its buffer (and was below Kmax a
      loop earlier: above it the marking jumps to 1 and the rates with it): each step's change
      is the mean of (Σ s − μ)/8 at its two ends, to 1 % of the larger; and the recorded
      aggregate is the two flows' sum."""
    flows = [{"src": src, "dst": "H3", "rate": "8Gbps", "stop": "20ms"} for src in ("H1", "H2")]
    fp = _fluid(**{"traffic.flows": flows})
    backlog = simulate(fp, t_end=0.04, record_dt=1e-5)
    t, b = backlog.t, backlog.backlog
    assert b is not None and np.array_equal(backlog.aggregate[:, 0], 2 * backlog.rates[:, 0, 0])
    upto = t <= 0.02 + 1e-12
    sent = np.trapezoid(backlog.rates[upto, 0, 0], t[upto]) / 8
    assert b[upto][-1, 0, 0] == pytest.approx(8e9 * 0.02 / 8 - sent, rel=2e-3) and b[upto][-1, 0, 0] > 6e6
    draining = window_mask(t, (0.021, 0.03))
    assert np.all(b[draining, 0, 0] > 0) and np.all(backlog.rates[draining, 0, 0] > 4.9e9)
    gone = t >= 0.035
    assert np.all(b[gone] == 0) and np.all(backlog.limiter[gone] == 10e9) and np.all(backlog.target[gone] == 10e9)
    assert np.all(backlog.queue[gone] == 0) and backlog.limiter.max() == 10e9
    assert backlog.alpha is not None and np.all(backlog.alpha[gone] == backlog.alpha[gone][0])  # α holds still
    assert 0.1 < backlog.alpha[gone][0, 0, 0] < 0.3

    clamp = simulate(fp, t_end=0.04, record_dt=1e-5, sources="clamp")
    assert clamp.backlog is None and clamp.limiter.max() == 8e9 and clamp.limiter[clamp.t < 0.02].min() < 5.1e9
    stopped = clamp.t > 0.0201
    assert np.all(clamp.limiter[stopped] == 8e9) and np.all(clamp.target[stopped] == 10e9)
    assert np.all(clamp.rates[stopped] == 0.0) and np.all(clamp.rates[~stopped & (clamp.t < 0.02)] > 0.0)
    small = simulate(_fluid(**{"traffic.flows": flows, "nic.ingress": "shared", "nic.ingress_size": "200KB"}), t_end=0.03)
    assert small.backlog is not None and small.backlog.max() == 200e3
    assert np.all(small.backlog[window_mask(small.t, (0.002, 0.0199)), 0, 0] == 200e3) and np.all(small.backlog[small.t > 0.021] == 0.0)

    q, agg = backlog.queue[:, 0], backlog.aggregate[:, 0]
    # inside the buffer, and below Kmax (where the marking probability jumps to 1) a loop earlier
    smooth = (q > 0) & (np.interp(t - fp.tau_s, t, q) < 0.95 * fp.kmax)
    inside = np.flatnonzero(smooth[:-1] & smooth[1:] & (t[1:] < 0.02))
    assert inside.size > 1500
    ends = (agg[inside] - 10e9) / 8, (agg[inside + 1] - 10e9) / 8
    change = (q[inside + 1] - q[inside]) / np.diff(t)[inside]
    assert np.all(np.abs(change - (ends[0] + ends[1]) / 2) < 0.01 * np.maximum(np.abs(ends[0]), np.abs(ends[1])))


def test_the_queue_stops_at_the_buffer_and_leaves_it_when_the_sources_slow_down() -> None:
    """The buffer's ceiling stands in for PAUSE (docs/fluid.md): with 100 KB per input (a
    189 KB ceiling, both inputs at XOFF) the incast's onset fills it within 0.2 ms; once the
    sources have slowed down the queue drains from it, never to return, and by 20 ms sits near q*."""
    fp = _fluid(**{"switch.memory_per_port": "100KB"})
    assert fp.buffer_bytes == 189e3
    run = simulate(fp, t_end=0.02, record_dt=1e-5)
    q = run.queue[:, 0]
    full = np.flatnonzero(q == fp.buffer_bytes)
    assert q.max() == fp.buffer_bytes and run.t[full[0]] < 0.2e-3 and run.t[full[-1]] < 1e-3
    assert np.all(q[full[-1] + 1:] < fp.buffer_bytes) and 100e3 < q[-1] < 150e3


def test_no_source_reacts_before_a_loop_delay_after_the_first_mark() -> None:
    """Causality: the queue passes Kmin within the first microseconds of the incast; a source
    learns of it only through a CNP, one loop delay τ* = 6.5 us later, so its rates stay at the
    line rate until then, and fall after (0.5 us steps)."""
    fp = _fluid()
    run = simulate(fp, t_end=50e-6, h=0.5e-6, record_dt=0.5e-6)
    marked = run.t[np.argmax(run.queue[:, 0] > fp.kmin)]
    assert 3e-6 < marked < 5e-6 and fp.tau_s == pytest.approx(6.5e-6, rel=1e-3)
    unaware = run.t <= marked - run.h + fp.tau_s
    assert np.all(run.limiter[unaware] == 10e9) and np.all(run.target[unaware] == 10e9)
    assert run.limiter[-1, 0, 0] < 9.9e9


def test_the_linear_modes_exist_only_at_a_differentiable_fixed_point() -> None:
    """No modes where the linearisation has no meaning: flows that offer less than the fair share
    (no fixed point of this kind), a step profile (Kmax = Kmin), and p* at or above Pmax (the
    queue at the profile's step). Each alone suffices; the incast as shipped has them."""
    assert dcqcn_linear(_fluid())["modes"] is not None
    slow = [{"src": src, "dst": "H3", "rate": "4Gbps"} for src in ("H1", "H2")]
    for overrides in ({"traffic.flows": slow}, {"cm.kmin": "100KB", "cm.kmax": "100KB"}, {"cm.pmax": 0.005}):
        lin = dcqcn_linear(_fluid(**overrides))
        assert lin["modes"] is None and lin["stable"] is None and lin["damped_period_s"] is None, overrides
    assert fixed_point(_fluid(**{"cm.pmax": 0.005}))["mark_probability"] > 0.005
    assert fixed_point(_fluid(**{"traffic.flows": slow}))["limited"] is False


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
    −94/s, its least-damped ringing 5.7 ms; the integrated model settles onto the fixed point along it (|q − q*| shrinks at that
    rate within 5 % over 45–70 ms) and sits within 0.5 % of q*, α*, R* and the target gap over
    80–120 ms."""
    fp = _fluid()
    lin = dcqcn_linear(fp)
    fx = lin["fixed_point"]
    assert lin["stable"] is True and lin["modes"] is not None
    slowest = max(lin["modes"], key=lambda s: s[0])
    assert slowest[1] == 0.0 and slowest[0] == pytest.approx(-94, rel=0.02)
    # the least-damped oscillatory mode, −100 ± 1102j/s: a 5.7 ms period decaying at 100/s
    ringing = max((s for s in lin["modes"] if s[1] > 0), key=lambda s: s[0])
    assert ringing[0] == pytest.approx(-100, rel=0.02) and ringing[1] == pytest.approx(1102, rel=0.01)
    assert lin["damped_period_s"] == pytest.approx(2 * math.pi / ringing[1]) and lin["decay_rate_per_s"] == -ringing[0]
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


def test_a_run_from_before_the_flows_start_is_extended_back_to_zero() -> None:
    """Nothing happens before the flows start (10 ms here), so a run started at 9 ms holds its
    initial state back to t = 0 (line rates, α = 1, no queue) and then follows the run from 0."""
    fp = _fluid(**{"traffic.start": "10ms"})
    late = simulate(fp, t_start=0.009, t_end=0.013, record_dt=1e-5)
    full = simulate(fp, t_end=0.013, record_dt=1e-5)
    assert late.alpha is not None and full.alpha is not None
    assert late.t[0] == 0.0 and np.allclose(late.t, full.t, rtol=0, atol=1e-12)
    before = late.t < 0.01
    assert np.all(late.queue[before] == 0.0) and np.all(late.limiter[before] == 10e9) and np.all(late.alpha[before] == 1.0)
    for name in ("queue", "limiter", "target", "alpha"):
        assert np.allclose(getattr(late, name), getattr(full, name), rtol=1e-9), name
    assert full.queue[-1, 0] > 40e3  # the incast has begun


def test_the_fluid_model_scales_the_thresholds_to_the_hot_port_as_the_engine_does() -> None:
    """cm.k_scale = "link" makes Kmin/Kmax a links.rate port's, which the engine's CP scales by
    its own port's rate (DcqcnParams::thresholds): the fluid model of an incast into a 1 Gb/s
    link of a 10 Gb/s network read the unscaled 5/200 KB, while the packet run marks between
    0.5 and 20 KB, and its fixed point put the hot queue 10 times too high (200 KB, not 20)."""
    slow = {
        "topology.kind": "graph",
        "topology.switches": ["S1"],
        "topology.links": [{"a": "S1", "b": "H1"}, {"a": "S1", "b": "H2"}, {"a": "S1", "b": "H3", "rate": "1Gbps"}],
    }
    fixed = _fluid(**slow)
    scaled = _fluid(**slow, **{"cm.k_scale": "link"})
    assert (fixed.kmin, fixed.kmax) == (5_000, 200_000)
    assert (scaled.kmin, scaled.kmax) == pytest.approx((500, 20_000))
    # two 10 Gb/s flows into 1 Gb/s need p above Pmax: the fixed point sits at the port's Kmax
    assert (fixed.qeq, scaled.qeq) == pytest.approx((200_000, 20_000))
    # a port of links.rate keeps the given bytes: the shipped incast moves nothing
    assert _fluid(**{"cm.k_scale": "link"}) == _fluid()
