"""Parameter sweeps (spec/contract.md "Sweep specs"; DESIGN.md "TOML dotted keys").

A sweep spec is a TOML document::

    name = "zhb-w-scaled"
    base = "zhb-og-single-hop"      # catalog id, or a scenario file (relative to the spec)
    seeds = [1, 2]                  # optional, default [1]
    [set]                           # fixed overrides of every run
    "cm.scheme" = "bcn"
    [axes]                          # grid: the product of all axes
    "cm.w" = [0.1, 0.5, 2, 10, 50]
    [zip]                           # axes of equal length, varied together
    "cm.gd" = ["2.5*gd0", "5*gd0"]
    "cm.gi" = ["1000*gd0", "2000*gd0"]

Keys are dotted scenario keys, quoted or as nested tables (flattened). Values are whatever
``--set`` accepts, expressions of ``gd0, gd, qeq, w, ru, m, rate, xoff`` included.

:func:`expand` turns a spec into runs (grid axes in the order written, then the zipped group, seeds
innermost); every run is resolved and estimated (:mod:`cnsim.budget`) before anything runs, so a
bad key or value, a run the machine cannot hold, or more than :data:`MAX_RUNS` runs stops the
sweep with :class:`~cnsim.errors.ScenarioError` (exit 2). The run id is a content hash of the
resolved scenario (the engine's core config, sorted keys) plus the scenario id and the seed.

:func:`run_sweep` is the coordinator: it runs what is missing under ``DIR/runs/<run_id>/`` on an
executor (:mod:`cnsim.executors`), each run written to a temporary folder and renamed when
complete, then rebuilds ``DIR/sweep.parquet`` and ``DIR/catalog.duckdb`` from the run folders
(the source of truth). Because of that, a sweep interrupted at any point (Ctrl-C, a killed worker,
``kill -9`` of the coordinator) and started again reruns only what is missing, and never loses or
duplicates a completed run. A run that fails is recorded in its folder (``error.json``) and does
not stop the sweep; failed runs are retried on the next start.
"""

from __future__ import annotations

import importlib.resources
import itertools
import json
import math
import os
import shutil
import time
import tomllib
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from . import budget
from ._version import RESULTS_VERSION
from .errors import ResourceError, ScenarioError, format_value
from .results import dump_json
from .rundir import (
    PARAMS_FILE,
    SUMMARY_FILE,
    SWEEP_PLAN_FILE,
    SWEEP_TABLE_FILE,
    TMP_PREFIX,
    flatten,
    read_run,
    results_version,
    rows_table,
    run_complete,
    run_id_of,
    run_reusable,
    write_text_atomic,
)
from .runtask import RunOutcome, RunTask, execute_run, params_doc
from .scenario import load, scenarios, split_key
from .scenario.loading import read_text

__all__ = [
    "SweepSpec",
    "RunTask",
    "RunOutcome",
    "SweepResult",
    "load_spec",
    "shipped_sweeps",
    "expand",
    "plan",
    "count_runs",
    "check_size",
    "MAX_RUNS",
    "run_id_of",
    "execute_run",
    "run_sweep",
    "run_tasks",
    "runs_outside",
    "rebuild_table",
    "flatten",
]

_SPEC_KEYS = ("name", "base", "seeds", "set", "axes", "zip", "description")


# ------------------------------------------------------------------------------------------
# Specs
# ------------------------------------------------------------------------------------------


