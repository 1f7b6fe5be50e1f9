"""Scenario documents: validation, --set, presets, expressions, watermarks, lowering.

spec/contract.md "Scenario document", "Schemes and presets", "Expressions", "Measurement
window"; spec/scenarios.md §1.1; algorithms.md D12; docs/core-config.md.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import cnsim
import pytest
from cnsim import ScenarioError, load
from cnsim.scenario import parse_set_value, split_key

CATALOG = cnsim.scenarios()


def write(tmp_path: Path, text: str, name: str = "mine.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


MINIMAL = """
duration = "10ms"
[topology]
nodes = 4
[traffic]
pattern = "uniform"
load = 0.5
"""


# ---- catalog ----------------------------------------------------------------------------


def test_catalog_ids() -> None:
    assert {"eval-sh-og-2g", "kd-symmetric-single-hs", "qcnp-ig-baseline", "zhb-og-single-hop"} <= set(CATALOG)


@pytest.mark.parametrize("sid", CATALOG)
def test_catalog_entries_resolve_and_round_trip(sid: str, tmp_path: Path) -> None:
    scen = load(sid)
    core = scen.lower()
    assert core["cm"] == {"scheme": "none"}
    text = scen.to_toml()
    doc = tomllib.loads(text)
    assert doc["cm"]["scheme"] == "none"
    assert doc["description"]
    again = load(write(tmp_path, text, f"{sid}.toml"))
    assert again.lower() == core


@pytest.mark.parametrize("sid", CATALOG)
@pytest.mark.parametrize("scheme", ["bcn", "e2cm", "qcn", "qcn3pt", "qcn-sonar", "qcn-plus"])
def test_every_scheme_validates_and_lowers_on_every_entry(sid: str, scheme: str, tmp_path: Path) -> None:
    scen = load(sid).set("cm.scheme", scheme)
    core = scen.lower()
    assert core["cm"]["scheme"] == scheme
    assert all(v is None or isinstance(v, (int, float, str, bool)) for v in core["cm"].values())
    # the resolved TOML holds numbers and reloads to the same core config
    again = load(write(tmp_path, scen.to_toml(), f"{sid}.toml"))
    assert again.lower() == core


def test_zhb_lowering() -> None:
    core = load("zhb-og-single-hop").lower()
    assert core["duration_ps"] == 600_000_000_000
    assert core["topology"]["switches"] == ["S1"]
    assert core["topology"]["nodes"] == [str(i) for i in range(1, 17)]
    assert {(lk["a"], lk["b"], lk["rate_bps"], lk["delay_ps"]) for lk in core["topology"]["links"]} == {
        ("S1", str(i), 10**10, 1_000_000) for i in range(1, 17)
    }
    assert core["switch"]["thresholds"] == {"S1": {"capacity": 600_000, "xoff": 594_500, "xon": 297_250}}
    assert core["switch"]["pause"] is True
    sources = core["traffic"]["sources"]
    assert len(sources) == 16
    assert all(s["load"] == 0.85 and s["dst"] is None and s["start_ps"] == 0 and s["stop_ps"] is None for s in sources)
    assert core["hotspots"] == [{"node": "1", "rate": 0.2, "start_ps": 100_000_000_000, "end_ps": 500_000_000_000}]
    m = core["metrics"]
    assert m["window_ps"] == [200_000_000_000, 500_000_000_000]
    assert m["hot_port"] == "S1/1" and m["queues"] == ["S1/1"] and m["bin_ps"] == 1_000_000_000
    assert m["per_flow"] == [[str(i), "1"] for i in range(2, 17)]
    assert core["nic"] == {
        "ingress": "unlimited",
        "ingress_size": 0,
        "on_full": "drop",
        "egress_buffer": 1500,
        "egress_xoff": 1500,
        "egress_xon": 0,
        "processing_delay_ps": 0,
    }


def test_kd_lowering() -> None:
    core = load("kd-symmetric-single-hs").lower()
    assert core["topology"]["nodes"] == ["EP0", "EP1", "EP2", "EP3", "EP4"]
    assert core["switch"]["buffer"] == "egress" and core["switch"]["pause"] is False
    assert core["switch"]["thresholds"]["S1"]["capacity"] == 600_000
    assert all(lk["delay_ps"] == 4_000_000 for lk in core["topology"]["links"])
    assert core["traffic"]["sources"] == [
        {"node": f"EP{i}", "load": 0.5, "dst": "EP4", "start_ps": 0, "stop_ps": None, "sizes": "fixed", "mean_frames": 1.0}
        for i in range(4)
    ]
    assert core["topology"]["fat_tree"] is None and core["topology"]["routing"] == "shortest"
    assert core["hotspots"] == []
    assert core["metrics"]["hot_port"] == "S1/EP4"
    assert core["metrics"]["window_ps"] == [20_000_000_000, 200_000_000_000]
    assert core["metrics"]["per_flow"] == [[f"EP{i}", "EP4"] for i in range(4)]


def test_qcnp_lowering() -> None:
    core = load("qcnp-ig-baseline").lower()
    sources = core["traffic"]["sources"]
    culprits = [s for s in sources if s["dst"] == "6"]
    assert [s["node"] for s in culprits] == ["2", "3", "4", "5"]
    assert all(s["load"] == 0.5 and s["start_ps"] == 100_000_000_000 and s["stop_ps"] == 1_000_000_000_000 for s in culprits)
    assert [s for s in sources if s["dst"] == "7"] == [
        {"node": "1", "load": 0.5, "dst": "7", "start_ps": 0, "stop_ps": None, "sizes": "fixed", "mean_frames": 1.0}
    ]
    assert core["switch"]["thresholds"]["S1"]["capacity"] == 150_000 and core["switch"]["pause"] is False
    # AD-ZRL: per-VOQ ingress 1.5 MB with drop; OB 1.5 MB with the S1 watermarks at d = 5 us
    assert core["nic"] == {
        "ingress": "per_voq",
        "ingress_size": 1_500_000,
        "on_full": "drop",
        "egress_buffer": 1_500_000,
        "egress_xoff": 1_484_500,
        "egress_xon": 1_474_500,
        "processing_delay_ps": 0,
    }
    assert core["metrics"]["hot_port"] == "S1/6"
    assert core["metrics"]["window_ps"] == [100_000_000_000, 1_000_000_000_000]
    assert core["metrics"]["per_flow"] == [["2", "6"], ["3", "6"], ["4", "6"], ["5", "6"], ["1", "7"]]
    assert core["duration_ps"] == 2_000_000_000_000


def test_eval_lowering() -> None:
    core = load("eval-sh-og-2g").lower()
    assert core["topology"]["nodes"] == [f"H{i}" for i in range(10)]
    assert all(lk["delay_ps"] == 500_000 for lk in core["topology"]["links"])
    assert core["switch"]["thresholds"] == {"S1": {"capacity": 150_000, "xoff": 130_000, "xon": 110_000}}
    assert core["switch"]["processing_delay_ps"] == 1_000_000
    # AD-CNSIM as settled (docs/fidelity.md): unlimited VOQs, the 150 KB NIC buffer as the OB
    assert core["nic"]["ingress"] == "unlimited" and core["nic"]["processing_delay_ps"] == 1_000_000
    assert core["nic"]["egress_buffer"] == 150_000
    assert core["hotspots"] == [{"node": "H0", "rate": 0.2, "start_ps": 100_000_000_000, "end_ps": 500_000_000_000}]
    assert core["metrics"]["window_ps"] == [0, 1_000_000_000_000]
    assert core["metrics"]["hot_port"] == "S1/H0"
    assert core["metrics"]["per_flow"] == [[f"H{i}", "H0"] for i in range(1, 10)]
    assert len(core["traffic"]["sources"]) == 10


# ---- PAUSE watermarks (scenarios.md §1.1, D12) -------------------------------------------------


def test_watermarks_s0_partitioned_and_shared() -> None:
    part = load("zhb-og-single-hop").lower()["switch"]["thresholds"]["S1"]
    assert (part["xoff"], part["xon"]) == (594_500, 297_250)
    shared = load("zhb-og-single-hop").set("switch.buffer", "shared").lower()["switch"]["thresholds"]["S1"]
    assert shared == {"capacity": 9_600_000, "xoff": 9_512_000, "xon": 4_756_000}


@pytest.mark.parametrize(
    ("delay", "xoff", "xon"),
    [("5us", 1_484_500, 1_474_500), ("50us", 1_372_000, 1_362_000), ("500us", 247_000, 237_000)],
)
def test_watermarks_s1(delay: str, xoff: int, xon: int) -> None:
    scen = (
        load("zhb-og-single-hop")
        .set("switch.memory_per_port", "1.5MB")
        .set("switch.xon_rule", "minus_10KB")
        .set("links.delay", delay)
    )
    t = scen.lower()["switch"]["thresholds"]["S1"]
    assert (t["capacity"], t["xoff"], t["xon"]) == (1_500_000, xoff, xon)


def test_watermarks_include_processing_delay() -> None:
    # rtt*bw = 2*(1us + 1us)*10G/8 + 3000 = 8000 B
    t = load("zhb-og-single-hop").set("switch.processing_delay", "1us").lower()["switch"]["thresholds"]["S1"]
    assert t["xoff"] == 600_000 - 8_000


def test_explicit_and_expression_watermarks() -> None:
    t = load("zhb-og-single-hop").set("switch.xoff", "500KB").set("switch.xon", "xoff - 20KB").lower()
    assert t["switch"]["thresholds"]["S1"] == {"capacity": 600_000, "xoff": 500_000, "xon": 480_000}
    toml = load("zhb-og-single-hop").set("switch.xon", "xoff - 20KB").to_toml()
    assert "xon = 574500  # = xoff - 20KB" in toml


def test_watermarks_without_room_are_an_error() -> None:
    with pytest.raises(ScenarioError, match="switch.xoff"):
        load("zhb-og-single-hop").set("switch.memory_per_port", "5KB").lower()


#: S1 with nodes a and b and a 40 Gb/s link to S2, S2 with node c; shared memory with PAUSE
_TWO_SWITCH_GRAPH = """
duration = "10ms"
[topology]
kind = "graph"
nodes = ["a", "b", "c"]
switches = ["S1", "S2"]
links = [{a = "S1", b = "a"}, {a = "S1", b = "b"}, {a = "S1", b = "S2", rate = "40Gbps"}, {a = "S2", b = "c"}]
[switch]
buffer = "shared"
memory_per_port = "100KB"
pause = true
[traffic]
flows = [{src = "a", dst = "c", rate = "5Gbps"}]
[metrics]
hot_port = "S1/S2"
per_flow = "hot"
"""


def test_graph_port_counts_and_shared_pool(tmp_path: Path) -> None:
    core = load(write(tmp_path, _TWO_SWITCH_GRAPH)).lower()
    th = core["switch"]["thresholds"]
    # S1: 3 ports; the 40G port needs 2*1us*40G/8 + 3000 = 13000 B, the 10G ones 5500 B
    assert th["S1"] == {"capacity": 300_000, "xoff": 300_000 - 2 * 5_500 - 13_000, "xon": (300_000 - 24_000) // 2}
    assert th["S2"]["capacity"] == 200_000
    assert core["metrics"]["per_flow"] == [["a", "c"]]
    assert core["metrics"]["queues"] == ["S1/S2"]


def test_an_xon_expression_reads_its_own_switch_xoff(tmp_path: Path) -> None:
    """S1 (three ports, one at 40 Gb/s) and S2 (two ports) get different XOFFs, and `xoff` in the
    XON expression is each switch's own (a scheme's expression reads the first's)."""
    th = load(write(tmp_path, _TWO_SWITCH_GRAPH)).set("switch.xon", "xoff - 1000B").lower()["switch"]["thresholds"]
    s1, s2 = 300_000 - 2 * 5_500 - 13_000, 200_000 - 5_500 - 13_000  # the 40G port's headroom is 13,000 B
    assert th["S1"] == {"capacity": 300_000, "xoff": s1, "xon": s1 - 1000}
    assert th["S2"] == {"capacity": 200_000, "xoff": s2, "xon": s2 - 1000}


