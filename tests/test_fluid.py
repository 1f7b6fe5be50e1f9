"""Fluid models and linear stability (spec/algorithms.md §11), cross-checked with the packet engine.

* the DDE solver against exact solutions of linear delay equations;
* the linear figures of §11.1 against the worked example (hand-computed) and against the
  rightmost characteristic root;
* the parameters derived from the scenario files, the fluid equilibrium;
* packet simulator vs fluid model on kd-symmetric-single-hs and zhb-og-single-hop: mean hot
  queue, dominant oscillation period, and the qualitative predictions (a longer loop
  destabilises at fixed W; a larger W restores stability).
"""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import cnsim
import numpy as np
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from cnsim.fluid import (
    bcn_equilibrium,
    bcn_linear,
    crossover,
    fluid_params,
    loop_figures,
    max_stable_delay,
    phase_margin,
    rightmost_root,
    simulate,
    solve_dde,
    w_needed,
)
from cnsim.fluid.analysis import dominant_period, window_mask

# --------------------------------------------------------------------------- the solver


def _exact_linear_delay(t: float, a: float, tau: float) -> float:
    """x' = −a·x(t − τ), x = 1 for t ≤ 0, solved by the method of steps (a finite sum)."""
    n = int(math.floor(t / tau)) + 1
    return sum((-a) ** k * (t - (k - 1) * tau) ** k / math.factorial(k) for k in range(n + 1) if t - (k - 1) * tau > 0)


def test_solver_matches_the_method_of_steps_solution_to_fourth_order() -> None:
    """x' = −x(t − 1) on [0, 10]: max error < 2e-7 at h = 0.1 and it falls ~16× per halving of h
    (RK4 with cubic Hermite history: fourth order); linear history interpolation is second order."""
    errs = {}
    for h in (0.1, 0.05):
        sol = solve_dde(lambda t, x, xd: -xd, np.array([1.0]), 1.0, 10.0, h)
        assert sol.t.tolist() == [k * h for k in range(round(10 / h) + 1)], "every step recorded by default"
        errs[h] = max(abs(sol.x[i, 0, 0] - _exact_linear_delay(sol.t[i], 1.0, 1.0)) for i in range(sol.t.size))
    assert errs[0.1] < 2e-7
    assert errs[0.1] / errs[0.05] > 12
    lin = solve_dde(lambda t, x, xd: -xd, np.array([1.0]), 1.0, 10.0, 0.05, interpolation="linear")
    e_lin = max(abs(lin.x[i, 0, 0] - _exact_linear_delay(lin.t[i], 1.0, 1.0)) for i in range(lin.t.size))
    assert 1e-5 < e_lin < 1e-3


def test_solver_handles_delays_shorter_than_the_step() -> None:
    """x' = −x(t − τ) with τ < h (the fluid models do not shorten the step to the loop delay):
    τ = 0 is the ODE x' = −x, solved by RK4 (exp(−t) within 1e-6 at h = 0.1); 0 < τ < h stays
    within 1.5e-4 of the method-of-steps solution at h = 0.1 and 5e-5 at h = 0.05. Each grid
    point is integrated as if alone, whatever delays share the grid: the derivative at the
    newest grid point, which k1's delayed value needs when τ < h, is not a stale value of the
    history buffer (whose depth follows the longest delay)."""
    rhs = lambda t, x, xd: -xd  # noqa: E731
    zero = solve_dde(rhs, np.ones(1), 0.0, 1.0, 0.1)
    assert np.abs(zero.x[:, 0, 0] - np.exp(-zero.t)).max() < 1e-6
    for h, bound in ((0.1, 1.5e-4), (0.05, 5e-5)):
        for tau in (0.02, 0.03, 0.09):
            alone = solve_dde(rhs, np.ones(1), tau, 1.0, h)
            exact = np.array([_exact_linear_delay(t, 1.0, tau) for t in alone.t])
            assert np.abs(alone.x[:, 0, 0] - exact).max() < bound, (h, tau)
            for partner in (0.0, 0.3, 0.5):
                grid = solve_dde(rhs, np.ones((2, 1)), np.array([tau, partner]), 1.0, h)
                assert np.array_equal(grid.x[:, 0, 0], alone.x[:, 0, 0]), (h, tau, partner)


def test_solver_passes_each_stage_its_own_time_from_any_start() -> None:
    """A right-hand side and a projection that depend on t, from t0 = 1: x' = cos t follows
    sin t to fourth order (each RK stage evaluated at its own time), and a state pushed up
    against the moving ceiling x <= 0.9 t (x' = 1 + 10 (x − 0.9 t): 1 on the ceiling, and
    running away from it below) stays on it only if every stage is projected at its own time."""
    wave = solve_dde(lambda t, x, xd: np.cos(t) + 0 * xd, np.array([math.sin(1.0)]), 0.3, 3.0, 0.1, t0=1.0)
    assert np.allclose(wave.t, np.linspace(1.0, 3.0, 21), rtol=0, atol=1e-12)
    assert np.abs(wave.x[:, 0, 0] - np.sin(wave.t)).max() < 1e-7
    ceiling = solve_dde(lambda t, x, xd: 1 + 10 * (x - 0.9 * t), np.array([0.9]), 0.3, 3.0, 0.1, t0=1.0,
                        project=lambda t, x: np.minimum(x, 0.9 * t))
    assert np.abs(ceiling.x[:, 0, 0] - 0.9 * ceiling.t).max() < 1e-12


def test_solver_refuses_delays_steps_and_spans_it_cannot_integrate() -> None:
    """Each condition on its own: a negative or non-finite delay, a step that is not a finite
    positive number, a span that is empty or not finite."""
    rhs = lambda t, x, xd: -xd  # noqa: E731
    for tau in (-1e-9, math.nan, math.inf, np.array([0.5, -0.5])):
        with pytest.raises(ValueError, match="delays"):
            solve_dde(rhs, np.ones((2, 1)), tau, 1.0, 0.1)
    for h, t0, t_end in ((0.0, 0.0, 1.0), (-0.1, 0.0, 1.0), (math.nan, 0.0, 1.0), (math.inf, 0.0, 1.0),
                         (0.1, 1.0, 1.0), (0.1, 0.0, math.inf), (0.1, -math.inf, 1.0), (0.1, 2.0, 1.0)):
        with pytest.raises(ValueError, match="finite h"):
            solve_dde(rhs, np.ones(1), 0.5, t_end, h, t0=t0)
    assert solve_dde(rhs, np.ones(1), 0.0, 1.0, 0.5).t.tolist() == [0.0, 0.5, 1.0]  # a zero delay is allowed
    # every record_every-th step is recorded, and the last one always
    every3 = solve_dde(rhs, np.ones(1), 0.5, 1.0, 0.1, record_every=3)
    assert np.allclose(every3.t, [0.0, 0.3, 0.6, 0.9, 1.0], rtol=0, atol=1e-12) and every3.x.shape == (5, 1, 1)


def test_solver_reproduces_known_characteristic_roots_on_a_grid() -> None:
    """x' = −a·x(t − τ) with a·τ = π/2 has the roots s = ±iπ/(2τ): a sustained oscillation of
    period 4τ. Three delays (τ = 0.5, 1, 2) in one vectorised integration: the period from the
    zero crossings within 0.2 % and the amplitude constant within 0.5 % over 8 periods."""
    taus = np.array([0.5, 1.0, 2.0])
    a = (np.pi / 2 / taus)[:, None]
    sol = solve_dde(lambda t, x, xd: -a * xd, np.ones((3, 1)), taus, 80.0, 0.01)
    for p, tau in enumerate(taus):
        x = sol.x[:, p, 0]
        t = sol.t
        up = [t[i] - x[i] * (t[i + 1] - t[i]) / (x[i + 1] - x[i]) for i in range(t.size - 1) if x[i] < 0 <= x[i + 1]]
        assert np.median(np.diff(up)) == pytest.approx(4 * tau, rel=2e-3)
        late = t > t[-1] - 8 * 4 * tau
        early = (t > 4 * tau) & (t <= 4 * tau + 8 * 4 * tau)
        assert np.max(np.abs(x[late])) == pytest.approx(np.max(np.abs(x[early])), rel=5e-3)


