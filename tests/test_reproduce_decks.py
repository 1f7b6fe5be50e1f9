"""Deck reproduction of the qcnp, e2cm and eval decks and of cnsim's own modern study (issue "Reproduction"): each deck's --quick run
goes through the CLI, exits 0, writes deck.json, report.html and every figure it lists, and runs every
study (none pending: their sweep specs and base scenarios are shipped)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cnsim.cli import app
from cnsim.reproduce import get_deck, quick_spec, study_status
from cnsim.sweep import expand, load_spec
from typer.testing import CliRunner

runner = CliRunner()

#: the studies of each deck (scenarios.md §8 sweep ids, plus the probing-only and EFR specs)
STUDIES = {
    "qcnp": ["qcnp-og-single-hop-grid", "qcnp-ig-baseline-grid", "qcnp-ig-100-sources-grid", "qcnp-20-stage-grid",
             "qcnp-parking-lot-grid", "qcnp-og-drift", "qcnp-ig-rtt-sweep", "qcnp-ig-rtt-ps", "qcnp-og-w-sweep",
             "qcnp-og-00-rtt-sweep"],
    "e2cm": ["e2cm-non-cm-domain-grid", "e2cm-fat-tree-16-grid", "e2cm-fat-tree-32-grid", "e2cm-fat-tree-16-bcn00-grid",
             "e2cm-fat-tree-32-bcn00-grid", "e2cm-mixed-speed-og-grid",
             "e2cm-mixed-speed-og-probing-grid", "e2cm-mixed-speed-ig-grid", "e2cm-mixed-speed-ig-probing-grid"],
    "eval": ["eval-baseline-grid", "eval-baseline-efr", "eval-baseline-sampling", "eval-sh-og-2g-grid", "eval-sh-og-0.5g-grid",
             "eval-sh-og-0g-grid", "eval-mh-og-2g-grid", "eval-mh-og-0.5g-grid", "eval-mh-og-0g-grid", "eval-fat-tree-64-grid",
             "eval-fat-tree-64-0.5g"],
    "modern": ["modern-dcqcn-incast-2to1", "modern-zhb-og-single-hop", "modern-zhb-og-multi-hop", "modern-zhb-dual-cp-light-heavy",
               "modern-zhb-dual-cp-heavy-light", "modern-qcnp-parking-lot", "modern-scale-ft-2048"],
}


@pytest.mark.parametrize("deck", list(STUDIES))
def test_full_specs_expand(deck: str) -> None:
    """Every study's full sweep spec and its --quick version resolve (nothing pending)."""
    d = get_deck(deck)
    assert [s.sweep for s in d.studies] == STUDIES[deck]
    for study in d.studies:
        spec, reason = study_status(study)
        assert spec is not None, reason
        full = expand(spec, "/nonexistent/runs")
        quick = expand(quick_spec(spec, study, d), "/nonexistent/runs")
        assert 0 < len(quick) <= len(full), study.sweep


def _swept(spec) -> dict:  # noqa: ANN001 - a SweepSpec
    return {**spec.axes, **spec.zip}


@pytest.mark.parametrize("deck", [*STUDIES, "zhb", "kd"])
def test_every_figure_of_a_subset_has_points_in_its_full_sweep(deck: str) -> None:
    """A figure drawn for some points only (Subset) must find them in its sweep: a figure that
    could never be drawn would silently be missing from the report."""
    from cnsim.reproduce.figures import Subset

    for study in get_deck(deck).studies:
        spec, _ = study_status(study)
        swept = _swept(spec)
        for fig in study.figures:
            if isinstance(fig, Subset):
                for key, values in fig.where.items():
                    if key in swept:
                        assert set(values) & set(swept[key]), (study.sweep, fig.title, key)


def test_a_qcnp_grids_per_flow_figure_is_at_its_smallest_rtt() -> None:
    from cnsim.reproduce.figures import FlowFigure, Subset
    from cnsim.reproduce.qcnp import qcnp_label
    from cnsim.units import parse_time

    for study in get_deck("qcnp").studies:
        flows = [f for f in study.figures if isinstance(f, Subset) and isinstance(f.figure, FlowFigure)]
        if not flows:
            continue
        (per_flow,) = flows
        spec, _ = study_status(study)
        smallest = min(_swept(spec)["links.delay"], key=parse_time)
        assert per_flow.where == {"links.delay": [smallest]}, study.sweep
        assert per_flow.title.endswith(f"at {qcnp_label('links.delay', smallest)}"), per_flow.title


