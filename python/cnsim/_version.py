"""The package version (one place; pyproject.toml carries the same number), and the version of
the results a run computes."""

__version__ = "0.1.0"

#: The version of what a run computes from its resolved scenario and seed — summary.json and the
#: series, the engine's model and the front end's measurements alike. Raised by every change that
#: changes a result (a golden case, ``scripts/golden.py``), whatever the package version: a run
#: folder's manifest names the version that made it (``versions.results``), and a sweep or a
#: check reuses a run only when it names this one, so results cached before a model change are
#: never mixed with results made after it. ``scripts/golden.py --write`` refuses to record
#: changed results under an unchanged number.
RESULTS_VERSION = 7
