"""The checks of targets.md as data: one TOML file per deck in ``cnsim/check/decks/``.

A deck file::

    deck = "kd"                                  # the file's stem
    title = "..."
    source = "S2: Kwan & Ding, ..."

    [runs.qeq150]                                # a run set: a sweep of runs (contract "Sweep specs")
    scenario = "kd-symmetric-single-hs"          # catalog id
    set = { "cm.scheme" = "bcn" }                # fixed overrides
    axes = { "links.delay" = ["4us", "250us"] }  # grid, in order (optional)
    zip = { ... }                                # axes varied together (optional)
    quick = { duration = "0.1s" }                # extra overrides with --quick (optional)

    [[checks]]
    id = "T-K15"                                 # T-<letter><two digits>
    class = "Q"                                  # N1 | N2 | Q | M, or a pair "N2/M"
    source = "S2"
    claim = "one line: what the deck says"
    expected = "what must hold, in words"
    tolerance = "the tolerance of targets.md"
    pass = ["all(diff(thr) <= 0.01)"]            # conditions (cnsim.check.condition), all must hold
    measure.thr = { run = "qeq150", metric = "hot_port", window = "all" }
    # measure fields: run, metric (cnsim.check.extract.METRICS), window (all|ss|tr|rec|last100|after|main
    # or [t0, t1] in s; default ss for series metrics, main for summary ones), where (a subset of the
    # run set's points by axis value), args (metric arguments), seeds (mean|max|min over seeds),
    # per_run (jain: each run's entities reduced to Jain's index before the seeds are combined)
    pending = "reason"                           # optional: the check cannot be measured yet

Loading validates everything (keys, types, ids, classes, run sets against the scenario catalog and
sweep rules, metric names, windows, ``where`` values, conditions and the names they use) and
raises :class:`~cnsim.errors.ScenarioError` listing every problem with its file and check id.
"""

from __future__ import annotations

import importlib.resources
import re
import tomllib
from dataclasses import dataclass, field
from typing import Any

from ..errors import ScenarioError, format_value
from ..signals import WINDOW_NAMES
from ..sweep import SweepSpec, parse_spec, points
from .condition import Condition, ConditionError
from .extract import metric_def

__all__ = ["CLASSES", "ID_PATTERN", "Check", "Deck", "Measure", "RunSet", "deck_names", "load_decks", "parse_deck"]

ID_PATTERN = re.compile(r"^T-[A-Z][0-9]{2}$")
CLASSES = ("N1", "N2", "Q", "M")
SEED_RULES = ("mean", "max", "min")
#: what a measure may reduce each run's entities to before its seeds are combined: §A compares the
#: seed mean of a figure, so a fairness index is taken per run, not of the seed-mean rates
PER_RUN_RULES = ("jain",)
_DECK_KEYS = {"deck", "title", "source", "runs", "checks"}
_RUN_KEYS = {"scenario", "set", "axes", "zip", "quick", "note"}
_CHECK_KEYS = {"id", "class", "source", "claim", "expected", "tolerance", "pass", "measure", "pending", "note"}
_MEASURE_KEYS = {"run", "metric", "window", "where", "args", "seeds", "per_run"}


@dataclass
class RunSet:
    """Runs a deck's checks share: a sweep spec (its seeds are set when the checks run)."""

    name: str
    deck: str
    spec: SweepSpec
    quick: dict[str, Any] = field(default_factory=dict)
    note: str = ""

    @property
    def points(self) -> list[dict[str, Any]]:
        return points(self.spec)


@dataclass
class Measure:
    """One measured quantity of a check: a metric over (a subset of) a run set's points."""

    name: str
    run: str
    metric: str
    window: str | tuple[float, float]
    where: dict[str, Any] = field(default_factory=dict)
    args: dict[str, Any] = field(default_factory=dict)
    seeds: str = "mean"
    per_run: str | None = None

    @property
    def source(self) -> str:
        return metric_def(self.metric)[0].source

    @property
    def fine(self) -> bool:
        return metric_def(self.metric)[0].fine


@dataclass
class Check:
    id: str
    deck: str
    cls: str
    source: str
    claim: str
    expected: str
    tolerance: str
    measures: dict[str, Measure]
    conditions: list[Condition]
    pending: str = ""
    note: str = ""


@dataclass
class Deck:
    name: str
    title: str
    source: str
    runs: dict[str, RunSet]
    checks: list[Check]


def _str(doc: dict[str, Any], key: str, where: str, problems: list[str], required: bool = True) -> str:
    value = doc.get(key, None if required else "")
    if not isinstance(value, str) or (required and not value.strip()):
        problems.append(f"{where}.{key}: a {'non-empty ' if required else ''}string is required (given {format_value(value)})")
        return ""
    return value