# ---- cm: presets and expressions ------------------------------------------------------------


def test_preset_selected_by_scheme_override() -> None:
    r = load("zhb-og-single-hop").set("cm.scheme", "bcn").resolved
    assert r.scheme == "bcn"
    assert r.cm["gd"] == 1.6667e-6 and r.cm["gi"] == 6.6667e-4
    assert r.cm["ru"] == 10_000_000 and r.cm["rmin"] == 10_000_000
    assert r.cm["qeq"] == 150_000  # "m/4"
    assert r.cm["w"] == 2.0


def test_gd_expression_against_gd0() -> None:
    r = load("zhb-og-single-hop").set("cm.scheme", "bcn").set("cm.gd", "2.5*gd0").resolved
    assert r.cm["gd"] == pytest.approx(1.6667e-6, rel=1e-4)
    assert r.cm_exprs["gd"] == "2.5*gd0"
    scen = load("kd-symmetric-single-hs").set("cm.scheme", "bcn").set("cm.gd", "2.5*gd0").set("cm.gi", "1000*gd0")
    assert scen.resolved.cm["gi"] == pytest.approx(1000 * 0.5 / 750_000)
    assert "gd = 1.6666666666666667e-06  # = 2.5*gd0" in scen.to_toml()


def test_expressions_follow_overrides_in_dependency_order() -> None:
    # qeq = m/4 follows a memory override; gd0 follows qeq and w
    r = load("zhb-og-single-hop").set("cm.scheme", "bcn").set("cm.gd", "gd0").set("cm.w", 4).set("switch.memory_per_port", "150KB").resolved
    assert r.cm["qeq"] == 37_500
    assert r.cm["gd"] == pytest.approx(0.5 / (9 * 37_500))