def test_solver_decay_matches_the_rightmost_root_of_the_bcn_loop() -> None:
    """The linearised BCN loop as a DDE, x'' = −K·(x + T_w·x')(t − τ), for three (K, T_w, τ):
    the decay rate and frequency measured on the trajectory match the rightmost root of
    s² + K(1 + sT_w)e^{−sτ} = 0 within 1 % (solver and characteristic equation agree)."""
    K = np.array([9.26e4, 3.47e6, 3.47e6])
    T = np.array([6e-4, 1.2e-4, 4.8e-4])
    tau = np.array([3.25e-6, 9.25e-6, 2.0e-4])
    root = rightmost_root(K, T, tau)
    assert np.all(root.real < 0)
    Kc, Tc = K[:, None], T[:, None]

    def rhs(t: float, x: np.ndarray, xd: np.ndarray) -> np.ndarray:
        return np.hstack([x[:, 1:2], -Kc * (xd[:, 0:1] + Tc * xd[:, 1:2])])

    t_end = 6 * 2 * np.pi / root.imag.min()
    sol = solve_dde(rhs, np.array([[1.0, 0.0]] * 3), tau, float(t_end), 5e-6, record_every=2)
    for p in range(3):
        x, t = sol.x[:, p, 0], sol.t
        peaks = [i for i in range(1, t.size - 1) if x[i] > x[i - 1] and x[i] >= x[i + 1] and x[i] > 1e-12]
        tp, xp = t[peaks][1:], x[peaks][1:]
        rate = np.polyfit(tp, np.log(xp), 1)[0]
        assert rate == pytest.approx(root[p].real, rel=1e-2)
        assert np.median(np.diff(tp)) == pytest.approx(2 * np.pi / root[p].imag, rel=1e-2)


# --------------------------------------------------------------------------- §11.1 figures


def test_the_worked_example_of_11_1() -> None:
    """ZRL case 1 (algorithms.md §11.1): L = 12 000 bit, μ = 2 Gb/s, N_h = 15, p_s = 0.02,
    Gd = 1.6667e-6, Gi = 6.6667e-4, Ru = 10 Mb/s, w = 2. By hand: λ0 = 133.3 Mb/s,
    Δ = 12 000/(0.02·2e9) = 0.3 ms, T_w = 0.6 ms, K_MD = 0.02·1.6667e-6·(1.3333e8)²·15/96 000 =
    9.2594e4 s⁻², K_AI = 0.02·6.6667e-4·1e7·1.3333e8·15/96 000 = 2.7778e6 s⁻²;
    ω_c² = (K²T² + sqrt(K⁴T⁴ + 4K²))/2 gives ω_c = 306.8 rad/s (MD, period 20.5 ms,
    PM = atan(0.1841) − ω_c·τ = 0.1821 − 0.0010 = 0.1811 rad) and 2120 rad/s (AI,
    PM = atan(1.272) − 2120·τ = 0.9048 − 0.0069 = 0.8979 rad), τ = 3.2512 us."""
    p = fluid_params("zhb-og-single-hop", {"cm.scheme": "bcn"})
    assert p.n_hot == 15 and p.mu_bps == pytest.approx(2e9) and p.ps == 0.02
    assert p.fair_bps == pytest.approx(1.3333333e8)
    assert p.sample_spacing_s == pytest.approx(3e-4)
    assert p.tau_s == pytest.approx(2e-6 + 1.2e-6 + 64 * 8 / 1e10)  # 2 x 1 us + 1500 B and 64 B at 10 Gb/s
    lin = bcn_linear(p)
    md, ai = lin["sides"]["md"], lin["sides"]["ai"]
    assert md["K_per_s2"] == pytest.approx(9.2594e4, rel=1e-4)
    assert ai["K_per_s2"] == pytest.approx(2.7778e6, rel=1e-4)
    assert md["T_w_s"] == pytest.approx(6e-4)
    assert md["crossover_rad_s"] == pytest.approx(306.84, rel=1e-4)
    assert md["period_s"] == pytest.approx(2 * np.pi / 306.84, rel=1e-4)
    assert md["phase_margin_rad"] == pytest.approx(math.atan(306.84 * 6e-4) - 306.84 * p.tau_s, abs=1e-4)
    assert md["phase_margin_rad"] == pytest.approx(0.1811, abs=1e-3)
    assert ai["crossover_rad_s"] == pytest.approx(2120.0, rel=1e-3)
    assert ai["phase_margin_rad"] == pytest.approx(math.atan(2120.0 * 6e-4) - 2120.0 * p.tau_s, abs=1e-3)
    assert ai["phase_margin_rad"] == pytest.approx(0.8977, abs=1e-3)
    assert lin["limiting_side"] == "md" and lin["stable"]
    assert lin["phase_margin_rad"] == md["phase_margin_rad"]
    # w = 0 is never stable: PM = −ω_c·τ
    assert float(phase_margin(9.26e4, 0.0, 1e-6)) < 0


def test_crossover_is_the_unity_gain_point_and_roots_agree_with_the_phase_margin() -> None:
    """|K(1 + iωT)/(iω)²| = 1 at ω_c; over 2000 random (K, T_w, τ) a root with Re s > 0 exists
    iff PM < 0 (Nyquist for this open loop); τ_max makes PM = 0."""
    rng = np.random.default_rng(7)
    K = 10 ** rng.uniform(3, 7, 2000)
    T = 10 ** rng.uniform(-5, -2, 2000)
    tau = 10 ** rng.uniform(-6, -2.5, 2000)
    wc = crossover(K, T)
    np.testing.assert_allclose(K * np.sqrt(1 + (wc * T) ** 2) / wc**2, 1.0, rtol=1e-10)
    f = loop_figures(K, T, tau)
    assert not np.any(np.isnan(f.root))
    assert np.array_equal(f.root.real > 0, f.phase_margin_rad < 0)
    np.testing.assert_allclose(phase_margin(K, T, f.max_stable_delay_s), 0.0, atol=1e-9)


def test_at_the_longest_stable_delay_the_root_sits_on_the_axis_at_the_crossover() -> None:
    """τ_max = atan(ω_c·T_w)/ω_c zeroes the phase margin, so the open loop is −1 at iω_c and the
    rightmost root is s = iω_c (the worked example's two sides and a third loop)."""
    K = np.array([9.26e4, 2.78e6, 3.47e6])
    T = np.array([6e-4, 6e-4, 1.2e-4])
    wc = crossover(K, T)
    tau_max = max_stable_delay(K, T)
    np.testing.assert_allclose(tau_max * wc, np.arctan(wc * T), rtol=1e-12)
    np.testing.assert_allclose(phase_margin(K, T, tau_max), 0.0, atol=1e-12)
    root = rightmost_root(K, T, tau_max)
    assert np.all(np.abs(root.real) < 1e-9 * wc)
    np.testing.assert_allclose(root.imag, wc, rtol=1e-9)
    np.testing.assert_array_equal(loop_figures(K, T, tau_max).max_stable_delay_s, tau_max)


