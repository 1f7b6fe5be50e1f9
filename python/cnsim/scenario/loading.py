"""Loading scenarios: the shipped catalog (``cnsim/scenarios/*.toml``) and user files, with
clear messages for files that are missing, unreadable, not UTF-8, empty or not TOML.

:func:`parse_toml` is the one place TOML text from a user becomes a document: it skips a UTF-8
byte-order mark and refuses, with a message naming the file, text that is not TOML, nested too
deeply (tomllib recurses) or holds a number too long to convert."""

from __future__ import annotations

import importlib.resources
import tomllib
from pathlib import Path
from typing import Any

from ..errors import ScenarioError, shorten
from .document import Scenario
from .overrides import MAX_DEPTH, nesting_message, too_deep

# --------------------------------------------------------------------------------------------
# Loading and the catalog
# --------------------------------------------------------------------------------------------


def _catalog_dir() -> importlib.resources.abc.Traversable:
    return importlib.resources.files("cnsim") / "scenarios"


def scenarios() -> list[str]:
    """The ids of the catalog shipped inside the package, sorted."""
    return sorted(p.name.removesuffix(".toml") for p in _catalog_dir().iterdir() if p.name.endswith(".toml"))


#: the largest scenario or sweep file read (a 60,000-node graph written out is about 3 MB): a
#: bigger one is refused before it is read, not parsed for a minute into gigabytes
MAX_FILE_BYTES = 32 * 10**6


def read_text(path: Path) -> str:
    """A scenario or sweep file's text; a file that is not UTF-8, cannot be read or is larger
    than :data:`MAX_FILE_BYTES` is bad input."""
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise ScenarioError(f"{path}: {size / 1e6:.0f} MB; scenario and sweep files of at most {MAX_FILE_BYTES // 10**6} MB are read "
                                "(is it the right file?)")
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise ScenarioError(f"{path}: not a UTF-8 text file (byte {err.start} cannot be decoded); save it as UTF-8 TOML") from None
    except OSError as err:
        raise ScenarioError(f"{path}: cannot be read: {err.strerror or err}") from None


def parse_toml(text: str, where: str) -> dict[str, Any]:
    """The TOML document in ``text`` (from file ``where``), or a :class:`ScenarioError` naming
    ``where`` (exit 2): not TOML, nested more than :data:`MAX_DEPTH` levels, a number too long.
    A leading UTF-8 byte-order mark (some Windows editors write one) is skipped."""
    text = text.removeprefix("\ufeff")
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise ScenarioError(f"{where}: not valid TOML: {shorten(str(err), 200)}") from None
    except RecursionError:
        raise ScenarioError(
            f"{where}: not readable as TOML: arrays or inline tables are nested too deeply; a scenario nests at most {MAX_DEPTH} levels"
        ) from None
    except ValueError:  # tomllib converts digits with int(): more than 4,300 is refused
        raise ScenarioError(f"{where}: not readable as TOML: a number is too long to read (at most 4,300 digits)") from None
    deep = too_deep(doc)
    if deep is not None:
        raise ScenarioError(f"{where}: {nesting_message(deep)}")
    return doc


def _read_toml(text: str, where: str) -> dict[str, Any]:
    doc = parse_toml(text, where)
    if not doc:
        raise ScenarioError(f"{where}: the scenario file is empty; a scenario needs at least `duration` and a topology (see `cnsim show zhb-og-single-hop`)")
    if "base" in doc:  # a key of sweep specs only: its other keys would each be "unknown"
        raise ScenarioError(f"{where}: a sweep spec (it names a `base` scenario), not a scenario; `cnsim sweep {where}` runs it")
    return doc


def load(ref: str | Path | Scenario) -> Scenario:
    """A catalog id, or a path to a scenario TOML file, → :class:`Scenario`."""
    if isinstance(ref, Scenario):
        return ref.copy()
    text_ref = str(ref)
    if not isinstance(ref, Path) and text_ref in scenarios():
        res = _catalog_dir() / f"{text_ref}.toml"
        return Scenario(_read_toml(res.read_text(encoding="utf-8"), text_ref), text_ref, f"catalog:{text_ref}")
    path = Path(text_ref)
    try:
        is_file = path.is_file()
    except OSError as err:  # a name longer than the file system takes (ENAMETOOLONG), and the like
        raise ScenarioError(f"unknown scenario {shorten(text_ref)!r}: not a catalog id, and not a path the file system "
                            f"can look up ({err.strerror or err}); give a catalog id (see `cnsim list`) or the path of a "
                            "scenario .toml file") from None
    if is_file:
        return Scenario(_read_toml(read_text(path), str(path)), path.stem, str(path))
    known = ", ".join(scenarios())
    raise ScenarioError(
        f"unknown scenario {shorten(text_ref)!r}: not a catalog id and not a file. "
        f"Catalog ids: {known} (see `cnsim list`), or give the path of a scenario .toml file."
    )
