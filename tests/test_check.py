"""cnsim check (issue 12): the deck data, the metrics against analytic inputs, the conditions, the
evaluator on synthetic run folders (pass / fail / not_run), the planner's --quick rules, and the
command line on a tiny subset (exit codes 0 / 1 / 2, files written, runs reused)."""

from __future__ import annotations

import dataclasses
import json
import math
import re
import time
from pathlib import Path
from typing import Any

import cnsim.check as check_pkg
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from _faults import catalog_run_ids, interrupt_after_the_first_run
from cnsim import signals as m
from cnsim.check.condition import Condition, ConditionError
from cnsim.check.evaluate import FAIL, NOT_RUN, PASS, Evaluator
from cnsim.check.plan import make_plan
from cnsim.check.spec import ID_PATTERN, deck_names, load_decks, parse_deck
from cnsim.cli import app
from cnsim.errors import ScenarioError
from cnsim.results import dump_json
from cnsim.runner import prepare
from typer.testing import CliRunner

runner = CliRunner()

# ------------------------------------------------------------------------------------------
# The deck data
# ------------------------------------------------------------------------------------------

#: targets.md §C: how many checks each source has (81 in all)
_COUNTS = {"Z": 24, "Q": 25, "K": 6, "E": 12, "F": 9, "X": 5}
_DECK_OF = {"Z": "zhb", "Q": "qcnp", "K": "kd", "E": "eval", "F": "e2cm", "X": "cross"}


def test_every_check_of_targets_is_data_exactly_once() -> None:
    decks = load_decks()
    assert [d.name for d in decks] == deck_names() == ["zhb", "qcnp", "kd", "eval", "e2cm", "cross"]
    ids = [c.id for d in decks for c in d.checks]
    assert len(ids) == 81 and len(set(ids)) == 81
    assert all(ID_PATTERN.match(i) for i in ids)
    for letter, count in _COUNTS.items():
        assert sum(i[2] == letter for i in ids) == count, letter
    for d in decks:
        for c in d.checks:
            assert _DECK_OF[c.id[2]] == d.name, c.id
            assert re.fullmatch(r"(N1|N2|Q|M)(/(N1|N2|Q|M))*", c.cls), c.id
            assert c.claim and "\n" not in c.claim and c.expected and c.tolerance and c.source
            assert c.conditions or c.pending


_MINI = '''
deck = "mini"
title = "t"
source = "s"
[runs.a]
scenario = "kd-symmetric-single-hs"
set = { "cm.scheme" = "bcn" }
axes = { "links.delay" = ["4us", "250us"] }
[[checks]]
id = "T-K99"
class = "Q"
source = "D"
claim = "c"
expected = "e"
tolerance = "t"
pass = ["all(hot >= 5)"]
measure.hot = { run = "a", metric = "hot_port", window = "all" }
'''


def test_a_valid_mini_deck_parses() -> None:
    deck = parse_deck("mini", _MINI)
    (c,) = deck.checks
    assert c.id == "T-K99" and c.measures["hot"].window == "all" and deck.runs["a"].points == [
        {"links.delay": "4us"}, {"links.delay": "250us"}]
    (c,) = parse_deck("mini", _MINI.replace('window = "all"', "window = [0, 0.5]")).checks
    assert c.measures["hot"].window == (0.0, 0.5)


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ('id = "T-K99"', 'id = "K99"', "does not match T-<letter><two digits>"),
        ('class = "Q"', 'class = "maybe"', "is not a class"),
        ('metric = "hot_port"', 'metric = "hot_pot"', "unknown metric"),
        ('window = "all"', 'window = "later"', "is not a window"),
        ('run = "a"', 'run = "b"', "is not a run set of this deck; run sets: a"),
        ('window = "all" }', 'window = "all", where = { "cm.w" = 2 } }', "where.cm.w: not an axis of run set a; axes: links.delay"),
        ('window = "all"', "window = [false, 0.5]", "is not a window"),
        ('window = "all"', "window = [-0.1, 0.5]", "is not a window"),
        ('pass = ["all(hot >= 5)"]', 'pass = ["hot + 5"]', "must be a comparison"),
        ('pass = ["all(hot >= 5)"]', 'pass = ["hot.real > 5"]', "Attribute is not allowed"),
        ('pass = ["all(hot >= 5)"]', 'pass = ["open(hot) > 5"]', "only the functions"),
        ('pass = ["all(hot >= 5)"]', 'pass = ["cold > 5"]', "unknown name(s) cold"),
        ('window = "all" }', 'window = "all", where = { "links.delay" = "7us" } }', "is not a value of the axis"),
        ('scenario = "kd-symmetric-single-hs"', 'scenario = "kd-nowhere"', "unknown base scenario"),
        ('metric = "hot_port", window = "all"', 'metric = "underrun", window = "ss"', "holds the run's window only"),
        ('claim = "c"', "claim = 5", "claim: a non-empty string is required (given 5)"),
        ('claim = "c"', 'claim = "  "', "claim: a non-empty string is required"),
        ('window = "all"', "window = [0.2, 0.2]", "is not a window"),
        ('window = "all" }', 'window = "all", where = 5 }', "where and args must be tables"),
        ('window = "all" }', 'window = "all", args = [1] }', "where and args must be tables"),
        ('window = "all" }', 'window = "all", per_run = "cv" }', 'per_run: "cv" is not allowed; allowed: jain'),
        ('pass = ["all(hot >= 5)"]', 'pass = "all(hot >= 5)"', "a non-empty list of condition strings is required"),
        ('pass = ["all(hot >= 5)"]', "pass = [5]", "a non-empty list of condition strings is required"),
        ('pass = ["all(hot >= 5)"]', "pass = []", "a non-empty list of condition strings is required"),
    ],
)
def test_deck_problems_are_named(old: str, new: str, message: str) -> None:
    assert old in _MINI
    with pytest.raises(ScenarioError, match=re.escape(message)):
        parse_deck("mini", _MINI.replace(old, new))


