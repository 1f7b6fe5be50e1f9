"""The time figures of the decks shade where the hot port is overloaded: the hotspot of an
output-generated scenario, and for an input-generated hotspot or a dual congestion point (no
[[hotspots]]) the span in which the hot flows run. Their captions say "the hotspot (0.1–0.5 s)
is shaded" (zhb-ig-single-hop-grid, the dual-CP grids) or "the hotspot is shaded" (the qcnp IG,
20-stage and parking-lot grids), and nothing was shaded."""

from __future__ import annotations

from pathlib import Path

import pytest
from cnsim.reproduce.figures import _hotspots, _scenario_doc
from cnsim.scenario import load


def folder_of(tmp_path: Path, scenario: str) -> Path:
    folder = tmp_path / scenario
    folder.mkdir()
    (folder / "scenario.toml").write_text(load(scenario).to_toml(), encoding="utf-8")
    _scenario_doc.cache_clear()
    return folder


@pytest.mark.parametrize(("scenario", "spans"), [
    ("zhb-og-single-hop", [(0.1, 0.5)]),          # a hotspot: as before
    ("zhb-ig-single-hop", [(0.1, 0.5)]),          # nodes 2-5 -> 1 from 0.1 to 0.5 s
    ("zhb-dual-cp-light-heavy", [(0.1, 0.5)]),    # traffic.start / stop
    ("zhb-dual-cp-heavy-light", [(0.1, 0.5)]),
    ("qcnp-ig-baseline", [(0.1, 1.0)]),           # culprits 0.1-1.0 s, the victim all along
    ("qcnp-parking-lot", [(0.1, 1.0)]),           # hot flows 0.1-1.0 s, the cold ones all along
    ("qcnp-20-stage", [(0.1, 1.0)]),
    ("eval-baseline", []),                        # flows from 0 to the end: the whole run, nothing to mark
    ("kd-symmetric-single-hs", []),
])
def test_the_shaded_spans(tmp_path: Path, scenario: str, spans: list[tuple[float, float]]) -> None:
    got = _hotspots(folder_of(tmp_path, scenario))
    assert [(round(a, 9), round(b, 9)) for a, b in got] == spans


def test_a_damaged_flow_time_shades_nothing(tmp_path: Path) -> None:
    folder = tmp_path / "bad"
    folder.mkdir()
    (folder / "scenario.toml").write_text('duration = "1s"\n[traffic]\nflows = [{src = "1", dst = "2", start = "soon"}]\n',
                                          encoding="utf-8")
    _scenario_doc.cache_clear()
    assert _hotspots(folder) == []
