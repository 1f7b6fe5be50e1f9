"""Issue 15, item 4: the PAUSE deadlock detector. It reports the cyclic buffer dependency of
`e2cm-mixed-speed-og` without CM (docs/decisions.md), none where E2CM prevents it or where the
network is merely congested (hogging is not a deadlock), can stop the run, and changes no result
of the model (the golden summaries differ only by the new `deadlock` key)."""

from __future__ import annotations

import cnsim
import pytest

pytest.importorskip("cnsim._core")


def test_the_mixed_speed_deadlock_is_reported_with_its_cycle() -> None:
    r = cnsim.run("e2cm-mixed-speed-og", duration="0.3s")
    deadlock = r.summary["deadlock"]
    assert deadlock is not None
    assert deadlock["cycle"] == ["S1/S2", "S2/S1"] and deadlock["class"] == 0
    # the hotspot starts at 0.1 s; both links are paused for the 10 ms threshold by 0.12 s
    assert 0.11 <= deadlock["t_s"] <= 0.125


def test_the_threshold_and_stopping() -> None:
    late = cnsim.run("e2cm-mixed-speed-og", duration="0.3s", set={"metrics.deadlock_threshold": "50ms"}).summary["deadlock"]
    assert late is not None and late["t_s"] >= 0.15
    stopped = cnsim.run("e2cm-mixed-speed-og", duration="0.3s", set={"metrics.stop_on_deadlock": True}).summary
    assert stopped["deadlock"] is not None and stopped["duration_s"] == pytest.approx(stopped["deadlock"]["t_s"])


@pytest.mark.parametrize(
    ("scenario", "overrides"),
    [
        ("e2cm-mixed-speed-og", {"cm.scheme": "e2cm"}),  # E2CM keeps the network running
        ("zhb-og-single-hop", {}),  # 80 % of the time paused, hogging — but it drains
        ("zhb-og-multi-hop", {}),
        ("e2cm-non-cm-domain", {}),
    ],
)
def test_congestion_without_a_cycle_is_not_a_deadlock(scenario: str, overrides: dict[str, object]) -> None:
    assert cnsim.run(scenario, duration="0.3s", set=overrides).summary["deadlock"] is None


def test_the_observer_changes_no_result() -> None:
    """Checking every 2.5 ms or never (a threshold beyond the run) gives the same summary, events
    included: the checks are not events of the model (their cost is in docs/performance.md)."""
    often = cnsim.run("zhb-og-single-hop", duration="0.2s", set={"metrics.deadlock_threshold": "10ms"}).summary
    never = cnsim.run("zhb-og-single-hop", duration="0.2s", set={"metrics.deadlock_threshold": "1000s"}).summary
    assert often == never


def test_the_ring_of_six_deadlocks_around_the_ring() -> None:
    r = cnsim.run("ring-6-deadlock")
    deadlock = r.summary["deadlock"]
    assert deadlock is not None
    assert deadlock["cycle"] == [f"S{i}/S{i % 6 + 1}" for i in range(1, 7)]
    assert deadlock["t_s"] <= 0.02
    assert r.summary["throughput_gbps"]["aggregate"] < 0.1  # nothing moves after the first ms
    # lighter traffic (each ring link offered 8 Gb/s) flows and never deadlocks
    light = cnsim.run("ring-6-deadlock", set={f"traffic.flows.{i}.rate": "4Gbps" for i in range(6)})
    assert light.summary["deadlock"] is None and light.summary["throughput_gbps"]["aggregate"] > 20
