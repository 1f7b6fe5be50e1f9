"""The :class:`Scenario`: a document with its overrides, resolved lazily and once (until it
is edited again), and its outputs (core config, resolved TOML)."""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from ..cmparams import SCHEMES
from ..errors import Problem, ScenarioError, did_you_mean, format_value, raise_problems, shorten
from .cmtable import check_cm_table, check_param
from .invalid import problems_from_validation
from .lower import lower_core
from .overrides import MAX_DEPTH, assign, nesting_message, split_key, too_deep
from .resolution import Resolution
from .resolver import Resolved
from .schema import ScenarioDoc
from .toml import resolved_toml


class Scenario:
    """A scenario document with overrides; resolves lazily (contract "Python")."""

    def __init__(self, doc: dict[str, Any], id: str, source: str = "", *, _checked: bool = False) -> None:
        if not isinstance(doc, dict):
            raise ScenarioError(f"{id}: a scenario document must be a table")
        deep = None if _checked else too_deep(doc)
        if deep is not None:  # before copying: deepcopy and validation recurse
            raise ScenarioError(f"{id}: {nesting_message(deep)}")
        self.id = id
        self.source = source
        self._doc: dict[str, Any] = copy.deepcopy(doc)
        self._scheme: Any = None  # --set cm.scheme
        self._cm_set: dict[str, Any] = {}  # --set cm.<param>
        # the resolution and the core config are computed once and kept until the next edit
        self._resolved: Resolved | None = None
        self._core: dict[str, Any] | None = None

    # ---- editing ------------------------------------------------------------------------

    def copy(self) -> Scenario:
        other = Scenario(self._doc, self.id, self.source, _checked=True)  # set() kept it shallow
        other._scheme = self._scheme
        other._cm_set = copy.deepcopy(self._cm_set)
        # an unedited copy is the same scenario: it shares the (never mutated) resolution
        other._resolved, other._core = self._resolved, self._core
        return other

    def set(self, key: str, value: Any) -> Scenario:
        """Override ``key`` (dotted, contract ``--set`` rules); returns ``self``."""
        path = split_key(key)
        deep = too_deep(value, MAX_DEPTH - len(path))
        if deep is not None:
            raise ScenarioError(f"{shorten(key)}: {nesting_message(path + deep)} (given {format_value(value)})")
        value = copy.deepcopy(value)
        if path[0] == "cm" and len(path) == 2 and path[1] == "scheme":
            self._scheme = value
        elif path[0] == "cm" and len(path) == 2 and path[1] != "presets":
            self._cm_set[path[1]] = value
        else:
            assign(self._doc, path, value, key)
        self._resolved = None
        self._core = None
        return self

    def set_many(self, overrides: Mapping[str, Any] | None) -> Scenario:
        """:meth:`set` each ``{dotted key: value}`` of ``overrides`` (a mapping, or None)."""
        if overrides is not None and not isinstance(overrides, Mapping):
            raise ScenarioError(
                f'set: must be a mapping of dotted keys to values, e.g. {{"cm.scheme": "bcn"}} '
                f"(given a {type(overrides).__name__}: {format_value(overrides)})"
            )
        for key, value in (overrides or {}).items():
            self.set(key, value)
        return self

    # ---- resolution ---------------------------------------------------------------------

    @property
    def resolved(self) -> Resolved:
        """The resolved scenario (raises :class:`ScenarioError` on any bad input)."""
        if self._resolved is None:
            self._resolved = self._resolve()
        return self._resolved

    def validate(self) -> Scenario:
        """Resolve now; raise :class:`ScenarioError` listing every problem."""
        _ = self.resolved
        return self

    @property
    def scheme(self) -> str:
        return self.resolved.scheme

    def _resolve(self) -> Resolved:
        problems: list[Problem] = []
        raw = copy.deepcopy(self._doc)
        cm_raw = raw.pop("cm", {})
        doc: ScenarioDoc | None = None
        try:
            doc = ScenarioDoc.model_validate(raw)
        except ValidationError as err:
            problems.extend(problems_from_validation(err))
        scheme, cm_typed = self._resolve_cm_tables(cm_raw, problems)
        raise_problems(problems, self.id)
        assert doc is not None
        return Resolution(doc, scheme, cm_typed, self.id).run()

    def _resolve_cm_tables(self, cm_raw: Any, problems: list[Problem]) -> tuple[str, dict[str, Any]]:
        """Contract "Schemes and presets": scheme, then defaults → file → --set."""
        if not isinstance(cm_raw, dict):
            problems.append(Problem("cm", cm_raw, "[cm] must be a table with scheme and parameters"))
            cm_raw = {}
        own = cm_raw.get("scheme", "none")
        if not isinstance(own, str) or own not in SCHEMES:
            problems.append(Problem("cm.scheme", own, _unknown_scheme(own)))
            own = "none"
        scheme = own if self._scheme is None else self._scheme
        if not isinstance(scheme, str) or scheme not in SCHEMES:
            problems.append(Problem("cm.scheme", scheme, _unknown_scheme(scheme)))
            scheme = "none"
        own_params = {k: v for k, v in cm_raw.items() if k not in ("scheme", "presets")}
        file_params = check_cm_table(own, own_params, "cm", problems)
        presets = cm_raw.get("presets", {})
        preset_params: dict[str, dict[str, Any]] = {}
        if not isinstance(presets, dict):
            problems.append(Problem("cm.presets", presets, "must be a table of [cm.presets.<scheme>] tables"))
            presets = {}
        for name, table in presets.items():
            if name not in SCHEMES:
                problems.append(Problem(f"cm.presets.{name}", "{...}", _unknown_scheme(name)))
            elif not isinstance(table, dict):
                problems.append(Problem(f"cm.presets.{name}", table, "must be a table of parameters"))
            else:
                preset_params[name] = check_cm_table(name, table, f"cm.presets.{name}", problems)
        set_params = check_cm_table(scheme, self._cm_set, "cm", problems)
        merged: dict[str, Any] = {name: p.default for name, p in SCHEMES[scheme].items()}
        for name, value in merged.items():
            merged[name] = check_param(SCHEMES[scheme][name], value)
        merged.update(file_params if scheme == own else preset_params.get(scheme, {}))
        merged.update(set_params)
        return scheme, merged

    # ---- output -------------------------------------------------------------------------

    def lower(self) -> dict[str, Any]:
        """The core config of docs/core-config.md (a JSON-ready dict; a fresh copy each call)."""
        return copy.deepcopy(self.core_config())

    def core_config(self) -> dict[str, Any]:
        """The core config, computed once and shared: read it, never change it (a 2,048-host
        config is thousands of dicts, and a copy of it costs milliseconds)."""
        if self._core is None:
            self._core = lower_core(self.resolved, self.id)
        return self._core

    def core_json(self, indent: int | None = None) -> str:
        """The core config as the JSON text the engine reads (compact unless ``indent``: the
        standard library encodes compact JSON in C, indented JSON in Python)."""
        return json.dumps(self.core_config(), indent=indent)

    def to_toml(self) -> str:
        """The fully resolved scenario as TOML (defaults filled; expressions as comments)."""
        return resolved_toml(self.resolved, self._cm_presets_raw(), self.id)

    @property
    def preset_schemes(self) -> list[str]:
        """The schemes the document has ``[cm.presets.<scheme>]`` tables for, in file order."""
        return list(self._cm_presets_raw())

    def _cm_presets_raw(self) -> dict[str, Any]:
        cm = self._doc.get("cm", {})
        presets = cm.get("presets", {}) if isinstance(cm, dict) else {}
        return copy.deepcopy(presets) if isinstance(presets, dict) else {}

    def __repr__(self) -> str:
        return f"Scenario({self.id!r})"


def _unknown_scheme(name: object) -> str:
    """What a scheme name that is none of the schemes gets told: the schemes, and the one it
    is a typo of, if any."""
    schemes = ", ".join(f'"{s}"' for s in SCHEMES)
    hint = did_you_mean(name, SCHEMES) if isinstance(name, str) else ""
    return f"unknown scheme.{hint} Allowed: {schemes}"