def test_cnsim_defaults_for_a_scheme_without_preset() -> None:
    r = load("zhb-og-single-hop").set("cm.scheme", "e2cm").resolved
    assert r.cm["qeq"] == 150_000 and r.cm["w"] == 2.0 and r.cm["ru"] == 1_000_000
    assert r.cm["gd"] == pytest.approx(0.5 / (5 * 150_000))
    assert r.cm["gi"] == pytest.approx(0.1 * (1e10 / 1e6) / (5 * 150_000))
    assert r.cm["rmin"] == r.cm["ru"]
    assert r.cm["gd_flow"] == r.cm["gd"] and r.cm["qeq_flow"] == r.cm["qeq"]


def test_quantised_defaults_and_unit_rule() -> None:
    r = load("zhb-og-single-hop").set("cm.scheme", "bcn").set("cm.fb_bits", 8).set("cm.gd", "gd0").set("cm.gi", "0.1*(rate/ru)/fbmax").resolved
    assert r.cm["gd"] == pytest.approx(0.5 / 255)
    assert r.cm["gi"] == pytest.approx(0.1 * 1000 / 255)  # ru = 10 Mb/s in PS-BCN-ZHB
    r = load("kd-symmetric-single-hs").set("cm.scheme", "bcn").set("cm.gd0_rule", "unit").set("cm.gd", "gd0").resolved
    assert r.cm["gd"] == pytest.approx(1 / 750_000)


