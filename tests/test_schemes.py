"""Scenario checks of the congestion-management schemes on short runs (issue: the 802.1Qau schemes).

The models are not tuned toward any of these outcomes: each check is a property the decks report
and the spec's algorithms imply. Numbers worth a look are printed (run pytest with -s).
"""

from __future__ import annotations

import numpy as np
import pyarrow.compute as pc
import pytest

pytest.importorskip("cnsim._core")

import cnsim  # noqa: E402
from test_engine_core import conserved  # noqa: E402

SCHEMES = ["bcn", "e2cm", "qcn", "qcn3pt", "qcn-sonar", "qcn-plus"]
SCENARIOS = ["zhb-og-single-hop", "kd-symmetric-single-hs", "qcnp-ig-baseline", "eval-sh-og-2g"]


@pytest.mark.parametrize("sid", SCENARIOS)
@pytest.mark.parametrize("scheme", ["none", *SCHEMES])
def test_every_scheme_runs_on_every_shipped_scenario(sid: str, scheme: str) -> None:
    # past every catalog hotspot's start (0.1 s), so that CPs and RPs are exercised
    r = cnsim.run(sid, set={"cm.scheme": scheme}, duration="0.12s")
    conserved(r.summary)
    assert r.summary["scheme"] == scheme
    if scheme != "none":
        assert r.summary["cm"]["frames"] > 0, "every scheme signals on a congested scenario"


@pytest.fixture(scope="module", params=SCHEMES)
def qcnp(request):
    scheme = request.param
    return scheme, cnsim.run("qcnp-ig-baseline", set={"cm.scheme": scheme})


def test_qcnp_ig_baseline_holds_the_set_point_without_drops(qcnp) -> None:
    scheme, r = qcnp
    s = r.summary
    conserved(s)
    qeq = cnsim.load("qcnp-ig-baseline").set("cm.scheme", scheme).resolved.cm["qeq"]
    flows = s["throughput_gbps"]["per_flow"]
    culprits = [flows[f"{i}->6"] for i in (2, 3, 4, 5)]
    print(f"\n{scheme}: hot queue mean {s['queue_bytes']['hot']['mean']:.0f} B (Qeq {qeq} B), "
          f"culprits {[round(c, 3) for c in culprits]} Gb/s (fair 2.5, spread {max(culprits) - min(culprits):.3f}), "
          f"victim {flows['1->7']:.3f} Gb/s, drops {s['drops']['frames']}, cm {s['cm']['mbps']:.2f} Mb/s")
    if scheme == "qcn-plus":
        # cnsim's reading of QCN+ (§5.7, D17: positive feedback from probe answers every
        # max(RTT, 100 us), gi_plus = the PS-QCNP Gi) overshoots: the queue sits at ~3 Qeq and a
        # few frames are lost when it spills over the 150 KB partitions (docs/models/qcn-plus.md)
        assert qeq < s["queue_bytes"]["hot"]["mean"] < 4 * qeq
        assert s["drops"]["frames"] <= 5e-3 * s["conservation"]["delivered"]
    else:
        assert s["queue_bytes"]["hot"]["mean"] == pytest.approx(qeq, rel=0.25)
        assert s["drops"]["frames"] <= 1e-4 * s["conservation"]["delivered"]
    assert s["throughput_gbps"]["hot_port"] > 9.9
    assert flows["1->7"] == pytest.approx(5.0, abs=0.05)
    assert sum(culprits) == pytest.approx(10.0, rel=0.01)
    assert s["cm"]["frames"] > 0


def test_control_overhead_is_counted_in_frames_bytes_and_rate(qcnp) -> None:
    _, r = qcnp
    cm = r.summary["cm"]
    w0, w1 = r.summary["window_s"]
    assert cm["bytes"] == 64 * cm["frames"]
    assert cm["mbps"] == pytest.approx(cm["bytes"] * 8 / (w1 - w0) / 1e6)
    series = r.series("cm")
    assert series.num_rows > 0 and pc.sum(series["frames"]).as_py() >= cm["frames"]


def test_rate_limiter_trajectories_are_recorded(qcnp) -> None:
    _, r = qcnp
    rates = r.series("rates")
    assert set(rates.column("flow").to_pylist()) >= {"2->6", "3->6", "4->6", "5->6"}
    g = np.asarray(rates["gbps"])
    assert np.all((g > 0) & (g <= 10.0))


def test_e2cm_probing_only_shares_the_bottleneck_max_min_fairly() -> None:
    s = cnsim.run("qcnp-ig-baseline", set={"cm.scheme": "e2cm", "cm.bcn": False}).summary
    conserved(s)
    flows = s["throughput_gbps"]["per_flow"]
    for i in (2, 3, 4, 5):
        assert flows[f"{i}->6"] == pytest.approx(2.5, abs=0.05)
    assert s["fairness"]["jain"] > 0.999


@pytest.fixture(scope="module", params=["partitioned", "shared"])
def zhb_bcn(request):
    return cnsim.run("zhb-og-single-hop", set={"cm.scheme": "bcn", "switch.buffer": request.param}).summary