def test_unknown_deck_is_bad_input() -> None:
    with pytest.raises(ScenarioError, match="unknown check deck 'nope'"):
        load_decks(["nope"])


# ------------------------------------------------------------------------------------------
# Metrics against analytic inputs
# ------------------------------------------------------------------------------------------


def test_spectral_period_of_a_sine_with_trend_and_offset() -> None:
    t = np.arange(1, 30_001) * 10e-6  # 0.3 s sampled every 10 us
    for period in (3.37e-3, 20.7e-3, 61e-3):
        q = 150e3 + 2e4 * np.sin(2 * np.pi * t / period + 0.3) + 1e4 * t
        assert m.spectral_period(t, q) == pytest.approx(period, rel=0.01)
    assert math.isnan(m.spectral_period(t, np.full_like(t, 5.0)))
    assert math.isnan(m.spectral_period(t[:4], t[:4]))


def test_settle_time_of_a_step_and_of_an_exponential() -> None:
    t = np.arange(1, 20_001) * 10e-6  # 0.2 s
    step = np.where(t >= 0.05, 24e3, 0.0)
    assert m.settle_time(t, step, 0.0, 24e3, tol=0.2, hold=0.005) == pytest.approx(0.05, abs=1e-5)
    tau = 0.01
    expo = 24e3 * (1 - np.exp(-t / tau))  # within 20 % once e^(-t/tau) <= 0.2: t = tau ln 5
    assert m.settle_time(t, expo, 0.0, 24e3) == pytest.approx(tau * math.log(5), abs=2e-5)
    # a queue that never holds inside the band for 5 ms never settles
    ringing = 24e3 * (1 + 0.5 * np.sin(2 * np.pi * t / 4e-3))
    assert m.settle_time(t, ringing, 0.0, 24e3) == math.inf


def test_window_statistics_weigh_partial_bins() -> None:
    t = np.arange(1, 11) * 1e-3  # bins [0,1], [1,2], ... ms
    v = np.arange(10, dtype=float)  # bin i has value i
    assert m.bin_width(t) == pytest.approx(1e-3)
    assert m.window_mean(t, v, (0.002, 0.004)) == pytest.approx(2.5)
    assert m.window_mean(t, v, (0.0015, 0.0025)) == pytest.approx(1.5)  # half of bin 1, half of bin 2
    assert m.window_sum(t, np.ones(10), (0.0015, 0.0045)) == pytest.approx(3.0)
    assert math.isnan(m.window_mean(t, v, (0.02, 0.03)))
    ts, vs = m.samples_in(t, v, (0.002, 0.004))
    assert list(vs) == [2.0, 3.0]  # samples at t = 3 ms and 4 ms (0.002 < t <= 0.004)
    tr, vr = m.rebin(t, v, 5e-3)
    assert list(vr) == [2.0, 7.0] and list(tr) == pytest.approx([0.005, 0.010])
    assert m.time_cv([1.0, 3.0]) == pytest.approx(0.5)
    assert m.linear_slope(t, 3 * t + 1) == pytest.approx(3.0)


def test_named_windows_follow_targets_section_a() -> None:
    w = m.named_windows(0.1, 0.5, 0.6)
    assert w == {"all": (0.0, 0.6), "ss": pytest.approx((0.2, 0.5)), "tr": pytest.approx((0.1, 0.15)),
                 "rec": pytest.approx((0.5, 0.6)), "last100": pytest.approx((0.4, 0.5)),
                 "after": pytest.approx((0.5, 0.6))}
    # a recovery time's horizon runs to the end of the run, past W_rec's 100 ms
    assert m.named_windows(0.1, 0.5, 1.0)["after"] == pytest.approx((0.5, 1.0))
    assert m.named_windows(None, None, 0.2) == {"all": (0.0, 0.2)}
    cut = m.named_windows(0.1, 0.5, 0.5)  # cut at the hotspot end: no recovery window
    assert "rec" not in cut and "after" not in cut


def test_crossing_and_first_peak() -> None:
    t = np.arange(1, 101) * 1e-3
    v = np.where(t > 0.0305, 9.0, 2.0)
    assert m.crossing_time(t, v, 0.02, 8.5) == pytest.approx(0.011)  # the bin ending at 31 ms
    assert m.crossing_time(t, v, 0.02, 100.0) == math.inf
    assert m.crossing_time(t, v, 0.0, 3.0, above=False) == pytest.approx(0.001)
    ts = np.arange(1, 5001) * 10e-6
    q = np.exp(-ts / 0.01) * np.sin(2 * np.pi * ts / 0.008) ** 2  # first peak near 2 ms
    assert m.first_peak_time(ts, q, 0.0, 0.05) == pytest.approx(0.002, abs=2e-4)


def test_jain_and_the_lag_delay_ultimate_gain() -> None:
    assert m.jain([2.0, 2.0, 2.0]) == pytest.approx(1.0)
    assert m.jain([1.0, 0.0, 0.0, 0.0]) == pytest.approx(0.25)
    assert list(m.jain(np.array([[1.0, 1.0], [1.0, 0.0]]))) == pytest.approx([1.0, 0.5])
    x = 2.028757838  # root of atan(x) + x = pi
    assert m.lag_delay_ultimate_gain(1.0) == pytest.approx(math.sqrt(1 + x * x), rel=1e-6)
    assert m.lag_delay_ultimate_gain(0.5) > m.lag_delay_ultimate_gain(1.0) > m.lag_delay_ultimate_gain(2.0)


# ------------------------------------------------------------------------------------------
# Conditions
# ------------------------------------------------------------------------------------------


