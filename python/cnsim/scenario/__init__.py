"""Scenario documents: validation, defaults, overrides, resolution and lowering.

Implements spec/contract.md "Scenario document", "Schemes and presets", "Expressions",
"Measurement window" and the ``--set`` rules, spec/scenarios.md §1.1 (PAUSE watermarks) with
algorithms.md D12, and docs/core-config.md (the JSON handed to the Rust engine).

The pipeline of one scenario:

1. **document**: the TOML file (catalog entry or user file) as a dict; :meth:`Scenario.set`
   edits it (``cm.<param>`` and ``cm.scheme`` overrides are kept apart, because the file's
   ``[cm]`` parameters only apply to the file's own scheme);
2. **validation**: the pydantic models below (``extra="forbid"`` everywhere; *all defaults of
   cnsim live here* and in :mod:`cnsim.cmparams`), then the per-scheme ``cm`` parameters and
   the cross-references (node and port names); every problem is collected and raised as one
   :class:`~cnsim.errors.ScenarioError`;
3. **resolution**: the scheme's parameters (defaults → file → ``--set``), expressions in
   dependency order, PAUSE watermarks, measurement window, hot port, recorded queues and flows;
4. **output**: :meth:`Scenario.to_toml` (the resolved scenario, expressions kept as comments)
   or :meth:`Scenario.lower` (the core config, base units: ps, bit/s, bytes).

The modules, bottom up: :mod:`.fields` (field types) → :mod:`.schema` (the document's models and
their error messages) → :mod:`.overrides` (``--set``) and :mod:`.cmtable` (scheme parameters) →
:mod:`.resolver` (expressions, :class:`Resolved`) → :mod:`.network` (topology, headroom) →
:mod:`.resolution` (one resolution pass) → :mod:`.lower` (core config) and :mod:`.toml`
(resolved TOML) → :mod:`.document` (:class:`Scenario`) → :mod:`.loading` (catalog and files).
"""

from __future__ import annotations

from .document import Scenario
from .fields import CORE_CONFIG_VERSION, MAX_NODES, Kind
from .loading import load, scenarios
from .overrides import parse_set_value, split_key
from .resolution import measurement_window, traffic_pairs, traffic_pairs_into
from .resolver import Resolved
from .schema import ScenarioDoc

__all__ = [
    "CORE_CONFIG_VERSION",
    "MAX_NODES",
    "Kind",
    "Resolved",
    "Scenario",
    "ScenarioDoc",
    "load",
    "measurement_window",
    "parse_set_value",
    "scenarios",
    "split_key",
    "traffic_pairs",
    "traffic_pairs_into",
]

