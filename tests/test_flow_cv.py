"""The time CV of every recorded flow (summary.json ``dynamics.flow_cv``): picking the window's
bins once for all flows gives exactly the floats of :func:`cnsim.signals.time_cv` on each
flow's own series."""

from __future__ import annotations

import math

import numpy as np
import pytest
from cnsim import signals


@pytest.mark.parametrize("n", [1, 2, 7, 8, 9, 10, 17, 127, 128, 129, 1000, 5000])
def test_time_cv_is_std_over_mean_to_the_last_bit(n: int) -> None:
    rng = np.random.default_rng(n)
    for scale in (1e-3, 1.0, 1e3):
        for _ in range(50):
            v = rng.random(n) * scale
            assert signals.time_cv(v) == float(np.std(v) / float(np.mean(v)))
    assert math.isnan(signals.time_cv(np.zeros(n)))
    assert math.isnan(signals.time_cv([]))



def test_every_flows_cv_is_the_cv_of_its_own_series() -> None:
    cnsim = pytest.importorskip("cnsim")
    r = cnsim.run("zhb-og-single-hop", duration="5ms", set={"metrics.per_flow": "all"})
    cv = r.summary["dynamics"]["flow_cv"]
    assert len(cv) == 16 * 15
    table = r.series("throughput").to_pydict()
    by_flow: dict[str, tuple[list[float], list[float]]] = {}
    for t, e, g in zip(table["t_s"], table["entity"], table["gbps"], strict=True):
        if e.startswith("flow:"):
            ts, gs = by_flow.setdefault(e.removeprefix("flow:"), ([], []))
            ts.append(t)
            gs.append(g)
    window = (0.0, 0.005)  # no hotspot before 5 ms: the whole run
    for flow, (ts, gs) in by_flow.items():
        expected = signals.time_cv(signals.samples_in(ts, gs, window)[1])
        assert cv[flow] == round(expected, 12), flow