def test_e2cm_compares_schemes_in_a_summary_where_it_sweeps_them() -> None:
    """The per-scheme summary figure (drops, completed flows, FCT against the scheme) is drawn
    for each traffic type where the study sweeps schemes, not for the probing-only grids."""
    from cnsim.reproduce.figures import MetricFigure, Subset

    for study in get_deck("e2cm").studies:
        spec, _ = study_status(study)
        summaries = [f.figure.x for f in study.figures if isinstance(f, Subset) and isinstance(f.figure, MetricFigure)]
        assert summaries == (["cm.scheme"] * 2 if "cm.scheme" in _swept(spec) else []), study.sweep


@pytest.mark.parametrize("deck", ["eval", "modern", "qcnp"])
def test_quick_keeps_every_scheme_it_compares(deck: str) -> None:
    """--quick shortens runs but keeps the comparison: every scheme of the full sweep, but for the
    largest networks (the 64-host and 2,048-host fat trees keep two)."""
    d = get_deck(deck)
    for study in d.studies:
        spec, _ = study_status(study)
        schemes = _swept(spec).get("cm.scheme")
        if schemes is None:
            continue
        quick = _swept(quick_spec(spec, study, d))["cm.scheme"]
        if study.sweep in ("eval-fat-tree-64-grid", "eval-fat-tree-64-0.5g", "modern-scale-ft-2048"):
            assert len(quick) == 2 and set(quick) < set(schemes), study.sweep
        else:
            assert sorted(quick) == sorted(schemes), study.sweep


@pytest.mark.parametrize("deck", [*STUDIES, "zhb", "kd"])
def test_quick_runs_are_short(deck: str) -> None:
    """--quick's runs last at most 0.3 simulated seconds (a deck in about a minute) and never
    longer than the full ones."""
    from cnsim.runner import prepare

    def duration(spec) -> float:  # noqa: ANN001 - a SweepSpec
        task = expand(spec, "/nonexistent/runs")[0]
        return prepare(task.base, task.overrides, task.seed).resolved.doc.duration / 1e12

    d = get_deck(deck)
    for study in d.studies:
        spec, _ = study_status(study)
        quick = duration(quick_spec(spec, study, d))
        assert quick <= min(0.3, duration(spec)), study.sweep


def test_qcnp_quick_runs_keep_the_extremes() -> None:
    """The grids' --quick keeps the smallest and largest RTT (the 20-stage chain, the deck's
    largest network, only the smallest); the RTT sweep the smallest and largest W."""
    from cnsim.units import parse_time

    d = get_deck("qcnp")
    for study in d.studies:
        spec, _ = study_status(study)
        swept, quick = _swept(spec), _swept(quick_spec(spec, study, d))
        delays = sorted(swept.get("links.delay", []), key=parse_time)
        if study.sweep == "qcnp-20-stage-grid":
            assert quick["links.delay"] == delays[:1]
        elif study.sweep == "qcnp-ig-rtt-sweep":
            assert quick["cm.w"] == [min(swept["cm.w"]), max(swept["cm.w"])]
        elif "cm.scheme" in swept and len(delays) > 2:
            assert quick["links.delay"] == [delays[0], delays[-1]], study.sweep


def test_grid_sizes() -> None:
    # M/PAUSE x RTT x scheme; PS-QCNP-RTT: 3 schemes x 3 W x 6 RTT; scheme x PAUSE (x traffic)
    assert len(expand(load_spec("qcnp-og-single-hop-grid"), "/x")) == 18
    assert len(expand(load_spec("qcnp-ig-rtt-sweep"), "/x")) == 54
    assert len(expand(load_spec("e2cm-non-cm-domain-grid"), "/x")) == 12
    assert len(expand(load_spec("eval-sh-og-2g-grid"), "/x")) == 8


def _run_quick(tmp_path: Path, deck: str) -> dict:
    # the decks' checks are run and judged by tests/test_check.py; here only the studies (the
    # modern deck has no checks, so it runs as by default: without them, and without refusal)
    skip = [] if deck == "modern" else ["--no-checks"]
    res = runner.invoke(app, ["reproduce", deck, "--quick", *skip, "--out", str(tmp_path)])
    assert res.exit_code == 0, res.output
    doc = json.loads((tmp_path / "deck.json").read_text())
    assert "checks" not in doc and not (tmp_path / "checks").exists()
    assert doc["deck"] == deck and doc["quick"] is True
    html = (tmp_path / "report.html").read_text()
    assert [s["sweep"] for s in doc["studies"]] == STUDIES[deck]
    for s in doc["studies"]:
        assert s["status"] == "done", (s["sweep"], s.get("reason"))
        assert not s["failed"], s["failed"]
        assert s["sweep"] in html
        assert s["figures"], s["sweep"]
        for f in s["figures"]:
            assert (tmp_path / f["file"]).stat().st_size > 5000, f["file"]
        assert s["tables"] and s["tables"][0]["rows"]
    assert (tmp_path / "catalog.duckdb").is_file()
    return doc