@dataclass
class SweepSpec:
    """A parsed sweep spec (keys flattened to dotted paths)."""

    name: str
    base: str
    seeds: list[int] = field(default_factory=lambda: [1])
    set: dict[str, Any] = field(default_factory=dict)
    axes: dict[str, list[Any]] = field(default_factory=dict)
    zip: dict[str, list[Any]] = field(default_factory=dict)
    description: str = ""
    source: str = ""

    @property
    def swept_keys(self) -> list[str]:
        """The varied keys: grid axes in order, then the zipped ones."""
        return [*self.axes, *self.zip]

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "base": self.base,
            "seeds": list(self.seeds),
            "set": dict(self.set),
            "axes": {k: list(v) for k, v in self.axes.items()},
            "zip": {k: list(v) for k, v in self.zip.items()},
            "description": self.description,
        }

    def with_changes(
        self,
        set: dict[str, Any] | None = None,
        axes: dict[str, list[Any]] | None = None,
        zip: dict[str, list[Any]] | None = None,
        seeds: list[int] | None = None,
    ) -> SweepSpec:
        """A copy with more fixed overrides and some axes replaced (used by ``--quick``)."""
        return SweepSpec(
            name=self.name,
            base=self.base,
            seeds=list(seeds if seeds is not None else self.seeds),
            set={**self.set, **(set or {})},
            axes={k: list((axes or {}).get(k, v)) for k, v in self.axes.items()},
            zip={k: list((zip or {}).get(k, v)) for k, v in self.zip.items()},
            description=self.description,
            source=self.source,
        )


def _flatten_keys(table: Any, where: str, prefix: str = "") -> dict[str, Any]:
    """``{"cm": {"w": [..]}}`` → ``{"cm.w": [..]}``; quoted dotted keys are kept as they are."""
    if not isinstance(table, dict):
        raise ScenarioError(f"{where}: must be a table of dotted keys (given {format_value(table)})")
    out: dict[str, Any] = {}
    for key, value in table.items():
        dotted = f"{prefix}.{key}" if prefix else str(key)
        inner = _flatten_keys(value, where, dotted) if isinstance(value, dict) else {dotted: value}
        for name, v in inner.items():
            if name in out:  # `"links.delay" = …` and `links.delay = …`: TOML sees two keys
                raise ScenarioError(f"{where}.{name}: given twice (once as a quoted key, once as a dotted one); give it once")
            out[name] = v
    return out


def shipped_sweeps() -> list[str]:
    """Ids of the sweep specs shipped inside the package (scenarios.md §8 "Sweeps")."""
    root = importlib.resources.files("cnsim") / "sweeps"
    if not root.is_dir():
        return []
    return sorted(p.name.removesuffix(".toml") for p in root.iterdir() if p.name.endswith(".toml"))


def _spec_text(ref: str | Path) -> tuple[str, str, Path | None]:
    """(text, source, directory of the file) of a spec path or a shipped sweep id."""
    path = Path(ref)
    if path.is_file():
        return read_text(path), str(path), path.resolve().parent
    text_ref = str(ref)
    if text_ref in shipped_sweeps():
        res = importlib.resources.files("cnsim") / "sweeps" / f"{text_ref}.toml"
        return res.read_text(encoding="utf-8"), f"sweep:{text_ref}", None
    known = ", ".join(shipped_sweeps()) or "(none)"
    raise ScenarioError(
        f"unknown sweep {text_ref!r}: not a file and not a shipped sweep id. "
        f"Shipped sweeps: {known}; or give the path of a sweep spec .toml file."
    )


def _headed(head: str, problems: list[str]) -> str:
    """``head`` and the problems as a message: one paragraph when there is one problem (contract:
    bad input gets a one-paragraph message), else the head and a paragraph per problem."""
    if len(problems) == 1:
        return f"{head}: {problems[0]}"
    return f"{head}:\n\n" + "\n\n".join(problems)


def load_spec(ref: str | Path) -> SweepSpec:
    """Read and check a sweep spec (a file or a shipped sweep id); bad specs raise ScenarioError."""
    text, source, directory = _spec_text(ref)
    try:
        doc = tomllib.loads(text.removeprefix("\ufeff"))  # a byte-order mark (Windows editors) is skipped
    except tomllib.TOMLDecodeError as err:
        raise ScenarioError(f"{source}: not valid TOML: {err}") from None
    except RecursionError:  # `a = [[[[…]]]]` thousands deep: tomllib recurses
        raise ScenarioError(f"{source}: not readable as TOML: arrays or inline tables are nested too deeply; {_NESTING}") from None
    except ValueError:  # tomllib converts digits with int(): more than 4,300 is refused
        raise ScenarioError(f"{source}: not readable as TOML: a number is too long to read (at most 4,300 digits)") from None
    try:
        return parse_spec(doc, source, directory)
    except RecursionError:  # tables nested thousands deep (`[set] a.a.a.…`): the key flattening recurses
        raise ScenarioError(f"{source}: tables are nested too deeply; {_NESTING}") from None


