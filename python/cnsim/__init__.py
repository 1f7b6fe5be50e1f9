"""cnsim: packet-level simulator of congestion management in lossless data-center Ethernet.

The public Python API of spec/contract.md ("Python")::

    import cnsim
    r = cnsim.run("zhb-og-single-hop", set={"cm.scheme": "bcn"}, seed=1, duration="0.5s")
    r.summary; r.series("queue"); r.save("out/")
    cnsim.scenarios(); cnsim.load("path/or-id").set("a.b", v).to_toml()

Bad input raises :class:`ScenarioError` with the same message the CLI prints.

The names are imported when first used (PEP 562): ``import cnsim`` itself loads nothing else, so
the command line's entry point (``cnsim._entry``) can take charge of Ctrl-C and SIGTERM before
numpy, pydantic and the engine are imported.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._version import __version__

if TYPE_CHECKING:
    from .api import run
    from .errors import ScenarioError
    from .results import Result
    from .scenario import Scenario, load, scenarios

__all__ = ["__version__", "Result", "Scenario", "ScenarioError", "load", "run", "scenarios"]

_WHERE = {"ScenarioError": "errors", "Result": "results", "run": "api", "Scenario": "scenario", "load": "scenario",
          "scenarios": "scenario"}


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'cnsim' has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(f".{_WHERE[name]}", __name__), name)
    globals()[name] = value  # once: later lookups do not come here
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_WHERE])
