"""The fluid figure's fair-share line is the max-min share of the flows whose rate it draws, not
μ/N_h: in zhb-ig-single-hop the 11 light flows (0.567 Gb/s offered, the rate drawn) and the 4
heavy ones (8.5 Gb/s) share node 1's 10 Gb/s link as 0.567 / 0.942 Gb/s (targets.md B1), while
μ/N_h = 10/15 = 0.667 Gb/s is the share of neither."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from cnsim.fluid import fluid_params
from cnsim.fluid.grid import FluidRun
from cnsim.fluid.params import FluidParams
from cnsim.fluid.report import FluidStudy, _trajectory_figure


def run_of(p: FluidParams, n: int = 50) -> FluidRun:
    t = np.linspace(0.0, p.duration_s, n)
    rates = np.full((n, 1, len(p.groups)), 1e9)
    return FluidRun(params=[p], t=t, queue=np.full((n, 1), p.qeq), rates=rates, limiter=rates.copy(), target=None,
                    backlog=None, fb=np.zeros((n, 1)), aggregate=np.full((n, 1), 1e10), h=t[1] - t[0])


def fair_line(p: FluidParams) -> Any:
    axr = _trajectory_figure(FluidStudy(p, run_of(p), {"stable": True}), with_packet=False).axes[1]
    (line,) = [ln for ln in axr.get_lines() if str(ln.get_label()).startswith("fair share")]
    return line


def test_the_share_of_each_group_is_water_filled() -> None:
    ig = fluid_params("zhb-ig-single-hop", {"cm.scheme": "bcn"})
    by_offer = dict(zip((g.offered_bps for g in ig.groups), ig.maxmin_bps, strict=True))
    assert by_offer[8.5e9] == pytest.approx((10e9 - 11 * 8.5e9 / 15) / 4, rel=1e-9)  # 0.9417 Gb/s
    assert by_offer[8.5e9 / 15] == pytest.approx(8.5e9 / 15, rel=1e-9)  # 0.567: demand-limited
    og = fluid_params("zhb-og-single-hop", {"cm.scheme": "bcn"})
    (share,) = og.maxmin_bps
    assert share == pytest.approx(og.fair_bps, rel=1e-12)  # every flow offers more than μ/N_h


def test_the_line_is_the_drawn_groups_max_min_share() -> None:
    ig = fluid_params("zhb-ig-single-hop", {"cm.scheme": "bcn"})
    line = fair_line(ig)
    assert list(line.get_ydata()) == [pytest.approx(ig.maxmin_bps[0] / 1e9, rel=1e-12)] * 2
    assert ig.maxmin_bps[0] != pytest.approx(ig.fair_bps, rel=1e-3)  # μ/N_h = 0.667 Gb/s was drawn
    assert f"of the {ig.groups[0].count} flows drawn" in line.get_label()
    og = fluid_params("zhb-og-single-hop", {"cm.scheme": "bcn"})
    assert fair_line(og).get_label() == "fair share 0.133 Gb/s"
