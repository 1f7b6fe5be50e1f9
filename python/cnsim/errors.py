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

__all__ = [
    "ScenarioError", "UnknownNameError", "ResourceError", "EngineMissing", "EngineError", "Problem", "format_value", "shorten", "raise_problems", "did_you_mean",
]


#: A message shows at most this many characters of a value or key the user gave (a 50 MB
#: string would otherwise be echoed whole on stderr) ...
SHOW_CHARS = 80
#: ... and a paragraph of a message (one problem) at most this many characters in all.
MAX_PARAGRAPH = 2000


class ScenarioError(ValueError):
    """Bad input: unknown scenario, unknown key or bad value. ``problems`` lists each finding."""

    def __init__(self, message: str, problems: list[Problem] | None = None) -> None:
        if isinstance(message, str) and len(message) > MAX_PARAGRAPH:
            # a safety net: a message that quotes a huge value whole is cut, paragraph by paragraph
            message = "\n\n".join(shorten(p, MAX_PARAGRAPH) for p in message.split("\n\n"))
        super().__init__(message)
        self.problems: list[Problem] = list(problems or [])


class UnknownNameError(ScenarioError, KeyError):
    """Bad input that names something that does not exist (a series kind): a
    :class:`ScenarioError` that is also the ``KeyError`` such a lookup raised before."""

    def __str__(self) -> str:  # KeyError's would quote the message
        return str(self.args[0]) if self.args else ""


class ResourceError(ScenarioError):
    """A run refused before it started because it would exceed the machine (cnsim.budget)."""


class EngineMissing(RuntimeError):
    """The compiled engine ``cnsim._core`` is not available."""


class EngineError(RuntimeError):
    """An internal failure of the engine (a panic, or a core config off its schema): a bug in
    cnsim, not in the user's input. The CLI reports it in one line and exits with status 70."""


_MISSING = object()




def shorten(text: str, limit: int = SHOW_CHARS) -> str:
    """``text`` itself when short; else its start, an ellipsis and how long it was."""
    if len(text) <= limit:
        return text
    return f"{text[: max(limit - 20, 10)]}… ({len(text):,} characters)"


def format_value(value: Any) -> str:
    """A short TOML-like rendering of a value the user gave (long values are cut)."""
    if value is _MISSING:
        return "(nothing)"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        if len(value) <= SHOW_CHARS:
            return json.dumps(value)
        return f"{json.dumps(value[: SHOW_CHARS - 20])[:-1]}…\" ({len(value):,} characters)"
    if isinstance(value, (int, float)):
        try:
            text = repr(value)
        except ValueError:  # an int too long to print (sys.set_int_max_str_digits)
            return f"(an integer of {int(value).bit_length():,} bits)"
        return text if len(text) <= SHOW_CHARS else shorten(text)
    unshowable = f"(a {type(value).__name__} too large or too deeply nested to show)"
    try:
        text = json.dumps(value, default=str)
    except (TypeError, ValueError):  # not JSON, or a circular container
        try:
            text = repr(value)
        except (RecursionError, ValueError):
            text = unshowable
    except RecursionError:
        text = unshowable
    return text if len(text) <= SHOW_CHARS else text[: SHOW_CHARS - 3] + "..."


@dataclass(frozen=True)
class Problem:
    """One finding: the dotted ``key``, the ``value`` given, and what is wrong / allowed."""

    key: str
    value: Any
    message: str

    def render(self) -> str:
        given = "nothing was given" if self.value is _MISSING else f"given {format_value(self.value)}"
        return f"{shorten(self.key) or '(document)'}: {shorten(self.message, MAX_PARAGRAPH // 2)} ({given})."


#: at most this many problems are written out in one message (all are kept in the exception)
MAX_PROBLEMS = 20


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
    paragraphs = [head + unique[0].render()] + [p.render() for p in unique[1:MAX_PROBLEMS]]
    if len(unique) > MAX_PROBLEMS:  # 20,000 bad flows: the first ones say what is wrong
        paragraphs.append(f"... and {len(unique) - MAX_PROBLEMS} more problems.")
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
