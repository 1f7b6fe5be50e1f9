"""What the scenario tests share: a shipped scenario with overrides, and the refusal of one."""

from __future__ import annotations

from typing import Any

import pytest
from cnsim import ScenarioError, load
from cnsim.scenario import Scenario

BASE = "zhb-og-single-hop"


def scen(scheme: str | None = None, base: str = BASE, **overrides: Any) -> Scenario:
    """``base`` with ``cm.scheme`` and each override set (``a__b`` is the key ``a.b``)."""
    s = load(base)
    if scheme is not None:
        s.set("cm.scheme", scheme)
    for key, value in overrides.items():
        s.set(key.replace("__", "."), value)
    return s


def refused(s: Scenario, key: str, *fragments: str) -> ScenarioError:
    """``s`` does not validate, one of its problems is about ``key`` and each fragment is in the
    message of one of those."""
    with pytest.raises(ScenarioError) as err:
        s.validate()
    about = [p for p in err.value.problems if p.key == key]
    assert about, f"no problem about {key}: {err.value}"
    for f in fragments:
        assert any(f in p.message for p in about), f"{f!r} not in: {err.value}"
    return err.value


def message(err: ScenarioError, key: str) -> str:
    """The messages of ``err``'s problems about ``key``, joined by " | "."""
    return " | ".join(p.message for p in err.problems if p.key == key)