def test_qcnp_presets() -> None:
    ecm = load("qcnp-ig-baseline").set("cm.scheme", "bcn").resolved.cm
    assert ecm["fb_bits"] == 8 and ecm["quantize"] == "separate" and ecm["negative_only_above_qeq"] is True
    assert ecm["ps"] == 0.01 and ecm["qeq"] == 37_500 and ecm["qmc"] == 150_000
    qcn = load("qcnp-ig-baseline").set("cm.scheme", "qcn").resolved.cm
    assert qcn["r_ai"] == 12_000_000 and qcn["hai"] is False and qcn["sampling"] == "linear"
    plus = load("qcnp-ig-baseline").set("cm.scheme", "qcn-plus").resolved.cm
    assert plus["qeq"] == 37_500  # PS-QCNP-RTT writes Qeq = m/4: 375 KB at its M = 1.5 MB ...
    big = load("qcnp-ig-baseline").set("cm.scheme", "qcn-plus").set("switch.memory_per_port", "1.5MB")
    assert big.resolved.cm["qeq"] == 375_000  # ... and follows M
    assert plus["gi_plus"] == pytest.approx(0.1 * 10_000 / 255)


def test_qcn_plus_active_increase_cycle_follows_to_threshold() -> None:
    """QCN+'s RP is QCN with BC replaced by ToThreshold (§5.7): the active-increase cycle that
    defaults to BC (D9) follows ToThreshold, so a ToThreshold other than BC does not turn on a
    separate, never-halved active-increase cycle of the old BC. An explicit value still wins."""
    base = load("qcnp-ig-baseline").set("cm.scheme", "qcn-plus")
    assert base.resolved.cm["ai_byte_count"] == base.resolved.cm["to_threshold"] == 150_000
    short = base.set("cm.to_threshold", "75KB").resolved.cm
    assert (short["bc"], short["to_threshold"], short["ai_byte_count"]) == (150_000, 75_000, 75_000)
    own = base.set("cm.to_threshold", "75KB").set("cm.ai_byte_count", "20KB").resolved.cm
    assert own["ai_byte_count"] == 20_000
    assert load("qcnp-ig-baseline").set("cm.scheme", "qcn").resolved.cm["ai_byte_count"] == 150_000


def test_resolution_order_file_params_only_for_own_scheme(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        MINIMAL
        + """
[cm]
scheme = "bcn"
w = 4.0
[cm.presets.bcn]
w = 8.0
[cm.presets.qcn]
w = 16.0
""",
    )
    assert load(path).resolved.cm["w"] == 4.0  # [cm] of the own scheme; presets.bcn ignored
    assert load(path).set("cm.scheme", "qcn").resolved.cm["w"] == 16.0  # presets of the selected scheme
    assert load(path).set("cm.scheme", "qcn3pt").resolved.cm["w"] == 2.0  # cnsim default
    assert load(path).set("cm.scheme", "qcn").set("cm.w", 32).resolved.cm["w"] == 32.0  # --set wins


def test_cycle_is_an_error() -> None:
    scen = load("zhb-og-single-hop").set("cm.scheme", "bcn").set("cm.gd", "2.5*gd0").set("cm.qeq", "gd*1e11")
    with pytest.raises(ScenarioError, match="cycle"):
        scen.lower()


def test_key_the_scheme_does_not_have() -> None:
    with pytest.raises(ScenarioError) as err:
        load("zhb-og-single-hop").set("cm.scheme", "bcn").set("cm.refp", 0.1).lower()
    assert 'cm.refp: scheme "bcn" has no parameter "refp"' in str(err.value)
    with pytest.raises(ScenarioError, match="cm.gd"):
        load("zhb-og-single-hop").set("cm.gd", 1e-6).lower()  # own scheme is "none"


