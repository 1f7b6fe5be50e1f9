"""Bad-input errors (spec/contract.md, "Command line": exit 2 with a message naming the key,
the value given and what is allowed).

Every check in :mod:`cnsim.scenario` records a :class:`Problem`; all problems found in one pass
are raised together as one :class:`ScenarioError` whose message has one paragraph per problem.
The CLI prints exactly that message on stderr and exits with status 2.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

__all__ = ["ScenarioError", "ResourceError", "EngineMissing", "EngineError", "Problem", "format_value", "raise_problems", "did_you_mean"]


class ScenarioError(ValueError):
    """Bad input: unknown scenario, unknown key or bad value. ``problems`` lists each finding."""

    def __init__(self, message: str, problems: list[Problem] | None = None) -> None:
        super().__init__(message)
        self.problems: list[Problem] = list(problems or [])


class ResourceError(ScenarioError):
    """A run refused before it started because it would exceed the machine (cnsim.budget)."""


class EngineMissing(RuntimeError):
    """The compiled engine ``cnsim._core`` is not available."""


class EngineError(RuntimeError):
    """An internal failure of the engine (a panic, or a core config off its schema): a bug in
    cnsim, not in the user's input. The CLI reports it in one line and exits with status 70."""


_MISSING = object()


def format_value(value: Any) -> str:
    """A short TOML-like rendering of a value the user gave."""
    if value is _MISSING:
        return "(nothing)"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, (int, float)):
        return repr(value)
    try:
        text = json.dumps(value, default=str)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


@dataclass(frozen=True)
class Problem:
    """One finding: the dotted ``key``, the ``value`` given, and what is wrong / allowed."""

    key: str
    value: Any
    message: str

    def render(self) -> str:
        given = "nothing was given" if self.value is _MISSING else f"given {format_value(self.value)}"
        return f"{self.key or '(document)'}: {self.message} ({given})."


def missing() -> Any:
    """The marker for "no value was given" (a required key is absent)."""
    return _MISSING


def raise_problems(problems: list[Problem], where: str = "") -> None:
    """Raise one :class:`ScenarioError` for ``problems`` (no-op when empty)."""
    if not problems:
        return
    seen: set[tuple[str, str]] = set()
    unique = []
    for p in problems:
        if (p.key, p.message) not in seen:
            seen.add((p.key, p.message))
            unique.append(p)
    head = f"{where}: " if where else ""
    paragraphs = [head + unique[0].render()] + [p.render() for p in unique[1:]]
    raise ScenarioError("\n\n".join(paragraphs), unique)


def did_you_mean(name: str, candidates: Iterable[str]) -> str:
    """' Did you mean "x"?' when ``name`` is close to one of ``candidates`` (a typo), else ''.

    A candidate also matches by its first word (``memroy`` → ``memory_per_port``)."""
    names = list(candidates)
    close = difflib.get_close_matches(name, names, n=2, cutoff=0.6)
    if not close:
        heads = {c.split("_")[0]: c for c in names if "_" in c}
        close = [heads[h] for h in difflib.get_close_matches(name, list(heads), n=2, cutoff=0.75)]
    if not close:
        return ""
    return " Did you mean " + " or ".join(f'"{c}"' for c in close) + "?"
