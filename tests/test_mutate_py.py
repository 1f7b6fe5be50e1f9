"""The front end's mutation harness (scripts/mutate_py.py, docs/testing.md): the mutants it makes
of a source, the source each one is, and a run that says which missed mutants of an earlier
run it can no longer find."""

from __future__ import annotations

import ast
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("cnsim_mutate_py", ROOT / "scripts" / "mutate_py.py")
assert _spec is not None and _spec.loader is not None
mutate = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(mutate)

SOURCE = "def f(a, b):\n    if not a < b and b:\n        return a * 2\n    return b\n"


def test_each_kind_of_mutant_of_a_small_source() -> None:
    tree = ast.parse(SOURCE)
    found = [(line, what) for _index, _how, line, what in mutate.mutants(tree)]
    assert found == [(2, "And -> Or"), (2, "delete not"), (3, "Mult -> Div"), (2, "Lt -> LtE"), (2, "Lt -> Gt"), (3, "2 -> 2 + 1")]
    sources = {what: mutate.mutated_source(tree, index, how) for index, how, _line, what in mutate.mutants(tree)}
    assert sources["And -> Or"] == "def f(a, b):\n    if not a < b or b:\n        return a * 2\n    return b"
    assert sources["delete not"] == "def f(a, b):\n    if a < b and b:\n        return a * 2\n    return b"
    assert sources["Lt -> Gt"] == "def f(a, b):\n    if not a > b and b:\n        return a * 2\n    return b"
    assert sources["Mult -> Div"].splitlines()[2] == "        return a / 2"
    assert sources["2 -> 2 + 1"].splitlines()[2] == "        return a * 3"
    assert ast.unparse(tree) == ast.unparse(ast.parse(SOURCE))  # the tree itself is left as it was


def test_iterating_on_mutants_the_module_no_longer_has_says_so(tmp_path: Path) -> None:
    previous = tmp_path / "previous.json"
    previous.write_text(json.dumps([{"line": 99999, "mutant": "Lt -> Gt", "verdict": "missed"},
                                    {"line": 1, "mutant": "Lt -> Gt", "verdict": "caught"}]))
    res = subprocess.run([sys.executable, str(ROOT / "scripts" / "mutate_py.py"), "--iterate", str(previous), "--slice", "0:0",
                          "cnsim/labels.py", "--", "test_labels.py"], capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    assert res.stderr == (f"--iterate: 1 missed mutant(s) of {previous} are not in cnsim/labels.py as it is now "
                          "(line 99999: Lt -> Gt): the module was edited since; run it whole\n")
    assert res.stdout == "0 mutants, 0 caught, 0 missed\n"


def test_the_lines_a_diff_changes() -> None:
    """``--since REV`` keeps the mutants on these lines: a hunk's ``+c,d`` (``+c`` alone is one line,
    ``+c,0`` a deletion that leaves no line of its own)."""
    diff = ("diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -3 +3 @@ def f():\n-a\n+b\n"
            "@@ -10,2 +10,3 @@\n-c\n-d\n+e\n+f\n+g\n@@ -20,4 +22,0 @@\n-h\n@@ -30,0 +31,2 @@\n+i\n+j\n")
    assert mutate.changed_lines(diff) == {3, 10, 11, 12, 31, 32}
    assert mutate.changed_lines("") == set()