def test_unknown_names_and_bad_cm_values() -> None:
    with pytest.raises(ScenarioError, match='unknown name "gdx"'):
        load("zhb-og-single-hop").set("cm.scheme", "bcn").set("cm.gd", "2*gdx").lower()
    with pytest.raises(ScenarioError, match="cm.ps"):
        load("zhb-og-single-hop").set("cm.scheme", "bcn").set("cm.ps", 2).lower()
    with pytest.raises(ScenarioError, match="cm.sampling"):
        load("zhb-og-single-hop").set("cm.scheme", "bcn").set("cm.sampling", "sometimes").lower()
    with pytest.raises(ScenarioError, match="cm.scheme"):
        load("zhb-og-single-hop").set("cm.scheme", "tcp").lower()


# ---- --set rules --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("true", True),
        ("0.5", 0.5),
        ("3", 3),
        ("[0.2, 0.5]", [0.2, 0.5]),
        ('{node = "1", rate = 0.1}', {"node": "1", "rate": 0.1}),
        ("600KB", "600KB"),
        ("2.5*gd0", "2.5*gd0"),
        ("bcn", "bcn"),
        ('"quoted"', "quoted"),
        ("[]", []),
    ],
)
def test_set_values(text: str, value: object) -> None:
    assert parse_set_value(text) == value


def test_split_key() -> None:
    assert split_key("switch.memory_per_port") == ["switch", "memory_per_port"]
    assert split_key('traffic.loads."3"') == ["traffic", "loads", "3"]
    assert split_key("a.'b.c'.d") == ["a", "b.c", "d"]
    with pytest.raises(ScenarioError):
        split_key("a..b")


def test_set_indexes_and_replaces_arrays() -> None:
    core = load("zhb-og-single-hop").set("hotspots.0.rate", 0.05).lower()
    assert core["hotspots"][0]["rate"] == 0.05
    core = load("zhb-og-single-hop").set("hotspots", []).lower()
    assert core["hotspots"] == []
    core = load("kd-symmetric-single-hs").set("traffic.flows.1.rate", "2Gbps").lower()
    assert core["traffic"]["sources"][1]["load"] == 0.2
    with pytest.raises(ScenarioError, match="past the end"):
        load("zhb-og-single-hop").set("hotspots.5.rate", 0.1)


def test_set_creates_tables_and_per_node_loads() -> None:
    core = load("zhb-og-single-hop").set('traffic.loads."3"', 0.0).set("traffic.loads.4", 0.5).lower()
    loads = {s["node"]: s["load"] for s in core["traffic"]["sources"]}
    assert "3" not in loads and loads["4"] == 0.5 and loads["5"] == 0.85


def test_set_seed_duration_and_copy_independence() -> None:
    base = load("zhb-og-single-hop")
    other = base.copy().set("seed", 7).set("duration", "0.3s")
    assert other.lower()["seed"] == 7 and other.lower()["duration_ps"] == 300_000_000_000
    assert base.lower()["seed"] == 1


# ---- validation messages ------------------------------------------------------------------


def test_all_problems_in_one_message() -> None:
    scen = (
        load("zhb-og-single-hop")
        .set("switch.memroy", 5)
        .set("links.rate", "-5Gbps")
        .set("switch.memory_per_port", "600 KBB")
        .set("traffic.load", 1.5)
    )
    with pytest.raises(ScenarioError) as err:
        scen.lower()
    text = str(err.value)
    assert len(err.value.problems) == 4
    assert text.count("\n\n") == 3
    assert 'switch.memroy: unknown key. Did you mean "memory_per_port"? The keys allowed here are: buffer, memory_per_port' in text
    assert "(`cnsim keys switch` describes them)" in text
    assert "links.rate" in text and "negative" in text and '"-5Gbps"' in text
    assert "switch.memory_per_port" in text and "unknown unit" in text
    assert "traffic.load" in text and "1.5" in text


def test_unknown_top_level_key_is_reported(tmp_path: Path) -> None:
    path = write(tmp_path, 'durration = "1s"\n' + MINIMAL)
    with pytest.raises(ScenarioError) as err:
        load(path).lower()
    assert "durration: unknown key" in str(err.value)
    assert "duration" in str(err.value)


def test_missing_duration(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match="duration: this key is required"):
        load(write(tmp_path, "[topology]\nnodes = 4\n")).lower()


