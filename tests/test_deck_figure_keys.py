"""Every panel, legend and x axis of a deck figure is a key its study sweeps: a key the sweep fixes
has one value, None in every point, which the labelers write as "PAUSE =" (eval-fat-tree-64-0.5g
drew a panel titled "PAUSE =" and a legend "PAUSE =", under captions saying "with and without
PAUSE" for a study that runs PAUSE off only)."""

from __future__ import annotations

from typing import Any

import pytest
from cnsim.reproduce import DECKS, get_deck, study_status
from cnsim.reproduce.figures import Subset


def _figures(deck: str) -> list[tuple[str, list[str], Any]]:
    out = []
    for study in get_deck(deck).studies:
        spec, _ = study_status(study)
        if spec is None:
            continue
        keys = [*spec.axes, *spec.zip]
        for f in study.figures:
            out.append((study.sweep, keys, f.figure if isinstance(f, Subset) else f))
    return out


@pytest.mark.parametrize("deck", DECKS)
def test_panels_legends_and_axes_are_swept_keys(deck: str) -> None:
    for sweep, keys, fig in _figures(deck):
        for attr in ("facet", "legend", "x"):
            value = getattr(fig, attr, None)
            for key in [value] if isinstance(value, str) else (value or []):
                assert key in keys, f"{sweep}: {fig.name}.{attr} = {key!r} is not swept ({keys})"


@pytest.mark.parametrize("deck", DECKS)
def test_with_and_without_pause_only_where_pause_is_swept(deck: str) -> None:
    for sweep, keys, fig in _figures(deck):
        if "with and without PAUSE" in fig.caption:
            assert "switch.pause" in keys, f"{sweep}: {fig.name} says 'with and without PAUSE' but runs one PAUSE setting"


def test_the_fat_tree_without_pause_says_so() -> None:
    figs = [fig for sweep, _, fig in _figures("eval") if sweep == "eval-fat-tree-64-0.5g"]
    assert figs and all("PAUSE off" in fig.caption for fig in figs)
