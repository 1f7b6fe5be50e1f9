"""The scenario catalog (scenarios.md §8): one TOML per base scenario id, with the deck's defaults.

Checks without the engine: every entry loads, validates, lowers and round-trips through the
resolved TOML; it carries a description and its source deck in a comment; its duration, hot port,
window and recorded queues are the §8 table's; each deck's presets are present.
"""

from __future__ import annotations

import tomllib
from importlib.resources import files
from pathlib import Path

import cnsim
import pytest
from cnsim import load

S = 1_000_000_000_000  # ps per second

#: id → (duration s, hot_port, window s, queues that must be recorded) — scenarios.md §8
TABLE: dict[str, tuple[float, str, tuple[float, float], list[str]]] = {
    "zhb-og-single-hop": (0.6, "S1/1", (0.2, 0.5), []),
    "zhb-og-n128": (0.6, "S1/1", (0.2, 0.5), []),
    "zhb-og-multi-hop": (0.6, "S3/7", (0.2, 0.5), ["S1/S2", "S2/S3", "S5/S4", "S4/S3"]),
    "zhb-og-multi-hop-bg": (0.6, "S3/7", (0.2, 0.5), ["S1/S2", "S2/S3", "S5/S4", "S4/S3"]),
    "zhb-dual-cp-light-heavy": (0.6, "S2/8", (0.2, 0.5), ["S1/S2"]),
    "zhb-dual-cp-heavy-light": (0.6, "S1/S2", (0.2, 0.5), ["S2/8"]),
    "zhb-sweeping-hotspot": (0.6, "hotspot", (0.1, 0.5), [f"S1/{i}" for i in range(1, 9)]),
    "zhb-ig-single-hop": (0.6, "S1/1", (0.2, 0.5), []),
    "zhb-ft-3stage": (0.6, "L0.0/0", (0.2, 0.5), []),
    "zhb-ft-5stage": (0.6, "L0.0/0", (0.2, 0.5), []),
    "qcnp-og-single-hop": (2.0, "S1/1", (0.1, 1.0), []),
    "qcnp-ig-baseline": (2.0, "S1/6", (0.1, 1.0), []),
    "qcnp-ig-100-sources": (2.0, "S1/102", (0.1, 1.0), []),
    "qcnp-20-stage": (2.0, "S19/59", (0.1, 1.0), [f"S{i}/S{i + 1}" for i in range(19)]),
    "qcnp-20-stage-b": (2.0, "S19/59", (0.1, 1.0), [f"S{i}/S{i + 1}" for i in range(19)]),
    "qcnp-parking-lot": (2.0, "S1/S2", (0.1, 1.0), ["S2/S3"]),
    "kd-symmetric-single-hs": (0.2, "S1/EP4", (0.02, 0.2), []),
    "e2cm-non-cm-domain": (2.0, "S4/S5", (0.1, 1.0), []),
    "e2cm-fat-tree-16": (2.0, "L0.0/1", (0.1, 0.5), []),
    "e2cm-fat-tree-32": (2.0, "L0.0/1", (0.1, 0.5), []),
    "e2cm-mixed-speed-og": (2.0, "S2/11", (0.1, 0.5), ["S1/S2"]),
    "e2cm-mixed-speed-ig": (2.0, "S1/1", (0.1, 1.0), ["S1/S2"]),
    "eval-baseline": (0.1, "S1/H5", (0.01, 0.1), []),
    "eval-sh-og-2g": (1.0, "S1/H0", (0.0, 1.0), []),
    "eval-sh-og-0.5g": (1.0, "S1/H0", (0.0, 1.0), []),
    "eval-sh-og-0g": (1.0, "S1/H0", (0.0, 1.0), []),
    "eval-mh-og-2g": (1.0, "S4/H6", (0.0, 1.0), ["S1/S2", "S2/S3", "S3/S4", "S5/S4"]),
    "eval-mh-og-0.5g": (1.0, "S4/H6", (0.0, 1.0), ["S1/S2", "S2/S3", "S3/S4", "S5/S4"]),
    "eval-mh-og-0g": (1.0, "S4/H6", (0.0, 1.0), ["S1/S2", "S2/S3", "S3/S4", "S5/S4"]),
    "eval-fat-tree-64": (1.0, "L0.0/0", (0.0, 1.0), []),
    "scale-ft-2048": (1.0, "L0.0/0", (0.1, 1.0), []),
    "dcqcn-incast-2to1": (0.2, "S1/H3", (0.05, 0.2), []),  # issue 15's DCQCN check, not a deck row
}