def test_unknown_names_and_ports() -> None:
    scen = (
        load("zhb-og-single-hop")
        .set("hotspots.0.node", "17")
        .set("metrics.hot_port", "S1/99")
        .set("metrics.queues", ["S1/2", "S2/1"])
        .set("traffic.flows", [{"src": "1", "dst": "X", "rate": "1Gbps"}])
        .set("traffic.loads", {"Z": 0.1})
    )
    with pytest.raises(ScenarioError) as err:
        scen.lower()
    text = str(err.value)
    for key in ("hotspots.0.node", "metrics.hot_port", "metrics.queues.1", "traffic.flows.0.dst", "traffic.loads.Z"):
        assert key in text
    assert "unknown node" in text and "unknown port" in text


def test_negative_times_and_rates() -> None:
    with pytest.raises(ScenarioError, match="traffic.flows.0.rate"):
        load("kd-symmetric-single-hs").set("traffic.flows.0.rate", "-1Gbps").lower()
    with pytest.raises(ScenarioError, match="hotspots.0.start"):
        load("zhb-og-single-hop").set("hotspots.0.start", "-1s").lower()
    with pytest.raises(ScenarioError, match="flows.0.rate"):
        load("kd-symmetric-single-hs").set("traffic.flows.0.rate", "20Gbps").lower()  # above the link


def test_unknown_scenario_id() -> None:
    with pytest.raises(ScenarioError, match="unknown scenario 'no-such-id'"):
        load("no-such-id")


def test_bad_toml_file(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match="not valid TOML"):
        load(write(tmp_path, "duration = \n"))


@pytest.mark.skipif(not Path("/proc/self/mem").is_file(), reason="needs /proc/self/mem")
def test_a_scenario_file_whose_read_fails_is_named_with_the_systems_reason(tmp_path: Path) -> None:
    """A file that is there but cannot be read (root reads any permission, so /proc/self/mem,
    whose read at offset 0 fails): the system's words, not Python's "[Errno 5] ...: 'path'"."""
    path = tmp_path / "s.toml"
    path.symlink_to("/proc/self/mem")
    with pytest.raises(ScenarioError) as err:
        load(path)
    assert str(err.value) == f"{path}: cannot be read: Input/output error"


def test_scenario_error_is_value_error() -> None:
    assert issubclass(ScenarioError, ValueError)


# ---- window, hot port, per-flow ------------------------------------------------------------


def test_window_rules() -> None:
    w = lambda s: s.lower()["metrics"]["window_ps"]  # noqa: E731
    base = load("zhb-og-single-hop")
    assert w(base.copy().set("metrics.window", "hotspot")) == [100_000_000_000, 500_000_000_000]
    assert w(base.copy().set("metrics.window", "run")) == [60_000_000_000, 600_000_000_000]
    assert w(base.copy().set("metrics.window", ["0.3s", "2s"])) == [300_000_000_000, 600_000_000_000]
    # empty after clipping → "run"
    assert w(base.copy().set("metrics.window", ["1s", "2s"])) == [60_000_000_000, 600_000_000_000]
    assert w(base.copy().set("duration", "0.2s")) == [20_000_000_000, 200_000_000_000]
    assert w(base.copy().set("hotspots", []).set("metrics.window", "hotspot")) == [60_000_000_000, 600_000_000_000]


def test_a_run_to_completion_is_measured_up_to_its_end() -> None:
    """contract "Measurement window": clipped to [0, end of run], the "run" rule if that is
    empty. e2cm-non-cm-domain stopped at 3 ms drains by 15 ms, long before a 20 ms cap: a window
    after the end, or the "run" rule, measure [1.5, 15] ms (they were [15, 15] ms with nothing
    in it, and [2, 15] ms from the cap); a window inside the run is kept."""
    def measured(window: object) -> tuple[list[float], float, float]:
        s = cnsim.run("e2cm-non-cm-domain", set={"traffic.stop": "3ms", "metrics.window": window}, duration="20ms").summary
        return s["window_s"], s["duration_s"], s["throughput_gbps"]["aggregate"]

    after, end, agg = measured(["16ms", "20ms"])
    # the run ends as its last frame reaches its sink, a 1 us link after it left the last port
    assert end == pytest.approx(0.0150076) and after == pytest.approx([end / 10, end]) and agg > 9.9
    assert measured("run") == (after, end, agg)
    inside = measured(["1ms", "10ms"])
    assert inside[0] == pytest.approx([0.001, 0.01]) and inside[1] == end


def test_per_flow_modes() -> None:
    pf = lambda s: s.lower()["metrics"]["per_flow"]  # noqa: E731
    assert pf(load("zhb-og-single-hop").set("metrics.per_flow", "none")) == []
    assert len(pf(load("zhb-og-single-hop").set("metrics.per_flow", "all"))) == 16 * 15
    # "named" without named flows falls back to the flows into the hot node
    assert pf(load("zhb-og-single-hop").set("metrics.per_flow", "named")) == [[str(i), "1"] for i in range(2, 17)]
    assert pf(load("qcnp-ig-baseline").set("metrics.per_flow", "hot")) == [["2", "6"], ["3", "6"], ["4", "6"], ["5", "6"]]


