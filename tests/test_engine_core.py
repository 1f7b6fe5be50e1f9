"""End-to-end checks of the simulation core through the Python API (issue: simulation core).

Each test would fail if the model were wrong: hogging under PAUSE in both memory models, the
offered load before the hotspot, conservation, determinism, and bad input reaching the user as
exit status 2 with a clear message.
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pyarrow.compute as pc
import pytest

pytest.importorskip("cnsim._core")

import cnsim  # noqa: E402


def conserved(summary: dict) -> None:
    """generated = delivered + dropped + source drops + in flight (counted where the frames are)."""
    c = summary["conservation"]
    assert c["generated"] == c["delivered"] + c["dropped"] + c["source_dropped"] + c["in_flight_counted"], c
    assert summary["drops"]["frames"] == c["dropped"]
    assert summary["source_drops"]["frames"] == c["source_dropped"]


def mean_between(table, entity: str, t0: float, t1: float) -> float:
    rows = table.filter(pc.equal(table["entity"], entity))
    t = np.asarray(rows["t_s"])
    v = np.asarray(rows["gbps"])
    return float(v[(t > t0 + 1e-9) & (t <= t1 + 1e-9)].mean())


@pytest.fixture(scope="module", params=["partitioned", "shared"])
def zhb_none(request):
    return request.param, cnsim.run("zhb-og-single-hop", set={"switch.buffer": request.param})


def test_zhb_without_cm_hogs_in_both_memory_models(zhb_none) -> None:
    buffer, r = zhb_none
    s = r.summary
    conserved(s)
    # the hot port serves its 2 Gb/s during the hotspot ...
    assert s["throughput_gbps"]["hot_port"] == pytest.approx(2.0, abs=0.02)
    # ... and PAUSE gates the rest: the aggregate collapses far below the 129.5 Gb/s ideal
    assert s["throughput_gbps"]["aggregate"] < 60.0, buffer
    assert s["paused_fraction"] > 0.5
    # lossless: the watermarks leave enough headroom
    assert s["drops"]["frames"] == 0
    # the hot queue holds most of the memory the hotspot's inputs may use
    assert s["queue_bytes"]["hot"]["mean"] > 4e6


def test_zhb_before_the_hotspot_carries_the_offered_136_gbps(zhb_none) -> None:
    _, r = zhb_none
    tput = r.series("throughput")
    # 16 nodes x 8.5 Gb/s; 80 bins of 1 ms, each ~7,500 frames: sampling noise ~1 %
    assert mean_between(tput, "aggregate", 0.02, 0.1) == pytest.approx(136.0, rel=0.01)
    assert mean_between(tput, "port:S1/1", 0.02, 0.1) == pytest.approx(8.5, rel=0.03)


def test_same_seed_same_results_other_seed_other_series() -> None:
    a = cnsim.run("kd-symmetric-single-hs", duration="30ms", seed=7)
    b = cnsim.run("kd-symmetric-single-hs", duration="30ms", seed=7)
    c = cnsim.run("kd-symmetric-single-hs", duration="30ms", seed=8)
    assert json.dumps(a.summary, sort_keys=True) == json.dumps(b.summary, sort_keys=True)
    for kind in a.kinds:
        assert a.series(kind).equals(b.series(kind)), kind
    assert not a.series("throughput").equals(c.series("throughput"))
    assert not a.series("queue").equals(c.series("queue"))


@pytest.mark.parametrize("sid", ["kd-symmetric-single-hs", "qcnp-ig-baseline", "eval-sh-og-2g"])
def test_every_shipped_scenario_conserves_frames(sid: str) -> None:
    r = cnsim.run(sid, duration="150ms")
    conserved(r.summary)
    assert r.summary["conservation"]["delivered"] > 0


def test_kd_overload_is_dropped_at_the_egress_discard_threshold() -> None:
    s = cnsim.run("kd-symmetric-single-hs").summary
    conserved(s)
    # 4 x 5 Gb/s into a 10 Gb/s port: the port is busy, half the offered load is discarded
    assert s["throughput_gbps"]["hot_port"] == pytest.approx(10.0, rel=0.002)
    offered_gbps = 20.0
    dropped_gbps = s["drops_window"]["bytes"] * 8 / (s["window_s"][1] - s["window_s"][0]) / 1e9
    assert dropped_gbps == pytest.approx(offered_gbps - 10.0, rel=0.02)
    assert s["queue_bytes"]["hot"]["max"] <= 600_000


def test_the_blocking_adapter_option_blocks_generators_instead_of_dropping() -> None:
    """The withdrawn AD-CNSIM reading stays available as an option (D15): one shared 150 KB
    ingress pool whose generator blocks when it is full."""
    shared = {
        "nic.ingress": "shared",
        "nic.ingress_size": "150KB",
        "nic.on_full": "block",
        "nic.egress_buffer": "1500B",
        "nic.egress_xoff": "auto",  # the eval entries' 148.5 KB watermarks need their 150 KB buffer
        "nic.egress_xon": "auto",
    }
    s = cnsim.run("eval-sh-og-2g", duration="300ms", set=shared).summary
    conserved(s)
    assert s["source_drops"]["frames"] == 0
    assert s["source_blocked_fraction"] > 0.0
    # window [0, 0.3 s]: H0 receives its offered 8.5 Gb/s until the hotspot at 0.1 s, then 2 Gb/s
    assert s["throughput_gbps"]["hot_port"] == pytest.approx((8.5 * 0.1 + 2.0 * 0.2) / 0.3, rel=0.02)


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cnsim.cli", *args], capture_output=True, text=True)


@pytest.mark.parametrize(
    "args, words",
    [
        (["run", "no-such-scenario"], ["no-such-scenario"]),
        (["run", "zhb-og-single-hop", "--set", "switch.colour=red"], ["switch.colour"]),
        (["run", "zhb-og-single-hop", "--set", "links.delay=5parsecs"], ["links.delay", "5parsecs"]),
        (["run", "zhb-og-single-hop", "--set", "links.rate=-10Gbps"], ["links.rate", "-10Gbps"]),
    ],
)
def test_bad_input_exits_2_with_a_clear_message(args: list[str], words: list[str]) -> None:
    p = cli(*args, "--quiet", "--no-plots")
    assert p.returncode == 2, p.stderr
    for w in words:
        assert w in p.stderr
    assert "Traceback" not in p.stderr + p.stdout


def test_the_engine_refuses_an_unknown_scheme_with_the_key() -> None:
    from cnsim import _core

    core = json.loads(cnsim.load("kd-symmetric-single-hs").core_json())
    core["cm"] = {"scheme": "warp-drive"}
    with pytest.raises(ValueError, match="cm.scheme = warp-drive"):
        _core.Simulation(json.dumps(core))


def test_the_eval_adapter_never_blocks_nor_drops_at_the_source() -> None:
    """AD-CNSIM as settled (docs/fidelity.md): VOQs that never block one another, the 150 KB NIC
    buffer as the output buffer — nothing is lost or held at the generator."""
    s = cnsim.run("eval-sh-og-2g", duration="300ms").summary
    conserved(s)
    assert s["source_drops"]["frames"] == 0 and s["source_blocked_fraction"] == 0.0
