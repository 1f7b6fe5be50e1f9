"""A deck table that names its measurement window names the one its runs used (the sweeping
hotspot of the zhb deck averages over [0.1, 0.5] s, not the [0.2, 0.5] s of the other cases;
``--quick`` moves every window)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cnsim.reproduce import get_deck, study_status
from cnsim.reproduce.figures import Point, SummaryTable
from cnsim.scenario import load


def point(window: Any, status: str = "ok") -> Point:
    return Point({"status": status, "window_s": window}, Path("."), {})


def test_the_heading_names_the_window_of_the_runs() -> None:
    table = SummaryTable("Case 7: summary over {window}", ["aggregate"])
    assert table.heading([point([0.1, 0.5]), point([0.1, 0.5])]) == "Case 7: summary over [0.1, 0.5] s"
    assert table.heading([point([0.0, 1.0])]) == "Case 7: summary over [0, 1] s"
    # runs of different windows, or none that ran: no window is named
    assert table.heading([point([0.2, 0.5]), point([0.1, 0.5])]) == "Case 7: summary over each run's measurement window"
    assert table.heading([point([0.2, 0.5], status="failed")]) == "Case 7: summary over each run's measurement window"
    assert SummaryTable("no window named", ["aggregate"]).heading([point([0.1, 0.5])]) == "no window named"


def _window_text(base: str, overrides: dict[str, Any]) -> str:
    scen = load(base).copy()
    scen.set_many(overrides)
    t0, t1 = (t / 1e12 for t in scen.resolved.window_ps)
    return f"[{t0:g}, {t1:g}] s"


@pytest.mark.parametrize("study", [s.sweep for s in get_deck("zhb").studies])
def test_each_zhb_table_names_its_studys_window(study: str) -> None:
    """Every zhb table title, once drawn, holds the window of its runs (the first point of the
    full sweep), never a window written for another case."""
    entry = next(s for s in get_deck("zhb").studies if s.sweep == study)
    spec, reason = study_status(entry)
    assert spec is not None, reason
    first = {k: v[0] for k, v in {**spec.axes, **spec.zip}.items()}
    window = _window_text(spec.base, {**spec.set, **first})
    t0, t1 = (float(x) for x in window.strip("[] s").split(", "))
    for table in entry.tables:
        title = table.heading([point([t0, t1])])
        if "summary over" in table.title:
            assert title.endswith(f"summary over {window}"), (study, title)


def test_the_sweeping_hotspot_window_is_not_the_one_of_case_1() -> None:
    """The case the fixed title got wrong: scenarios.md §8 gives zhb-sweeping-hotspot [0.1, 0.5] s."""
    assert _window_text("zhb-sweeping-hotspot", {}) == "[0.1, 0.5] s"
    for study in ("zhb-sweeping-hotspot-grid", "zhb-sweeping-hotspot-none"):
        entry = next(s for s in get_deck("zhb").studies if s.sweep == study)
        assert "[0.2, 0.5]" not in entry.tables[0].heading([point([0.1, 0.5])])
