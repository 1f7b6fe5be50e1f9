"""Issue 11: the package type-checks with ``mypy --strict`` and the sources are ruff-clean
(configuration in pyproject.toml); both run as part of the test command."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=600)


def test_mypy_strict() -> None:
    pytest.importorskip("mypy")
    res = _run("mypy", "--cache-dir", str(ROOT / ".mypy_cache"))  # files and --strict: pyproject.toml
    assert res.returncode == 0, res.stdout + res.stderr


def test_ruff() -> None:
    pytest.importorskip("ruff")
    res = _run("ruff", "check", "--no-cache", "python", "tests")
    assert res.returncode == 0, res.stdout + res.stderr
