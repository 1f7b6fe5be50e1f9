"""The reference of every scenario key (issue 13; contract "cnsim keys [PREFIX]"), generated from
the code that validates them: the pydantic models of :mod:`cnsim.scenario` (types, defaults and
the field docstrings) and the per-scheme tables of :mod:`cnsim.cmparams`.

``cnsim keys [PREFIX]`` prints it, ``docs/keys.md`` is :func:`markdown` (a test keeps the file
current), and every "unknown key" message points here (with
:func:`cnsim.errors.did_you_mean`).
"""

from __future__ import annotations

import ast
import functools
import inspect
import textwrap
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, get_args, get_origin

from pydantic import BaseModel
from pydantic.fields import FieldInfo

from .cmparams import SCHEMES, Param
from .scenario import ScenarioDoc
from .scenario.fields import UNIT_TYPES as _UNITS
from .scenario.fields import describe_field as _describe
from .scenario.fields import strip_optional as _strip_optional
from .units import format_rate, format_size, format_time

__all__ = ["Key", "all_keys", "matching", "markdown"]


@dataclass(frozen=True)
class Key:
    """One scenario key: dotted ``name`` (``[]`` marks an array of tables), the ``type`` a user
    writes, its ``default``, the values ``allowed`` and what it means (``doc``)."""

    name: str
    type: str
    default: str
    allowed: str
    doc: str


def _default(field: FieldInfo, type_: str) -> str:
    if field.is_required():
        return "(required)"
    value = field.default
    if value is None:
        return "(see description)"
    if isinstance(value, BaseModel) or value == [] or value == {}:
        return "" if not isinstance(value, BaseModel) else "(table)"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int) and type_.startswith("time"):
        return format_time(value)
    if isinstance(value, int) and type_.startswith("rate"):
        return format_rate(value)
    if isinstance(value, int) and type_.startswith("size"):
        return format_size(value)
    return f'"{value}"' if isinstance(value, str) else str(value)


def _model_of(annotation: Any) -> tuple[type[BaseModel] | None, bool]:
    """The model inside a field's annotation, and whether it is an array of tables."""
    annotation, _ = _strip_optional(annotation)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation, False
    if get_origin(annotation) is list:
        (item,) = get_args(annotation)
        if isinstance(item, type) and issubclass(item, BaseModel):
            return item, True
    return None, False


@functools.cache
def attribute_docs(model: type[BaseModel]) -> dict[str, str]:
    """The docstring under each field of ``model`` (the string literal after ``name: type``), read
    from the class's source the way pydantic's ``use_attribute_docstrings`` does. Read here, when
    the reference is asked for, because pydantic would parse the schema's source at every import
    of cnsim: about 20 ms of every ``cnsim run``."""
    docs: dict[str, str] = {}
    try:
        source = textwrap.dedent(inspect.getsource(model))
    except (OSError, TypeError):  # no source (a frozen or interactive build): no descriptions
        return docs
    (klass,) = ast.parse(source).body
    assert isinstance(klass, ast.ClassDef)
    for stmt, after in zip(klass.body, klass.body[1:], strict=False):
        if (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)
                and isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant)
                and isinstance(after.value.value, str)):
            # one line: a docstring's line breaks are the source's wrapping, and a table cell of
            # docs/keys.md must not break
            docs[stmt.target.id] = " ".join(after.value.value.split())
    return docs


def _model_keys(model: type[BaseModel], prefix: str) -> Iterator[Key]:
    docs = attribute_docs(model)
    for name, field in model.model_fields.items():
        key = prefix + name
        sub, array = _model_of(field.annotation)
        doc = (field.description or docs.get(name, "")).strip()
        if sub is not None:
            if array:
                yield Key(key, "array of tables", "", "", doc)
            yield from _model_keys(sub, key + ("[]." if array else "."))
            continue
        type_, allowed = _describe(field)
        yield Key(key, type_, _default(field, type_), allowed, doc)


def _param_type(p: Param) -> str:
    return _UNITS.get(p.kind, {"float": "number", "int": "integer", "time_or_auto": _UNITS["time"] + ' or "auto"'}.get(p.kind, p.kind))


