"""Which runs the selected checks need (cnsim.check.plan), on decks written here: seeds, the
10 us bins a fine measure needs and the per-flow series it can drop, --quick's cut after the
latest window a run set's checks measure, and the refusal of a plan over the run limit.

The run set is zhb-og-single-hop (0.6 s; hotspot 0.1–0.5 s: W_tr 0.1–0.15, W_ss 0.2–0.5,
W_last100 0.4–0.5, W_rec 0.5–0.6 s) at two points; nothing here simulates."""

from __future__ import annotations

from pathlib import Path

import pytest
from cnsim import ScenarioError
from cnsim.check import plan_checks, tally_line
from cnsim.check.plan import check_plan_size, make_plan
from cnsim.check.spec import Deck, parse_deck
from cnsim.sweep import MAX_RUNS

HEAD = '''
deck = "plan"
title = "t"
source = "s"
[runs.og]
scenario = "zhb-og-single-hop"
axes = { "cm.scheme" = ["none", "bcn"] }
[runs.other]
scenario = "zhb-og-single-hop"
set = { "cm.scheme" = "qcn" }
'''


def deck(*measures: str, head: str = HEAD, name: str = "plan") -> Deck:
    """A deck of one check per measure line (``name = { run = ..., ... }``)."""
    body = "".join(f'''
[[checks]]
id = "T-K{90 + i}"
class = "Q"
source = "D"
claim = "c"
expected = "e"
tolerance = "t"
pass = ["1 > 0"]
measure.{line}
''' for i, line in enumerate(measures))
    return parse_deck(name, head.replace('deck = "plan"', f'deck = "{name}"') + body)


def quick_changes(*measures: str, run: str = "og") -> dict[str, object]:
    d = deck(*measures)
    return make_plan([d], d.checks, "runs", quick=True).sets[("plan", run)].changes


@pytest.mark.parametrize(("window", "duration"), [
    ("tr", "152000us"),             # 2 ms past the window's end, so its last bin is complete
    ("last100", "502000us"),
    ("[0.05, 0.3]", "302000us"),    # a window in seconds
])
def test_quick_cuts_a_run_two_ms_after_the_window_its_checks_measure(window: str, duration: str) -> None:
    w = window if window.startswith("[") else f'"{window}"'
    assert quick_changes(f'thr = {{ run = "og", metric = "hot_port", window = {w} }}') == {"duration": duration}


def test_quick_cuts_after_the_latest_window_of_the_run_set_itself() -> None:
    """One check measuring two run sets and a scenario parameter: only its measures of this run
    set count (W_rec, which reaches the end, would keep the whole run)."""
    check = ('a = { run = "og", metric = "hot_port", window = "tr" }\n'
             'measure.b = { run = "other", metric = "hot_port", window = "rec" }\n'
             'measure.c = { run = "og", metric = "param:cm.w", window = "rec" }')
    assert quick_changes(check) == {"duration": "152000us"}
    assert quick_changes(check, run="other") == {}


def test_quick_cuts_after_the_latest_window_of_the_run_sets_own_checks() -> None:
    changes = quick_changes('a = { run = "og", metric = "hot_port", window = "tr" }',
                            'b = { run = "og", metric = "q_mean", window = "ss" }',
                            'c = { run = "other", metric = "hot_port", window = "rec" }',  # another run set's
                            'd = { run = "og", metric = "param:cm.w" }')  # read from the scenario: no window
    assert changes == {"duration": "502000us"}


@pytest.mark.parametrize("measure", [
    'm = { run = "og", metric = "hot_port", window = "rec" }',           # ends with the run
    'm = { run = "og", metric = "hot_port", window = [0.1, 0.598] }',  # 2 ms before its end: nothing to cut
    'm = { run = "og", metric = "hot_port", window = "all" }',
    'm = { run = "og", metric = "hot_port", window = "main" }',
    'm = { run = "og", metric = "fct_mean_ms" }',                      # summary.json: the whole run
])
def test_quick_keeps_the_whole_run_when_a_check_needs_it(measure: str) -> None:
    assert "duration" not in quick_changes(measure)


def test_quick_adds_the_run_sets_own_quick_overrides() -> None:
    head = HEAD.replace('[runs.other]', 'quick = { "traffic.stop" = "0.45s" }\n[runs.other]')
    d = deck('m = { run = "og", metric = "hot_port", window = "tr" }', head=head)
    quick = make_plan([d], d.checks, "runs", quick=True).sets[("plan", "og")]
    assert quick.changes == {"traffic.stop": "0.45s", "duration": "152000us"}
    full = make_plan([d], d.checks, "runs").sets[("plan", "og")]
    assert full.changes == {} and len(full.tasks) == 6 and {t.seed for t in full.tasks} == {1, 2, 3}
    assert {t.overrides["duration"] for t in quick.tasks} == {"152000us"} and len(quick.tasks) == 2