def _first_repeat(items: list[Any]) -> int | None:
    """The index of the first item equal to an earlier one (None if all differ)."""
    seen: set[Any] = set()
    for i, item in enumerate(items):
        if item in seen:
            return i
        seen.add(item)
    return None


def _repeated_points(tables: dict[str, dict[str, Any]], unequal_zip: bool) -> list[str]:
    """The problems of a value given twice in one axis, or of a zipped point given twice: each
    repeat made a second row of the same run (as ``seeds = [1, 1]`` would, which is refused
    too). Values that differ in writing but resolve alike (``"m/4"`` and ``"150KB"``) are not
    repeats: they share a run, and both rows show it."""

    def spelled(value: Any) -> str:
        # TOML also has dates and times, which JSON does not: a spec giving one (a bad value the
        # run's resolution names, exit 2) must not end in a TypeError's traceback here
        return json.dumps(value, sort_keys=True, default=repr)

    problems: list[str] = []
    for key, values in tables["axes"].items():
        if isinstance(values, list) and (i := _first_repeat([spelled(v) for v in values])) is not None:
            problems.append(f"axes.{key}: repeated value {format_value(values[i])} (given {format_value(values)}); give each value once")
    zipped = {k: v for k, v in tables["zip"].items() if isinstance(v, list)}
    if zipped and not unequal_zip and len(zipped) == len(tables["zip"]):
        n = len(next(iter(zipped.values())))
        i = _first_repeat([tuple(spelled(v[j]) for v in zipped.values()) for j in range(n)])
        if i is not None:
            point = ", ".join(f"{k} = {format_value(v[i])}" for k, v in zipped.items())
            problems.append(f"zip: repeated point ({point}); give each point once")
    return problems


def _key_path(key: str) -> tuple[str, ...] | None:
    """The scenario path a dotted key names, read as ``--set`` reads it: parts stripped of blanks,
    quotes removed, array indexes as numbers (``"cm.w "``, ``cm."w"`` and ``cm.w`` are one key;
    so are ``hotspots.00.rate`` and ``hotspots.0.rate``, but not ``traffic.loads.01`` and
    ``traffic.loads.1``: node names). None for a key that does not read (the
    run's resolution names it)."""
    try:
        parts = split_key(key)
    except ScenarioError:
        return None
    path: list[str] = []
    for p in parts:
        index = p.isascii() and p.isdigit() and len(p) <= 18 and tuple(path) not in _NAMED_TABLES
        path.append(str(int(p)) if index else p)
    return tuple(path)


#: the scenario tables keyed by names, where digits are a name, not an array's index: nodes
#: "1" and "01" are two nodes, `traffic.loads.01` and `traffic.loads.1` two keys
_NAMED_TABLES = {("traffic", "loads")}


def _same_key_twice(tables: dict[str, dict[str, Any]]) -> list[str]:
    """The problems of one scenario key written two ways in a spec's tables. Each spelling
    became a key of its own: two axes of one key multiplied the runs, the later one overrode the
    other in every run, and the table's column of the other showed values no run had."""
    problems: list[str] = []
    seen: dict[tuple[str, ...], tuple[str, str]] = {}
    for section in ("set", "axes", "zip"):
        for key in tables[section]:
            path = _key_path(key)
            if path is None:
                continue
            if path not in seen:
                seen[path] = (section, key)
            elif seen[path][1] != key:  # the same spelling twice is one of the messages above
                where, other = seen[path]
                problems.append(f"{section}.{key}: the same scenario key as {where}.{other}, written another way; give it once")
    return problems


#: what a spec's nesting may be (the message of a spec nested too deeply)
_NESTING = "a sweep spec needs a few levels: [set], [axes] and [zip] tables of dotted keys and lists of values"