def _table(doc: dict[str, Any], key: str, where: str, problems: list[str]) -> dict[str, Any]:
    value = doc.get(key, {})
    if not isinstance(value, dict):
        problems.append(f"{where}.{key}: must be a table (given {format_value(value)})")
        return {}
    return value


def _norm_class(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    parts = [p.strip() for p in value.split("/")]
    if not parts or any(p not in CLASSES for p in parts):
        return None
    return "/".join(parts)


def _parse_runs(deck: str, doc: dict[str, Any], problems: list[str]) -> dict[str, RunSet]:
    runs: dict[str, RunSet] = {}
    for name, body in _table(doc, "runs", deck, problems).items():
        where = f"{deck}: runs.{name}"
        if not isinstance(body, dict):
            problems.append(f"{where}: must be a table")
            continue
        for key in set(body) - _RUN_KEYS:
            problems.append(f"{where}.{key}: unknown key; allowed: {', '.join(sorted(_RUN_KEYS))}")
        quick = _table(body, "quick", where, problems)
        try:
            spec = parse_spec({"name": f"check-{deck}-{name}", "base": body.get("scenario"),
                               **{k: body[k] for k in ("set", "axes", "zip") if k in body}}, where)
        except ScenarioError as err:
            problems.append(str(err))
            continue
        runs[name] = RunSet(name, deck, spec, dict(quick), str(body.get("note", "")))
    return runs


def _parse_window(value: Any, where: str, problems: list[str]) -> str | tuple[float, float] | None:
    if isinstance(value, str) and (value in WINDOW_NAMES or value == "main"):
        return value
    if (isinstance(value, list) and len(value) == 2 and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value)
            and 0 <= value[0] < value[1]):
        return (float(value[0]), float(value[1]))
    problems.append(f"{where}.window: {format_value(value)} is not a window; allowed: {', '.join(WINDOW_NAMES)}, main, "
                    "or [t0, t1] in seconds with t0 < t1")
    return None


def _parse_measure(name: str, body: Any, where: str, runs: dict[str, RunSet], problems: list[str]) -> Measure | None:
    if not isinstance(body, dict):
        problems.append(f"{where}: must be a table {{run, metric, ...}}")
        return None
    for key in set(body) - _MEASURE_KEYS:
        problems.append(f"{where}.{key}: unknown key; allowed: {', '.join(sorted(_MEASURE_KEYS))}")
    run = body.get("run")
    if run not in runs:
        problems.append(f"{where}.run: {format_value(run)} is not a run set of this deck; run sets: {', '.join(runs) or '(none)'}")
        return None
    metric = body.get("metric")
    try:
        definition, _ = metric_def(str(metric))
    except KeyError:
        from .extract import METRICS

        names = ", ".join(f"{k}:<arg>" if d.pattern else k for k, d in METRICS.items())
        problems.append(f"{where}.metric: unknown metric {format_value(metric)}; metrics: {names}")
        return None
    default = "main" if definition.source == "summary" else "ss"
    window = _parse_window(body.get("window", default), where, problems)
    if window is None:
        return None
    if definition.source == "summary" and window != "main":
        problems.append(f"{where}.window: {metric} comes from summary.json, which holds the run's window only; use main")
    seeds = body.get("seeds", "mean")
    if seeds not in SEED_RULES:
        problems.append(f"{where}.seeds: {format_value(seeds)} is not allowed; allowed: {', '.join(SEED_RULES)}")
    per_run = body.get("per_run")
    if per_run is not None and per_run not in PER_RUN_RULES:
        problems.append(f"{where}.per_run: {format_value(per_run)} is not allowed; allowed: {', '.join(PER_RUN_RULES)}")
    where_sel = body.get("where", {})
    args = body.get("args", {})
    if not isinstance(where_sel, dict) or not isinstance(args, dict):
        problems.append(f"{where}: where and args must be tables")
        return None
    spec = runs[run].spec
    swept = {**spec.axes, **spec.zip}
    for key, value in where_sel.items():
        if key not in swept:
            problems.append(f"{where}.where.{key}: not an axis of run set {run}; axes: {', '.join(swept) or '(none)'}")
        elif value not in swept[key]:
            problems.append(f"{where}.where.{key}: {format_value(value)} is not a value of the axis ({format_value(swept[key])})")
    return Measure(name, str(run), str(metric), window, dict(where_sel), dict(args), str(seeds),
                   None if per_run is None else str(per_run))


