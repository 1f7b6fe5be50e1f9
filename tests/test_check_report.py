"""What ``cnsim check`` writes from its verdicts (cnsim.check.report), on rows written here: the
tally per deck, checks.json and checks.parquet, and the report's sections and subtitle. The
verdicts themselves are test_check.py's."""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
from cnsim.check.report import COLUMNS, checks_sections, tally, write_checks_report, write_results
from cnsim.check.report import _label as label


def row(check_id: str, deck: str, verdict: str, **extra: Any) -> dict[str, Any]:
    return {"id": check_id, "deck": deck, "class": "Q", "claim": f"claim {check_id}", "expected": "e", "measured": "m",
            "tolerance": "t", "verdict": verdict, "runs": [f"runs/{check_id}"], "reason": f"reason {check_id}",
            "source": "s", "conditions": ["x > 1"], **extra}


ROWS = [row("T-Z01", "zhb", "pass"), row("T-K01", "kd", "fail"), row("T-Z02", "zhb", "not_run"), row("T-Z03", "zhb", "pass")]


def test_the_tally_counts_each_deck_in_order_then_all() -> None:
    assert list(tally(ROWS).items()) == [
        ("zhb", {"pass": 2, "fail": 0, "not_run": 1, "total": 3}),
        ("kd", {"pass": 0, "fail": 1, "not_run": 0, "total": 1}),
        ("all", {"pass": 2, "fail": 1, "not_run": 1, "total": 4}),
    ]
    assert tally([]) == {}


def test_a_points_label_names_the_last_part_of_each_key() -> None:
    # links.delay is the one-way link delay: not the kd deck's "delay", the loop (2 x links.delay)
    assert label({"links.delay": "4us", "cm.w": 2.0}) == "link delay=4us, w=2.0"
    assert label({}) == "run"


def test_checks_json_and_parquet_hold_every_row(tmp_path: Path) -> None:
    write_results(tmp_path, ROWS, {"decks": ["zhb", "kd"], "seeds": 3})
    doc = json.loads((tmp_path / "checks.json").read_text())
    assert doc == {"decks": ["zhb", "kd"], "seeds": 3, "tally": tally(ROWS), "checks": ROWS}
    table = pq.read_table(tmp_path / "checks.parquet")
    assert table.column_names == COLUMNS
    assert table.to_pylist() == [{c: r[c] for c in COLUMNS} for r in ROWS]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["checks.json", "checks.parquet"]  # no temporary file left


def png(width: int, height: int) -> bytes:
    return b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + b"IHDR" + struct.pack(">II", width, height)


def test_the_sections_are_the_tally_then_each_deck_with_its_failures_figures(tmp_path: Path) -> None:
    (tmp_path / "figures").mkdir()
    (tmp_path / "figures" / "T-K01.png").write_bytes(png(640, 480))
    (tmp_path / "figures" / "T-Z01.png").write_bytes(png(640, 480))  # a passed check's figure is not shown
    doc = {"checks": ROWS, "tally": tally(ROWS), "seeds": 1, "quick": True, "runs": 12, "wall_s": 42.4}
    sections = checks_sections(tmp_path, doc, prefix="kd: ")
    assert [s.title for s in sections] == ["kd: Checks: tally", "kd: Checks: zhb", "kd: Checks: kd"]
    assert [s.anchor for s in sections] == ["checks-tally", "checks-zhb", "checks-kd"]
    assert sections[0].text == ["Checks of targets.md evaluated on 1 seed(s) per point (--quick: runs cut after the last "
                                "window the checks measure, one seed); 12 runs in 42 s."]
    assert sections[0].tables[0].rows == [["zhb", 2, 0, 1, 3], ["kd", 0, 1, 0, 1], ["all", 2, 1, 1, 4]]
    zhb, kd = sections[1], sections[2]
    assert [r[0] for r in zhb.tables[0].rows] == ["T-Z01", "T-Z02", "T-Z03"] and zhb.figures == []
    assert kd.tables[0].rows == [["T-K01", "Q", "fail", "claim T-K01", "e", "m", "reason T-K01"]]
    assert kd.tables[0].text_columns == [0, 1, 2, 3, 4, 5, 6]  # every column is text, none a number to align
    (fig,) = kd.figures
    assert (fig.title, fig.caption) == ("T-K01", "T-K01 failed — reason T-K01 (measured: m)")


def test_a_full_run_says_so_and_an_empty_record_has_only_its_tally(tmp_path: Path) -> None:
    doc = {"checks": ROWS[:1], "tally": tally(ROWS[:1]), "seeds": 3, "quick": False, "runs": 6, "wall_s": 0.4}
    assert checks_sections(tmp_path, doc)[0].text == ["Checks of targets.md evaluated on 3 seed(s) per point; 6 runs in 0 s."]
    (only,) = checks_sections(tmp_path, {"tally": {"zhb": {"pass": 2}, "kd": {}}})
    assert only.title == "Checks: tally" and only.tables[0].rows == [["zhb", 2, 0, 0, 0], ["kd", 0, 0, 0, 0]]  # counts left out are 0
    assert only.text == ["Checks of targets.md evaluated on None seed(s) per point; 0 runs in 0 s."]


def test_a_record_without_a_tally_reports_zero_checks(tmp_path: Path) -> None:
    (tmp_path / "checks.json").write_text(json.dumps({"decks": ["kd"], "checks": []}))
    assert "0 pass · 0 fail · 0 not run of 0 checks" in write_checks_report(tmp_path).read_text()


def test_the_report_page_is_written_with_the_tally_in_its_subtitle(tmp_path: Path) -> None:
    write_results(tmp_path, ROWS, {"decks": ["zhb", "kd"], "executor": "local (2 threads)", "seeds": 1, "runs": 4, "wall_s": 1.0})
    path = write_checks_report(tmp_path)
    assert path == tmp_path / "report.html"
    html = path.read_text()
    assert "2 pass · 1 fail · 1 not run of 4 checks" in html and "decks zhb, kd · executor local (2 threads)" in html


def test_the_report_is_replaced_whole_or_not_at_all(tmp_path: Path, monkeypatch: Any) -> None:
    """A check (or reproduction) folder is resumed in place and its report.html rewritten on every
    start: a command stopped while writing it (SIGTERM, kill -9, a full disk) left it cut short."""
    import pytest

    write_results(tmp_path, ROWS, {"decks": ["zhb", "kd"], "seeds": 1})
    page = write_checks_report(tmp_path)
    before = page.read_text()
    real = Path.write_text

    def cut_short(self: Path, data: str, *args: Any, **kwargs: Any) -> int:
        real(self, data[:100], *args, **kwargs)
        raise KeyboardInterrupt

    monkeypatch.setattr(Path, "write_text", cut_short)
    with pytest.raises(KeyboardInterrupt):
        write_checks_report(tmp_path)
    monkeypatch.undo()
    assert page.read_text() == before
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".")]