def parse_spec(doc: dict[str, Any], source: str = "<spec>", directory: Path | None = None) -> SweepSpec:
    """Check a spec document; every problem found raises one ScenarioError naming the key."""
    problems: list[str] = []
    for key in doc:
        if key not in _SPEC_KEYS:
            problems.append(f"{key}: unknown key of a sweep spec; allowed: {', '.join(_SPEC_KEYS)}")
    name = doc.get("name", Path(source).stem if source and not source.startswith("sweep:") else source.removeprefix("sweep:"))
    # the name becomes a folder name (results/<name>-<timestamp>): no separators, blanks or
    # control characters (a NUL reached the file system)
    if not isinstance(name, str) or not name or any(c in "/\\" or c.isspace() or not c.isprintable() for c in name):
        problems.append(f"name: must be a non-empty string without '/', spaces or control characters (given {format_value(name)})")
    base = doc.get("base")
    if not isinstance(base, str) or not base:
        problems.append(f"base: a scenario id or file is required (given {format_value(base)})")
        base = ""
    else:
        candidate = (directory / base) if directory is not None else None
        if candidate is not None and candidate.is_file():
            base = str(candidate)
        elif base not in scenarios() and not Path(base).is_file():
            problems.append(
                f"base: unknown base scenario {base!r}: not a catalog id and not a file; "
                f"catalog ids: {', '.join(scenarios())}"
            )
    seeds = doc.get("seeds", [1])
    if (
        not isinstance(seeds, list)
        or not seeds
        or not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in seeds)
    ):
        problems.append(f"seeds: must be a non-empty list of non-negative integers (given {format_value(seeds)})")
        seeds = [1]
    elif len(set(seeds)) != len(seeds):
        problems.append(f"seeds: repeated seed (given {format_value(seeds)})")
    description = doc.get("description", "")
    if not isinstance(description, str):
        problems.append(f"description: must be a string (given {format_value(description)})")
        description = ""
    tables: dict[str, dict[str, Any]] = {}
    for section in ("set", "axes", "zip"):
        try:
            tables[section] = _flatten_keys(doc.get(section, {}), section)
        except ScenarioError as err:
            problems.append(str(err))
            tables[section] = {}
    for section in ("axes", "zip"):
        for key, values in tables[section].items():
            if not isinstance(values, list):
                problems.append(f"{section}.{key}: an axis must be a list of values (given {format_value(values)})")
            elif not values:
                problems.append(f"{section}.{key}: empty axis (give at least one value)")
    lengths = {len(v) for v in tables["zip"].values() if isinstance(v, list)}
    if len(lengths) > 1:
        sizes = ", ".join(f"{k}: {len(v)}" for k, v in tables["zip"].items() if isinstance(v, list))
        problems.append(f"zip: zipped axes must have equal lengths ({sizes})")
    problems.extend(_repeated_points(tables, len(lengths) > 1))
    for key in tables["axes"]:
        if key in tables["zip"]:
            problems.append(f"{key}: both in [axes] and in [zip]; give it in one of them")
    for key in tables["set"]:
        if key in tables["axes"] or key in tables["zip"]:
            problems.append(f"{key}: both in [set] and swept; give it in one of them")
    problems.extend(_same_key_twice(tables))
    for key in [*tables["set"], *tables["axes"], *tables["zip"]]:
        if _key_path(key) == ("seed",):
            problems.append(f"{key}: the seed is swept with `seeds = [...]`, not as a key")
    if problems:
        raise ScenarioError(_headed(f"{source}: bad sweep spec", problems))
    return SweepSpec(
        name=str(name),
        base=str(base),
        seeds=list(seeds),
        set=tables["set"],
        axes={k: list(v) for k, v in tables["axes"].items()},
        zip={k: list(v) for k, v in tables["zip"].items()},
        description=description,
        source=source,
    )


# ------------------------------------------------------------------------------------------
# Expansion and run ids
# ------------------------------------------------------------------------------------------


#: the most runs (points × seeds) one sweep, check or reproduction may plan. Every run is
#: resolved before anything runs (a few ms each), so the limit keeps planning under a minute;
#: the largest shipped sweep has 54 runs and ``cnsim check all`` plans about 760.
MAX_RUNS = 10_000