def test_conditions_are_element_wise_and_safe() -> None:
    env = {"a": np.array([1.0, 2.0, 3.0]), "b": np.array([[1.0, 1.0], [1.0, 0.0]])}
    assert Condition.compile("all(a >= 1)").evaluate(env)[0]
    assert not Condition.compile("all(diff(a) < 0)").evaluate(env)[0]
    assert Condition.compile("1 <= a[0] <= 1 and a[-1] == 3").evaluate(env)[0]
    assert Condition.compile("all(a * 2 == [2, 4, 6])").evaluate(env)[0]
    assert Condition.compile("jain(b[1]) < 0.6 and argmax(a) == 2").evaluate(env)[0]
    assert Condition.compile("all(minimum(a, 2) <= 2) and not any(a > 5)").evaluate(env)[0]
    assert not Condition.compile("a > 2").evaluate(env)[0]  # holds only when every element does
    assert Condition.compile("all(isfinite(a))").evaluate({"a": np.array([1.0])})[0]
    assert not Condition.compile("x > 1").evaluate({"x": np.array([math.nan])})[0]  # nan fails
    assert Condition.compile("x > 1").evaluate({"x": np.array([math.inf])})[0]  # inf = never: "slower"
    for bad in ("__import__('os')", "a.sum() > 1", "[x for x in a]", "a", "lambda: 1"):
        with pytest.raises(ConditionError):
            Condition.compile(bad)
    with pytest.raises(ConditionError, match="shapes do not match"):
        Condition.compile("a > c").evaluate({"a": np.ones(3), "c": np.ones(2)})


# ------------------------------------------------------------------------------------------
# The evaluator on synthetic run folders
# ------------------------------------------------------------------------------------------

_SYNTH = '''
deck = "synth"
title = "t"
source = "s"
[runs.kd]
scenario = "kd-symmetric-single-hs"
set = { "cm.scheme" = "bcn" }
axes = { "links.delay" = ["4us", "250us"] }
[[checks]]
id = "T-K91"
class = "Q"
source = "D"
claim = "passes"
expected = "hot port >= 9 Gb/s at 4 us, falls with delay; the queue oscillates with a 3.4 ms period"
tolerance = "t"
pass = ["hot[0] >= 9", "hot[1] < hot[0]", "all(abs(period / 3.4e-3 - 1) < 0.02)", "all(q > 1e5)"]
measure.hot = { run = "kd", metric = "hot_port", window = "all" }
measure.period = { run = "kd", metric = "period", window = "main" }
measure.q = { run = "kd", metric = "q_mean", window = "main" }
[[checks]]
id = "T-K92"
class = "Q"
source = "D"
claim = "fails"
expected = "hot port >= 9.9 at every delay"
tolerance = "t"
pass = ["all(hot >= 9.9)"]
measure.hot = { run = "kd", metric = "hot_port", window = "all" }
[[checks]]
id = "T-K93"
class = "Q"
source = "D"
claim = "needs a key the engine does not write"
expected = "e"
tolerance = "t"
pass = ["fct > 0"]
measure.fct = { run = "kd", metric = "summary:fct_ms.hot.mean" }
[[checks]]
id = "T-K94"
class = "M"
source = "D"
claim = "pending"
expected = "e"
tolerance = "t"
pending = "the deck gives no number"
[[checks]]
id = "T-K95"
class = "N2"
source = "B1"
claim = "scenario metrics need no run"
expected = "fair share 2.5 Gb/s"
tolerance = "t"
pass = ["all(abs(share - 2.5) < 1e-9)", "abs(sum(into4) - 10) < 1e-9"]
measure.share = { run = "kd", metric = "fair:EP0->EP4" }
measure.into4 = { run = "kd", metric = "fair:*->EP4" }
'''


def _start_run_folder(folder: Path, task, **summary: object) -> Path:  # noqa: ANN001 - a RunTask
    """A run folder with the task's resolved scenario and ``summary``; returns its series folder."""
    scen = prepare(task.base, task.overrides, task.seed)
    folder.mkdir(parents=True)
    (folder / "scenario.toml").write_text(scen.to_toml(), encoding="utf-8")
    (folder / "summary.json").write_text(dump_json({"scenario": scen.id, "seed": task.seed, **summary}), encoding="utf-8")
    (folder / "series").mkdir()
    return folder / "series"


def _write_synthetic_run(folder: Path, task, hot_gbps: float) -> None:  # noqa: ANN001 - a RunTask
    """A run folder whose series are analytic: constant hot-port throughput, a sine queue."""
    series = _start_run_folder(folder, task, duration_s=0.2, window_s=[0.02, 0.2], fct_ms=None)
    t_ms = np.arange(1, 201) * 1e-3
    pq.write_table(pa.table({"t_s": t_ms, "entity": ["port:S1/EP4"] * 200, "gbps": np.full(200, hot_gbps)}),
                   series / "throughput.parquet")
    t_q = np.arange(1, 20_001) * 10e-6
    q = 1.5e5 + 5e4 * np.sin(2 * np.pi * t_q / 3.4e-3)
    pq.write_table(pa.table({"t_s": t_q, "queue": ["S1/EP4"] * t_q.size, "bytes": q, "bytes_max": q}),
                   series / "queue.parquet")


def test_conditions_combine_every_term_and_refuse_what_they_cannot_read() -> None:
    env = {"a": np.array([1.0, 2.0, 3.0])}

    def holds(text: str) -> bool:
        return bool(Condition.compile(text).evaluate(env)[0])

    # every term of `and` / `or` counts, the first and the last included
    assert not holds("a[0] > 5 and a[-1] == 3")
    assert not holds("a[0] == 1 and a[1] == 2 and a[2] == 9")
    assert holds("a[0] > 5 or a[-1] == 3")
    # omitted slice bounds, argmin, len of a series and of a number
    assert holds("all(a[1:] == [2, 3]) and all(a[:2] == [1, 2]) and all(a[::2] == [1, 3])")
    assert holds("argmin(a) == 0 and len(a) == 3 and len(a[0]) == 1")
    with pytest.raises(ConditionError, match="3 points"):
        Condition.compile("a[5] > 0").evaluate(env)
    for text in ("a > 'x'", "a == True"):
        with pytest.raises(ConditionError, match="only numbers"):
            Condition.compile(text)
    with pytest.raises(ConditionError, match="unknown name"):
        Condition.compile("b > 1", known={"a"})