def test_bcn_removes_hogging_on_zhb(zhb_bcn) -> None:
    s = zhb_bcn
    conserved(s)
    # ideal: 136 offered − (8.5 − 2) Gb/s that the hot node cannot take = 129.5 Gb/s
    assert s["throughput_gbps"]["aggregate"] == pytest.approx(129.5, rel=0.005)
    assert s["throughput_gbps"]["hot_port"] == pytest.approx(2.0, abs=0.01)
    assert s["drops"]["frames"] == 0
    # the queue settles a little above Qeq = 150 KB (S0, algorithms.md §3.5)
    assert 150_000 <= s["queue_bytes"]["hot"]["mean"] <= 200_000


def _zhb_gd(multiplier: float, delay: str = "1us") -> cnsim.Result:
    return cnsim.run("zhb-og-single-hop", set={"cm.scheme": "bcn", "cm.gd": f"{multiplier}*gd0", "links.delay": delay})


def test_too_small_a_gd_reacts_slowly() -> None:
    def early_queue(r) -> float:
        q = r.series("queue").filter(pc.equal(r.series("queue")["queue"], "S1/1"))
        t, b = np.asarray(q["t_s"]), np.asarray(q["bytes"])
        return float(b[(t > 0.1) & (t <= 0.2)].mean())

    small, base, large = (early_queue(_zhb_gd(m)) for m in (0.1, 1.0, 2.5))
    print(f"\nmean hot queue over the first 100 ms of the hotspot: 0.1 Gd0 {small:.0f}, 1 Gd0 {base:.0f}, 2.5 Gd0 {large:.0f} B")
    assert small > base > large


def test_a_large_gd_oscillates_more_when_the_loop_has_delay() -> None:
    """Gd = 10·Gd0 against 1·Gd0 with a long control loop (links.delay = 200 us).

    With the deck's 2 us loop — and still with a 200 us loop — 10·Gd0 is the steadier queue
    (checked over three seeds, docs/decisions.md), as the linearised loop of algorithms.md §11.1
    predicts. With links of 200 us (a ~400 us loop) the decks' observation appears: the larger
    Gd oscillates more and underruns the hot port (two seeds: std 83/81 KB against 64/26 KB,
    underrun 12–16 %) — a nonlinear effect of the Rmin floor that the linear analysis does not
    predict (docs/fluid.md).
    """
    lo, hi = (_zhb_gd(m, "200us").summary for m in (1.0, 10.0))
    print(f"\nhot queue std: 1 Gd0 {lo['queue_bytes']['hot']['std']:.0f} B, 10 Gd0 {hi['queue_bytes']['hot']['std']:.0f} B; "
          f"underrun {lo['underrun']:.4f} / {hi['underrun']:.4f}")
    assert hi["queue_bytes"]["hot"]["std"] > lo["queue_bytes"]["hot"]["std"]
    assert hi["underrun"] > lo["underrun"] + 0.05
    assert hi["throughput_gbps"]["hot_port"] < 0.95 * lo["throughput_gbps"]["hot_port"]


def test_a_larger_gd_holds_the_queue_closer_to_qeq_on_a_short_loop() -> None:
    """With the deck's 2 us loop the larger gain is the tighter control (the linear analysis)."""
    lo, hi = (_zhb_gd(m).summary for m in (1.0, 10.0))
    assert abs(hi["queue_bytes"]["hot"]["mean"] - 150_000) < abs(lo["queue_bytes"]["hot"]["mean"] - 150_000)
    assert hi["queue_bytes"]["hot"]["std"] < lo["queue_bytes"]["hot"]["std"]


@pytest.mark.parametrize("scheme", ["qcn", "qcn3pt"])
def test_the_eval_qcn_presets_halve_the_timer_at_stage_f(scheme: str) -> None:
    """Issue 12 audit: PS-EVAL-QCN's timer used to never halve (halving = "hai" with HAI off).
    Its AIByteCnt is the active-increase byte cycle itself; the timer halves at its own stage F."""
    from cnsim.runner import prepare

    cm = prepare("eval-sh-og-2g", set={"cm.scheme": scheme}).resolved.cm
    assert cm["halving"] == "own"
    assert cm["ai_byte_count"] == 37_500
    assert cm["hai"] is False


def test_a_zero_rate_hotspot_without_pause_silences_its_cp() -> None:
    """Issue 12 asked why `eval-mh-og-0g` without PAUSE drops as much with QCN as without CM
    (docs/fidelity.md, "S4 (eval): without PAUSE a 0 Gb/s hotspot silences its congestion point"):
    the CP samples the frames its queue admits (§5.2, §1.2), and once the partitions that feed
    the 0 Gb/s port are full every arriving frame is dropped at its partition, so after the
    fill's CNMs the CP sees nothing for the rest of the hotspot."""
    r = cnsim.run("eval-mh-og-0g", set={"cm.scheme": "qcn", "switch.pause": False}, seed=2, duration="0.2s")
    queue = [(x["t_s"], x["bytes"]) for x in r.series("queue").to_pylist() if x["queue"] == "S4/H6"]
    full_at = min(t for t, b in queue if b == 450_000)  # three 150 KB partitions of H6 frames
    assert 0.1 < full_at < 0.11
    assert all(b == 450_000 for t, b in queue if t >= full_at), "nothing leaves at 0 Gb/s"
    cnms = [(x["t_s"], x["frames"]) for x in r.series("cm").to_pylist() if x["frames"]]
    assert sum(n for t, n in cnms if 0.1 < t <= full_at) > 0, "the fill is sampled"
    assert not [t for t, n in cnms if t > full_at], "no frame reaches the full queue's CP"
    assert set(r.summary["drops"]["by_place"]) == {"partition"}