def count_runs(spec: SweepSpec) -> int:
    """How many runs (points × seeds) ``spec`` expands to, computed without expanding it."""
    n = math.prod(len(values) for values in spec.axes.values())
    if spec.zip:
        n *= len(next(iter(spec.zip.values())))
    return n * len(spec.seeds)


def _shape(spec: SweepSpec) -> str:
    """``cm.w: 50 values × links.delay: 50 values × 2 seeds`` (what multiplies into the count)."""
    parts = [f"{k}: {len(v)} values" for k, v in spec.axes.items()]
    if spec.zip:
        parts.append(f"[zip] {', '.join(spec.zip)}: {len(next(iter(spec.zip.values())))} values")
    parts.append(f"{len(spec.seeds)} seed{'s' if len(spec.seeds) != 1 else ''}")
    return " × ".join(parts)


def check_size(spec: SweepSpec, limit: int = MAX_RUNS) -> int:
    """The number of runs of ``spec``; a ScenarioError when it exceeds ``limit`` (before expanding)."""
    n = count_runs(spec)
    if n > limit:
        raise ScenarioError(
            f"sweep {spec.name}: {n:,} runs ({_shape(spec)}), more than the limit of {limit:,} runs per sweep; "
            "give fewer values per axis or fewer seeds, or split it into several sweeps"
        )
    return n


#: how a sweep's run refused by its estimate can run anyway (a sweep has no --force)
_SWEEP_FORCE_HINT = "a sweep does not force it: run that point alone with `cnsim run {base} --set KEY=VALUE ... --force`"


def points(spec: SweepSpec) -> list[dict[str, Any]]:
    """The parameter points (without seeds), grid axes in order then the zip group."""
    grid = [[(k, v) for v in values] for k, values in spec.axes.items()]
    zipped: list[list[tuple[str, Any]]] = []
    if spec.zip:
        n = len(next(iter(spec.zip.values())))
        zipped = [[(k, spec.zip[k][i]) for k in spec.zip] for i in range(n)]
    out = []
    for combo in itertools.product(*grid):
        for z in zipped or [[]]:
            out.append(dict([*combo, *z]))
    return out


def expand(spec: SweepSpec, runs_dir: str | Path = "runs", plots: bool = False, budget_check: bool = True) -> list[RunTask]:
    """Every point × seed of ``spec``, resolved and checked; raises ScenarioError naming the bad point.

    A spec of more than :data:`MAX_RUNS` runs is refused before any point is resolved; with
    ``budget_check`` every run is also estimated (:func:`cnsim.budget.check`, as ``cnsim run``
    does) and one that would exceed the machine is refused (:class:`ResourceError`) before
    anything runs, rather than failing in a worker after others have run.

    Two points that resolve to the same scenario (``qeq = "m/4"`` and ``"150KB"`` at M = 600 KB)
    share a run id: the run is done once and both rows of the table show it.
    """
    check_size(spec)
    tasks: list[RunTask] = []
    base = load(spec.base)
    for point in points(spec):
        for seed in spec.seeds:
            overrides = {**spec.set, **point}
            scen = base.copy()
            try:
                scen.set_many(overrides)
                scen.set("seed", seed)
                scen.validate()
                rid = run_id_of(scen)
            except ScenarioError as err:
                where = ", ".join(f"{k} = {format_value(v)}" for k, v in point.items()) or "the fixed [set]"
                problems = str(err).split("\n\n")
                raise ScenarioError(_headed(f"sweep {spec.name}: the run with {where} (seed {seed}) is not valid", problems),
                                    err.problems) from None
            memory = 0
            if budget_check:
                try:
                    memory = budget.check(scen.core_config(), force_hint=_SWEEP_FORCE_HINT.format(base=spec.base)).memory_bytes
                except ResourceError as err:
                    where = ", ".join(f"{k} = {format_value(v)}" for k, v in point.items()) or "the fixed [set]"
                    raise ResourceError(f"sweep {spec.name}: the run with {where} (seed {seed}): {err}") from None
            tasks.append(
                RunTask(
                    run_id=rid,
                    base=spec.base,
                    overrides=overrides,
                    seed=seed,
                    params=dict(point),
                    index=len(tasks),
                    runs_dir=str(runs_dir),
                    sweep=spec.name,
                    plots=plots,
                    memory_bytes=memory,
                )
            )
    return tasks


