"""``--set KEY=VALUE`` (contract "--set"): parsing values, splitting dotted keys, and assigning
into the document (a numeric component indexes an array)."""

from __future__ import annotations

import tomllib
from typing import Any

from ..errors import ScenarioError, format_value, shorten
from .schema import dotted

#: The deepest a scenario document nests tables and arrays (the catalog needs 4); a dotted key
#: has at most this many parts. Deeper input is refused before anything recurses into it.
MAX_DEPTH = 32


def too_deep(value: Any, limit: int = MAX_DEPTH) -> list[str] | None:
    """The path (keys and indices) to the first table or array of ``value`` nested more than
    ``limit`` levels deep (``value`` itself is level 1), or None. Without recursion; a table
    shared by several keys is walked again only when reached deeper, and a circular value is
    too deep."""
    todo: list[tuple[Any, int, tuple[Any, ...]]] = [(value, 1, ())] if isinstance(value, (dict, list, tuple)) else []
    seen: dict[int, int] = {}  # id → the deepest level it was walked at
    nested, push = (dict, list, tuple), todo.append
    while todo:
        node, depth, trail = todo.pop()
        if depth > limit:
            path: list[str] = []
            while trail:
                trail, part = trail
                path.append(str(part))
            return path[::-1]
        if seen.get(id(node), 0) >= depth:
            continue
        seen[id(node)] = depth
        for key, child in node.items() if isinstance(node, dict) else enumerate(node):
            if isinstance(child, nested):
                push((child, depth + 1, (trail, key)))
    return None


def nesting_message(path: list[str], limit: int = MAX_DEPTH) -> str:
    """'<key…> is nested more than N levels deep; ...' for a :func:`too_deep` path."""
    where = shorten(".".join(path)) or "the value"
    return f"{where} is nested more than {limit} levels deep (tables or arrays inside one another); a scenario nests at most {limit}"

# --------------------------------------------------------------------------------------------
# --set parsing
# --------------------------------------------------------------------------------------------


def parse_set_value(text: str, key: str = "") -> Any:
    """``--set`` value: a TOML value (``true``, ``0.5``, ``[0.2, 0.5]``, ``{…}``), else the string.
    ``key`` (the key being set) only names the value in the message for one nested too deeply."""
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text
    except (RecursionError, ValueError) as err:  # [[[[…]]]] thousands deep; an int too long to convert
        name = f"--set {shorten(key)}" if key else "--set"
        why = (
            f"arrays or inline tables are nested too deeply (a scenario nests at most {MAX_DEPTH} levels)"
            if isinstance(err, RecursionError)
            else "a number is too long to read (at most 4,300 digits)"
        )
        raise ScenarioError(f"{name}: the value {format_value(text)} cannot be read: {why}") from None


def split_key(key: str) -> list[str]:
    """Split a dotted key; quoted parts keep their dots: ``a."b.c".0`` → ``["a", "b.c", "0"]``.
    A key has at most :data:`MAX_DEPTH` parts."""
    if not isinstance(key, str):
        raise ScenarioError(f"key {format_value(key)}: must be a string of dotted names such as \"cm.scheme\" (given a value of type {type(key).__name__})")
    parts: list[str] = []
    buf = ""
    quote: str | None = None
    quoted = False
    for ch in key.strip():
        if quote:
            if ch == quote:
                quote = None
            else:
                buf += ch
        elif ch in "\"'":
            quote, quoted = ch, True
        elif ch == ".":
            if not buf and not quoted:
                raise ScenarioError(f"{shorten(key)}: empty part in the dotted key (write e.g. switch.pause)")
            parts.append(buf.strip() if not quoted else buf)
            buf, quoted = "", False
            if len(parts) >= MAX_DEPTH:
                raise ScenarioError(f"{shorten(key)}: the dotted key has more than {MAX_DEPTH} parts; a scenario key has at most {MAX_DEPTH}")
        else:
            buf += ch
    if quote:
        raise ScenarioError(f"{shorten(key)}: unterminated quote in the dotted key")
    if not buf and not quoted:
        raise ScenarioError(f"{shorten(key)}: empty part in the dotted key (write e.g. switch.pause)")
    parts.append(buf.strip() if not quoted else buf)
    return parts


#: document paths that hold arrays (a missing one is created as an array by ``--set a.0.b=…``)
_ARRAY_PATHS = {
    ("hotspots",),
    ("traffic", "flows"),
    ("topology", "links"),
    ("topology", "nodes"),
    ("topology", "switches"),
    ("topology", "legacy"),
    ("metrics", "queues"),
    ("metrics", "window"),
}


def assign(doc: dict[str, Any], path: list[str], value: Any, key: str) -> None:
    """Set ``doc[path] = value``, creating missing tables; numeric parts index arrays."""
    cur: Any = doc
    for i, part in enumerate(path):
        last = i == len(path) - 1
        here = dotted(tuple(path[:i]))
        new_container: Any = [] if tuple(path[: i + 1]) in _ARRAY_PATHS else {}
        if isinstance(cur, list):
            if not (part.isascii() and part.isdigit()):
                raise ScenarioError(f"{shorten(key)}: {shorten(here)} is an array; index it with a number, e.g. {shorten(here)}.0")
            idx = int(part) if len(part) <= 18 else 10**18
            if idx > len(cur):
                raise ScenarioError(
                    f"{shorten(key)}: index {shorten(part)} is past the end of {shorten(here)} (it has {len(cur)} entr{'y' if len(cur) == 1 else 'ies'}; use {len(cur)} to append)"
                )
            if idx == len(cur):
                cur.append({})
            if last:
                cur[idx] = value
            elif isinstance(cur[idx], (dict, list)):
                cur = cur[idx]
            else:
                raise ScenarioError(f"{shorten(key)}: {shorten(here)}.{idx} is a value, not a table or array")
        else:
            if last:
                cur[part] = value
            elif isinstance(cur.get(part), (dict, list)):
                cur = cur[part]
            elif part in cur:
                raise ScenarioError(f"{shorten(key)}: {shorten(dotted(tuple(path[: i + 1])))} is a value, not a table or array")
            else:
                cur[part] = new_container
                cur = cur[part]


