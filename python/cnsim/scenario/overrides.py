"""``--set KEY=VALUE`` (contract "--set"): parsing values, splitting dotted keys, and assigning
into the document (a numeric component indexes an array)."""

from __future__ import annotations

import tomllib
from typing import Any

from ..errors import ScenarioError
from .schema import dotted

# --------------------------------------------------------------------------------------------
# --set parsing
# --------------------------------------------------------------------------------------------


def parse_set_value(text: str) -> Any:
    """``--set`` value: a TOML value (``true``, ``0.5``, ``[0.2, 0.5]``, ``{…}``), else the string."""
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


def split_key(key: str) -> list[str]:
    """Split a dotted key; quoted parts keep their dots: ``a."b.c".0`` → ``["a", "b.c", "0"]``."""
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
                raise ScenarioError(f"{key}: empty part in the dotted key (write e.g. switch.pause)")
            parts.append(buf.strip() if not quoted else buf)
            buf, quoted = "", False
        else:
            buf += ch
    if quote:
        raise ScenarioError(f"{key}: unterminated quote in the dotted key")
    if not buf and not quoted:
        raise ScenarioError(f"{key}: empty part in the dotted key (write e.g. switch.pause)")
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
            if not part.isdigit():
                raise ScenarioError(f"{key}: {here} is an array; index it with a number, e.g. {here}.0")
            idx = int(part)
            if idx > len(cur):
                raise ScenarioError(
                    f"{key}: index {idx} is past the end of {here} (it has {len(cur)} entries; use {len(cur)} to append)"
                )
            if idx == len(cur):
                cur.append({})
            if last:
                cur[idx] = value
            elif isinstance(cur[idx], (dict, list)):
                cur = cur[idx]
            else:
                raise ScenarioError(f"{key}: {here}.{idx} is a value, not a table or array")
        else:
            if last:
                cur[part] = value
            elif isinstance(cur.get(part), (dict, list)):
                cur = cur[part]
            elif part in cur:
                raise ScenarioError(f"{key}: {dotted(tuple(path[: i + 1]))} is a value, not a table or array")
            else:
                cur[part] = new_container
                cur = cur[part]