def plan(spec: SweepSpec, out: str | Path, plots: bool = False) -> list[RunTask]:
    """The tasks of ``spec`` run into the sweep folder ``out`` (checked, nothing written)."""
    return expand(spec, Path(out).resolve() / "runs", plots=plots)


# ------------------------------------------------------------------------------------------
# The sweep table
# ------------------------------------------------------------------------------------------


def rebuild_table(out: Path, tasks: list[RunTask] | None = None) -> pa.Table:
    """Rebuild ``out/sweep.parquet`` from the run folders (in plan order when ``tasks`` is given)."""
    runs = out / "runs"
    rows: list[dict[str, Any]] = []
    keys: list[str] = []
    if tasks is not None:
        for task in tasks:
            row = read_run(runs / task.run_id)
            if row is not None:
                row.update(task.params)  # a run shared by two points shows each point's values
                row["seed"] = task.seed
                row["path"] = f"runs/{task.run_id}"
                rows.append(row)
        keys = list(dict.fromkeys(k for t in tasks for k in t.params))
    else:
        for folder in sorted(p for p in runs.iterdir() if p.is_dir() and not p.name.startswith(".")) if runs.is_dir() else []:
            row = read_run(folder)
            if row is not None:
                row["path"] = f"runs/{folder.name}"
                rows.append(row)
    table = rows_table(rows, ["run_id", "sweep", "seed", *keys, "status", "error"])
    tmp = out / f".sweep.parquet.{uuid.uuid4().hex[:8]}"
    pq.write_table(table, tmp)
    os.replace(tmp, out / SWEEP_TABLE_FILE)
    return table


# ------------------------------------------------------------------------------------------
# The coordinator
# ------------------------------------------------------------------------------------------


@dataclass
class SweepResult:
    """What :func:`run_sweep` did: the table and counts."""

    out: Path
    table: pa.Table
    total: int
    reused: int
    ran: int
    failed: list[tuple[str, str]]
    wall_s: float
    #: run folders found corrupted or partial (summary.json unreadable, a series file damaged or missing) and run again
    repaired: list[str] = field(default_factory=list)
    #: complete run folders made by another version of the results (``RESULTS_VERSION``), run again
    outdated: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.failed


ProgressHook = Callable[[int, int, int], None]  # (done, total, failed)


def clean_stale(runs: Path) -> None:
    """Remove temporary folders left by an interrupted or killed coordinator."""
    if runs.is_dir():
        for p in runs.iterdir():
            if p.name.startswith(TMP_PREFIX) and p.is_dir():
                shutil.rmtree(p, ignore_errors=True)


def runs_to_do(runs: Path, tasks: list[RunTask]) -> tuple[list[RunTask], list[str], list[str]]:
    """The tasks whose run folder under ``runs`` cannot be reused, and of their folders those
    found damaged (a summary.json that does not read back, a series file not whole) and those made
    by another version of the results (``RESULTS_VERSION``): both are removed, to be run again."""
    todo = [t for t in tasks if not run_reusable(runs / t.run_id)]
    # another version names its version; a manifest missing or unreadable is damage
    outdated = [t.run_id for t in todo if run_complete(runs / t.run_id)
                and results_version(runs / t.run_id) not in (None, str(RESULTS_VERSION))]
    older = set(outdated)
    repaired = [t.run_id for t in todo if (runs / t.run_id / SUMMARY_FILE).exists() and t.run_id not in older]
    for run_id in outdated + repaired:
        shutil.rmtree(runs / run_id, ignore_errors=True)
    return todo, repaired, outdated


def runs_outside(out: Path, tasks: list[RunTask]) -> list[str]:
    """The run folders under ``out/runs`` that no task of this plan names (sorted). A sweep
    extended with another spec keeps its runs only when this is empty: the table is built from the
    plan, the catalog from the folders, and the two would disagree."""
    runs = out / "runs"
    planned = {t.run_id for t in tasks}
    return sorted(p.name for p in runs.iterdir() if p.is_dir() and not p.name.startswith(".") and p.name not in planned) if runs.is_dir() else []


