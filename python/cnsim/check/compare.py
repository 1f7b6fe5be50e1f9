"""Two judgements of the checks compared: ``cnsim check --against DIR``.

A reading must hold for a whole deck (docs/decisions.md): what decides a change of a preset, a
model detail or a check's encoding is what it gains and loses over every check, not the check it
was made for. So a check run can name an earlier one (``--against``) and be told, check by
check, which verdicts changed and which measured values moved, instead of comparing two tables
by hand.

The earlier judgement is a ``checks.json``: a check folder's, a reproduction's
(``DIR/checks/checks.json``), or the file itself. It is read before anything runs, so a bad
one costs nothing, and a check rerun into the same folder compares against that folder's
previous judgement.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ScenarioError
from .report import CHECKS_JSON

__all__ = ["Change", "Comparison", "compare", "comparison_lines", "load_judgement"]

#: a check the earlier judgement did not hold (another deck, or a check added since)
ABSENT = "absent"


@dataclass(frozen=True)
class Judgement:
    """The rows of an earlier ``checks.json`` by check id, where they came from, and whether it was ``--quick``."""

    path: Path
    rows: dict[str, dict[str, Any]]
    quick: bool | None


@dataclass(frozen=True)
class Change:
    """A check whose verdict differs: ``before`` (or :data:`ABSENT`) → ``after``, with both measured values."""

    id: str
    before: str
    after: str
    measured_before: str
    measured_after: str


@dataclass(frozen=True)
class Comparison:
    """``changed``: verdicts that differ (checks the earlier judgement did not hold included, with
    ``before`` = :data:`ABSENT`); ``moved``: the ids whose verdict is the same and whose measured
    value is not; ``same``: how many are identical in both; ``not_judged_here``: how many of the
    earlier judgement's checks this run did not judge (another deck, ``--only``)."""

    changed: list[Change]
    moved: list[str]
    same: int
    not_judged_here: int


def _checks_file(given: Path) -> Path:
    """The ``checks.json`` that ``given`` names: the file, a check folder's or a reproduction's."""
    if given.is_file():
        return given
    for candidate in (given / CHECKS_JSON, given / "checks" / CHECKS_JSON):
        if candidate.is_file():
            return candidate
    if not given.exists():
        raise ScenarioError(f"--against: {given}: no such file or folder; give the folder of an earlier `cnsim check` "
                            f"(or `cnsim reproduce`) or its {CHECKS_JSON}")
    raise ScenarioError(f"--against: {given}: holds no {CHECKS_JSON} (nor checks/{CHECKS_JSON}); give the folder of an "
                        f"earlier `cnsim check` (or `cnsim reproduce`) that finished, or its {CHECKS_JSON}")


def load_judgement(given: Path) -> Judgement:
    """The earlier judgement ``--against`` names; bad input (exit 2) if it is not one."""
    path = _checks_file(given)
    why = f"--against: {path}: not the {CHECKS_JSON} of a check run"
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as err:
        raise ScenarioError(f"--against: {path}: cannot be read ({err.__class__.__name__}: {err})") from None
    except json.JSONDecodeError as err:
        raise ScenarioError(f"{why} (not JSON: {err.msg} at line {err.lineno})") from None
    rows = doc.get("checks") if isinstance(doc, dict) else None
    if not isinstance(rows, list) or not all(
        isinstance(r, dict) and isinstance(r.get("id"), str) and isinstance(r.get("verdict"), str) for r in rows
    ):
        raise ScenarioError(f"{why} (it needs a list `checks` of rows, each with an `id` and a `verdict`)")
    quick = doc.get("quick")
    return Judgement(path=path, rows={r["id"]: r for r in rows}, quick=quick if isinstance(quick, bool) else None)


def compare(before: Judgement, after: list[dict[str, Any]]) -> Comparison:
    """How the rows ``after`` (this run's, in its order) differ from the earlier judgement."""
    changed: list[Change] = []
    moved: list[str] = []
    same = 0
    for row in after:
        old = before.rows.get(row["id"])
        measured = str(row.get("measured", ""))
        if old is None:
            changed.append(Change(row["id"], ABSENT, row["verdict"], "", measured))
            continue
        old_measured = str(old.get("measured", ""))
        if old["verdict"] != row["verdict"]:
            changed.append(Change(row["id"], old["verdict"], row["verdict"], old_measured, measured))
        elif old_measured != measured:
            moved.append(row["id"])
        else:
            same += 1
    here = {row["id"] for row in after}
    return Comparison(changed=changed, moved=moved, same=same, not_judged_here=sum(1 for i in before.rows if i not in here))


#: a measured value longer than this is cut in the printout (checks.json holds it whole)
_MEASURED_CHARS = 160


def _short(measured: str) -> str:
    return measured if len(measured) <= _MEASURED_CHARS else measured[: _MEASURED_CHARS - 1] + "…"


def _plural(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def comparison_lines(c: Comparison, before: Judgement, quick: bool) -> list[str]:
    """What ``cnsim check --against`` prints: a headline, one line per changed verdict (with both
    measured values), and the ids whose measured value moved."""
    known = [ch for ch in c.changed if ch.before != ABSENT]
    gained = sum(1 for ch in known if ch.after == "pass" and ch.before != "pass")
    lost = sum(1 for ch in known if ch.before == "pass" and ch.after != "pass")
    new = len(c.changed) - len(known)
    modes = ""
    if before.quick is not None and before.quick != quick:
        modes = f" (that judgement {'was' if before.quick else 'was not'} --quick, this one {'is' if quick else 'is not'})"
    head = (f"against {before.path}{modes}: {_plural(len(known), 'verdict', 'verdicts')} changed "
            f"({gained} gained, {lost} lost), {_plural(len(c.moved), 'measured value', 'measured values')} moved, "
            f"{c.same} the same")
    if new:
        head += f", {new} not judged there"
    if c.not_judged_here:
        head += f"; {c.not_judged_here} of its checks not judged here"
    lines = [head]
    for ch in known:
        lines.append(f"  {ch.id}: {ch.before} → {ch.after}")
        lines.append(f"    before: {_short(ch.measured_before)}")
        lines.append(f"    now:    {_short(ch.measured_after)}")
    if c.moved:
        lines.append(f"  moved, same verdict: {', '.join(c.moved)}")
    if new:
        # another deck's judgement holds none of this run's other checks: their ids, not a page each
        lines.append(f"  not judged there: {', '.join(f'{ch.id} {ch.after}' for ch in c.changed if ch.before == ABSENT)}")
    return lines