def test_without_delay_the_rightmost_root_solves_the_quadratic() -> None:
    """τ = 0: s² + K·T_w·s + K = 0. K = 1e6, T_w = 1 ms is underdamped, s = −500 + 866.03i (the
    root with Im s ≥ 0), ringing at 2π/866 = 7.26 ms; T_w = 10 ms is overdamped, and the
    rightmost root is −5000 + √(2.5e7 − 1e6) = −101.02, real, with no damped period (None).
    K = 0 has no gain: no root converges, and every root figure is None."""
    under = loop_figures(1e6, 1e-3, 0.0).to_dict()
    assert under["root_real_per_s"] == pytest.approx(-500.0, rel=1e-12)
    assert under["root_imag_rad_s"] == pytest.approx(math.sqrt(1e6 - 2.5e5), rel=1e-12)
    assert under["damped_period_s"] == pytest.approx(2 * math.pi / math.sqrt(7.5e5), rel=1e-12)
    assert under["crossover_rad_s"] == pytest.approx(1272.0196, rel=1e-7)
    assert under["period_s"] == pytest.approx(2 * math.pi / 1272.0196, rel=1e-7)
    assert under["phase_margin_rad"] == pytest.approx(math.atan(1.2720196), rel=1e-7)
    assert under["max_stable_delay_s"] == pytest.approx(math.atan(1.2720196) / 1272.0196, rel=1e-7)
    assert (under["K_per_s2"], under["T_w_s"], under["tau_s"]) == (1e6, 1e-3, 0.0)
    over = loop_figures(1e6, 1e-2, 0.0).to_dict()
    assert over["root_real_per_s"] == pytest.approx(-5000.0 + math.sqrt(2.4e7), rel=1e-12)
    assert over["root_imag_rad_s"] == 0.0 and over["damped_period_s"] is None
    none = loop_figures(0.0, 1e-2, 1e-6).to_dict()
    assert none["root_real_per_s"] is None and none["root_imag_rad_s"] is None and none["damped_period_s"] is None
    assert none["period_s"] is None and none["max_stable_delay_s"] is None

def test_scenario_parameters_for_kd_and_qcnp() -> None:
    """kd: 4 flows of 5 Gb/s into 10 Gb/s, interval sampling every 75 KB (p_s = 1500/75 000),
    loop 2 x 4 us + 1.2 us + 51.2 ns, buffer = the 600 KB discard threshold. qcnp ECM-Q: gains per
    8-bit quantum → per byte (× 255/Fbmax, Fbmax = 5 x 37.5 KB)."""
    kd = fluid_params("kd-symmetric-single-hs", {"cm.scheme": "bcn"})
    assert (kd.n_hot, kd.mu_bps, kd.fair_bps, kd.ps) == (4, 1e10, 2.5e9, 0.02)
    assert kd.tau_s == pytest.approx(8e-6 + 1.2e-6 + 5.12e-8)
    assert kd.buffer_bytes == 600_000 and kd.qmc == 600_000
    q = fluid_params("qcnp-ig-baseline", {"cm.scheme": "bcn"})
    assert q.gd == pytest.approx(0.5 / 255 * 255 / (5 * 37_500))
    assert q.hot_window_s == pytest.approx((0.1, 1.0))
    assert q.negative_only_above_qeq
    qcn = fluid_params("qcnp-ig-baseline", {"cm.scheme": "qcn"})
    assert qcn.bc_frames == 100 and qcn.r_ai == 12e6 and qcn.sampling == "linear"


def test_a_scheme_without_a_fluid_model_is_bad_input(tmp_path: Path) -> None:
    with pytest.raises(cnsim.ScenarioError, match="no fluid model"):
        fluid_params("zhb-og-single-hop")  # the catalog's own scheme is "none"
    with pytest.raises(cnsim.ScenarioError, match="no fluid model"):
        fluid_params("zhb-og-single-hop", {"cm.scheme": "e2cm"})
    with pytest.raises(cnsim.ScenarioError, match="single-switch"):
        fluid_params("zhb-og-multi-hop", {"cm.scheme": "bcn"})
    from cnsim.cli import app
    from typer.testing import CliRunner

    res = CliRunner().invoke(app, ["fluid", "zhb-og-single-hop", "--set", "cm.scheme=qcn3pt", "--out", str(tmp_path / "x")])
    assert res.exit_code == 2
    assert "no fluid model" in res.output
    assert "Traceback" not in res.output
    # a run that ends before its hotspot starts has nothing to integrate (it raised a ValueError)
    res = CliRunner().invoke(app, ["fluid", "zhb-og-single-hop", "--set", "cm.scheme=qcn", "--set", "duration=20ms",
                                   "--out", str(tmp_path / "y")])
    assert res.exit_code == 2, res.output
    assert "duration = 0.02 s ends before its hotspot starts (0.1 s)" in res.output


def test_a_catalogue_entry_without_cm_takes_its_first_preset_with_a_fluid_model(tmp_path: Path) -> None:
    """Contract: `cnsim fluid ID --out DIR` (no --set): a catalogue entry runs without CM and
    carries its deck's schemes as presets; the fluid model is the first of them that has one."""
    from cnsim.cli import app
    from cnsim.fluid.params import default_scheme
    from typer.testing import CliRunner

    assert default_scheme("kd-symmetric-single-hs") == "bcn"
    assert default_scheme("qcnp-og-single-hop") == "bcn"  # ECM-Q, the first of S1's presets
    assert default_scheme("qcnp-og-single-hop", {"cm.scheme": "qcn"}) is None  # chosen by the user
    assert default_scheme("dcqcn-incast-2to1") == "dcqcn"
    assert default_scheme("kd-symmetric-single-hs", {"cm.scheme": "bcn", "cm.w": 8}) is None
    assert default_scheme("ring-6-deadlock") is None  # no preset: fluid_params says why
    res = CliRunner().invoke(app, ["fluid", "kd-symmetric-single-hs", "--no-plots", "--out", str(tmp_path / "kd")])
    assert res.exit_code == 0, res.output
    assert "its bcn preset" in res.output
    assert json.loads((tmp_path / "kd" / "fluid.json").read_text())["scheme"] == "bcn"


def test_max_stable_loop_delay_and_the_w_needed_for_kd() -> None:
    """PS-BCN-KD with the W = 2 gains held fixed: τ_max = 118 us at W = 2 and ~365 us at W = 8
    and 16 (ω_c grows with W, so the gain in τ_max saturates); at a 200 us loop the W needed is
    ~3.5, and no W is stable at 500 us. With the gains recomputed for each W (I-23, the preset's
    formulas) a larger W keeps buying delay: ~443 us at W = 8, ~814 us at W = 16, and W ≈ 9 is
    stable at 500 us — the deck's "larger w helps at long delays"."""
    fixed = {"cm.scheme": "bcn", "cm.gd": 6.6667e-7, "cm.gi": 1.3333e-3}
    tmax = {w: bcn_linear(fluid_params("kd-symmetric-single-hs", {**fixed, "cm.w": w}))["max_stable_delay_s"]
            for w in (2, 8, 16)}
    assert tmax[2] == pytest.approx(118e-6, rel=0.02)
    assert tmax[8] == pytest.approx(365e-6, rel=0.02)
    assert tmax[16] == pytest.approx(368e-6, rel=0.02)
    need = w_needed("kd-symmetric-single-hs", 200e-6, fixed)
    assert 3.3 < need["w"] < 3.7
    assert w_needed("kd-symmetric-single-hs", 500e-6, fixed)["w"] is None
    follow = {w: bcn_linear(fluid_params("kd-symmetric-single-hs", {"cm.scheme": "bcn", "cm.w": w}))["max_stable_delay_s"]
              for w in (2, 8, 16)}
    assert follow[2] == pytest.approx(tmax[2], rel=1e-4)
    assert follow[8] == pytest.approx(443e-6, rel=0.02) and follow[16] == pytest.approx(814e-6, rel=0.02)
    assert 8.5 < w_needed("kd-symmetric-single-hs", 500e-6, {"cm.scheme": "bcn"})["w"] < 9.8