def restamp_reused(runs: Path, tasks: list[RunTask], todo: list[RunTask]) -> None:
    """Give every reused run folder the params.json of its point in this plan: a sweep extended
    with an axis, or with values that move the points' indices, reuses runs made under the earlier
    plan, whose params.json (the catalog's ``params``) would name the earlier point. A reused
    run's params.json that is missing or damaged (not UTF-8) is written too: it is only the
    point's label, and reading it as text ended every resume in a UnicodeDecodeError."""
    ran = {t.run_id for t in todo}
    for task in tasks:
        folder = runs / task.run_id
        if task.run_id in ran or not folder.is_dir():
            continue
        path = folder / PARAMS_FILE
        doc = dump_json(params_doc(task))
        try:
            same = path.read_bytes() == doc.encode("utf-8")
        except FileNotFoundError:
            same = False
        if not same:
            write_text_atomic(path, doc)


def run_tasks(executor: Any, todo: list[RunTask], done: int, total: int, progress: ProgressHook | None = None) -> list[tuple[str, str]]:
    """Run ``todo`` on ``executor`` (``done`` of ``total`` runs are complete already), reporting
    progress as (done, total, failed); returns the failed runs as (run_id, error).

    Interrupted (Ctrl-C, SIGTERM), it closes ``executor`` before the exception goes on, whoever
    owns it: a sweep or a check then rebuilds its table and catalog, and runs left in flight
    completed while those were written, so that the folders, sweep.parquet and catalog.duckdb
    told three different counts of the runs done."""
    failed: list[tuple[str, str]] = []
    if progress is not None:
        progress(done, total, 0)
    try:
        for outcome in executor.map_runs(todo):
            if outcome.status == "interrupted":
                continue
            done += 1
            if outcome.status == "failed":
                failed.append((outcome.run_id, outcome.error or "failed"))
            if progress is not None:
                progress(done, total, len(failed))
    except BaseException:
        executor.close()
        raise
    return failed


def run_sweep(
    spec: SweepSpec | str | Path,
    out: str | Path,
    executor: Any = None,
    workers: int | None = None,
    plots: bool = False,
    progress: ProgressHook | None = None,
    catalog: bool = True,
    tasks: list[RunTask] | None = None,
) -> SweepResult:
    """Run (or resume) a sweep into ``out``; returns the rebuilt table and what was done.

    ``executor`` is an executor of :mod:`cnsim.executors` (default: a local pool of ``workers``).
    Raises ScenarioError for a bad spec before anything runs; KeyboardInterrupt closes
    ``executor`` (the runs in flight stop) and propagates after the table and catalog have been
    rebuilt from the runs completed so far. ``tasks`` is the
    spec already expanded with :func:`plan` for ``out`` (default: expanded here).
    """
    from .executors import LocalExecutor

    if not isinstance(spec, SweepSpec):
        spec = load_spec(spec)
    out = Path(out)
    runs = out.resolve() / "runs"  # absolute: Dask workers may run elsewhere (shared file system)
    if tasks is None:
        tasks = plan(spec, out, plots=plots)
    runs.mkdir(parents=True, exist_ok=True)
    clean_stale(runs)
    write_text_atomic(out / SWEEP_PLAN_FILE, dump_json({"spec": spec.to_dict(), "source": spec.source, "runs": [params_doc(t) for t in tasks]}))
    unique = list({t.run_id: t for t in reversed(tasks)}.values())[::-1]  # first point of each run id
    todo, repaired, outdated = runs_to_do(runs, unique)
    restamp_reused(runs, unique, todo)
    reused = len(unique) - len(todo)
    started = time.perf_counter()
    own = executor is None
    if executor is None:
        executor = LocalExecutor(workers)
    try:
        failed = run_tasks(executor, todo, reused, len(unique), progress)  # interrupted: executor closed
    finally:
        if own:
            executor.close()
        table = rebuild_table(out, tasks)
        if catalog:
            from .catalog import build

            build(out)
    return SweepResult(out, table, len(unique), reused, len(todo), failed, time.perf_counter() - started, repaired, outdated)