#: deck prefix → the presets its entries carry (contract "Schemes and presets")
PRESETS = {
    "zhb": {"bcn"},
    "kd": {"bcn"},
    "qcnp": {"bcn", "qcn", "qcn-sonar", "qcn-plus"},
    "e2cm": {"bcn", "e2cm"},
    "eval": {"bcn", "qcn", "qcn3pt"},
    "scale": {"dcqcn"},
    "dcqcn": {"dcqcn"},
}

#: entries that also carry a DCQCN preset (issue 15: the DCQCN versions of the hotspots)
DCQCN_PRESET = {"zhb-og-single-hop", "zhb-og-multi-hop", "zhb-dual-cp-light-heavy", "zhb-dual-cp-heavy-light",
                "qcnp-parking-lot", "scale-ft-2048", "dcqcn-incast-2to1"}


def raw(sid: str) -> tuple[str, dict]:
    text = (files("cnsim") / "scenarios" / f"{sid}.toml").read_text(encoding="utf-8")
    return text, tomllib.loads(text)


#: cnsim's own scenarios beside the decks' (not in scenarios.md §8): the PAUSE deadlock ring
CNSIM_OWN = {"ring-6-deadlock"}


def test_catalog_has_every_base_scenario_of_section_8() -> None:
    assert cnsim.scenarios() == sorted([*TABLE, *CNSIM_OWN])


@pytest.mark.parametrize("sid", sorted(TABLE))
def test_entry_defaults_match_the_table(sid: str, tmp_path: Path) -> None:
    duration, hot_port, window, queues = TABLE[sid]
    text, doc = raw(sid)
    assert doc["description"] and "\n" not in doc["description"]
    assert text.startswith("#") and "spec/scenarios.md" in text  # source deck and slide in a comment
    assert doc["cm"]["scheme"] == "none"
    assert set(doc["cm"].get("presets", {})) == PRESETS[sid.split("-")[0]] | ({"dcqcn"} if sid in DCQCN_PRESET else set())
    scen = load(sid)
    core = scen.lower()
    r = scen.resolved
    if r.doc.traffic.run_to_completion:  # e2cm: sources stop at 1.0 s, duration is the 2 s cap
        assert r.doc.traffic.stop == S and core["run_to_completion"] is True
    assert core["duration_ps"] == round(duration * S)
    assert core["metrics"]["hot_port"] == hot_port
    assert core["metrics"]["window_ps"] == [round(window[0] * S), round(window[1] * S)]
    assert set(queues) <= set(core["metrics"]["queues"])
    (tmp_path / f"{sid}.toml").write_text(scen.to_toml())
    assert load(tmp_path / f"{sid}.toml").lower() == core  # the resolved TOML reloads to the same config


@pytest.mark.parametrize("sid", sorted(TABLE))
def test_every_preset_of_an_entry_resolves(sid: str) -> None:
    _, doc = raw(sid)
    for scheme in doc["cm"].get("presets", {}):
        core = load(sid).set("cm.scheme", scheme).lower()
        assert core["cm"]["scheme"] == scheme


