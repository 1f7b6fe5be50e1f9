"""Mutation testing of one module of the Python package (cargo-mutants covers the engine; this
covers the front end's pure computations, docs/testing.md).

Each mutant changes one thing in the module — a comparison turned round or made strict, an
arithmetic or boolean operator swapped, a ``not`` dropped, a number plus one — and the given
tests run against a copy of the package holding it. A mutant the tests pass is *missed*: either
a gap in the tests or a change no input can observe (an equivalent mutant).

    python scripts/mutate_py.py cnsim/fairness.py -- test_fairness.py test_fairness_catalog.py

Runs in a temporary copy of ``python/``, ``tests/`` and ``scripts/``, with links to the rest of the
tree for what tests read (the tree is not touched), one mutant at
a time, the tests with ``pytest -x`` and a time limit (a mutant that hangs counts as caught).
Prints one line per mutant and writes them as JSON with ``--out``; ``--iterate PREVIOUS.json``
runs only the mutants that run missed (after adding tests, or to try more test files on them),
``--slice 108:155`` only those, counted from 0 in the order listed (a long module in parts), and
``--since REV`` only those on lines changed since the git revision REV (what a stop changed, as
cargo-mutants' ``--in-diff`` does for the engine).
"""

from __future__ import annotations

import argparse
import ast
import copy
import itertools
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

SWAP_COMPARE: dict[type[ast.cmpop], list[type[ast.cmpop]]] = {
    ast.Lt: [ast.LtE, ast.Gt],
    ast.LtE: [ast.Lt, ast.GtE],
    ast.Gt: [ast.GtE, ast.Lt],
    ast.GtE: [ast.Gt, ast.LtE],
    ast.Eq: [ast.NotEq],
    ast.NotEq: [ast.Eq],
    ast.Is: [ast.IsNot],
    ast.IsNot: [ast.Is],
    ast.In: [ast.NotIn],
    ast.NotIn: [ast.In],
}
SWAP_ARITHMETIC: dict[type[ast.operator], type[ast.operator]] = {
    ast.Add: ast.Sub,
    ast.Sub: ast.Add,
    ast.Mult: ast.Div,
    ast.Div: ast.Mult,
    ast.FloorDiv: ast.Mult,
    ast.Mod: ast.FloorDiv,
    ast.Pow: ast.Mult,
}

#: a mutant: the index of its node in ``ast.walk`` order, what to do, its line, what it does
Mutant = tuple[int, tuple[object, ...], int, str]


def mutants(tree: ast.Module) -> Iterator[Mutant]:
    for index, node in enumerate(ast.walk(tree)):
        if isinstance(node, ast.Compare):
            for j, op in enumerate(node.ops):
                for new in SWAP_COMPARE.get(type(op), []):
                    yield index, ("compare", j, new), node.lineno, f"{type(op).__name__} -> {new.__name__}"
        elif isinstance(node, ast.BinOp) and type(node.op) in SWAP_ARITHMETIC:
            new_op = SWAP_ARITHMETIC[type(node.op)]
            yield index, ("arithmetic", new_op), node.lineno, f"{type(node.op).__name__} -> {new_op.__name__}"
        elif isinstance(node, ast.BoolOp):
            new_bool = ast.Or if isinstance(node.op, ast.And) else ast.And
            yield index, ("boolean", new_bool), node.lineno, f"{type(node.op).__name__} -> {new_bool.__name__}"
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            yield index, ("not",), node.lineno, "delete not"
        elif isinstance(node, ast.Constant) and type(node.value) in (int, float):
            yield index, ("number",), node.lineno, f"{node.value!r} -> {node.value!r} + 1"


def mutated_source(tree: ast.Module, index: int, how: tuple[object, ...]) -> str:
    tree = copy.deepcopy(tree)
    node = list(ast.walk(tree))[index]
    kind = how[0]
    if kind == "compare":
        assert isinstance(node, ast.Compare) and isinstance(how[1], int) and isinstance(how[2], type)
        node.ops[how[1]] = how[2]()
    elif kind in ("arithmetic", "boolean"):
        assert isinstance(node, ast.BinOp | ast.BoolOp) and isinstance(how[1], type)
        node.op = how[1]()
    elif kind == "not":
        assert isinstance(node, ast.UnaryOp)
        for parent in ast.walk(tree):  # put the operand where the `not` stood
            for field, value in ast.iter_fields(parent):
                if value is node:
                    setattr(parent, field, node.operand)
                elif isinstance(value, list):
                    value[:] = [node.operand if v is node else v for v in value]
    else:
        assert isinstance(node, ast.Constant) and isinstance(node.value, int | float)
        node.value = node.value + 1
    return ast.unparse(tree)


