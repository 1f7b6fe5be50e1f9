"""A deck reproduction's parts (cnsim.reproduce): the deck registry, the --quick subset of a
study's spec, a pending study's reason, whether the deck's checks run, the plan made before
anything runs, a small deck run end to end, and the report page read back section by section."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import cnsim.reproduce as reproduce_module
import pytest
from _faults import fail_runs, long_links
from cnsim.errors import ScenarioError
from cnsim.executors import LocalExecutor
from cnsim.reproduce import (
    DECKS,
    Deck,
    Study,
    _base_toml,
    _subset,
    deck_page,
    get_deck,
    plan_deck,
    quick_note,
    quick_spec,
    reproduce,
    study_status,
    with_checks,
)
from cnsim.reproduce.figures import SummaryTable, TimeFigure
from cnsim.reproduce.kd import kd_label
from cnsim.sweep import SweepSpec, count_runs, load_spec, run_sweep

pytest.importorskip("cnsim._core")


def test_every_deck_is_its_modules_and_an_unknown_one_is_refused() -> None:
    assert DECKS == ("zhb", "qcnp", "kd", "e2cm", "eval", "modern")
    for name in DECKS:
        module = __import__(f"cnsim.reproduce.{name}", fromlist=["DECK"])
        assert get_deck(name) is module.DECK and module.DECK.name == name
    with pytest.raises(ScenarioError) as err:
        get_deck("figures")  # a module of the package, not a deck
    assert str(err.value) == "unknown deck 'figures'; decks: zhb, qcnp, kd, e2cm, eval, modern"


def test_quick_keeps_the_first_middle_and_last_value() -> None:
    assert [_subset(list(range(n))) for n in range(6)] == [[], [0], [0, 1], [0, 1, 2], [0, 2, 3], [0, 2, 4]]
    assert _subset(list(range(10))) == [0, 5, 9]


def _deck(quick_set: dict[str, Any] | None = None) -> Deck:
    return Deck("t", "title", "source", [], quick_set=quick_set or {})


def test_a_quick_spec_subsets_axes_and_zips_and_keeps_the_first_seed() -> None:
    spec = SweepSpec("s", "zhb-og-single-hop", seeds=[3, 4, 5], set={"duration": "1s", "cm.scheme": "bcn"},
                     axes={"cm.gd": ["a", "b", "c", "d", "e"], "cm.w": [1, 2]},
                     zip={"cm.qeq": ["q1", "q2", "q3", "q4"], "cm.gi": ["g1", "g2", "g3", "g4"]})
    deck = _deck({"duration": "0.1s", "hotspots.0.start": "0.02s", "metrics.window": ["0.05s", "0.1s"]})
    quick = quick_spec(spec, Study("s", "t"), deck)
    assert quick.axes == {"cm.gd": ["a", "c", "e"], "cm.w": [1, 2]}
    assert quick.zip == {"cm.qeq": ["q1", "q3", "q4"], "cm.gi": ["g1", "g3", "g4"]}  # the zipped keys stay paired
    assert quick.seeds == [3]
    assert quick.set == {"duration": "0.1s", "cm.scheme": "bcn", "hotspots.0.start": "0.02s", "metrics.window": ["0.05s", "0.1s"]}
    assert (quick.name, quick.base) == ("s", "zhb-og-single-hop")
    # a study's own values replace an axis or a zipped key, and its settings win over the deck's
    study = Study("s", "t", quick_axes={"cm.w": [2], "cm.qeq": ["x", "y", "z"]}, quick_set={"duration": "0.2s"})
    quick = quick_spec(spec, study, deck)
    assert quick.axes == {"cm.gd": ["a", "c", "e"], "cm.w": [2]}
    assert quick.zip == {"cm.qeq": ["x", "y", "z"], "cm.gi": ["g1", "g3", "g4"]}
    assert quick.set["duration"] == "0.2s"
    assert spec.axes["cm.w"] == [1, 2] and spec.seeds == [3, 4, 5]  # the spec itself is left as it was


def test_a_base_without_a_hotspot_keeps_its_timing_and_its_window() -> None:
    spec = SweepSpec("s", "kd-symmetric-single-hs", axes={"links.delay": ["4us"]})
    deck = _deck({"duration": "0.1s", "hotspots.0.start": "0.02s", "hotspots.0.end": "0.05s", "metrics.window": ["0s", "0.1s"]})
    assert quick_spec(spec, Study("s", "t"), deck).set == {"duration": "0.1s"}
    assert quick_spec(SweepSpec("s", "zhb-og-single-hop"), Study("s", "t"), deck).set == deck.quick_set


def test_a_study_is_pending_until_its_spec_and_base_exist(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert study_status(Study("no-such-sweep", "x")) == (None, "the sweep spec no-such-sweep is not shipped yet")
    spec, reason = study_status(Study("kd-qeq150-delay", "x"))
    assert reason == "" and spec == load_spec("kd-qeq150-delay")
    # a spec whose base scenario the catalog does not have yet: pending with the base named
    missing = tmp_path / "later.toml"
    missing.write_text('base = "zhb-future-case"\n[axes]\n"cm.gd" = [1]\n')
    bad = tmp_path / "bad.toml"
    bad.write_text('base = "kd-symmetric-single-hs"\nseeds = []\n')
    monkeypatch.setattr(reproduce_module, "shipped_sweeps", lambda: [str(missing), str(bad)])
    assert study_status(Study(str(missing), "x")) == (None, "its base scenario is not in the catalog yet ('zhb-future-case')")
    with pytest.raises(ScenarioError, match="seeds: must be a non-empty list"):  # any other fault is an error
        study_status(Study(str(bad), "x"))


def test_a_decks_checks_run_by_default_when_it_has_them() -> None:
    assert with_checks("kd", None) is True and with_checks("kd", True) is True and with_checks("kd", False) is False
    assert with_checks("modern", None) is False and with_checks("modern", False) is False
    with pytest.raises(ScenarioError) as err:
        with_checks("modern", True)
    assert str(err.value) == "--checks: deck 'modern' has no checks in targets.md; check decks: zhb, qcnp, kd, eval, e2cm, cross"


def test_the_plan_resolves_every_run_and_estimates_it(monkeypatch: pytest.MonkeyPatch) -> None:
    plan = plan_deck("kd", quick=True, checks=False)
    deck = get_deck("kd")
    assert [p.study for p in plan.studies] == deck.studies and not plan.checks and plan.check_memory == []
    for p in plan.studies:
        assert p.spec == quick_spec(load_spec(p.study.sweep), p.study, deck) and p.reason == ""
        assert len(p.memory) == count_runs(p.spec) and all(m > 0 for m in p.memory)
    assert [count_runs(p.spec) for p in plan.studies] == [4, 3, 3, 4, 3, 3]
    full = plan_deck("kd", checks=False)
    assert [p.spec for p in full.studies] == [load_spec(s.sweep) for s in deck.studies]
    checked = plan_deck("kd", quick=True)
    assert checked.checks and len(checked.check_memory) > 0 and all(m > 0 for m in checked.check_memory)
    # a deck of more runs than a sweep may have is refused before anything is estimated
    monkeypatch.setattr("cnsim.sweep.MAX_RUNS", 19)
    with pytest.raises(ScenarioError) as err:
        plan_deck("kd", quick=True, checks=False)
    assert str(err.value) == "reproduce kd: 20 runs, more than the limit of 19 runs"
    monkeypatch.setattr("cnsim.sweep.MAX_RUNS", 20)
    assert len(plan_deck("kd", quick=True, checks=False).studies) == 6


def test_a_pending_study_is_planned_without_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    deck = Deck("kd", "t", "s", [Study("not-yet", "later"), Study("kd-qeq150-delay", "now")])
    monkeypatch.setattr(reproduce_module, "get_deck", lambda name: deck)
    plan = plan_deck("kd", checks=False)
    assert plan.studies[0].spec is None and plan.studies[0].reason == "the sweep spec not-yet is not shipped yet"
    assert plan.studies[0].memory == [] and len(plan.studies[1].memory) == 4


SMALL = Deck(
    name="kd",
    title="a small deck",
    source="the test",
    studies=[
        Study("kd-qeq150-delay", "delays", text="two loop delays over {duration}", quick_axes={"links.delay": ["4us", "50us"]},
              figures=[TimeFigure("q", "the queue", "hot_queue", caption="cap {window}"), TimeFigure("none", "no run", "hot_queue", seed=9)],
              tables=[SummaryTable("drops", ["drops"])]),
        Study("not-yet", "a later study"),
    ],
    quick_set={"duration": "20ms", "metrics.window": ["5ms", "20ms"]},
    labeler=kd_label,
    notes=["a note"],
)


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any], list[str], LocalExecutor]:
    """SMALL reproduced with --quick and without checks, on an executor the caller keeps."""
    out = tmp_path_factory.mktemp("deck")
    calls: list[str] = []

    def progress(name: str) -> Any:
        calls.append(name)
        return lambda done, total, failed: None

    executor = LocalExecutor(1)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(reproduce_module, "get_deck", lambda name: SMALL)
        started = time.perf_counter()
        doc = reproduce("kd", out, quick=True, executor=executor, progress=progress, checks=False)
        doc["test_elapsed_s"] = time.perf_counter() - started
    return out, doc, calls, executor


def test_a_reproduction_runs_its_studies_and_writes_deck_json(small: Any) -> None:
    out, doc, calls, executor = small
    elapsed = doc.pop("test_elapsed_s")
    assert json.loads((out / "deck.json").read_text()) == json.loads(json.dumps(doc))
    assert 0 < doc["studies"][0]["wall_s"] < doc["wall_s"] < elapsed
    assert {k: doc[k] for k in ("deck", "title", "source", "quick", "notes", "executor")} == {
        "deck": "kd", "title": "a small deck", "source": "the test", "quick": True, "notes": ["a note", quick_note(SMALL)], "executor": "local (1 thread)"}
    assert "checks" not in doc
    ran, pending = doc["studies"]
    assert (ran["status"], ran["runs"], ran["failed"], ran["reason"], ran["text"]) == ("done", 2, [], "", "two loop delays over 0.02 s")  # the runs' times filled in
    assert ran["spec"]["axes"] == {"links.delay": ["4us", "50us"]} and ran["spec"]["set"]["duration"] == "20ms"
    assert ran["figures"] == [{"file": "kd-qeq150-delay/q.png", "title": "the queue", "caption": "cap [0.002, 0.02] s"}]  # the one of no run is left out
    (table,) = ran["tables"]
    assert (table["title"], table["columns"], table["keys"]) == ("drops", ["loop delay", "seed", "drops (frames)"], 1)
    assert [r[:2] for r in table["rows"]] == [["8 us", "1"], ["100 us", "1"]]
    assert pending == {"sweep": "not-yet", "title": "a later study", "text": "", "status": "pending",
                       "reason": "the sweep spec not-yet is not shipped yet", "figures": [], "tables": []}
    assert calls == ["kd-qeq150-delay"]  # a study that runs gets a progress bar, a pending one none
    assert (out / "catalog.duckdb").is_file() and (out / "report.html").is_file()
    # the executor given is the caller's: still open, it runs more work
    spec = SweepSpec("after", "kd-symmetric-single-hs", set={"duration": "2ms"})
    assert not run_sweep(spec, out / "after", executor=executor, catalog=False).failed
    executor.close()


def test_a_reproduction_makes_its_own_executor_and_closes_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    deck = Deck("kd", "t", "s", [Study("kd-qeq150-delay", "one", quick_axes={"links.delay": ["4us"]})],
                quick_set={"duration": "5ms", "metrics.window": ["0ms", "5ms"]})
    monkeypatch.setattr(reproduce_module, "get_deck", lambda name: deck)
    doc = reproduce("kd", tmp_path, quick=True, workers=1, checks=False)
    assert doc["executor"] == "local (1 thread)" and doc["studies"][0]["runs"] == 1
    assert not [t for t in threading.enumerate() if t.name.startswith("cnsim-run")]  # its workers are gone


def test_a_study_whose_every_run_failed_is_failed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs made to fail (by their link delay) in one study entirely and in another in part."""
    fail_runs(monkeypatch, long_links)
    deck = Deck("kd", "t", "s", [Study("kd-qeq150-delay", "all fail", quick_axes={"links.delay": ["50us", "100us"]}),
                                 Study("kd-qeq24-delay", "one fails", quick_axes={"links.delay": ["4us", "50us"]})],
                quick_set={"duration": "5ms", "metrics.window": ["0ms", "5ms"]})
    monkeypatch.setattr(reproduce_module, "get_deck", lambda name: deck)
    doc = reproduce("kd", tmp_path, quick=True, workers=1, checks=False)
    every, some = doc["studies"]
    assert (every["status"], len(every["failed"]), some["status"], len(some["failed"])) == ("failed", 2, "done", 1)
    assert all("injected failure" in error for _run, error in every["failed"] + some["failed"])