def _parse_check(deck: str, body: Any, index: int, runs: dict[str, RunSet], problems: list[str]) -> Check | None:
    if not isinstance(body, dict):
        problems.append(f"{deck}: checks[{index}] must be a table")
        return None
    cid = body.get("id")
    where = f"{deck}: {cid if isinstance(cid, str) else f'checks[{index}]'}"
    if not isinstance(cid, str) or not ID_PATTERN.match(cid):
        problems.append(f"{where}.id: {format_value(cid)} does not match T-<letter><two digits> (e.g. T-K15)")
    for key in set(body) - _CHECK_KEYS:
        problems.append(f"{where}.{key}: unknown key; allowed: {', '.join(sorted(_CHECK_KEYS))}")
    cls = _norm_class(body.get("class"))
    if cls is None:
        problems.append(f"{where}.class: {format_value(body.get('class'))} is not a class; allowed: {', '.join(CLASSES)} "
                        "or a pair such as N2/M")
    texts = {k: _str(body, k, where, problems) for k in ("source", "claim", "expected", "tolerance")}
    if "\n" in texts["claim"]:
        problems.append(f"{where}.claim: must be one line")
    measures: dict[str, Measure] = {}
    for name, mbody in _table(body, "measure", where, problems).items():
        if not name.isidentifier():
            problems.append(f"{where}.measure.{name}: a measure name must be an identifier")
            continue
        measure = _parse_measure(name, mbody, f"{where}.measure.{name}", runs, problems)
        if measure is not None:
            measures[name] = measure
    pending = body.get("pending", "")
    if not isinstance(pending, str):
        problems.append(f"{where}.pending: must be a string (the reason)")
        pending = ""
    conds = body.get("pass", [])
    conditions: list[Condition] = []
    if not isinstance(conds, list) or not all(isinstance(c, str) for c in conds) or (not conds and not pending):
        problems.append(f"{where}.pass: a non-empty list of condition strings is required (or pending = \"reason\")")
    else:
        for text in conds:
            try:
                conditions.append(Condition.compile(text, set(measures)))
            except ConditionError as err:
                problems.append(f"{where}.pass: {err}")
    if not measures and not pending:
        problems.append(f"{where}.measure: at least one measure is required")
    return Check(str(cid), deck, cls or "", texts["source"], texts["claim"], texts["expected"], texts["tolerance"],
                 measures, conditions, pending, str(body.get("note", "")))


def parse_deck(name: str, text: str) -> Deck:
    """One deck file's text → :class:`Deck` (ScenarioError listing every problem)."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise ScenarioError(f"check deck {name}: not valid TOML: {err}") from None
    problems: list[str] = []
    for key in set(doc) - _DECK_KEYS:
        problems.append(f"{name}.{key}: unknown key; allowed: {', '.join(sorted(_DECK_KEYS))}")
    if doc.get("deck") != name:
        problems.append(f"{name}.deck: must be the file's name {name!r} (given {format_value(doc.get('deck'))})")
    title = _str(doc, "title", name, problems)
    source = _str(doc, "source", name, problems)
    runs = _parse_runs(name, doc, problems)
    checks: list[Check] = []
    raw = doc.get("checks", [])
    if not isinstance(raw, list):
        problems.append(f"{name}.checks: must be an array of tables ([[checks]])")
        raw = []
    for i, body in enumerate(raw):
        check = _parse_check(name, body, i, runs, problems)
        if check is not None:
            checks.append(check)
    seen: set[str] = set()
    for c in checks:
        if c.id in seen:
            problems.append(f"{name}: {c.id} appears twice")
        seen.add(c.id)
    if problems:
        raise ScenarioError(f"check deck {name}: {len(problems)} problem(s):\n\n" + "\n\n".join(problems))
    return Deck(name, title, source, runs, checks)


def deck_names() -> list[str]:
    """The shipped check decks (files ``cnsim/check/decks/<deck>.toml``), in the order of targets.md."""
    root = importlib.resources.files("cnsim.check") / "decks"
    found = {p.name.removesuffix(".toml") for p in root.iterdir() if p.name.endswith(".toml")}
    order = ["zhb", "qcnp", "kd", "eval", "e2cm", "cross"]
    return [d for d in order if d in found] + sorted(found - set(order))


def load_decks(names: list[str] | None = None) -> list[Deck]:
    """Load (and validate) the named decks, or all; an unknown name is exit-2 input."""
    known = deck_names()
    wanted = known if names is None else names
    for n in wanted:
        if n not in known:
            raise ScenarioError(f"unknown check deck {n!r}; decks: {', '.join(known)}, or all")
    root = importlib.resources.files("cnsim.check") / "decks"
    return [parse_deck(n, (root / f"{n}.toml").read_text(encoding="utf-8")) for n in wanted]
