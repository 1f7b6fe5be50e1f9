"""cnsim: packet-level simulator of congestion management in lossless data-center Ethernet.

The public Python API of spec/contract.md ("Python")::

    import cnsim
    r = cnsim.run("zhb-og-single-hop", set={"cm.scheme": "bcn"}, seed=1, duration="0.5s")
    r.summary; r.series("queue"); r.save("out/")
    cnsim.scenarios(); cnsim.load("path/or-id").set("a.b", v).to_toml()

Bad input raises :class:`ScenarioError` with the same message the CLI prints.
"""

from ._version import __version__
from .errors import ScenarioError
from .results import Result
from .runner import run
from .scenario import Scenario, load, scenarios

__all__ = ["__version__", "Result", "Scenario", "ScenarioError", "load", "run", "scenarios"]