# --------------------------------------------------------------------------- the fluid model


def test_bcn_fluid_equilibrium_on_zhb() -> None:
    """The fluid model of zhb-og-single-hop settles at q = Qeq and λ = μ/N_h (§11.1's fixed
    point; the loop is stable, PM = 0.18 rad) within 0.5 % over the measurement window."""
    p = fluid_params("zhb-og-single-hop", {"cm.scheme": "bcn"})
    run = simulate(p, t_start=0.095, t_end=0.3)
    m = window_mask(run.t, (0.2, 0.3))
    assert np.mean(run.queue[m, 0]) == pytest.approx(p.qeq, rel=5e-3)
    assert np.mean(run.rates[m, 0, 0]) == pytest.approx(p.fair_bps, rel=5e-3)
    assert np.max(np.abs(run.queue[m, 0] - p.qeq)) < 0.01 * p.qeq
    # the recorded aggregate is the 15 hot flows' sum: the hot port's 2 Gb/s service at equilibrium
    assert np.mean(run.aggregate[m, 0]) == pytest.approx(15 * p.fair_bps, rel=5e-3) == 2e9


def test_the_source_and_decrease_models_and_what_a_run_records() -> None:
    """The options of `simulate`, each told apart by what it does (kd, BCN, traffic stopping at
    20 ms; zhb's onset):

    * sources "backlog" (the default) keeps each source's unsent traffic, still sent under the
      limiter after the source stops (until 40 ms), and lets its limiter climb to the line rate
      (10 Gb/s), where a limiter is put back once its stopped source has nothing left to send;
      "clamp" has no backlog and holds the limiter under the offered 5 Gb/s — and once a flow
      has stopped, puts it back at that ceiling;
    * decrease "log" (the default) is the mean-field limit of multiplicative cuts, which holds
      zhb's onset queue near 1 MB; §11.1's first-order "linear" form lets it reach 3 MB;
    * states are recorded every `record_dt` (every step when that is shorter), and a run that
      starts at `t_start` is extended back to 0 with its initial state."""
    kd = fluid_params("kd-symmetric-single-hs", {"cm.scheme": "bcn", "traffic.stop": "20ms"})
    drained = simulate(kd, t_end=0.045)
    assert drained.backlog is not None
    empty = (drained.t > 0.02) & (drained.backlog[:, 0, 0] == 0.0)
    assert 0.035 < drained.t[empty][0] < 0.045 and np.all(empty[drained.t >= drained.t[empty][0]])
    assert np.all(drained.limiter[empty, 0, 0] == 10e9) and drained.limiter[~empty & (drained.t > 0.02), 0, 0].max() < 3e9
    backlog = simulate(kd, t_end=0.03)
    assert backlog.backlog is not None and backlog.backlog.max() > 1e6 and backlog.limiter.max() == 10e9
    assert np.array_equal(backlog.queue, simulate(kd, t_end=0.03, sources="backlog").queue)
    # the backlog is what was offered and not sent: 4 sources × 5 Gb/s for 20 ms, less what they sent
    upto = backlog.t <= 0.02 + 1e-12
    sent = np.trapezoid(backlog.aggregate[upto, 0], backlog.t[upto]) / 8
    assert 4 * backlog.backlog[upto][-1, 0, 0] == pytest.approx(4 * 5e9 * 0.02 / 8 - sent, rel=2e-3)
    # a source that has stopped but still holds a backlog stays under its limiter's control
    assert backlog.backlog[-1, 0, 0] > 1e6 and backlog.limiter[-1, 0, 0] < 3e9 and backlog.queue[-1, 0] > 0.5 * kd.qeq
    clamp = simulate(kd, t_end=0.03, sources="clamp")
    assert clamp.backlog is None and clamp.limiter.max() == 5e9
    stopped = clamp.t > 0.0201
    assert clamp.limiter[~stopped].min() < 2.6e9 and np.all(clamp.limiter[stopped] == 5e9)
    qcn = simulate(fluid_params("kd-symmetric-single-hs", {"cm.scheme": "qcn", "traffic.stop": "20ms"}), t_end=0.03, sources="clamp")
    assert qcn.limiter[~stopped].min() < 2.6e9 and np.all(qcn.limiter[stopped] == 5e9) and np.all(qcn.target[stopped] == 10e9)
    assert np.isfinite(qcn.queue).all()  # a stopped flow's rates hold still (and are put back at their ceilings)
    fine = simulate(kd, t_end=0.001, record_dt=1e-9)
    assert np.allclose(np.diff(fine.t), fine.h, rtol=1e-9) and backlog.t[1] == pytest.approx(1e-4)

    zhb = fluid_params("zhb-og-single-hop", {"cm.scheme": "bcn"})
    log = simulate(zhb, t_start=0.095, t_end=0.13)
    assert log.t[0] == 0.0 and np.all(log.queue[log.t < 0.095] == 0.0) and log.t[1] == pytest.approx(1e-4)
    assert 0.9e6 < log.queue[:, 0].max() < 1.1e6
    assert np.array_equal(log.queue, simulate(zhb, t_start=0.095, t_end=0.13, decrease="log").queue)
    linear = simulate(zhb, t_start=0.095, t_end=0.13, decrease="linear")
    assert 2.5e6 < linear.queue[:, 0].max() < 3.5e6 and linear.queue[-1, 0] < 1.5 * zhb.qeq


