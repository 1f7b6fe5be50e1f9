"""A deck figure whose caption says the hotspot is shaded shades something: its study's scenario
has a hotspot, or hot flows that start after the run does (eval-baseline's flows run from 0 to
the end, so nothing is shaded there, under "the hotspot is shaded")."""

from __future__ import annotations

import tomllib

import pytest
from cnsim.reproduce import DECKS, get_deck, study_status
from cnsim.reproduce.figures import Subset, _flows_window
from cnsim.scenario import load


@pytest.mark.parametrize("deck", DECKS)
def test_a_caption_that_promises_shading_has_a_span_to_shade(deck: str) -> None:
    for study in get_deck(deck).studies:
        spec, _ = study_status(study)
        if spec is None:
            continue
        scen = load(spec.base).copy()
        first = {k: v[0] for k, v in {**spec.axes, **spec.zip}.items()}
        scen.set_many({**spec.set, **first})
        doc = tomllib.loads(scen.to_toml())
        shaded = bool(doc.get("hotspots")) or _flows_window(doc) is not None
        for f in study.figures:
            fig = f.figure if isinstance(f, Subset) else f
            caption = fig.caption
            if "the hotspot" in caption and "is shaded" in caption and "(if any)" not in caption:
                assert shaded, f"{study.sweep}: {fig.name} says the hotspot is shaded; {spec.base} has none"
