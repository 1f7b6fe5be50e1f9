"""Deck reproduction (cnsim.reproduce): every deck's --quick run produces its figures and report;
studies whose base scenario is not in the catalog yet are pending, not errors."""

from __future__ import annotations

import json
from pathlib import Path

from cnsim.cli import app
from cnsim.reproduce import DECKS, Study, get_deck, quick_spec, study_status
from cnsim.sweep import load_spec
from typer.testing import CliRunner

runner = CliRunner()


def _check_deck(out: Path, deck: str) -> dict:
    doc = json.loads((out / "deck.json").read_text())
    assert doc["deck"] == deck and doc["quick"] is True
    html = (out / "report.html").read_text()
    for s in doc["studies"]:
        assert s["status"] in ("done", "pending")
        assert s["sweep"] in html
        if s["status"] == "done":
            assert s["figures"], s["sweep"]
            for f in s["figures"]:
                assert (out / f["file"]).stat().st_size > 5000
            assert s["tables"] and s["tables"][0]["rows"]
            assert not s["failed"]
        else:
            assert "not in the catalog yet" in s["reason"] or "not shipped yet" in s["reason"]
    assert (out / "catalog.duckdb").is_file()
    return doc


def test_reproduce_kd_quick(tmp_path: Path) -> None:
    res = runner.invoke(app, ["reproduce", "kd", "--quick", "--out", str(tmp_path)])
    assert res.exit_code == 0, res.output
    doc = _check_deck(tmp_path, "kd")
    assert [s["sweep"] for s in doc["studies"]] == [
        "kd-qeq150-delay", "kd-qeq150-w", "kd-qeq150-w-initial", "kd-qeq24-delay", "kd-qeq24-w", "kd-qeq24-w-initial"
    ]
    assert all(s["status"] == "done" for s in doc["studies"])
    print(f"\nkd --quick: {doc['wall_s']:.1f} s wall (budget 60 s; speed is measured, not asserted)")
    first = doc["studies"][0]
    assert first["runs"] == 4 and len(first["figures"]) == 3
    # the legend shows the loop delay (2 x links.delay) and the table has per-source throughput
    table = first["tables"][0]
    assert table["columns"][0] == "loop delay"
    assert [r[0] for r in table["rows"]] == ["8 us", "100 us", "200 us", "500 us"]
    assert any("EP0->EP4" in c for c in table["columns"])
    # a second start reuses every run
    res = runner.invoke(app, ["reproduce", "kd", "--quick", "--out", str(tmp_path)])
    assert res.exit_code == 0
    assert json.loads((tmp_path / "kd-qeq150-delay" / "sweep.json").read_text())["runs"]


def test_reproduce_zhb_quick(tmp_path: Path) -> None:
    res = runner.invoke(app, ["reproduce", "zhb", "--quick", "--no-checks", "--out", str(tmp_path)])  # checks: test_check.py
    assert res.exit_code == 0, res.output
    doc = _check_deck(tmp_path, "zhb")
    done = {s["sweep"]: s for s in doc["studies"] if s["status"] == "done"}
    for sweep in ("zhb-og-single-hop-grid", "zhb-og-gd-sweep", "zhb-og-gi-sweep", "zhb-og-n-sweep", "zhb-og-w-sweep-scaled",
                  "zhb-og-w-sweep-fixed", "zhb-og-m-sweep", "zhb-og-m150-gd-sweep", "zhb-og-gi-grid",
                  # the slides' no-BCN curves of Cases 4 and 7 and the IG case's sub-runs (scenarios.md §2)
                  "zhb-og-n128-none", "zhb-sweeping-hotspot-none", "zhb-ig-single-hop-grid"):
        assert sweep in done, sweep
    assert all(s["status"] == "done" for s in doc["studies"]), [s["sweep"] for s in doc["studies"] if s["status"] != "done"]
    print(f"\nzhb --quick: {doc['wall_s']:.1f} s wall (budget 60 s; speed is measured, not asserted)")
    gd = done["zhb-og-gd-sweep"]
    assert {f["file"].split("/")[-1] for f in gd["figures"]} >= {"zhb-og-gd-sweep-queue.png", "zhb-og-gd-sweep-aggregate.png", "zhb-og-gd-sweep-hot-port.png"}
    # with BCN the aggregate stays far above the hogging collapse without it (case 1, partitioned)
    case1 = {tuple(r[:2]): r for r in done["zhb-og-single-hop-grid"]["tables"][0]["rows"]}
    assert float(case1[("BCN", "partitioned")][3]) > 1.5 * float(case1[("no CM", "partitioned")][3])