def test_qcn_sampling_follows_fb_through_one_fixed_point_pass() -> None:
    """QCN's table rule (§4.2) picks the next sampling interval from |Fb|, and Fb's derivative
    term is the queue's change over one interval, w·Δ·dq/dt with Δ = L/(p·A): so p and Fb depend
    on each other. The model takes Fb at the base interval (150 KB), then once more at the
    interval that Fb selects (docs/fluid.md). Checked on kd's onset (the queue rising at up to
    1.25 GB/s, then held at the 600 KB ceiling) against that reading computed here from the
    recorded queue and arrival rate; there the pass moves Fb by up to 90 KB."""
    p = fluid_params("kd-symmetric-single-hs", {"cm.scheme": "qcn"})
    run = simulate(p, t_end=0.004, record_dt=1e-5)
    q, agg = run.queue[:, 0], run.aggregate[:, 0]
    dq = (agg - p.link_bps) / 8.0
    dq[((q <= 0.0) & (dq < 0.0)) | ((q >= p.buffer_bytes) & (dq > 0.0))] = 0.0  # held at an end of the buffer
    interval = np.array([150.0, 75.0, 50.0, 37.5, 30.0, 25.0, 21.5, 18.5]) * 1000.0

    def fb(sampled_bytes: np.ndarray) -> np.ndarray:
        spacing_s = sampled_bytes * 8.0 / np.maximum(agg, 1.0)  # L/(p·A) with p = L/interval
        return np.clip(-((q - p.qeq) + p.w * spacing_s * dq), -p.fbmax, p.fbmax)

    first = fb(np.full_like(q, interval[0]))
    quanta = np.floor(np.clip(-first, 0.0, None) * 63.0 / p.fbmax)
    second = fb(interval[np.minimum(quanta // 8, 7).astype(int)])
    assert np.allclose(run.fb[:, 0], second, rtol=1e-9, atol=1e-6)
    assert np.max(np.abs(second - first)) > 8e4


def test_qcn_increases_by_byte_counter_and_timer() -> None:
    """§11.2 without congestion (σ = 0), r the frame rate one loop earlier: R_C closes the gap to
    R_T at (R_T − R_C)/2·(r/BC + 1/T) and R_T climbs at R_AI·(r/BC + 1/T) — the byte counter's
    cycles plus the timer's. zhb with the hotspot over at 110 ms and sources clamped to their
    offered 0.567 Gb/s: the queue drains and Fb turns positive. R_C recovers from 0.16 Gb/s to
    the offered rate within 0.2 ms (the timer's 1/15 ms is a third of its pace at first), then R_T
    climbs from 8.2 Gb/s at 2.69 Gb/s² (the timer's share 12 %) without reaching the line rate by
    140 ms."""
    p = fluid_params("zhb-og-single-hop", {"cm.scheme": "qcn",
                                           "hotspots": [{"node": "1", "rate": 0.2, "start": "100ms", "end": "110ms"}]})
    run = simulate(p, t_start=0.095, t_end=0.14, record_dt=1e-5, sources="clamp")
    assert run.target is not None and p.timer_s == 0.015
    t, fb, current, target = run.t, run.fb[:, 0], run.limiter[:, 0, 0], run.target[:, 0, 0]
    tau = float(np.ravel(p.tau_s)[0])

    def increase_events_per_s(i: np.ndarray) -> np.ndarray:
        frames_per_s = np.interp(t[i] - tau, t, run.rates[:, 0, 0]) / p.frame_bits
        return frames_per_s / p.bc_frames + 1.0 / p.timer_s

    calm = np.array([np.all(fb[(t >= at - 2 * tau - run.h) & (t <= at)] >= 0.0) for at in t]) & (t > 0.105)
    closing = np.flatnonzero(calm[:-1] & calm[1:] & (current[1:] < p.groups[0].offered_bps))
    assert closing.size > 10 and current[closing[0]] < 0.2e9
    expected = [0.5 * (target[i] - current[i]) * increase_events_per_s(i) for i in (closing, closing + 1)]
    assert np.allclose(np.diff(current)[closing] / np.diff(t)[closing], (expected[0] + expected[1]) / 2, rtol=5e-3)

    later = t > 0.115
    assert np.all(calm[later]) and np.all(target[later] < 10e9)
    climb = np.diff(target[later]) / np.diff(t[later])
    assert np.allclose(climb, p.r_ai * increase_events_per_s(np.flatnonzero(later)[:-1]), rtol=1e-6)


def test_bcn_negative_feedback_gated_below_qeq() -> None:
    """D3 (`cm.negative_only_above_qeq`): no negative feedback while the CP's queue is at or
    below Qeq. On kd's onset the derivative term makes Fb negative long before the queue
    reaches Qeq: without the gate the limiters are cut over 50 us earlier; with it they stay at
    the line rate until the queue has passed Qeq. Positive feedback is not gated: both settle at
    Qeq (mean over 20–40 ms within 1 %)."""
    runs = {}
    for gate in (False, True):
        p = fluid_params("kd-symmetric-single-hs", {"cm.scheme": "bcn", "cm.negative_only_above_qeq": gate})
        run = simulate(p, t_end=0.04, record_dt=1e-6)
        above = run.t[np.argmax(run.queue[:, 0] > p.qeq)]
        first_cut = run.t[np.argmax(run.limiter[:, 0, 0] < 10e9)]
        assert np.mean(run.queue[window_mask(run.t, (0.02, 0.04)), 0]) == pytest.approx(p.qeq, rel=0.01)
        runs[gate] = (first_cut, above)
    assert runs[False][0] < runs[False][1] - 50e-6
    assert runs[True][0] >= runs[True][1]


def test_a_finite_source_buffer_holds_the_backlog_at_its_size() -> None:
    """A shared adapter buffer of 200 KB (`nic.ingress`): a source's backlog fills it within 2 ms
    of kd's onset and is held there (the excess is dropped) while its source offers more than its
    limiter lets out; once the sources stop at 20 ms it drains, within 1 ms."""
    p = fluid_params("kd-symmetric-single-hs", {"cm.scheme": "bcn", "nic.ingress": "shared", "nic.ingress_size": "200KB",
                                                "traffic.stop": "20ms"})
    assert p.backlog_cap_bytes == 200e3
    run = simulate(p, t_end=0.03)
    assert run.backlog is not None
    b = run.backlog[:, 0, 0]
    assert b.max() == 200e3 and np.all(b[window_mask(run.t, (0.002, 0.0199))] == 200e3)
    assert np.all(b[run.t > 0.021] == 0.0)


def test_qcn_rates_follow_11_2_step_by_step_under_congestion() -> None:
    """§11.2's two rate equations, written out here, against the integrated trajectory of kd in
    congestion (the linear sampling rule, so that σ is continuous in Fb; a 200 us timer, so that
    a timer period is T·r ≈ 41 frames, shorter than BC = 100, and D8's target update waits for
    it: u = (1 − σ)^min(BC, T·r)). Each step's change of R_T and R_C, over 2–20 ms, is the mean of
    the equations' right-hand sides at its two ends, with Fb, σ and r read one loop earlier, to 1 %
    of the larger of the two. Steps left out: those over which the delayed Fb changes sign (σ
    jumps) or is clamped, and those with a rate at a bound of its projection."""
    p = fluid_params("kd-symmetric-single-hs", {"cm.scheme": "qcn", "cm.sampling": "linear", "cm.timer": "200us"})
    run = simulate(p, t_end=0.02, record_dt=1e-9)
    assert run.target is not None and p.extra["target_update"] == "after_increase"
    t, fb, send = run.t, run.fb[:, 0], run.rates[:, 0, 0]
    current, target = run.limiter[:, 0, 0], run.target[:, 0, 0]

    def slopes(i: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        f = np.interp(t[i] - p.tau_s, t, fb)
        sigma = np.where(f < 0, p.pmin + (p.pmax - p.pmin) * np.clip(-f / p.fbmax, 0.0, 1.0), 0.0)
        r = np.interp(t[i] - p.tau_s, t, send) / p.frame_bits
        frames = p.timer_s * r

        def completions(n: np.ndarray | float) -> np.ndarray:  # g(σ, n) per frame, 1/n where σ = 0
            with np.errstate(invalid="ignore", divide="ignore"):
                return np.where(sigma > 0, sigma / ((1 - sigma) ** -n - 1), 1 / n)

        bc, tm = r * completions(p.bc_frames), r * completions(frames)
        u = (1 - sigma) ** np.minimum(p.bc_frames, frames)
        ai = bc * (1 - sigma) ** (p.f_stages * p.bc_frames) + tm * (1 - sigma) ** (p.f_stages * frames)
        d_target = -(target[i] - current[i]) * r * sigma * u + p.r_ai * ai
        d_current = -np.minimum(p.gd * np.abs(f), p.min_dec) * current[i] * r * sigma + (target[i] - current[i]) / 2 * (bc + tm)
        return d_target, d_current, f, frames

    i = np.arange(1, t.size - 2)
    start, end = slopes(i), slopes(i + 1)
    assert np.all(fb[i] != 0)
    smooth = ((t[i] > 0.002) & (np.sign(fb[i - 1]) == np.sign(fb[i])) & (np.sign(fb[i]) == np.sign(fb[i + 1]))
              & (np.abs(start[2]) < p.fbmax) & (np.abs(end[2]) < p.fbmax)
              & (np.minimum(current[i], current[i + 1]) > 1.01 * p.rmin) & (np.maximum(target[i], target[i + 1]) < 10e9))
    assert smooth.sum() > 600 and np.all((start[3][smooth] > 35) & (start[3][smooth] < 45))
    congested = smooth & (start[2] < 0)
    assert congested.sum() > 300  # half the steps: the loop rings around Fb = 0
    dt = t[i + 1] - t[i]
    for k, rate in enumerate((target, current)):
        measured = (rate[i + 1] - rate[i]) / dt
        expected = (start[k] + end[k]) / 2
        scale = np.maximum(np.abs(start[k]), np.abs(end[k]))
        assert np.all(np.abs(measured - expected)[smooth] < 0.01 * scale[smooth]), ("R_T", "R_C")[k]


@pytest.mark.parametrize("scheme", ["bcn", "qcn"])
def test_flows_split_into_groups_follow_the_same_trajectory(scheme: str) -> None:
    """A state per group of identical flows: kd's four flows as one group of four or as groups of
    one and three give the same queue, and every group the same rates, limiter, target rate and
    backlog (a layout that let one group's columns overlap another's would not)."""
    p = fluid_params("kd-symmetric-single-hs", {"cm.scheme": scheme, "traffic.stop": "20ms"})
    (group,) = p.groups
    split = dataclasses.replace(p, groups=(dataclasses.replace(group, flows=group.flows[:1]),
                                           dataclasses.replace(group, flows=group.flows[1:])))
    one, two = simulate(p, t_end=0.03), simulate(split, t_end=0.03)
    assert np.allclose(two.queue, one.queue, rtol=1e-9, atol=1e-6)
    assert np.allclose(two.aggregate, one.aggregate, rtol=1e-9)
    for name in ("rates", "limiter", "target", "backlog"):
        a, b = getattr(one, name), getattr(two, name)
        if a is None:
            assert scheme == "bcn" and name == "target" and b is None
            continue
        assert b.shape[2] == 2 and np.allclose(b, np.repeat(a, 2, axis=2), rtol=1e-9, atol=1e-6), name


@pytest.mark.parametrize("delays", [("100us",), ("100us", "50us")])
def test_nothing_reacts_to_the_hotspot_before_a_loop_delay(delays: tuple[str, ...]) -> None:
    """Causality (zhb, QCN, the hotspot at 0.1 s): a source learns of the service drop only
    through its CP's feedback, which sees the delayed queue, arrivals and service; so its rate
    stays at the line rate until t_on + τ and falls after. On one delay and on a grid of two
    (each point with its own)."""
    params = [fluid_params("zhb-og-single-hop", {"cm.scheme": "qcn", "links.delay": d}) for d in delays]
    run = simulate(params, t_start=0.099, t_end=0.1005, record_dt=1e-5)
    for i, p in enumerate(params):
        tau = float(np.ravel(p.tau_s)[0])
        before = run.t < 0.1 + tau - 2e-6
        assert np.all(run.limiter[before, i, 0] == 10e9), p.tau_s
        assert run.limiter[-1, i, 0] < 9.7e9


def test_a_self_increase_drift_lifts_the_fluid_equilibrium() -> None:
    """D18's drift (here 100 Mb/s every 1 ms) adds to the rates: to balance it the CP must send
    more, so the queue settles above Qeq — for QCN, whose two rates both take it, with the
    target rate above the current one, and for BCN (kd, mean over 30-60 ms; without drift both
    sit at the set point)."""
    runs = {}
    for scheme in ("qcn", "bcn"):
        for drift in ("0", "100Mbps"):
            p = fluid_params("kd-symmetric-single-hs", {"cm.scheme": scheme, "cm.drift_rate": drift, "cm.drift_period": "1ms"})
            run = simulate(p, t_end=0.06)
            m = window_mask(run.t, (0.03, 0.06))
            split = None if run.target is None else np.mean(run.target[m, 0, 0]) / np.mean(run.limiter[m, 0, 0])
            runs[scheme, drift] = (np.mean(run.queue[m, 0]) / p.qeq, split)
    assert runs["qcn", "0"][0] == pytest.approx(1.0, abs=0.01) and runs["qcn", "0"][1] == pytest.approx(1.0, abs=0.001)
    assert runs["qcn", "100Mbps"][0] > 1.25 and runs["qcn", "100Mbps"][1] > 1.04
    assert runs["bcn", "0"][0] == pytest.approx(1.0, abs=0.01) and runs["bcn", "100Mbps"][0] > 1.05


def test_the_bcn_fixed_point_says_when_the_flows_are_limited() -> None:
    """§11.1's fixed point λ0 = μ/N_h holds only when every hot flow offers more than λ0 and λ0
    is at least Rmin: zhb's 15 flows offer 0.567 Gb/s for 2 Gb/s (λ0 = 0.133, limited); with
    Rmin = 200 Mb/s λ0 is below the floor; with the hot port at 9 Gb/s they offer less than
    λ0 = 0.6 Gb/s. Neither of the last two is limited."""
    def fixed(**overrides: object) -> dict[str, object]:
        return bcn_equilibrium(fluid_params("zhb-og-single-hop", {"cm.scheme": "bcn", **overrides}))

    assert fixed() == {"queue_bytes": 150_000.0, "rate_bps": pytest.approx(2e9 / 15), "limited": True}
    assert fixed(**{"cm.rmin": "200Mbps"})["limited"] is False
    slow = fixed(hotspots=[{"node": "1", "rate": 0.9, "start": "100ms", "end": "500ms"}])
    assert slow["rate_bps"] == pytest.approx(0.6e9) and slow["limited"] is False
    # at the edges: λ0 exactly Rmin is still a fixed point; flows offering exactly λ0 are not limited
    floor = fixed(**{"cm.rmin": "100Mbps", "hotspots": [{"node": "1", "rate": 0.15, "start": "100ms", "end": "500ms"}]})
    assert floor == {"queue_bytes": 150_000.0, "rate_bps": 1e8, "limited": True}
    edge = fixed(hotspots=[{"node": "1", "rate": 0.85, "start": "100ms", "end": "500ms"}])
    assert edge["rate_bps"] == 8.5e9 / 15 and edge["limited"] is False


def test_halving_the_step_changes_the_trajectory_by_less_than_one_percent() -> None:
    """The default step against half of it on kd with a 101 us loop (PM = 0.03, lightly damped,
    so phase errors would accumulate): after the onset (t > 20 ms) the queues differ by less
    than 1 % of Qeq. During the onset the queue ramps at 1.25 GB/s into the buffer projection,
    whose instant is step-quantised, so a pointwise comparison there is meaningless."""
    p = fluid_params("kd-symmetric-single-hs", {"cm.scheme": "bcn", "links.delay": "50us"})
    a = simulate(p, t_end=0.04)
    b = simulate(p, t_end=0.04, h=a.h / 2)
    qb = np.interp(a.t, b.t, b.queue[:, 0])
    late = a.t > 0.02
    assert np.max(np.abs(a.queue[late, 0] - qb[late])) < 0.01 * p.qeq


def test_qcn_fluid_settles_at_the_set_point_like_the_packet_engine() -> None:
    """QCN (§11.2 with D8's target-rate rule) on kd-symmetric-single-hs, MIB defaults: the fluid
    model settles at q = Qeq and R_C = μ/N within 2 % by 30 ms; the packet mean over the same
    span lies within 10 % of Qeq of it. Why 10 %: QntzFb = floor(|Fb|·63/Fbmax) is 0 while
    −Fb < Fbmax/63 = 11.9 KB, so the packet CP sends nothing until the queue is up to ~12 KB above
    the fluid's set point (the fluid model uses the unquantised mean)."""
    p = fluid_params("kd-symmetric-single-hs", {"cm.scheme": "qcn"})
    run = simulate(p, t_end=0.06)
    m = window_mask(run.t, (0.03, 0.06))
    assert np.mean(run.queue[m, 0]) == pytest.approx(p.qeq, rel=0.02)
    assert np.mean(run.rates[m, 0, 0]) == pytest.approx(p.fair_bps, rel=0.02)
    r = cnsim.run("kd-symmetric-single-hs", set={"cm.scheme": "qcn", "metrics.window": ["30ms", "60ms"]}, duration="0.06s")
    assert abs(r.summary["queue_bytes"]["hot"]["mean"] - np.mean(run.queue[m, 0])) < 0.1 * p.qeq


# --------------------------------------------------------------------------- packet vs fluid

#: kd-symmetric-single-hs grid: (links.delay, W) → loop 2·delay + 1.25 us
KD_GRID = [("4us", 2.0), ("50us", 2.0), ("100us", 2.0), ("100us", 3.0), ("100us", 4.0)]


@pytest.fixture(scope="module")
def kd_grid() -> dict[tuple[str, float], dict[str, float | None]]:
    """Packet runs (0.2 s each, ~0.1 s wall) and the fluid model of the five points, integrated
    in ONE vectorised call (grid points differ in τ and W)."""
    params = [fluid_params("kd-symmetric-single-hs", {"cm.scheme": "bcn", "links.delay": d, "cm.w": w}) for d, w in KD_GRID]
    run = simulate(params)
    out = {}
    for i, (d, w) in enumerate(KD_GRID):
        p = params[i]
        m = window_mask(run.t, p.window_s)
        r = cnsim.run("kd-symmetric-single-hs", set={"cm.scheme": "bcn", "links.delay": d, "cm.w": w, "metrics.bin": "100us"})
        q = r.series("queue").filter(pc.equal(r.series("queue")["queue"], "S1/EP4"))
        tq, bq = q["t_s"].to_numpy(), q["bytes"].to_numpy()
        mq = window_mask(tq, p.window_s)
        lin = bcn_linear(p)
        out[(d, w)] = {
            "pm": lin["phase_margin_rad"],
            "damped_period": lin["damped_period_s"],
            "fluid_mean": float(np.mean(run.queue[m, i])),
            "fluid_std": float(np.std(run.queue[m, i])),
            "fluid_std_late": float(np.std(run.queue[window_mask(run.t, (0.11, 0.2)), i])),
            "fluid_period": dominant_period(run.t[m], run.queue[m, i]),
            "packet_mean": r.summary["queue_bytes"]["hot"]["mean"],
            "packet_std": r.summary["queue_bytes"]["hot"]["std"],
            "packet_period": dominant_period(tq[mq], bq[mq]),
            "packet_hot_gbps": r.summary["throughput_gbps"]["hot_port"],
            "fluid_hot_gbps": float(np.mean(run.aggregate[m, i]) / 1e9),
        }
    print("\n" + "\n".join(f"kd {k}: {v}" for k, v in out.items()))
    return out


def test_kd_mean_hot_queue_agrees(kd_grid) -> None:
    """Mean hot queue, packet vs fluid, within 5 % of Qeq (7.5 KB) on every kd point.

    Why 5 %: where the loop is stable both sit at Qeq, and the packet queue's noise is small
    (std 1–20 KB, the four flows share fairly); where it oscillates both average the same
    limit cycle, whose mean depends on how long the queue sits empty (underrun): the 100 us bins
    and the 50-frame sampling interval (60 us, 1.6 % of a 3.6 ms period) blur it by a few KB."""
    for key, v in kd_grid.items():
        assert abs(v["packet_mean"] - v["fluid_mean"]) < 0.05 * 150_000, key


def test_kd_oscillation_period_agrees(kd_grid) -> None:
    """Where the packet queue oscillates (autocorrelation peak ≥ 0.2), the fluid trajectory's
    period and the linear damped period 2π/Im(s*) agree with it within 10 %: the bins are 100 us
    (3 % of the ~3.5 ms period), one sampling interval is 60 us, and the limit cycle's period
    grows with its amplitude, which the linearisation ignores."""
    checked = 0
    for key, v in kd_grid.items():
        # the 9 us loop is stable with a wide margin: its queue is noise, and an autocorrelation
        # peak there is chance (it comes and goes with a 5e-6 change of the gains)
        if v["packet_period"] is None or key[0] == "4us":
            continue
        checked += 1
        assert v["fluid_period"] == pytest.approx(v["packet_period"], rel=0.10), key
        assert v["damped_period"] == pytest.approx(v["packet_period"], rel=0.10), key
    assert checked >= 2  # the 100 us and 200 us loops at W = 2 oscillate in both


def test_a_longer_loop_destabilises_at_fixed_w(kd_grid) -> None:
    """W = 2: the 9 us loop has PM > 0, the 201 us loop PM < 0; the queue's std grows more than
    ten-fold in both the packet run and the fluid model, and the hot port underruns."""
    short, long_ = kd_grid[("4us", 2.0)], kd_grid[("100us", 2.0)]
    assert short["pm"] > 0 > long_["pm"]
    assert long_["packet_std"] > 10 * short["packet_std"]
    assert long_["fluid_std"] > 10 * short["fluid_std"]
    assert long_["packet_hot_gbps"] < 9.95 and long_["fluid_hot_gbps"] < 9.95


def test_a_larger_w_restores_stability(kd_grid) -> None:
    """At the 201 us loop the model needs W > 3.5: W = 3 still oscillates, W = 4 is stable —
    in the linear margin, in the fluid model and in the packet simulator: the std is below a
    quarter of the W = 2 oscillation (W = 4 has PM = 0.045 rad, so the fluid's onset transient
    rings for tens of ms and the packet loop keeps noise-driven ringing of ~10–20 KB); W = 3
    keeps more than half of it. The fluid at W = 4 decays (a limit cycle would not)."""
    w2, w3, w4 = (kd_grid[("100us", w)] for w in (2.0, 3.0, 4.0))
    assert w2["pm"] < w3["pm"] < 0 < w4["pm"]
    assert w4["fluid_std"] < 0.25 * w2["fluid_std"] and w3["fluid_std"] > 0.5 * w2["fluid_std"]
    assert w4["fluid_std_late"] < 0.5 * w4["fluid_std"]
    assert w3["fluid_std_late"] > 0.8 * w3["fluid_std"]
    assert w4["packet_std"] < 0.25 * w2["packet_std"] and w3["packet_std"] > 0.5 * w2["packet_std"]


@pytest.fixture(scope="module")
def zhb_runs() -> dict[str, cnsim.Result]:
    """Packet runs of zhb-og-single-hop with BCN at Gd = 1, 2.5 (the preset) and 10 Gd0."""
    return {g: cnsim.run("zhb-og-single-hop", set={"cm.scheme": "bcn", "cm.gd": f"{g}*gd0", "metrics.bin": "100us"})
            for g in ("1", "2.5", "10")}


def _psd_period(r: cnsim.Result, window: tuple[float, float]) -> float:
    """Peak of a Welch periodogram (100 ms Hann segments, half overlap) of the hot queue."""
    q = r.series("queue").filter(pc.equal(r.series("queue")["queue"], "S1/1"))
    t, b = q["t_s"].to_numpy(), q["bytes"].to_numpy()
    x = b[window_mask(t, window)]
    x = x - x.mean()
    seg = 1000
    spec = np.mean([np.abs(np.fft.rfft(x[i:i + seg] * np.hanning(seg))) ** 2 for i in range(0, x.size - seg + 1, seg // 2)], axis=0)
    f = np.fft.rfftfreq(seg, t[1] - t[0])
    k = 2 + int(np.argmax(spec[2:]))
    return float(1 / f[k])


def test_zhb_mean_queue_and_period(zhb_runs) -> None:
    """zhb-og-single-hop, BCN (1 us links): the fluid model sits at Qeq (stable, PM 0.12–0.36 rad).

    Mean hot queue: the packet mean lies within one standard deviation of its own fluctuations
    from the fluid's Qeq, and within 10 % of Qeq at the deck's Gd (2.5 Gd0). The packet queue is
    noise-driven (std 5–28 KB) and the loop is asymmetric — the AI side is 10–30× stiffer than
    the MD side (K_AI/K_MD) — so excursions above Qeq last longer than those below and the mean
    sits above Qeq by a fraction of the std (at 1 Gd0: +26 KB with std 28 KB); the fluid model,
    the average of a sampled process, has no such bias.

    Period: the packet queue's spectral peak against the switched-loop estimate
    π/ω_MD + π/ω_AI (the limit cycle spends half a cycle on each side of Fb = 0). The symmetric
    model assumes N_h equal flows; the packet simulator's BCN splits μ unfairly (flows stuck
    near Rmin, docs/decisions.md), which raises K_MD ∝ Σλ_f² by ~2×. Corrected with the packet
    run's own per-flow rates, the estimate agrees within 25 % (the spectral resolution is
    10 Hz, i.e. ±6–12 % at these periods); uncorrected, it is 1.3–1.5× too long (docs/fluid.md).
    Both decrease with Gd, as the model says. The period is compared where the MD side rings
    (PM < 0.2 rad: 1 and 2.5 Gd0); at 10 Gd0 (PM = 0.36 rad) the packet spectrum is broad and
    has no dominant peak near the model's (docs/fluid.md), so only the mean is checked there."""
    periods = {}
    for g, r in zhb_runs.items():
        p = fluid_params("zhb-og-single-hop", {"cm.scheme": "bcn", "cm.gd": f"{g}*gd0"})
        lin = bcn_linear(p)
        assert lin["stable"]
        s = r.summary
        hot = s["queue_bytes"]["hot"]
        assert abs(hot["mean"] - p.qeq) < hot["std"] or abs(hot["mean"] - p.qeq) < 0.1 * p.qeq
        if g == "2.5":
            assert abs(hot["mean"] - p.qeq) < 0.1 * p.qeq
        if lin["phase_margin_rad"] >= 0.2:
            continue
        pk = _psd_period(r, p.window_s)
        rates = np.array(list(s["throughput_gbps"]["per_flow"].values())) * 1e9
        k_md = lin["sides"]["md"]["K_per_s2"] * np.sum(rates**2) / (p.n_hot * p.fair_bps**2)
        k_ai = lin["sides"]["ai"]["K_per_s2"]
        corrected = np.pi / np.sqrt(k_md) + np.pi / np.sqrt(k_ai)
        print(f"\nzhb {g} Gd0: packet mean {s['queue_bytes']['hot']['mean']:.0f} B, spectral period {pk * 1e3:.1f} ms; "
              f"switched estimate {lin['switched_period_s'] * 1e3:.1f} ms, with the packet split {corrected * 1e3:.1f} ms, "
              f"linear MD 2π/ω_c {lin['period_s'] * 1e3:.1f} ms")
        assert corrected == pytest.approx(pk, rel=0.25)
        assert 1.0 < lin["switched_period_s"] / pk < 2.0
        periods[g] = (pk, lin["switched_period_s"])
    assert periods["1"][0] > periods["2.5"][0] and periods["1"][1] > periods["2.5"][1]


# --------------------------------------------------------------------------- the command


def test_cnsim_fluid_compare_writes_the_contract_files(tmp_path: Path) -> None:
    from cnsim.cli import app
    from typer.testing import CliRunner

    out = tmp_path / "f"
    res = CliRunner().invoke(app, ["fluid", "kd-symmetric-single-hs", "--set", "cm.scheme=bcn", "--set", "links.delay=100us",
                                   "--compare", "--out", str(out)])
    assert res.exit_code == 0, res.output
    doc = json.loads((out / "fluid.json").read_text())
    for key in ("scheme", "queue_mean_bytes", "rate_mean_gbps", "phase_margin_rad", "crossover_rad_s", "period_s", "stable"):
        assert key in doc
    assert doc["scheme"] == "bcn" and doc["stable"] is False and doc["phase_margin_rad"] < 0
    table = pq.read_table(out / "fluid.parquet")
    assert table.column_names == ["t_s", "quantity", "value"]
    assert {"queue_bytes", "rate_gbps"} <= set(table.column("quantity").to_pylist())
    for name in ("fluid.png", "compare.png", "stability_map_w_tau.png", "stability_map_gd_ps.png"):
        assert (out / name).stat().st_size > 10_000
    assert (out / "packet" / "summary.json").exists()
    assert doc["compare"]["packet"]["queue_mean_bytes"] == pytest.approx(doc["queue_mean_bytes"], rel=0.1)
    # what it prints: the verdict with its margin and period, the fluid and packet queues, the folder
    pk = doc["compare"]["packet"]
    period = "n/a" if not pk["period_s"] else f"{pk['period_s'] * 1e3:.2f} ms"
    assert res.stdout.splitlines() == [
        f"kd-symmetric-single-hs — bcn fluid model: unstable, phase margin {doc['phase_margin_rad']:.3f} rad at "
        f"{doc['crossover_rad_s']:.4g} rad/s, period {doc['period_s'] * 1e3:.2f} ms",
        f"  fluid: hot queue mean {doc['queue_mean_bytes'] / 1e3:.1f} KB, per-flow rate {doc['rate_mean_gbps']:.4g} Gb/s",
        f"  packet: hot queue mean {pk['queue_mean_bytes'] / 1e3:.1f} KB (std {pk['queue_std_bytes'] / 1e3:.1f}), period {period}",
        f"  results: {out}",
    ]


def test_the_linear_verdict_needs_both_sides_and_the_w_found_is_the_edge() -> None:
    """bcn_linear: stable only when both sides are, the limiting side is the one with the smaller
    margin, τ_max the smaller of the two, the switched period half a period on each side; and
    w_needed's W is the stability edge itself (bisected), or the smallest W tried when that one
    is already stable."""
    p = fluid_params("zhb-og-single-hop", {"cm.scheme": "bcn"})
    lin = bcn_linear(p)
    md, ai = lin["sides"]["md"], lin["sides"]["ai"]
    assert lin["switched_period_s"] == pytest.approx(np.pi / np.sqrt(md["K_per_s2"]) + np.pi / np.sqrt(ai["K_per_s2"]), rel=1e-12)
    assert lin["max_stable_delay_s"] == min(md["max_stable_delay_s"], ai["max_stable_delay_s"])
    # a 500 us loop: the AI side (crossover 2120 rad/s) loses its margin, the MD side (307 rad/s) keeps some
    late = bcn_linear(p.with_(tau_s=500e-6))
    assert late["sides"]["ai"]["phase_margin_rad"] < 0 < late["sides"]["md"]["phase_margin_rad"]
    assert late["stable"] is False and late["limiting_side"] == "ai"
    assert late["phase_margin_rad"] == late["sides"]["ai"]["phase_margin_rad"]
    assert bcn_linear(p.with_(gi=0.0))["switched_period_s"] is None  # no AI side, no switching
    fixed = {"cm.scheme": "bcn", "cm.gd": 6.6667e-7, "cm.gi": 1.3333e-3}

    def pm(w: float, tau: float) -> float:
        q = fluid_params("kd-symmetric-single-hs", {**fixed, "cm.w": w}, engine_check=False).with_(tau_s=tau)
        return float(bcn_linear(q)["phase_margin_rad"])

    need = w_needed("kd-symmetric-single-hs", 50e-6, fixed)["w"]
    assert pm(need * (1 - 1e-6), 50e-6) <= 0 < pm(need, 50e-6)
    assert w_needed("kd-symmetric-single-hs", 1e-6, fixed)["w"] == pytest.approx(0.05)  # the smallest W is stable
