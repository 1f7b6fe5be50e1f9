"""What the BCN and QCN fluid models share, checked directly (`cnsim/fluid/grid.py`, spec/algorithms.md
§11.1–§11.2 and docs/fluid.md): the grid's service rate and activity in time, the sum over flow
groups, the sampling probability of each sampling rule, the feedback Fb the congestion point
computes from the queue and its rate of change, and the byte counter's cycle rate."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
from cnsim.fluid import FluidParams, fluid_params
from cnsim.fluid.grid import _cycles, _Grid


@pytest.fixture(scope="module")
def zhb() -> FluidParams:
    return fluid_params("zhb-og-single-hop", {"cm.scheme": "bcn"})


def test_a_grid_takes_one_scheme_and_one_group_layout(zhb: FluidParams) -> None:
    qcn = fluid_params("zhb-og-single-hop", {"cm.scheme": "qcn"})
    with pytest.raises(ValueError, match="same scheme and number of flow groups"):
        _Grid([zhb, qcn])
    (group,) = zhb.groups
    with pytest.raises(ValueError, match="same scheme and number of flow groups"):
        _Grid([zhb, replace(zhb, groups=(group, group))])


def test_the_service_rate_follows_each_points_hotspot_window(zhb: FluidParams) -> None:
    """zhb serves node 1 at 20 % from 0.1 s to (not including) 0.5 s. A point whose hotspot runs
    0.2–0.3 s at 50 % differs: times may be one scalar or one per point, alike."""
    g = _Grid([zhb])
    assert g.uniform_windows
    start, end, _ = zhb.mu_windows[0]
    assert (float(g.mu(start)[0, 0]), float(g.mu(end)[0, 0])) == (pytest.approx(2e9), 10e9)  # [start, end)
    for t, mu in ((0.0, 10e9), (0.1, 2e9), (0.3, 2e9), (0.49999, 2e9), (0.5, 10e9)):
        assert float(g.mu(t)[0, 0]) == pytest.approx(mu, rel=1e-12), t
    other = replace(zhb, mu_windows=((0.2, 0.3, 0.5),))
    two = _Grid([zhb, other])
    assert not two.uniform_windows
    assert two.mu(0.25)[:, 0].tolist() == pytest.approx([2e9, 5e9])
    assert two.mu(0.15)[:, 0].tolist() == pytest.approx([2e9, 10e9])
    assert two.mu(0.2)[:, 0].tolist() == pytest.approx([2e9, 5e9])  # from its start
    assert two.mu(0.3)[:, 0].tolist() == pytest.approx([2e9, 10e9])  # to its end, not including it
    assert two.mu(np.array([[0.15], [0.25]]))[:, 0].tolist() == pytest.approx([2e9, 5e9])
    assert _Grid([replace(zhb, mu_windows=())]).mu(0.2)[0, 0] == 10e9  # no hotspot: the link rate


def test_activity_and_the_sum_over_groups() -> None:
    """Two groups (a flow of 1 Gb/s offered from 10 to 50 ms; one of 6 Gb/s from 20 ms): active
    on [start, stop); the aggregate is Σ count × rate."""
    kd = fluid_params("kd-symmetric-single-hs", {"cm.scheme": "bcn"})
    (group,) = kd.groups
    a = replace(group, flows=group.flows[:1], start_s=0.01, stop_s=0.05)
    b = replace(group, flows=group.flows[1:], start_s=0.02)
    g = _Grid([replace(kd, groups=(a, b))])
    assert g.active(0.005).tolist() == [[0.0, 0.0]]
    assert g.active(0.01).tolist() == [[1.0, 0.0]]
    assert g.active(0.02).tolist() == [[1.0, 1.0]]
    assert g.active(0.05).tolist() == [[0.0, 1.0]]
    assert g.active(np.array([[0.03]])).tolist() == [[1.0, 1.0]]
    assert g.total(np.array([[1e9, 2e9]])).tolist() == [[1e9 + 3 * 2e9]]
    one = _Grid([kd])
    assert one.active(0.1).tolist() == [[1.0]] and one.active(0.2).tolist() == [[0.0]]
    assert one.active(group.start_s).tolist() == [[1.0]] and one.active(group.stop_s).tolist() == [[0.0]]
    assert one.total(np.array([[2.5e9]])).tolist() == [[1e10]]
    # one group but a point whose flows start later: the general path
    late = _Grid([kd, replace(kd, groups=(replace(group, start_s=0.05),))])
    assert late.active(0.01).tolist() == [[1.0], [0.0]]


def test_linear_sampling_runs_from_pmin_at_fb_0_to_pmax_at_minus_fbmax() -> None:
    """QCN's linear rule (§4.1 of the spec's sampling): p = Pmin + (Pmax − Pmin)·min(|Fb|/Fbmax, 1)
    for Fb < 0, Pmin otherwise."""
    p = fluid_params("zhb-og-single-hop", {"cm.scheme": "qcn", "cm.sampling": "linear", "cm.pmin": 0.01, "cm.pmax": 0.1})
    g = _Grid([p])
    fbmax = p.fbmax
    fb = np.array([[0.0], [fbmax / 2], [-fbmax / 4], [-fbmax / 2], [-fbmax], [-2 * fbmax]])
    g6 = _Grid([p] * 6)
    assert g6.sampling_p(fb, np.zeros((6, 1)))[:, 0].tolist() == pytest.approx([0.01, 0.01, 0.0325, 0.055, 0.1, 0.1])
    assert g.sampling == "linear"


def test_table_sampling_picks_the_interval_of_fb_eighths() -> None:
    """The table of §4.2: QntzFb = ⌊|Fb|·63/Fbmax⌋, its top three bits pick one of 150, 75, 50,
    37.5, 30, 25, 21.5, 18.5 KB, and p is a frame over that interval."""
    p = fluid_params("zhb-og-single-hop", {"cm.scheme": "qcn", "cm.sampling": "table"})
    intervals = [150e3, 75e3, 50e3, 37.5e3, 30e3, 25e3, 21.5e3, 18.5e3]
    quanta = [0, 7, 8, 15, 16, 24, 32, 40, 48, 56, 63]
    # near the top of each quantum (a 64th instead of a 63rd would cross into the next), so the
    # floor is the quantum itself; the last is −Fbmax exactly
    fb = np.array([[-(k + 0.9) * p.fbmax / 63] for k in quanta])
    fb[-1, 0] = -p.fbmax
    g = _Grid([p] * len(quanta))
    got = g.sampling_p(fb, np.zeros((len(quanta), 1)))[:, 0]
    want = [1500 / intervals[min(k // 8, 7)] for k in quanta]
    assert got.tolist() == pytest.approx(want, rel=1e-12)
    assert _Grid([p]).sampling_p(np.array([[1e6]]), np.zeros((1, 1)))[0, 0] == pytest.approx(0.01)  # Fb > 0: the base
    # Fb below −Fbmax (the congestion point clamps it first) still reads the last interval
    assert _Grid([p]).sampling_p(np.array([[-2 * p.fbmax]]), np.zeros((1, 1)))[0, 0] == pytest.approx(1500 / 18.5e3)
    big = replace(p, frame_bytes=20e3)  # a frame longer than the shortest interval: sampled every time
    assert _Grid([big]).sampling_p(np.array([[-p.fbmax]]), np.zeros((1, 1)))[0, 0] == 1.0


def test_random_sampling_is_oversampled_only_above_qeq(zhb: FluidParams) -> None:
    assert _Grid([zhb]).sampling_p(np.zeros((1, 1)), np.array([[1e6]]))[0, 0] == 0.02
    over = _Grid([replace(zhb, oversample=4.0)])
    q = np.array([[zhb.qeq - 1.0]])
    assert over.sampling_p(np.zeros((1, 1)), q)[0, 0] == 0.02
    assert over.sampling_p(np.zeros((1, 1)), q + 1.0)[0, 0] == 0.02
    assert over.sampling_p(np.zeros((1, 1)), q + 2.0)[0, 0] == 0.08


def test_feedback_is_the_offset_plus_w_times_the_change_over_a_sampling_interval(zhb: FluidParams) -> None:
    """Fb = −((q − Qeq) + w·Δq) with Δq the queue's change over one sampling interval: the
    arrival excess (A − μ)/8 bytes a second times L/(p·A). zhb: Qeq 150 KB, w 2, L = 12 000
    bit, p = 0.02. Clamped to ±Fbmax = ±750 KB."""
    g = _Grid([zhb])
    mu, p = np.array([[2e9]]), np.array([[0.02]])

    def fb(q: float, agg: float) -> float:
        return float(g.feedback(np.array([[q]]), np.array([[agg]]), mu, p)[0, 0])

    spacing = 12_000 / (0.02 * 3e9)
    assert fb(200e3, 3e9) == pytest.approx(-(50e3 + 2 * spacing * 1e9 / 8), rel=1e-12)
    assert fb(100e3, 2e9) == pytest.approx(50e3, rel=1e-12)
    assert fb(100e3, 1e9) == pytest.approx(-(-50e3 + 2 * 12_000 / (0.02 * 1e9) * (-1e9 / 8)), rel=1e-12)
    assert fb(2e6, 3e9) == -750e3 and fb(0.0, 0.5e9) == pytest.approx(150e3)  # clamped / empty and falling: Δq = 0
    # an empty queue that fills has its Δq; a full buffer that keeps filling has none
    assert fb(0.0, 3e9) == pytest.approx(150e3 - 2 * spacing * 1e9 / 8, rel=1e-12)
    small = _Grid([replace(zhb, buffer_bytes=300e3)])
    assert float(small.feedback(np.array([[300e3]]), np.array([[3e9]]), mu, p)[0, 0]) == pytest.approx(-150e3)
    assert float(small.feedback(np.array([[300e3]]), np.array([[1e9]]), mu, p)[0, 0]) == pytest.approx(
        -(150e3 + 2 * 12_000 / (0.02 * 1e9) * (-1e9 / 8)), rel=1e-12)
    # an arrival rate of 0 counts as 1 b/s in the spacing (no division by zero)
    assert math.isfinite(fb(100e3, 0.0)) and fb(100e3, 0.0) == 750e3


def test_bcn_max_sends_the_largest_negative_feedback_from_qmc_on(zhb: FluidParams) -> None:
    g = _Grid([replace(zhb, bcn_max=True, qmc=400e3)])
    mu, p = np.array([[2e9]]), np.array([[0.02]])
    assert float(g.feedback(np.array([[400e3]]), np.array([[2e9]]), mu, p)[0, 0]) == -750e3
    assert float(g.feedback(np.array([[399e3]]), np.array([[2e9]]), mu, p)[0, 0]) == pytest.approx(-249e3)


def test_cycle_rate_of_a_byte_counter() -> None:
    """g(σ, B) = σ/((1 − σ)^(−B) − 1) completions per frame: 1/B without marking, 1/2 at σ = 1/2
    and B = 1 (0.5/(2 − 1)), σ·(1 − σ)^B as the counter rarely completes; σ is capped below 1 and
    the exponent at 700, so σ = 1 gives a tiny positive rate, not a division by zero."""
    sigma = np.array([0.0, 1e-12, 0.5, 0.1, 1.0])
    frames = np.array([100.0, 100.0, 1.0, 50.0, 1e6])
    got = _cycles(sigma, frames)
    assert got[0] == 0.01 and got[1] == pytest.approx(0.01, rel=1e-9)
    assert got[2] == pytest.approx(0.5, rel=1e-12)
    assert got[3] == pytest.approx(0.1 / (0.9**-50 - 1), rel=1e-12)
    assert got[4] == pytest.approx(0.999999 / math.expm1(700.0), rel=1e-12) and got[4] > 0
    assert _cycles(np.array([0.0]), np.array([0.0]))[0] == pytest.approx(1e300)