def test_a_reproduction_names_its_failed_and_repaired_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`cnsim reproduce` exited 1 for a failed run without saying which, or why (a study's line
    said "done  …  2 runs"), and ran damaged run folders again silently; it now says both on
    stderr, as `cnsim sweep` does, the checks' runs included."""
    from cnsim.cli import app
    from typer.testing import CliRunner

    real_run = fail_runs(monkeypatch, long_links)
    deck = Deck("kd", "t", "s", [Study("kd-qeq150-delay", "one fails", quick_axes={"links.delay": ["4us", "50us"]})],
                quick_set={"duration": "5ms", "metrics.window": ["0ms", "5ms"]})
    monkeypatch.setattr(reproduce_module, "get_deck", lambda name: deck)
    out = tmp_path / "r"
    args = ["reproduce", "kd", "--quick", "--no-checks", "--workers", "1", "--out", str(out)]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 1, res.output
    (failed_id, _error), = json.loads((out / "deck.json").read_text())["studies"][0]["failed"]
    assert res.stdout.startswith("    done  kd-qeq150-delay              2 runs (1 failed), 0 figures")
    assert res.stderr == f"run {failed_id} in kd-qeq150-delay failed: RuntimeError: injected failure\n"
    monkeypatch.setattr("cnsim.runner.run", real_run)
    victim = next(p for p in sorted((out / "kd-qeq150-delay" / "runs").iterdir()) if (p / "summary.json").is_file())
    (victim / "series" / "queue.parquet").unlink()
    res = CliRunner().invoke(app, [*args, "--quiet"])
    assert res.exit_code == 0 and res.stdout == ""
    assert res.stderr == (f"1 run folder(s) in kd-qeq150-delay had a corrupted or partial summary.json, a missing manifest.json "
                          f"or scenario.toml, or a damaged or missing series file and were run again: {victim.name}\n")