def _figures(doc: dict, sweep: str) -> set[str]:
    study = next(s for s in doc["studies"] if s["sweep"] == sweep)
    return {f["file"].split("/")[-1] for f in study["figures"]}


def test_reproduce_qcnp_quick(tmp_path: Path) -> None:
    doc = _run_quick(tmp_path, "qcnp")
    assert _figures(doc, "qcnp-og-single-hop-grid") >= {
        "qcnp-og-single-hop-grid-queue-m150.png", "qcnp-og-single-hop-grid-aggregate-m150.png",
        "qcnp-og-single-hop-grid-hot-port-m150.png", "qcnp-og-single-hop-grid-vs-rtt-m150.png", "qcnp-og-single-hop-grid-per-flow.png"}
    assert "qcnp-ig-rtt-sweep-qcn-vs-rtt.png" in _figures(doc, "qcnp-ig-rtt-sweep")
    table = doc["studies"][0]["tables"][0]
    assert set(table["columns"][:4]) == {"scheme", "RTT", "M", "PAUSE"}
    i = table["columns"].index("scheme")
    assert {r[i] for r in table["rows"]} == {"ECM-Q", "QCN", "QCN-SONAR"}
    # the parking-lot table carries the per-flow throughput (max-min 2.0, proportional 1.67/3.33)
    lot = next(s for s in doc["studies"] if s["sweep"] == "qcnp-parking-lot-grid")["tables"][0]
    assert any("5->7" in c for c in lot["columns"])


def test_reproduce_e2cm_quick(tmp_path: Path) -> None:
    doc = _run_quick(tmp_path, "e2cm")
    figs = _figures(doc, "e2cm-mixed-speed-og-grid")
    assert {"e2cm-mixed-speed-og-grid-per-flow-bernoulli.png", "e2cm-mixed-speed-og-grid-per-node-bursty.png",
            "e2cm-mixed-speed-og-grid-summary-bernoulli.png", "e2cm-mixed-speed-og-grid-queue.png"} <= figs
    table = doc["studies"][0]["tables"][0]
    assert "completed flows" in table["columns"] and "FCT mean (ms)" in table["columns"]
    i = table["columns"].index("traffic")
    assert {r[i] for r in table["rows"]} == {"Bernoulli", "Bursty"}


def test_reproduce_eval_quick(tmp_path: Path) -> None:
    doc = _run_quick(tmp_path, "eval")
    sh = next(s for s in doc["studies"] if s["sweep"] == "eval-sh-og-2g-grid")
    table = sh["tables"][0]
    for col in ("aggregate (Gb/s)", "drops (frames)", "% time paused", "CM overhead (Mb/s)", "hot queue mean (KB)", "bottleneck utilisation"):
        assert col in table["columns"]
    # every scheme, with and without PAUSE
    i, j = table["columns"].index("scheme"), table["columns"].index("PAUSE")
    assert {(r[i], r[j]) for r in table["rows"]} == {(s, p) for s in ("no CM", "ECM", "QCN-2pt", "QCN-3pt") for p in ("PAUSE on", "PAUSE off")}
    efr = next(s for s in doc["studies"] if s["sweep"] == "eval-baseline-efr")
    t = efr["tables"][0]
    col = t["columns"].index("EFR")
    assert {r[col] for r in t["rows"]} == {"EFR on", "EFR off"}


def test_reproduce_modern_quick(tmp_path: Path) -> None:
    """Issue 15's study: no CM, ECM, QCN and DCQCN side by side, per-flow figures with the max-min
    share; on the incast every scheme keeps the queue far below the hogging one and DCQCN splits
    the port fairly."""
    doc = _run_quick(tmp_path, "modern")
    assert "modern-zhb-og-multi-hop-per-flow.png" in _figures(doc, "modern-zhb-og-multi-hop")
    assert "modern-qcnp-parking-lot-per-flow.png" in _figures(doc, "modern-qcnp-parking-lot")
    incast = doc["studies"][0]["tables"][0]
    cols = incast["columns"]
    rows = {r[cols.index("scheme")]: r for r in incast["rows"]}
    assert set(rows) == {"no CM", "ECM", "QCN", "DCQCN", "DCQCN (NIC)", "FECN"}

    def num(row: list[str], col: str) -> float:
        return float(row[cols.index(col)].replace(",", ""))

    for scheme in ("DCQCN", "DCQCN (NIC)", "FECN"):
        assert num(rows[scheme], "hot queue mean (KB)") < 0.25 * num(rows["no CM"], "hot queue mean (KB)")
        for flow in ("H1->H3 (Gb/s)", "H2->H3 (Gb/s)"):
            assert num(rows[scheme], flow) == pytest.approx(5.0, rel=0.10)