def test_evaluator_pass_fail_and_not_run(tmp_path: Path) -> None:
    deck = parse_deck("synth", _SYNTH)
    runs = tmp_path / "runs"
    plan = make_plan([deck], deck.checks, str(runs), seeds=2)
    (planned,) = plan.sets.values()
    # the period needs 10 us samples; per-flow series stay (a summary key may depend on them)
    assert planned.changes == {"metrics.bin": "10us"}
    assert len(plan.tasks) == 4  # 2 delays x 2 seeds
    for task in plan.tasks:
        hot = 9.5 if task.params["links.delay"] == "4us" else 8.0
        _write_synthetic_run(runs / task.run_id, task, hot + 0.1 * task.seed)  # seeds 1, 2: mean hot + 0.15
    evaluator = Evaluator(plan, runs, [deck])
    verdicts = {c.id: evaluator.evaluate(c) for c in deck.checks}
    ok = verdicts["T-K91"]
    assert ok.verdict == PASS, ok.reason
    assert list(ok.values["hot"].value) == pytest.approx([9.65, 8.15])  # the seed mean
    assert len(ok.runs) == 4 and all(r.startswith("runs/") for r in ok.runs)
    assert "hot = [9.65, 8.15]" in ok.measured_text()
    bad = verdicts["T-K92"]
    assert bad.verdict == FAIL and "all(hot >= 9.9)" in bad.reason
    missing = verdicts["T-K93"]
    assert missing.verdict == NOT_RUN and "fct_ms.hot.mean" in missing.reason
    assert verdicts["T-K94"].verdict == NOT_RUN and "pending" in verdicts["T-K94"].reason
    fair = verdicts["T-K95"]
    assert fair.verdict == PASS and fair.runs == []
    into4 = np.asarray(fair.values["into4"].value)
    assert into4.shape[-1] == 4 and np.all(into4 == 2.5)  # a glob: one share per flow into EP4
    # a run that is missing (or failed) makes its checks not_run, never a made-up value
    import shutil

    shutil.rmtree(runs / plan.tasks[0].run_id)
    again = Evaluator(plan, runs, [deck]).evaluate(deck.checks[0])
    assert again.verdict == NOT_RUN and "has not run" in again.reason


def test_a_failed_checks_figure_shows_each_measures_signal_or_values(tmp_path: Path) -> None:
    from cnsim.check.report import draw_failure, failure_figure

    deck = parse_deck("synth", _SYNTH)
    runs = tmp_path / "runs"
    plan = make_plan([deck], deck.checks, str(runs), seeds=2)
    for task in plan.tasks:
        _write_synthetic_run(runs / task.run_id, task, (9.5 if task.params["links.delay"] == "4us" else 8.0) + 0.1 * task.seed)
    evaluator = Evaluator(plan, runs, [deck])
    verdicts = {c.id: evaluator.evaluate(c) for c in deck.checks}
    # one measure with a signal: each point's first seed over time, the window shaded once
    fig = failure_figure(verdicts["T-K92"], evaluator)
    (ax,) = fig.axes
    assert fig._suptitle.get_text() == f"T-K92: {verdicts['T-K92'].reason}"[:160]
    assert ax.get_title() == "hot = hot_port [all]"
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("time (s)", "port:S1/EP4 (Gb/s)")
    fast, slow = ax.get_lines()
    assert (fast.get_label(), slow.get_label()) == ("link delay=4us", "link delay=250us")  # kd's "delay" is the loop
    assert fast.get_xdata().tolist() == pytest.approx((np.arange(1, 201) * 1e-3).tolist())
    assert fast.get_ydata().tolist() == pytest.approx([9.6] * 200) and slow.get_ydata().tolist() == pytest.approx([8.1] * 200)  # seed 1
    (span,) = ax.patches
    assert span.get_label() == "window all"
    xs = span.get_patch_transform().transform(span.get_path().vertices)[:, 0]
    assert (xs.min(), xs.max()) == pytest.approx((0.0, 0.2))
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["link delay=4us", "window all", "link delay=250us"]  # as drawn
    assert tuple(fig.get_size_inches()) == pytest.approx((6.4, 3.6))
    # three measures: a grid of two by two, the queue in KB over the main window
    fig = failure_figure(verdicts["T-K91"], evaluator)
    assert [ax.get_title() for ax in fig.axes] == ["hot = hot_port [all]", "period = period [main]", "q = q_mean [main]"]
    assert tuple(fig.get_size_inches()) == pytest.approx((12.8, 7.2))
    assert [ax.get_subplotspec().get_geometry() for ax in fig.axes] == [(2, 2, 0, 0), (2, 2, 1, 1), (2, 2, 2, 2)]
    queue = fig.axes[2]
    assert queue.get_ylabel() == "queue S1/EP4 (KB)" and max(queue.get_lines()[0].get_ydata()) == pytest.approx(200.0, rel=1e-3)
    xs = queue.patches[0].get_patch_transform().transform(queue.patches[0].get_path().vertices)[:, 0]
    assert (xs.min(), xs.max()) == pytest.approx((0.02, 0.2))
    # measures without a signal: the values against the points, one column a line
    fig = failure_figure(verdicts["T-K95"], evaluator)
    assert tuple(fig.get_size_inches()) == pytest.approx((12.8, 3.6))  # two panels side by side
    assert [ax.get_subplotspec().get_geometry() for ax in fig.axes] == [(1, 2, 0, 0), (1, 2, 1, 1)]
    share, into4 = fig.axes
    (line,) = share.get_lines()
    assert line.get_xdata().tolist() == [0, 1] and line.get_ydata().tolist() == pytest.approx([2.5, 2.5])
    assert line.get_marker() == "o" and line.get_linestyle() == "-"
    assert [t.get_text() for t in share.get_xticklabels()] == ["link delay=4us", "link delay=250us"]
    assert share.get_ylabel() == "fair:EP0->EP4 (Gb/s)" and share.get_xlabel() == "" and share.get_legend() is None
    assert len(into4.get_lines()) == 4 and into4.get_lines()[0].get_marker() == "." and into4.get_lines()[0].get_linestyle() == "None"
    # at most four panels; a legend for at most twelve points; the title cut at 160 characters
    hot = verdicts["T-K92"].values["hot"]
    check = verdicts["T-K92"].check
    check = dataclasses.replace(check, measures={f"m{i}": check.measures["hot"] for i in range(5)})
    five = dataclasses.replace(verdicts["T-K92"], check=check, values={f"m{i}": hot for i in range(5)}, reason="x" * 200)
    fig = failure_figure(five, evaluator)
    assert [ax.get_title() for ax in fig.axes] == [f"m{i} = hot_port [all]" for i in range(4)]
    assert fig._suptitle.get_text() == ("T-K92: " + "x" * 200)[:160]

    def points(n: int) -> Any:
        many = dataclasses.replace(hot, points=[{"links.delay": f"{i}us"} for i in range(n)], runs=[hot.runs[0]] * n,
                                   value=np.full(n, 9.6))
        return failure_figure(dataclasses.replace(verdicts["T-K92"], values={"hot": many}), evaluator).axes[0]

    assert len(points(12).get_legend().get_texts()) == 13 and points(13).get_legend() is None
    # a check that measured nothing has no figure
    assert failure_figure(verdicts["T-K94"], evaluator) is None
    assert draw_failure(verdicts["T-K94"], evaluator, tmp_path / "figures") is None and not (tmp_path / "figures").exists()
    path = draw_failure(verdicts["T-K92"], evaluator, tmp_path / "figures")
    assert path == tmp_path / "figures" / "T-K92.png" and path.read_bytes()[:4] == b"\x89PNG"