def test_a_fine_measure_gets_10_us_bins_and_drops_the_flows_it_does_not_read() -> None:
    d = deck('m = { run = "og", metric = "q_std", window = "ss" }')
    assert make_plan([d], d.checks, "runs", seeds=1).sets[("plan", "og")].changes == {
        "metrics.bin": "10us", "metrics.per_flow": "none"}
    # a per-flow metric beside it needs the flows
    d = deck('m = { run = "og", metric = "period", window = "ss" }', 'f = { run = "og", metric = "flow:2->1", window = "ss" }')
    assert make_plan([d], d.checks, "runs", seeds=1).sets[("plan", "og")].changes == {"metrics.bin": "10us"}
    # a run set that chooses its flows keeps them
    d = deck('m = { run = "og", metric = "q_std", window = "ss" }',
             head=HEAD.replace('axes = {', 'set = { "metrics.per_flow" = "hot" }\naxes = {'))
    assert make_plan([d], d.checks, "runs", seeds=1).sets[("plan", "og")].changes == {"metrics.bin": "10us"}
    d = deck('m = { run = "og", metric = "q_mean", window = "ss" }')
    assert make_plan([d], d.checks, "runs", seeds=1).sets[("plan", "og")].changes == {}


def test_a_run_set_of_another_deck_with_the_same_name_is_planned_on_its_own() -> None:
    fine = deck('m = { run = "og", metric = "q_std", window = "ss" }')
    plain = deck('m = { run = "og", metric = "q_mean", window = "ss" }', name="plan2")
    plan = make_plan([fine, plain], fine.checks + plain.checks, "runs", seeds=1)
    assert plan.sets[("plan", "og")].changes == {"metrics.bin": "10us", "metrics.per_flow": "none"}
    assert plan.sets[("plan2", "og")].changes == {}


def test_only_run_sets_a_check_measures_are_planned_each_run_once() -> None:
    d = deck('a = { run = "og", metric = "hot_port", window = "ss" }', 'b = { run = "og", metric = "q_mean", window = "ss" }')
    plan = make_plan([d], d.checks, "runs", seeds=2)
    assert list(plan.sets) == [("plan", "og")] and (plan.seeds, plan.quick) == (2, False)
    assert len(plan.tasks) == 4  # two points, two seeds: shared by both checks
    assert make_plan([d], [], "runs").sets == {}


def test_a_plan_over_the_run_limit_is_refused_with_the_seeds_that_fit() -> None:
    d = deck('m = { run = "og", metric = "hot_port", window = "ss" }')
    by_deck, needed = {"plan": d}, [("plan", "og")]
    limit = MAX_RUNS // 2  # two points a seed
    assert check_plan_size(by_deck, needed, limit, True) == MAX_RUNS
    with pytest.raises(ScenarioError) as err:
        check_plan_size(by_deck, needed, limit + 1, True)
    assert str(err.value) == (
        f"--seeds {limit + 1}: the selected checks need {MAX_RUNS + 2:,} runs (2 points × {limit + 1:,} seeds), more than "
        f"the limit of {MAX_RUNS:,} runs; give at most --seeds {limit:,} here, or select fewer checks (a deck, --only)")
    with pytest.raises(ScenarioError, match=r"^the selected checks need"):  # seeds not given: not named
        check_plan_size(by_deck, needed, limit + 1, False)
    with pytest.raises(ScenarioError, match=r"^--seeds 5001: "):
        make_plan([d], d.checks, "runs", seeds=limit + 1)


def test_a_run_set_that_fits_only_once_is_offered_one_seed() -> None:
    delays = [f"{ns}ns" for ns in range(1, 6_001)]
    head = HEAD.replace('axes = { "cm.scheme" = ["none", "bcn"] }', f'axes = {{ "links.delay" = {delays} }}'.replace("'", '"'))
    d = deck('m = { run = "og", metric = "hot_port", window = "ss" }', head=head)
    with pytest.raises(ScenarioError) as err:
        check_plan_size({"plan": d}, [("plan", "og")], 2, True)
    assert str(err.value).endswith("; give at most --seeds 1 here, or select fewer checks (a deck, --only)")


def test_a_run_set_larger_than_the_limit_at_one_seed_can_only_be_left_out() -> None:
    delays = [f"{ns}ns" for ns in range(1, MAX_RUNS + 2)]
    head = HEAD.replace('axes = { "cm.scheme" = ["none", "bcn"] }', f'axes = {{ "links.delay" = {delays} }}'.replace("'", '"'))
    d = deck('m = { run = "og", metric = "hot_port", window = "ss" }', head=head)
    with pytest.raises(ScenarioError) as err:
        check_plan_size({"plan": d}, [("plan", "og")], 1, False)
    assert str(err.value).endswith("more than the limit of 10,000 runs; select fewer checks (a deck, --only)")


def test_seeds_and_check_ids_are_checked_before_anything_is_planned(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match=r"^--seeds: must be at least 1 \(given 0\)$"):
        plan_checks(["kd"], tmp_path, seeds=0)
    with pytest.raises(ScenarioError, match=r"^--only ' ': an empty check id; give ids like --only T-K15$"):
        plan_checks(["kd"], tmp_path, only=["T-K16", " "])
    planned = plan_checks(["kd"], tmp_path, seeds=1, only=["T-K16"])
    assert [c.id for c in planned.checks] == ["T-K16"] and planned.plan.seeds == 1
    assert all(t.runs_dir == str(tmp_path.resolve() / "runs") for t in planned.plan.tasks)
    assert not (tmp_path / "runs").exists()  # planned, nothing written


def test_a_tally_line_counts_what_it_is_given() -> None:
    assert tally_line("kd", {"pass": 4, "fail": 1, "not_run": 1, "total": 6}) == "kd: 4 pass, 1 fail, 1 not_run (6 checks)"
    assert tally_line("zhb", {}) == "zhb: 0 pass, 0 fail, 0 not_run (0 checks)"