def test_the_zhb_n_sweep_captions_name_its_hot_port_and_each_sizes_ideal() -> None:
    study = next(s for s in get_deck("zhb").studies if s.sweep == "zhb-og-n-sweep")
    captions = {f.name.rsplit("-", 1)[-1]: f.caption for f in study.figures}
    assert captions["queue"] == "Length of the hot queue (S1/1, the congestion point) versus time; the hotspot is shaded."
    assert captions["port"] == "Throughput of the hot port S1/1 versus time (2 Gb/s during the hotspot)."
    assert captions["aggregate"].endswith("(ideal during the hotspot 61.5, 129.5 and 265.5 Gb/s at N = 8, 16 and 32).")


def test_every_deck_has_studies_and_pending_is_data_driven() -> None:
    for name in DECKS:
        deck = get_deck(name)
        assert deck.studies and deck.name == name
    spec, reason = study_status(Study("zhb-og-multi-hop-grid", "x"))
    if spec is None:
        assert "zhb-og-multi-hop" in reason
    assert study_status(Study("no-such-sweep", "x")) == (None, "the sweep spec no-such-sweep is not shipped yet")


def test_quick_spec_subsets_axes() -> None:
    deck = get_deck("zhb")
    study = next(s for s in deck.studies if s.sweep == "zhb-og-gd-sweep")
    q = quick_spec(load_spec("zhb-og-gd-sweep"), study, deck)
    assert q.axes["cm.gd"] == ["0.1*gd0", "1*gd0", "10*gd0"]
    assert q.set["duration"] == "0.12s" and q.set["cm.scheme"] == "bcn"


def test_unknown_deck_exit_2(tmp_path: Path) -> None:
    res = runner.invoke(app, ["reproduce", "nope", "--out", str(tmp_path)])
    assert res.exit_code == 2 and "unknown deck 'nope'" in res.output


def test_a_reproduction_cut_short_in_its_first_study_resumes_only_in_its_own_mode(tmp_path: Path) -> None:
    """Before its first deck.json a reproduction is known by its studies' sweep.json alone: one
    cut short in its first study (minutes for a full deck) was resumed by the other mode
    (`--quick` or not), and the study then held quick and full runs side by side, the catalog
    indexing both. The study's spec now says which reproduction made it."""
    from cnsim.cli import _reproduce_folder_refusal
    from cnsim.results import dump_json

    deck = get_deck("kd")
    study = deck.studies[0]
    for quick in (True, False):
        out = tmp_path / f"quick-{quick}"
        (out / study.sweep).mkdir(parents=True)
        spec = quick_spec(load_spec(study.sweep), study, deck) if quick else load_spec(study.sweep)
        (out / study.sweep / "sweep.json").write_text(dump_json({"spec": spec.to_dict(), "runs": []}))
        assert _reproduce_folder_refusal(out, deck, quick) is None  # its own: resumed
        mine, theirs = ("cnsim reproduce kd", "cnsim reproduce kd --quick") if quick else ("cnsim reproduce kd --quick", "cnsim reproduce kd")
        assert _reproduce_folder_refusal(out, deck, not quick) == f"its study {study.sweep} holds the runs of `{theirs}`, not of `{mine}`"
        (out / "deck.json").write_text(json.dumps({"deck": "kd", "quick": quick}))
        assert _reproduce_folder_refusal(out, deck, quick) is None
    out = tmp_path / "quick-True"
    (out / "deck.json").unlink()
    res = runner.invoke(app, ["reproduce", "kd", "--no-checks", "--out", str(out)])
    assert res.exit_code == 2, res.output
    assert f"--out {out}: the folder is not empty and its study {study.sweep} holds the runs of `cnsim reproduce kd --quick`" in res.output
    assert sorted(p.name for p in out.iterdir()) == [study.sweep]  # nothing run, nothing written