def test_an_interrupted_reproduction_without_checks_says_to_resume_without_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The resume line dropped --no-checks: the command it gave then ran the deck's checks too."""
    from cnsim.cli import app
    from typer.testing import CliRunner

    out = tmp_path / "r"

    def stopped(*_args: Any, **_kwargs: Any) -> None:
        (out / "kd-qeq150-delay").mkdir(parents=True)
        raise KeyboardInterrupt

    monkeypatch.setattr(reproduce_module, "reproduce", stopped)
    res = CliRunner().invoke(app, ["reproduce", "kd", "--quick", "--no-checks", "--workers", "1", "--out", str(out)])
    assert res.exit_code == 130
    assert res.stderr == f"cnsim: interrupted; completed runs are kept in {out}. Resume with: cnsim reproduce kd --quick --no-checks --out {out}\n"


def test_a_reproduction_notes_each_studys_and_its_checks_rerun_and_failed_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What a reproduction says on stderr about its runs, --quiet or not: per study and for the
    checks, the folders run again and the runs that failed; a study that says nothing of them
    (a pending one) adds nothing, and a failed run ends the command with status 1."""
    from cnsim.cli import app
    from typer.testing import CliRunner

    studies = [
        {"status": "done", "sweep": "one", "outdated": ["o1", "o2"], "repaired": ["r1"], "failed": [["f1", "boom"]]},
        {"status": "pending", "sweep": "two", "reason": "not shipped yet"},
    ]
    doc = {"studies": studies, "check_runs": {"outdated": ["o3"], "repaired": ["r2", "r3"], "failed": [["f2", "bang"]]}}
    monkeypatch.setattr(reproduce_module, "reproduce", lambda *_args, **_kwargs: doc)
    res = CliRunner().invoke(app, ["reproduce", "kd", "--quick", "--quiet", "--workers", "1", "--out", str(tmp_path / "r")])
    assert res.exit_code == 1, res.output
    redone = "had a corrupted or partial summary.json, a missing manifest.json or scenario.toml, or a damaged or missing series file and were run again"
    assert res.stdout == "" and res.stderr.splitlines() == [
        "2 run folder(s) in one were made by another version of cnsim's results and were run again",
        f"1 run folder(s) in one {redone}: r1",
        "run f1 in one failed: boom",
        "1 run folder(s) of the checks were made by another version of cnsim's results and were run again",
        f"2 run folder(s) of the checks {redone}: r2, r3",
        "run f2 of the checks failed: bang",
    ]
    doc.pop("check_runs")
    studies[0] = {"status": "done", "sweep": "one"}
    res = CliRunner().invoke(app, ["reproduce", "kd", "--quick", "--quiet", "--workers", "1", "--out", str(tmp_path / "s")])
    assert (res.exit_code, res.stdout, res.stderr) == (0, "", ""), res.output


def test_the_report_page_shows_the_overview_and_each_study(small: Any) -> None:
    out, doc, _calls, _executor = small
    page = deck_page(out)
    assert page.title == "cnsim reproduce kd --quick — a small deck"
    assert page.subtitle[0] == "the test" and page.subtitle[2:] == ["a note", quick_note(SMALL)]
    assert page.subtitle[1].startswith("1 of 2 studies run · 2 runs · ") and page.subtitle[1].endswith(" s wall · executor local (1 thread)")
    overview, ran, pending = page.sections
    assert (overview.title, overview.anchor) == ("Overview", "overview")
    (table,) = overview.tables
    assert table.columns == ["study", "title", "status", "runs", "wall (s)", "note"] and table.text_columns == [0, 1, 2, 5]
    assert [r[:4] + r[5:] for r in table.rows] == [["kd-qeq150-delay", "delays", "done", "2", ""],
                                                 ["not-yet", "a later study", "pending", "–", "the sweep spec not-yet is not shipped yet"]]
    assert (ran.title, ran.anchor, ran.status) == ("kd-qeq150-delay: delays", "kd-qeq150-delay", "done")
    assert ran.text == ["two loop delays over 0.02 s"]
    (fig,) = ran.figures
    assert (fig.title, fig.caption) == ("the queue", "cap [0.002, 0.02] s") and fig.src.startswith("data:image/png;base64,")
    (t,) = ran.tables
    assert (t.title, t.columns, t.text_columns) == ("drops", ["loop delay", "seed", "drops (frames)"], [0])
    spec_block, toml_block = ran.blocks
    assert json.loads(spec_block.text) == doc["studies"][0]["spec"]
    assert toml_block.title == "resolved scenario of the first run (scenario.toml)"
    first = json.loads((out / "kd-qeq150-delay" / "sweep.json").read_text())["runs"][0]["run_id"]
    assert toml_block.text == (out / "kd-qeq150-delay" / "runs" / first / "scenario.toml").read_text()
    assert pending.status == "pending" and pending.text == [
        "Pending: the sweep spec not-yet is not shipped yet. It runs automatically once the catalog has it."]
    assert not pending.blocks and not pending.figures


def test_a_report_of_failed_runs_missing_figures_and_checks(tmp_path: Path) -> None:
    from cnsim.check.report import checks_sections

    doc = {"deck": "kd", "title": "t", "source": None, "quick": False, "executor": "x", "wall_s": 12.5,
           "studies": [{"sweep": "s1", "title": "one", "status": "failed", "runs": 2, "wall_s": 3.0, "reason": "",
                        "failed": [["r1", "boom"], ["r2", "bang"]], "figures": [{"file": "s1/gone.png", "title": "g"}],
                        "tables": [{"title": "tab", "columns": ["a", "b", "c"], "rows": [["1", "2", "3"]], "keys": 2}]},
                       {"sweep": "s2", "title": "two", "status": "done", "runs": 1, "wall_s": 1.0, "failed": [["r3", "x"]]},
                       {"sweep": "s3", "title": "three", "status": "done", "runs": 4, "spec": {"name": "s3", "axes": {"k": [1]}},
                        "tables": [{"title": "no keys", "columns": ["a"], "rows": [["1"]]}]}]}
    (tmp_path / "deck.json").write_text(json.dumps(doc))
    checks = {"decks": ["kd"], "seeds": 1, "runs": 0, "wall_s": 0, "tally": {"kd": {"pass": 1, "total": 1}},
              "checks": [{"id": "T-K01", "deck": "kd", "class": "A", "verdict": "pass", "claim": "c", "expected": "e",
                          "measured": "m", "reason": ""}]}
    (tmp_path / "checks").mkdir()
    (tmp_path / "checks" / "checks.json").write_text(json.dumps(checks))
    page = deck_page(tmp_path)
    assert page.title == "cnsim reproduce kd — t"
    assert page.subtitle == ["", "2 of 3 studies run · 7 runs · 12.5 s wall · executor x"]
    overview = page.sections[0]
    assert [r[5] for r in overview.tables[0].rows] == ["2 failed runs", "1 failed runs", ""]
    checks_part = [s.title for s in checks_sections(tmp_path / "checks", checks)]
    assert [s.title for s in page.sections[1:-3]] == checks_part == ["Checks: tally", "Checks: kd"]
    one, two, three = page.sections[-3:]
    assert one.status == "failed" and one.text == ["run r1 failed: boom", "run r2 failed: bang"]
    assert not one.figures  # a figure whose file is gone is left out
    (table,) = one.tables
    assert table.text_columns == [0, 1] and table.rows == [["1", "2", "3"]]
    assert not one.blocks  # no spec recorded, no run folder
    assert two.text == ["run r3 failed: x"] and not two.tables
    (table,) = three.tables
    assert table.text_columns == []  # no swept keys recorded: every column is a number
    (block,) = three.blocks
    assert block.text == '{\n  "name": "s3",\n  "axes": {\n    "k": [\n      1\n    ]\n  }\n}'


def test_the_first_runs_scenario_only_when_it_can_be_read(tmp_path: Path) -> None:
    assert _base_toml(tmp_path) == ""  # no runs folder
    (tmp_path / "runs" / "abc").mkdir(parents=True)
    assert _base_toml(tmp_path) == ""  # no sweep.json
    (tmp_path / "sweep.json").write_text("{not json")
    assert _base_toml(tmp_path) == ""
    (tmp_path / "sweep.json").write_text(json.dumps({"runs": []}))
    assert _base_toml(tmp_path) == ""
    (tmp_path / "sweep.json").write_text(json.dumps({"runs": [{"run_id": "abc"}, {"run_id": "def"}]}))
    assert _base_toml(tmp_path) == ""  # its scenario.toml is missing
    (tmp_path / "runs" / "abc" / "scenario.toml").write_text("seed = 1\n")
    (tmp_path / "runs" / "def").mkdir()
    (tmp_path / "runs" / "def" / "scenario.toml").write_text("seed = 2\n")
    assert _base_toml(tmp_path) == "seed = 1\n"