def test_a_failed_checks_figure_draws_a_fine_runs_throughput_in_1_ms_means(tmp_path: Path) -> None:
    """In 10 us bins a 2 Gb/s port carries one 1500 B frame or two (1.2 or 2.4 Gb/s): the figure
    draws the 1 ms means, so that the line shows the rate instead of filling the band between."""
    from cnsim.check.report import failure_figure

    deck = parse_deck("synth", _SYNTH)
    runs = tmp_path / "runs"
    plan = make_plan([deck], deck.checks, str(runs), seeds=1)
    t_fine = np.arange(1, 20_001) * 10e-6
    for i, task in enumerate(plan.tasks):
        _write_synthetic_run(runs / task.run_id, task, 9.0)
        two = np.arange(20_000) % (3 + i) == 0  # every third (fourth) bin holds two frames
        gbps = np.where(two, 2.4, 1.2)
        gbps[:100] = 10.0  # the first millisecond at line rate
        table = pa.table({"t_s": t_fine, "entity": ["port:S1/EP4"] * t_fine.size, "gbps": gbps})
        pq.write_table(table, runs / task.run_id / "series" / "throughput.parquet")
    evaluator = Evaluator(plan, runs, [deck])
    verdict = evaluator.evaluate(next(c for c in deck.checks if c.id == "T-K92"))
    (ax,) = failure_figure(verdict, evaluator).axes
    assert ax.get_ylabel() == "port:S1/EP4 (Gb/s, 1 ms means)"
    for line, mean in zip(ax.get_lines(), (1.6, 1.5), strict=True):
        assert line.get_xdata().tolist() == pytest.approx((np.arange(1, 201) * 1e-3).tolist())
        means = np.asarray(line.get_ydata())
        assert means[0] == pytest.approx(10.0)
        # each millisecond's 100 bins: a third (a quarter) of them two frames, give or take one
        assert np.all(np.abs(means[1:] - mean) < 0.013)


_FLOWS_DECK = _SYNTH.split("[[checks]]")[0] + '''[[checks]]
id = "T-K96"
class = "Q"
source = "D"
claim = "per-flow throughput, seeds combined three ways"
expected = "e"
tolerance = "t"
pass = ["all(mean > 0)"]
measure.mean = { run = "kd", metric = "flow:*->EP4", window = "all" }
measure.top = { run = "kd", metric = "flow:*->EP4", window = "all", seeds = "max" }
measure.low = { run = "kd", metric = "flow:*->EP4", window = "all", seeds = "min" }
measure.far = { run = "kd", metric = "flow:*->EP4", window = "all", where = { "links.delay" = "250us" } }
measure.fair = { run = "kd", metric = "flow:*->EP4", window = "all", per_run = "jain" }
'''


def _write_flow_run(folder: Path, task, flows: dict[str, float]) -> None:  # noqa: ANN001 - a RunTask
    """A run folder whose per-flow throughput is constant, one value per flow."""
    series = _start_run_folder(folder, task, duration_s=0.2)
    t = np.arange(1, 201) * 1e-3
    names = [f"flow:{src}->EP4" for src in flows]
    pq.write_table(pa.table({"t_s": np.tile(t, len(names)), "entity": [n for n in names for _ in t],
                             "gbps": np.concatenate([np.full(t.size, v) for v in flows.values()])}),
                   series / "throughput.parquet")


def _flows_plan(tmp_path: Path):  # noqa: ANN202 - (deck, plan, runs folder)
    deck = parse_deck("synth", _FLOWS_DECK)
    runs = tmp_path / "runs"
    return deck, make_plan([deck], deck.checks, str(runs), seeds=2), runs