def changed_lines(diff: str) -> set[int]:
    """The new file's lines that a ``git diff --unified=0`` adds or changes (its ``+c,d`` hunks)."""
    lines: set[int] = set()
    for match in re.finditer(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@", diff, flags=re.MULTILINE):
        first, count = int(match[1]), int(match[2] if match[2] is not None else 1)
        lines.update(range(first, first + count))
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("module", help="the module, relative to python/, e.g. cnsim/fairness.py")
    parser.add_argument("pytest_args", nargs="+", help="after --: the test files (in tests/) and pytest options")
    parser.add_argument("--out", type=Path, help="write the results here as JSON")
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds before a mutant's tests count as hung")
    parser.add_argument("--iterate", type=Path, metavar="PREVIOUS.json",
                        help="run only the mutants a previous --out of the same module (unchanged since) missed")
    parser.add_argument("--slice", metavar="START:STOP", default=":",
                        help="run only these mutants, counted from 0 in the order they are listed (a long run in parts, "
                             "or in parallel lanes), e.g. 108:155")
    parser.add_argument("--since", metavar="REV", help="run only the mutants on lines changed since this git revision")
    args = parser.parse_args()
    try:
        start, stop = (int(part) if part else None for part in args.slice.split(":"))
    except ValueError:
        parser.error(f"--slice {args.slice!r}: expected START:STOP, whole numbers either of which may be left out")
    retry: set[tuple[int, str]] | None = None
    if args.iterate:
        retry = {(r["line"], r["mutant"]) for r in json.loads(args.iterate.read_text()) if r["verdict"] == "missed"}

    only_lines: set[int] | None = None
    if args.since:
        diff = subprocess.run(["git", "diff", "--unified=0", args.since, "--", f"python/{args.module}"], cwd=ROOT,
                              capture_output=True, text=True)
        if diff.returncode != 0:
            parser.error(f"--since {args.since}: {diff.stderr.strip()}")
        only_lines = changed_lines(diff.stdout)

    text = (ROOT / "python" / args.module).read_text()
    tree = ast.parse(text)
    if retry is not None:
        # the keys name lines: an edit above a missed mutant moves it, and --iterate would skip it
        gone = retry - {(line, what) for _index, _how, line, what in mutants(tree)}
        if gone:
            shown = ", ".join(f"line {line}: {what}" for line, what in sorted(gone)[:3])
            print(f"--iterate: {len(gone)} missed mutant(s) of {args.iterate} are not in {args.module} as it is now "
                  f"({shown}{', ...' if len(gone) > 3 else ''}): the module was edited since; run it whole", file=sys.stderr)
    with tempfile.TemporaryDirectory(prefix="mutate-py-") as tmp:
        work = Path(tmp)
        shutil.copytree(ROOT / "python", work / "python")
        shutil.copytree(ROOT / "tests", work / "tests")
        shutil.copytree(ROOT / "scripts", work / "scripts")  # some tests load scripts/golden.py
        for entry in ROOT.iterdir():  # what tests only read (docs, the golden summaries in crates/), linked
            if not (work / entry.name).exists() and entry.name != ".git" and not entry.name.startswith("target"):
                (work / entry.name).symlink_to(entry)
        target = work / "python" / args.module
        env = dict(os.environ, PYTHONPATH=str(work / "python"))

        def tests_pass() -> bool:
            command = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *args.pytest_args]
            try:
                return subprocess.run(command, cwd=work / "tests", env=env, capture_output=True, timeout=args.timeout).returncode == 0
            except subprocess.TimeoutExpired:
                return False

        target.write_text(ast.unparse(tree))
        if not tests_pass():
            print(f"the tests fail on the unmutated module (or take more than --timeout {args.timeout:g} s)", file=sys.stderr)
            return 2
        results = []
        for index, how, line, what in itertools.islice(mutants(tree), start, stop):
            if (retry is not None and (line, what) not in retry) or (only_lines is not None and line not in only_lines):
                continue
            target.write_text(mutated_source(tree, index, how))
            verdict = "missed" if tests_pass() else "caught"
            results.append({"line": line, "mutant": what, "verdict": verdict})
            print(f"{verdict:7} {args.module}:{line}: {what}", flush=True)
    missed = sum(r["verdict"] == "missed" for r in results)
    print(f"{len(results)} mutants, {len(results) - missed} caught, {missed} missed")
    if args.out:
        args.out.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