def _cm_keys() -> Iterator[Key]:
    yield Key("cm.scheme", "choice", '"none"', " | ".join(f'"{s}"' for s in SCHEMES), "The congestion-management scheme; its parameters follow.")
    names: dict[str, list[str]] = {}
    for scheme, params in SCHEMES.items():
        for name in params:
            names.setdefault(name, []).append(scheme)
    seen: set[str] = set()
    for params in SCHEMES.values():
        for name, p in params.items():
            if name in seen:
                continue
            seen.add(name)
            # one row per name; where schemes differ (gd's unit and default), each group is listed
            default = _by_scheme(names[name], name, _fmt_param_default)
            text = _by_scheme(names[name], name, lambda param: param.doc)
            everywhere = len(names[name]) == len(SCHEMES) - 1  # every scheme but none
            schemes = "every scheme but none" if everywhere else ", ".join(names[name])
            doc = (text + ". " if text else "") + f"Schemes: {schemes}."
            # ranges differ too (fb_bits = 0, unquantised feedback, exists for bcn and e2cm only)
            allowed = _by_scheme(names[name], name, functools.partial(_allowed_as, p))
            yield Key(f"cm.{name}", _param_type(p), default, allowed, doc)


def _by_scheme(schemes: list[str], name: str, value: Callable[[Param], str]) -> str:
    """``value`` of parameter ``name`` if every scheme has the same one, else "bcn, e2cm: x; qcn, …: y"."""
    groups: dict[str, list[str]] = {}
    for s in schemes:
        groups.setdefault(value(SCHEMES[s][name]), []).append(s)
    if len(groups) == 1:
        return next(iter(groups))
    return "; ".join(f"{', '.join(names)}: {v}" for v, names in groups.items() if v)


def _allowed_as(first: Param, p: Param) -> str:
    """What ``p`` accepts, where ``first`` is the parameter of the same name in the first scheme
    that has it: the same choices in another order (each scheme lists its default first) are
    the same values and read as ``first``'s."""
    if p.choices and set(p.choices) == set(first.choices):
        return first.allowed()
    return p.allowed()


def _fmt_param_default(p: Param) -> str:
    value = p.default
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    if p.kind == "time" and isinstance(value, int):
        return format_time(value)
    if p.kind == "rate" and isinstance(value, int):
        return format_rate(value)
    if p.kind == "size" and isinstance(value, int):
        return format_size(value)
    return f"{value:g}" if isinstance(value, float) else str(value)


def all_keys() -> list[Key]:
    """Every key a scenario document may hold, in document order, ``cm.*`` after ``hotspots``."""
    keys = list(_model_keys(ScenarioDoc, ""))
    at = next(i for i, k in enumerate(keys) if k.name.startswith("metrics."))
    cm = [*_cm_keys(), Key("cm.presets.<scheme>", "table", "", "a scheme name", "The deck's parameters of another scheme (contract \"Schemes and presets\").")]
    return keys[:at] + cm + keys[at:]


def matching(prefix: str = "") -> list[Key]:
    """The keys whose name starts with ``prefix`` (``traffic``, ``cm.g``, …)."""
    return [k for k in all_keys() if k.name.startswith(prefix)]


def markdown() -> str:
    """docs/keys.md: the whole reference as Markdown tables, one per table of the document."""
    out = [
        "# Scenario keys",
        "",
        "Every key a scenario file (or `--set`) may use, generated from the code that validates it",
        "(`cnsim keys [PREFIX]` prints the same; regenerate this file with",
        "`python -m cnsim.keys > docs/keys.md`). Units: times `ps ns us ms s`, rates",
        "`bps Kbps Mbps Gbps`, sizes `B KB MB` (KB = 1000 B). `[]` marks an array of tables.",
        "Numeric `cm.*` and `switch.*` values may be expressions (contract \"Expressions\").",
    ]
    section = None
    for k in all_keys():
        head = k.name.split(".")[0].removesuffix("[]") if "." in k.name or k.type == "array of tables" else "(top level)"
        if head != section:
            section = head
            title = head if head == "(top level)" else f"[[{head}]]" if k.type == "array of tables" else f"[{head}]"
            out += ["", f"## {title}", "", "| key | type | default | allowed | meaning |", "|---|---|---|---|---|"]
        cells = [f"`{k.name}`", k.type, k.default, k.allowed, k.doc]
        out.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(out) + "\n"


if __name__ == "__main__":  # pragma: no cover (python -m cnsim.keys > docs/keys.md)
    print(markdown(), end="")