def test_deck_defaults() -> None:
    # zhb: partitioned 600 KB with per-input PAUSE, 1 us links, PS-BCN-ZHB
    for sid in [s for s in TABLE if s.startswith("zhb-")]:
        core = load(sid).lower()
        assert core["switch"]["buffer"] == "partitioned" and core["switch"]["memory_per_port"] == 600_000, sid
        assert core["switch"]["pause"] is True
        bcn = load(sid).set("cm.scheme", "bcn").resolved.cm
        assert bcn["gd"] == pytest.approx(1.6667e-6, rel=1e-4) and bcn["ru"] == 10_000_000, sid
    n128 = load("zhb-og-n128").set("cm.scheme", "bcn").resolved.cm
    assert n128["gi"] == pytest.approx(400 * n128["gd"])
    # qcnp: M 150 KB, PAUSE off; 20-stage links 2 us, else 5 us; qcn-plus Qeq = m/4
    for sid in [s for s in TABLE if s.startswith("qcnp-")]:
        core = load(sid).lower()
        assert core["switch"]["memory_per_port"] == 150_000 and core["switch"]["pause"] is False, sid
        delay = {lk["delay_ps"] for lk in core["topology"]["links"]}
        assert delay == ({2_000_000} if "20-stage" in sid else {5_000_000}), sid
    assert load("qcnp-ig-100-sources").lower()["switch"]["oq_limit"] == 1_500_000
    # e2cm: PAUSE on, geometric flows of mean 1500 B, stop 1.0 s, run to completion
    for sid in [s for s in TABLE if s.startswith("e2cm-")]:
        core = load(sid).lower()
        assert core["switch"]["pause"] is True and core["run_to_completion"] is True, sid
        assert all(src["sizes"] == "geometric" and src["mean_frames"] == 1.0 and src["stop_ps"] == S for src in core["traffic"]["sources"])
        e2cm = load(sid).set("cm.scheme", "e2cm").resolved.cm
        assert e2cm["gd"] == pytest.approx(2.6667e-6) and e2cm["qeq"] == 37_500 and e2cm["qmc"] == 150_000
    # eval: PAUSE on at 130/110 KB, AD-CNSIM as settled (docs/fidelity.md): VOQs that never
    # block, the 150 KB NIC buffer as the PAUSE-able output buffer
    for sid in [s for s in TABLE if s.startswith("eval-")]:
        core = load(sid).lower()
        assert core["switch"]["pause"] is True and core["nic"]["ingress"] == "unlimited", sid
        assert core["nic"]["egress_buffer"] == 150_000, sid
        assert core["switch"]["cp_ports"] == [core["metrics"]["hot_port"]], sid  # S4's congestion point
        assert {t["xoff"] for t in core["switch"]["thresholds"].values()} == {130_000}
    # I-4, per deck: Ru = Rmin = 10 Mb/s in S0, 1 Mb/s in S1-S4, for every scheme of the deck
    # (S4's QCN presets name no Rmin and ran §10's standard 5 Mb/s until results version 7)
    deck_schemes = {"zhb-": ("bcn",), "kd-": ("bcn",), "qcnp-": ("bcn", "qcn", "qcn-sonar", "qcn-plus"),
                    "e2cm-": ("bcn", "e2cm"), "eval-": ("bcn", "qcn", "qcn3pt")}
    for prefix, schemes in deck_schemes.items():
        floor = 10_000_000 if prefix == "zhb-" else 1_000_000
        for sid in [s for s in TABLE if s.startswith(prefix)]:
            for scheme in schemes:
                assert load(sid).set("cm.scheme", scheme).resolved.cm["rmin"] == floor, (sid, scheme)


def test_hotspot_schedules() -> None:
    hs = load("zhb-sweeping-hotspot").lower()["hotspots"]
    assert [h["node"] for h in hs] == [str(i) for i in range(1, 9)]
    assert [(h["start_ps"], h["end_ps"]) for h in hs] == [(S // 10 + i * S // 20, S // 10 + (i + 1) * S // 20) for i in range(8)]
    assert all(h["rate"] == 0.2 for h in hs)
    assert load("eval-sh-og-0g").lower()["hotspots"][0]["rate"] == 0.0
    assert load("eval-mh-og-0.5g").lower()["hotspots"][0] == {"node": "H6", "rate": 0.05, "start_ps": S // 10, "end_ps": S // 2}


def test_workloads() -> None:
    # 20-stage: literal rules 21 flows into 59; variant b 20 (node 57 idle) — I-11
    for sid, n in (("qcnp-20-stage", 21), ("qcnp-20-stage-b", 20)):
        srcs = load(sid).lower()["traffic"]["sources"]
        into = [s for s in srcs if s["dst"] == "59"]
        assert len(into) == n, sid
        assert all(s["load"] == 1.0 for s in srcs)
        assert {s["node"] for s in srcs} == {str(i) for i in range(1, 59)} - ({"57"} if n == 20 else set())
    srcs = load("qcnp-ig-100-sources").lower()["traffic"]["sources"]
    assert sum(1 for s in srcs if s["dst"] == "102") == 100
    # per-node loads: zhb multi-hop background and the IG hotspot's heavy nodes
    loads = {s["node"]: s["load"] for s in load("zhb-og-multi-hop-bg").lower()["traffic"]["sources"]}
    assert loads == {**{str(i): 0.25 for i in range(1, 7)}, **{str(i): 0.4 for i in range(7, 11)}}
    ig = load("zhb-ig-single-hop").lower()["traffic"]["sources"]
    assert sorted(s["node"] for s in ig if s["dst"] is None) == sorted(["1", *map(str, range(6, 17))])
    assert [s["node"] for s in ig if s["dst"] == "1"] == ["2", "3", "4", "5"]
    # the scale target records no per-flow series and its lowering stays linear
    assert load("scale-ft-2048").lower()["metrics"]["per_flow"] == []