def test_hot_port_default_and_queues() -> None:
    scen = load("zhb-og-single-hop").set("metrics.hot_port", None)
    scen._doc["metrics"].pop("hot_port")
    assert scen.lower()["metrics"]["hot_port"] == "S1/1"
    core = load("zhb-og-single-hop").set("metrics.queues", ["S1/2"]).lower()
    assert core["metrics"]["queues"] == ["S1/1", "S1/2"]  # the hot port is always recorded


# ---- fat trees, geometric flows, runs to completion (docs/core-config.md) ----------------------------


def test_fat_tree_lowers_to_the_engine_builder(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
duration = "10ms"
[topology]
kind = "fat_tree"
fat_tree = {radix = 8, levels = 2, merged_top = true}
[traffic]
pattern = "uniform"
load = 0.85
[[hotspots]]
node = "31"
rate = 0.2
start = 0
end = "5ms"
[metrics]
hot_port = "L0.0/0"
""",
    )
    scen = load(path).validate()
    assert scen.resolved.nodes[-1] == "31"
    core = scen.lower()
    topo = core["topology"]
    assert topo["fat_tree"] == {"radix": 8, "levels": 2, "merged_top": True, "rate_bps": 10**10, "delay_ps": 1_000_000}
    assert topo["switches"] == [] and topo["links"] == [] and topo["routing"] == "dmodk"
    assert topo["nodes"] == [str(i) for i in range(32)]
    # every switch has its thresholds; leaves L0.0..L0.7, spine L1.0..L1.3
    assert sorted(core["switch"]["thresholds"]) == sorted([f"L0.{i}" for i in range(8)] + [f"L1.{i}" for i in range(4)])
    assert core["metrics"]["hot_port"] == "L0.0/0"
    with pytest.raises(ScenarioError, match="unknown node"):
        load(path).set("hotspots.0.node", "32").validate()
    with pytest.raises(ScenarioError, match="unknown port"):
        load(path).set("metrics.hot_port", "L0.0/9").validate()
    with pytest.raises(ScenarioError, match="32 hosts"):
        load(path).set("topology.nodes", 16).validate()
    again = load(write(tmp_path, scen.to_toml(), "again.toml"))
    assert again.lower() == core


def test_dmodk_needs_a_fat_tree() -> None:
    with pytest.raises(ScenarioError, match="d-mod-k"):
        load("zhb-og-single-hop").set("topology.routing", "dmodk").validate()


def test_geometric_sizes_lower_to_mean_frames() -> None:
    scen = load("zhb-og-single-hop").set_many(
        {"traffic.sizes": "geometric", "traffic.mean_size": "60000B", "traffic.stop": "0.3s", "traffic.run_to_completion": True}
    )
    core = scen.lower()
    assert core["run_to_completion"] is True
    for s in core["traffic"]["sources"]:
        assert s["sizes"] == "geometric" and s["mean_frames"] == 40.0 and s["stop_ps"] == 300_000_000_000


def test_geometric_and_completion_need_their_keys() -> None:
    with pytest.raises(ScenarioError, match="traffic.mean_size"):
        load("zhb-og-single-hop").set("traffic.sizes", "geometric").validate()
    with pytest.raises(ScenarioError, match="at least one frame"):
        load("zhb-og-single-hop").set_many({"traffic.sizes": "geometric", "traffic.mean_size": "1000B"}).validate()
    with pytest.raises(ScenarioError, match="sources that stop"):
        load("zhb-og-single-hop").set("traffic.run_to_completion", True).validate()


def test_core_json_is_json() -> None:
    assert json.loads(load("kd-symmetric-single-hs").core_json())["version"] == 1


def test_the_core_config_is_lowered_once_and_lower_hands_out_copies() -> None:
    """The engine reads compact JSON (`cnsim show --core` indents it); the lowered config is
    computed once and shared, and `lower()` gives a copy that a caller may change."""
    scen = load("kd-symmetric-single-hs")
    shared = scen.core_config()
    assert scen.core_config() is shared
    compact, indented = scen.core_json(), scen.core_json(indent=2)
    assert "\n" not in compact and "\n  " in indented and json.loads(compact) == json.loads(indented) == shared
    copy = scen.lower()
    copy["seed"] = -1
    assert copy is not shared and scen.core_config()["seed"] != -1


def test_kd_gains_follow_w_and_qeq_unless_given() -> None:
    """I-23 (issue 12): the Kwan & Ding gains are the deck's formulas of W and Qeq, so a sweep of w
    or Qeq recomputes them; a gain given explicitly stays."""
    from cnsim.scenario import load

    def gains(**over: object) -> tuple[float, float]:
        cm = load("kd-symmetric-single-hs").set_many({"cm.scheme": "bcn", **over}).lower()["cm"]
        return cm["gd"], cm["gi"]

    assert gains() == pytest.approx((6.6667e-7, 1.3333e-3), rel=1e-4)  # the printed values at W = 2
    assert gains(**{"cm.w": 16}) == pytest.approx((0.5 / (33 * 150_000), 0.1 * 1e4 / (33 * 150_000)))
    assert gains(**{"cm.qeq": "24KB"}) == pytest.approx((4.1667e-6, 8.3333e-3), rel=1e-4)
    assert gains(**{"cm.w": 16, "cm.gd": 1e-6})[0] == 1e-6


def test_cp_placement_is_a_scenario_option() -> None:
    """Issue 12: congestion points on every egress of a CM switch (default) or on named ports."""
    from cnsim.scenario import load

    base = load("zhb-og-multi-hop").set_many({"cm.scheme": "qcn"})
    assert "cp_ports" not in base.lower()["switch"]
    named = load("zhb-og-multi-hop").set_many({"cm.scheme": "qcn", "switch.cp_ports": ["S3/7"]})
    assert named.lower()["switch"]["cp_ports"] == ["S3/7"]
    with pytest.raises(cnsim.ScenarioError, match=r"switch\.cp_ports\.1"):
        load("zhb-og-multi-hop").set_many({"switch.cp_ports": ["S3/7", "S9/7"]}).validate()
    # only the hot port as a CP: QCN still controls the hotspot (the other egresses, uncongested,
    # send nothing here either); a CP on a chain port only: the hot port sends nothing, and the
    # hotspot is left to PAUSE
    every = cnsim.run("zhb-og-multi-hop", set={"cm.scheme": "qcn"}).summary
    hot = cnsim.run("zhb-og-multi-hop", set={"cm.scheme": "qcn", "switch.cp_ports": ["S3/7"]}).summary
    chain = cnsim.run("zhb-og-multi-hop", set={"cm.scheme": "qcn", "switch.cp_ports": ["S2/S3"]}).summary
    assert hot["throughput_gbps"]["aggregate"] == pytest.approx(every["throughput_gbps"]["aggregate"], rel=0.01)
    assert set(hot["cm"]["by_cp"]) == {"S3/7"} and hot["cm"]["frames"] > 0
    assert set(chain["cm"]["by_cp"]) == {"S2/S3"}
    assert chain["throughput_gbps"]["aggregate"] < 0.5 * hot["throughput_gbps"]["aggregate"]


def test_efr_first_cycle_reaches_the_engine_and_is_range_checked() -> None:
    # §5.4's experimental EFR reading (b): the default (1) is the plain run, a shorter first
    # recovery cycle changes it; 0 is refused with the key and the range
    plain = cnsim.run("eval-baseline", set={"cm.scheme": "qcn"}, duration="20ms").summary
    same = cnsim.run("eval-baseline", set={"cm.scheme": "qcn", "cm.efr_first_cycle": 1}, duration="20ms").summary
    short = cnsim.run("eval-baseline", set={"cm.scheme": "qcn", "cm.efr_first_cycle": 0.5}, duration="20ms").summary
    assert same["queue_bytes"] == plain["queue_bytes"]
    assert short["queue_bytes"]["hot"]["mean"] != plain["queue_bytes"]["hot"]["mean"]
    with pytest.raises(ScenarioError, match=r"cm.efr_first_cycle.*\[0.01, 1\]"):
        load("eval-baseline").set("cm.scheme", "qcn").set("cm.efr_first_cycle", 0).lower()


def test_a_blocking_generator_needs_the_shared_ingress_buffer() -> None:
    # D15's withdrawn pool: "block" has a meaning only for the shared IB; elsewhere it was ignored
    with pytest.raises(ScenarioError, match=r'nic.on_full.*needs nic.ingress = "shared"'):
        load("eval-baseline").set("nic.ingress", "per_voq").set("nic.ingress_size", "1.5MB").set("nic.on_full", "block").lower()
    load("eval-baseline").set("nic.ingress", "shared").set("nic.ingress_size", "150KB").set("nic.on_full", "block").lower()


def test_sample_at_departure_reaches_the_engine() -> None:
    # §1.2's switch: the same run sampled where frames leave the hot queue, not where they enter
    def cnms(point: str) -> float:
        s = cnsim.run("zhb-og-single-hop", set={"cm.scheme": "qcn", "cm.sample_at": point}, duration="0.15s").summary
        return float(s["cm"]["by_cp"]["S1/1"]["frames"])

    arrival, departure = cnms("arrival"), cnms("departure")
    assert departure > 0 and arrival > 0 and departure != arrival
    with pytest.raises(ScenarioError, match="cm.sample_at"):
        load("zhb-og-single-hop").set("cm.scheme", "qcn").set("cm.sample_at", "enqueue").lower()
