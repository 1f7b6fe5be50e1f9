"""``cnsim check --against DIR``: which verdicts changed and which measured values moved."""

from __future__ import annotations

import json
from pathlib import Path

from _cli import refused, runner
from cnsim.check.compare import ABSENT, Change, Judgement, compare, comparison_lines, load_judgement
from cnsim.cli import app


def _row(id_: str, verdict: str, measured: str) -> dict[str, str]:
    return {"id": id_, "verdict": verdict, "measured": measured}


def test_compare_sorts_each_check_into_changed_moved_or_same() -> None:
    before = Judgement(path=Path("old/checks.json"), quick=True, rows={r["id"]: r for r in [
        _row("T-A1", "fail", "x = 1"), _row("T-A2", "pass", "x = 2"), _row("T-A3", "pass", "x = 3"),
        _row("T-A4", "pass", "x = 4"), _row("T-GONE", "pass", "x = 9"),
    ]})
    after = [_row("T-A1", "pass", "x = 1.5"), _row("T-A2", "fail", "x = 2"), _row("T-A3", "pass", "x = 3.1"),
             _row("T-A4", "pass", "x = 4"), _row("T-NEW", "not_run", "")]
    c = compare(before, after)
    assert c.changed == [Change("T-A1", "fail", "pass", "x = 1", "x = 1.5"), Change("T-A2", "pass", "fail", "x = 2", "x = 2"),
                         Change("T-NEW", ABSENT, "not_run", "", "")]
    assert (c.moved, c.same, c.not_judged_here) == (["T-A3"], 1, 1)
    assert comparison_lines(c, before, quick=False) == [
        "against old/checks.json (that judgement was --quick, this one is not): 2 verdicts changed (1 gained, 1 lost), "
        "1 measured value moved, 1 the same, 1 not judged there; 1 of its checks not judged here",
        "  T-A1: fail → pass", "    before: x = 1", "    now:    x = 1.5",
        "  T-A2: pass → fail", "    before: x = 2", "    now:    x = 2",
        "  moved, same verdict: T-A3",
        "  not judged there: T-NEW not_run",
    ]
    # the same mode says nothing of it, and a long measured value is cut (checks.json holds it whole)
    long = "v = [" + ", ".join(["1.234"] * 60) + "]"
    c = compare(before, [_row("T-A1", "pass", long)])
    lines = comparison_lines(c, before, quick=True)
    assert lines[0] == ("against old/checks.json: 1 verdict changed (1 gained, 0 lost), 0 measured values moved, 0 the same; "
                        "4 of its checks not judged here")
    assert len(lines[3]) == len("    now:    ") + 160 and lines[3].endswith("…")
    exact = "v = " + "9" * 156
    assert comparison_lines(compare(before, [_row("T-A1", "pass", exact)]), before, quick=True)[3] == f"    now:    {exact}"


def test_a_verdict_that_changes_between_fail_and_not_run_is_neither_gained_nor_lost() -> None:
    before = Judgement(path=Path("old/checks.json"), quick=None, rows={r["id"]: r for r in [
        _row("T-A1", "fail", "x = 1"), _row("T-A2", "not_run", ""), _row("T-A3", "pass", "x = 3"),
    ]})
    after = [_row("T-A1", "not_run", ""), _row("T-A2", "fail", "x = 2"), _row("T-A3", "not_run", "")]
    # a judgement that does not say whether it was --quick: nothing said of the modes
    assert comparison_lines(compare(before, after), before, quick=True)[0] == (
        "against old/checks.json: 3 verdicts changed (0 gained, 1 lost), 0 measured values moved, 0 the same")


def test_check_against_an_earlier_judgement_names_what_changed(tmp_path: Path) -> None:
    out = tmp_path / "kd"
    args = ["check", "kd", "--only", "T-K16", "--quick", "--workers", "1", "--quiet", "--out", str(out)]
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    doc = json.loads((out / "checks.json").read_text())
    mine = load_judgement(out)
    assert (mine.path, list(mine.rows), mine.quick) == (out / "checks.json", ["T-K16"], True)
    (row,) = doc["checks"]
    # an earlier judgement in which T-K16 failed with another value: a folder, its file, a reproduction's
    row.update(verdict="fail", measured="wide = [1, 2, 3]")
    earlier = tmp_path / "earlier"
    (earlier / "checks").mkdir(parents=True)
    (earlier / "checks" / "checks.json").write_text(json.dumps(doc))
    for given in (earlier, earlier / "checks" / "checks.json"):
        res = runner.invoke(app, [*args, "--against", str(given)])
        assert res.exit_code == 0, res.output
        assert res.stdout.splitlines()[:4] == [
            f"against {earlier / 'checks' / 'checks.json'}: 1 verdict changed (1 gained, 0 lost), 0 measured values moved, 0 the same",
            "  T-K16: fail → pass", "    before: wide = [1, 2, 3]", f"    now:    {json.loads((out / 'checks.json').read_text())['checks'][0]['measured']}",
        ]
    # against its own folder: its previous judgement, read before it is rewritten: nothing changed
    res = runner.invoke(app, [*args, "--against", str(out)])
    assert res.exit_code == 0, res.output
    assert res.stdout.splitlines() == [f"against {out / 'checks.json'}: 0 verdicts changed (0 gained, 0 lost), 0 measured values moved, 1 the same"]


def test_against_what_is_not_a_judgement_is_bad_input(tmp_path: Path) -> None:
    base = ["check", "kd", "--only", "T-K16", "--quick", "--out", str(tmp_path / "out"), "--against"]
    refused([*base, str(tmp_path / "nowhere")], "--against:", "no such file or folder")
    empty = tmp_path / "empty"
    empty.mkdir()
    refused([*base, str(empty)], "--against:", "holds no checks.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    refused([*base, str(bad)], "not the checks.json of a check run", "not JSON")
    bad.write_text(json.dumps({"checks": [{"id": "T-K16"}]}))
    refused([*base, str(bad)], "a list `checks` of rows, each with an `id` and a `verdict`")
    bad.write_text(json.dumps([1, 2]))
    refused([*base, str(bad)], "a list `checks` of rows")
    # nothing ran: the refusal comes before the plan
    assert not (tmp_path / "out").exists()
