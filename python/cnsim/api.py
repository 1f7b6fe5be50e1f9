"""The public ``cnsim.run`` (spec/contract.md "Python"): the runner's run, whose result's
``save("out/")`` writes a whole run folder — its page, ``report.html``, too, which the results
layer below the report cannot draw itself. Sweeps call the runner directly: their run folders
get no page unless asked (``cnsim sweep --plots``)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .results import Result
    from .runner import Progress
    from .scenario import Scenario

__all__ = ["run"]


def run(
    scenario: str | Path | Scenario,
    set: dict[str, Any] | None = None,
    seed: int | None = None,
    duration: Any = None,
    progress: Progress | None = None,
    force: bool = False,
    meanwhile: Callable[[], object] | None = None,
) -> Result:
    """Simulate ``scenario`` as :func:`cnsim.runner.run` does (the same arguments, errors and
    result); the result's :meth:`~cnsim.results.Result.save` also writes the run's page."""
    from .runner import run as simulate

    result = simulate(scenario, set, seed, duration, progress, force, meanwhile)
    result.page_writer = _write_page
    return result


def _write_page(folder: Path) -> None:
    from .report import write_run_report

    write_run_report(folder, draw=False)  # the page embeds the figures save drew, if any