def test_evaluator_combines_seeds_per_flow_by_mean_max_and_min(tmp_path: Path) -> None:
    deck, plan, runs = _flows_plan(tmp_path)
    for task in plan.tasks:  # EP0 and EP1 differ by seed; the second delay adds 100
        base = 0.0 if task.params["links.delay"] == "4us" else 100.0
        _write_flow_run(runs / task.run_id, task, {"EP0": base + task.seed, "EP1": base + 10 * task.seed})
    verdict = Evaluator(plan, runs, [deck]).evaluate(deck.checks[0])
    assert verdict.verdict == PASS, verdict.reason
    # one row per point (the two delays), one column per flow (EP0, EP1)
    # seeds 1 and 2: EP0 at 1 and 2, EP1 at 10 and 20 Gb/s (combined per flow, never across flows)
    assert verdict.values["mean"].value.tolist() == [[1.5, 15.0], [101.5, 115.0]]
    assert verdict.values["top"].value.tolist() == [[2.0, 20.0], [102.0, 120.0]]
    assert verdict.values["low"].value.tolist() == [[1.0, 10.0], [101.0, 110.0]]
    assert verdict.values["mean"].points == [{"links.delay": "4us"}, {"links.delay": "250us"}]
    assert verdict.values["far"].value.tolist() == [[101.5, 115.0]] and verdict.values["far"].points == [{"links.delay": "250us"}]
    assert "mean = [[1.5, 15], [101.5, 115]]" in verdict.measured_text()
    # per_run = "jain": each seed's Jain index over its flows, then the seed mean (§A), which is
    # not the index of the seed-mean rates where the seeds' shares differ
    def jain(x: list[float]) -> float:
        return sum(x) ** 2 / (len(x) * sum(v * v for v in x))

    fair = verdict.values["fair"].value.tolist()
    assert fair[0] == pytest.approx(jain([1, 10])) and fair[1] == pytest.approx((jain([101, 110]) + jain([102, 120])) / 2)
    assert fair[1] != pytest.approx(jain([101.5, 115.0]), abs=1e-4)


@pytest.mark.parametrize(
    ("flows_of", "reason"),
    [
        # seed 2 of the first point records one flow fewer than seed 1
        (lambda delay, seed: ["EP0", "EP1"] if (delay, seed) != ("4us", 2) else ["EP0"],
         "mean: the seeds of a point give different entity sets"),
        # every seed of the second point records a third flow
        (lambda delay, seed: ["EP0", "EP1"] + (["EP2"] if delay == "250us" else []),
         "mean: the points give different entity sets"),
    ],
)
def test_evaluator_refuses_to_combine_different_flow_sets(tmp_path: Path, flows_of, reason: str) -> None:  # noqa: ANN001
    deck, plan, runs = _flows_plan(tmp_path)
    for task in plan.tasks:
        _write_flow_run(runs / task.run_id, task, dict.fromkeys(flows_of(task.params["links.delay"], task.seed), 1.0))
    verdict = Evaluator(plan, runs, [deck]).evaluate(deck.checks[0])
    assert verdict.verdict == NOT_RUN and reason in verdict.reason


def test_measured_values_are_written_compactly() -> None:
    from cnsim.check.evaluate import format_values

    assert format_values(np.array(2.0)) == "2" and format_values(np.array([0.123456])) == "0.1235"
    assert format_values(np.array([math.inf, -math.inf, math.nan, 1e6])) == "[never, -inf, nan, 1e+06]"
    assert format_values(np.array([[1.0, 2.0], [3.0, 4.0]])) == "[[1, 2], [3, 4]]"


def test_quick_plan_uses_one_seed_and_cuts_runs_after_the_last_window(tmp_path: Path) -> None:
    (zhb,) = load_decks(["zhb"])
    checks = [c for c in zhb.checks if c.id in ("T-Z03", "T-Z07", "T-Z14")]
    quick = make_plan([zhb], checks, str(tmp_path), quick=True)
    full = make_plan([zhb], checks, str(tmp_path))
    assert quick.seeds == 1 and full.seeds == 3
    og = quick.sets[("zhb", "og_none")]
    assert og.changes == {"duration": "502000us"}  # W_ss ends at 0.5 s; the run is 0.6 s
    assert {t.seed for t in og.tasks} == {1} and len(og.tasks) == 2
    assert quick.sets[("zhb", "gd")].changes["metrics.bin"] == "10us"  # q std: 10 us samples (§A)
    assert "duration" not in quick.sets[("zhb", "gigrid")].changes  # W_rec reaches the end of the run
    assert full.sets[("zhb", "og_none")].changes == {}
    assert len(full.sets[("zhb", "og_none")].tasks) == 6


# ------------------------------------------------------------------------------------------
# The command line
# ------------------------------------------------------------------------------------------


def test_cli_check_kd_subset_files_and_reuse(tmp_path: Path) -> None:
    out = tmp_path / "c"
    started = time.perf_counter()
    res = runner.invoke(app, ["check", "kd", "--only", "T-K16", "--only", "T-K20", "--quick", "--workers", "1",
                              "--out", str(out)])
    elapsed = time.perf_counter() - started
    assert res.exit_code == 0, res.output
    assert "kd: " in res.output and "(2 checks)" in res.output
    doc = json.loads((out / "checks.json").read_text())
    assert [r["id"] for r in doc["checks"]] == ["T-K16", "T-K20"]
    assert doc["seeds"] == 1 and doc["quick"] is True and doc["ran"] == doc["runs"] == 7
    assert doc["only"] == ["T-K16", "T-K20"] and doc["decks"] == ["kd"] and 0 < doc["wall_s"] < elapsed
    for r in doc["checks"]:
        assert r["verdict"] in (PASS, FAIL, NOT_RUN) and r["claim"] and r["expected"]
    assert doc["checks"][1]["runs"] == []  # T-K20 is the linear model: no run
    assert all((out / r).is_dir() for r in doc["checks"][0]["runs"])
    table = pq.read_table(out / "checks.parquet")
    assert table.num_rows == 2
    assert {"id", "deck", "class", "claim", "expected", "measured", "tolerance", "verdict", "runs"} <= set(table.column_names)
    html = (out / "report.html").read_text()
    assert "T-K16" in html and "Tally per deck" in html
    assert (out / "sweep.parquet").is_file() and (out / "catalog.duckdb").is_file()
    res = runner.invoke(app, ["check", "kd", "--only", "T-K16", "--quick", "--out", str(out), "--quiet"])
    assert res.exit_code == 0, res.output
    assert json.loads((out / "checks.json").read_text())["ran"] == 0  # cached by run id
    res = runner.invoke(app, ["report", str(out)])
    assert res.exit_code == 0 and (out / "report.html").is_file()


