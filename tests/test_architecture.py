"""Issue 11: the package is a set of one-way layers — no import circle between its modules, the
scenario package's modules under 400 lines, and the sweep engine draws no pages.

Every import counts, wherever it is written (module top, inside a function, under
``TYPE_CHECKING``): a lazy import hides a circle, it does not remove it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "python" / "cnsim"


def _modules() -> dict[str, Path]:
    mods: dict[str, Path] = {}
    for f in [*PACKAGE.rglob("*.py"), *PACKAGE.rglob("*.pyi")]:
        parts = f.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        mods.setdefault(name, f)
    return mods


def _imports(name: str, path: Path, mods: dict[str, Path]) -> set[str]:
    """The package's modules that module ``name`` imports (anywhere in its text)."""
    is_pkg = path.name.startswith("__init__")
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_pkg else name.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            # `from .x import y`: y may be a module of its own
            targets = [f"{module}.{a.name}" if f"{module}.{a.name}" in mods else module for a in node.names]
        for t in targets:
            while t and t not in mods:  # `import cnsim.a.b` names cnsim.a.b, or a name inside it
                t = t.rpartition(".")[0]
            if t and t != name:
                found.add(t)
    return found


def _graph() -> dict[str, set[str]]:
    mods = _modules()
    return {name: _imports(name, path, mods) for name, path in mods.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_import_circle() -> None:
    graph = _graph()
    assert len(graph) > 40  # the walk found the package
    assert _cycles(graph) == []


def test_the_check_finds_a_circle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def _reaches(graph: dict[str, set[str]], start: str) -> set[str]:
    seen: set[str] = set()
    todo = [start]
    while todo:
        for w in graph[todo.pop()]:
            if w not in seen:
                seen.add(w)
                todo.append(w)
    return seen


@pytest.mark.parametrize(
    ("module", "forbidden"),
    [
        ("cnsim.sweep", {"cnsim.report", "cnsim.reproduce", "cnsim.check", "cnsim.cli"}),  # the sweep engine draws no pages
        ("cnsim.runtask", {"cnsim.report", "cnsim.sweep", "cnsim.check", "cnsim.cli"}),
        ("cnsim.report", {"cnsim.sweep", "cnsim.reproduce", "cnsim.check", "cnsim.cli"}),
        ("cnsim.results", {"cnsim.report", "cnsim.sweep", "cnsim.check", "cnsim.cli"}),
        ("cnsim.rundir", {"cnsim.check", "cnsim.cli"}),
        ("cnsim.check", {"cnsim.reproduce", "cnsim.rebuild", "cnsim.cli"}),  # checks sit above sweeps, below decks
        ("cnsim.scenario", {"cnsim.results", "cnsim.runner", "cnsim.sweep", "cnsim.report", "cnsim.cli"}),
        ("cnsim.plots", {"cnsim.results", "cnsim.report"}),
    ],
)
def test_layers_point_one_way(module: str, forbidden: set[str]) -> None:
    assert _reaches(_graph(), module) & forbidden == set()


def test_scenario_modules_stay_small() -> None:
    for f in (PACKAGE / "scenario").glob("*.py"):
        lines = len(f.read_text(encoding="utf-8").splitlines())
        assert lines < 400, f"{f.name}: {lines} lines"


def test_a_run_resolves_and_lowers_its_scenario_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`cnsim run` used to resolve a scenario two or three times and build the engine twice."""
    pytest.importorskip("cnsim._core")
    import cnsim.scenario.document as document
    import cnsim.scenario.resolution as resolution
    from cnsim.cli import app
    from typer.testing import CliRunner

    counts = {"resolve": 0, "lower": 0}
    resolve, lower = resolution.Resolution.run, document.lower_core

    def counting_resolve(self: resolution.Resolution) -> object:
        counts["resolve"] += 1
        return resolve(self)

    def counting_lower(*args: object) -> object:
        counts["lower"] += 1
        return lower(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(resolution.Resolution, "run", counting_resolve)
    monkeypatch.setattr(document, "lower_core", counting_lower)
    res = CliRunner().invoke(app, ["run", "kd-symmetric-single-hs", "--duration", "2ms", "--out", str(tmp_path / "r"), "--quiet", "--no-plots"])
    assert res.exit_code == 0, res.output
    assert counts == {"resolve": 1, "lower": 1}


def test_an_engine_is_built_once_and_runs_once() -> None:
    _core = pytest.importorskip("cnsim._core")
    from cnsim.runner import prepare

    sim = _core.Simulation(prepare("kd-symmetric-single-hs", duration="1ms").core_json())
    assert "summary" in sim.run()
    with pytest.raises(_core.EngineError, match="already run"):
        sim.run()


# ---- the engine crate's layers ----------------------------------------------------------------

CORE = Path(__file__).resolve().parents[1] / "crates" / "cnsim-core" / "src"

#: what each top-level module of cnsim-core may use (`crate::<module>`): a DAG from `time` up.
RUST_LAYERS: dict[str, set[str]] = {
    "time": set(),
    "error": set(),
    "wire": {"time"},
    "engine": {"time", "wire"},
    "frame": {"engine", "time", "wire"},
    "topology": {"error", "time"},
    "traffic": {"engine", "time"},
    "metrics": {"frame", "time"},
    "cm": {"engine", "error", "frame", "time", "wire"},
    "scenario": {"cm", "error", "topology"},
    "net": {"cm", "engine", "frame", "metrics", "scenario", "time", "topology"},
    "sim": {"cm", "engine", "error", "frame", "metrics", "net", "scenario", "time", "topology", "traffic", "wire"},
}


def _rust_uses() -> dict[str, set[str]]:
    """``crate::<module>`` paths named by each top-level module, outside comments and tests."""
    import re

    uses: dict[str, set[str]] = {}
    for f in CORE.rglob("*.rs"):
        module = f.relative_to(CORE).parts[0].removesuffix(".rs")
        if module in ("lib", "main"):
            continue
        text = re.split(r"#\[cfg\(test\)\]\s*mod tests", f.read_text(encoding="utf-8"))[0]
        code = "\n".join(line.split("//")[0] for line in text.splitlines())
        found = {m for m in re.findall(r"crate::(\w+)", code) if m != module}
        # `crate::Simulator` and the other re-exports of lib.rs name `sim`
        found = {"sim" if m in ("Simulator", "RunControl", "RunResult", "run_json") else m for m in found}
        uses.setdefault(module, set()).update(found)
    return uses


def test_engine_layers_point_down() -> None:
    uses = _rust_uses()
    assert set(uses) <= set(RUST_LAYERS), f"a new module needs its place in RUST_LAYERS: {set(uses) - set(RUST_LAYERS)}"
    for module, deps in uses.items():
        assert deps <= RUST_LAYERS[module], f"{module} uses {sorted(deps - RUST_LAYERS[module])}, above it"


def test_engine_layers_have_no_circle() -> None:
    graph = dict(RUST_LAYERS)
    assert _cycles(graph) == []
    assert "sim" not in _reaches(graph, "net"), "the network elements know no kernel"
    for low in ("time", "wire", "engine", "frame"):
        assert "cm" not in _reaches(graph, low), f"{low} reaches the schemes"


def _typed_keys(cls: type) -> dict[str, object]:
    """The keys of a TypedDict, nested TypedDicts expanded; ``{"*": ...}`` for a map of them."""
    from typing import get_args, get_origin, get_type_hints

    def shape(hint: object) -> object:
        if get_origin(hint) is dict:
            inner = shape(get_args(hint)[1])
            return {"*": inner} if inner is not None else None
        for a in (hint, *get_args(hint)):
            if isinstance(a, type) and hasattr(a, "__required_keys__"):
                return _typed_keys(a)
        return None

    return {key: shape(hint) for key, hint in get_type_hints(cls).items()}


def _json_keys(value: object, like: object) -> object:
    """The shape of a JSON value, read as ``like`` says (a map's entries must all agree)."""
    if value is None and isinstance(like, dict):
        return like  # an optional section that is absent in this run (checked by another run)
    if not isinstance(like, dict) or not isinstance(value, dict):
        return None
    if "*" in like:
        shapes = [_json_keys(v, like["*"]) for v in value.values()]
        assert all(sh == shapes[0] for sh in shapes), shapes
        return {"*": shapes[0] if shapes else like["*"]}
    return {k: _json_keys(v, like.get(k)) for k, v in value.items()}


def test_the_python_summary_type_mirrors_the_engine() -> None:
    """cnsim.summary.Summary has exactly the keys of a real run's summary.json, nested ones too."""
    pytest.importorskip("cnsim._core")
    import cnsim
    from cnsim.summary import Summary

    expected = _typed_keys(Summary)
    flows = cnsim.run("e2cm-mixed-speed-ig", duration="2ms").summary  # finite flows: fct_ms present
    deadlocked = cnsim.run("e2cm-mixed-speed-og", duration="0.15s").summary  # a PAUSE deadlock
    assert flows["fct_ms"] is not None and deadlocked["deadlock"] is not None
    for summary in (flows, deadlocked):
        assert _json_keys(summary, expected) == expected


def _rust_functions() -> list[tuple[int, str, str]]:
    """(lines, file, name) of every function of the engine outside test modules."""
    import re

    out = []
    for f in CORE.rglob("*.rs"):
        text = re.split(r"#\[cfg\(test\)\]\s*mod tests", f.read_text(encoding="utf-8"))[0]
        lines = text.splitlines()
        i = 0
        while i < len(lines):
            m = re.match(r"^(\s*)(pub(\([a-z]+\))? )?fn (\w+)", lines[i])
            if m:
                indent = len(m.group(1))
                j = i + 1
                while j < len(lines) and not (lines[j].startswith(" " * indent + "}") and len(lines[j]) - len(lines[j].lstrip()) == indent):
                    j += 1
                out.append((j - i + 1, str(f.relative_to(CORE)), m.group(4)))
                i = j
            i += 1
    return out


def test_no_engine_function_over_80_lines() -> None:
    functions = _rust_functions()
    assert len(functions) > 200  # the scan found the engine
    assert [f for f in functions if f[0] > 80] == []
