"""Injected run failures for the tests of what a sweep, check or reproduction does when a run
fails (as a crashed worker or an engine error would make it): the real engine runs every other
run."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import cnsim.runner
import pytest


def fail_runs(monkeypatch: pytest.MonkeyPatch, when: Callable[[Any], bool]) -> Callable[..., Any]:
    """Make ``cnsim.runner.run`` raise "injected failure" for each scenario ``when`` picks;
    returns the real ``run`` (to put back in the middle of a test)."""
    real_run = cnsim.runner.run

    def flaky(scen: Any, *args: Any, **kwargs: Any) -> Any:
        if when(scen):
            raise RuntimeError("injected failure")
        return real_run(scen, *args, **kwargs)

    monkeypatch.setattr(cnsim.runner, "run", flaky)
    return real_run


def long_links(scen: Any) -> bool:
    """Links longer than 10 us."""
    return bool(scen.resolved.doc.links.delay > 10**7)