def test_cli_strict_exits_1_on_a_failed_check(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    deck = parse_deck("synth", _SYNTH.split("[[checks]]")[0] + "[[checks]]" + _SYNTH.split("[[checks]]")[2])
    monkeypatch.setattr(check_pkg, "load_decks", lambda names=None: [deck])
    monkeypatch.setattr(check_pkg, "deck_names", lambda: ["synth"])
    args = ["check", "synth", "--quick", "--workers", "1", "--out", str(tmp_path / "s")]
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output  # failed checks included: it ran
    assert "synth: 0 pass, 1 fail, 0 not_run (1 checks)" in res.output
    assert (tmp_path / "s" / "figures" / "T-K92.png").stat().st_size > 5000
    assert "T-K92.png" not in (tmp_path / "s" / "report.html").read_text()  # embedded, not linked
    res = runner.invoke(app, [*args, "--strict"])
    assert res.exit_code == 1


def _done_runs(runs: Path) -> list[str]:
    return sorted(p.name for p in runs.iterdir() if (p / "summary.json").is_file())


def test_an_interrupted_check_stops_its_runs_before_its_table_is_written(tmp_path: Path) -> None:
    """Ctrl-C came while runs were in flight on the command's executor, which `cnsim check` did
    not close: they went on (and the queued ones started) while sweep.parquet and catalog.duckdb
    were rebuilt, so the folders, the table and the catalog told three different counts of the
    runs done (10, 6 and 6 after Ctrl-C at 1 s of `cnsim check kd`). Now the executor is closed
    first, as `cnsim sweep` does."""
    out = tmp_path / "c"
    interrupt_after_the_first_run(
        lambda pool, progress: check_pkg.run_checks(["kd"], out, quick=True, only=["T-K15"], executor=pool, progress=progress))
    done = _done_runs(out / "runs")
    assert 1 <= len(done) < 8
    assert sorted(r["run_id"] for r in pq.read_table(out / "sweep.parquet").to_pylist()) == done
    assert catalog_run_ids(out) == done


def test_a_check_names_its_failed_and_repaired_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run that failed made its checks not_run without a word beyond the tally, and a damaged
    run folder was run again silently: `cnsim sweep` names both on stderr, and docs/robustness.md
    said `check` did too. It still exits 0 (contract: it ran; the checks say not_run)."""
    from _faults import fail_runs, long_links

    out = tmp_path / "c"
    args = ["check", "kd", "--only", "T-K19", "--quick", "--workers", "1", "--out", str(out)]
    real_run = fail_runs(monkeypatch, long_links)
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    doc = json.loads((out / "checks.json").read_text())
    (failed_id, error), *others = doc["failed_runs"]
    assert others and error == "RuntimeError: injected failure" and doc["checks"][0]["verdict"] == NOT_RUN
    assert (f"check kd: {doc['runs']} runs ({doc['runs']} run now, {len(doc['failed_runs'])} failed: the checks that need them "
            "are not_run) in ") in res.stdout
    assert f"run {failed_id} failed: RuntimeError: injected failure" in res.stderr.splitlines()
    monkeypatch.setattr("cnsim.runner.run", real_run)
    victim = next(p for p in sorted((out / "runs").iterdir()) if (p / "summary.json").is_file())
    (victim / "summary.json").write_text('{"scenario": "kd-sym')  # cut short
    res = runner.invoke(app, [*args, "--quiet"])
    assert res.exit_code == 0 and res.stdout == ""
    assert res.stderr == (f"1 run folder(s) had a corrupted or partial summary.json, a missing manifest.json or scenario.toml, "
                          f"or a damaged or missing series file and were run again: {victim.name}\n")
    doc = json.loads((out / "checks.json").read_text())
    assert doc["failed_runs"] == [] and doc["repaired"] == [victim.name] and doc["checks"][0]["verdict"] != NOT_RUN


def test_a_series_damaged_inside_is_named_not_an_io_error(tmp_path: Path) -> None:
    """A series file whose pages are damaged keeps its ends whole, so the run is reused and the
    catalog's view accepts it; reading it failed the check with "cnsim: I/O error: Couldn't
    deserialize thrift: …" on two lines, naming no file. Now the file and what to do."""
    out = tmp_path / "c"
    args = ["check", "kd", "--only", "T-K18", "--quick", "--workers", "1", "--out", str(out)]
    assert runner.invoke(app, args).exit_code == 0
    for path in sorted((out / "runs").glob("*/series/queue.parquet")):
        data = bytearray(path.read_bytes())
        for i in range(8, len(data) // 2, 7):
            data[i] ^= 0xFF
        path.write_bytes(bytes(data))
    res = runner.invoke(app, args)
    assert res.exit_code == 2, res.output
    assert re.fullmatch(rf"{out}/runs/[0-9a-f]{{16}}/series/queue.parquet: damaged: it does not read as Parquet \([^\n]+\); "
                        r"expected the series a run writes. Delete its run folder: `cnsim check` \(or `cnsim reproduce`\) runs it again.\n",
                        res.stderr), res.stderr


def test_an_interrupted_check_says_how_to_resume_its_own_plan(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The line of an interrupted check said "Resume with: cnsim check kd --out D" whatever
    --seeds and --only were: that command plans and judges other checks on other seeds."""
    out = tmp_path / "c"

    def stopped(*_args: Any, **_kwargs: Any) -> None:
        (out / "runs").mkdir(parents=True)
        (out / "runs" / "0123456789abcdef").mkdir()
        raise KeyboardInterrupt

    monkeypatch.setattr(check_pkg, "run_checks", stopped)
    res = runner.invoke(app, ["check", "kd", "--quick", "--seeds", "2", "--only", "T-K15", "--only", "T-K16", "--only", "T-K15",
                              "--workers", "1", "--out", str(out)])
    assert res.exit_code == 130
    assert res.stderr == (f"cnsim: interrupted; completed runs are kept in {out}. Resume with: cnsim check kd --quick --seeds 2 "
                          f"--only T-K15 --only T-K16 --out {out}\n")


def test_only_names_a_lower_case_id_and_judges_a_repeated_one_once(tmp_path: Path) -> None:
    """`--only t-k15` was "unknown … ids look like T-K15", `--only ' '` was echoed as `--only ''`,
    and an id given twice was listed twice in checks.json's `only`."""
    res = runner.invoke(app, ["check", "kd", "--only", "t-k15", "--only", "T-K16", "--only", "t-k15", "--out", str(tmp_path / "x")])
    assert res.exit_code == 2
    assert res.output == "--only: unknown check id(s) t-k15 in the selected decks (kd); ids are upper case: --only T-K15\n"
    # an upper-case id with a space around it is not told to be upper case
    res = runner.invoke(app, ["check", "kd", "--only", " T-K15", "--only", "t-k15", "--out", str(tmp_path / "x")])
    assert res.exit_code == 2 and res.output.endswith("; ids are upper case, without spaces: --only T-K15\n"), res.output
    res = runner.invoke(app, ["check", "kd", "--only", " ", "--out", str(tmp_path / "x")])
    assert res.exit_code == 2 and res.output == "--only ' ': an empty check id; give ids like --only T-K15\n"
    out = tmp_path / "c"
    res = runner.invoke(app, ["check", "kd", "--only", "T-K20", "--only", "T-K20", "--quick", "--quiet", "--out", str(out)])
    assert res.exit_code == 0, res.output
    doc = json.loads((out / "checks.json").read_text())
    assert doc["only"] == ["T-K20"] and [r["id"] for r in doc["checks"]] == ["T-K20"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["check", "nope"], "unknown check deck 'nope'"),
        (["check", "kd", "--seeds", "0"], "--seeds: must be at least 1"),
        (["check", "kd", "--only", "T-Z03"], "unknown check id(s) T-Z03"),
        (["check", "kd", "--workers", "0"], "--workers: must be at least 1"),
        (["check", "kd", "--executor", "slurm"], "is not an executor"),
    ],
)
def test_cli_bad_input_exits_2(tmp_path: Path, args: list[str], message: str) -> None:
    res = runner.invoke(app, [*args, "--out", str(tmp_path / "x")])
    assert res.exit_code == 2, res.output
    assert message in res.output
    assert "Traceback" not in res.output


def test_reproduce_shows_the_decks_checks_by_default(tmp_path: Path) -> None:
    """Issue 12: `cnsim reproduce DECK` includes the deck's checks in its report."""
    res = runner.invoke(app, ["reproduce", "kd", "--quick", "--workers", "1", "--out", str(tmp_path)])
    assert res.exit_code == 0, res.output
    assert "checks  kd: " in res.output and "(6 checks)" in res.output
    doc = json.loads((tmp_path / "checks" / "checks.json").read_text())
    assert len(doc["checks"]) == 6 and doc["decks"] == ["kd"]
    html = (tmp_path / "report.html").read_text()
    assert "Checks: kd" in html and "T-K15" in html and "kd-qeq150-delay" in html


def test_reproduce_without_checks(tmp_path: Path) -> None:
    res = runner.invoke(app, ["reproduce", "kd", "--quick", "--no-checks", "--workers", "1", "--out", str(tmp_path)])
    assert res.exit_code == 0, res.output
    assert "checks  kd" not in res.output and not (tmp_path / "checks").exists()
    assert "checks" not in json.loads((tmp_path / "deck.json").read_text())
    assert "Checks: kd" not in (tmp_path / "report.html").read_text()


def test_recovery_ignores_the_backlog_drain() -> None:
    t = np.arange(1, 101) * 1e-3  # 100 ms after a hotspot that ended at t = 0
    drain_then_recover = np.where(t <= 0.003, 10.0, np.where(t <= 0.040, 3.0, 8.6))
    assert m.sustained_time(t, drain_then_recover, 0.0, 8.5, hold=0.01) == pytest.approx(0.041)
    assert m.crossing_time(t, drain_then_recover, 0.0, 8.5) == pytest.approx(0.001)  # the naive reading
    # a recovery the record cuts shorter than the hold still counts: nothing breaks it (T-Z14's
    # 10·Gd0 run reached 8.5 Gb/s 94 ms after its hotspot and counted as "never")
    assert m.sustained_time(t, np.where(t <= 0.095, 3.0, 9.0), 0.0, 8.5, hold=0.01) == pytest.approx(0.096)
    assert m.sustained_time(t, np.where(t <= 0.095, 3.0, np.where(t <= 0.098, 9.0, 3.0)), 0.0, 8.5, hold=0.01) == math.inf


def test_a_deck_plan_includes_its_checks_and_their_memory_by_default() -> None:
    """`cnsim reproduce` plans the deck's checks with its studies (their runs are estimated, so
    too many workers are refused before anything runs); a deck without checks plans none."""
    from cnsim.reproduce import plan_deck

    kd = plan_deck("kd", quick=True)
    assert kd.checks and len(kd.check_memory) > 0 and all(b > 0 for b in kd.check_memory)
    assert not plan_deck("kd", quick=True, checks=False).checks
    assert plan_deck("kd", quick=True, checks=False).check_memory == []
    modern = plan_deck("modern", quick=True)
    assert not modern.checks and modern.check_memory == [] and modern.studies
