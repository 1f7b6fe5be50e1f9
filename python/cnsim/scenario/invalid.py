"""Pydantic's validation errors of the scenario document as cnsim's problems: each names the
dotted key, the value given and what is allowed there (contract: "a one-paragraph message naming
the key, the value given and what is allowed") — the keys a table takes, the values a field takes
in the key reference's words, the members of a union."""

from __future__ import annotations

import types
from typing import Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo

from ..errors import Problem, did_you_mean, missing
from .fields import describe_field
from .schema import ScenarioDoc, dotted


def _unwrap_model(annotation: Any) -> type[BaseModel] | None:
    """The model class inside ``X | None``, ``list[X]``, ``Annotated[X, ...]``, if any."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    origin = get_origin(annotation)
    if origin is None:
        return None
    for arg in get_args(annotation):
        found = _unwrap_model(arg)
        if found is not None:
            return found
    return None


def _list_item(annotation: Any) -> Any:
    """``X`` of a ``list[X]`` inside ``annotation`` (``list[X] | None``, ``Literal[...] | list[X]``), if any."""
    if get_origin(annotation) is list:
        return get_args(annotation)[0]
    if get_origin(annotation) in (Union, types.UnionType):
        for arg in get_args(annotation):
            if (item := _list_item(arg)) is not None:
                return item
    return None


def _field_at(loc: tuple[Any, ...]) -> FieldInfo | None:
    """The model field a validation error's location names (None: not a field of the models); an
    item of a list of values (``metrics.queues.0``) as a field of the item's type, so that the
    message says what one item takes, not what the list takes (a table of a list of tables as its
    table)."""
    model: type[BaseModel] | None = ScenarioDoc
    field = None
    for part in loc:
        if isinstance(part, int):
            item = _list_item(field.annotation) if field is not None else None
            if item is not None:
                field = FieldInfo.from_annotation(item)
            continue
        if field is not None and get_origin(field.annotation) is dict:
            # a table {name = value} (traffic.loads): the part is a name, the value's type the table's
            field = FieldInfo.from_annotation(get_args(field.annotation)[1])
        elif model is None or part not in model.model_fields:
            return None
        else:
            field = model.model_fields[part]
        model = _unwrap_model(field.annotation)
    return field


def _allowed_keys(loc: tuple[Any, ...]) -> list[str]:
    """The keys of the table at ``loc`` (the document's own at ``()``, ``cm`` among them)."""
    if not loc:
        return [*ScenarioDoc.model_fields, "cm"]
    field = _field_at(loc)
    model = _unwrap_model(field.annotation) if field is not None else None
    return [*model.model_fields] if model is not None else []


#: pydantic's error types for a value of the wrong type: their message says what was wrong, the
#: key reference's columns say what is allowed
_TYPE_ERRORS = frozenset({"float_type", "float_parsing", "int_type", "int_parsing", "int_from_float", "bool_type",
                          "bool_parsing", "string_type", "model_type", "model_attributes_type", "dict_type", "list_type"})


def _expected(field: FieldInfo, loc: tuple[Any, ...]) -> str:
    """What a field of the wrong type takes, in the key reference's words."""
    if _unwrap_model(field.annotation) is not None:
        where = dotted(tuple(p for p in loc if not isinstance(p, int)))
        shape = "a list of tables" if _list_item(field.annotation) is not None else "a table"
        return f"expected {shape} of keys (`cnsim keys {where}` lists them)"
    type_, allowed = describe_field(field)
    phrase = {"integer": "an integer", "bool": "true or false", "number": "a number", "string": "a string"}.get(type_, f"a {type_}")
    return f"expected {phrase}" + (f" ({allowed})" if allowed else "")


def _is_union(annotation: Any) -> bool:
    """``A | B`` with at least two members besides None (pydantic then tags the error location
    with the member's name: ``switch.cp_ports.literal['all']``)."""
    if get_origin(annotation) not in (Union, types.UnionType):
        return False
    return len([a for a in get_args(annotation) if a is not type(None)]) >= 2


def _untag(loc: tuple[Any, ...]) -> tuple[tuple[Any, ...], int | None, Any]:
    """``loc`` without the member tag pydantic puts after a union field, the length of the union
    field's location (None: no union on the way) and the union's annotation."""
    model: type[BaseModel] | None = ScenarioDoc
    out: list[Any] = []
    parts = list(loc)
    i = 0
    while i < len(parts):
        part = parts[i]
        out.append(part)
        i += 1
        if isinstance(part, int):
            continue
        if model is None or part not in model.model_fields:
            model = None
            continue
        annotation = model.model_fields[part].annotation
        if _is_union(annotation) and i < len(parts) and isinstance(parts[i], str):
            return (*out, *parts[i + 1 :]), len(out), annotation
        model = _unwrap_model(annotation)
    return tuple(out), None, None


def _describe_union(annotation: Any) -> str:
    """``"all" or a list of strings`` for ``Literal["all"] | list[str]``."""
    names: list[str] = []
    for arg in get_args(annotation):
        if arg is type(None):
            continue
        if get_origin(arg) is Literal:
            names.extend(f'"{v}"' if isinstance(v, str) else str(v) for v in get_args(arg))
        elif get_origin(arg) is list:
            item = get_args(arg)
            names.append("a list of strings" if item == (str,) else "a list")
        else:
            names.append(getattr(arg, "__name__", str(arg)))
    return " or ".join(names)


def _problem(loc: tuple[Any, ...], e: Any) -> Problem:
    key = dotted(loc)
    kind = e["type"]
    if kind == "extra_forbidden":
        names = _allowed_keys(loc[:-1])
        where = dotted(tuple(p for p in loc[:-1] if not isinstance(p, int)))
        command = f"cnsim keys {where}".strip()
        msg = f"unknown key.{did_you_mean(str(loc[-1]), names)} The keys allowed here are: {', '.join(names)} (`{command}` describes them)"
    elif kind == "missing":
        return Problem(key, missing(), "this key is required")
    elif kind == "cnsim_field":  # raised by field_problem()
        ctx = e["ctx"]
        return Problem(dotted(loc + ((ctx["field"],) if ctx["field"] else ())), ctx["value"], ctx["message"])
    elif kind == "literal_error":
        msg = "not an allowed value; allowed: " + str(e.get("ctx", {}).get("expected", ""))
    elif kind == "value_error":
        msg = str(e["msg"]).removeprefix("Value error, ")
    elif kind.startswith(("greater", "less")):
        msg = f"out of range: {e['msg'].lower()}"
    elif kind in _TYPE_ERRORS and (field := _field_at(loc)) is not None:
        msg = _expected(field, loc)
    else:
        msg = str(e["msg"])
    return Problem(key, e.get("input"), msg)


def problems_from_validation(err: ValidationError, prefix: tuple[Any, ...] = ()) -> list[Problem]:
    problems = []
    # errors under a union field, by the field's key: one problem for the field, unless the
    # value had a member's shape (a list) and the errors are inside it
    unions: dict[str, tuple[int, Any, list[tuple[tuple[Any, ...], Any]]]] = {}
    for e in err.errors():
        loc, union_len, annotation = _untag(prefix + tuple(e["loc"]))
        if union_len is None:
            problems.append(_problem(loc, e))
        else:
            unions.setdefault(dotted(loc[:union_len]), (union_len, annotation, []))[2].append((loc, e))
    for key, (union_len, annotation, members) in unions.items():
        inner = [(loc, e) for loc, e in members if len(loc) > union_len]
        if inner:
            problems.extend(_problem(loc, e) for loc, e in inner)
        else:
            problems.append(Problem(key, members[0][1].get("input"), f"not an allowed value; allowed: {_describe_union(annotation)}"))
    return problems
