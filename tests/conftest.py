"""Test set-up: import cnsim from python/ when it is not installed (PYTHONPATH=python works too)."""

from __future__ import annotations

import sys
from pathlib import Path

try:
    import cnsim  # noqa: F401
except ImportError:  # running from a source checkout without `pip install .`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
